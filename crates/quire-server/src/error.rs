//! The one error shape of the HTTP API: `{ error, code, field?, details? }`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use quire_core::FieldError;
use quire_store::StoreError;
use serde::Serialize;

/// An error answered to an HTTP client.
#[derive(Debug)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Machine-readable code.
    pub code: &'static str,
    /// What went wrong, in words.
    pub message: String,
    /// The field at fault.
    pub field: Option<String>,
    /// Every broken rule, when there are several.
    pub details: Vec<FieldError>,
}

/// The JSON body of every error.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// What went wrong, in words.
    pub error: String,
    /// BAD_REQUEST, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, CONFLICT, VALIDATION,
    /// APPROVAL_REQUIRED, LIMIT, UPSTREAM or INTERNAL.
    pub code: &'static str,
    /// The field at fault, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Every broken rule, when more than one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<FieldError>,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into(), field: None, details: Vec::new() }
    }
    /// 400: the request could not be understood.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "BAD_REQUEST", message)
    }
    /// 400 naming a field.
    pub fn bad_field(field: impl Into<String>, message: impl Into<String>) -> Self {
        let field = field.into();
        let message = message.into();
        Self { field: Some(field.clone()), ..Self::bad_request(format!("{field}: {message}")) }
    }
    /// 401: no valid credentials.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", message)
    }
    /// 403: valid credentials that may not do this.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "FORBIDDEN", message)
    }
    /// 404.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "NOT_FOUND", message)
    }
    /// 500, with details kept in the log.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        tracing::error!(error = %message, "internal error");
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", "internal error; see the server log")
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { .. } => ApiError::not_found(e.to_string()),
            StoreError::Validation(errors) => {
                let first = errors.first().clone();
                // A cursor is not content: a bad one is a malformed request.
                let status =
                    if first.field == "cursor" { StatusCode::BAD_REQUEST } else { StatusCode::UNPROCESSABLE_ENTITY };
                ApiError {
                    status,
                    code: if status == StatusCode::BAD_REQUEST { "BAD_REQUEST" } else { "VALIDATION" },
                    message: errors.to_string(),
                    field: Some(first.field),
                    details: if errors.0.len() > 1 { errors.0 } else { Vec::new() },
                }
            }
            StoreError::Conflict { message, field } => {
                ApiError { field, ..ApiError::new(StatusCode::CONFLICT, "CONFLICT", message) }
            }
            other => ApiError::internal(other),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody { error: self.message, code: self.code, field: self.field, details: self.details };
        let mut response = (self.status, Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(axum::http::header::WWW_AUTHENTICATE, axum::http::HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// Result of handlers.
pub type ApiResult<T> = Result<T, ApiError>;
