//! What a back-office request answers when it cannot do what was asked:
//! an HTML page in the screen's words (never the API's JSON), or a
//! redirect to the sign-in form.

use askama::Template;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::{AppError, Failure};
use quire_server::error::ApiError;

/// Why a back-office request failed.
#[derive(Debug)]
pub enum WebError {
    /// Not signed in: go to the sign-in form, then back to `next`.
    SignIn {
        /// Where to come back to.
        next: String,
    },
    /// The person may not do this.
    Forbidden(String),
    /// Nothing is there.
    NotFound(String),
    /// The form is larger than the back-office reads.
    TooLarge,
    /// Too many attempts (sign-in throttling).
    TooMany(String),
    /// Anything else the store or server refused, with its status.
    Status(StatusCode, String),
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    status: u16,
    title: &'a str,
    message: &'a str,
}

impl WebError {
    /// A list the use cases would not read: its cursor or filter is the
    /// request's fault (400), whatever they called it; a refusal stays one.
    pub fn listing(e: AppError) -> Self {
        match e.failure {
            Failure::Forbidden => e.into(),
            _ => WebError::Status(StatusCode::BAD_REQUEST, e.message),
        }
    }

    /// A failure answered with `status`: a refusal or nothing there by
    /// their own names, anything else with its status.
    fn with_status(status: StatusCode, message: String) -> Self {
        match status {
            StatusCode::FORBIDDEN => WebError::Forbidden(message),
            StatusCode::NOT_FOUND => WebError::NotFound(message),
            _ => WebError::Status(status, message),
        }
    }
}

/// The status and the words a use case's refusal is answered with (the
/// status REST gives the same refusal), for a screen that shows it beside
/// its form; a failure inside is logged and told in general words.
pub fn refusal(e: &AppError) -> (StatusCode, String) {
    let status = match e.failure {
        Failure::Invalid => StatusCode::UNPROCESSABLE_ENTITY,
        Failure::Malformed => StatusCode::BAD_REQUEST,
        Failure::NotFound => StatusCode::NOT_FOUND,
        Failure::Forbidden => StatusCode::FORBIDDEN,
        Failure::Conflict | Failure::ApprovalRequired => StatusCode::CONFLICT,
        Failure::Limited => StatusCode::TOO_MANY_REQUESTS,
        Failure::Internal => {
            tracing::error!(error = %e.message, "internal error");
            return (StatusCode::INTERNAL_SERVER_ERROR, "internal error; see the server log".into());
        }
    };
    (status, e.message.clone())
}

impl From<AppError> for WebError {
    fn from(e: AppError) -> Self {
        let (status, message) = refusal(&e);
        WebError::with_status(status, message)
    }
}

impl From<ApiError> for WebError {
    fn from(e: ApiError) -> Self {
        WebError::with_status(e.status, e.message)
    }
}

impl From<askama::Error> for WebError {
    fn from(e: askama::Error) -> Self {
        tracing::error!(error = %e, "a template failed to render");
        WebError::Status(StatusCode::INTERNAL_SERVER_ERROR, "the page could not be rendered; see the server log".into())
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let (status, title, message) = match self {
            WebError::SignIn { next } => {
                let target = if next.starts_with('/') && !next.starts_with("//") && next != "/" {
                    format!("/sign-in?next={}", urlencode(&next))
                } else {
                    "/sign-in".to_string()
                };
                return Redirect::to(&target).into_response();
            }
            WebError::Forbidden(m) => (StatusCode::FORBIDDEN, "Not allowed", m),
            WebError::NotFound(m) => (StatusCode::NOT_FOUND, "Not found", m),
            WebError::TooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "Too large", "the form is larger than 1 MiB".into()),
            WebError::TooMany(m) => (StatusCode::TOO_MANY_REQUESTS, "Too many attempts", m),
            WebError::Status(s, m) => (s, "Something went wrong", m),
        };
        let page = ErrorPage { status: status.as_u16(), title, message: &message };
        match page.render() {
            Ok(html) => (status, Html(html)).into_response(),
            Err(_) => (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], message).into_response(),
        }
    }
}

/// Percent-encodes a query value.
pub fn urlencode(value: &str) -> String {
    serde_urlencoded::to_string([("", value)]).map(|s| s.trim_start_matches('=').to_string()).unwrap_or_default()
}
