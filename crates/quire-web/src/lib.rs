//! Quire's back-office: the screens editors use in a browser.
//!
//! Server-rendered HTML (askama templates, escaped by default) with plain
//! forms that work without JavaScript, enhanced by one small script of our
//! own (`assets/app.js`) for list fields, autosaving drafts and the chat
//! sidebar. Every screen parses its input, calls the use cases of
//! `quire_app` as the signed-in person (the [`quire_app::Actor`] of their
//! browser session, as the REST API's) and renders the answer: the use
//! cases decide who may do what and log each change as the person's, so
//! no rule is written twice. A form the server refuses is shown again with
//! each error next to the field it names.
//!
//! Security: a Content-Security-Policy without inline scripts or styles,
//! framing refused, `nosniff`; the session cookie is HttpOnly and
//! SameSite=Lax; every form that changes something carries the session's
//! CSRF secret, checked by [`csrf_guard`] before any handler runs.

mod actions;
mod admin;
mod agents;
mod approvals_mine;
mod archive;
mod assets;
mod bulk;
mod card;
mod entries;
mod environments;
mod error;
mod finding;
mod form;
mod frame;
mod history;
mod media;
mod names;
mod navigation;
mod notes;
mod oauth;
mod pages;
mod preview;
mod previews;
mod publishing;
mod releases;
mod removal;
mod screen;
mod sidebar;
mod sign_in;
mod sites;
mod translations;
mod users;
mod webhooks;

pub use error::WebError;

use axum::Router;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderValue, Method, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use quire_app::content::Content;
use quire_app::people::WebSession;
use quire_app::{Actor, Permission};
use quire_core::model::EntityKind;
use quire_server::AppState;
use quire_server::auth::{Caller, same_secret};

/// The back-office's routes (merge into the server's router).
pub fn router(state: AppState) -> Router<AppState> {
    let throttle = quire_app::people::Throttle::default();
    Router::new()
        .route("/", get(finding::dashboard))
        .route("/search", get(finding::search))
        .route("/pages/bulk", post(finding::pages))
        .route("/collections/{slug}/bulk", post(finding::entries))
        .route("/sign-in", get(sign_in::form).post(sign_in::submit))
        .route("/sign-in/link/{secret}", get(sign_in::link_form).post(sign_in::link_submit))
        .route("/sign-out", post(sign_in::sign_out))
        .route("/switch", post(frame::switch))
        .route("/theme", post(frame::theme))
        .route("/pages", get(pages::tree).post(pages::create))
        .route("/pages/{id}", get(pages::edit).post(pages::update))
        .route("/pages/{id}/move", post(pages::move_page))
        .route("/pages/{id}/publishing", post(pages::publishing))
        .route("/pages/{id}/preview", get(previews::page))
        .route("/entries/{id}/preview", get(previews::entry))
        .route("/entries/{id}/publishing", post(entries::publishing))
        .route("/navigation/{id}/publishing", post(navigation::publishing))
        .route("/releases", get(releases::list).post(releases::create))
        .route("/releases/{id}", get(releases::show).post(releases::update))
        .route("/releases/{id}/{action}", post(releases::act))
        .route("/schedules/{id}/cancel", post(releases::cancel_schedule))
        .route("/ai/sessions/{id}/releases", get(sidebar::releases))
        .route("/ai/sessions/{id}", get(sidebar::conversation))
        .route("/ai/approvals/{id}", get(sidebar::approval))
        .route("/pages/{id}/sections/new", get(pages::new_section).post(pages::create_section))
        .route("/pages/{id}/sections/{section}/move", post(pages::move_section))
        .route("/sections/{id}", get(pages::edit_section).post(pages::update_section))
        .route("/collections", get(entries::list))
        .route("/collections/{slug}", get(entries::entries).post(entries::create))
        .route("/entries/{id}", get(entries::edit).post(entries::update))
        .route("/media", get(media::grid))
        .route("/media/{id}", get(media::show).post(media::update))
        .route("/media/{id}/archive", confirming(EntityKind::Image).post(media::archive))
        .route("/navigation", get(navigation::list).post(navigation::create))
        .route("/navigation/{id}", get(navigation::show))
        .route("/navigation/{id}/items", post(navigation::add_item))
        .route("/nav-items/{id}", get(navigation::edit_item).post(navigation::update_item))
        .route("/nav-items/{id}/move", post(navigation::move_item))
        .route("/nav-items/{id}/archive", confirming(EntityKind::NavItem).post(navigation::archive_item))
        .route("/notes", get(notes::folder).post(notes::create))
        .route("/notes/edit", get(notes::edit).post(notes::save))
        .route("/notes/archive", post(notes::archive))
        .route("/preview", post(preview::markdown))
        .route("/names", get(names::lookup))
        .route("/history", get(history::list))
        .route("/history/{id}", get(history::show))
        .route("/history/{id}/restore", get(removal::confirm_revision).post(history::restore))
        .route("/history/{id}/undo-turn", post(history::undo))
        .route("/archive", get(archive::list))
        .route("/archive/{id}/restore", get(removal::confirm_restore).post(archive::restore))
        .route("/approvals", get(admin::approvals))
        .route("/approvals/{id}", post(admin::answer_one))
        .route("/me/approvals", get(approvals_mine::show).post(approvals_mine::update))
        .route("/agents", get(agents::list))
        .route("/agents/{alias}", get(agents::edit).post(agents::update))
        .route("/tokens", get(admin::tokens).post(admin::create))
        .route("/site", get(previews::show).post(previews::update))
        .route("/tokens/{id}/revoke", get(removal::confirm_revoke).post(admin::revoke))
        .route("/pages/{id}/translations/{locale}", get(translations::page).post(translations::save_page))
        .route("/entries/{id}/translations/{locale}", get(translations::entry).post(translations::save_entry))
        .route("/users", get(users::list).post(users::invite))
        .route("/users/{id}", post(users::update))
        .route("/users/{id}/disable", get(users::confirm_disable).post(users::disable))
        .route("/users/{id}/enable", post(users::enable))
        .route("/users/{id}/remove", get(users::confirm_remove).post(users::remove))
        .route("/users/{id}/link", post(users::link))
        .route("/pages/{id}/archive", archiving(EntityKind::Page))
        .route("/sections/{id}/archive", archiving(EntityKind::Section))
        .route("/entries/{id}/archive", archiving(EntityKind::Entry))
        .route("/environments", get(environments::list).post(environments::create))
        .route("/environments/compare", get(environments::compare))
        .route("/environments/{key}", post(environments::update))
        .route("/environments/{key}/archive", get(environments::confirm_archive).post(environments::archive))
        .route("/environments/{key}/restore", post(environments::restore))
        .route("/environments/{key}/promote", post(environments::promote))
        .route("/environments/{key}/promotions/{id}/undo", get(environments::confirm_undo).post(environments::undo))
        .route("/sites", get(sites::list).post(sites::create))
        .route("/sites/{id}", post(sites::rename))
        .route("/sites/{id}/archive", get(sites::confirm_archive).post(sites::archive))
        .route("/sites/{id}/restore", post(sites::restore))
        .route("/webhooks", get(webhooks::list).post(webhooks::create))
        .route("/webhooks/{id}", get(webhooks::show))
        .route("/webhooks/{id}/secrets", post(webhooks::secrets))
        .route("/webhooks/{id}/archive", get(webhooks::confirm_archive).post(webhooks::archive))
        .route("/webhooks/{id}/deliveries/{delivery}/again", post(webhooks::again))
        .route("/oauth/authorize", get(oauth::form).post(oauth::submit))
        .route("/assets/{name}", get(assets::serve))
        .route("/favicon.ico", get(assets::favicon))
        .layer(axum::Extension(throttle))
        .layer(middleware::from_fn_with_state(state, csrf_guard))
        .layer(middleware::from_fn(security_headers))
}

/// The question archiving a record of `kind` asks first, at its editor's
/// `…/archive`.
fn confirming(kind: EntityKind) -> axum::routing::MethodRouter<AppState> {
    get(move |person: Person, Path(id): Path<String>| removal::confirm_archive(person, kind, id))
}

/// The archive routes of an editor of `kind`: the question, and the
/// archive it asks about.
fn archiving(kind: EntityKind) -> axum::routing::MethodRouter<AppState> {
    confirming(kind).post(move |person: Person, Path(id): Path<String>| removal::archive(person, kind, id))
}

/// The back-office's content security policy.
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                              connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Adds the headers every back-office response carries.
async fn security_headers(req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    let headers = response.headers_mut();
    // A screen may widen its own policy (the OAuth consent screen's form
    // answers with a redirect to the application).
    headers.entry(header::CONTENT_SECURITY_POLICY).or_insert(HeaderValue::from_static(CSP));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// Largest form body the back-office reads, in bytes.
const FORM_LIMIT: usize = 1024 * 1024;

/// Field of every state-changing form that carries the CSRF secret.
pub const CSRF_FIELD: &str = "_csrf";

/// Refuses a state-changing request that comes from another origin, or
/// that a signed-in browser sends without the session's CSRF secret (in
/// the `_csrf` form field or the `x-csrf-token` header). Reads are let
/// through; so is a form of someone not signed in (the sign-in form), whose
/// origin is still checked.
async fn csrf_guard(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return next.run(req).await;
    }
    if let Err(e) = same_origin(req.headers()) {
        return e.into_response();
    }
    let (parts, body) = req.into_parts();
    let session = match quire_server::auth::web_session(&parts, &state).await {
        Ok(s) => s,
        Err(e) => return WebError::from(e).into_response(),
    };
    // The sign-in forms carry no session's token (a browser may still hold
    // an old session while someone signs in); their Origin was checked.
    let signing_in = parts.uri.path() == "/sign-in" || parts.uri.path().starts_with("/sign-in/link/");
    let Some(session) = session.filter(|_| !signing_in) else {
        // Not signed in: only the sign-in forms answer; the rest redirect.
        return next.run(Request::from_parts(parts, body)).await;
    };
    let bytes = match axum::body::to_bytes(body, FORM_LIMIT).await {
        Ok(b) => b,
        Err(_) => return WebError::TooLarge.into_response(),
    };
    let from_header = parts.headers.get(quire_server::auth::CSRF_HEADER).and_then(|v| v.to_str().ok());
    let from_form = serde_urlencoded::from_bytes::<Vec<(String, String)>>(&bytes)
        .ok()
        .and_then(|pairs| pairs.into_iter().find(|(k, _)| k == CSRF_FIELD).map(|(_, v)| v));
    let sent = from_header.map(str::to_string).or(from_form).unwrap_or_default();
    if !same_secret(&sent, &session.csrf) {
        return WebError::Forbidden(
            "this form has expired or did not come from this site (its CSRF token does not match); reload the page \
             and try again"
                .into(),
        )
        .into_response();
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await
}

/// Refuses a request whose `Origin` is another site's (a request without
/// one is a browser's same-origin form or not a browser's at all).
fn same_origin(headers: &axum::http::HeaderMap) -> Result<(), WebError> {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else { return Ok(()) };
    // The Host this server was asked for, or the one a proxy in front says.
    let hosts = [header::HOST.as_str(), "x-forwarded-host"]
        .map(|h| headers.get(h).and_then(|v| v.to_str().ok()).unwrap_or("").to_string());
    let same = origin.split_once("://").is_some_and(|(_, rest)| hosts.iter().any(|h| !h.is_empty() && h == rest));
    if same { Ok(()) } else { Err(WebError::Forbidden(format!("a form from {origin} cannot change anything here"))) }
}

/// The back-office's routes that take files, with a body limit of
/// `max_upload` bytes plus room for the form around them (merge into the
/// server's router beside its own file routes, outside the 2 MiB limit).
/// The CSRF secret is checked by the handler: it is the form's first
/// field, read before any file.
pub fn file_router(max_upload: u64) -> Router<AppState> {
    let routes = Router::new().route("/media/upload", post(media::upload));
    quire_server::multipart::with_upload_limit(routes, max_upload).layer(middleware::from_fn(security_headers))
}

/// The `Set-Cookie` value of a browser session (`secret` empty: one that
/// clears it). Over https it is `Secure` and named with the `__Host-`
/// prefix.
fn session_cookie(secret: &str, max_age: i64, secure: bool) -> String {
    format!(
        "{}={secret}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{}",
        quire_server::auth::session_cookie_name(secure),
        if secure { "; Secure" } else { "" }
    )
}

/// The signed-in person of a back-office request; anyone else is sent to
/// the sign-in form (and back here after signing in).
pub struct Person {
    /// The browser session.
    pub session: WebSession,
    /// The site's records as the person may read and change them, in the
    /// session's site and environment; its actor is the one every other use
    /// case is called as.
    pub content: Content,
    /// The colour theme chosen in this browser (`dark`, `light`; "": the system's).
    pub theme: &'static str,
    /// Whether they are the instance's administrator, who manages sites.
    pub manages_sites: bool,
}

impl Person {
    /// Who acts: the person, through the back-office, as the use cases
    /// know them.
    pub fn actor(&self) -> &Actor {
        self.content.actor()
    }

    /// Refuses, as the use cases would, unless the person may do
    /// `permission`: a screen's own gate, for a form that reads the record
    /// it changes before it writes, so that someone who may not change it
    /// hears that rather than what the form got wrong.
    pub fn require(&self, permission: Permission<'_>) -> Result<(), WebError> {
        Ok(quire_app::authorize(self.actor(), permission)?)
    }
}

impl axum::extract::FromRequestParts<AppState> for Person {
    type Rejection = WebError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        match quire_server::auth::web_session(parts, state).await? {
            Some(session) => {
                let caller = Caller {
                    who: quire_server::auth::Who::Person(session.clone()),
                    scope: session.scope.clone(),
                    session: quire_server::auth::client_session(&parts.headers),
                };
                let theme = frame::theme_of(&parts.headers);
                let actor = caller.acting();
                let manages_sites = quire_app::sites::manages(state.registry().services(), &actor).await;
                Ok(Person { content: Content::new(state.store().clone(), actor), session, theme, manages_sites })
            }
            None => {
                let next = parts.uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_default();
                Err(WebError::SignIn { next })
            }
        }
    }
}
