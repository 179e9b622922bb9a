//! `/api/v1/tokens`: the API tokens of the caller's site, for its admins.
//! Secrets are answered once, when a token is created; lists never carry
//! them, nor does reading one. A revoked token stops working on this
//! process at once (and is no longer found).

use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath};
use crate::routes::ListResponse;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use quire_core::access::Group;
use quire_core::model::ApprovalPolicy;
use quire_store::TokenInfo;
use serde::{Deserialize, Serialize};

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/tokens", get(list).post(create)).route("/api/v1/tokens/{id}", get(read).delete(revoke))
}

/// The site's tokens that are not revoked (expired ones included), oldest first.
#[utoipa::path(get, path = "/api/v1/tokens", operation_id = "listTokens", tag = "tokens", security(("bearer" = [])),
    responses((status = 200, description = "The site's tokens (never their secrets)", body = ListResponse<TokenInfo>)))]
pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<ListResponse<TokenInfo>>> {
    let items = quire_app::tokens::list(state.store(), &caller.acting()).await?;
    Ok(Json(ListResponse { count: items.len(), items, next_cursor: None }))
}

/// One token of the caller's site that is not revoked (never its secret).
#[utoipa::path(get, path = "/api/v1/tokens/{id}", operation_id = "getToken", tag = "tokens", params(("id" = String, Path, description = "Token id")),
    security(("bearer" = [])), responses((status = 200, description = "The token (never its secret)", body = TokenInfo), (status = 404, body = ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<TokenInfo>> {
    Ok(Json(quire_app::tokens::token(state.store(), &caller.acting(), &id).await?))
}

/// A token to create on the caller's site.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateToken {
    /// A name to recognise it by.
    #[schema(
        min_length = 1,
        pattern = "[^\\t\\n\\u000b\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
    )]
    pub name: String,
    /// admin, editor, author or viewer.
    pub group: Group,
    /// Environments it may use (default: those of the caller's token, or all).
    #[schema(min_items = 1)]
    pub environments: Option<Vec<String>>,
    /// When it stops working; must be in the future.
    pub expires_at: Option<DateTime<Utc>>,
    /// Or: days until it stops working, 1 to 36500 (100 years).
    #[schema(minimum = 1, maximum = 36500)]
    pub expires_in_days: Option<i64>,
    /// How its destructive calls are approved: user (default) or conversational.
    // Read as text and parsed by the handler, so a wrong name is a 422
    // naming the field.
    #[schema(value_type = Option<quire_core::model::AgentPolicy>)]
    pub approval_policy: Option<String>,
}

/// A new token and its secret, which is shown this once.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedToken {
    /// The token.
    #[serde(flatten)]
    pub token: TokenInfo,
    /// The secret to send as `Authorization: Bearer <secret>`; not stored, never shown again.
    pub secret: String,
}

/// Creates a token on the caller's site and answers its secret once.
#[utoipa::path(post, path = "/api/v1/tokens", operation_id = "createToken", tag = "tokens", request_body = CreateToken, security(("bearer" = [])),
    responses((status = 201, description = "The token and its secret, shown this once", body = CreatedToken), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<CreateToken>,
) -> ApiResult<(StatusCode, Json<CreatedToken>)> {
    Ok((StatusCode::CREATED, Json(create_token(&state, &caller, body).await?)))
}

/// Creates a token on the caller's site through the use case.
async fn create_token(state: &AppState, caller: &Caller, body: CreateToken) -> ApiResult<CreatedToken> {
    let request = quire_app::tokens::TokenRequest {
        name: body.name,
        group: body.group,
        environments: body.environments,
        expires_at: body.expires_at,
        expires_in_days: body.expires_in_days,
        approval_policy: body
            .approval_policy
            .map(|p| ApprovalPolicy::parse("approvalPolicy", &p))
            .transpose()
            .map_err(quire_store::StoreError::from)?,
    };
    let (token, secret) = quire_app::tokens::create_token(state.store(), &caller.acting(), request).await?;
    Ok(CreatedToken { token, secret })
}

/// Revokes a token of the caller's site; it is refused from the next
/// request on (open event streams of it end). Nothing is deleted: the token
/// keeps its record, marked revoked.
#[utoipa::path(delete, path = "/api/v1/tokens/{id}", operation_id = "revokeToken", tag = "tokens", params(("id" = String, Path, description = "Token id")),
    security(("bearer" = [])), responses((status = 200, description = "The revoked token", body = TokenInfo), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn revoke(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<TokenInfo>> {
    Ok(Json(revoke_token(&state, &caller, &id).await?))
}

/// Revokes a token of the caller's site through the use case; this
/// process forgets it at once (others at their next poll).
async fn revoke_token(state: &AppState, caller: &Caller, id: &str) -> ApiResult<TokenInfo> {
    let token = quire_app::tokens::revoke_token(state.store(), &caller.acting(), id).await?;
    state.forget_tokens();
    Ok(token)
}
