//! Image tools: getImage, createImage, updateImage, deleteImage.

use crate::args::parse;
use crate::pages::{archive_execute, archive_preview, require_ids};
use crate::registry::schema;
use crate::scope::{limit, select_one};
use crate::tool::*;
use quire_core::input::{ImagePatch, NewImage};
use quire_core::model::{EntityKind, Image, ImageStatus};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::{Component, Path};

/// Largest image file recorded.
const MAX_IMAGE_BYTES: u64 = 25 * 1024 * 1024;

/// Arguments of getImage.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetImageArgs {
    /// Image id.
    pub id: Option<String>,
    /// Words to find in file name, alt text, description and tags.
    pub query: Option<String>,
    /// List all images, newest first.
    pub all: Option<bool>,
    /// Only images with this processing status.
    pub status: Option<ImageStatus>,
    /// Max images (default 20, max 100).
    pub limit: Option<u32>,
    /// nextCursor of the previous list.
    pub cursor: Option<String>,
}

/// Arguments of createImage.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateImageArgs {
    /// Relative URL of a file already uploaded, e.g. "/uploads/team.png".
    pub url: String,
    /// File name to show (default: from the URL).
    pub filename: Option<String>,
    /// Alternative text describing the image.
    pub alt: Option<String>,
    /// Longer description.
    pub description: Option<String>,
    /// Tags.
    pub tags: Option<Vec<String>>,
}

/// Arguments of updateImage.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateImageArgs {
    /// Image id.
    pub id: String,
    /// Alternative text; null clears it.
    #[serde(default, deserialize_with = "quire_core::input::double_option")]
    #[schemars(with = "Option<String>")]
    pub alt: Option<Option<String>>,
    /// Description; null clears it.
    #[serde(default, deserialize_with = "quire_core::input::double_option")]
    #[schemars(with = "Option<String>")]
    pub description: Option<Option<String>>,
    /// Tags (replace the old ones).
    pub tags: Option<Vec<String>>,
    /// Categories (replace the old ones).
    pub categories: Option<Vec<String>>,
}

/// Arguments of deleteImage.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteImageArgs {
    /// Image ids to archive (always an array).
    pub ids: Vec<String>,
}

/// Image as listed.
pub fn image_json(i: &Image) -> Value {
    json!({
        "id": i.id, "url": i.url, "filename": i.filename, "alt": i.alt, "description": i.description,
        "width": i.width, "height": i.height, "tags": i.tags, "status": i.status, "source": i.source,
        "attribution": i.attribution,
    })
}

async fn get_image(call: &Call<'_>, a: GetImageArgs) -> ToolResult {
    let sel = select_one(&[("id", a.id.is_some()), ("query", a.query.is_some()), ("all", a.all == Some(true))])?;
    let store = call.store();
    let n = limit(a.limit, 20, 100)?;
    let (images, next) = match sel.0 {
        "id" => (vec![store.image(call.scope(), a.id.as_deref().unwrap_or_default()).await?], None),
        "query" => (store.search_images(call.scope(), a.query.as_deref().unwrap_or_default(), n).await?, None),
        _ => {
            let l = store.images(call.scope(), a.status, n, a.cursor.as_deref()).await?;
            (l.items, l.next_cursor)
        }
    };
    Ok(items_result(images.iter().map(image_json).collect(), next))
}

/// The file under `uploads_dir` a `/uploads/...` URL names, refusing any
/// path that could leave the folder.
fn upload_path(uploads_dir: &Path, url: &str) -> Result<std::path::PathBuf, ToolError> {
    let bad = || {
        ToolError::invalid(
            format!("url: \"{url}\" is not a relative /uploads/... URL"),
            "Use the exact url of an uploaded file.",
        )
    };
    let rel = url.strip_prefix("/uploads/").ok_or_else(bad)?;
    let rel = Path::new(rel);
    if rel.as_os_str().is_empty() || rel.components().any(|c| !matches!(c, Component::Normal(_))) || url.contains('\0')
    {
        return Err(bad());
    }
    Ok(uploads_dir.join(rel))
}

async fn create_image(call: &Call<'_>, a: CreateImageArgs) -> ToolResult {
    let path = upload_path(&call.services.uploads_dir, &a.url)?;
    if let Ok(meta) = tokio::fs::metadata(&path).await
        && meta.len() > MAX_IMAGE_BYTES
    {
        return Err(ToolError::new(
            ErrorCode::Limit,
            format!(
                "url: {} is {} MB; images are limited to {} MB",
                a.url,
                meta.len() / 1_048_576,
                MAX_IMAGE_BYTES / 1_048_576
            ),
            "Use a smaller file.",
        ));
    }
    let bytes = tokio::fs::read(&path).await.map_err(|_| {
        ToolError::new(
            ErrorCode::NotFound,
            format!("url: no uploaded file at {}", a.url),
            "Upload the file first, then record it.",
        )
    })?;
    let format = image::guess_format(&bytes).map_err(|_| {
        ToolError::invalid(
            format!("url: {} is not an image (png, jpeg, webp or gif)", a.url),
            "Record only image files.",
        )
    })?;
    let dims = image::ImageReader::with_format(std::io::Cursor::new(&bytes), format).into_dimensions().ok();
    let hash = hex::encode(Sha256::digest(&bytes));
    if let Some(existing) = call.store().image_by_hash(call.scope(), &hash).await? {
        return Ok(item_result(
            image_json(&existing),
            format!("This file is already in the library as image {}.", existing.id),
        ));
    }
    let filename =
        a.filename.unwrap_or_else(|| path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default());
    let input = NewImage {
        url: a.url,
        filename,
        mime: Some(format.to_mime_type().to_string()),
        width: dims.map(|d| d.0 as i64),
        height: dims.map(|d| d.1 as i64),
        bytes: Some(bytes.len() as i64),
        content_hash: Some(hash),
        alt: a.alt,
        description: a.description,
        tags: a.tags,
        ..Default::default()
    };
    let image = call.store().create_image(&call.ctx.change_context(), call.scope(), input).await?;
    Ok(item_result(image_json(&image), format!("Recorded image {} ({}).", image.id, image.url)))
}

async fn update_image(call: &Call<'_>, a: UpdateImageArgs) -> ToolResult {
    let patch = ImagePatch { alt: a.alt, description: a.description, tags: a.tags, categories: a.categories };
    let image = call.store().update_image(&call.ctx.change_context(), call.scope(), &a.id, patch).await?;
    Ok(item_result(image_json(&image), format!("Updated image {}.", image.id)))
}

/// The image tools.
pub fn tools() -> Vec<Tool> {
    vec![
        Tool {
            name: "getImage",
            description: "Get images of the media library by id, by query (words in name, alt, description, tags) or all: true. Returns { items } with relative /uploads/ URLs.",
            guidance: "Use the exact `url` from results; look here before importing new images.",
            category: Category::Internal,
            entity: "image",
            risk: Risk::Safe,
            destructive: false,
            idempotent: true,
            read_only: true,
            tags: &["image", "images", "media", "photo", "picture", "library", "search", "find"],
            phrases: &[
                "find a photo",
                "search the media library",
                "team picture",
                "list images",
                "do we have a photo of the office",
            ],
            input_schema: schema::<GetImageArgs>,
            execute: |call, v| Box::pin(async move { get_image(call, parse(v)?).await }),
            preview: None,
        },
        Tool {
            name: "createImage",
            description: "Create an image record for a file already in /uploads, reading its type, size and dimensions; duplicates are detected by content. Returns the image with its id.",
            guidance: "The file must already be uploaded; pass its relative /uploads/... url.",
            category: Category::Internal,
            entity: "image",
            risk: Risk::Moderate,
            destructive: false,
            idempotent: true,
            read_only: false,
            tags: &["image", "create", "add", "media", "upload", "photo", "register"],
            phrases: &["add an uploaded photo to the library", "register an image", "add a picture to media"],
            input_schema: schema::<CreateImageArgs>,
            execute: |call, v| Box::pin(async move { create_image(call, parse(v)?).await }),
            preview: None,
        },
        Tool {
            name: "updateImage",
            description: "Update an image's alt text, description, tags or categories by id. Returns the image.",
            guidance: "Alt text describes the picture for people who cannot see it.",
            category: Category::Internal,
            entity: "image",
            risk: Risk::Moderate,
            destructive: false,
            idempotent: true,
            read_only: false,
            tags: &["image", "update", "edit", "alt", "caption", "tag", "photo"],
            phrases: &["set alt text", "describe the photo", "tag the picture", "change image description"],
            input_schema: schema::<UpdateImageArgs>,
            execute: |call, v| Box::pin(async move { update_image(call, parse(v)?).await }),
            preview: None,
        },
        Tool {
            name: "deleteImage",
            description: "Delete images by ids, archiving their records (files stay); the first call only previews. Nothing changes until a person approves.",
            guidance: "Archives the record; pages using the image keep their URL.",
            category: Category::Internal,
            entity: "image",
            risk: Risk::High,
            destructive: true,
            idempotent: false,
            read_only: false,
            tags: &["image", "delete", "remove", "media", "photo", "archive"],
            phrases: &["remove a photo", "delete the picture", "clean up the media library"],
            input_schema: schema::<DeleteImageArgs>,
            execute: |call, v| {
                Box::pin(async move {
                    let a: DeleteImageArgs = parse(v)?;
                    archive_execute(call, EntityKind::Image, &a.ids, "image").await
                })
            },
            preview: Some(|call, v| {
                Box::pin(async move {
                    let a: DeleteImageArgs = parse(v)?;
                    require_ids(&a.ids, "ids")?;
                    archive_preview(call, EntityKind::Image, &a.ids, "image").await
                })
            }),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upload_paths_stay_inside() {
        let dir = Path::new("/srv/uploads");
        assert_eq!(upload_path(dir, "/uploads/a/b.png").unwrap(), dir.join("a/b.png"));
        for bad in [
            "/uploads/../etc/passwd",
            "/uploads//etc/passwd",
            "uploads/a.png",
            "/uploads/",
            "/uploads/a/../../b",
            "/other/a.png",
        ] {
            assert!(upload_path(dir, bad).is_err(), "{bad}");
        }
    }
}
