//! `/api/v1/collections` and their entries (`/api/v1/entries/{id}`); posts
//! are the entries of a posts collection such as `blog`.

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
use quire_core::input::{CollectionPatch, EntryPatch, NewCollection, NewEntry};
use quire_core::model::{Archive, Collection, EntityKind, Entry, EntryStatus};
use quire_store::{EntryFilter, EntryView};
use serde::Deserialize;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/collections", get(list).post(create))
        .route("/api/v1/collections/{slug}", get(read).patch(update).delete(archive))
        .route("/api/v1/collections/{slug}/entries", get(list_entries).post(create_entry))
        .route("/api/v1/entries/{id}", get(read_entry).patch(update_entry).delete(archive_entry))
}

/// Lists collections.
#[utoipa::path(get, path = "/api/v1/collections", operation_id = "listCollections", tag = "collections", params(Paging), security(("bearer" = [])),
    responses((status = 200, description = "One page of collections", body = ListResponse<Collection>)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(paging): ApiQuery<Paging>,
) -> ApiResult<Json<ListResponse<Collection>>> {
    caller.authorize(Permission::Read)?;
    Ok(Json(state.store().collections(&caller.scope, paging.limit()?, paging.cursor()).await?.into()))
}

/// Creates a collection (editors and admins).
#[utoipa::path(post, path = "/api/v1/collections", operation_id = "createCollection", tag = "collections", request_body = NewCollection, security(("bearer" = [])),
    responses((status = 201, description = "The created collection", body = Collection), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(input): ApiJson<NewCollection>,
) -> ApiResult<(StatusCode, Json<Collection>)> {
    caller.authorize(Permission::Write(EntityKind::Collection))?;
    Ok((StatusCode::CREATED, Json(state.store().create_collection(&caller.ctx(), &caller.scope, input).await?)))
}

/// Reads a collection by slug or id.
#[utoipa::path(get, path = "/api/v1/collections/{slug}", operation_id = "getCollection", tag = "collections", params(("slug" = String, Path, description = "Collection slug or id")),
    security(("bearer" = [])), responses((status = 200, description = "The collection", body = Collection), (status = 404, body = ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(slug): ApiPath<String>,
) -> ApiResult<Json<Collection>> {
    caller.authorize(Permission::Read)?;
    Ok(Json(state.store().collection(&caller.scope, &slug).await?))
}

/// Changes a collection's name or fields.
#[utoipa::path(patch, path = "/api/v1/collections/{slug}", operation_id = "updateCollection", tag = "collections", params(("slug" = String, Path, description = "Collection slug or id")),
    request_body = CollectionPatch, security(("bearer" = [])),
    responses((status = 200, description = "The changed collection", body = Collection), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(slug): ApiPath<String>,
    ApiJson(patch): ApiJson<CollectionPatch>,
) -> ApiResult<Json<Collection>> {
    caller.authorize(Permission::Write(EntityKind::Collection))?;
    Ok(Json(state.store().update_collection(&caller.ctx(), &caller.scope, &slug, patch).await?))
}

/// Archives a collection with all its entries.
#[utoipa::path(delete, path = "/api/v1/collections/{slug}", operation_id = "archiveCollection", tag = "collections", params(("slug" = String, Path, description = "Collection slug or id")),
    security(("bearer" = [])), responses((status = 200, description = "The archive holding the collection and its entries", body = Archive), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn archive(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(slug): ApiPath<String>,
) -> ApiResult<Json<Archive>> {
    caller.authorize(Permission::Delete(EntityKind::Collection))?;
    let id = state.store().collection(&caller.scope, &slug).await?.id;
    let mut archives = state.store().archive(&caller.ctx(), &caller.scope, EntityKind::Collection, &[id]).await?;
    Ok(Json(archives.remove(0)))
}

/// Filters of entry lists.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EntryQuery {
    /// Only entries with this status.
    pub status: Option<EntryStatus>,
    /// Only entries in this category.
    pub category: Option<String>,
    /// Only entries with this tag.
    pub tag: Option<String>,
    /// Items per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// Lists a collection's entries, newest first.
#[utoipa::path(get, path = "/api/v1/collections/{slug}/entries", operation_id = "listEntries", tag = "entries", params(("slug" = String, Path, description = "Collection slug or id"), EntryQuery),
    security(("bearer" = [])), responses((status = 200, description = "One page of the collection's entries, newest first", body = ListResponse<EntryView>), (status = 404, body = ErrorBody)))]
pub async fn list_entries(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(slug): ApiPath<String>,
    ApiQuery(q): ApiQuery<EntryQuery>,
) -> ApiResult<Json<ListResponse<EntryView>>> {
    caller.authorize(Permission::Read)?;
    let paging = Paging { limit: q.limit, cursor: q.cursor };
    let filter = EntryFilter { status: q.status, category: q.category, tag: q.tag };
    Ok(Json(state.store().entry_views(&caller.scope, &slug, &filter, paging.limit()?, paging.cursor()).await?.into()))
}

/// Creates an entry (draft unless given); content is validated against the collection's fields.
#[utoipa::path(post, path = "/api/v1/collections/{slug}/entries", operation_id = "createEntry", tag = "entries", params(("slug" = String, Path, description = "Collection slug or id")),
    request_body = NewEntry, security(("bearer" = [])),
    responses((status = 201, description = "The created entry", body = Entry), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create_entry(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(slug): ApiPath<String>,
    ApiJson(input): ApiJson<NewEntry>,
) -> ApiResult<(StatusCode, Json<Entry>)> {
    caller.authorize(Permission::Write(EntityKind::Entry))?;
    Ok((StatusCode::CREATED, Json(state.store().create_entry(&caller.ctx(), &caller.scope, &slug, input).await?)))
}

/// Reads an entry.
#[utoipa::path(get, path = "/api/v1/entries/{id}", operation_id = "getEntry", tag = "entries", params(("id" = String, Path, description = "Entry id")),
    security(("bearer" = [])), responses((status = 200, description = "The entry", body = Entry), (status = 404, body = ErrorBody)))]
pub async fn read_entry(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Entry>> {
    caller.authorize(Permission::Read)?;
    Ok(Json(state.store().entry(&caller.scope, &id).await?))
}

/// Changes an entry; content merges; publishing sets publishedAt once.
#[utoipa::path(patch, path = "/api/v1/entries/{id}", operation_id = "updateEntry", tag = "entries", params(("id" = String, Path, description = "Entry id")),
    request_body = EntryPatch, security(("bearer" = [])),
    responses((status = 200, description = "The changed entry", body = Entry), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update_entry(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(patch): ApiJson<EntryPatch>,
) -> ApiResult<Json<Entry>> {
    caller.authorize(Permission::Write(EntityKind::Entry))?;
    Ok(Json(state.store().update_entry(&caller.ctx(), &caller.scope, &id, patch).await?))
}

/// Archives an entry.
#[utoipa::path(delete, path = "/api/v1/entries/{id}", operation_id = "archiveEntry", tag = "entries", params(("id" = String, Path, description = "Entry id")),
    security(("bearer" = [])), responses((status = 200, description = "The archive holding the entry", body = Archive), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn archive_entry(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Archive>> {
    caller.authorize(Permission::Delete(EntityKind::Entry))?;
    let mut archives = state.store().archive(&caller.ctx(), &caller.scope, EntityKind::Entry, &[id]).await?;
    Ok(Json(archives.remove(0)))
}
