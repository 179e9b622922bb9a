//! `/api/v1/archive`: what deletes archived, and restoring it.

use super::ListResponse;
use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath};
use axum::Json;
use axum::extract::State;
use quire_core::model::{Archive, EntityKind};
use serde::Deserialize;

super::list_query! {
    /// Filters of the archive list.
    ArchiveQuery {
        /// Only archives whose root is of this kind.
        entity: Option<EntityKind>,
    }
}

super::record_handlers! {
    tag = "archive", item = "/api/v1/archive/{id}" ("id": "Archive id");

    /// Lists archives, newest first: what was archived, when, by whom, and what went along.
    list: get "/api/v1/archive" "listArchives" (q: ArchiveQuery) => archives(q.entity) -> [Archive] "One page of archives, newest first";
    /// Reads an archive record.
    read: get "getArchive" => archive_record -> Archive "The archive record";
    mount restore_many: post "/api/v1/archive/restore";
    mount restore: post "/api/v1/archive/{id}/restore";
}

/// Restores an archive and everything it took along; a reused slug is a 409 that names it.
#[utoipa::path(post, path = "/api/v1/archive/{id}/restore", operation_id = "restoreArchive", tag = "archive", params(("id" = String, Path, description = "Archive id")),
    security(("bearer" = [])), responses((status = 200, description = "The restored archive", body = Archive), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn restore(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Archive>> {
    Ok(Json(quire_app::restore::restore_archive(state.registry(), &caller.acting(), &id).await?))
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
