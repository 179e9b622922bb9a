//! Files in and out: `POST /api/v1/uploads` receives a file (multipart,
//! streamed to the site's folder), the multipart form of
//! `POST /api/v1/images` (in [`super::images`]) makes an image of one, and
//! `/uploads/...` serves the stored files of live, completed images.
//!
//! These routes take bodies up to `max_upload_mb`, so they are mounted
//! outside the 2 MiB limit of the rest of the API (see [`crate::router`]).

use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::routes::tools::tool_error;
use axum::extract::multipart::{Field, MultipartError};
use axum::extract::{DefaultBodyLimit, Multipart, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use quire_core::access::Action;
use quire_core::model::{EntityKind, Upload};
use quire_tools::ErrorCode;
use quire_tools::media::Incoming;
use tower::ServiceExt as _;
use tower_http::services::ServeFile;

/// Routes of this module that take large bodies, with their own limit:
/// `max_upload` bytes of file plus room for the form around it.
pub fn router(max_upload: u64) -> Router<AppState> {
    let limit = usize::try_from(max_upload).unwrap_or(usize::MAX).saturating_add(64 * 1024);
    Router::new()
        .route("/api/v1/uploads", post(upload))
        .route("/api/v1/images", post(super::images::create))
        .layer(DefaultBodyLimit::max(limit))
        .layer(tower_http::limit::RequestBodyLimitLayer::new(limit))
}

/// The back-office's upload form, which takes files under the same limit.
pub const UPLOAD_FORM: &str = "/media/upload";

/// Whether `path` is one of the routes that take files (and their limit).
pub fn takes_files(path: &str) -> bool {
    path == "/api/v1/uploads" || path == "/api/v1/images" || path == UPLOAD_FORM
}

/// The multipart form of an upload.
#[derive(utoipa::ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct UploadForm {
    /// The file: PNG, JPEG, WebP or GIF, as its bytes say (not its name or
    /// declared type).
    #[schema(value_type = String, format = Binary, content_media_type = "application/octet-stream")]
    file: Vec<u8>,
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

/// A multipart error: the size limit is a 413, anything else a 400.
pub fn multipart_error(e: MultipartError) -> ApiError {
    // A body cut off by the size limit reaches the form parser as a failed
    // read; the limit's own error is further down the chain.
    let mut source: Option<&dyn std::error::Error> = Some(&e);
    while let Some(s) = source {
        if s.to_string().contains("length limit exceeded") {
            return ApiError::with_status(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the body is larger than the upload limit (max_upload_mb)",
            );
        }
        source = s.source();
    }
    let status = if e.status().is_server_error() { StatusCode::BAD_REQUEST } else { e.status() };
    ApiError::with_status(status, format!("multipart body: {}", e.body_text()))
}

/// A refusal of the file being received: the size limit is a 413.
fn receive_error(e: quire_tools::ToolError) -> ApiError {
    if e.code == ErrorCode::Limit {
        return ApiError::with_status(StatusCode::PAYLOAD_TOO_LARGE, e.message);
    }
    let mut err = tool_error(e);
    err.field = Some("file".into());
    err
}

/// Streams one `file` field to the caller's site folder and records it.
pub async fn receive(state: &AppState, caller: &Caller, mut field: Field<'_>) -> ApiResult<Upload> {
    let services = state.registry().services();
    let filename = field.file_name().unwrap_or("upload").to_string();
    let mut incoming = Incoming::begin(services, &caller.scope).await.map_err(tool_error)?;
    while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
        incoming.write(&chunk).await.map_err(receive_error)?;
    }
    let actor = caller.actor();
    incoming.finish(services, &caller.scope, &actor, &filename).await.map_err(receive_error)
}

/// Receives a file for `createImage` (by the `id` or `url` answered): typed
/// from its bytes and checked against the decoding limits, kept in the
/// site's folder, never served itself.
#[utoipa::path(post, path = "/api/v1/uploads", operation_id = "uploadFile", tag = "images",
    request_body(content = inline(UploadForm), content_type = "multipart/form-data"), security(("bearer" = [])),
    responses((status = 201, description = "The upload; pass its id as createImage's uploadId", body = Upload),
        (status = 413, description = "The file is larger than max_upload_mb", body = ErrorBody),
        (status = 422, description = "The bytes are not a PNG, JPEG, WebP or GIF image within the limits; the message says what they are", body = ErrorBody)))]
pub async fn upload(State(state): State<AppState>, caller: Caller, mut form: Multipart) -> ApiResult<Response> {
    caller.require(Action::Write(EntityKind::Image))?;
    let mut upload = None;
    let read = async {
        while let Some(field) = form.next_field().await.map_err(multipart_error)? {
            match field.name() {
                Some("file") if upload.is_none() => upload = Some(receive(&state, &caller, field).await?),
                Some("file") => return Err(ApiError::bad_field("file", "send one file per request")),
                other => {
                    return Err(ApiError::bad_request(format!(
                        "unknown form field \"{}\"; the form has one field, file",
                        other.unwrap_or_default()
                    )));
                }
            }
        }
        Ok(())
    }
    .await;
    if let Err(e) = read {
        discard(&state, &caller, upload.as_ref()).await;
        return Err(e);
    }
    let upload = upload.ok_or_else(|| ApiError::bad_field("file", "required: the form has no file field"))?;
    Ok((StatusCode::CREATED, Json(upload)).into_response())
}

/// Forgets the upload of a refused request, if one arrived.
pub async fn discard(state: &AppState, caller: &Caller, upload: Option<&Upload>) {
    if let Some(u) = upload {
        quire_tools::media::discard(state.registry().services(), &caller.scope, u).await;
    }
}

/// Whether a stored file's name is its content hash (32 hex digits and an
/// extension): such a name never changes content, so it may be cached for
/// good.
fn hashed(name: &str) -> bool {
    name.split_once('.').is_some_and(|(stem, _)| stem.len() == 32 && stem.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Serves a stored file of a live, completed image with the type recorded
/// when it was written; anything else is a 404. Never sniffed, never HTML.
pub async fn serve_file(State(state): State<AppState>, req: Request) -> Response {
    let path = req.uri().path().to_string();
    let not_found = || ApiError::not_found(format!("no file at {path}")).into_response();
    let Some(rel) = path.strip_prefix("/uploads/") else { return not_found() };
    if rel.split('/').any(|c| c.is_empty() || c == "." || c == ".." || c.contains('\\')) {
        return not_found();
    }
    let file = match state.store().served_file(&path).await {
        Ok(Some(f)) => f,
        Ok(None) => return not_found(),
        Err(e) => return ApiError::from(e).into_response(),
    };
    let Ok(mime) = file.mime.parse::<mime::Mime>() else { return not_found() };
    let on_disk = state.registry().services().uploads_dir.join(rel);
    let mut res = match ServeFile::new_with_mime(on_disk, &mime).oneshot(req).await {
        Ok(res) => res.map(axum::body::Body::new),
        Err(e) => return ApiError::internal(e).into_response(),
    };
    if res.status() == StatusCode::NOT_FOUND {
        return not_found();
    }
    let headers = res.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; sandbox"),
    );
    headers.insert(
        axum::http::HeaderName::from_static("cross-origin-resource-policy"),
        HeaderValue::from_static("cross-origin"),
    );
    let cache = if hashed(rel.rsplit('/').next().unwrap_or_default()) {
        "public, max-age=31536000, immutable"
    } else {
        "public, max-age=300"
    };
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    res
}

#[cfg(test)]
mod tests {
    #[test]
    fn hashed_names() {
        assert!(super::hashed("0123456789abcdef0123456789abcdef.webp"));
        assert!(!super::hashed("hero-dawn.png"));
        assert!(!super::hashed("0123456789abcdef0123456789abcdeg.png"));
    }
}
