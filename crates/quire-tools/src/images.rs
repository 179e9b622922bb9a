//! Image tools: getImage, createImage, updateImage, deleteImage.

use crate::archive::{archive_execute, archive_preview};
use crate::catalog::{DeleteImageArgs, GetImageArgs, UpdateImageArgs};
use crate::media::{MAX_INLINE_BYTES, clean_filename, receive_bytes};
use crate::scope::{limit, select_one};
use crate::services::Services;
use crate::tool::*;
use base64::Engine as _;
use quire_core::input::ImagePatch;
use quire_core::model::{EntityKind, Image, Upload};
use quire_store::ImageMeta;
use serde_json::{Value, json};

/// What [`create`] takes (createImage's arguments).
pub use crate::catalog::CreateImageArgs;

/// Image as listed.
pub fn image_json(i: &Image) -> Value {
    json!({
        "id": i.id, "url": i.url, "filename": i.filename, "alt": i.alt, "description": i.description,
        "width": i.width, "height": i.height, "tags": i.tags, "status": i.status, "source": i.source,
        "attribution": i.attribution, "error": i.error,
    })
}

pub(crate) async fn get_image(call: &Call<'_>, a: GetImageArgs) -> ToolResult {
    let sel = select_one(&[("id", a.id.is_some()), ("query", a.query.is_some()), ("all", a.all == Some(true))])?;
    let store = call.store();
    let n = limit(a.limit, 20, 100)?;
    let (images, next) = match sel.0 {
        "id" => (vec![store.image(call.scope(), a.id.as_deref().unwrap_or_default()).await?], None),
        "query" => {
            let query = crate::embed::checked_query(a.query.as_deref())?;
            let (images, ranking) = search(call.services, call.scope(), query, n).await?;
            let mut out = items_result(images.iter().map(image_json).collect(), None);
            out["ranking"] = json!(ranking);
            return Ok(out);
        }
        _ => {
            let l = store.images(call.scope(), a.status, n, a.cursor.as_deref()).await?;
            (l.items, l.next_cursor)
        }
    };
    Ok(items_result(images.iter().map(image_json).collect(), next))
}

/// Images matching `query`, best first, and which ranking answered
/// (`embed::rank`: `hybrid` or `fulltext`, stemmed words and BM25).
pub async fn search(
    services: &Services,
    scope: &quire_store::Scope,
    query: &str,
    limit: u32,
) -> Result<(Vec<Image>, &'static str), ToolError> {
    let store = &services.store;
    let pool = if services.embedder.is_some() { (limit as usize).max(crate::embed::POOL) } else { limit as usize };
    let fulltext = async {
        let found = store.search_images(scope, query, pool as u32).await?;
        Ok(found.into_iter().map(|i| i.id).collect())
    };
    let (ids, ranking) =
        crate::embed::rank(store, services.embedder.as_deref(), scope, "image", query, pool, fulltext).await?;
    let ids = &ids[..ids.len().min(limit as usize)];
    let mut found = store.live_images(scope, ids).await?;
    found.sort_by_key(|i| ids.iter().position(|id| *id == i.id));
    Ok((found, ranking))
}

/// The upload `createImage` names, received now when it comes as `data`.
async fn upload_of(services: &Services, ctx: &CallContext, a: &CreateImageArgs) -> Result<Upload, ToolError> {
    let sel = select_one(&[("uploadId", a.upload_id.is_some()), ("url", a.url.is_some()), ("data", a.data.is_some())])
        .map_err(|_| {
            ToolError::invalid(
                "Provide exactly one of uploadId, url or data",
                "Upload the file first (POST /api/v1/uploads) and pass its uploadId, or send small files as base64 data with a filename.",
            )
        })?;
    let not_found = |what: &str, value: &str| {
        ToolError::new(
            ErrorCode::NotFound,
            format!("{what}: no upload {value} in this site"),
            "Upload the file first and use the uploadId or url it returned.",
        )
    };
    match sel.0 {
        "uploadId" => {
            let id = a.upload_id.as_deref().unwrap_or_default();
            services.store.upload(&ctx.scope, id).await.map(|u| u.0).map_err(|_| not_found("uploadId", id))
        }
        "url" => {
            let url = a.url.as_deref().unwrap_or_default();
            if !url.starts_with("/uploads/") {
                return Err(ToolError::invalid(
                    format!("url: \"{url}\" is not the relative /uploads/... URL of an upload"),
                    "Use the url an upload returned.",
                ));
            }
            services.store.upload(&ctx.scope, url).await.map(|u| u.0).map_err(|_| not_found("url", url))
        }
        _ => {
            let filename = a.filename.as_deref().filter(|f| !f.trim().is_empty()).ok_or_else(|| {
                ToolError::invalid("filename: required with data", "Name the file, e.g. \"team.jpg\".")
            })?;
            let data = a.data.as_deref().unwrap_or_default();
            if data.len() > MAX_INLINE_BYTES.div_ceil(3) * 4 + 4 {
                return Err(ToolError::new(
                    ErrorCode::Limit,
                    format!("data: larger than {} bytes decoded", MAX_INLINE_BYTES),
                    "Upload larger files with POST /api/v1/uploads and pass the uploadId.",
                ));
            }
            let bytes = base64::engine::general_purpose::STANDARD.decode(data.trim()).map_err(|e| {
                ToolError::invalid(format!("data: not base64 ({e})"), "Send the file's bytes as standard base64.")
            })?;
            if bytes.len() > MAX_INLINE_BYTES {
                return Err(ToolError::new(
                    ErrorCode::Limit,
                    format!("data: {} bytes decoded; at most {MAX_INLINE_BYTES} are taken inline", bytes.len()),
                    "Upload larger files with POST /api/v1/uploads and pass the uploadId.",
                ));
            }
            receive_bytes(services, &ctx.scope, &ctx.actor, filename, &bytes)
                .await
                .map_err(|e| ToolError { message: e.message.replacen("file: ", "data: ", 1), ..e })
        }
    }
}

/// Makes an image of the file `a` names (see createImage): the image and
/// whether it is new (false: the same file was already in the library).
/// Shared by the tool and `POST /api/v1/images`.
pub async fn create(services: &Services, ctx: &CallContext, a: CreateImageArgs) -> Result<(Image, bool), ToolError> {
    let mut upload = upload_of(services, ctx, &a).await?;
    if let Some(name) = a.filename.as_deref().filter(|f| !f.trim().is_empty()) {
        upload.filename = clean_filename(name);
    }
    let meta =
        ImageMeta { alt: a.alt, description: a.description, tags: a.tags.unwrap_or_default(), ..Default::default() };
    create_from_upload(services, ctx, &upload, meta).await
}

/// Makes an image of an upload and wakes the worker that processes it.
pub async fn create_from_upload(
    services: &Services,
    ctx: &CallContext,
    upload: &Upload,
    meta: ImageMeta,
) -> Result<(Image, bool), ToolError> {
    let (image, created) =
        services.store.create_image_from_upload(&ctx.change_context(), &ctx.scope, upload, meta).await?;
    if created {
        services.media.wake.notify_one();
    }
    Ok((image, created))
}

pub(crate) async fn create_image(call: &Call<'_>, a: CreateImageArgs) -> ToolResult {
    let (image, created) = create(call.services, call.ctx, a).await?;
    if !created {
        return Ok(item_result(
            image_json(&image),
            format!("This file is already in the library as image {}.", image.id),
        ));
    }
    Ok(item_result(
        image_json(&image),
        format!(
            "Image {} is processing; getImage {{\"id\": \"{}\"}} shows its url once status is completed.",
            image.id, image.id
        ),
    ))
}

pub(crate) async fn update_image(call: &Call<'_>, a: UpdateImageArgs) -> ToolResult {
    let patch = ImagePatch { alt: a.alt, description: a.description, tags: a.tags, categories: a.categories };
    let image = call.store().update_image(&call.ctx.change_context(), call.scope(), &a.id, patch).await?;
    Ok(item_result(image_json(&image), format!("Updated image {}.", image.id)))
}

pub(crate) async fn delete(call: &Call<'_>, a: DeleteImageArgs) -> ToolResult {
    archive_execute(call, EntityKind::Image, &a.ids, "image").await
}

pub(crate) async fn preview_delete(call: &Call<'_>, a: DeleteImageArgs) -> Result<Preview, ToolError> {
    archive_preview(call, EntityKind::Image, &a.ids, "image").await
}
