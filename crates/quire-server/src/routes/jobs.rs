//! `/api/v1/jobs`: background work (image processing, alt text by a vision
//! model) and how far it got, for clients that show progress.

use crate::AppState;
use crate::auth::Records;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::ApiPath;
use axum::routing::get;
use axum::{Json, Router};
use quire_store::JobInfo;
use serde::Serialize;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/jobs/{id}", get(read)).route("/api/v1/images/{id}/jobs", get(of_image))
}

/// The jobs of one image.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct JobList {
    /// Newest first: the alt-text job (when a vision model is configured)
    /// follows processing, so the first item is the latest work.
    pub items: Vec<JobInfo>,
}

/// Reads a job: its status (`queued`, `running`, `done`, `failed`), while
/// running its stage and percentage, and why it failed.
#[utoipa::path(get, path = "/api/v1/jobs/{id}", operation_id = "getJob", tag = "images", params(("id" = String, Path, description = "Job id")),
    security(("bearer" = [])), responses((status = 200, description = "The job", body = JobInfo), (status = 404, body = ErrorBody)))]
pub async fn read(records: Records, ApiPath(id): ApiPath<String>) -> ApiResult<Json<JobInfo>> {
    Ok(Json(records.job(&id).await?.info()))
}

/// The jobs working on an image, newest first: poll it while the image's
/// status is processing to show the stage and percentage.
#[utoipa::path(get, path = "/api/v1/images/{id}/jobs", operation_id = "listImageJobs", tag = "images", params(("id" = String, Path, description = "Image id")),
    security(("bearer" = [])), responses((status = 200, description = "The image's jobs, newest first", body = JobList), (status = 404, body = ErrorBody)))]
pub async fn of_image(records: Records, ApiPath(id): ApiPath<String>) -> ApiResult<Json<JobList>> {
    // An image of another site (or none) is a 404, not an empty list.
    let jobs = records.jobs_of(&id).await?;
    Ok(Json(JobList { items: jobs.iter().map(|j| j.info()).collect() }))
}
