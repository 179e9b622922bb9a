//! Who enters the back-office: a person signs in with their email and
//! password (failures throttled) or with a one-time sign-in link that sets
//! their password, holds a browser session, moves it to another site and
//! environment they may use, and signs out.
//!
//! All of it happens before there is an [`Actor`](crate::Actor): these
//! functions take the store and the credentials that arrived and answer
//! the person's session; the surface makes the actor of a session once it
//! has one.

use crate::AppResult;
use quire_store::{Scope, Store};
pub use quire_store::{UserInfo, WebSession};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a browser session lasts at the most after signing in, however
/// active (its cookie's `Max-Age`).
pub const SESSION_MAX_AGE: chrono::TimeDelta = quire_store::users::MAX_AGE;

/// A browser session just started.
pub struct Started {
    /// The session.
    pub session: WebSession,
    /// The secret its cookie carries (stored only as its hash).
    pub secret: String,
}

/// What a sign-in with a password came to.
pub enum SignIn {
    /// The email and password are right: a new session.
    SignedIn(Box<Started>),
    /// They are not (or the user is disabled, or has no password): one
    /// answer for all, so an email reveals nothing.
    Refused,
    /// Too many failures for this email: refused unchecked for this long.
    Locked(Duration),
}

/// Signs in with an email (compared without regard to case) and a
/// password: a new session, which ends the session of `replacing` (the
/// secret of a cookie the browser still holds), if it is live. Every
/// attempt counts in `throttle` before the password is checked.
pub async fn sign_in(
    store: &Store,
    throttle: &Throttle,
    email: &str,
    password: &str,
    replacing: Option<&str>,
) -> AppResult<SignIn> {
    let email = email.trim().to_lowercase();
    if let Err(wait) = throttle.attempt(&email) {
        return Ok(SignIn::Locked(wait));
    }
    match store.check_sign_in(&email, password).await? {
        Some(user) => {
            throttle.succeeded(&email);
            Ok(SignIn::SignedIn(Box::new(start(store, &user, replacing).await?)))
        }
        None => {
            tracing::info!(email = %email, "failed sign-in");
            Ok(SignIn::Refused)
        }
    }
}

/// Uses a one-time sign-in link: sets its user's password to `password`
/// and starts a session (ending the session of `replacing`, if live).
/// `None` when the link is unknown, used, expired or its user disabled; a
/// password the rules refuse (field `password`) leaves the link usable.
pub async fn sign_in_with_link(
    store: &Store,
    link: &str,
    password: &str,
    replacing: Option<&str>,
) -> AppResult<Option<Started>> {
    quire_store::users::check_password(password)?;
    let Some(user) = store.use_sign_in_link(link).await? else { return Ok(None) };
    store.set_password(&user.id, password).await?;
    Ok(Some(start(store, &user, replacing).await?))
}

/// Starts a session for `user`, ending the live session of `replacing`
/// first: signing in never keeps an old cookie's session alive beside the
/// new one.
async fn start(store: &Store, user: &UserInfo, replacing: Option<&str>) -> AppResult<Started> {
    if let Some(secret) = replacing
        && let Some(old) = store.web_session(secret).await.ok().flatten()
    {
        store.end_web_session(&old.id).await?;
    }
    let (session, secret) = store.start_web_session(user).await?;
    tracing::info!(user = %user.id, "signed in");
    Ok(Started { session, secret })
}

/// Signs out: ends the session.
pub async fn sign_out(store: &Store, session: &WebSession) -> AppResult<()> {
    Ok(store.end_web_session(&session.id).await?)
}

/// Moves a session to another site (id or slug) and environment its user
/// may use (field `site` or `env` otherwise); answers the new scope.
pub async fn switch(store: &Store, session: &WebSession, site: &str, env: &str) -> AppResult<Scope> {
    Ok(store.switch_web_session(session, site, env).await?)
}

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

#[cfg(test)]
mod tests {
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
