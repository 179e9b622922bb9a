//! `/api/v1/section-templates`: the shapes sections take.

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
use quire_core::input::{NewTemplate, TemplatePatch};
use quire_core::model::{Archive, EntityKind, SectionTemplate};

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/section-templates", get(list).post(create))
        .route("/api/v1/section-templates/{key}", get(read).patch(update).delete(archive))
}

/// Lists section templates with their fields.
#[utoipa::path(get, path = "/api/v1/section-templates", operation_id = "listSectionTemplates", tag = "section-templates", params(Paging), security(("bearer" = [])),
    responses((status = 200, description = "One page of section templates", body = ListResponse<SectionTemplate>)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(paging): ApiQuery<Paging>,
) -> ApiResult<Json<ListResponse<SectionTemplate>>> {
    caller.authorize(Permission::Read)?;
    Ok(Json(state.store().templates(&caller.scope, paging.limit()?, paging.cursor()).await?.into()))
}

/// Creates a section template (editors and admins).
#[utoipa::path(post, path = "/api/v1/section-templates", operation_id = "createSectionTemplate", tag = "section-templates", request_body = NewTemplate, security(("bearer" = [])),
    responses((status = 201, description = "The created template", body = SectionTemplate), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(input): ApiJson<NewTemplate>,
) -> ApiResult<(StatusCode, Json<SectionTemplate>)> {
    caller.authorize(Permission::Write(EntityKind::SectionTemplate))?;
    Ok((StatusCode::CREATED, Json(state.store().create_template(&caller.ctx(), &caller.scope, input).await?)))
}

/// Reads a template by key or id.
#[utoipa::path(get, path = "/api/v1/section-templates/{key}", operation_id = "getSectionTemplate", tag = "section-templates", params(("key" = String, Path, description = "Template key or id")),
    security(("bearer" = [])), responses((status = 200, description = "The template", body = SectionTemplate), (status = 404, body = ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(key): ApiPath<String>,
) -> ApiResult<Json<SectionTemplate>> {
    caller.authorize(Permission::Read)?;
    Ok(Json(state.store().template(&caller.scope, &key).await?))
}

/// Changes a template; existing sections are re-validated on their next write.
#[utoipa::path(patch, path = "/api/v1/section-templates/{key}", operation_id = "updateSectionTemplate", tag = "section-templates", params(("key" = String, Path, description = "Template key or id")),
    request_body = TemplatePatch, security(("bearer" = [])),
    responses((status = 200, description = "The changed template", body = SectionTemplate), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(key): ApiPath<String>,
    ApiJson(patch): ApiJson<TemplatePatch>,
) -> ApiResult<Json<SectionTemplate>> {
    caller.authorize(Permission::Write(EntityKind::SectionTemplate))?;
    Ok(Json(state.store().update_template(&caller.ctx(), &caller.scope, &key, patch).await?))
}

/// Archives a template no live section uses.
#[utoipa::path(delete, path = "/api/v1/section-templates/{key}", operation_id = "archiveSectionTemplate", tag = "section-templates", params(("key" = String, Path, description = "Template key or id")),
    security(("bearer" = [])), responses((status = 200, description = "The archive holding the template", body = Archive), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn archive(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(key): ApiPath<String>,
) -> ApiResult<Json<Archive>> {
    caller.authorize(Permission::Delete(EntityKind::SectionTemplate))?;
    let id = state.store().template(&caller.scope, &key).await?.id;
    let mut archives = state.store().archive(&caller.ctx(), &caller.scope, EntityKind::SectionTemplate, &[id]).await?;
    Ok(Json(archives.remove(0)))
}
