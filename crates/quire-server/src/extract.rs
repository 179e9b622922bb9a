//! Extractors that answer bad input with our error shape and name the field.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, OptionalFromRequest, Query, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

/// A JSON body; a syntax error, a wrong type or an unknown key is a 400 that
/// names the path of the offending value.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = body_bytes(req, state).await?;
        if bytes.is_empty() {
            return Err(ApiError::bad_request("the body is empty; send a JSON object"));
        }
        parse(&bytes).map(ApiJson)
    }
}

/// `Option<ApiJson<T>>`: a body that may be left out. An empty (or blank)
/// body is `None`; anything else must parse as with [`ApiJson`].
impl<S: Send + Sync, T: DeserializeOwned> OptionalFromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, Self::Rejection> {
        let bytes = body_bytes(req, state).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        parse(&bytes).map(|v| Some(ApiJson(v)))
    }
}

async fn body_bytes<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, state).await.map_err(|e| ApiError::bad_request(format!("cannot read the body: {e}")))
}

fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    match serde_path_to_error::deserialize(de) {
        Ok(value) => Ok(value),
        Err(err) => {
            let path = err.path().to_string();
            let inner = err.into_inner();
            if inner.is_syntax() || inner.is_eof() {
                Err(ApiError::bad_request(format!("the body is not valid JSON: {inner}")))
            } else if path == "." || path.is_empty() {
                Err(ApiError::bad_request(clean(&inner.to_string())))
            } else {
                Err(ApiError::bad_field(path, clean(&inner.to_string())))
            }
        }
    }
}

/// serde's messages end with " at line 1 column 12"; the field path says more.
fn clean(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// Query parameters; a bad one is a 400 that says which.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(v)| ApiQuery(v))
            .map_err(|e| ApiError::bad_request(e.body_text()))
    }
}
