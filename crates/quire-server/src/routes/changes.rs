//! `/api/v1/changes` and `/api/v1/revisions`: the change log, an entity's
//! revisions, and restoring one.

use super::{ListResponse, Paging};
use crate::AppState;
use crate::auth::{Caller, Records};
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::{ApiPath, ApiQuery};
use axum::Json;
use axum::extract::State;
use quire_core::model::{Change, EntityKind, Surface};
use quire_store::ChangeFilter;

super::list_query! {
    /// Filters of the change log.
    ChangeQuery {
        /// Only changes to this kind of record.
        entity: Option<EntityKind>,
        /// Only changes to this record.
        entity_id: Option<String>,
        /// Only changes by this actor (`token:<id>`, `system`).
        actor: Option<String>,
        /// Only changes of this agent session.
        session_id: Option<String>,
        /// Only changes of this agent turn.
        turn_id: Option<String>,
        /// Only changes made through this surface.
        #[param(inline)]
        surface: Option<Surface>,
    }
}

impl From<ChangeQuery> for ChangeFilter {
    fn from(q: ChangeQuery) -> Self {
        ChangeFilter {
            entity: q.entity,
            entity_id: q.entity_id,
            actor: q.actor,
            session_id: q.session_id,
            turn_id: q.turn_id,
            surface: q.surface,
        }
    }
}

super::record_handlers! {
    tag = "changes";

    /// Lists the change log, newest first.
    list: get "/api/v1/changes" "listChanges" (q: ChangeQuery)
        => changes(&ChangeFilter::from(q)) -> [Change] "One page of the change log, newest first";
    mount read: get "/api/v1/changes/{id}";
    mount restore: post "/api/v1/changes/{id}/restore";
    mount revisions: get "/api/v1/revisions/{entity}/{id}";
}

/// Reads one change with its before and after.
#[utoipa::path(get, path = "/api/v1/changes/{id}", operation_id = "getChange", tag = "changes", params(("id" = i64, Path, description = "Change id")),
    security(("bearer" = [])), responses((status = 200, description = "The change with its before and after", body = Change), (status = 404, body = ErrorBody)))]
pub async fn read(records: Records, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Change>> {
    Ok(Json(records.change(id).await?))
}

/// Lists the revisions of one record, newest first (every change to it).
#[utoipa::path(get, path = "/api/v1/revisions/{entity}/{id}", operation_id = "listRevisions", tag = "changes",
    params(("entity" = EntityKind, Path, description = "Kind of record"), ("id" = String, Path, description = "Record id"), Paging),
    security(("bearer" = [])), responses((status = 200, description = "One page of the revisions of the record, newest first", body = ListResponse<Change>)))]
pub async fn revisions(
    records: Records,
    ApiPath((entity, id)): ApiPath<(String, String)>,
    ApiQuery(paging): ApiQuery<Paging>,
) -> ApiResult<Json<ListResponse<Change>>> {
    // Parsed here so the error lists the accepted kinds.
    let entity = EntityKind::parse("entity", &entity).map_err(|e| ApiError::bad_field(e.field, e.rule))?;
    let filter = ChangeFilter { entity: Some(entity), entity_id: Some(id), ..Default::default() };
    Ok(Json(records.changes(&filter, paging.limit()?, paging.cursor()).await?.into()))
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
    Ok(Json(quire_app::restore::restore_revision(state.registry(), &caller.acting(), id).await?))
}
