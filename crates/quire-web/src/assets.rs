//! The back-office's own script and stylesheet, embedded in the binary.
//! Their URLs carry the content's hash, so they are cached for a year.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

#[derive(rust_embed::Embed)]
#[folder = "assets/"]
struct Assets;

/// The URL of asset `name` (e.g. `app.js`), with its content hash.
pub fn url(name: &str) -> String {
    match Assets::get(name) {
        Some(file) => {
            let hash: String = file.metadata.sha256_hash().iter().take(6).map(|b| format!("{b:02x}")).collect();
            format!("/assets/{name}?v={hash}")
        }
        None => format!("/assets/{name}"),
    }
}

/// `GET /favicon.ico`: the icon, an SVG (every browser the back-office
/// serves takes one, and no screen is left asking for a missing file).
pub async fn favicon() -> Response {
    serve(Path("icon.svg".to_string())).await
}

/// `GET /assets/{name}`.
pub async fn serve(Path(name): Path<String>) -> Response {
    let Some(file) = Assets::get(&name) else {
        return crate::WebError::NotFound(format!("no asset {name}")).into_response();
    };
    let mime = match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    };
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, mime), (header::CACHE_CONTROL, "public, max-age=31536000, immutable")],
        file.data.into_owned(),
    )
        .into_response()
}
