//! People who sign in to the back-office, their browser sessions and
//! one-time sign-in links.
//!
//! Passwords are hashed with argon2id (a person's password, unlike a token,
//! is guessable, so the hash must be slow); hashing runs on the blocking
//! pool. A browser session is a random secret in a cookie, stored as its
//! SHA-256 like a token, with its own CSRF secret and the site and
//! environment the person is working in. Sessions slide: each use after
//! [`RENEW_AFTER`] pushes the expiry [`IDLE_TIMEOUT`] ahead, never past
//! [`MAX_AGE`] from sign-in. Disabling a user ends their sessions in the
//! same transaction.

use crate::auth::hash_secret;
use crate::db::{self, Row};
use crate::{Result, Scope, Store, StoreError};
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use chrono::{DateTime, TimeDelta, Utc};
use quire_core::access::Group;

/// A session ends after this long without a request.
pub const IDLE_TIMEOUT: TimeDelta = TimeDelta::hours(12);
/// A session ends this long after sign-in, however active.
pub const MAX_AGE: TimeDelta = TimeDelta::days(7);
/// A session's expiry is pushed ahead at most this often.
pub const RENEW_AFTER: TimeDelta = TimeDelta::minutes(1);
/// A sign-in link works this long.
pub const LINK_TTL: TimeDelta = TimeDelta::hours(24);
/// Shortest password accepted.
pub const MIN_PASSWORD: usize = 10;

/// A new user.
#[derive(Debug, Clone)]
pub struct NewUser {
    /// Email address; compared without regard to case.
    pub email: String,
    /// Name shown to others; the email's local part when absent.
    pub display_name: Option<String>,
    /// Group.
    pub group: Group,
    /// Sites (id or slug), each with the environments the user may work in
    /// (`None`: all of the site's).
    pub sites: Vec<(String, Option<Vec<String>>)>,
    /// Initial password; without one the user signs in through a link.
    pub password: Option<String>,
}

/// A site a user works on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserSite {
    /// Site id.
    pub site_id: String,
    /// Site slug.
    pub slug: String,
    /// Site name.
    pub name: String,
    /// The environments the user may use there (resolved: never "all").
    pub environments: Vec<String>,
}

/// A user's public description (never the password hash).
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserInfo {
    /// User id.
    pub id: String,
    /// Email, lower-cased.
    pub email: String,
    /// Display name.
    pub display_name: String,
    /// Group.
    pub group: Group,
    /// Sites and environments.
    pub sites: Vec<UserSite>,
    /// Whether a password is set.
    pub has_password: bool,
    /// When the user was disabled, if they were.
    pub disabled_at: Option<DateTime<Utc>>,
    /// When they last signed in (a browser session started), if ever.
    pub last_sign_in_at: Option<DateTime<Utc>>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

impl UserInfo {
    /// Whether the user may work in `env` of site `site_id`.
    pub fn may_use(&self, site_id: &str, env: &str) -> bool {
        self.sites.iter().any(|s| s.site_id == site_id && s.environments.iter().any(|e| e == env))
    }
}

/// A live browser session.
#[derive(Debug, Clone)]
pub struct WebSession {
    /// Session id (not the cookie's secret).
    pub id: String,
    /// The user.
    pub user: UserInfo,
    /// The secret every state-changing request must carry.
    pub csrf: String,
    /// The site and environment the person is working in.
    pub scope: Scope,
    /// When it ends unless used again.
    pub expires_at: DateTime<Utc>,
}

fn random_hex(bytes: usize) -> Result<String> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| StoreError::Corrupt(format!("no randomness: {e}")))?;
    Ok(hex::encode(buf))
}

fn check_email(email: &str) -> Result<String> {
    let email = email.trim().to_lowercase();
    quire_core::text::check_line("email", &email, 254)?;
    let valid = email.split_once('@').is_some_and(|(local, domain)| {
        !local.is_empty() && !domain.is_empty() && !domain.starts_with('.') && !email.contains(char::is_whitespace)
    });
    if !valid {
        return Err(StoreError::invalid("email", format!("\"{email}\" is not an email address (name@domain)")));
    }
    Ok(email)
}

/// Checks a new password's length (at least [`MIN_PASSWORD`], at most 1024).
pub fn check_password(password: &str) -> Result<()> {
    let n = password.chars().count();
    if n < MIN_PASSWORD {
        return Err(StoreError::invalid(
            "password",
            format!("must be at least {MIN_PASSWORD} characters (this one has {n})"),
        ));
    }
    if n > 1024 {
        return Err(StoreError::invalid("password", "must be at most 1024 characters"));
    }
    Ok(())
}

/// At most this many password hashes run at once (one per core): each
/// takes ~19 MiB and a core, so a flood of sign-ins waits here instead of
/// exhausting memory and the blocking pool.
fn hashing() -> &'static tokio::sync::Semaphore {
    static PERMITS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    PERMITS
        .get_or_init(|| tokio::sync::Semaphore::new(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2)))
}

/// Hashes a password with argon2id on the blocking pool.
async fn hash_password(password: String) -> Result<String> {
    let _permit = hashing().acquire().await.map_err(|e| StoreError::Corrupt(e.to_string()))?;
    tokio::task::spawn_blocking(move || hash_blocking(&password))
        .await
        .map_err(|e| StoreError::Corrupt(e.to_string()))?
}

fn hash_blocking(password: &str) -> Result<String> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| StoreError::Corrupt(format!("no randomness: {e}")))?;
    argon2::Argon2::default()
        .hash_password_with_salt(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| StoreError::Corrupt(format!("cannot hash a password: {e}")))
}

/// Checks a password against a stored hash on the blocking pool. Without a
/// stored hash a fixed one is checked, so an unknown email costs the same
/// time as a wrong password.
async fn verify_password(password: String, stored: Option<String>) -> bool {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let known = stored.is_some();
    let Ok(_permit) = hashing().acquire().await else { return false };
    tokio::task::spawn_blocking(move || {
        let hash = match stored {
            Some(h) => h,
            None => DECOY.get_or_init(|| hash_blocking("a password nobody has").unwrap_or_default()).clone(),
        };
        argon2::Argon2::default().verify_password(password.as_bytes(), hash.as_str()).is_ok()
    })
    .await
    .unwrap_or(false)
        && known
}

impl Store {
    /// Creates a user; the email must not be taken.
    pub async fn create_user(&self, input: NewUser) -> Result<UserInfo> {
        let email = check_email(&input.email)?;
        let display_name = match input.display_name.map(|n| n.trim().to_string()).filter(|n| !n.is_empty()) {
            Some(name) => name,
            None => email.split('@').next().unwrap_or_default().to_string(),
        };
        quire_core::text::check_line("displayName", &display_name, 120)?;
        if input.sites.is_empty() {
            return Err(StoreError::invalid("sites", "a user needs at least one site"));
        }
        let mut sites = Vec::new();
        for (site, envs) in &input.sites {
            let found =
                self.site(site).await.map_err(|_| StoreError::invalid("sites", format!("no site \"{site}\"")))?;
            if let Some(envs) = envs {
                if envs.is_empty() {
                    return Err(StoreError::invalid("environments", "name at least one environment, or none for all"));
                }
                for env in envs {
                    if !found.environments.contains(env) {
                        return Err(StoreError::invalid(
                            "environments",
                            format!("site {} has no environment \"{env}\"", found.slug),
                        ));
                    }
                }
            }
            sites.push((found.id, envs.clone()));
        }
        let hash = match input.password {
            Some(p) => {
                check_password(&p)?;
                Some(hash_password(p).await?)
            }
            None => None,
        };
        let id = crate::log::new_id();
        let created = id.clone();
        let now = Utc::now();
        self.db
            .write(move |c| {
                let taken: Option<i64> =
                    db::query_scalar("SELECT 1 FROM users WHERE email = ?1").bind(&email).fetch_optional(c)?;
                if taken.is_some() {
                    return Err(StoreError::conflict(
                        Some("email"),
                        format!("a user with email {email} already exists"),
                    ));
                }
                db::query(
                    "INSERT INTO users (id, email, name, password_hash, grp, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                )
                .bind(&id)
                .bind(&email)
                .bind(&display_name)
                .bind(hash)
                .bind(input.group.as_str())
                .bind(now)
                .execute(c)?;
                for (site_id, envs) in sites {
                    db::query("INSERT INTO user_sites (user_id, site_id, environments) VALUES (?1, ?2, ?3)")
                        .bind(&id)
                        .bind(site_id)
                        .bind(envs.as_ref().map(crate::record::to_json))
                        .execute(c)?;
                }
                Ok(())
            })
            .await?;
        self.user(&created).await
    }

    async fn user_of(&self, row: &Row) -> Result<UserInfo> {
        let id: String = row.try_get("id")?;
        let group: String = row.try_get("grp")?;
        let rows = db::query(
            "SELECT s.id, s.slug, s.name, us.environments FROM user_sites us JOIN sites s ON s.id = us.site_id
             WHERE us.user_id = ?1 ORDER BY s.created_at, s.slug",
        )
        .bind(&id)
        .read_all(&self.db)
        .await?;
        let mut sites = Vec::new();
        for site in rows {
            let site_id: String = site.try_get("id")?;
            let allowed: Option<Vec<String>> = crate::record::json_opt(&site, "environments")?;
            let all: Vec<String> = db::query_scalar(
                "SELECT key FROM environments WHERE site_id = ?1 AND archived_at IS NULL ORDER BY created_at, key",
            )
            .bind(&site_id)
            .read_all(&self.db)
            .await?;
            let environments = match allowed {
                Some(list) => all.into_iter().filter(|e| list.contains(e)).collect(),
                None => all,
            };
            sites.push(UserSite { site_id, slug: site.try_get("slug")?, name: site.try_get("name")?, environments });
        }
        let hash: Option<String> = row.try_get("password_hash")?;
        Ok(UserInfo {
            id,
            email: row.try_get("email")?,
            display_name: row.try_get("name")?,
            group: Group::parse(&group).map_err(StoreError::Corrupt)?,
            sites,
            has_password: hash.is_some(),
            disabled_at: row.try_get("disabled_at")?,
            last_sign_in_at: row.try_get("last_sign_in_at")?,
            created_at: row.try_get("created_at")?,
        })
    }

    /// A user by id or email.
    pub async fn user(&self, id_or_email: &str) -> Result<UserInfo> {
        let row = db::query("SELECT * FROM users WHERE id = ?1 OR email = lower(?1)")
            .bind(id_or_email.trim())
            .read_optional(&self.db)
            .await?
            .ok_or_else(|| StoreError::not_found("user", id_or_email))?;
        self.user_of(&row).await
    }

    /// Every user, disabled ones included, oldest first.
    pub async fn users(&self) -> Result<Vec<UserInfo>> {
        let rows = db::query("SELECT * FROM users ORDER BY created_at, email").read_all(&self.db).await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            out.push(self.user_of(row).await?);
        }
        Ok(out)
    }

    /// Everyone who may work on site `site_id`, disabled people too,
    /// oldest first.
    pub async fn site_users(&self, site_id: &str) -> Result<Vec<UserInfo>> {
        let rows = db::query(
            "SELECT u.* FROM users u JOIN user_sites us ON us.user_id = u.id WHERE us.site_id = ?1
             ORDER BY u.created_at, u.email",
        )
        .bind(site_id)
        .read_all(&self.db)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            out.push(self.user_of(row).await?);
        }
        Ok(out)
    }

    /// Sets a user's group (on every site they work on: a person has one).
    /// Their sessions read it at their next request.
    pub async fn set_user_group(&self, user_id: &str, group: Group) -> Result<UserInfo> {
        let user = self.user(user_id).await?;
        db::query("UPDATE users SET grp = ?1, updated_at = ?2 WHERE id = ?3")
            .bind(group.as_str())
            .bind(Utc::now())
            .bind(&user.id)
            .write(&self.db)
            .await?;
        self.user(&user.id).await
    }

    /// Gives a user site `site` (id or slug) with every environment
    /// (`None`) or the ones named, or changes which. A session of theirs in
    /// an environment they lose ends at its next request.
    pub async fn set_user_site(
        &self,
        user_id: &str,
        site: &str,
        environments: Option<Vec<String>>,
    ) -> Result<UserInfo> {
        let user = self.user(user_id).await?;
        let found = self.site(site).await.map_err(|_| StoreError::invalid("sites", format!("no site \"{site}\"")))?;
        if let Some(envs) = &environments {
            if envs.is_empty() {
                return Err(StoreError::invalid("environments", "name at least one environment, or none for all"));
            }
            if let Some(env) = envs.iter().find(|e| !found.environments.contains(e)) {
                return Err(StoreError::invalid(
                    "environments",
                    format!("site {} has no environment \"{env}\"", found.slug),
                ));
            }
        }
        db::query(
            "INSERT INTO user_sites (user_id, site_id, environments) VALUES (?1, ?2, ?3)
             ON CONFLICT (user_id, site_id) DO UPDATE SET environments = excluded.environments",
        )
        .bind(&user.id)
        .bind(&found.id)
        .bind(environments.as_ref().map(crate::record::to_json))
        .write(&self.db)
        .await?;
        self.user(&user.id).await
    }

    /// Takes site `site_id` from a user, who keeps their other sites: their
    /// sessions there end and the tokens they made for it are revoked, in
    /// one transaction. A user keeps at least one site (disable them
    /// instead).
    pub async fn remove_user_site(&self, user_id: &str, site_id: &str) -> Result<UserInfo> {
        let user = self.user(user_id).await?;
        if !user.sites.iter().any(|s| s.site_id == site_id) {
            return Err(StoreError::not_found("user", user_id));
        }
        if user.sites.len() == 1 {
            return Err(StoreError::conflict(
                Some("sites"),
                format!("{} works on this site alone; disable them instead", user.email),
            ));
        }
        let (id, site) = (user.id.clone(), site_id.to_string());
        let now = Utc::now();
        self.db
            .write(move |c| {
                db::query("DELETE FROM user_sites WHERE user_id = ?1 AND site_id = ?2")
                    .bind(&id)
                    .bind(&site)
                    .execute(c)?;
                db::query(
                    "UPDATE web_sessions SET ended_at = ?1 WHERE user_id = ?2 AND site_id = ?3 AND ended_at IS NULL",
                )
                .bind(now)
                .bind(&id)
                .bind(&site)
                .execute(c)?;
                db::query(
                    "UPDATE api_tokens SET revoked_at = ?1 WHERE user_id = ?2 AND site_id = ?3 AND revoked_at IS NULL",
                )
                .bind(now)
                .bind(&id)
                .bind(&site)
                .execute(c)?;
                Ok(())
            })
            .await?;
        self.user(&user.id).await
    }

    /// Number of users (zero on a fresh database).
    pub async fn user_count(&self) -> Result<i64> {
        db::query_scalar("SELECT COUNT(*) FROM users").read_one(&self.db).await
    }

    /// Disables (or enables again) a user. Disabling ends every session of
    /// theirs and revokes the API tokens they created, in the same
    /// transaction, so their next request (and their tokens') is refused.
    pub async fn set_user_disabled(&self, id_or_email: &str, disabled: bool) -> Result<UserInfo> {
        let user = self.user(id_or_email).await?;
        let user_id = user.id.clone();
        let now = Utc::now();
        self.db
            .write(move |c| {
                db::query("UPDATE users SET disabled_at = ?1, updated_at = ?2 WHERE id = ?3")
                    .bind(disabled.then_some(now))
                    .bind(now)
                    .bind(&user_id)
                    .execute(c)?;
                if disabled {
                    db::query("UPDATE web_sessions SET ended_at = ?1 WHERE user_id = ?2 AND ended_at IS NULL")
                        .bind(now)
                        .bind(&user_id)
                        .execute(c)?;
                    // The tokens they made would outlive them otherwise.
                    db::query("UPDATE api_tokens SET revoked_at = ?1 WHERE user_id = ?2 AND revoked_at IS NULL")
                        .bind(now)
                        .bind(&user_id)
                        .execute(c)?;
                }
                Ok(())
            })
            .await?;
        self.user(&user.id).await
    }

    /// Sets a user's password and ends every session of theirs (whoever
    /// knew the old one is signed out).
    pub async fn set_password(&self, user_id: &str, password: &str) -> Result<()> {
        check_password(password)?;
        let hash = hash_password(password.to_string()).await?;
        let now = Utc::now();
        let user_id = user_id.to_string();
        self.db
            .write(move |c| {
                let done = db::query("UPDATE users SET password_hash = ?1, updated_at = ?2 WHERE id = ?3")
                    .bind(hash)
                    .bind(now)
                    .bind(&user_id)
                    .execute(c)?;
                if done.rows_affected() == 0 {
                    return Err(StoreError::not_found("user", user_id));
                }
                db::query("UPDATE web_sessions SET ended_at = ?1 WHERE user_id = ?2 AND ended_at IS NULL")
                    .bind(now)
                    .bind(&user_id)
                    .execute(c)?;
                Ok(())
            })
            .await?;
        Ok(())
    }

    /// The enabled user with this email and password, or `None` (for an
    /// unknown email, a wrong password, a user without a password or a
    /// disabled user alike; all take the time of one hash).
    pub async fn check_sign_in(&self, email: &str, password: &str) -> Result<Option<UserInfo>> {
        let row = db::query("SELECT * FROM users WHERE email = ?1")
            .bind(email.trim().to_lowercase())
            .read_optional(&self.db)
            .await?;
        let stored = match &row {
            Some(r) => r.try_get::<Option<String>, _>("password_hash")?,
            None => None,
        };
        if !verify_password(password.to_string(), stored).await {
            return Ok(None);
        }
        let Some(row) = row else { return Ok(None) };
        let user = self.user_of(&row).await?;
        Ok(user.disabled_at.is_none().then_some(user))
    }

    /// Starts a browser session for `user` in their first site and
    /// environment; returns it and the cookie's secret.
    pub async fn start_web_session(&self, user: &UserInfo) -> Result<(WebSession, String)> {
        let (site_id, env) = user
            .sites
            .iter()
            .find_map(|s| s.environments.first().map(|e| (s.site_id.clone(), e.clone())))
            .ok_or_else(|| StoreError::invalid("sites", "the user may use no environment of any site"))?;
        let secret = format!("qs_{}", random_hex(32)?);
        let csrf = random_hex(24)?;
        let id = crate::log::new_id();
        let now = Utc::now();
        let expires_at = now + IDLE_TIMEOUT;
        db::query(
            "INSERT INTO web_sessions (id, token_hash, user_id, csrf, site_id, env, created_at, last_seen_at, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8)",
        )
        .bind(&id)
        .bind(hash_secret(&secret))
        .bind(&user.id)
        .bind(&csrf)
        .bind(&site_id)
        .bind(&env)
        .bind(now)
        .bind(expires_at)
        .write(&self.db).await?;
        db::query("UPDATE users SET last_sign_in_at = ?1 WHERE id = ?2")
            .bind(now)
            .bind(&user.id)
            .write(&self.db)
            .await?;
        let mut user = user.clone();
        user.last_sign_in_at = Some(now);
        let session = WebSession { id, user, csrf, scope: Scope::new(site_id, env), expires_at };
        Ok((session, secret))
    }

    /// The live session of a cookie's secret: not ended, not expired, its
    /// user enabled and still allowed its site and environment. Renews the
    /// expiry when it was last pushed more than [`RENEW_AFTER`] ago.
    pub async fn web_session(&self, secret: &str) -> Result<Option<WebSession>> {
        let row = db::query(
            "SELECT ws.id AS session_id, ws.csrf, ws.site_id, ws.env, ws.created_at AS started, ws.last_seen_at,
                    ws.expires_at, u.*
             FROM web_sessions ws JOIN users u ON u.id = ws.user_id
             WHERE ws.token_hash = ?1 AND ws.ended_at IS NULL AND u.disabled_at IS NULL",
        )
        .bind(hash_secret(secret))
        .read_optional(&self.db)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let now = Utc::now();
        let mut expires_at: DateTime<Utc> = row.try_get("expires_at")?;
        if expires_at <= now {
            return Ok(None);
        }
        let user = self.user_of(&row).await?;
        let scope = Scope::new(row.try_get::<String, _>("site_id")?, row.try_get::<String, _>("env")?);
        if !user.may_use(&scope.site_id, &scope.env) {
            return Ok(None);
        }
        let id: String = row.try_get("session_id")?;
        let last_seen: DateTime<Utc> = row.try_get("last_seen_at")?;
        if now - last_seen > RENEW_AFTER {
            let started: DateTime<Utc> = row.try_get("started")?;
            expires_at = (now + IDLE_TIMEOUT).min(started + MAX_AGE);
            db::query("UPDATE web_sessions SET last_seen_at = ?1, expires_at = ?2 WHERE id = ?3")
                .bind(now)
                .bind(expires_at)
                .bind(&id)
                .write(&self.db)
                .await?;
        }
        Ok(Some(WebSession { id, user, csrf: row.try_get("csrf")?, scope, expires_at }))
    }

    /// Whether session `id` is still live (not ended, not expired, its user
    /// enabled). Open event streams poll it.
    pub async fn web_session_live(&self, id: &str) -> Result<bool> {
        let live: Option<i64> = db::query_scalar(
            "SELECT 1 FROM web_sessions ws JOIN users u ON u.id = ws.user_id
             WHERE ws.id = ?1 AND ws.ended_at IS NULL AND u.disabled_at IS NULL AND ws.expires_at > ?2",
        )
        .bind(id)
        .bind(Utc::now())
        .read_optional(&self.db)
        .await?;
        Ok(live.is_some())
    }

    /// Ends a session (sign-out).
    pub async fn end_web_session(&self, id: &str) -> Result<()> {
        db::query("UPDATE web_sessions SET ended_at = ?1 WHERE id = ?2 AND ended_at IS NULL")
            .bind(Utc::now())
            .bind(id)
            .write(&self.db)
            .await?;
        Ok(())
    }

    /// Moves a session to another site (id or slug) and environment the
    /// user may use; answers the new scope.
    pub async fn switch_web_session(&self, session: &WebSession, site: &str, env: &str) -> Result<Scope> {
        let target = session
            .user
            .sites
            .iter()
            .find(|s| s.site_id == site || s.slug == site)
            .ok_or_else(|| StoreError::invalid("site", format!("you have no access to site \"{site}\"")))?;
        if !target.environments.iter().any(|e| e == env) {
            return Err(StoreError::invalid(
                "env",
                format!("you may not use environment \"{env}\" of site {}", target.slug),
            ));
        }
        db::query("UPDATE web_sessions SET site_id = ?1, env = ?2 WHERE id = ?3")
            .bind(&target.site_id)
            .bind(env)
            .bind(&session.id)
            .write(&self.db)
            .await?;
        Ok(Scope::new(target.site_id.clone(), env))
    }

    /// Creates a one-time sign-in link secret for a user, valid [`LINK_TTL`].
    pub async fn create_sign_in_link(&self, user_id: &str) -> Result<String> {
        let user = self.user(user_id).await?;
        let secret = format!("ql_{}", random_hex(24)?);
        let now = Utc::now();
        db::query("INSERT INTO sign_in_links (token_hash, user_id, created_at, expires_at) VALUES (?1, ?2, ?3, ?4)")
            .bind(hash_secret(&secret))
            .bind(&user.id)
            .bind(now)
            .bind(now + LINK_TTL)
            .write(&self.db)
            .await?;
        Ok(secret)
    }

    /// Uses a sign-in link: answers its (enabled) user once; `None` when the
    /// link is unknown, used, expired or its user disabled.
    pub async fn use_sign_in_link(&self, secret: &str) -> Result<Option<UserInfo>> {
        let user_id: Option<String> = db::query_scalar(
            "UPDATE sign_in_links SET used_at = ?1 WHERE token_hash = ?2 AND used_at IS NULL AND expires_at > ?1
             RETURNING user_id",
        )
        .bind(Utc::now())
        .bind(hash_secret(secret))
        .write_optional(&self.db)
        .await?;
        let Some(user_id) = user_id else { return Ok(None) };
        let user = self.user(&user_id).await?;
        Ok(user.disabled_at.is_none().then_some(user))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_are_checked_and_folded() {
        assert_eq!(check_email(" Ada@Example.org ").unwrap(), "ada@example.org");
        for bad in ["ada", "@example.org", "ada@", "ada@.org", "a da@example.org"] {
            let err = check_email(bad).unwrap_err().to_string();
            assert!(err.contains("email"), "{bad}: {err}");
        }
    }

    #[test]
    fn short_passwords_are_refused_with_their_length() {
        let err = check_password("short").unwrap_err().to_string();
        assert!(err.contains("at least 10") && err.contains("has 5"), "{err}");
        assert!(check_password("long enough!").is_ok());
    }

    #[tokio::test]
    async fn a_hash_verifies_only_its_password_and_the_decoy_never() {
        let hash = hash_password("correct horse".into()).await.unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password("correct horse".into(), Some(hash.clone())).await);
        assert!(!verify_password("wrong horse!".into(), Some(hash)).await);
        assert!(!verify_password("anything at all".into(), None).await);
    }
}
