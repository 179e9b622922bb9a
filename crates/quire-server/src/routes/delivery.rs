//! `/api/v1/delivery`: public, read-only, published content for front ends.
//! No token needed; `site` and `env` query parameters pick the site (default:
//! the configured default site, production). With `preview=true` and a
//! credential that may read the site (a token, or the back-office's
//! session), the same routes show its drafts instead.

use super::{ListResponse, Paging};
use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::{ApiPath, ApiQuery};
use crate::json::JsonList;
use axum::extract::FromRequestParts;
use axum::extract::State;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use quire_app::locales;
use quire_app::published::{self, Reading};
use quire_store::{DeliveredEntry, DeliveredNavItem, DeliveredPage};
use serde::{Deserialize, Serialize};

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/delivery/pages/{slug}", get(page))
        .route("/api/v1/delivery/navigations/{key}", get(navigation))
        .route("/api/v1/delivery/collections/{slug}/entries", get(entries))
}

/// Which site and environment to deliver.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SiteQuery {
    /// Site slug (default: the server's default site).
    pub site: Option<String>,
    /// Environment (default: production).
    pub env: Option<String>,
    /// Show the drafts instead of what is published: needs a token (or a
    /// back-office session) that may read the site, whose site and
    /// environment it then shows.
    pub preview: Option<bool>,
    /// Show the drafts of the site and environment of a preview link
    /// (`POST /api/v1/preview-links`), while it works; no other credential.
    #[serde(rename = "previewToken")]
    #[param(rename = "previewToken")]
    pub preview_token: Option<String>,
    /// The locale to deliver a page in (one of the site's, `de`); without
    /// it, the best of `Accept-Language`, else the default. What a
    /// translation lacks comes from its fallbacks, and `localeOf` says
    /// which locale each value came from; a menu's labels and links, and
    /// each entry of a list, the same way.
    pub locale: Option<String>,
}

/// A request for one delivered document: what it reads ([`reading`] of its
/// [`SiteQuery`]) and the services it reads through.
pub struct Delivery {
    state: AppState,
    reading: Reading,
    /// `?locale=`, if given.
    locale: Option<String>,
    /// The `Accept-Language` header, if sent.
    accept: Option<String>,
}

impl FromRequestParts<AppState> for Delivery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let ApiQuery(q) = ApiQuery::<SiteQuery>::from_request_parts(parts, state).await?;
        let accept = parts.headers.get(axum::http::header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
        let accept = accept.map(str::to_string);
        Ok(Delivery { reading: reading(state, parts, &q).await?, state: state.clone(), locale: q.locale, accept })
    }
}

impl Delivery {
    fn services(&self) -> &quire_tools::Services {
        self.state.registry().services()
    }
}

/// What a request reads: the site its query names as published, or for a
/// preview its caller's site as drafted.
async fn reading(state: &AppState, parts: &mut Parts, q: &SiteQuery) -> ApiResult<Reading> {
    if let Some(secret) = q.preview_token.as_deref() {
        return Reading::preview_link(state.registry().services(), secret).await?.ok_or_else(|| {
            ApiError::unauthorized(
                "previewToken: this preview link is unknown, has expired, or its maker's access ended; make a new one",
            )
        });
    }
    if q.preview == Some(true) {
        let caller = Caller::from_request_parts(parts, state).await?;
        let mut actor = caller.acting();
        // A preview is of the credential's own site, in an environment it
        // may use: `site` may only name that site, `env` one of those.
        if let Some(site) = q.site.as_deref() {
            let named = state.site_scope(site, &actor.scope.env).await?;
            if named.site_id != actor.scope.site_id {
                return Err(ApiError::forbidden(format!(
                    "site: this credential may preview its own site only, not {site}"
                )));
            }
        }
        if let Some(env) = q.env.as_deref().filter(|e| *e != actor.scope.env) {
            if actor.environments.as_ref().is_some_and(|allowed| !allowed.iter().any(|a| a == env)) {
                return Err(ApiError::forbidden(format!("env: this credential may not preview {env}")));
            }
            actor.scope = state.site_scope(&actor.scope.site_id.clone(), env).await?;
        }
        return Ok(Reading::preview(&actor)?);
    }
    let site = q.site.as_deref().unwrap_or(state.default_site());
    Ok(Reading::public(state.site_scope(site, q.env.as_deref().unwrap_or("production")).await?))
}

/// A published page with its visible, published sections in order.
#[utoipa::path(get, path = "/api/v1/delivery/pages/{slug}", operation_id = "getDeliveredPage", tag = "delivery", params(("slug" = String, Path, description = "Page slug"), SiteQuery),
    responses((status = 200, description = "The published page with its sections", body = DeliveredPage), (status = 401, description = "A preview without a valid credential", body = ErrorBody), (status = 403, description = "A preview of another site, or of an environment the credential may not use", body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, description = "A locale the site does not have", body = ErrorBody)))]
pub async fn page(ApiPath(slug): ApiPath<String>, d: Delivery) -> ApiResult<impl IntoResponse> {
    let services = d.services();
    let (asked, accept) = (d.locale.as_deref(), d.accept.as_deref());
    let page = if asked.is_none() && accept.is_none() {
        published::delivered_page(services, &d.reading, &slug).await?
    } else {
        // The site's locales read with the page: one read, no hand-off.
        locales::delivered_page_asked(services, &d.reading, &slug, asked, accept).await?
    };
    // What a cache keeps depends on the reader's languages.
    Ok(([(axum::http::header::VARY, "Accept-Language")], Json(page)))
}

/// A navigation's visible items, nested, with resolved hrefs.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveredNavigation {
    /// Navigation key.
    pub key: String,
    /// Navigation name.
    pub name: String,
    /// Top-level items with their children.
    pub items: Vec<DeliveredNavItem>,
    /// The locale asked for, when one other than the default was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
}

/// A navigation with its visible items nested and hrefs resolved.
#[utoipa::path(get, path = "/api/v1/delivery/navigations/{key}", operation_id = "getDeliveredNavigation", tag = "delivery", params(("key" = String, Path, description = "Navigation key"), SiteQuery),
    responses((status = 200, description = "The navigation with its visible items nested", body = DeliveredNavigation), (status = 401, description = "A preview without a valid credential", body = ErrorBody), (status = 403, description = "A preview of another site, or of an environment the credential may not use", body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, description = "A locale the site does not have", body = ErrorBody)))]
pub async fn navigation(ApiPath(key): ApiPath<String>, d: Delivery) -> ApiResult<impl IntoResponse> {
    let services = d.services();
    let (asked, accept) = (d.locale.as_deref(), d.accept.as_deref());
    let (nav, items, locale) = if asked.is_none() && accept.is_none() {
        let (nav, items) = published::delivered_navigation(services, &d.reading, &key).await?;
        (nav, items, None)
    } else {
        // The site's locales read with the menu: one read, no hand-off.
        locales::delivered_navigation_asked(services, &d.reading, &key, asked, accept).await?
    };
    let menu = DeliveredNavigation { key: nav.key, name: nav.name, items, locale };
    Ok(([(axum::http::header::VARY, "Accept-Language")], Json(menu)))
}

super::list_query! {
    /// Site and paging of a delivery list.
    DeliveryListQuery {
        /// Site slug (default: the server's default site).
        site: Option<String>,
        /// Environment (default: production).
        env: Option<String>,
        /// Show the drafts instead of what is published (see the page route).
        preview: Option<bool>,
        /// Show the drafts of a preview link's site and environment (see the page route).
        preview_token: Option<String>,
        /// Only entries in this category.
        category: Option<String>,
        /// Only entries with this tag.
        tag: Option<String>,
        /// Only the entry with this slug: its slug in the locale delivered
        /// (or the first of its fallbacks that has one), else its own.
        slug: Option<String>,
        /// The locale to deliver the entries in (one of the site's, `de`);
        /// without it, the best of `Accept-Language`, else the default. Each
        /// entry's translation is laid over it along the fallbacks, and
        /// `localeOf` says which locale each value came from.
        locale: Option<String>,
    }
}

/// Published entries (posts) of a collection, newest first.
#[utoipa::path(get, path = "/api/v1/delivery/collections/{slug}/entries", operation_id = "listDeliveredEntries", tag = "delivery",
    params(("slug" = String, Path, description = "Collection slug"), DeliveryListQuery),
    responses((status = 200, description = "One page of published entries, newest first (`locale` and `localeOf` only in a locale other than the default)", body = ListResponse<DeliveredEntry>), (status = 401, description = "A preview without a valid credential", body = ErrorBody), (status = 403, description = "A preview of another site, or of an environment the credential may not use", body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, description = "A locale the site does not have", body = ErrorBody)))]
pub async fn entries(
    State(state): State<AppState>,
    mut parts: Parts,
    ApiPath(slug): ApiPath<String>,
    ApiQuery(q): ApiQuery<DeliveryListQuery>,
) -> ApiResult<Response> {
    let site = SiteQuery {
        site: q.site.clone(),
        env: q.env.clone(),
        preview: q.preview,
        preview_token: q.preview_token.clone(),
        locale: None,
    };
    let reading = reading(&state, &mut parts, &site).await?;
    let paging = Paging { limit: q.limit, cursor: q.cursor };
    let services = state.registry().services();
    let accept = parts.headers.get(axum::http::header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
    let chain = locales::reader_locale(services, &reading, q.locale.as_deref(), accept).await?;
    // What a cache keeps depends on the reader's languages.
    let vary = [(axum::http::header::VARY, "Accept-Language")];
    if chain.is_none() && q.slug.is_none() {
        let listing = published::delivered_entries(
            services,
            &reading,
            &slug,
            q.category,
            q.tag,
            paging.limit()?,
            paging.cursor(),
        )
        .await?;
        return Ok((vary, JsonList(listing)).into_response());
    }
    let listing = locales::delivered_entries(
        services,
        &reading,
        &slug,
        q.category,
        q.tag,
        q.slug.as_deref(),
        paging.limit()?,
        paging.cursor(),
        chain.as_deref().unwrap_or_default(),
    )
    .await?;
    Ok((vary, Json(ListResponse::from(listing))).into_response())
}
