//! The authorization endpoint of OAuth for remote MCP clients
//! (`/oauth/authorize`, [decision 0048]): a person signed in to the
//! back-office sees which application asks, and chooses the site and environment,
//! the group it acts as (no higher than their own) and the tools it is
//! offered, then allows or denies. The checks are `quire_app::oauth`'s.
//!
//! [decision 0048]: ../../../docs/decisions/0048-oauth-for-remote-mcp.md

use crate::Person;
use crate::error::WebError;
use crate::form::Form;
use crate::frame::Frame;
use crate::pages::Head;
use askama::Template;
use axum::extract::{Query, State};
use axum::http;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::oauth::{self, Authorization, AuthorizeQuery, AuthorizeRefusal, Consent, TOOL_MODES};
use quire_core::access::Group;
use quire_server::AppState;
use serde::Deserialize;

#[derive(Template)]
#[template(path = "oauth.html")]
struct ConsentPage {
    head: Head,
    frame: Frame,
    /// The client's name.
    client: String,
    /// Where the answer goes (its host, or the whole URI for an app's scheme).
    returns_to: String,
    query: AuthorizeQuery,
    groups: Vec<&'static str>,
    tool_modes: &'static [(&'static str, &'static str)],
    error: Option<String>,
}

/// The form: the request's own fields, kept, and the person's choices.
#[derive(Debug, Deserialize)]
pub struct ConsentForm {
    #[serde(flatten)]
    query: AuthorizeQuery,
    place: Option<String>,
    group: Option<String>,
    tools: Option<String>,
    decision: Option<String>,
}

/// Checks the request; a refusal is shown, or sent back to the client.
async fn checked(state: &AppState, headers: &HeaderMap, query: &AuthorizeQuery) -> Result<Authorization, Response> {
    match oauth::check(state.store(), query, &state.mcp_resource(headers)).await {
        Ok(authorization) => Ok(authorization),
        Err(AuthorizeRefusal::Redirect(url)) => Err(Redirect::to(&url).into_response()),
        Err(AuthorizeRefusal::Show(why)) => Err(WebError::Status(
            StatusCode::BAD_REQUEST,
            format!("This application's request cannot be answered: {why}"),
        )
        .into_response()),
    }
}

/// The screen for `authorization`, with `error` beside the choices.
async fn screen(
    person: &Person,
    authorization: &Authorization,
    query: AuthorizeQuery,
    error: Option<String>,
) -> Result<ConsentPage, WebError> {
    let own = person.actor().group;
    let groups = [Group::Viewer, Group::Author, Group::Editor, Group::Admin]
        .into_iter()
        .filter(|g| *g <= own)
        .map(Group::as_str)
        .collect();
    let returns_to = match http::Uri::try_from(authorization.redirect_uri.as_str()) {
        Ok(uri) if matches!(uri.scheme_str(), Some("http" | "https")) => uri.host().unwrap_or_default().to_string(),
        _ => authorization.redirect_uri.clone(),
    };
    Ok(ConsentPage {
        head: Head::new(),
        frame: Frame::new(person, "/tokens"),
        client: authorization.client.name.clone(),
        returns_to,
        query,
        groups,
        tool_modes: &TOOL_MODES,
        error,
    })
}

/// The consent screen as a response: its form's answer is a redirect to
/// the application, so its policy lets a form lead there too.
fn consent_screen(status: StatusCode, html: String, authorization: &Authorization) -> Response {
    let mut response = (status, Html(html)).into_response();
    let target = match http::Uri::try_from(authorization.redirect_uri.as_str()) {
        Ok(uri) => match (uri.scheme_str(), uri.authority()) {
            (Some(scheme @ ("http" | "https")), Some(authority)) => format!("{scheme}://{authority}"),
            (Some(scheme), _) => format!("{scheme}:"),
            _ => String::new(),
        },
        Err(_) => String::new(),
    };
    let policy = crate::CSP.replace("form-action 'self'", &format!("form-action 'self' {target}"));
    if let Ok(value) = http::HeaderValue::from_str(&policy) {
        response.headers_mut().insert(http::header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// `GET /oauth/authorize`: the consent screen (after signing in).
pub async fn form(
    person: Person,
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<AuthorizeQuery>,
) -> Response {
    let authorization = match checked(&state, &headers, &query).await {
        Ok(a) => a,
        Err(answer) => return answer,
    };
    match screen(&person, &authorization, query, None).await.and_then(|p| Ok(p.render()?)) {
        Ok(html) => consent_screen(StatusCode::OK, html, &authorization),
        Err(e) => e.into_response(),
    }
}

/// `POST /oauth/authorize`: allow (the grant is made and the client gets
/// its code) or deny (it gets `access_denied`).
pub async fn submit(
    person: Person,
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<ConsentForm>,
) -> Response {
    let authorization = match checked(&state, &headers, &form.query).await {
        Ok(a) => a,
        Err(answer) => return answer,
    };
    if form.decision.as_deref() != Some("allow") {
        return Redirect::to(&oauth::denied(&authorization)).into_response();
    }
    let group = form.group.as_deref().map(Group::parse).transpose();
    let place = form.place.as_deref().and_then(|p| p.split_once('/'));
    let consent = match (group, place, form.tools) {
        (Ok(Some(group)), Some((site, environment)), Some(tools)) => {
            Consent { site: site.to_string(), environment: environment.to_string(), group, tools }
        }
        _ => {
            let why = "Choose the site and environment, the group and the tools.".to_string();
            return refused(&person, &authorization, form.query, why).await;
        }
    };
    let issuer = state.base_url(&headers);
    match oauth::consent(state.store(), person.actor(), &issuer, &authorization, consent).await {
        Ok(url) => Redirect::to(&url).into_response(),
        Err(e) => refused(&person, &authorization, form.query, e.message).await,
    }
}

/// The screen again with `why`, as 422.
async fn refused(person: &Person, authorization: &Authorization, query: AuthorizeQuery, why: String) -> Response {
    match screen(person, authorization, query, Some(why)).await.and_then(|p| Ok(p.render()?)) {
        Ok(html) => consent_screen(StatusCode::UNPROCESSABLE_ENTITY, html, authorization),
        Err(e) => e.into_response(),
    }
}
