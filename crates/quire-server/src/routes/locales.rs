//! Locales ([decision 0050]): `/api/v1/locales` (the site's languages; its
//! admins set them) and each document's translations,
//! `/api/v1/{pages|entries|navigations}/{id}/translations[/{locale}]`.
//! A translation is published like a document
//! (`/api/v1/translations/{id}/publish`, in `publishing.rs`); delivery
//! reads a locale with `?locale=` or `Accept-Language`.
//!
//! [decision 0050]: ../../../../docs/decisions/0050-locales.md

use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath};
use crate::routes::ListResponse;
use axum::extract::State;
use axum::routing::{get, put};
use axum::{Json, Router};
use quire_app::locales;
use quire_core::model::{EntityKind, SiteLocale, Translation};
use quire_store::Translations;
use serde::Deserialize;
use serde_json::Value;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/locales", get(list).put(set))
        .route("/api/v1/pages/{id}/translations", get(page_translations))
        .route("/api/v1/pages/{id}/translations/{locale}", put(translate_page))
        .route("/api/v1/entries/{id}/translations", get(entry_translations))
        .route("/api/v1/entries/{id}/translations/{locale}", put(translate_entry))
        .route("/api/v1/navigations/{id}/translations", get(navigation_translations))
        .route("/api/v1/navigations/{id}/translations/{locale}", put(translate_navigation))
}

/// The site's locales to set.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetLocales {
    /// Every locale of the site, in order: exactly one the default (which
    /// stays what it is); a locale left out is hidden with its
    /// translations, and comes back with them when it is listed again.
    pub locales: Vec<SiteLocale>,
}

/// A translation to write.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Translate {
    /// The localised values: a page's `name`, `slug`, `meta` and
    /// `sections` (by section id, each section's localised fields); an
    /// entry's `title`, `slug`, `excerpt` and `content` (its localised
    /// fields); a navigation's `items` (by item id, `{ "label": … }`).
    /// They replace what the translation had.
    #[schema(value_type = Object)]
    pub fields: Value,
    /// Publish it at once (whoever may publish the document); otherwise
    /// a new translation is a draft, and a published one's draft changes.
    #[serde(default)]
    pub publish: bool,
}

/// The site's locales, the default first.
#[utoipa::path(get, path = "/api/v1/locales", operation_id = "listLocales", tag = "locales", security(("bearer" = [])),
    responses((status = 200, description = "The site's locales", body = ListResponse<SiteLocale>)))]
pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<ListResponse<SiteLocale>>> {
    let items = locales::locales(state.registry().services(), &caller.acting()).await?;
    Ok(Json(ListResponse { count: items.len(), items, next_cursor: None }))
}

/// Sets the site's locales (admins).
#[utoipa::path(put, path = "/api/v1/locales", operation_id = "setLocales", tag = "locales", request_body = SetLocales,
    security(("bearer" = [])), responses((status = 200, description = "The site's locales now", body = ListResponse<SiteLocale>),
        (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<SetLocales>,
) -> ApiResult<Json<ListResponse<SiteLocale>>> {
    let items = locales::set_locales(state.registry().services(), &caller.acting(), body.locales).await?;
    Ok(Json(ListResponse { count: items.len(), items, next_cursor: None }))
}

/// Declares the two routes of each translated kind once.
macro_rules! translation_routes {
    ($($list:ident, $put:ident: $kind:ident $base:tt $tag:tt $noun:tt;)*) => {
        $(
            #[doc = concat!("The translations of a ", $noun, ", with the site's locales it lacks and those gone stale.")]
            #[utoipa::path(get, path = concat!($base, "/{id}/translations"), operation_id = concat!("list", stringify!($kind), "Translations"),
                tag = "locales", params(("id" = String, Path, description = concat!("The ", $noun, "'s id"))), security(("bearer" = [])),
                responses((status = 200, description = "Its translations", body = Translations), (status = 404, body = ErrorBody)))]
            pub async fn $list(
                State(state): State<AppState>,
                caller: Caller,
                ApiPath(id): ApiPath<String>,
            ) -> ApiResult<Json<Translations>> {
                let services = state.registry().services();
                Ok(Json(locales::translations(services, &caller.acting(), EntityKind::$kind, &id).await?))
            }

            #[doc = concat!("Writes a ", $noun, "'s translation into a locale: a draft, or published at once.")]
            #[utoipa::path(put, path = concat!($base, "/{id}/translations/{locale}"), operation_id = concat!("translate", stringify!($kind)),
                tag = "locales", request_body = Translate, security(("bearer" = [])),
                params(("id" = String, Path, description = concat!("The ", $noun, "'s id")), ("locale" = String, Path, description = "One of the site's locales other than the default")),
                responses((status = 200, description = "The translation", body = Translation), (status = 404, body = ErrorBody),
                    (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
            pub async fn $put(
                State(state): State<AppState>,
                caller: Caller,
                ApiPath((id, locale)): ApiPath<(String, String)>,
                ApiJson(body): ApiJson<Translate>,
            ) -> ApiResult<Json<Translation>> {
                let services = state.registry().services();
                let acting = caller.acting();
                let kind = EntityKind::$kind;
                Ok(Json(locales::translate(services, &acting, kind, &id, &locale, body.fields, body.publish).await?))
            }
        )*
    };
}

translation_routes! {
    page_translations, translate_page: Page "/api/v1/pages" "pages" "page";
    entry_translations, translate_entry: Entry "/api/v1/entries" "entries" "entry";
    navigation_translations, translate_navigation: Navigation "/api/v1/navigations" "navigation" "navigation";
}
