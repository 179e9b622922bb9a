//! What every screen shares: its stylesheet and script, and how a built
//! screen (or the error that kept it from being built) is answered.

use crate::assets;
use crate::error::WebError;
use askama::Template;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};

/// The stylesheet and script URLs of every page.
pub struct Head {
    pub css: String,
    pub js: String,
}

impl Head {
    pub fn new() -> Self {
        Head { css: assets::url("app.css"), js: assets::url("app.js") }
    }
}

/// A screen answered with `status`.
pub(crate) fn render<T: Template>(status: StatusCode, page: &T) -> Response {
    match page.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(e) => WebError::from(e).into_response(),
    }
}

/// A screen answered with `status`, or the error that kept it from being
/// built.
pub(crate) fn answered<T: Template>(status: StatusCode, page: Result<T, WebError>) -> Response {
    match page {
        Ok(page) => render(status, &page),
        Err(e) => e.into_response(),
    }
}

/// A refused form's screen shown again (422) with what was typed and the
/// errors, or the error that kept the screen from being built.
pub(crate) fn refused<T: Template>(page: Result<T, WebError>) -> Response {
    answered(StatusCode::UNPROCESSABLE_ENTITY, page)
}

/// What a screen was told it just did (`?done=`), after a form's redirect.
#[derive(serde::Deserialize, Default)]
pub struct DoneQuery {
    #[serde(default)]
    pub done: Option<String>,
}
