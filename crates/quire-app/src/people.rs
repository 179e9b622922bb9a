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
use quire_store::{Scope, SignInFailures, Store};
pub use quire_store::{UserInfo, WebSession};
use std::time::Duration;

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
/// attempt counts in `throttle` (in the database) before the password is
/// checked.
pub async fn sign_in(
    store: &Store,
    throttle: &Throttle,
    email: &str,
    password: &str,
    replacing: Option<&str>,
) -> AppResult<SignIn> {
    let email = email.trim().to_lowercase();
    if let Err(wait) = throttle.attempt(store, &email).await? {
        return Ok(SignIn::Locked(wait));
    }
    match store.check_sign_in(&email, password).await? {
        Some(user) => {
            throttle.succeeded(store, &email).await?;
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
const FREE_FAILURES: i64 = 5;
/// How long failures are remembered, in seconds.
const WINDOW: i64 = 15 * 60;
/// The first lock, in seconds; each further failure doubles it, up to [`WINDOW`].
const FIRST_LOCK: i64 = 30;

/// Failed sign-ins per email, kept in the database so every replica
/// counts the same tries and a restart forgets none: after
/// [`FREE_FAILURES`] within [`WINDOW`], each attempt is refused until a
/// lock that doubles with every further failure has passed. The lock is
/// checked before the password, so a locked account costs no hashing.
#[derive(Clone)]
pub struct Throttle {
    /// Failures allowed within the window before the email is locked.
    free_failures: i64,
}

impl Default for Throttle {
    fn default() -> Self {
        Self { free_failures: FREE_FAILURES }
    }
}

impl Throttle {
    /// Counts an attempt for `email` before its password is checked (so
    /// attempts sent in parallel, to any replica, count too); refuses it
    /// with the time left while the email is locked.
    async fn attempt(&self, store: &Store, email: &str) -> AppResult<Result<(), Duration>> {
        let (now, free) = (chrono::Utc::now().timestamp(), self.free_failures);
        Ok(store.count_sign_in(email, move |seen| attempt(seen, now, free)).await?)
    }

    /// A success forgets the count.
    async fn succeeded(&self, store: &Store, email: &str) -> AppResult<()> {
        Ok(store.forget_sign_in_failures(email).await?)
    }
}

/// The lockout rule: what an attempt at `now` (seconds) makes of the
/// failures `seen`, and whether it may go on, `free` failures allowed.
fn attempt(seen: Option<SignInFailures>, now: i64, free: i64) -> (SignInFailures, Result<(), Duration>) {
    let fresh = SignInFailures { failures: 0, first_at: now, locked_until: None };
    let mut f = seen.unwrap_or(fresh);
    if let Some(until) = f.locked_until.filter(|u| *u > now) {
        return (f, Err(Duration::from_secs((until - now) as u64)));
    }
    if now - f.first_at > WINDOW {
        f = fresh;
    }
    f.failures += 1;
    if f.failures >= free {
        let extra = (f.failures - free).min(10) as u32;
        f.locked_until = Some(now + (FIRST_LOCK * 2i64.pow(extra)).min(WINDOW));
    }
    (f, Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_count_before_the_password_is_checked_and_a_lock_refuses_the_rest() {
        let mut seen = None;
        for _ in 0..FREE_FAILURES {
            let (f, answer) = attempt(seen, 1_000, FREE_FAILURES);
            assert!(answer.is_ok());
            seen = Some(f);
        }
        // The fifth attempt set the lock, whatever its password turns out to be.
        let (f, answer) = attempt(seen, 1_010, FREE_FAILURES);
        assert_eq!(answer, Err(Duration::from_secs(FIRST_LOCK as u64 - 10)));
        assert_eq!(f, seen.unwrap(), "a refused attempt counts nothing");
        // Once the lock passed, the next failure doubles it.
        let (f, answer) = attempt(Some(f), 1_000 + FIRST_LOCK, FREE_FAILURES);
        assert!(answer.is_ok());
        assert_eq!(f.locked_until, Some(1_000 + 3 * FIRST_LOCK));
        // Failures older than the window are forgotten.
        let (f, _) = attempt(Some(f), 1_000 + 3 * FIRST_LOCK + WINDOW + 1, FREE_FAILURES);
        assert_eq!((f.failures, f.locked_until), (1, None));
    }
}
