//! `/api/v1/archive`: what deletes archived, and restoring it.

use super::ListResponse;
use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use quire_core::access::Permission;
use quire_core::model::{Archive, EntityKind};
use serde::Deserialize;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/archive", get(list))
        .route("/api/v1/archive/restore", post(restore_many))
        .route("/api/v1/archive/{id}", get(read))
        .route("/api/v1/archive/{id}/restore", post(restore))
}

/// Filters of the archive list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ArchiveQuery {
    /// Only archives whose root is of this kind.
    pub entity: Option<EntityKind>,
    /// Items per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// Lists archives, newest first: what was archived, when, by whom, and what went along.
#[utoipa::path(get, path = "/api/v1/archive", operation_id = "listArchives", tag = "archive", params(ArchiveQuery), security(("bearer" = [])),
    responses((status = 200, description = "One page of archives, newest first", body = ListResponse<Archive>)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ArchiveQuery>,
) -> ApiResult<Json<ListResponse<Archive>>> {
    caller.authorize(Permission::Read)?;
    let paging = super::Paging { limit: q.limit, cursor: q.cursor };
    Ok(Json(state.store().archives(&caller.scope, q.entity, paging.limit()?, paging.cursor()).await?.into()))
}

/// Reads an archive record.
#[utoipa::path(get, path = "/api/v1/archive/{id}", operation_id = "getArchive", tag = "archive", params(("id" = String, Path, description = "Archive id")),
    security(("bearer" = [])), responses((status = 200, description = "The archive record", body = Archive), (status = 404, body = ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Archive>> {
    caller.authorize(Permission::Read)?;
    Ok(Json(state.store().archive_record(&caller.scope, &id).await?))
}

/// Restores an archive and everything it took along; a reused slug is a 409 that names it.
#[utoipa::path(post, path = "/api/v1/archive/{id}/restore", operation_id = "restoreArchive", tag = "archive", params(("id" = String, Path, description = "Archive id")),
    security(("bearer" = [])), responses((status = 200, description = "The restored archive", body = Archive), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn restore(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Archive>> {
    Ok(Json(restore_archive(&state, &caller, &id).await?))
}

/// Restores one archive and what it took along, as `caller` (REST and the
/// back-office alike); a reused slug is a conflict that names it.
pub async fn restore_archive(state: &AppState, caller: &Caller, id: &str) -> ApiResult<Archive> {
    Ok(quire_app::restore::restore_archive(state.registry(), &caller.acting(), id).await?)
}

/// Archives to restore together.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RestoreRequest {
    /// Archive ids.
    #[schema(min_items = 1)]
    pub ids: Vec<String>,
}

/// Restores several archives in one transaction: all or none.
#[utoipa::path(post, path = "/api/v1/archive/restore", operation_id = "restoreArchives", tag = "archive", request_body = RestoreRequest, security(("bearer" = [])),
    responses((status = 200, description = "The restored archives", body = ListResponse<Archive>), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn restore_many(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<RestoreRequest>,
) -> ApiResult<Json<ListResponse<Archive>>> {
    let items = quire_app::restore::restore_archives(state.registry(), &caller.acting(), &req.ids).await?;
    Ok(Json(ListResponse { count: items.len(), items, next_cursor: None }))
}
