//! Extractors that answer bad input with our error shape and name the field.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::path::ErrorKind;
use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequest, FromRequestParts, OptionalFromRequest, Path, Query, RawPathParams, Request};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use quire_core::json::{self, JsonError};
use serde::de::DeserializeOwned;

/// A JSON body. It must be sent as `application/json` (or a `+json` type;
/// anything else is a 415), be one JSON object with nothing after it and no
/// key twice in an object; a syntax error, a wrong type or an unknown key is
/// a 400 that names the path of the offending value. A whole-number float
/// (`375.0`) is taken where an integer is expected.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let (content_type, bytes) = body_bytes(req, state).await?;
        if bytes.is_empty() {
            return Err(ApiError::bad_request("the body is empty; send a JSON object"));
        }
        parse(content_type.as_deref(), &bytes).map(ApiJson)
    }
}

/// `Option<ApiJson<T>>`: a body that may be left out. An empty (or blank)
/// body, or `null`, is `None`; anything else must parse as with [`ApiJson`].
impl<S: Send + Sync, T: DeserializeOwned> OptionalFromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, Self::Rejection> {
        let (content_type, bytes) = body_bytes(req, state).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        // `null` says "no body" in JSON's own words.
        if json::parse_strict(&bytes).is_ok_and(|v| v.is_null()) {
            check_json_type(content_type.as_deref())?;
            return Ok(None);
        }
        parse(content_type.as_deref(), &bytes).map(|v| Some(ApiJson(v)))
    }
}

/// The request's Content-Type and body.
pub(crate) async fn body_bytes<S: Send + Sync>(req: Request, state: &S) -> Result<(Option<String>, Bytes), ApiError> {
    let content_type = req.headers().get(CONTENT_TYPE).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let bytes = Bytes::from_request(req, state)
        .await
        // A body over the size limit is a 413; the rejection knows its status.
        .map_err(|e| ApiError::with_status(e.status(), format!("cannot read the body: {}", e.body_text())))?;
    Ok((content_type, bytes))
}

/// Parses a non-empty body declared as `content_type`.
fn parse<T: DeserializeOwned>(content_type: Option<&str>, bytes: &[u8]) -> Result<T, ApiError> {
    check_json_type(content_type)?;
    let value = json::parse_strict(bytes).map_err(json_error)?;
    // serde reads a struct from an array too (`[null, null]` as its
    // fields in order); every body of this API is an object.
    if !value.is_object() {
        return Err(ApiError::bad_request("the body must be a JSON object"));
    }
    json::from_value(value).map_err(|err| {
        let path = err.path().to_string();
        let message = in_our_words(&err.into_inner().to_string());
        if path == "." || path.is_empty() { ApiError::bad_request(message) } else { ApiError::bad_field(path, message) }
    })
}

/// Why a body is not JSON this API reads, as a 400 (`/mcp` says it too).
pub(crate) fn json_error(e: JsonError) -> ApiError {
    match e {
        JsonError::Syntax(m) => ApiError::bad_request(format!("the body is not valid JSON: {m}")),
        JsonError::DuplicateKey { path } => ApiError::bad_field(path, "the key appears more than once"),
    }
}

/// Refuses a body that is not declared as JSON with a 415.
pub(crate) fn check_json_type(content_type: Option<&str>) -> Result<(), ApiError> {
    let refuse = |what: String| {
        ApiError::with_status(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("{what}; send the body as Content-Type: application/json"),
        )
    };
    let Some(content_type) = content_type else {
        return Err(refuse("the request has a body but no Content-Type".into()));
    };
    let essence = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let json =
        essence == "application/json" || essence.strip_prefix("application/").is_some_and(|sub| sub.ends_with("+json"));
    if json { Ok(()) } else { Err(refuse(format!("Content-Type \"{content_type}\" is not JSON"))) }
}

/// Query parameters; a bad one is a 400 that says which.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(v)| ApiQuery(v))
            .map_err(|e| query_error(&e.body_text()))
    }
}

/// axum's "Failed to deserialize query string: limit: invalid digit found
/// in string" as a 400 naming `limit`, with serde's enum message in our words.
fn query_error(text: &str) -> ApiError {
    let rest = text.strip_prefix("Failed to deserialize query string: ").unwrap_or(text);
    let Some((field, message)) = rest.split_once(": ") else {
        return ApiError::bad_request(rest.to_string());
    };
    if field.contains(' ') {
        return ApiError::bad_request(rest.to_string());
    }
    ApiError::bad_field(field, in_our_words(message))
}

/// serde's "unknown variant `live`, expected one of `draft`, `published`"
/// as `"live" is not one of draft, published`; other messages as they are.
fn in_our_words(message: &str) -> String {
    let ticks: Vec<&str> = message.split('`').skip(1).step_by(2).collect();
    match message.strip_prefix("unknown variant ") {
        Some(_) if !ticks.is_empty() => format!("\"{}\" is not one of {}", ticks[0], ticks[1..].join(", ")),
        _ => message.to_string(),
    }
}

/// Path parameters; a value of the wrong type is a 400 that names the
/// parameter (`id: "abc" is not an integer`).
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(value)) => Ok(ApiPath(value)),
            Err(rejection) => {
                let names: Vec<String> = match RawPathParams::from_request_parts(parts, state).await {
                    Ok(params) => params.iter().map(|(name, _)| name.to_string()).collect(),
                    Err(_) => Vec::new(),
                };
                Err(path_error(rejection, &names))
            }
        }
    }
}

/// A path rejection as our error, naming the parameter; `names` are the
/// route's parameters in order, for the errors that only give an index.
fn path_error(rejection: PathRejection, names: &[String]) -> ApiError {
    let PathRejection::FailedToDeserializePathParams(failed) = rejection else {
        // Missing parameters mean a handler mounted on the wrong route.
        return ApiError::internal(rejection.body_text());
    };
    let name_at = |i: usize| names.get(i).cloned().unwrap_or_else(|| "path".to_string());
    match failed.into_kind() {
        ErrorKind::ParseErrorAtKey { key, value, expected_type } => {
            ApiError::bad_field(key, format!("\"{value}\" is not {}", describe(expected_type)))
        }
        ErrorKind::ParseErrorAtIndex { index, value, expected_type } => {
            ApiError::bad_field(name_at(index), format!("\"{value}\" is not {}", describe(expected_type)))
        }
        ErrorKind::ParseError { value, expected_type } => {
            ApiError::bad_field(name_at(0), format!("\"{value}\" is not {}", describe(expected_type)))
        }
        ErrorKind::InvalidUtf8InPathParam { key } => ApiError::bad_field(key, "is not valid UTF-8"),
        ErrorKind::DeserializeError { key, value, message } => {
            ApiError::bad_field(key, format!("\"{value}\": {message}"))
        }
        ErrorKind::Message(message) => ApiError::bad_request(format!("bad path: {message}")),
        other => ApiError::internal(other),
    }
}

/// A Rust type name in words.
fn describe(expected_type: &str) -> String {
    let integer = ["i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize"];
    if integer.contains(&expected_type) {
        "an integer".into()
    } else if expected_type == "bool" {
        "true or false".into()
    } else {
        format!("a valid {expected_type}")
    }
}
