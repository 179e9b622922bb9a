//! Multipart bodies, for every route that takes files (the API's and the
//! back-office's): their body limit and its 413, the errors of reading a
//! form, and a `file` field streamed into the upload use case
//! ([`quire_app::uploads`]), which checks and records it.

use crate::AppState;
use crate::error::{ApiError, ApiResult};
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::extract::multipart::{Field, MultipartError};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use quire_app::Actor;
use quire_core::model::Upload;
use quire_tools::Services;

/// What a body over the upload limit is told.
const TOO_LARGE: &str = "the body is larger than the upload limit (max_upload_mb)";

/// `routes` with the body limit of routes that take files: `max_upload`
/// bytes of file plus room for the form around it (merge them outside the
/// API's 2 MiB limit). A body refused for its declared length is answered
/// in the API's error shape, naming the upload limit.
pub fn with_upload_limit(routes: Router<AppState>, max_upload: u64) -> Router<AppState> {
    let limit = usize::try_from(max_upload).unwrap_or(usize::MAX).saturating_add(64 * 1024);
    routes
        .layer(DefaultBodyLimit::max(limit))
        .layer(tower_http::limit::RequestBodyLimitLayer::new(limit))
        .layer(axum::middleware::from_fn(upload_limit_errors))
}

/// The body limit's own 413 (plain text) as the API's error, naming the
/// upload limit rather than the API's 2 MiB.
async fn upload_limit_errors(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let response = next.run(req).await;
    let json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if response.status() != StatusCode::PAYLOAD_TOO_LARGE || json {
        return response;
    }
    let mut answer = ApiError::with_status(StatusCode::PAYLOAD_TOO_LARGE, TOO_LARGE).into_response();
    for (name, value) in response.headers() {
        if name != axum::http::header::CONTENT_TYPE && name != axum::http::header::CONTENT_LENGTH {
            answer.headers_mut().insert(name.clone(), value.clone());
        }
    }
    answer
}

/// A multipart error: the size limit is a 413, anything else a 400.
pub fn multipart_error(e: MultipartError) -> ApiError {
    // A body cut off by the size limit reaches the form parser as a failed
    // read; the limit's own error is further down the chain.
    let mut source: Option<&dyn std::error::Error> = Some(&e);
    while let Some(s) = source {
        if s.to_string().contains("length limit exceeded") {
            return ApiError::with_status(StatusCode::PAYLOAD_TOO_LARGE, TOO_LARGE);
        }
        source = s.source();
    }
    let status = if e.status().is_server_error() { StatusCode::BAD_REQUEST } else { e.status() };
    ApiError::with_status(status, format!("multipart body: {}", e.body_text()))
}

/// A text field's value.
pub async fn text(field: Field<'_>) -> ApiResult<String> {
    field.text().await.map_err(multipart_error)
}

/// Streams one `file` field into the upload use case as the actor, which
/// types, checks and records it: the upload, or why not.
pub async fn receive(services: &Services, actor: &Actor, mut field: Field<'_>) -> ApiResult<Upload> {
    let filename = field.file_name().unwrap_or("upload").to_string();
    let mut arriving = quire_app::uploads::receive(services, actor, &filename).await?;
    while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
        arriving.write(&chunk).await?;
    }
    Ok(arriving.finish().await?)
}
