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
    /// Seconds until a refused request may be tried again (429): sent as
    /// `Retry-After`.
    pub retry_after: Option<u64>,
}

/// The JSON body of every error.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// What went wrong, in words.
    pub error: String,
    /// BAD_REQUEST, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, METHOD_NOT_ALLOWED,
    /// NOT_ACCEPTABLE, REQUEST_TIMEOUT, CONFLICT, PAYLOAD_TOO_LARGE,
    /// UNSUPPORTED_MEDIA_TYPE, VALIDATION, APPROVAL_REQUIRED, LIMIT, UPSTREAM
    /// or INTERNAL.
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
        Self { status, code, message: message.into(), field: None, details: Vec::new(), retry_after: None }
    }
    /// 429: a limit of fair use was reached; try again in `seconds`.
    pub fn too_many(message: impl Into<String>, seconds: u64) -> Self {
        Self { retry_after: Some(seconds.max(1)), ..Self::new(StatusCode::TOO_MANY_REQUESTS, "LIMIT", message) }
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
    /// An error of any status, with the code that status stands for.
    pub fn with_status(status: StatusCode, message: impl Into<String>) -> Self {
        Self::new(status, code_of(status), message)
    }
    /// 500, with details kept in the log.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        tracing::error!(error = %message, "internal error");
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", "internal error; see the server log")
    }
}

/// The machine-readable code of an HTTP status.
pub fn code_of(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "BAD_REQUEST",
        401 => "UNAUTHORIZED",
        403 => "FORBIDDEN",
        404 => "NOT_FOUND",
        405 => "METHOD_NOT_ALLOWED",
        406 => "NOT_ACCEPTABLE",
        408 => "REQUEST_TIMEOUT",
        409 => "CONFLICT",
        413 => "PAYLOAD_TOO_LARGE",
        415 => "UNSUPPORTED_MEDIA_TYPE",
        422 => "VALIDATION",
        428 => "APPROVAL_REQUIRED",
        429 => "LIMIT",
        502 => "UPSTREAM",
        500..=599 => "INTERNAL",
        _ => "BAD_REQUEST",
    }
}

/// A store error answers as the use cases map it (see [`quire_app::AppError`]).
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        quire_app::AppError::from(e).into()
    }
}

impl From<quire_app::AppError> for ApiError {
    fn from(e: quire_app::AppError) -> Self {
        use quire_app::Failure;
        let (status, code) = match e.failure {
            Failure::Invalid => (StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION"),
            Failure::Malformed => (StatusCode::BAD_REQUEST, "BAD_REQUEST"),
            Failure::NotFound => (StatusCode::NOT_FOUND, "NOT_FOUND"),
            Failure::Forbidden => (StatusCode::FORBIDDEN, "FORBIDDEN"),
            Failure::Conflict => (StatusCode::CONFLICT, "CONFLICT"),
            Failure::ApprovalRequired => (StatusCode::CONFLICT, "APPROVAL_REQUIRED"),
            Failure::Limited => return ApiError::too_many(e.message, e.retry_after.unwrap_or(1)),
            Failure::Internal => return ApiError::internal(e.message),
        };
        ApiError { field: e.field, details: e.details, ..ApiError::new(status, code, e.message) }
    }
}

impl From<quire_app::uploads::UploadError> for ApiError {
    fn from(e: quire_app::uploads::UploadError) -> Self {
        use quire_app::uploads::UploadError;
        match e {
            UploadError::TooLarge(message) => ApiError::with_status(StatusCode::PAYLOAD_TOO_LARGE, message),
            UploadError::Refused(e) => e.into(),
        }
    }
}

/// The HTTP status of a tool's failure, by its code.
pub fn tool_status(code: quire_tools::ErrorCode) -> StatusCode {
    use quire_tools::ErrorCode;
    match code {
        ErrorCode::Validation => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::Conflict | ErrorCode::Rejected | ErrorCode::Interrupted => StatusCode::CONFLICT,
        ErrorCode::Forbidden => StatusCode::FORBIDDEN,
        ErrorCode::ApprovalRequired | ErrorCode::ApprovalExpired => StatusCode::PRECONDITION_REQUIRED,
        ErrorCode::Limit => StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::Upstream => StatusCode::BAD_GATEWAY,
        ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// A tool error as an HTTP error with the matching status and the tool's
/// own errorCode (`APPROVAL_REQUIRED`, `INTERNAL`, …), so REST names the
/// same failure the tool reported.
pub fn tool_error(e: quire_tools::ToolError) -> ApiError {
    let status = tool_status(e.code);
    if status == StatusCode::INTERNAL_SERVER_ERROR {
        return ApiError::internal(e.message);
    }
    ApiError { code: e.code.as_str(), ..ApiError::new(status, "", e.message) }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status;
        let retry_after = self.retry_after;
        let body = ErrorBody { error: self.message, code: self.code, field: self.field, details: self.details };
        let mut response = with_challenge((status, Json(body)).into_response());
        if let Some(seconds) = retry_after {
            response.headers_mut().insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from(seconds));
        }
        response
    }
}

/// A 401 names the scheme to authenticate with.
fn with_challenge(mut response: Response) -> Response {
    if response.status() == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(axum::http::header::WWW_AUTHENTICATE, axum::http::HeaderValue::from_static("Bearer"));
    }
    response
}

/// JSON-RPC 2.0's code for a body that is not JSON (or JSON this API
/// refuses to read: too deep, trailing bytes).
pub const JSONRPC_PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0's code for JSON that is not a valid request.
pub const JSONRPC_INVALID_REQUEST: i64 = -32600;
/// JSON-RPC 2.0's implementation-defined server error: refusals of the HTTP
/// exchange itself (credentials, origin, content type, size, method).
pub const JSONRPC_SERVER_ERROR: i64 = -32000;

impl ApiError {
    /// This error as `/mcp` answers it, in its protocol's terms: a JSON-RPC
    /// 2.0 error response with no id (the request's could not be read, or
    /// it never reached the protocol), under the HTTP status REST gives the
    /// same fault, its `data` the API's one error body.
    pub fn into_jsonrpc_response(self, rpc_code: i64) -> Response {
        let (status, retry_after) = (self.status, self.retry_after);
        let message = self.message.clone();
        let data = ErrorBody { error: self.message, code: self.code, field: self.field, details: self.details };
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": { "code": rpc_code, "message": message, "data": data },
        });
        let mut response = with_challenge((status, Json(body)).into_response());
        if let Some(seconds) = retry_after {
            response.headers_mut().insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from(seconds));
        }
        response
    }
}

/// The JSON-RPC code of an `/mcp` refusal answered with `status`.
fn jsonrpc_code_of(status: StatusCode) -> i64 {
    if status == StatusCode::BAD_REQUEST { JSONRPC_INVALID_REQUEST } else { JSONRPC_SERVER_ERROR }
}

/// Result of handlers.
pub type ApiResult<T> = Result<T, ApiError>;

/// Middleware that gives every error response the one JSON shape: the
/// router's own 404 and 405 (empty bodies), the 2 MiB body limit's 413
/// (routes that take files answer their own, see
/// [`crate::multipart::with_upload_limit`]) and a caught panic's 500 (plain
/// text) are rewritten; JSON errors pass as they are, headers (`Allow`,
/// `WWW-Authenticate`, the request id) are kept.
/// On `/mcp` the shape is its protocol's: the MCP transport's plain-text
/// refusals (and the body limit's) become JSON-RPC errors carrying that
/// shape ([`ApiError::into_jsonrpc_response`]).
///
/// Under `/v1` (the OpenAI-compatible routes) every error then takes
/// OpenAI's shape instead ([`OpenAiErrorBody`]), which its clients read.
pub async fn json_errors(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let openai = req.uri().path() == "/v1" || req.uri().path().starts_with("/v1/");
    let response = one_shape(req, next).await;
    let status = response.status();
    if openai && (status.is_client_error() || status.is_server_error()) {
        return openai_shape(response).await;
    }
    response
}

/// [`json_errors`] but for `/v1`'s shape.
async fn one_shape(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    // Shared with the request, not copied: read only for an error.
    let uri = req.uri().clone();
    let method = req.method().clone();
    let response = next.run(req).await;
    let status = response.status();
    // Errors already in JSON, and the back-office's HTML error pages, pass.
    if !(status.is_client_error() || status.is_server_error())
        || is_json(response.headers())
        || is_html(response.headers())
    {
        return response;
    }
    let path = uri.path();
    let mcp = path == "/mcp" || path.starts_with("/mcp/");
    let (parts, body) = response.into_parts();
    let text = match axum::body::to_bytes(body, 16 * 1024).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_string(),
        Err(_) => String::new(),
    };
    let message = match status {
        // The MCP transport's own words say which session or method.
        StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED if mcp && !text.is_empty() => text,
        StatusCode::NOT_FOUND => format!("nothing is at {path}"),
        StatusCode::METHOD_NOT_ALLOWED => {
            let allowed = parts.headers.get(axum::http::header::ALLOW).and_then(|v| v.to_str().ok()).unwrap_or("");
            format!("{method} is not allowed on {path}; allowed: {allowed}")
        }
        StatusCode::PAYLOAD_TOO_LARGE => {
            format!("the body is larger than the limit of {} MiB", crate::BODY_LIMIT / (1024 * 1024))
        }
        // A panic's message may hold internals: it stays in the log.
        StatusCode::INTERNAL_SERVER_ERROR => "internal error; see the server log".to_string(),
        _ if !text.is_empty() => text,
        _ => status.canonical_reason().unwrap_or("error").to_lowercase(),
    };
    let error = ApiError::with_status(status, message);
    let mut answer = if mcp { error.into_jsonrpc_response(jsonrpc_code_of(status)) } else { error.into_response() };
    for (name, value) in &parts.headers {
        if name != axum::http::header::CONTENT_TYPE && name != axum::http::header::CONTENT_LENGTH {
            answer.headers_mut().insert(name.clone(), value.clone());
        }
    }
    answer
}

/// Whether a response is an HTML page (the back-office's own error pages).
fn is_html(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"))
}

/// Whether a response already carries JSON.
fn is_json(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json") || v.contains("+json"))
}

/// OpenAI's error body, which every error under `/v1` answers: what its
/// official clients read into their errors (`message`, `type`, `param`,
/// `code`).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct OpenAiErrorBody {
    /// The error.
    pub error: OpenAiError,
}

/// An error as OpenAI describes one.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct OpenAiError {
    /// What went wrong, in words.
    pub message: String,
    /// `invalid_request_error`, `authentication_error`, `permission_error`,
    /// `not_found_error`, `conflict_error`, `rate_limit_error` or `server_error`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The parameter at fault (a dotted path), when there is one.
    pub param: Option<String>,
    /// This API's code in lower case (`validation`, `conflict`, …);
    /// `invalid_api_key` for a token that is not valid and `model_not_found`
    /// for a model that names no agent the caller may use.
    pub code: Option<String>,
}

/// The OpenAI error body of an error.
pub fn openai_body(e: &ApiError) -> serde_json::Value {
    serde_json::to_value(openai_error(e.status, &e.message, e.code, e.field.clone())).unwrap_or_default()
}

fn openai_error(status: StatusCode, message: &str, code: &str, param: Option<String>) -> OpenAiErrorBody {
    let kind = match status.as_u16() {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        409 => "conflict_error",
        429 => "rate_limit_error",
        500..=599 => "server_error",
        _ => "invalid_request_error",
    };
    let code = if status == StatusCode::UNAUTHORIZED { "invalid_api_key".into() } else { code.to_lowercase() };
    OpenAiErrorBody { error: OpenAiError { message: message.to_string(), kind, param, code: Some(code) } }
}

/// An error response in the one shape, rewritten in OpenAI's (headers kept).
async fn openai_shape(response: Response) -> Response {
    let (parts, body) = response.into_parts();
    let body: serde_json::Value = match axum::body::to_bytes(body, 64 * 1024).await {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_default(),
        Err(_) => serde_json::Value::Null,
    };
    let status = parts.status;
    let message = body["error"].as_str().unwrap_or_else(|| status.canonical_reason().unwrap_or("error"));
    let code = body["code"].as_str().unwrap_or_else(|| code_of(status));
    let field = body["field"].as_str().map(str::to_string);
    let mut answer = (status, Json(openai_error(status, message, code, field))).into_response();
    for (name, value) in &parts.headers {
        if name != axum::http::header::CONTENT_TYPE && name != axum::http::header::CONTENT_LENGTH {
            answer.headers_mut().insert(name.clone(), value.clone());
        }
    }
    answer
}
