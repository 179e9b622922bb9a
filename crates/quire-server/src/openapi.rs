//! The OpenAPI 3.1 document, generated from the handlers' annotations, and
//! the offline docs UI (Swagger UI, vendored into the binary).

use crate::AppState;
use crate::routes::{self, ListResponse};
use axum::Router;
use quire_core::model::*;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_swagger_ui::SwaggerUi;

/// The API description.
#[derive(OpenApi)]
#[openapi(
    info(title = "Quire API", description = "Headless CMS with a governed agent. Every non-delivery route needs `Authorization: Bearer <token>`; the token decides the site, and `X-Quire-Env` picks one of its environments."),
    paths(
        routes::system::me,
        routes::pages::list, routes::pages::create, routes::pages::read, routes::pages::update, routes::pages::archive,
        routes::sections::list, routes::sections::create, routes::sections::read, routes::sections::update, routes::sections::archive,
        routes::templates::list, routes::templates::create, routes::templates::read, routes::templates::update, routes::templates::archive,
        routes::collections::list, routes::collections::create, routes::collections::read, routes::collections::update, routes::collections::archive,
        routes::collections::list_entries, routes::collections::create_entry, routes::collections::read_entry,
        routes::collections::update_entry, routes::collections::archive_entry,
        routes::images::list, routes::images::create, routes::images::read, routes::images::update, routes::images::archive,
        routes::navigation::list, routes::navigation::create, routes::navigation::read, routes::navigation::update, routes::navigation::archive,
        routes::navigation::list_items, routes::navigation::create_item, routes::navigation::read_item,
        routes::navigation::update_item, routes::navigation::archive_item,
        routes::archive::list, routes::archive::read, routes::archive::restore, routes::archive::restore_many,
        routes::changes::list, routes::changes::read, routes::changes::revisions, routes::changes::restore,
        routes::delivery::page, routes::delivery::navigation, routes::delivery::entries,
        routes::tools::list, routes::tools::categories, routes::tools::read, routes::tools::invoke,
        routes::tools::approvals, routes::tools::approve, routes::tools::reject,
        routes::agents::list, routes::agents::create, routes::agents::read, routes::agents::update, routes::agents::disable,
        routes::agents::chat, routes::agents::chat_stream, routes::agents::sessions, routes::agents::session, routes::agents::events, routes::agents::undo,
        routes::tokens::list, routes::tokens::create, routes::tokens::revoke,
    ),
    components(schemas(ListResponse<Page>, Change, Archive, EntityKind)),
    modifiers(&BearerAuth),
    tags(
        (name = "pages", description = "The page tree"),
        (name = "sections", description = "Sections placed on pages"),
        (name = "section-templates", description = "Shapes of sections"),
        (name = "collections", description = "Collections of entries"),
        (name = "entries", description = "Entries and posts"),
        (name = "images", description = "Media library records"),
        (name = "navigation", description = "Menus and their items"),
        (name = "archive", description = "Archived records and restore"),
        (name = "changes", description = "Change log, revisions, revert"),
        (name = "delivery", description = "Public published content"),
        (name = "tools", description = "The tool registry: list, describe, invoke"),
        (name = "approvals", description = "Approving or rejecting destructive tool calls"),
        (name = "agents", description = "Agents, chat sessions, their event streams and undo"),
        (name = "tokens", description = "The site's API tokens: list, create, revoke (admins)"),
    )
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// `/api/openapi.json` and `/api/docs`.
pub fn router() -> Router<AppState> {
    Router::new().merge(SwaggerUi::new("/api/docs").url("/api/openapi.json", ApiDoc::openapi()))
}
