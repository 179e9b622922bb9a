//! `/api/v1/releases`: named sets of documents (pages with their sections,
//! entries, navigations with their items) published together in one
//! transaction and reverted together. A release is made open, documents
//! are staged into it (a copy of their draft, or taken off the site, or
//! archived), its review shows each document's differences and conflicts,
//! and publishing it changes all of the public site or none of it.

use crate::auth::Records;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::routes::ListResponse;
use axum::http::StatusCode;
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use quire_app::releases::{Release, ReleasePatch, ReleaseReview, Stage};
use quire_core::model::{EntityKind, ReleaseAction, ReleaseState};
use serde::Deserialize;

/// Routes of this module.
pub fn router() -> Router<crate::AppState> {
    Router::new()
        .route("/api/v1/releases", get(list).post(create))
        .route("/api/v1/releases/{id}", get(read).patch(update))
        .route("/api/v1/releases/{id}/items", post(stage))
        .route("/api/v1/releases/{id}/items/{entity}/{document}", delete(unstage))
        .route("/api/v1/releases/{id}/publish", post(publish))
        .route("/api/v1/releases/{id}/revert", post(revert))
        .route("/api/v1/releases/{id}/discard", post(discard))
}

/// Which releases to list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ReleaseQuery {
    /// Only releases in this state.
    state: Option<ReleaseState>,
}

/// The site's releases, newest first.
#[utoipa::path(get, path = "/api/v1/releases", operation_id = "listReleases", tag = "releases", params(ReleaseQuery),
    security(("bearer" = [])), responses((status = 200, description = "The releases, newest first", body = ListResponse<Release>)))]
pub async fn list(records: Records, ApiQuery(q): ApiQuery<ReleaseQuery>) -> ApiResult<Json<ListResponse<Release>>> {
    let items = records.releases(q.state).await?;
    Ok(Json(ListResponse { count: items.len(), items, next_cursor: None }))
}

/// A release to make.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewRelease {
    /// Its name, up to 200 characters.
    #[schema(value_type = quire_core::text::Line<200>)]
    pub name: String,
    /// What it is for.
    #[schema(value_type = Option<quire_core::text::Text<2000>>)]
    pub description: Option<String>,
}

/// Makes an open release.
#[utoipa::path(post, path = "/api/v1/releases", operation_id = "createRelease", tag = "releases", request_body = NewRelease,
    security(("bearer" = [])), responses((status = 201, description = "The release, open", body = Release), (status = 422, body = ErrorBody)))]
pub async fn create(records: Records, ApiJson(input): ApiJson<NewRelease>) -> ApiResult<(StatusCode, Json<Release>)> {
    Ok((StatusCode::CREATED, Json(records.create_release(&input.name, input.description.as_deref()).await?)))
}

/// A release with each document's differences against what is public
/// (record by record, field by field) and the conflict that would stop it.
#[utoipa::path(get, path = "/api/v1/releases/{id}", operation_id = "getRelease", tag = "releases",
    params(("id" = String, Path, description = "Release id")), security(("bearer" = [])),
    responses((status = 200, description = "The release, reviewed", body = ReleaseReview), (status = 404, body = ErrorBody)))]
pub async fn read(records: Records, ApiPath(id): ApiPath<String>) -> ApiResult<Json<ReleaseReview>> {
    Ok(Json(records.release_review(&id).await?.0))
}

/// What a release's name and description become.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReleaseChange {
    /// A new name, up to 200 characters.
    #[schema(value_type = Option<quire_core::text::Line<200>>)]
    pub name: Option<String>,
    /// A new description.
    #[schema(value_type = Option<quire_core::text::Text<2000>>)]
    pub description: Option<String>,
}

/// Renames or redescribes a release that is not published.
#[utoipa::path(patch, path = "/api/v1/releases/{id}", operation_id = "updateRelease", tag = "releases",
    params(("id" = String, Path, description = "Release id")), request_body = ReleaseChange, security(("bearer" = [])),
    responses((status = 200, description = "The release", body = Release), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update(
    records: Records,
    ApiPath(id): ApiPath<String>,
    ApiJson(change): ApiJson<ReleaseChange>,
) -> ApiResult<Json<Release>> {
    let patch = ReleasePatch { name: change.name, description: change.description };
    Ok(Json(records.update_release(&id, patch).await?))
}

/// The kinds of document a release holds.
#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum ReleaseDocument {
    /// A page with its sections.
    Page,
    /// An entry (a post).
    Entry,
    /// A navigation with its items.
    Navigation,
}

impl ReleaseDocument {
    fn kind(self) -> EntityKind {
        match self {
            ReleaseDocument::Page => EntityKind::Page,
            ReleaseDocument::Entry => EntityKind::Entry,
            ReleaseDocument::Navigation => EntityKind::Navigation,
        }
    }
}

/// A document to put into a release.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StageDocument {
    /// Its kind.
    pub entity: ReleaseDocument,
    /// Its id, or a page's slug, a navigation's key.
    #[schema(min_length = 1)]
    pub id: String,
    /// What publishing the release does to it (default: publish a copy of its draft as it is now).
    pub action: Option<ReleaseAction>,
    /// Keep the release's copy and take the document's versions as they
    /// are now: settles a conflict in the release's favour.
    pub keep: Option<bool>,
    /// One of the site's other locales: the document's translation into it
    /// goes into the release, not the document (publish or unpublish only).
    pub locale: Option<String>,
}

/// Puts a document into an open release (again: takes its draft anew).
#[utoipa::path(post, path = "/api/v1/releases/{id}/items", operation_id = "stageReleaseItem", tag = "releases",
    params(("id" = String, Path, description = "Release id")), request_body = StageDocument, security(("bearer" = [])),
    responses((status = 200, description = "The release", body = Release), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn stage(
    records: Records,
    ApiPath(id): ApiPath<String>,
    ApiJson(input): ApiJson<StageDocument>,
) -> ApiResult<Json<Release>> {
    let stage = Stage {
        entity: input.entity.kind(),
        name: input.id,
        action: input.action.unwrap_or(ReleaseAction::Publish),
        keep: input.keep.unwrap_or(false),
        locale: input.locale,
    };
    Ok(Json(records.stage(&id, stage).await?))
}

/// Which of a document's translations a release item is.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ItemLocale {
    /// The locale of the document's translation to take out (absent: the
    /// document itself).
    pub locale: Option<String>,
}

/// Takes a document (or its translation into a locale) out of an open release.
#[utoipa::path(delete, path = "/api/v1/releases/{id}/items/{entity}/{document}", operation_id = "unstageReleaseItem",
    tag = "releases", params(("id" = String, Path, description = "Release id"),
        ("entity" = ReleaseDocument, Path, description = "The document's kind"),
        ("document" = String, Path, description = "The document's id"), ItemLocale),
    security(("bearer" = [])), responses((status = 200, description = "The release", body = Release),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn unstage(
    records: Records,
    ApiPath((id, entity, document)): ApiPath<(String, ReleaseDocument, String)>,
    ApiQuery(q): ApiQuery<ItemLocale>,
) -> ApiResult<Json<Release>> {
    Ok(Json(records.unstage(&id, entity.kind(), &document, q.locale.as_deref()).await?))
}

/// Publishes an open release in one transaction: every document, or none
/// when one changed since it was staged (the 409 names each).
#[utoipa::path(post, path = "/api/v1/releases/{id}/publish", operation_id = "publishRelease", tag = "releases",
    params(("id" = String, Path, description = "Release id")), security(("bearer" = [])),
    responses((status = 200, description = "The release, published", body = Release), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
pub async fn publish(records: Records, ApiPath(id): ApiPath<String>) -> ApiResult<Json<Release>> {
    Ok(Json(records.publish_release(&id, None).await?))
}

/// Sets a published release back as one unit: what was public before it
/// is public again, or nothing changes when a document moved since.
#[utoipa::path(post, path = "/api/v1/releases/{id}/revert", operation_id = "revertRelease", tag = "releases",
    params(("id" = String, Path, description = "Release id")), security(("bearer" = [])),
    responses((status = 200, description = "The release, reverted", body = Release), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
pub async fn revert(records: Records, ApiPath(id): ApiPath<String>) -> ApiResult<Json<Release>> {
    Ok(Json(records.revert_release(&id, None).await?))
}

/// Gives up a release without publishing it; it is kept, discarded.
#[utoipa::path(post, path = "/api/v1/releases/{id}/discard", operation_id = "discardRelease", tag = "releases",
    params(("id" = String, Path, description = "Release id")), security(("bearer" = [])),
    responses((status = 200, description = "The release, discarded", body = Release), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
pub async fn discard(records: Records, ApiPath(id): ApiPath<String>) -> ApiResult<Json<Release>> {
    Ok(Json(records.discard_release(&id).await?))
}
