//! Publishing the documents — a page with its sections, an entry, a
//! navigation with its items: `POST {document}/publish`, `/unpublish` and
//! `/discard`, and `GET {document}/publication`. Writes change drafts; these
//! make a draft public, take a document off the site, or give a draft up.

use crate::auth::Records;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::ApiPath;
use axum::Json;
use axum::Router;
use quire_core::model::EntityKind;
use quire_store::Publication;

/// Declares each route once: its handler, method, path, operation, tag,
/// the path parameter, the `Content` call and the kind it takes.
macro_rules! publishing_routes {
    ($($(#[doc = $doc:tt])* $name:ident: $method:ident $path:tt $op:tt $tag:tt ($param:tt: $about:tt)
        => $call:ident($kind:ident) $answer:tt;)*) => {
        $(
            $(#[doc = $doc])*
            #[utoipa::path($method, path = $path, operation_id = $op, tag = $tag,
                params(($param = String, Path, description = $about)), security(("bearer" = [])),
                responses((status = 200, description = $answer, body = Publication), (status = 404, body = ErrorBody),
                    (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
            pub async fn $name(records: Records, ApiPath(id): ApiPath<String>) -> ApiResult<Json<Publication>> {
                Ok(Json(records.$call(EntityKind::$kind, &id).await?))
            }
        )*

        /// Routes of this module.
        pub fn router() -> Router<crate::AppState> {
            Router::new()$(.route($path, axum::routing::$method($name)))*
        }
    };
}

publishing_routes! {
    /// Publishes a page with its sections as its draft is now.
    publish_page: post "/api/v1/pages/{id}/publish" "publishPage" "pages" ("id": "Page id")
        => publish(Page) "The page is published as its draft was";
    /// Takes a page off the public site (its status becomes unpublished).
    unpublish_page: post "/api/v1/pages/{id}/unpublish" "unpublishPage" "pages" ("id": "Page id")
        => unpublish(Page) "The page is off the public site";
    /// Gives up a page's draft: the page and its sections become what is published again.
    discard_page: post "/api/v1/pages/{id}/discard" "discardPageDraft" "pages" ("id": "Page id")
        => discard_draft(Page) "The page's draft is what is published again";
    /// Whether a page is published, and whether its draft differs from it.
    page_publication: get "/api/v1/pages/{id}/publication" "getPagePublication" "pages" ("id": "Page id")
        => publication(Page) "Where the page stands";

    /// Publishes an entry (a post) as its draft is now.
    publish_entry: post "/api/v1/entries/{id}/publish" "publishEntry" "entries" ("id": "Entry id")
        => publish(Entry) "The entry is published as its draft was";
    /// Takes an entry off the public site (its status becomes draft).
    unpublish_entry: post "/api/v1/entries/{id}/unpublish" "unpublishEntry" "entries" ("id": "Entry id")
        => unpublish(Entry) "The entry is off the public site";
    /// Gives up an entry's draft: it becomes what is published again.
    discard_entry: post "/api/v1/entries/{id}/discard" "discardEntryDraft" "entries" ("id": "Entry id")
        => discard_draft(Entry) "The entry's draft is what is published again";
    /// Whether an entry is published, and whether its draft differs from it.
    entry_publication: get "/api/v1/entries/{id}/publication" "getEntryPublication" "entries" ("id": "Entry id")
        => publication(Entry) "Where the entry stands";

    /// Publishes a navigation with its items as its draft is now.
    publish_navigation: post "/api/v1/navigations/{key}/publish" "publishNavigation" "navigation"
        ("key": "Navigation key or id") => publish(Navigation) "The navigation is published as its draft was";
    /// Takes a navigation off the public site.
    unpublish_navigation: post "/api/v1/navigations/{key}/unpublish" "unpublishNavigation" "navigation"
        ("key": "Navigation key or id") => unpublish(Navigation) "The navigation is off the public site";
    /// Gives up a navigation's draft: it and its items become what is published again.
    discard_navigation: post "/api/v1/navigations/{key}/discard" "discardNavigationDraft" "navigation"
        ("key": "Navigation key or id") => discard_draft(Navigation) "The navigation's draft is what is published again";
    /// Whether a navigation is published, and whether its draft differs from it.
    navigation_publication: get "/api/v1/navigations/{key}/publication" "getNavigationPublication" "navigation"
        ("key": "Navigation key or id") => publication(Navigation) "Where the navigation stands";

    /// Publishes a translation (a document's values in one locale) as its draft is now.
    publish_translation: post "/api/v1/translations/{id}/publish" "publishTranslation" "locales" ("id": "Translation id")
        => publish(Translation) "The translation is published as its draft was";
    /// Takes a translation off the public site: readers of its locale get the fallbacks' values.
    unpublish_translation: post "/api/v1/translations/{id}/unpublish" "unpublishTranslation" "locales"
        ("id": "Translation id") => unpublish(Translation) "The translation is off the public site";
    /// Gives up a translation's draft: it becomes what is published again.
    discard_translation: post "/api/v1/translations/{id}/discard" "discardTranslationDraft" "locales"
        ("id": "Translation id") => discard_draft(Translation) "The translation's draft is what is published again";
}
