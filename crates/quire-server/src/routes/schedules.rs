//! `/api/v1/schedules`: a release, or one document, published (or a
//! document taken off the site) at a time. Schedules survive restarts and,
//! with several replicas, each runs once.

use crate::auth::Records;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::routes::ListResponse;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use quire_app::schedules::{Schedule, ScheduleTarget};
use quire_core::model::EntityKind;
use quire_store::PublishAction;
use serde::Deserialize;

/// Routes of this module.
pub fn router() -> Router<crate::AppState> {
    Router::new()
        .route("/api/v1/schedules", get(list).post(create))
        .route("/api/v1/schedules/{id}", get(read))
        .route("/api/v1/schedules/{id}/cancel", post(cancel))
}

/// Which schedules to list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ScheduleQuery {
    /// Also those that ran, failed or were cancelled (default: only those waiting).
    all: Option<bool>,
}

/// The site's schedules: those waiting, soonest first (with `all`, then the
/// others, newest first).
#[utoipa::path(get, path = "/api/v1/schedules", operation_id = "listSchedules", tag = "schedules", params(ScheduleQuery),
    security(("bearer" = [])), responses((status = 200, description = "The schedules", body = ListResponse<Schedule>)))]
pub async fn list(records: Records, ApiQuery(q): ApiQuery<ScheduleQuery>) -> ApiResult<Json<ListResponse<Schedule>>> {
    let items = records.schedules(q.all == Some(true)).await?;
    Ok(Json(ListResponse { count: items.len(), items, next_cursor: None }))
}

/// What a schedule publishes.
#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Scheduled {
    /// A release, published whole.
    Release,
    /// A page with its sections.
    Page,
    /// An entry (a post).
    Entry,
    /// A navigation with its items.
    Navigation,
}

/// What a scheduled document has done to it.
#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum ScheduledAction {
    /// Published as its draft is then.
    Publish,
    /// Taken off the public site.
    Unpublish,
}

/// A schedule to make.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewSchedule {
    /// What it publishes.
    pub entity: Scheduled,
    /// The release's id, or the document's id (a page's slug, a navigation's key).
    #[schema(min_length = 1)]
    pub id: String,
    /// For a document: publish (default) or unpublish. A release is published.
    pub action: Option<ScheduledAction>,
    /// When, in the future (RFC 3339).
    pub at: DateTime<Utc>,
}

/// Schedules a release or a document for a time.
#[utoipa::path(post, path = "/api/v1/schedules", operation_id = "createSchedule", tag = "schedules",
    request_body = NewSchedule, security(("bearer" = [])),
    responses((status = 201, description = "The schedule, waiting", body = Schedule), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create(records: Records, ApiJson(input): ApiJson<NewSchedule>) -> ApiResult<(StatusCode, Json<Schedule>)> {
    let document = |entity| {
        let action = match input.action.unwrap_or(ScheduledAction::Publish) {
            ScheduledAction::Publish => PublishAction::Publish,
            ScheduledAction::Unpublish => PublishAction::Unpublish,
        };
        ScheduleTarget::Document { entity, name: input.id.clone(), action }
    };
    let target = match input.entity {
        Scheduled::Release => ScheduleTarget::Release(input.id.clone()),
        Scheduled::Page => document(EntityKind::Page),
        Scheduled::Entry => document(EntityKind::Entry),
        Scheduled::Navigation => document(EntityKind::Navigation),
    };
    Ok((StatusCode::CREATED, Json(records.schedule(target, input.at).await?)))
}

/// One schedule: where it stands, and how late it ran once it did.
#[utoipa::path(get, path = "/api/v1/schedules/{id}", operation_id = "getSchedule", tag = "schedules",
    params(("id" = String, Path, description = "Schedule id")), security(("bearer" = [])),
    responses((status = 200, description = "The schedule", body = Schedule), (status = 404, body = ErrorBody)))]
pub async fn read(records: Records, ApiPath(id): ApiPath<String>) -> ApiResult<Json<Schedule>> {
    Ok(Json(records.schedule_of(&id).await?))
}

/// Cancels a schedule that has not run; a release it would have published
/// is open again.
#[utoipa::path(post, path = "/api/v1/schedules/{id}/cancel", operation_id = "cancelSchedule", tag = "schedules",
    params(("id" = String, Path, description = "Schedule id")), security(("bearer" = [])),
    responses((status = 200, description = "The schedule, cancelled", body = Schedule), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
pub async fn cancel(records: Records, ApiPath(id): ApiPath<String>) -> ApiResult<Json<Schedule>> {
    Ok(Json(records.cancel_schedule(&id).await?))
}
