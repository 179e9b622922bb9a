//! `/api/v1/images`: media library records. Files live under `/uploads`;
//! the upload pipeline that writes them is a separate surface.

use super::{ListResponse, Paging};
use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use quire_core::access::Action;
use quire_core::input::{ImagePatch, NewImage};
use quire_core::model::{Archive, EntityKind, Image, ImageStatus};
use serde::Deserialize;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/images", get(list).post(create))
        .route("/api/v1/images/{id}", get(read).patch(update).delete(archive))
}

/// Filters of the image list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ImageQuery {
    /// Only images with this processing status.
    pub status: Option<ImageStatus>,
    /// Items per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// Lists images, newest first.
#[utoipa::path(get, path = "/api/v1/images", operation_id = "listImages", tag = "images", params(ImageQuery), security(("bearer" = [])),
    responses((status = 200, description = "One page of images, newest first", body = ListResponse<Image>)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ImageQuery>,
) -> ApiResult<Json<ListResponse<Image>>> {
    caller.require(Action::Read)?;
    let paging = Paging { limit: q.limit, cursor: q.cursor };
    Ok(Json(state.store().images(&caller.scope, q.status, paging.limit()?, paging.cursor()).await?.into()))
}

/// Records an image whose file is already under `/uploads`.
#[utoipa::path(post, path = "/api/v1/images", operation_id = "createImage", tag = "images", request_body = NewImage, security(("bearer" = [])),
    responses((status = 201, description = "The created image record", body = Image), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(input): ApiJson<NewImage>,
) -> ApiResult<(StatusCode, Json<Image>)> {
    caller.require(Action::Write(EntityKind::Image))?;
    // A hash the server did not compute would poison duplicate detection.
    let input = NewImage { content_hash: None, ..input };
    Ok((StatusCode::CREATED, Json(state.store().create_image(&caller.ctx(), &caller.scope, input).await?)))
}

/// Reads an image record.
#[utoipa::path(get, path = "/api/v1/images/{id}", operation_id = "getImage", tag = "images", params(("id" = String, Path, description = "Image id")),
    security(("bearer" = [])), responses((status = 200, description = "The image record", body = Image), (status = 404, body = ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Image>> {
    caller.require(Action::Read)?;
    Ok(Json(state.store().image(&caller.scope, &id).await?))
}

/// Changes an image's alt text, description, tags or categories.
#[utoipa::path(patch, path = "/api/v1/images/{id}", operation_id = "updateImage", tag = "images", params(("id" = String, Path, description = "Image id")),
    request_body = ImagePatch, security(("bearer" = [])),
    responses((status = 200, description = "The changed image record", body = Image), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(patch): ApiJson<ImagePatch>,
) -> ApiResult<Json<Image>> {
    caller.require(Action::Write(EntityKind::Image))?;
    Ok(Json(state.store().update_image(&caller.ctx(), &caller.scope, &id, patch).await?))
}

/// Archives an image record (the file stays).
#[utoipa::path(delete, path = "/api/v1/images/{id}", operation_id = "archiveImage", tag = "images", params(("id" = String, Path, description = "Image id")),
    security(("bearer" = [])), responses((status = 200, description = "The archive holding the image record", body = Archive), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn archive(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Archive>> {
    caller.require(Action::Delete(EntityKind::Image))?;
    let mut archives = state.store().archive(&caller.ctx(), &caller.scope, EntityKind::Image, &[id]).await?;
    Ok(Json(archives.remove(0)))
}
