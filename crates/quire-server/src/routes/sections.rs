//! `/api/v1/pages/{id}/sections` and `/api/v1/sections/{id}`: page sections.

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
use quire_core::input::{NewSection, SectionPatch};
use quire_core::model::{Archive, EntityKind, PageSection};

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/pages/{id}/sections", get(list).post(create))
        .route("/api/v1/sections/{id}", get(read).patch(update).delete(archive))
}

/// Lists a page's sections in order.
#[utoipa::path(get, path = "/api/v1/pages/{id}/sections", operation_id = "listSections", tag = "sections", params(("id" = String, Path, description = "Page id"), Paging),
    security(("bearer" = [])), responses((status = 200, description = "One page of the page's sections in order", body = ListResponse<PageSection>), (status = 404, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiQuery(paging): ApiQuery<Paging>,
) -> ApiResult<Json<ListResponse<PageSection>>> {
    caller.authorize(Permission::Read)?;
    let listing = state.store().sections(&caller.scope, &id, paging.limit()?, paging.cursor()).await?;
    Ok(Json(listing.into()))
}

/// Adds a section to a page; content is validated against the template.
#[utoipa::path(post, path = "/api/v1/pages/{id}/sections", operation_id = "createSection", tag = "sections", params(("id" = String, Path, description = "Page id")),
    request_body = NewSection, security(("bearer" = [])),
    responses((status = 201, description = "The created section", body = PageSection), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(input): ApiJson<NewSection>,
) -> ApiResult<(StatusCode, Json<PageSection>)> {
    caller.authorize(Permission::Write(EntityKind::Section))?;
    state.store().page(&caller.scope, &id).await?;
    let section = state.store().create_section(&caller.ctx(), &caller.scope, &id, input).await?;
    Ok((StatusCode::CREATED, Json(section)))
}

/// Reads a section.
#[utoipa::path(get, path = "/api/v1/sections/{id}", operation_id = "getSection", tag = "sections", params(("id" = String, Path, description = "Section id")),
    security(("bearer" = [])), responses((status = 200, description = "The section", body = PageSection), (status = 404, body = ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<PageSection>> {
    caller.authorize(Permission::Read)?;
    Ok(Json(state.store().section(&caller.scope, &id).await?))
}

/// Changes a section; content merges and the result is re-validated.
#[utoipa::path(patch, path = "/api/v1/sections/{id}", operation_id = "updateSection", tag = "sections", params(("id" = String, Path, description = "Section id")),
    request_body = SectionPatch, security(("bearer" = [])),
    responses((status = 200, description = "The changed section", body = PageSection), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(patch): ApiJson<SectionPatch>,
) -> ApiResult<Json<PageSection>> {
    caller.authorize(Permission::Write(EntityKind::Section))?;
    Ok(Json(state.store().update_section(&caller.ctx(), &caller.scope, &id, patch).await?))
}

/// Archives a section.
#[utoipa::path(delete, path = "/api/v1/sections/{id}", operation_id = "archiveSection", tag = "sections", params(("id" = String, Path, description = "Section id")),
    security(("bearer" = [])), responses((status = 200, description = "The archive holding the section", body = Archive), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn archive(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Archive>> {
    caller.authorize(Permission::Delete(EntityKind::Section))?;
    let mut archives = state.store().archive(&caller.ctx(), &caller.scope, EntityKind::Section, &[id]).await?;
    Ok(Json(archives.remove(0)))
}
