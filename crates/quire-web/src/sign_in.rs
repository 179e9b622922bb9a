//! Signing in and out: the password form (throttled), one-time sign-in
//! links (which set a password), and sign-out.

use crate::error::WebError;
use crate::form::Form;
use crate::frame::safe_back;
use crate::pages::render;
use crate::{Person, session_cookie};
use askama::Template;
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::Failure;
use quire_app::people::{self, SignIn, Started, Throttle};
use quire_server::AppState;
use serde::Deserialize;

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

/// A session just started: its cookie, and a redirect to `next`.
fn signed_in(state: &AppState, started: Started, next: &str, headers: &HeaderMap) -> Response {
    let max_age = people::SESSION_MAX_AGE.num_seconds();
    let cookie = session_cookie(&started.secret, max_age, secure(headers) || state.https());
    ([(header::SET_COOKIE, cookie)], Redirect::to(next)).into_response()
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
        render(status, &page)
    };
    // A session this browser held before ends: signing in never keeps an
    // old cookie's session alive beside the new one.
    let replacing = quire_server::auth::session_secret(&headers);
    match people::sign_in(state.store(), &throttle, &email, &form.password, replacing).await {
        Ok(SignIn::SignedIn(started)) => signed_in(&state, *started, &next, &headers),
        Ok(SignIn::Refused) => again("The email or password is not right.".into(), StatusCode::UNAUTHORIZED),
        Ok(SignIn::Locked(wait)) => {
            let seconds = wait.as_secs().max(1);
            let message = format!("Too many failed sign-ins for this email; try again in {seconds} s.");
            ([(header::RETRY_AFTER, seconds.to_string())], again(message, StatusCode::TOO_MANY_REQUESTS))
                .into_response()
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
    let again = |error: String| {
        render(StatusCode::UNPROCESSABLE_ENTITY, &LinkPage { secret: secret.clone(), error: Some(error) })
    };
    if form.password != form.confirm {
        return again("The two passwords differ.".into());
    }
    let replacing = quire_server::auth::session_secret(&headers);
    match people::sign_in_with_link(state.store(), &secret, &form.password, replacing).await {
        Ok(Some(started)) => signed_in(&state, started, "/", &headers),
        Ok(None) => WebError::Status(
            StatusCode::GONE,
            "This sign-in link has been used or has expired; ask an admin for a new one (quire user link).".into(),
        )
        .into_response(),
        // A password the rules refuse; the link is still usable.
        Err(e) if e.failure == Failure::Invalid => {
            again(format!("{}.", e.message.replacen("password: ", "The password ", 1)))
        }
        Err(e) => WebError::from(e).into_response(),
    }
}

/// `POST /sign-out`: ends the session and clears the cookie.
pub async fn sign_out(State(state): State<AppState>, person: Person, headers: HeaderMap) -> Response {
    if let Err(e) = people::sign_out(state.store(), &person.session).await {
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
}
