//! `/api/v1/navigations` and their items (`/api/v1/nav-items/{id}`).

use super::{ListResponse, Paging};
use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use quire_core::access::Permission;
use quire_core::input::{NavItemPatch, NavigationPatch, NewNavItem, NewNavigation};
use quire_core::model::{Archive, EntityKind, NavItem, Navigation};
use serde::Deserialize;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/navigations", get(list).post(create))
        .route("/api/v1/navigations/{key}", get(read).patch(update).delete(archive))
        .route("/api/v1/navigations/{key}/items", get(list_items).post(create_item))
        .route("/api/v1/nav-items/{id}", get(read_item).patch(update_item).delete(archive_item))
}

/// Lists navigations.
#[utoipa::path(get, path = "/api/v1/navigations", operation_id = "listNavigations", tag = "navigation", params(Paging), security(("bearer" = [])),
    responses((status = 200, description = "One page of navigations", body = ListResponse<Navigation>)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(paging): ApiQuery<Paging>,
) -> ApiResult<Json<ListResponse<Navigation>>> {
    caller.authorize(Permission::Read)?;
    Ok(Json(state.store().navigations(&caller.scope, paging.limit()?, paging.cursor()).await?.into()))
}

/// Creates a navigation (editors and admins).
#[utoipa::path(post, path = "/api/v1/navigations", operation_id = "createNavigation", tag = "navigation", request_body = NewNavigation, security(("bearer" = [])),
    responses((status = 201, description = "The created navigation", body = Navigation), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(input): ApiJson<NewNavigation>,
) -> ApiResult<(StatusCode, Json<Navigation>)> {
    caller.authorize(Permission::Write(EntityKind::Navigation))?;
    Ok((StatusCode::CREATED, Json(state.store().create_navigation(&caller.ctx(), &caller.scope, input).await?)))
}

/// Reads a navigation by key or id.
#[utoipa::path(get, path = "/api/v1/navigations/{key}", operation_id = "getNavigation", tag = "navigation", params(("key" = String, Path, description = "Navigation key or id")),
    security(("bearer" = [])), responses((status = 200, description = "The navigation", body = Navigation), (status = 404, body = ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(key): ApiPath<String>,
) -> ApiResult<Json<Navigation>> {
    caller.authorize(Permission::Read)?;
    Ok(Json(state.store().navigation(&caller.scope, &key).await?))
}

/// Changes a navigation.
#[utoipa::path(patch, path = "/api/v1/navigations/{key}", operation_id = "updateNavigation", tag = "navigation", params(("key" = String, Path, description = "Navigation key or id")),
    request_body = NavigationPatch, security(("bearer" = [])),
    responses((status = 200, description = "The changed navigation", body = Navigation), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(key): ApiPath<String>,
    ApiJson(patch): ApiJson<NavigationPatch>,
) -> ApiResult<Json<Navigation>> {
    caller.authorize(Permission::Write(EntityKind::Navigation))?;
    Ok(Json(state.store().update_navigation(&caller.ctx(), &caller.scope, &key, patch).await?))
}

/// Archives a navigation with its items.
#[utoipa::path(delete, path = "/api/v1/navigations/{key}", operation_id = "archiveNavigation", tag = "navigation", params(("key" = String, Path, description = "Navigation key or id")),
    security(("bearer" = [])), responses((status = 200, description = "The archive holding the navigation and its items", body = Archive), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn archive(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(key): ApiPath<String>,
) -> ApiResult<Json<Archive>> {
    caller.authorize(Permission::Delete(EntityKind::Navigation))?;
    let id = state.store().navigation(&caller.scope, &key).await?.id;
    let mut archives = state.store().archive(&caller.ctx(), &caller.scope, EntityKind::Navigation, &[id]).await?;
    Ok(Json(archives.remove(0)))
}

/// Filters of the item list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ItemQuery {
    /// Only children of this item.
    pub parent_id: Option<String>,
    /// Items per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// Lists a navigation's items (flat, in order; parentId tells the nesting).
#[utoipa::path(get, path = "/api/v1/navigations/{key}/items", operation_id = "listNavItems", tag = "navigation", params(("key" = String, Path, description = "Navigation key or id"), ItemQuery),
    security(("bearer" = [])), responses((status = 200, description = "One page of the navigation's items", body = ListResponse<NavItem>), (status = 404, body = ErrorBody)))]
pub async fn list_items(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(key): ApiPath<String>,
    ApiQuery(q): ApiQuery<ItemQuery>,
) -> ApiResult<Json<ListResponse<NavItem>>> {
    caller.authorize(Permission::Read)?;
    let paging = Paging { limit: q.limit, cursor: q.cursor };
    Ok(Json(
        state
            .store()
            .nav_items(&caller.scope, &key, q.parent_id.as_deref(), paging.limit()?, paging.cursor())
            .await?
            .into(),
    ))
}

/// Adds an item; its target (page, entry or image) must exist.
#[utoipa::path(post, path = "/api/v1/navigations/{key}/items", operation_id = "createNavItem", tag = "navigation", params(("key" = String, Path, description = "Navigation key or id")),
    request_body = NewNavItem, security(("bearer" = [])),
    responses((status = 201, description = "The created item", body = NavItem), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create_item(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(key): ApiPath<String>,
    ApiJson(input): ApiJson<NewNavItem>,
) -> ApiResult<(StatusCode, Json<NavItem>)> {
    caller.authorize(Permission::Write(EntityKind::NavItem))?;
    Ok((StatusCode::CREATED, Json(state.store().create_nav_item(&caller.ctx(), &caller.scope, &key, input).await?)))
}

/// Reads a nav item.
#[utoipa::path(get, path = "/api/v1/nav-items/{id}", operation_id = "getNavItem", tag = "navigation", params(("id" = String, Path, description = "Nav item id")),
    security(("bearer" = [])), responses((status = 200, description = "The item", body = NavItem), (status = 404, body = ErrorBody)))]
pub async fn read_item(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<NavItem>> {
    caller.authorize(Permission::Read)?;
    Ok(Json(state.store().nav_item(&caller.scope, &id).await?))
}

/// Changes a nav item.
#[utoipa::path(patch, path = "/api/v1/nav-items/{id}", operation_id = "updateNavItem", tag = "navigation", params(("id" = String, Path, description = "Nav item id")),
    request_body = NavItemPatch, security(("bearer" = [])),
    responses((status = 200, description = "The changed item", body = NavItem), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update_item(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(patch): ApiJson<NavItemPatch>,
) -> ApiResult<Json<NavItem>> {
    caller.authorize(Permission::Write(EntityKind::NavItem))?;
    Ok(Json(state.store().update_nav_item(&caller.ctx(), &caller.scope, &id, patch).await?))
}

/// Archives a nav item with its children.
#[utoipa::path(delete, path = "/api/v1/nav-items/{id}", operation_id = "archiveNavItem", tag = "navigation", params(("id" = String, Path, description = "Nav item id")),
    security(("bearer" = [])), responses((status = 200, description = "The archive holding the item and its children", body = Archive), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn archive_item(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Archive>> {
    caller.authorize(Permission::Delete(EntityKind::NavItem))?;
    let mut archives = state.store().archive(&caller.ctx(), &caller.scope, EntityKind::NavItem, &[id]).await?;
    Ok(Json(archives.remove(0)))
}
