//! The media library: a grid of images (search, status filter), each
//! image's details (alt text, description, tags, attribution) and archive.
//! Uploading is a plain multipart form (`POST /media/upload`, outside the
//! back-office's form size limit); the page's script sends each file to
//! `POST /api/v1/images` instead, with a progress bar per file, then follows
//! the image's processing until it completes.

use crate::Person;
pub use crate::card::Card;
use crate::error::WebError;
use crate::form::Form;
use crate::form::{self, Errors};
use crate::frame::Frame;
use crate::pages::{Head, render};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_core::access::Permission;
use quire_core::fields::is_href;
use quire_core::input::ImagePatch;
use quire_core::model::{EntityKind, Image, ImageStatus};
use quire_core::rules::is_link_key;
use quire_server::AppState;
use serde::Deserialize;
use serde_json::Value;

/// Images per screen of the grid.
const PER_SCREEN: u32 = 48;

/// The most hits of a search the grid pages through (ten screens).
const SEARCH_HITS: usize = 10 * PER_SCREEN as usize;

#[derive(Template)]
#[template(path = "media.html")]
struct MediaPage {
    head: Head,
    frame: Frame,
    cards: Vec<Card>,
    q: String,
    status: String,
    statuses: &'static [ImageStatus],
    next: Option<String>,
    archived: bool,
    /// What became of the files of a form upload (made without the script).
    uploaded: Vec<Uploaded>,
}

/// A file of a form upload: its name, and the image made of it or why not.
pub struct Uploaded {
    pub name: String,
    pub outcome: Result<Image, String>,
}

#[derive(Deserialize)]
pub struct MediaQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    status: String,
    cursor: Option<String>,
    archived: Option<String>,
}

/// `GET /media`: the grid, newest first, or the images matching `q`.
pub async fn grid(
    State(state): State<AppState>,
    person: Person,
    Query(q): Query<MediaQuery>,
) -> Result<Html<String>, WebError> {
    let status = form::choice(&q.status, |s| ImageStatus::parse("status", s))?;
    let (images, next) = if q.q.trim().is_empty() {
        let listing =
            person.content.images(status, PER_SCREEN, q.cursor.as_deref()).await.map_err(WebError::listing)?;
        (listing.items, listing.next_cursor)
    } else {
        // Ranked as getImage ranks (by meaning too, when an embedding model
        // is configured); a cursor is how many hits earlier screens showed.
        let offset = match q.cursor.as_deref() {
            None => 0,
            Some(c) => c.parse::<usize>().ok().filter(|o| *o < SEARCH_HITS).ok_or_else(|| {
                WebError::Status(StatusCode::BAD_REQUEST, format!("cursor: \"{c}\" is not a page of this search"))
            })?,
        };
        let wanted = if status.is_some() { SEARCH_HITS } else { (offset + PER_SCREEN as usize + 1).min(SEARCH_HITS) };
        let services = state.registry().services();
        let mut found = quire_app::images::search(services, person.actor(), q.q.trim(), wanted as u32)
            .await
            .map_err(WebError::listing)?;
        found.retain(|i| status.is_none_or(|s| i.status == s));
        let end = (offset + PER_SCREEN as usize).min(found.len());
        let next = (found.len() > end).then(|| end.to_string());
        (found.drain(offset.min(end)..end).collect(), next)
    };
    let page = MediaPage {
        head: Head::new(),
        frame: Frame::new(&person, "/media"),
        cards: images.into_iter().map(Card::of).collect(),
        q: q.q,
        status: q.status,
        statuses: ImageStatus::ALL,
        next,
        archived: q.archived.is_some(),
        uploaded: Vec::new(),
    };
    Ok(Html(page.render()?))
}

/// `POST /media/upload`: the upload form as a browser sends it without the
/// page's script (multipart: `_csrf` first, then one or more `file`s). Each
/// file goes the way of `POST /api/v1/images`; the grid comes back with what
/// became of each, a refused file named with the server's reason.
pub async fn upload(State(state): State<AppState>, person: Person, req: axum::extract::Request) -> Response {
    match receive_form(&state, &person, req).await {
        Ok(uploaded) => {
            let refused = uploaded.iter().all(|u| u.outcome.is_err());
            let status = if refused { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
            match grid_after_upload(&person, uploaded).await {
                Ok(page) => render(status, &page),
                Err(e) => e.into_response(),
            }
        }
        Err(e) => e.into_response(),
    }
}

async fn receive_form(
    state: &AppState,
    person: &Person,
    req: axum::extract::Request,
) -> Result<Vec<Uploaded>, WebError> {
    crate::same_origin(req.headers())?;
    person.require(Permission::Write(EntityKind::Image))?;
    let mut form = <axum::extract::Multipart as axum::extract::FromRequest<AppState>>::from_request(req, state)
        .await
        .map_err(|e| WebError::Status(StatusCode::BAD_REQUEST, e.body_text()))?;
    let too_large = |e: axum::extract::multipart::MultipartError| {
        let e = quire_server::multipart::multipart_error(e);
        WebError::Status(e.status, e.message)
    };
    // The secret comes first, so no file is read for a forged form.
    let first = form.next_field().await.map_err(too_large)?;
    let sent = match first {
        Some(f) if f.name() == Some(crate::CSRF_FIELD) => f.text().await.map_err(too_large)?,
        _ => String::new(),
    };
    if !quire_server::auth::same_secret(&sent, &person.session.csrf) {
        return Err(WebError::Forbidden(
            "this form has expired or did not come from this site (its CSRF token does not match); reload the page \
             and try again"
                .into(),
        ));
    }
    let services = state.registry().services();
    let actor = person.actor();
    let mut uploaded = Vec::new();
    while let Some(field) = form.next_field().await.map_err(too_large)? {
        if field.name() != Some("file") {
            continue;
        }
        let name = field.file_name().unwrap_or("upload").to_string();
        if name.is_empty() {
            continue; // the form sent with no file chosen
        }
        let outcome = match quire_server::multipart::receive(services, actor, field).await {
            Ok(upload) => quire_app::uploads::create_image(services, actor, &upload, Default::default())
                .await
                .map(|(image, _)| image)
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.message),
        };
        uploaded.push(Uploaded { name, outcome });
    }
    if uploaded.is_empty() {
        return Err(WebError::Status(StatusCode::BAD_REQUEST, "choose at least one image to upload".into()));
    }
    Ok(uploaded)
}

async fn grid_after_upload(person: &Person, uploaded: Vec<Uploaded>) -> Result<MediaPage, WebError> {
    let listing = person.content.images(None, PER_SCREEN, None).await?;
    Ok(MediaPage {
        head: Head::new(),
        frame: Frame::new(person, "/media"),
        cards: listing.items.into_iter().map(Card::of).collect(),
        q: String::new(),
        status: String::new(),
        statuses: ImageStatus::ALL,
        next: listing.next_cursor,
        archived: false,
        uploaded,
    })
}

#[derive(Template)]
#[template(path = "image.html")]
struct ImagePage {
    head: Head,
    frame: Frame,
    card: Card,
    /// Attribution as (label, value, is a link) lines.
    credits: Vec<(String, String, bool)>,
    tags: String,
    errors: Errors,
    saved: bool,
}

impl ImagePage {
    fn new(person: &Person, image: Image, errors: Errors, saved: bool) -> Self {
        let credits = match &image.attribution {
            Some(Value::Object(m)) => m
                .iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .map(|(k, v)| {
                    // Shown as a link by the one rule of links the store checked it by.
                    let link = is_link_key(&k) && is_href(&v);
                    (form::label(&k), v, link)
                })
                .collect(),
            _ => Vec::new(),
        };
        ImagePage {
            head: Head::new(),
            frame: Frame::new(person, "/media"),
            tags: image.tags.join(", "),
            card: Card::of(image),
            credits,
            errors,
            saved,
        }
    }
}

/// `GET /media/{id}`: one image and its details.
pub async fn show(person: Person, Path(id): Path<String>, Query(q): Query<crate::pages::SavedQuery>) -> Response {
    let screen = async {
        let image = person.content.image(&id).await?;
        Ok(Html(ImagePage::new(&person, image, Errors::new(), q.saved.is_some()).render()?))
    }
    .await;
    crate::removal::or_archived(&person, EntityKind::Image, &id, screen).await
}

/// `POST /media/{id}`: saves alt text, description and tags.
pub async fn update(person: Person, Path(id): Path<String>, Form(pairs): Form<Vec<(String, String)>>) -> Response {
    let get = |k: &str| form::value(&pairs, k).trim().to_string();
    let result = async {
        person.require(Permission::Write(EntityKind::Image))?;
        let current = person.content.image(&id).await?;
        if let Some(e) = form::stale(&pairs, current.version) {
            return Ok((current, Err(e)));
        }
        let patch = ImagePatch {
            alt: Some(form::optional(&get("alt"))),
            description: Some(form::optional(&get("description"))),
            tags: Some(form::tags(&get("tags"))),
            categories: None,
        };
        let saved = person.content.update_image(&id, patch).await;
        Ok::<_, WebError>((current, saved))
    }
    .await;
    match result {
        Ok((_, Ok(image))) => Redirect::to(&format!("/media/{}?saved=1", image.id)).into_response(),
        Ok((mut current, Err(e))) => {
            current.alt = Some(get("alt"));
            current.description = Some(get("description"));
            let mut page = ImagePage::new(&person, current, form::errors_of(&e, ""), false);
            page.tags = get("tags");
            render(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => e.into_response(),
    }
}

/// `POST /media/{id}/archive`: archives the image (restorable from the
/// archive); its files stop being served.
pub async fn archive(person: Person, Path(id): Path<String>) -> Result<Redirect, WebError> {
    person.content.archive_one(EntityKind::Image, id).await?;
    Ok(Redirect::to("/media?archived=1"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(status: ImageStatus, variants: Value) -> Image {
        serde_json::from_value(serde_json::json!({
            "id": "i1", "url": "/uploads/s/a.png", "filename": "a.png", "mime": "image/png", "width": null,
            "height": null, "bytes": null, "contentHash": null, "alt": null, "description": null, "tags": [],
            "categories": [], "status": status, "source": "upload", "attribution": null, "variants": variants,
            "color": null, "error": null, "generated": [], "version": 1,
            "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z"
        }))
        .unwrap()
    }

    #[test]
    fn a_card_shows_the_thumbnail_and_nothing_while_processing() {
        let done = image(
            ImageStatus::Completed,
            serde_json::json!({"thumbnail": {"url": "/uploads/s/t.png", "webp": "/uploads/s/t.webp"}}),
        );
        assert_eq!(Card::of(done).thumb.as_deref(), Some("/uploads/s/t.webp"));
        assert_eq!(Card::of(image(ImageStatus::Processing, serde_json::json!({}))).thumb, None);
        assert_eq!(
            Card::of(image(ImageStatus::Completed, serde_json::json!({}))).thumb.as_deref(),
            Some("/uploads/s/a.png")
        );
    }
}
