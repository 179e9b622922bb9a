//! OAuth 2.1 for remote MCP clients ([decision 0048]): the metadata a
//! client discovers (RFC 9728 for `/mcp` as a protected resource, RFC 8414
//! for this server as its authorization server), client registration
//! (RFC 7591) and the token endpoint. The authorization endpoint, where a
//! person consents, is the back-office's (`/oauth/authorize`). The rules
//! are `quire_app::oauth`'s; these handlers parse and render, in OAuth's
//! JSON (`{ error, error_description }`), not the API's error shape, as
//! OAuth clients expect. These are protocol endpoints, outside the OpenAPI
//! document, as `/mcp` is.
//!
//! [decision 0048]: ../../../../docs/decisions/0048-oauth-for-remote-mcp.md

use crate::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use quire_app::oauth::{self, Registration, TokenRequest};
use quire_store::OAuthRefusal;
use serde_json::json;

/// The OAuth routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/.well-known/oauth-protected-resource", get(protected_resource))
        .route("/.well-known/oauth-protected-resource/mcp", get(protected_resource))
        .route("/.well-known/oauth-authorization-server", get(authorization_server))
        .route("/oauth/register", post(register))
        .route("/oauth/token", post(token))
}

/// A JSON answer no cache keeps (RFC 6749 §5.1).
fn uncached(status: StatusCode, body: serde_json::Value) -> Response {
    let mut response = (status, Json(body)).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// An OAuth refusal: 400 (401 for an unknown client), `{ error, error_description }`.
fn refused(r: OAuthRefusal) -> Response {
    let status = match r.error {
        "invalid_client" => StatusCode::UNAUTHORIZED,
        "server_error" => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    uncached(status, json!({ "error": r.error, "error_description": r.description }))
}

/// `GET /.well-known/oauth-protected-resource[/mcp]`: `/mcp` as a
/// protected resource (RFC 9728).
async fn protected_resource(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let base = state.base_url(&headers);
    Json(json!({
        "resource": state.mcp_resource(&headers),
        "authorization_servers": [base],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["mcp"],
        "resource_name": "Quire MCP",
    }))
    .into_response()
}

/// `GET /.well-known/oauth-authorization-server`: this server as an
/// authorization server (RFC 8414).
async fn authorization_server(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let base = state.base_url(&headers);
    Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/oauth/authorize"),
        "token_endpoint": format!("{base}/oauth/token"),
        "registration_endpoint": format!("{base}/oauth/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": ["mcp"],
        "authorization_response_iss_parameter_supported": true,
    }))
    .into_response()
}

/// `POST /oauth/register`: a client registers itself (RFC 7591).
async fn register(State(state): State<AppState>, body: axum::body::Bytes) -> Response {
    let registration: Registration = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return refused(OAuthRefusal {
                error: "invalid_client_metadata",
                description: format!("the body is not a client's metadata: {e}"),
            });
        }
    };
    match oauth::register(state.store(), registration).await {
        Ok(client) => uncached(
            StatusCode::CREATED,
            json!({
                "client_id": client.id,
                "client_id_issued_at": client.created_at.timestamp(),
                "client_name": client.name,
                "redirect_uris": client.redirect_uris,
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            }),
        ),
        Err(r) => refused(r),
    }
}

/// `POST /oauth/token`: a code or a refresh token exchanged for tokens.
async fn token(
    State(state): State<AppState>,
    form: Result<Form<TokenRequest>, axum::extract::rejection::FormRejection>,
) -> Response {
    let Ok(Form(request)) = form else {
        return refused(OAuthRefusal {
            error: "invalid_request",
            description: "the body must be application/x-www-form-urlencoded".into(),
        });
    };
    let answer = oauth::token(state.store(), request).await;
    // A code or refresh token used twice revokes its grant: forget the
    // tokens this process holds, so its access tokens stop at once.
    if answer.as_ref().is_err_and(|r| r.error == "invalid_grant") {
        state.forget_tokens();
    }
    match answer {
        Ok(tokens) => uncached(
            StatusCode::OK,
            json!({
                "access_token": tokens.access_token,
                "token_type": "Bearer",
                "expires_in": tokens.expires_in,
                "refresh_token": tokens.refresh_token,
                "scope": "mcp",
            }),
        ),
        Err(r) => refused(r),
    }
}
