//! `/api/v1/sites`: the instance's sites, for its administrator (a token
//! made for the instance's administrator; a site's admins are refused):
//! list, create (empty, with the demo content or as a copy of another),
//! rename, archive and
//! restore. `/api/v1/site` (`site.rs`) is the caller's own site.

use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath};
use crate::routes::ListResponse;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use quire_app::sites::{self, NewSite, Start};
use quire_core::model::Site;
use serde::Deserialize;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/sites", get(list).post(create))
        .route("/api/v1/sites/{site}", axum::routing::patch(rename).delete(archive))
        .route("/api/v1/sites/{site}/restore", post(restore))
}

/// What a new site starts with.
#[derive(Debug, Clone, Copy, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SiteStart {
    /// The starter templates and agents, and no content.
    #[default]
    Empty,
    /// The demo site's pages, posts, menus and images besides.
    Demo,
    /// A copy of the site named in `from`.
    Copy,
}

/// A site to make.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateSite {
    /// Its slug (`shop`): lowercase words joined by hyphens, unique.
    #[schema(min_length = 1, max_length = 100, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")]
    pub slug: String,
    /// Its name.
    #[schema(value_type = quire_core::text::Line<120>)]
    pub name: String,
    /// Its environments, the first the default; omitted: production and staging.
    #[serde(default)]
    pub environments: Vec<String>,
    /// What it starts with (default: empty).
    #[serde(default)]
    pub start: SiteStart,
    /// With `start: copy`, the site it is a copy of (slug or id).
    pub from: Option<String>,
}

/// A site's new name.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RenameSite {
    /// The name.
    #[schema(value_type = quire_core::text::Line<120>)]
    pub name: String,
}

/// Every site of the instance, archived ones too.
#[utoipa::path(get, path = "/api/v1/sites", operation_id = "listSites", tag = "sites", security(("bearer" = [])),
    responses((status = 200, description = "The instance's sites", body = ListResponse<Site>), (status = 403, body = ErrorBody)))]
pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<ListResponse<Site>>> {
    let items = sites::list(state.registry().services(), &caller.acting()).await?;
    Ok(Json(ListResponse { count: items.len(), items, next_cursor: None }))
}

/// Makes a site, empty or with the demo content.
#[utoipa::path(post, path = "/api/v1/sites", operation_id = "createSite", tag = "sites", request_body = CreateSite,
    security(("bearer" = [])), responses((status = 201, description = "The site", body = Site), (status = 403, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<CreateSite>,
) -> ApiResult<(StatusCode, Json<Site>)> {
    let start = match (body.start, body.from) {
        (SiteStart::Copy, from) => Start::Copy(from.unwrap_or_default()),
        (_, Some(_)) => return Err(quire_app::AppError::invalid("from", "is for start: copy").into()),
        (SiteStart::Empty, None) => Start::Empty,
        (SiteStart::Demo, None) => Start::Demo,
    };
    let new = NewSite { slug: body.slug, name: body.name, environments: body.environments, start };
    let site = sites::create(state.registry().services(), &caller.acting(), new).await?;
    Ok((StatusCode::CREATED, Json(site)))
}

/// Renames a site.
#[utoipa::path(patch, path = "/api/v1/sites/{site}", operation_id = "renameSite", tag = "sites", request_body = RenameSite,
    params(("site" = String, Path, description = "Site slug or id")), security(("bearer" = [])),
    responses((status = 200, description = "The site", body = Site), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub async fn rename(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(site): ApiPath<String>,
    ApiJson(body): ApiJson<RenameSite>,
) -> ApiResult<Json<Site>> {
    Ok(Json(sites::rename(state.registry().services(), &caller.acting(), &site, &body.name).await?))
}

/// Archives a site: its tokens stop and nothing of it is delivered; all it holds is kept.
#[utoipa::path(delete, path = "/api/v1/sites/{site}", operation_id = "archiveSite", tag = "sites",
    params(("site" = String, Path, description = "Site slug or id")), security(("bearer" = [])),
    responses((status = 200, description = "The archived site", body = Site), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
pub async fn archive(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(site): ApiPath<String>,
) -> ApiResult<Json<Site>> {
    let archived = sites::archive(state.registry().services(), &caller.acting(), &site).await?;
    // Its tokens stop here at once (other processes within a poll).
    state.forget_tokens();
    Ok(Json(archived))
}

/// Brings an archived site back, with its tokens and content.
#[utoipa::path(post, path = "/api/v1/sites/{site}/restore", operation_id = "restoreSite", tag = "sites",
    params(("site" = String, Path, description = "Site slug or id")), security(("bearer" = [])),
    responses((status = 200, description = "The site", body = Site), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
pub async fn restore(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(site): ApiPath<String>,
) -> ApiResult<Json<Site>> {
    let restored = sites::restore(state.registry().services(), &caller.acting(), &site).await?;
    state.forget_tokens();
    Ok(Json(restored))
}
