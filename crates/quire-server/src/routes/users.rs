//! `/api/v1/users`: the people of the caller's site, for its admins —
//! list, invite (a one-time sign-in link answered once), read, change
//! group, environments or whether the account is enabled, take the site
//! from someone who works on others, and send an invitation again. The
//! rules are `quire_app::users`'.

use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath};
use crate::routes::ListResponse;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use quire_app::users::{self, Change, Invitation};
use quire_core::access::Group;
use quire_store::UserInfo;
use serde::{Deserialize, Deserializer, Serialize};

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/users", get(list).post(invite))
        .route("/api/v1/users/{id}", get(read).patch(update).delete(remove))
        .route("/api/v1/users/{id}/sign-in-link", post(link))
}

/// The people of the caller's site, disabled ones too, oldest first.
#[utoipa::path(get, path = "/api/v1/users", operation_id = "listUsers", tag = "users", security(("bearer" = [])),
    responses((status = 200, description = "The site's people (never a password)", body = ListResponse<UserInfo>)))]
pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<ListResponse<UserInfo>>> {
    let items = users::list(state.store(), &caller.acting()).await?;
    Ok(Json(ListResponse { count: items.len(), items, next_cursor: None }))
}

/// One person of the caller's site.
#[utoipa::path(get, path = "/api/v1/users/{id}", operation_id = "getUser", tag = "users", params(("id" = String, Path, description = "User id or email")),
    security(("bearer" = [])), responses((status = 200, description = "The person", body = UserInfo), (status = 404, body = ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<UserInfo>> {
    Ok(Json(users::person(state.store(), &caller.acting(), &id).await?))
}

/// Someone to invite to the caller's site.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InviteUser {
    /// Their email address.
    #[schema(min_length = 3, max_length = 254)]
    pub email: String,
    /// The name others see (default: the email's local part).
    #[schema(value_type = Option<quire_core::text::Line<120>>)]
    pub name: Option<String>,
    /// admin, editor, author or viewer.
    pub group: Group,
    /// The site's environments they may use (default: every one the caller may).
    #[schema(min_items = 1)]
    pub environments: Option<Vec<String>>,
}

/// An invitation made.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Invited {
    /// The person.
    pub user: UserInfo,
    /// Whether they had an account already (on another site): they keep it
    /// and their password, with this site added, and get no link.
    pub existing: bool,
    /// A one-time sign-in link (24 hours) that lets them set a password;
    /// not stored, never shown again.
    pub sign_in_link: Option<String>,
}

/// A one-time sign-in link.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignInLink {
    /// The link (one use, 24 hours); not stored, never shown again.
    pub sign_in_link: String,
}

fn link_of(state: &AppState, headers: &HeaderMap, secret: &str) -> String {
    format!("{}/sign-in/link/{secret}", state.base_url(headers))
}

/// Invites someone to the caller's site: a new person gets an account and
/// a one-time sign-in link to pass on; someone with an account on another
/// site keeps it, with this site added.
#[utoipa::path(post, path = "/api/v1/users", operation_id = "inviteUser", tag = "users", request_body = InviteUser, security(("bearer" = [])),
    responses((status = 201, description = "The person, and their sign-in link shown this once", body = Invited), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub async fn invite(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    ApiJson(body): ApiJson<InviteUser>,
) -> ApiResult<(StatusCode, Json<Invited>)> {
    let invitation =
        Invitation { email: body.email, name: body.name, group: body.group, environments: body.environments };
    let made = users::invite(state.store(), &caller.acting(), invitation).await?;
    let sign_in_link = made.link.map(|secret| link_of(&state, &headers, &secret));
    Ok((StatusCode::CREATED, Json(Invited { user: made.user, existing: made.existing, sign_in_link })))
}

/// `null` read as "every environment", told apart from an absent field.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<Vec<String>>>, D::Error> {
    Option::<Vec<String>>::deserialize(d).map(Some)
}

/// What to change about a person; absent fields stay.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateUser {
    /// Their group (one on every site they work on).
    pub group: Option<Group>,
    /// The site's environments they may use; `null`: every one.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<String>>, nullable, min_items = 1)]
    pub environments: Option<Option<Vec<String>>>,
    /// `true` disables the account (their sessions end, the tokens they
    /// made are revoked), `false` enables it again.
    pub disabled: Option<bool>,
}

/// Changes a person of the caller's site.
#[utoipa::path(patch, path = "/api/v1/users/{id}", operation_id = "updateUser", tag = "users", params(("id" = String, Path, description = "User id or email")),
    request_body = UpdateUser, security(("bearer" = [])),
    responses((status = 200, description = "The person as changed", body = UserInfo), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<UpdateUser>,
) -> ApiResult<Json<UserInfo>> {
    let change = Change { group: body.group, environments: body.environments, disabled: body.disabled };
    let user = users::change(state.store(), &caller.acting(), &id, change).await?;
    if body.disabled == Some(true) {
        state.forget_tokens();
    }
    Ok(Json(user))
}

/// Takes the caller's site from someone who works on others too: their
/// sessions here end and the tokens they made for it are revoked. Their
/// account and everything they did stay.
#[utoipa::path(delete, path = "/api/v1/users/{id}", operation_id = "removeUser", tag = "users", params(("id" = String, Path, description = "User id or email")),
    security(("bearer" = [])), responses((status = 200, description = "The person, without this site", body = UserInfo), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<UserInfo>> {
    let user = users::remove(state.store(), &caller.acting(), &id).await?;
    state.forget_tokens();
    Ok(Json(user))
}

/// A new one-time sign-in link for an invited person who has not set a
/// password yet: the invitation sent again.
#[utoipa::path(post, path = "/api/v1/users/{id}/sign-in-link", operation_id = "createSignInLink", tag = "users",
    params(("id" = String, Path, description = "User id or email")), security(("bearer" = [])),
    responses((status = 201, description = "The link, shown this once", body = SignInLink), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn link(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<(StatusCode, Json<SignInLink>)> {
    let secret = users::sign_in_link(state.store(), &caller.acting(), &id).await?;
    Ok((StatusCode::CREATED, Json(SignInLink { sign_in_link: link_of(&state, &headers, &secret) })))
}
