//! Files in and out: `POST /api/v1/uploads` receives a file (multipart,
//! streamed to the site's folder through [`quire_app::uploads`]) that
//! `createImage` later makes an image of, and `/uploads/...` serves the
//! stored files of live, completed images: from the local folder through
//! the filesystem, or streamed from the object store the media storage is
//! configured with.
//!
//! `POST /api/v1/uploads` takes bodies up to `max_upload_mb`, so it is
//! mounted outside the 2 MiB limit of the rest of the API (see
//! [`crate::router_with_files`]).

use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::multipart::{multipart_error, with_upload_limit};
use axum::extract::{Multipart, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use quire_core::access::Permission;
use quire_core::model::{EntityKind, Upload};
use quire_tools::storage::{GetOptions, GetRange};
use tower::ServiceExt as _;
use tower_http::services::ServeFile;

/// The route of this module that takes files, with the upload limit of
/// `max_upload` bytes.
pub fn router(max_upload: u64) -> Router<AppState> {
    with_upload_limit(Router::new().route("/api/v1/uploads", post(upload)), max_upload)
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

/// Receives a file for `createImage` (by the `id` or `url` answered): typed
/// from its bytes and checked against the decoding limits, kept in the
/// site's folder, never served itself.
#[utoipa::path(post, path = "/api/v1/uploads", operation_id = "uploadFile", tag = "images",
    request_body(content = inline(UploadForm), content_type = "multipart/form-data"), security(("bearer" = [])),
    responses((status = 201, description = "The upload; pass its id as createImage's uploadId", body = Upload),
        (status = 413, description = "The file is larger than max_upload_mb", body = ErrorBody),
        (status = 422, description = "The bytes are not a PNG, JPEG, WebP or GIF image within the limits; the message says what they are", body = ErrorBody)))]
pub async fn upload(State(state): State<AppState>, caller: Caller, mut form: Multipart) -> ApiResult<Response> {
    caller.authorize(Permission::Write(EntityKind::Image))?;
    let services = state.registry().services();
    let actor = caller.acting();
    let mut upload = None;
    let read = async {
        while let Some(field) = form.next_field().await.map_err(multipart_error)? {
            match field.name() {
                Some("file") if upload.is_none() => {
                    upload = Some(crate::multipart::receive(services, &actor, field).await?);
                }
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
        if let Some(u) = &upload {
            quire_app::uploads::discard(services, &actor, u).await;
        }
        return Err(e);
    }
    let upload = upload.ok_or_else(|| ApiError::bad_field("file", "required: the form has no file field"))?;
    Ok((StatusCode::CREATED, Json(upload)).into_response())
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
    let storage = &state.registry().services().storage;
    let mut res = match storage.local_path(rel) {
        Some(on_disk) => match ServeFile::new_with_mime(on_disk, &mime).oneshot(req).await {
            Ok(res) => res.map(axum::body::Body::new),
            Err(e) => return ApiError::internal(e).into_response(),
        },
        None => match serve_object(storage, rel, &file.mime, req.headers(), req.method() == Method::HEAD).await {
            Ok(res) => res,
            Err(object_store::Error::NotFound { .. }) => return not_found(),
            Err(e) => return ApiError::internal(format!("reading {path} from the media storage: {e}")).into_response(),
        },
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

/// A stored object as an answer: streamed as the store sends it (never
/// held whole), with its length, ETag and time; a single byte range is a
/// 206 (one the object does not have a 416); `If-None-Match` and
/// `If-Modified-Since` may make it a 304.
async fn serve_object(
    storage: &quire_tools::storage::Storage,
    key: &str,
    mime: &str,
    headers: &HeaderMap,
    head: bool,
) -> Result<Response, object_store::Error> {
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    let mut options = GetOptions {
        if_none_match: text(header::IF_NONE_MATCH),
        // Only without If-None-Match, which takes precedence (RFC 9110).
        if_modified_since: text(header::IF_MODIFIED_SINCE)
            .filter(|_| !headers.contains_key(header::IF_NONE_MATCH))
            .and_then(|v| chrono::DateTime::parse_from_rfc2822(&v).ok())
            .map(|t| t.with_timezone(&chrono::Utc)),
        head,
        ..GetOptions::default()
    };
    // A range is honoured only without If-Range (which may name another
    // version) and when it is one range: the whole file is a valid answer
    // to anything else.
    let range = text(header::RANGE).filter(|_| !headers.contains_key(header::IF_RANGE)).and_then(|r| byte_range(&r));
    if let Some(range) = range {
        let size = storage.head(key).await.map_err(|e| match e {
            quire_tools::storage::StorageError::NotFound(path) => {
                object_store::Error::NotFound { path, source: "no such object".into() }
            }
            other => object_store::Error::Generic { store: "media", source: other.into() },
        })?;
        // The condition before the range: an unchanged file is a 304.
        let etag = size.e_tag.as_deref();
        if let (Some(asked), Some(etag)) = (options.if_none_match.as_deref(), etag)
            && asked.split(',').any(|t| t.trim() == etag || t.trim() == "*")
        {
            return Ok(StatusCode::NOT_MODIFIED.into_response());
        }
        match satisfiable(&range, size.size) {
            Some(r) => options.range = Some(r),
            None => {
                let mut res = StatusCode::RANGE_NOT_SATISFIABLE.into_response();
                if let Ok(v) = HeaderValue::from_str(&format!("bytes */{}", size.size)) {
                    res.headers_mut().insert(header::CONTENT_RANGE, v);
                }
                return Ok(res);
            }
        }
    }
    let partial = options.range.is_some();
    let got = match storage.get(key, options).await {
        Ok(got) => got,
        Err(object_store::Error::NotModified { .. }) => return Ok(StatusCode::NOT_MODIFIED.into_response()),
        Err(e) => return Err(e),
    };
    let (total, served) = (got.meta.size, got.range.clone());
    let mut res = Response::new(axum::body::Body::empty());
    let out = res.headers_mut();
    out.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(mime).unwrap_or(HeaderValue::from_static("application/octet-stream")),
    );
    out.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    out.insert(header::CONTENT_LENGTH, HeaderValue::from(served.end - served.start));
    if let Some(etag) = got.meta.e_tag.as_deref().and_then(|e| HeaderValue::from_str(e).ok()) {
        out.insert(header::ETAG, etag);
    }
    let modified = got.meta.last_modified.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    if let Ok(v) = HeaderValue::from_str(&modified) {
        out.insert(header::LAST_MODIFIED, v);
    }
    if partial {
        *res.status_mut() = StatusCode::PARTIAL_CONTENT;
        let range = format!("bytes {}-{}/{total}", served.start, served.end.saturating_sub(1));
        if let Ok(v) = HeaderValue::from_str(&range) {
            res.headers_mut().insert(header::CONTENT_RANGE, v);
        }
    }
    if !head {
        *res.body_mut() = axum::body::Body::from_stream(got.into_stream());
    }
    Ok(res)
}

/// One byte range of a `Range` header, as asked: `bytes=a-b`, `bytes=a-`
/// or `bytes=-n`; none for several ranges or another unit.
fn byte_range(header: &str) -> Option<(Option<u64>, Option<u64>)> {
    let spec = header.trim().strip_prefix("bytes=")?;
    if spec.contains(',') {
        return None;
    }
    let (start, end) = spec.split_once('-')?;
    let num = |s: &str| if s.trim().is_empty() { Ok(None) } else { s.trim().parse::<u64>().map(Some) };
    match (num(start).ok()?, num(end).ok()?) {
        (None, None) => None,
        // Not a valid range (RFC 9110): ignored, the whole file answers.
        (Some(start), Some(end)) if end < start => None,
        pair => Some(pair),
    }
}

/// The range of an object of `size` bytes that `range` asks for; none
/// when it has no byte of it.
fn satisfiable(range: &(Option<u64>, Option<u64>), size: u64) -> Option<GetRange> {
    match *range {
        (Some(start), _) if start >= size => None,
        (Some(start), None) => Some(GetRange::Offset(start)),
        (Some(start), Some(end)) if end < start => None,
        (Some(start), Some(end)) => Some(GetRange::Bounded(start..end.min(size - 1) + 1)),
        (None, Some(0)) | (None, None) => None,
        (None, Some(n)) => Some(GetRange::Suffix(n.min(size))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn hashed_names() {
        assert!(super::hashed("0123456789abcdef0123456789abcdef.webp"));
        assert!(!super::hashed("hero-dawn.png"));
        assert!(!super::hashed("0123456789abcdef0123456789abcdeg.png"));
    }

    #[test]
    fn byte_ranges() {
        use super::{GetRange, byte_range, satisfiable};
        let asked = |h: &str, size: u64| byte_range(h).and_then(|r| satisfiable(&r, size));
        assert_eq!(asked("bytes=0-9", 100), Some(GetRange::Bounded(0..10)));
        assert_eq!(asked("bytes=90-200", 100), Some(GetRange::Bounded(90..100)));
        assert_eq!(asked("bytes=10-", 100), Some(GetRange::Offset(10)));
        assert_eq!(asked("bytes=-5", 100), Some(GetRange::Suffix(5)));
        assert_eq!(asked("bytes=-500", 100), Some(GetRange::Suffix(100)));
        assert_eq!(asked("bytes=100-", 100), None);
        assert_eq!(byte_range("bytes=5-2"), None, "an invalid range is ignored");
        assert_eq!(byte_range("bytes=0-1,5-6"), None);
        assert_eq!(byte_range("items=0-1"), None);
        assert_eq!(byte_range("bytes=x-1"), None);
    }
}
