//! Signing in and out: the password form (throttled), one-time sign-in
//! links (which set a password), and sign-out.

use crate::error::WebError;
use crate::frame::safe_back;
use crate::{Person, session_cookie};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::{Extension, Form};
use quire_server::AppState;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Failed sign-ins allowed per email within [`WINDOW`] before it is locked.
const FREE_FAILURES: u32 = 5;
/// How long failures are remembered.
const WINDOW: Duration = Duration::from_secs(15 * 60);
/// The first lock; each further failure doubles it, up to [`WINDOW`].
const FIRST_LOCK: Duration = Duration::from_secs(30);

/// Failed sign-ins per email, in this process: after [`FREE_FAILURES`]
/// within [`WINDOW`], each attempt is refused until a lock that doubles
/// with every further failure has passed. The lock is checked before the
/// password, so a locked account costs no hashing.
#[derive(Clone, Default)]
pub struct Throttle(Arc<Mutex<HashMap<String, Failures>>>);

/// Failures of one email: how many, since when, and locked until when.
type Failures = (u32, Instant, Option<Instant>);

impl Throttle {
    /// Counts an attempt for `email` before its password is checked (so
    /// attempts sent in parallel count too); refuses it with the time left
    /// while the email is locked. A success forgets the count.
    fn attempt(&self, email: &str) -> Result<(), Duration> {
        let Ok(mut map) = self.0.lock() else { return Ok(()) };
        if map.len() > 100_000 {
            map.retain(|_, (_, first, _)| first.elapsed() < WINDOW);
        }
        let now = Instant::now();
        let entry = map.entry(email.to_string()).or_insert((0, now, None));
        if let Some(wait) = entry.2.and_then(|u| u.checked_duration_since(now)) {
            return Err(wait);
        }
        if entry.1.elapsed() > WINDOW {
            *entry = (0, now, None);
        }
        entry.0 += 1;
        if entry.0 >= FREE_FAILURES {
            let extra = (entry.0 - FREE_FAILURES).min(10);
            entry.2 = Some(now + (FIRST_LOCK * 2u32.pow(extra)).min(WINDOW));
        }
        Ok(())
    }

    fn succeeded(&self, email: &str) {
        if let Ok(mut map) = self.0.lock() {
            map.remove(email);
        }
    }
}

#[derive(Template)]
#[template(path = "sign_in.html")]
struct SignInPage {
    next: String,
    email: String,
    error: Option<String>,
    notice: Option<String>,
}

#[derive(Deserialize)]
pub struct NextQuery {
    next: Option<String>,
    #[serde(default)]
    signed_out: Option<String>,
}

/// `GET /sign-in`.
pub async fn form(Query(q): Query<NextQuery>) -> Result<Html<String>, WebError> {
    let page = SignInPage {
        next: safe_back(q.next.as_deref()),
        email: String::new(),
        error: None,
        notice: q.signed_out.map(|_| "You are signed out.".to_string()),
    };
    Ok(Html(page.render()?))
}

#[derive(Deserialize)]
pub struct Credentials {
    email: String,
    password: String,
    #[serde(default)]
    next: Option<String>,
}

/// Whether the session cookie must be marked `Secure`: the request came
/// over https (directly or through a proxy that says so).
fn secure(headers: &HeaderMap) -> bool {
    headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok()).is_some_and(|p| p.eq_ignore_ascii_case("https"))
}

/// Signs `user` in: a new session, its cookie, and a redirect to `next`.
async fn start(state: &AppState, user: &quire_store::UserInfo, next: &str, headers: &HeaderMap) -> Response {
    // A session this browser held before ends: signing in never keeps an
    // old cookie's session alive beside the new one.
    if let Some(old) = old_session(state, headers).await
        && let Err(e) = state.store().end_web_session(&old.id).await
    {
        return WebError::from(e).into_response();
    }
    match state.store().start_web_session(user).await {
        Ok((_, secret)) => {
            let max_age = quire_store::users::MAX_AGE.num_seconds();
            let cookie = session_cookie(&secret, max_age, secure(headers) || state.https());
            tracing::info!(user = %user.id, "signed in");
            ([(header::SET_COOKIE, cookie)], Redirect::to(next)).into_response()
        }
        Err(e) => WebError::from(e).into_response(),
    }
}

/// The live session of the cookie a request carries, if any.
async fn old_session(state: &AppState, headers: &HeaderMap) -> Option<quire_store::WebSession> {
    let secret = quire_server::auth::session_secret(headers)?;
    state.store().web_session(secret).await.ok().flatten()
}

/// `POST /sign-in`.
pub async fn submit(
    State(state): State<AppState>,
    Extension(throttle): Extension<Throttle>,
    headers: HeaderMap,
    Form(form): Form<Credentials>,
) -> Response {
    let email = form.email.trim().to_lowercase();
    let next = safe_back(form.next.as_deref());
    let again = |error: String, status: StatusCode| {
        let page = SignInPage { next: next.clone(), email: email.clone(), error: Some(error), notice: None };
        match page.render() {
            Ok(html) => (status, Html(html)).into_response(),
            Err(e) => WebError::from(e).into_response(),
        }
    };
    if let Err(wait) = throttle.attempt(&email) {
        return again(
            format!("Too many failed sign-ins for this email; try again in {} s.", wait.as_secs().max(1)),
            StatusCode::TOO_MANY_REQUESTS,
        );
    }
    match state.store().check_sign_in(&email, &form.password).await {
        Ok(Some(user)) => {
            throttle.succeeded(&email);
            start(&state, &user, &next, &headers).await
        }
        Ok(None) => {
            tracing::info!(email = %email, "failed sign-in");
            again("The email or password is not right.".into(), StatusCode::UNAUTHORIZED)
        }
        Err(e) => WebError::from(e).into_response(),
    }
}

#[derive(Template)]
#[template(path = "set_password.html")]
struct LinkPage {
    secret: String,
    error: Option<String>,
}

/// `GET /sign-in/link/{secret}`: asks for a new password. Opening the link
/// uses nothing (mail scanners open links); submitting the form does.
pub async fn link_form(Path(secret): Path<String>) -> Result<Html<String>, WebError> {
    Ok(Html(LinkPage { secret, error: None }.render()?))
}

#[derive(Deserialize)]
pub struct NewPassword {
    password: String,
    confirm: String,
}

/// `POST /sign-in/link/{secret}`: sets the password and signs in.
pub async fn link_submit(
    State(state): State<AppState>,
    Path(secret): Path<String>,
    headers: HeaderMap,
    Form(form): Form<NewPassword>,
) -> Response {
    let again =
        |error: String, status: StatusCode| match (LinkPage { secret: secret.clone(), error: Some(error) }).render() {
            Ok(html) => (status, Html(html)).into_response(),
            Err(e) => WebError::from(e).into_response(),
        };
    if form.password != form.confirm {
        return again("The two passwords differ.".into(), StatusCode::UNPROCESSABLE_ENTITY);
    }
    // Checked before the link is used, so a refused password leaves it usable.
    if let Err(e) = quire_store::users::check_password(&form.password) {
        return again(
            format!("{}.", e.to_string().replacen("password: ", "The password ", 1)),
            StatusCode::UNPROCESSABLE_ENTITY,
        );
    }
    let user = match state.store().use_sign_in_link(&secret).await {
        Ok(Some(user)) => user,
        Ok(None) => {
            return WebError::Status(
                StatusCode::GONE,
                "This sign-in link has been used or has expired; ask an admin for a new one (quire user link).".into(),
            )
            .into_response();
        }
        Err(e) => return WebError::from(e).into_response(),
    };
    if let Err(e) = state.store().set_password(&user.id, &form.password).await {
        return WebError::from(e).into_response();
    }
    start(&state, &user, "/", &headers).await
}

/// `POST /sign-out`: ends the session and clears the cookie.
pub async fn sign_out(State(state): State<AppState>, person: Person, headers: HeaderMap) -> Response {
    if let Err(e) = state.store().end_web_session(&person.session.id).await {
        return WebError::from(e).into_response();
    }
    state.forget_tokens();
    (
        [(header::SET_COOKIE, session_cookie("", 0, secure(&headers) || state.https()))],
        Redirect::to("/sign-in?signed_out=1"),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    #[test]
    fn over_https_the_session_cookie_is_secure_and_host_only() {
        let c = crate::session_cookie("s3cret", 3600, true);
        assert!(c.starts_with("__Host-quire_session=s3cret; Path=/;"), "{c}");
        assert!(c.ends_with("; Secure") && !c.contains("Domain"), "{c}");
        let plain = crate::session_cookie("s3cret", 3600, false);
        assert!(plain.starts_with("quire_session=s3cret;") && !plain.contains("Secure"), "{plain}");
    }

    use super::*;

    #[test]
    fn attempts_count_before_the_password_is_checked_and_a_lock_refuses_the_rest() {
        let t = Throttle::default();
        for _ in 0..FREE_FAILURES {
            assert!(t.attempt("a@example.org").is_ok());
        }
        // The fifth attempt set the lock, whatever its password turns out to be.
        let wait = t.attempt("a@example.org").unwrap_err();
        assert!(wait <= FIRST_LOCK && wait > FIRST_LOCK / 2, "{wait:?}");
        assert!(t.attempt("b@example.org").is_ok(), "other emails are not locked");
        t.succeeded("b@example.org");
    }
}
