//! `/api/v1/pages`: the page tree.

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
use quire_core::input::{NewPage, PagePatch};
use quire_core::model::{Archive, EntityKind, Page, PublishStatus};
use quire_store::PageFilter;
use serde::Deserialize;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/pages", get(list).post(create))
        .route("/api/v1/pages/{id}", get(read).patch(update).delete(archive))
}

/// Filters of the page list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Only children of this page; `root` for root pages only.
    pub parent_id: Option<String>,
    /// Only pages with this status.
    pub status: Option<PublishStatus>,
    /// Items per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// Lists pages in tree order (sortOrder, then creation).
#[utoipa::path(get, path = "/api/v1/pages", operation_id = "listPages", tag = "pages", params(PageQuery), security(("bearer" = [])),
    responses((status = 200, description = "One page of pages in tree order", body = ListResponse<Page>)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> ApiResult<Json<ListResponse<Page>>> {
    caller.authorize(Permission::Read)?;
    let paging = Paging { limit: q.limit, cursor: q.cursor };
    let filter = PageFilter {
        root_only: q.parent_id.as_deref() == Some("root"),
        parent_id: q.parent_id.filter(|p| p != "root"),
        status: q.status,
    };
    let listing = state.store().pages(&caller.scope, &filter, paging.limit()?, paging.cursor()).await?;
    Ok(Json(listing.into()))
}

/// Creates a page (status draft unless given).
#[utoipa::path(post, path = "/api/v1/pages", operation_id = "createPage", tag = "pages", request_body = NewPage, security(("bearer" = [])),
    responses((status = 201, description = "The created page", body = Page), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(input): ApiJson<NewPage>,
) -> ApiResult<(StatusCode, Json<Page>)> {
    caller.authorize(Permission::Write(EntityKind::Page))?;
    let page = state.store().create_page(&caller.ctx(), &caller.scope, input).await?;
    Ok((StatusCode::CREATED, Json(page)))
}

/// Reads a page by id.
#[utoipa::path(get, path = "/api/v1/pages/{id}", operation_id = "getPage", tag = "pages", params(("id" = String, Path, description = "Page id")),
    security(("bearer" = [])), responses((status = 200, description = "The page", body = Page), (status = 404, body = ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Page>> {
    caller.authorize(Permission::Read)?;
    Ok(Json(state.store().page(&caller.scope, &id).await?))
}

/// Changes a page; meta merges (a key set to null is removed), parentId null moves it to the root.
#[utoipa::path(patch, path = "/api/v1/pages/{id}", operation_id = "updatePage", tag = "pages", params(("id" = String, Path, description = "Page id")),
    request_body = PagePatch, security(("bearer" = [])),
    responses((status = 200, description = "The changed page", body = Page), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(patch): ApiJson<PagePatch>,
) -> ApiResult<Json<Page>> {
    caller.authorize(Permission::Write(EntityKind::Page))?;
    Ok(Json(state.store().update_page(&caller.ctx(), &caller.scope, &id, patch).await?))
}

/// Archives a page with its sections and child pages (restorable from `/api/v1/archive`).
#[utoipa::path(delete, path = "/api/v1/pages/{id}", operation_id = "archivePage", tag = "pages", params(("id" = String, Path, description = "Page id")),
    security(("bearer" = [])), responses((status = 200, description = "The archive holding the page and what went with it", body = Archive), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn archive(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Archive>> {
    caller.authorize(Permission::Delete(EntityKind::Page))?;
    let mut archives = state.store().archive(&caller.ctx(), &caller.scope, EntityKind::Page, &[id]).await?;
    Ok(Json(archives.remove(0)))
}
