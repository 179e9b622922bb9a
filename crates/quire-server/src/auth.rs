//! Who is calling: the bearer token decides the caller's group and the
//! (site, environment) every read and write is confined to.

use crate::AppState;
use crate::error::ApiError;
use axum::extract::FromRequestParts;
use axum::http::Method;
use axum::http::request::Parts;
use quire_core::access::{Group, Permission, Principal, authorize};
use quire_core::model::{ChangeContext, Publishing, Surface};
use quire_store::{Scope, TokenInfo, WebSession};

/// Header that picks one of the token's environments (default: its first).
pub const ENV_HEADER: &str = "x-quire-env";

/// Header naming the caller's conversation session, if any.
pub const SESSION_HEADER: &str = "x-quire-session";

/// Who is calling.
#[derive(Debug, Clone)]
pub enum Who {
    /// An API token.
    Token(TokenInfo),
    /// A person signed in to the back-office, through their browser session.
    Person(WebSession),
}

/// An authenticated caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The token or browser session presented.
    pub who: Who,
    /// The scope every operation runs in; never taken from the body.
    pub scope: Scope,
    /// The client's own session its changes are grouped under
    /// ([`SESSION_HEADER`]), if it named one.
    pub session: Option<String>,
}

/// The session a request names in [`SESSION_HEADER`], if any.
pub fn client_session(headers: &axum::http::HeaderMap) -> Option<String> {
    headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_string)
}

impl Caller {
    /// The caller's group.
    pub fn group(&self) -> Group {
        match &self.who {
            Who::Token(t) => t.group,
            Who::Person(s) => s.user.group,
        }
    }

    /// The actor the change log records: `token:<id>` or `user:<id>`.
    pub fn actor(&self) -> String {
        match &self.who {
            Who::Token(t) => format!("token:{}", t.id),
            Who::Person(s) => format!("user:{}", s.user.id),
        }
    }

    /// The surface the caller's requests come through: the REST API for a
    /// token, the back-office for a browser session.
    pub fn surface(&self) -> Surface {
        match &self.who {
            Who::Token(_) => Surface::Rest,
            Who::Person(_) => Surface::Web,
        }
    }

    /// How the caller's destructive calls are approved: a token's policy; a
    /// person in the back-office always answers each one.
    pub fn approval_policy(&self) -> quire_tools::ApprovalPolicy {
        match &self.who {
            Who::Token(t) => t.approval_policy,
            Who::Person(_) => quire_tools::ApprovalPolicy::User,
        }
    }

    /// The token presented, if the caller is a token.
    pub fn token(&self) -> Option<&TokenInfo> {
        match &self.who {
            Who::Token(t) => Some(t),
            Who::Person(_) => None,
        }
    }

    /// Fails with 403 (404 when they are not to learn it exists) unless
    /// [`quire_core::access::authorize`] lets the caller do `permission`.
    pub fn authorize(&self, permission: Permission<'_>) -> Result<(), ApiError> {
        let actor = self.actor();
        let who = Principal { actor: &actor, group: self.group(), surface: self.surface() };
        authorize(&who, permission).map_err(|refused| {
            if refused.hidden { ApiError::not_found(refused.message) } else { ApiError::forbidden(refused.message) }
        })
    }

    /// The caller as the use cases know them: built once from the token or
    /// browser session that arrived.
    pub fn acting(&self) -> quire_app::Actor {
        quire_app::Actor {
            id: self.actor(),
            group: self.group(),
            scope: self.scope.clone(),
            surface: self.surface(),
            policy: self.approval_policy(),
            environments: match &self.who {
                Who::Token(t) => t.environments.clone(),
                Who::Person(s) => s
                    .user
                    .sites
                    .iter()
                    .find(|site| site.site_id == self.scope.site_id)
                    .map(|site| site.environments.clone()),
            },
            session: self.session.clone(),
        }
    }

    /// The change-log context of this caller's writes.
    pub fn ctx(&self) -> ChangeContext {
        ChangeContext {
            actor: self.actor(),
            surface: self.surface(),
            session_id: self.session.clone(),
            turn_id: None,
            publishing: Publishing::ByStatus,
        }
    }
}

/// Name of the back-office's session cookie over plain http.
pub const SESSION_COOKIE: &str = "quire_session";

/// Name of the session cookie over https: the `__Host-` prefix makes a
/// browser accept it only when Secure, for this host alone and path `/`, so
/// a sibling subdomain or plain-http page cannot set or shadow it.
pub const SECURE_SESSION_COOKIE: &str = "__Host-quire_session";

/// The name of the session cookie, over https or not.
pub fn session_cookie_name(secure: bool) -> &'static str {
    if secure { SECURE_SESSION_COOKIE } else { SESSION_COOKIE }
}

/// The session secret a request's cookies carry: the `__Host-` cookie
/// first, then the plain one.
pub fn session_secret(headers: &axum::http::HeaderMap) -> Option<&str> {
    [SECURE_SESSION_COOKIE, SESSION_COOKIE].into_iter().find_map(|name| cookie_of(headers, name))
}

/// Header that carries a browser session's CSRF secret on every request
/// that changes something.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// The value of cookie `name` in a request, if sent.
pub fn cookie<'a>(parts: &'a Parts, name: &str) -> Option<&'a str> {
    cookie_of(&parts.headers, name)
}

/// The value of cookie `name` in `headers`, if sent and not empty.
fn cookie_of<'a>(headers: &'a axum::http::HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, v)| *k == name && !v.trim().is_empty())
        .map(|(_, v)| v.trim())
}

/// The live browser session of a request's cookie, if any.
pub async fn web_session(parts: &Parts, state: &AppState) -> Result<Option<WebSession>, ApiError> {
    match session_secret(&parts.headers) {
        Some(secret) => Ok(state.store().web_session(secret).await?),
        None => Ok(None),
    }
}

/// Whether two secrets are equal, in time that does not depend on where
/// they differ.
pub fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The bearer secret of a request, if any.
pub fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(axum::http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let caller = authenticate(parts, state).await?;
        if state.request_limits().is_on() {
            state.request_limits().admit(&caller.actor())?;
        }
        Ok(caller)
    }
}

/// The caller a request's credentials name: a bearer token, or else a
/// person's browser session.
async fn authenticate(parts: &Parts, state: &AppState) -> Result<Caller, ApiError> {
    let Some(secret) = bearer(parts) else {
        return person(parts, state).await;
    };
    let grant = state.authenticate(secret).await?;
    let Some(grant) = grant else {
        return Err(ApiError::unauthorized("the token is not valid"));
    };
    if grant.expired {
        return Err(ApiError::unauthorized("the token has expired"));
    }
    // An OAuth access token is bound to the resource it was asked for.
    if let Some(resource) = &grant.resource {
        return Err(ApiError::unauthorized(format!(
            "this OAuth access token was issued for {resource} and works only there"
        )));
    }
    let env = match parts.headers.get(ENV_HEADER) {
        None => None,
        Some(v) => Some(v.to_str().map_err(|_| ApiError::bad_field(ENV_HEADER, "is not readable text"))?),
    };
    let Some(scope) = grant.scope(env) else {
        return Err(ApiError::forbidden(format!("the token may not use environment \"{}\"", env.unwrap_or_default())));
    };
    // The environment must exist for the token's site.
    let scope = state.site_scope(&scope.site_id, &scope.env).await.map_err(|_| {
        ApiError::forbidden(format!("environment \"{}\" does not exist for this token's site", scope.env))
    })?;
    Ok(Caller { who: Who::Token(grant.token), scope, session: client_session(&parts.headers) })
}

/// A caller without a bearer token: a person's browser session. Anything
/// but a read must carry the session's CSRF secret in [`CSRF_HEADER`] (a
/// page of another site can make the browser send the cookie, never the
/// header). The scope is the session's site and environment, switched only
/// explicitly.
async fn person(parts: &Parts, state: &AppState) -> Result<Caller, ApiError> {
    let Some(session) = web_session(parts, state).await? else {
        return Err(ApiError::unauthorized("a bearer token is required: Authorization: Bearer <token>"));
    };
    let safe = matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS);
    if !safe {
        let sent = parts.headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok()).unwrap_or("");
        if !same_secret(sent, &session.csrf) {
            return Err(ApiError::forbidden(format!(
                "a request that changes something needs the session's CSRF token in the {CSRF_HEADER} header"
            )));
        }
    }
    let scope = session.scope.clone();
    Ok(Caller { who: Who::Person(session), scope, session: client_session(&parts.headers) })
}

/// The site's records as the caller may read and change them: the
/// [`quire_app::content::Content`] of the caller's actor, for handlers of
/// resource-shaped routes.
pub struct Records(pub quire_app::content::Content);

impl std::ops::Deref for Records {
    type Target = quire_app::content::Content;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl FromRequestParts<AppState> for Records {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let caller = Caller::from_request_parts(parts, state).await?;
        Ok(Records::of(state, &caller))
    }
}

impl Records {
    /// The records as `caller` may read and change them, for a handler that
    /// needs the caller too (one credential lookup, not two).
    pub fn of(state: &AppState, caller: &Caller) -> Self {
        Records(quire_app::content::Content::new(state.store().clone(), caller.acting()))
    }
}
