//! `/api/v1/changes` and `/api/v1/revisions`: the change log, an entity's
//! revisions, and restoring one.

use super::{ListResponse, Paging};
use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::{ApiPath, ApiQuery};
use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use quire_core::access::Permission;
use quire_core::model::{Change, EntityKind, Surface};
use quire_store::ChangeFilter;
use serde::Deserialize;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/changes", get(list))
        .route("/api/v1/changes/{id}", get(read))
        .route("/api/v1/changes/{id}/restore", post(restore))
        .route("/api/v1/revisions/{entity}/{id}", get(revisions))
}

/// Filters of the change log.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ChangeQuery {
    /// Only changes to this kind of record.
    pub entity: Option<EntityKind>,
    /// Only changes to this record.
    pub entity_id: Option<String>,
    /// Only changes by this actor (`token:<id>`, `system`).
    pub actor: Option<String>,
    /// Only changes of this agent session.
    pub session_id: Option<String>,
    /// Only changes of this agent turn.
    pub turn_id: Option<String>,
    /// Only changes made through this surface.
    #[param(inline)]
    pub surface: Option<Surface>,
    /// Items per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// Lists the change log, newest first.
#[utoipa::path(get, path = "/api/v1/changes", operation_id = "listChanges", tag = "changes", params(ChangeQuery), security(("bearer" = [])),
    responses((status = 200, description = "One page of the change log, newest first", body = ListResponse<Change>)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ChangeQuery>,
) -> ApiResult<Json<ListResponse<Change>>> {
    caller.authorize(Permission::Read)?;
    let paging = Paging { limit: q.limit, cursor: q.cursor };
    let filter = ChangeFilter {
        entity: q.entity,
        entity_id: q.entity_id,
        actor: q.actor,
        session_id: q.session_id,
        turn_id: q.turn_id,
        surface: q.surface,
    };
    Ok(Json(state.store().changes(&caller.scope, &filter, paging.limit()?, paging.cursor()).await?.into()))
}

/// Reads one change with its before and after.
#[utoipa::path(get, path = "/api/v1/changes/{id}", operation_id = "getChange", tag = "changes", params(("id" = i64, Path, description = "Change id")),
    security(("bearer" = [])), responses((status = 200, description = "The change with its before and after", body = Change), (status = 404, body = ErrorBody)))]
pub async fn read(State(state): State<AppState>, caller: Caller, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Change>> {
    caller.authorize(Permission::Read)?;
    Ok(Json(state.store().change(&caller.scope, id).await?))
}

/// Lists the revisions of one record, newest first (every change to it).
#[utoipa::path(get, path = "/api/v1/revisions/{entity}/{id}", operation_id = "listRevisions", tag = "changes",
    params(("entity" = EntityKind, Path, description = "Kind of record"), ("id" = String, Path, description = "Record id"), Paging),
    security(("bearer" = [])), responses((status = 200, description = "One page of the revisions of the record, newest first", body = ListResponse<Change>)))]
pub async fn revisions(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((entity, id)): ApiPath<(String, String)>,
    ApiQuery(paging): ApiQuery<Paging>,
) -> ApiResult<Json<ListResponse<Change>>> {
    caller.authorize(Permission::Read)?;
    // Parsed here so the error lists the accepted kinds.
    let entity = EntityKind::parse("entity", &entity).map_err(|e| ApiError::bad_field(e.field, e.rule))?;
    let filter = ChangeFilter { entity: Some(entity), entity_id: Some(id), ..Default::default() };
    Ok(Json(state.store().changes(&caller.scope, &filter, paging.limit()?, paging.cursor()).await?.into()))
}

/// Puts the record back to its state right after this change; the revert is itself logged.
#[utoipa::path(post, path = "/api/v1/changes/{id}/restore", operation_id = "restoreRevision", tag = "changes", params(("id" = i64, Path, description = "Change id")),
    security(("bearer" = [])),
    responses((status = 200, description = "The change the revert wrote", body = Change), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn restore(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<Change>> {
    Ok(Json(restore_change(&state, &caller, id).await?))
}

/// Puts a record back to its state right after change `id`, as `caller`
/// (REST and the back-office alike); the revert is itself logged.
pub async fn restore_change(state: &AppState, caller: &Caller, id: i64) -> ApiResult<Change> {
    Ok(quire_app::restore::restore_revision(state.registry(), &caller.acting(), id).await?)
}
