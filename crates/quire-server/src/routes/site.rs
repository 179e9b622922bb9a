//! `/api/v1/site`: the caller's site (its environments, where its own front
//! end shows drafts), and `/api/v1/preview-links`: short-lived links that
//! let that front end, or the delivery API, show a draft.

use crate::auth::Records;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::ApiJson;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use quire_app::previews::PreviewLink;
use quire_core::model::{EntityKind, Site};
use serde::Deserialize;

/// Routes of this module.
pub fn router() -> Router<crate::AppState> {
    Router::new().route("/api/v1/site", get(read).patch(update)).route("/api/v1/preview-links", post(preview_link))
}

/// The caller's site.
#[utoipa::path(get, path = "/api/v1/site", operation_id = "getSite", tag = "system", security(("bearer" = [])),
    responses((status = 200, description = "The caller's site", body = Site)))]
pub async fn read(records: Records) -> ApiResult<Json<Site>> {
    Ok(Json(records.site().await?))
}

/// What a site's settings become.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SiteChange {
    /// Where the site's own front end shows a draft: an http(s) URL that
    /// may hold `{slug}`, `{collection}`, `{kind}`, `{id}` and `{token}`
    /// (the preview link's secret, for its `previewToken`); null or empty:
    /// the delivery API shows drafts.
    #[schema(max_length = 2000)]
    pub preview_url: Option<String>,
}

/// Changes the caller's site's settings (admins).
#[utoipa::path(patch, path = "/api/v1/site", operation_id = "updateSite", tag = "system", request_body = SiteChange,
    security(("bearer" = [])), responses((status = 200, description = "The site", body = Site),
        (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update(records: Records, ApiJson(change): ApiJson<SiteChange>) -> ApiResult<Json<Site>> {
    Ok(Json(records.set_preview_url(change.preview_url.as_deref()).await?))
}

/// What has a preview of its own.
#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Previewed {
    /// A page with its sections.
    Page,
    /// An entry (a post).
    Entry,
}

/// A draft to link to.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewPreviewLink {
    /// Its kind.
    pub entity: Previewed,
    /// Its id, or a page's slug.
    #[schema(min_length = 1)]
    pub id: String,
}

/// A link that shows a page's or an entry's draft as it would be published,
/// for an hour: on the site's own front end when it has a preview URL,
/// else through the delivery API (`previewToken`).
#[utoipa::path(post, path = "/api/v1/preview-links", operation_id = "createPreviewLink", tag = "delivery",
    request_body = NewPreviewLink, security(("bearer" = [])),
    responses((status = 201, description = "The link", body = PreviewLink), (status = 404, body = ErrorBody)))]
pub async fn preview_link(
    records: Records,
    ApiJson(input): ApiJson<NewPreviewLink>,
) -> ApiResult<(StatusCode, Json<PreviewLink>)> {
    let kind = match input.entity {
        Previewed::Page => EntityKind::Page,
        Previewed::Entry => EntityKind::Entry,
    };
    Ok((StatusCode::CREATED, Json(records.preview_link(kind, &input.id).await?)))
}
