//! The OpenAPI 3.1 document, generated from the handlers' annotations, and
//! the offline docs UI (Swagger UI, vendored into the binary).

use crate::AppState;
use crate::routes::{self, ListResponse};
use axum::Router;
use quire_core::model::*;
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Response, ResponseBuilder};
use utoipa::{Modify, OpenApi};
use utoipa_swagger_ui::SwaggerUi;

/// The API description.
#[derive(OpenApi)]
#[openapi(
    info(title = "Quire API", description = "Headless CMS with a governed agent. Every non-delivery route needs `Authorization: Bearer <token>`; the token decides the site, and `X-Quire-Env` picks one of its environments."),
    paths(
        routes::system::me, routes::preferences::preferences, routes::preferences::set_preferences,
        routes::pages::list, routes::pages::create, routes::pages::read, routes::pages::update, routes::pages::archive,
        routes::sections::list, routes::sections::create, routes::sections::read, routes::sections::update, routes::sections::archive,
        routes::templates::list, routes::templates::create, routes::templates::read, routes::templates::update, routes::templates::archive,
        routes::collections::list, routes::collections::create, routes::collections::read, routes::collections::update, routes::collections::archive,
        routes::collections::list_entries, routes::collections::create_entry, routes::collections::read_entry,
        routes::collections::update_entry, routes::collections::archive_entry,
        routes::images::list, routes::images::create, routes::images::read, routes::images::update, routes::images::archive,
        routes::uploads::upload, routes::jobs::read, routes::jobs::of_image,
        routes::navigation::list, routes::navigation::create, routes::navigation::read, routes::navigation::update, routes::navigation::archive,
        routes::navigation::list_items, routes::navigation::create_item, routes::navigation::read_item,
        routes::navigation::update_item, routes::navigation::archive_item,
        routes::moving::move_page, routes::moving::move_section, routes::moving::move_nav_item,
        routes::publishing::publish_page, routes::publishing::unpublish_page, routes::publishing::discard_page, routes::publishing::page_publication,
        routes::publishing::publish_entry, routes::publishing::unpublish_entry, routes::publishing::discard_entry, routes::publishing::entry_publication,
        routes::publishing::publish_navigation, routes::publishing::unpublish_navigation, routes::publishing::discard_navigation,
        routes::publishing::navigation_publication,
        routes::publishing::publish_translation, routes::publishing::unpublish_translation,
        routes::publishing::discard_translation,
        routes::locales::list, routes::locales::set, routes::locales::page_translations, routes::locales::translate_page,
        routes::locales::entry_translations, routes::locales::translate_entry,
        routes::locales::navigation_translations, routes::locales::translate_navigation,
        routes::releases::list, routes::releases::create, routes::releases::read, routes::releases::update,
        routes::releases::stage, routes::releases::unstage, routes::releases::publish, routes::releases::revert,
        routes::releases::discard,
        routes::schedules::list, routes::schedules::create, routes::schedules::read, routes::schedules::cancel,
        routes::site::read, routes::site::update, routes::site::preview_link,
        routes::sites::list, routes::sites::create, routes::sites::rename, routes::sites::archive, routes::sites::restore,
        routes::environments::list, routes::environments::create, routes::environments::one, routes::environments::update,
        routes::environments::archive, routes::environments::restore, routes::environments::compare, routes::environments::promote,
        routes::environments::promotions, routes::environments::undo,
        routes::archive::list, routes::archive::read, routes::archive::restore, routes::archive::restore_many,
        routes::changes::list, routes::changes::read, routes::changes::revisions, routes::changes::restore,
        routes::delivery::page, routes::delivery::navigation, routes::delivery::entries,
        routes::tools::list, routes::tools::categories, routes::tools::read, routes::tools::invoke,
        routes::tools::approvals, routes::tools::approve, routes::tools::reject,
        routes::agents::list, routes::agents::create, routes::agents::read, routes::agents::update,
        routes::agents::chat, routes::agents::chat_stream, routes::agents::sessions, routes::agents::session, routes::agents::events, routes::agents::undo,
        routes::agui::run,
        routes::openai::models, routes::openai::model, routes::openai::complete,
        routes::tokens::list, routes::tokens::create, routes::tokens::read, routes::tokens::revoke,
        routes::users::list, routes::users::invite, routes::users::read, routes::users::update, routes::users::remove, routes::users::link,
        routes::webhooks::list, routes::webhooks::create, routes::webhooks::read, routes::webhooks::archive,
        routes::webhooks::rotate, routes::webhooks::retire, routes::webhooks::deliveries, routes::webhooks::redeliver,
    ),
    components(schemas(ListResponse<Page>, Change, Archive, EntityKind)),
    modifiers(&BearerAuth, &ErrorResponses, &Links),
    tags(
        (name = "pages", description = "The page tree"),
        (name = "sections", description = "Sections placed on pages"),
        (name = "section-templates", description = "Shapes of sections"),
        (name = "collections", description = "Collections of entries"),
        (name = "entries", description = "Entries and posts"),
        (name = "images", description = "Media library records"),
        (name = "navigation", description = "Menus and their items"),
        (name = "releases", description = "Sets of documents published together, now or at a time, and reverted together"),
        (name = "schedules", description = "Releases and documents published at a time"),
        (name = "archive", description = "Archived records and restore"),
        (name = "changes", description = "Change log, revisions, revert"),
        (name = "delivery", description = "Public published content"),
        (name = "tools", description = "The tool registry: list, describe, invoke"),
        (name = "approvals", description = "Approving or rejecting destructive tool calls"),
        (name = "agents", description = "Agents, chat sessions, their event streams and undo"),
        (name = "openai", description = "The agents as models of an OpenAI-compatible API (`/v1`, for OpenAI's clients): errors in OpenAI's shape"),
        (name = "tokens", description = "The site's API tokens: list, create, read, revoke (admins)"),
        (name = "users", description = "The site's people: list, invite, change group, environments or account, take the site from them (admins)"),
        (name = "webhooks", description = "Subscriptions to the site's events, signed as Standard Webhooks, and their delivery log (admins)"),
        (name = "environments", description = "The site's environments: make, copy, rename, lock, archive; compare two and promote what differs"),
        (name = "sites", description = "The instance's sites, for its administrator: list, create, rename, archive, restore"),
        (name = "locales", description = "The site's languages, and the translations of its pages, entries and navigations"),
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

/// Documents the error answers every operation can give, so no annotation
/// can forget them: 400 (a malformed parameter, header or body) everywhere;
/// 401 and 403 (no valid token; a group or environment the token may not
/// use) where a token is needed; 413 and 415 where a body is read. It also
/// gives every response without a description the one its status means.
/// Route-specific answers (404, 409, 422, 428, ...) stay in the annotations.
struct ErrorResponses;

impl Modify for ErrorResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for (path, item) in openapi.paths.paths.iter_mut() {
            // The OpenAI-compatible routes answer OpenAI's error shape.
            let shape = if path.starts_with("/v1/") { "OpenAiErrorBody" } else { "ErrorBody" };
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
                &mut item.head,
                &mut item.options,
            ];
            for operation in operations.into_iter().flatten() {
                let secured = operation.security.as_ref().is_some_and(|s| !s.is_empty());
                let body = operation.request_body.is_some();
                let responses = &mut operation.responses.responses;
                let mut add = |status: &str| {
                    responses.entry(status.to_string()).or_insert_with(|| error_response(status, shape).into());
                };
                add("400");
                if secured {
                    add("401");
                    add("403");
                }
                if body {
                    add("413");
                    add("415");
                }
                if secured {
                    // Fair use: requests a minute per token or person.
                    responses.entry("429".to_string()).or_insert_with(|| limit_response(shape).into());
                }
                for (status, response) in responses.iter_mut() {
                    if let RefOr::T(response) = response
                        && response.description.is_empty()
                    {
                        response.description = meaning(status).to_string();
                    }
                }
            }
        }
    }
}

/// OpenAPI links: where an answer's ids lead (a created page to reading,
/// changing and archiving it, ...), so clients and stateful testers can
/// follow one operation with the next. Each row: the operation and status
/// answering, the link's name, the operation it leads to, and that
/// operation's parameters as runtime expressions.
const LINKS: &[LinkRow] = &[
    ("createPage", "201", "GetPage", "getPage", &[("id", "$response.body#/id")]),
    ("createPage", "201", "UpdatePage", "updatePage", &[("id", "$response.body#/id")]),
    ("createPage", "201", "ArchivePage", "archivePage", &[("id", "$response.body#/id")]),
    ("createPage", "201", "ListSections", "listSections", &[("id", "$response.body#/id")]),
    ("createPage", "201", "CreateSection", "createSection", &[("id", "$response.body#/id")]),
    ("createSection", "201", "GetSection", "getSection", &[("id", "$response.body#/id")]),
    ("createSection", "201", "UpdateSection", "updateSection", &[("id", "$response.body#/id")]),
    ("createSection", "201", "ArchiveSection", "archiveSection", &[("id", "$response.body#/id")]),
    ("listSections", "200", "GetSection", "getSection", &[("id", "$response.body#/items/0/id")]),
    ("createSectionTemplate", "201", "GetTemplate", "getSectionTemplate", &[("key", "$response.body#/key")]),
    ("createSectionTemplate", "201", "UpdateTemplate", "updateSectionTemplate", &[("key", "$response.body#/key")]),
    ("createSectionTemplate", "201", "ArchiveTemplate", "archiveSectionTemplate", &[("key", "$response.body#/key")]),
    ("createCollection", "201", "GetCollection", "getCollection", &[("slug", "$response.body#/slug")]),
    ("createCollection", "201", "UpdateCollection", "updateCollection", &[("slug", "$response.body#/slug")]),
    ("createCollection", "201", "ArchiveCollection", "archiveCollection", &[("slug", "$response.body#/slug")]),
    ("createCollection", "201", "ListEntries", "listEntries", &[("slug", "$response.body#/slug")]),
    ("createCollection", "201", "CreateEntry", "createEntry", &[("slug", "$response.body#/slug")]),
    ("createEntry", "201", "GetEntry", "getEntry", &[("id", "$response.body#/id")]),
    ("createEntry", "201", "UpdateEntry", "updateEntry", &[("id", "$response.body#/id")]),
    ("createEntry", "201", "ArchiveEntry", "archiveEntry", &[("id", "$response.body#/id")]),
    // A new image is a 202 (processing); a file already in the library, 200.
    ("createImage", "202", "GetImage", "getImage", &[("id", "$response.body#/id")]),
    ("createImage", "202", "UpdateImage", "updateImage", &[("id", "$response.body#/id")]),
    ("createImage", "202", "ArchiveImage", "archiveImage", &[("id", "$response.body#/id")]),
    ("createImage", "200", "GetImage", "getImage", &[("id", "$response.body#/id")]),
    // A navigation is linked by id (its routes take its key or its id), so
    // archiving it through a link reaches every route under that id.
    ("createNavigation", "201", "GetNavigation", "getNavigation", &[("key", "$response.body#/id")]),
    ("createNavigation", "201", "UpdateNavigation", "updateNavigation", &[("key", "$response.body#/id")]),
    ("createNavigation", "201", "ArchiveNavigation", "archiveNavigation", &[("key", "$response.body#/id")]),
    ("createNavigation", "201", "ListNavItems", "listNavItems", &[("key", "$response.body#/id")]),
    ("createNavigation", "201", "CreateNavItem", "createNavItem", &[("key", "$response.body#/id")]),
    ("createNavItem", "201", "GetNavItem", "getNavItem", &[("id", "$response.body#/id")]),
    ("createNavItem", "201", "UpdateNavItem", "updateNavItem", &[("id", "$response.body#/id")]),
    ("createNavItem", "201", "ArchiveNavItem", "archiveNavItem", &[("id", "$response.body#/id")]),
    ("archivePage", "200", "GetArchive", "getArchive", &[("id", "$response.body#/id")]),
    ("listArchives", "200", "GetArchive", "getArchive", &[("id", "$response.body#/items/0/id")]),
    ("listChanges", "200", "GetChange", "getChange", &[("id", "$response.body#/items/0/id")]),
    ("getChange", "200", "RestoreRevision", "restoreRevision", &[("id", "$response.body#/id")]),
    (
        "getChange",
        "200",
        "ListRevisions",
        "listRevisions",
        &[("entity", "$response.body#/entity"), ("id", "$response.body#/entityId")],
    ),
    ("listTools", "200", "GetTool", "getTool", &[("name", "$response.body#/items/0/name")]),
    ("listApprovals", "200", "ApproveCall", "approveCall", &[("id", "$response.body#/items/0/id")]),
    ("listApprovals", "200", "RejectCall", "rejectCall", &[("id", "$response.body#/items/0/id")]),
    ("createAgent", "201", "GetAgent", "getAgent", &[("alias", "$response.body#/alias")]),
    ("createAgent", "201", "UpdateAgent", "updateAgent", &[("alias", "$response.body#/alias")]),
    ("createAgent", "201", "ChatWithAgent", "chatWithAgent", &[("alias", "$response.body#/alias")]),
    ("chatWithAgent", "202", "GetSession", "getSession", &[("id", "$response.body#/sessionId")]),
    ("chatWithAgent", "202", "StreamEvents", "streamSessionEvents", &[("id", "$response.body#/sessionId")]),
    (
        "chatWithAgent",
        "202",
        "UndoTurn",
        "undoTurn",
        &[("id", "$response.body#/sessionId"), ("turn", "$response.body#/turn")],
    ),
    ("listSessions", "200", "GetSession", "getSession", &[("id", "$response.body#/items/0/id")]),
    ("createToken", "201", "GetToken", "getToken", &[("id", "$response.body#/id")]),
    ("createToken", "201", "RevokeToken", "revokeToken", &[("id", "$response.body#/id")]),
];

/// One link: from operation, status, link name, to operation, parameters.
type LinkRow = (&'static str, &'static str, &'static str, &'static str, &'static [(&'static str, &'static str)]);

/// Adds [`LINKS`] to the responses they start from.
struct Links;

impl Modify for Links {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            let operations = [&mut item.get, &mut item.put, &mut item.post, &mut item.delete, &mut item.patch];
            for operation in operations.into_iter().flatten() {
                let Some(id) = operation.operation_id.clone() else { continue };
                for (from, status, name, to, parameters) in LINKS.iter().filter(|l| l.0 == id) {
                    let Some(RefOr::T(response)) = operation.responses.responses.get_mut(*status) else {
                        tracing::warn!(operation = from, status, "OpenAPI link from an undocumented response");
                        continue;
                    };
                    let link = parameters.iter().fold(LinkBuilder::new().operation_id(*to), |link, (param, expr)| {
                        link.parameter(*param, *expr)
                    });
                    response.links.insert(name.to_string(), link.build().into());
                }
            }
        }
    }
}

/// An error response in the one JSON shape (`shape`: its schema's name).
fn error_response(status: &str, shape: &str) -> Response {
    ResponseBuilder::new()
        .description(meaning(status))
        .content("application/json", ContentBuilder::new().schema(Some(Ref::from_schema_name(shape))).build())
        .build()
}

/// 429 with its `Retry-After`: a limit of fair use was reached.
fn limit_response(shape: &str) -> Response {
    let seconds =
        utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::schema::Type::Integer).minimum(Some(1));
    let header = utoipa::openapi::HeaderBuilder::new()
        .schema(Some(seconds))
        .description(Some("Seconds until the request may be tried again"))
        .build();
    ResponseBuilder::new()
        .description(meaning("429"))
        .header("Retry-After", header)
        .content("application/json", ContentBuilder::new().schema(Some(Ref::from_schema_name(shape))).build())
        .build()
}

/// What a status means in this API.
fn meaning(status: &str) -> &'static str {
    match status {
        "200" => "OK",
        "201" => "Created",
        "202" => "Accepted",
        "400" => "Bad request: a malformed parameter, header or body; `field` names it",
        "401" => "No valid bearer token",
        "403" => "The token's group may not do this, or the token may not use the environment",
        "404" => "No such record",
        "409" => "Conflict: a slug or key in use, or a state that forbids this",
        "413" => "The body is larger than 2 MiB",
        "415" => "The body is not sent as application/json",
        "422" => "Validation failed: `field` and `details` name the broken rules",
        "428" => "The call waits for a person's approval",
        "429" => {
            "A limit was reached (requests a minute per token or person, agent turns, a tool's own); `Retry-After` says when to try again when it is known"
        }
        "500" => "Internal error; see the server log",
        "502" => "An outside service failed",
        _ => "See the error body",
    }
}

/// `/api/openapi.json` and `/api/docs`.
pub fn router() -> Router<AppState> {
    Router::new().merge(SwaggerUi::new("/api/docs").url("/api/openapi.json", ApiDoc::openapi()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation of the document, by its operationId.
    fn operations(doc: &utoipa::openapi::OpenApi) -> Vec<&utoipa::openapi::path::Operation> {
        doc.paths
            .paths
            .values()
            .flat_map(|item| [&item.get, &item.put, &item.post, &item.delete, &item.patch])
            .flatten()
            .collect()
    }

    #[test]
    fn every_link_hangs_from_a_documented_response_and_leads_to_an_operation() {
        let doc = ApiDoc::openapi();
        let ops = operations(&doc);
        let by_id = |id: &str| ops.iter().find(|o| o.operation_id.as_deref() == Some(id)).copied();
        for (from, status, name, to, _) in LINKS {
            let operation = by_id(from).unwrap_or_else(|| panic!("a link starts at {from}, which is no operation"));
            let Some(RefOr::T(response)) = operation.responses.responses.get(*status) else {
                panic!("link {name} hangs from {from}'s {status}, which the document does not list")
            };
            assert!(response.links.contains_key(*name), "{from} {status} lacks link {name}");
            assert!(by_id(to).is_some(), "link {name} of {from} leads to {to}, which is no operation");
        }
    }
}
