//! `/api/v1/images`: the media library. An image is made from a file sent
//! with the request (multipart), uploaded earlier, or sent as base64 data;
//! its processing runs in the background (status processing → completed |
//! failed). `POST /api/v1/images` takes files, so it is mounted apart
//! ([`file_router`]); a file sent with it is received through
//! [`crate::multipart`] and [`quire_app::uploads`]. Serving files is in
//! [`super::uploads`].

use crate::AppState;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::error::{ApiResult, ErrorBody, tool_error};
use crate::extract::ApiJson;
use crate::multipart::{multipart_error, with_upload_limit};
use axum::body::Body;
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use quire_core::access::Permission;
use quire_core::input::ImagePatch;
use quire_core::model::{EntityKind, Image, ImageStatus};
use quire_store::ImageMeta;
use quire_tools::images::CreateImageArgs;
use serde::Deserialize;

/// `POST /api/v1/images`, which takes files, with the upload limit of
/// `max_upload` bytes (merged outside the API's 2 MiB limit; a JSON body
/// keeps that one).
pub fn file_router(max_upload: u64) -> Router<AppState> {
    with_upload_limit(Router::new().route("/api/v1/images", post(create)), max_upload)
}

super::list_query! {
    /// Filters of the image list.
    ImageQuery {
        /// Only images with this processing status.
        status: Option<ImageStatus>,
    }
}

/// The multipart form of `POST /api/v1/images`.
#[derive(utoipa::ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct ImageForm {
    /// The file: PNG, JPEG, WebP or GIF, as its bytes say.
    #[schema(value_type = String, format = Binary, content_media_type = "application/octet-stream")]
    file: Vec<u8>,
    /// Alternative text.
    #[schema(value_type = String, required = false, max_length = 300)]
    alt: Option<String>,
    /// Longer description.
    #[schema(value_type = String, required = false, max_length = 2000)]
    description: Option<String>,
    /// Tags, comma-separated.
    #[schema(value_type = String, required = false)]
    tags: Option<String>,
}

/// The JSON form of `POST /api/v1/images`: the file by exactly one of
/// `uploadId`, `url` or `data`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewImageBody {
    /// Id of a file uploaded earlier (`POST /api/v1/uploads`).
    pub upload_id: Option<String>,
    /// URL of a file uploaded earlier (`/uploads/<site>/incoming/<id>`).
    pub url: Option<String>,
    /// The file, base64-encoded (at most 1.5 MB decoded); needs `filename`.
    #[schema(max_length = 2_000_004)]
    pub data: Option<String>,
    /// File name (required with `data`; default: the upload's).
    #[schema(max_length = 255)]
    pub filename: Option<String>,
    /// Alternative text.
    #[schema(max_length = 300)]
    pub alt: Option<String>,
    /// Longer description.
    #[schema(max_length = 2000)]
    pub description: Option<String>,
    /// Tags.
    pub tags: Option<Vec<String>>,
}

/// Makes an image of a file: sent with this request as multipart form
/// data (`file`, streamed to disk, typed from its bytes), or — as JSON —
/// uploaded earlier or sent as base64. Answers at once: 202 with the new
/// image (status processing; its files and dimensions follow when
/// completed), or 200 with the image that already holds the same file.
#[utoipa::path(post, path = "/api/v1/images", operation_id = "createImage", tag = "images",
    request_body(content((inline(ImageForm) = "multipart/form-data"), (NewImageBody = "application/json"))),
    security(("bearer" = [])),
    responses((status = 200, description = "The same file is already in the library: that image", body = Image),
        (status = 202, description = "The new image, status processing", body = Image),
        (status = 404, description = "No such upload in this site", body = ErrorBody),
        (status = 413, description = "The file is larger than max_upload_mb (multipart), or the body larger than 2 MiB (JSON)", body = ErrorBody),
        (status = 422, description = "Not a PNG, JPEG, WebP or GIF image within the limits (the message says what it is), or not exactly one of uploadId, url and data", body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    req: Request,
) -> ApiResult<Response> {
    caller.authorize(Permission::Write(EntityKind::Image))?;
    let services = state.registry().services();
    let multipart = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("multipart/form-data"));
    let (image, created) = if multipart {
        let form =
            Multipart::from_request(req, &state).await.map_err(|e| ApiError::with_status(e.status(), e.body_text()))?;
        create_from_form(services, &caller.acting(), form).await?
    } else {
        let ctx = caller.acting().call_context();
        let ApiJson(body) = ApiJson::<NewImageBody>::from_request(limit_body(req), &state).await?;
        let args = CreateImageArgs {
            upload_id: body.upload_id,
            url: body.url,
            data: body.data,
            filename: body.filename,
            alt: body.alt,
            description: body.description,
            tags: body.tags,
        };
        quire_tools::images::create(services, &ctx, args).await.map_err(tool_error)?
    };
    let status = if created { StatusCode::ACCEPTED } else { StatusCode::OK };
    Ok((status, Json(image)).into_response())
}

/// Reads [`ImageForm`] as it streams in (the file straight to the site's
/// folder) and makes an image of the file as `actor`; an upload that
/// arrived for a form refused later is discarded.
async fn create_from_form(
    services: &quire_tools::Services,
    actor: &quire_app::Actor,
    mut form: Multipart,
) -> ApiResult<(Image, bool)> {
    let mut upload = None;
    let mut meta = ImageMeta::default();
    let read = async {
        while let Some(field) = form.next_field().await.map_err(multipart_error)? {
            let name = field.name().unwrap_or_default().to_string();
            match name.as_str() {
                "file" if upload.is_none() => upload = Some(crate::multipart::receive(services, actor, field).await?),
                "file" => return Err(ApiError::bad_field("file", "send one file per request")),
                "alt" => meta.alt = Some(crate::multipart::text(field).await?),
                "description" => meta.description = Some(crate::multipart::text(field).await?),
                "tags" => meta.tags.extend(
                    crate::multipart::text(field)
                        .await?
                        .split(',')
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .map(str::to_string),
                ),
                other => {
                    return Err(ApiError::bad_request(format!(
                        "unknown form field \"{other}\"; expected file, alt, description or tags"
                    )));
                }
            }
        }
        Ok(())
    }
    .await;
    if let Err(e) = read {
        if let Some(u) = &upload {
            quire_app::uploads::discard(services, actor, u).await;
        }
        return Err(e);
    }
    let upload = upload.ok_or_else(|| ApiError::bad_field("file", "required: the form has no file field"))?;
    Ok(quire_app::uploads::create_image(services, actor, &upload, meta).await?)
}

/// A JSON body keeps the API's 2 MiB limit on this large-body route.
fn limit_body(req: Request) -> Request {
    req.map(|b| Body::new(http_body_util::Limited::new(b, crate::BODY_LIMIT)))
}

// `router()` mounts these; `POST /api/v1/images` takes large bodies, so
// `file_router` mounts it.
super::record_handlers! {
    tag = "images", item = "/api/v1/images/{id}" ("id": "Image id");

    /// Lists images, newest first.
    list: get "/api/v1/images" "listImages" (q: ImageQuery) => images(q.status) -> [Image] "One page of images, newest first";
    /// Reads an image record.
    read: get "getImage" => image -> Image "The image record";
    /// Changes an image's alt text, description, tags or categories.
    update: patch "updateImage" => update_image(ImagePatch) -> Image "The changed image record";
    /// Archives an image record (the file stays).
    archive: delete "archiveImage" => Image "The archive holding the image record";
}
