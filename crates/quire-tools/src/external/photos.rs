//! Stock photos: browseImages searches Pexels and Unsplash; importImage
//! downloads one into the media library with its attribution.

use super::{ExternalSettings, net_error, not_configured, upstream_status};
use crate::catalog::{BrowseImagesArgs, ImportImageArgs};
use crate::images::{create_from_upload, image_json};
use crate::media::{receive_bytes, settle};
use crate::params::{BrowseProvider, Orientation, PhotoProvider};
use crate::tool::*;
use quire_core::fields::is_href;
use quire_core::model::ImageSource;
use quire_net::Request;
use quire_store::ImageMeta;
use serde_json::{Value, json};
use std::time::Duration;

impl PhotoProvider {
    fn as_str(self) -> &'static str {
        match self {
            PhotoProvider::Pexels => "pexels",
            PhotoProvider::Unsplash => "unsplash",
        }
    }
}

const PEXELS_LICENSE: &str = "Pexels License (free to use, attribution appreciated): https://www.pexels.com/license/";
const UNSPLASH_LICENSE: &str = "Unsplash License (free to use, credit the photographer): https://unsplash.com/license";

fn str_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A photo of Pexels' API as listed.
fn pexels_photo(p: &Value) -> Value {
    json!({
        "provider": "pexels",
        "photoId": str_of(&p["id"]),
        "previewUrl": str_of(&p["src"]["medium"]).or_else(|| str_of(&p["src"]["small"])),
        "width": p["width"].as_u64(),
        "height": p["height"].as_u64(),
        "alt": str_of(&p["alt"]),
        "photographer": str_of(&p["photographer"]),
        "photographerUrl": str_of(&p["photographer_url"]),
        "photoUrl": str_of(&p["url"]),
        "license": PEXELS_LICENSE,
    })
}

/// A photo of Unsplash's API as listed.
fn unsplash_photo(p: &Value) -> Value {
    json!({
        "provider": "unsplash",
        "photoId": str_of(&p["id"]),
        "previewUrl": str_of(&p["urls"]["small"]).or_else(|| str_of(&p["urls"]["thumb"])),
        "width": p["width"].as_u64(),
        "height": p["height"].as_u64(),
        "alt": str_of(&p["alt_description"]).or_else(|| str_of(&p["description"])),
        "photographer": str_of(&p["user"]["name"]),
        "photographerUrl": str_of(&p["user"]["links"]["html"]).map(|u| with_referral(&u)),
        "photoUrl": str_of(&p["links"]["html"]).map(|u| with_referral(&u)),
        "license": UNSPLASH_LICENSE,
    })
}

/// The keys of a listed photo that hold the provider's links.
const LINK_KEYS: [&str; 3] = ["previewUrl", "photographerUrl", "photoUrl"];

/// A photo as listed, without the links the one rule of links
/// ([`quire_core::fields::is_href`]) refuses, and the keys of those left
/// out. A provider's answer is outside text: a `javascript:` or
/// protocol-relative photographer page must not reach whoever shows the
/// credit. The credit's text stays, so the photo can still be used.
fn without_unsafe_links(mut photo: Value) -> (Value, Vec<&'static str>) {
    let mut dropped = Vec::new();
    for key in LINK_KEYS {
        if photo[key].as_str().is_some_and(|url| !is_href(url)) {
            photo[key] = Value::Null;
            dropped.push(key);
        }
    }
    (photo, dropped)
}

/// Unsplash asks that links back carry the application's referral.
fn with_referral(url: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}utm_source=quire&utm_medium=referral")
}

fn check_color(color: &str) -> Result<(), ToolError> {
    let ok = !color.is_empty()
        && color.len() <= 20
        && color.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '#');
    if ok {
        Ok(())
    } else {
        Err(ToolError::invalid(
            format!("color: \"{color}\" is not a colour name or #hex"),
            "Use a name such as blue, or a hex colour such as #336699 (Pexels).",
        ))
    }
}

async fn get_json(ext: &ExternalSettings, what: &str, request: Request) -> Result<Value, ToolError> {
    let res = ext.net.send(request.accept(&["application/json", "+json"])).await.map_err(|e| net_error(what, e))?;
    if !res.ok() {
        return Err(upstream_status(what, res.status, &res.text()));
    }
    serde_json::from_slice(&res.body).map_err(|e| {
        ToolError::new(
            ErrorCode::Upstream,
            format!("{what} answered JSON that could not be read: {e}"),
            "Try again later.",
        )
    })
}

fn query_string(pairs: &[(&str, Option<String>)]) -> String {
    let mut q = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        if let Some(v) = v {
            q.append_pair(k, v);
        }
    }
    q.finish()
}

/// The query string of a photo search: the words, how many, and the
/// orientation and colour asked for (`square` is how the provider names a
/// square picture).
fn search_query(a: &BrowseImagesArgs, limit: u32, square: &str) -> String {
    let orientation = a.orientation.map(|o| match o {
        Orientation::Landscape => "landscape",
        Orientation::Portrait => "portrait",
        Orientation::Square => square,
    });
    query_string(&[
        ("query", Some(a.query.clone())),
        ("per_page", Some(limit.to_string())),
        ("orientation", orientation.map(str::to_string)),
        ("color", a.color.clone()),
    ])
}

async fn search_pexels(ext: &ExternalSettings, a: &BrowseImagesArgs, limit: u32) -> Result<Vec<Value>, ToolError> {
    let key = ext.pexels.key("external.pexels_key", "Pexels")?;
    let qs = search_query(a, limit, "square");
    let v =
        get_json(ext, "Pexels", Request::get(ext.pexels.url(&format!("/v1/search?{qs}"))).header("Authorization", key))
            .await?;
    let photos = v["photos"].as_array().map(|a| a.iter().map(|p| without_unsafe_links(pexels_photo(p)).0).collect());
    Ok(photos.unwrap_or_default())
}

async fn search_unsplash(ext: &ExternalSettings, a: &BrowseImagesArgs, limit: u32) -> Result<Vec<Value>, ToolError> {
    let key = ext.unsplash.key("external.unsplash_key", "Unsplash")?;
    let qs = search_query(a, limit, "squarish");
    let request = Request::get(ext.unsplash.url(&format!("/search/photos?{qs}")))
        .header("Authorization", format!("Client-ID {key}"))
        .header("Accept-Version", "v1");
    let v = get_json(ext, "Unsplash", request).await?;
    let photos = v["results"].as_array().map(|a| a.iter().map(|p| without_unsafe_links(unsplash_photo(p)).0).collect());
    Ok(photos.unwrap_or_default())
}

pub(crate) async fn browse_images(call: &Call<'_>, a: BrowseImagesArgs) -> ToolResult {
    let ext = &call.services.external;
    if a.query.trim().is_empty() {
        return Err(ToolError::invalid("query: must not be blank", "Describe the photo you are looking for."));
    }
    if let Some(c) = &a.color {
        check_color(c)?;
    }
    let limit = crate::scope::limit(a.limit, 10, 30)?;
    let configured = |p: &super::ProviderSettings| p.key.as_deref().is_some_and(|k| !k.trim().is_empty());
    let providers: Vec<PhotoProvider> = match a.provider.unwrap_or(BrowseProvider::All) {
        BrowseProvider::Pexels => vec![PhotoProvider::Pexels],
        BrowseProvider::Unsplash => vec![PhotoProvider::Unsplash],
        BrowseProvider::All => {
            let mut p = Vec::new();
            if configured(&ext.pexels) {
                p.push(PhotoProvider::Pexels);
            }
            if configured(&ext.unsplash) {
                p.push(PhotoProvider::Unsplash);
            }
            if p.is_empty() {
                return Err(not_configured("No stock photo service", "external.pexels_key or external.unsplash_key"));
            }
            p
        }
    };
    let mut items = Vec::new();
    let mut failures = Vec::new();
    for p in &providers {
        let found = match p {
            PhotoProvider::Pexels => search_pexels(ext, &a, limit).await,
            PhotoProvider::Unsplash => search_unsplash(ext, &a, limit).await,
        };
        match found {
            Ok(mut photos) => items.append(&mut photos),
            // One service failing leaves the other's photos; all failing is the error.
            Err(e) if providers.len() > 1 => failures.push(json!({"provider": p.as_str(), "error": e.message})),
            Err(e) => return Err(e),
        }
    }
    if items.is_empty() && failures.len() == providers.len() && !failures.is_empty() {
        let errors: Vec<String> = failures.iter().filter_map(|f| f["error"].as_str().map(str::to_string)).collect();
        return Err(ToolError::new(ErrorCode::Upstream, errors.join("; "), "Try again later."));
    }
    let mut out = items_result(items, None);
    if !failures.is_empty() {
        out["failures"] = Value::Array(failures);
    }
    Ok(out)
}

/// The URL of an Unsplash photo to download: `full` (the photo at its own
/// size) when it is within the pixel budget, else `raw` scaled by the
/// image service to the widest size whose pixels fit it (many photos there
/// are 24 to 60 megapixels, which the budget would refuse), else `regular`
/// (1080 pixels wide).
fn unsplash_download(p: &Value, max_pixels: u64) -> Option<String> {
    let full = str_of(&p["urls"]["full"]);
    let (Some(w), Some(h)) = (p["width"].as_u64().filter(|w| *w > 0), p["height"].as_u64().filter(|h| *h > 0)) else {
        return full.or_else(|| str_of(&p["urls"]["regular"]));
    };
    if w.saturating_mul(h) <= max_pixels {
        return full.or_else(|| str_of(&p["urls"]["regular"]));
    }
    let Some(raw) = str_of(&p["urls"]["raw"]) else { return str_of(&p["urls"]["regular"]) };
    // The height the service gives a width is rounded: a width whose
    // rounded-up height still fits.
    let mut width = ((max_pixels as f64 / (w * h) as f64).sqrt() * w as f64) as u64;
    while width > 1 && width * (width * h).div_ceil(w) > max_pixels {
        width -= 1;
    }
    let join = if raw.contains('?') { '&' } else { '?' };
    Some(format!("{raw}{join}fm=jpg&q=85&fit=max&w={width}"))
}

/// What importImage downloads and records of one photo.
struct Chosen {
    download: String,
    tracking: Option<String>,
    alt: Option<String>,
    attribution: Value,
    /// Links of the provider's answer left out of the attribution.
    dropped: Vec<&'static str>,
    filename: String,
}

/// The photo `id` of `provider`, to be downloaded within `max_pixels`.
async fn choose(
    ext: &ExternalSettings,
    provider: PhotoProvider,
    id: &str,
    max_pixels: u64,
) -> Result<Chosen, ToolError> {
    let encoded: String = url::form_urlencoded::byte_serialize(id.as_bytes()).collect();
    match provider {
        PhotoProvider::Pexels => {
            let key = ext.pexels.key("external.pexels_key", "Pexels")?;
            let p = get_json(
                ext,
                "Pexels",
                Request::get(ext.pexels.url(&format!("/v1/photos/{encoded}"))).header("Authorization", key),
            )
            .await?;
            let (listed, dropped) = without_unsafe_links(pexels_photo(&p));
            let download = str_of(&p["src"]["large2x"])
                .or_else(|| str_of(&p["src"]["original"]))
                .ok_or_else(|| missing("Pexels", "src.large2x"))?;
            Ok(Chosen {
                download,
                tracking: None,
                alt: str_of(&listed["alt"]),
                attribution: attribution(&listed),
                dropped,
                filename: format!("pexels-{id}.jpg"),
            })
        }
        PhotoProvider::Unsplash => {
            let key = ext.unsplash.key("external.unsplash_key", "Unsplash")?;
            let request = Request::get(ext.unsplash.url(&format!("/photos/{encoded}")))
                .header("Authorization", format!("Client-ID {key}"))
                .header("Accept-Version", "v1");
            let p = get_json(ext, "Unsplash", request).await?;
            let (listed, dropped) = without_unsafe_links(unsplash_photo(&p));
            let download = unsplash_download(&p, max_pixels).ok_or_else(|| missing("Unsplash", "urls.full"))?;
            let tracking = str_of(&p["links"]["download_location"])
                .ok_or_else(|| missing("Unsplash", "links.download_location"))?;
            Ok(Chosen {
                download,
                tracking: Some(tracking),
                alt: str_of(&listed["alt"]),
                attribution: attribution(&listed),
                dropped,
                filename: format!("unsplash-{id}.jpg"),
            })
        }
    }
}

fn missing(what: &str, field: &str) -> ToolError {
    ToolError::new(ErrorCode::Upstream, format!("{what}'s answer has no {field}"), "Choose another photo.")
}

/// The credit a photographer is owed, as stored on the image.
fn attribution(listed: &Value) -> Value {
    json!({
        "provider": listed["provider"],
        "photoId": listed["photoId"],
        "photographer": listed["photographer"],
        "photographerUrl": listed["photographerUrl"],
        "photoUrl": listed["photoUrl"],
        "license": listed["license"],
    })
}

pub(crate) async fn import_image(call: &Call<'_>, a: ImportImageArgs) -> ToolResult {
    let ext = &call.services.external;
    let id = a.photo_id.trim();
    if id.is_empty() || id.len() > 100 || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(ToolError::invalid(
            format!("photoId: \"{}\" is not a photo id", a.photo_id),
            "Use a photoId exactly as browseImages answered it.",
        ));
    }
    // Find the photo, download it, store it, wait for its processing.
    const STEPS: Option<u64> = Some(4);
    let chosen = choose(ext, a.provider, id, call.services.media.limits.max_pixels).await?;
    call.progress(1, STEPS, format!("found photo {id}"));
    // Unsplash's API rules: a download is announced through its tracking
    // endpoint (with the key) when the photo is used.
    if let Some(tracking) = &chosen.tracking {
        let key = ext.unsplash.key("external.unsplash_key", "Unsplash")?;
        let request = Request::get(tracking.as_str())
            .header("Authorization", format!("Client-ID {key}"))
            .header("Accept-Version", "v1");
        get_json(ext, "Unsplash's download tracking", request).await?;
    }
    let max = call.services.media.max_upload_bytes;
    let res = ext
        .net
        .send(Request::get(chosen.download.as_str()).accept(&["image/*"]).max_bytes(max))
        .await
        .map_err(|e| net_error("the photo's download", e))?;
    if !res.ok() {
        return Err(upstream_status("the photo's download", res.status, ""));
    }
    call.progress(2, STEPS, format!("downloaded {} bytes", res.body.len()));
    let upload = receive_bytes(call.services, call.scope(), &call.ctx.actor, &chosen.filename, &res.body).await?;
    let source = match a.provider {
        PhotoProvider::Pexels => ImageSource::Pexels,
        PhotoProvider::Unsplash => ImageSource::Unsplash,
    };
    let meta = ImageMeta {
        alt: chosen.alt,
        source: Some(source),
        attribution: Some(chosen.attribution),
        ..Default::default()
    };
    let (image, created) = create_from_upload(call.services, call.ctx, &upload, meta).await?;
    call.progress(3, STEPS, format!("stored as image {}", image.id));
    // Processing is quick for one photo: answer the final /uploads URL
    // when it is ready, the processing status otherwise.
    let image = settle(call.services, call.scope(), &image.id, Duration::from_secs(15)).await.unwrap_or(image);
    call.progress(4, STEPS, format!("image {} is {}", image.id, image.status.as_str()));
    let credit = format!(
        "Photo by {} on {}",
        image.attribution.as_ref().and_then(|a| a["photographer"].as_str()).unwrap_or("an unknown photographer"),
        if a.provider == PhotoProvider::Pexels { "Pexels" } else { "Unsplash" },
    );
    let mut message = if created {
        format!("Imported as image {} ({}). Credit: {credit}.", image.id, image.status.as_str())
    } else {
        format!("This photo is already in the library as image {}. Credit: {credit}.", image.id)
    };
    match chosen.dropped.as_slice() {
        [] => {}
        [one] => message.push_str(&format!(" The provider's {one} was not a safe link and was left out.")),
        more => {
            message.push_str(&format!(" The provider's {} were not safe links and were left out.", more.join(" and ")))
        }
    }
    let mut out = item_result(image_json(&image), message);
    out["imageId"] = json!(image.id);
    out["url"] = json!(image.url);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::unsplash_download;
    use serde_json::json;

    #[test]
    fn an_unsplash_photo_past_the_pixel_budget_is_downloaded_scaled_to_fit_it() {
        let photo = |w: u64, h: u64| {
            json!({"width": w, "height": h, "urls": {
                "raw": "https://images.unsplash.test/photo-1?ixid=abc",
                "full": "https://images.unsplash.test/photo-1?ixid=abc&q=85&fm=jpg",
                "regular": "https://images.unsplash.test/photo-1?ixid=abc&w=1080",
            }})
        };
        let budget = 16_000_000;
        let within = unsplash_download(&photo(4000, 4000), budget).unwrap();
        assert_eq!(within, "https://images.unsplash.test/photo-1?ixid=abc&q=85&fm=jpg");
        let scaled = unsplash_download(&photo(8000, 6000), budget).unwrap();
        assert_eq!(scaled, "https://images.unsplash.test/photo-1?ixid=abc&fm=jpg&q=85&fit=max&w=4618");
        assert!(4618 * (4618u64 * 6000).div_ceil(8000) <= budget);
        // Tall, and without a query of its own.
        let mut tall = photo(3000, 9000);
        tall["urls"]["raw"] = json!("https://images.unsplash.test/photo-2");
        let w = unsplash_download(&tall, budget).unwrap();
        let w: u64 =
            w.strip_prefix("https://images.unsplash.test/photo-2?fm=jpg&q=85&fit=max&w=").unwrap().parse().unwrap();
        assert!(w * (w * 9000).div_ceil(3000) <= budget && (w + 1) * ((w + 1) * 9000).div_ceil(3000) > budget);
        // No raw URL: the regular size rather than a file that would be refused.
        let mut no_raw = photo(8000, 6000);
        no_raw["urls"].as_object_mut().unwrap().remove("raw");
        assert_eq!(unsplash_download(&no_raw, budget).unwrap(), "https://images.unsplash.test/photo-1?ixid=abc&w=1080");
    }
}
