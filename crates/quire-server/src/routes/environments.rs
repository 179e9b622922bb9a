//! `/api/v1/environments`: the caller's site's environments — list, make
//! (empty or as a copy of another), rename, lock, archive and restore;
//! compare two and promote what differs from one into another;
//! `/api/v1/promotions/{id}/undo` undoes a promotion.

use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::routes::ListResponse;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use quire_app::environments;
use quire_store::{EnvDifference, Environment, Promotion, PromotionRequest, Resolution};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/environments", get(list).post(create))
        .route("/api/v1/environments/{env}", get(one).patch(update).delete(archive))
        .route("/api/v1/environments/{env}/restore", post(restore))
        .route("/api/v1/environments/{env}/compare", get(compare))
        .route("/api/v1/environments/{env}/promote", post(promote))
        .route("/api/v1/environments/{env}/promotions", get(promotions))
        .route("/api/v1/promotions/{id}/undo", post(undo))
}

/// An environment to make.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateEnvironment {
    /// Its key (`preview`): lowercase words joined by hyphens, unique in the site.
    #[schema(min_length = 1, max_length = 100, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")]
    pub key: String,
    /// Its display name (default: the key).
    #[schema(value_type = Option<quire_core::text::Line<120>>)]
    pub name: Option<String>,
    /// The environment it is a copy of; omitted: empty, with the starter templates and agents.
    pub from: Option<String>,
}

/// A new environment, and the promotion that filled it when it is a copy.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedEnvironment {
    /// The environment.
    pub environment: Environment,
    /// What the copy brought, record by record (none for an empty one).
    pub promotion: Option<Promotion>,
}

/// What to change of an environment.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateEnvironment {
    /// Its display name (the key stays).
    #[schema(value_type = Option<quire_core::text::Line<120>>)]
    pub name: Option<String>,
    /// Locked: content reaches it only by promotion.
    pub locked: Option<bool>,
}

/// The environment compared with this one.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompareQuery {
    /// The environment whose changes would be promoted into this one (required).
    pub from: Option<String>,
}

/// What to promote into this environment.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromoteBody {
    /// The environment promoted from.
    pub from: String,
    /// The records to promote, by lineage or by id in either environment;
    /// omitted: everything that differs.
    #[serde(default)]
    pub items: Option<Vec<String>>,
    /// How each conflict is settled (`source` or `target`), by the same names.
    #[serde(default)]
    pub resolutions: BTreeMap<String, Resolution>,
}

/// The site's environments this credential may use, archived ones too.
#[utoipa::path(get, path = "/api/v1/environments", operation_id = "listEnvironments", tag = "environments",
    security(("bearer" = [])), responses((status = 200, description = "The environments", body = ListResponse<Environment>)))]
pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<ListResponse<Environment>>> {
    let items = environments::list(state.registry().services(), &caller.acting()).await?;
    Ok(Json(ListResponse { count: items.len(), items, next_cursor: None }))
}

/// Makes an environment, empty or as a copy of another (site administrators).
#[utoipa::path(post, path = "/api/v1/environments", operation_id = "createEnvironment", tag = "environments",
    request_body = CreateEnvironment, security(("bearer" = [])),
    responses((status = 201, description = "The environment", body = CreatedEnvironment), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<CreateEnvironment>,
) -> ApiResult<(StatusCode, Json<CreatedEnvironment>)> {
    let services = state.registry().services();
    let (environment, promotion) =
        environments::create(services, &caller.acting(), &body.key, body.name.as_deref(), body.from.as_deref()).await?;
    state.forget_tokens();
    Ok((StatusCode::CREATED, Json(CreatedEnvironment { environment, promotion })))
}

/// One environment of the site.
#[utoipa::path(get, path = "/api/v1/environments/{env}", operation_id = "getEnvironment", tag = "environments",
    params(("env" = String, Path, description = "Environment key")), security(("bearer" = [])),
    responses((status = 200, description = "The environment", body = Environment), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub async fn one(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(env): ApiPath<String>,
) -> ApiResult<Json<Environment>> {
    Ok(Json(environments::get(state.registry().services(), &caller.acting(), &env).await?))
}

/// Renames an environment, locks or unlocks it (site administrators).
#[utoipa::path(patch, path = "/api/v1/environments/{env}", operation_id = "updateEnvironment", tag = "environments",
    request_body = UpdateEnvironment, params(("env" = String, Path, description = "Environment key")), security(("bearer" = [])),
    responses((status = 200, description = "The environment", body = Environment), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(env): ApiPath<String>,
    ApiJson(body): ApiJson<UpdateEnvironment>,
) -> ApiResult<Json<Environment>> {
    let services = state.registry().services();
    Ok(Json(environments::update(services, &caller.acting(), &env, body.name.as_deref(), body.locked).await?))
}

/// Archives an environment: its tokens stop; what it holds is kept (site administrators).
#[utoipa::path(delete, path = "/api/v1/environments/{env}", operation_id = "archiveEnvironment", tag = "environments",
    params(("env" = String, Path, description = "Environment key")), security(("bearer" = [])),
    responses((status = 200, description = "The archived environment", body = Environment), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn archive(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(env): ApiPath<String>,
) -> ApiResult<Json<Environment>> {
    let archived = environments::archive(state.registry().services(), &caller.acting(), &env, true).await?;
    state.forget_tokens();
    Ok(Json(archived))
}

/// Brings an archived environment back (site administrators).
#[utoipa::path(post, path = "/api/v1/environments/{env}/restore", operation_id = "restoreEnvironment", tag = "environments",
    params(("env" = String, Path, description = "Environment key")), security(("bearer" = [])),
    responses((status = 200, description = "The environment", body = Environment), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn restore(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(env): ApiPath<String>,
) -> ApiResult<Json<Environment>> {
    let restored = environments::archive(state.registry().services(), &caller.acting(), &env, false).await?;
    state.forget_tokens();
    Ok(Json(restored))
}

/// What differs between `from` and this environment, record by record and
/// field by field, with which side changed each since they last agreed.
#[utoipa::path(get, path = "/api/v1/environments/{env}/compare", operation_id = "compareEnvironments", tag = "environments",
    params(("env" = String, Path, description = "Environment key (the target)"), CompareQuery), security(("bearer" = [])),
    responses((status = 200, description = "The differences", body = ListResponse<EnvDifference>), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn compare(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(env): ApiPath<String>,
    ApiQuery(q): ApiQuery<CompareQuery>,
) -> ApiResult<Json<ListResponse<EnvDifference>>> {
    let items = environments::compare(state.registry().services(), &caller.acting(), q.from.as_deref(), &env).await?;
    Ok(Json(ListResponse { count: items.len(), items, next_cursor: None }))
}

/// Promotes what differs (or the named records) from `from` into this
/// environment in one transaction, logged as one change set; a conflict
/// left unresolved refuses it whole (site administrators).
#[utoipa::path(post, path = "/api/v1/environments/{env}/promote", operation_id = "promoteEnvironment", tag = "environments",
    request_body = PromoteBody, params(("env" = String, Path, description = "Environment key (the target)")), security(("bearer" = [])),
    responses((status = 201, description = "The promotion", body = Promotion), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn promote(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(env): ApiPath<String>,
    ApiJson(body): ApiJson<PromoteBody>,
) -> ApiResult<(StatusCode, Json<Promotion>)> {
    let request = PromotionRequest { items: body.items, resolutions: body.resolutions };
    let promotion =
        environments::promote(state.registry().services(), &caller.acting(), &body.from, &env, request).await?;
    Ok((StatusCode::CREATED, Json(promotion)))
}

/// The promotions into this environment, newest first.
#[utoipa::path(get, path = "/api/v1/environments/{env}/promotions", operation_id = "listPromotions", tag = "environments",
    params(("env" = String, Path, description = "Environment key (the target)")), security(("bearer" = [])),
    responses((status = 200, description = "The promotions", body = ListResponse<Promotion>), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub async fn promotions(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(env): ApiPath<String>,
) -> ApiResult<Json<ListResponse<Promotion>>> {
    let items = environments::promotions(state.registry().services(), &caller.acting(), &env).await?;
    Ok(Json(ListResponse { count: items.len(), items, next_cursor: None }))
}

/// Undoes a promotion: its target goes back to what it held before (site administrators).
#[utoipa::path(post, path = "/api/v1/promotions/{id}/undo", operation_id = "undoPromotion", tag = "environments",
    params(("id" = String, Path, description = "Promotion id")), security(("bearer" = [])),
    responses((status = 200, description = "The undone promotion", body = Promotion), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn undo(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Promotion>> {
    Ok(Json(environments::undo_promotion(state.registry().services(), &caller.acting(), &id).await?))
}
