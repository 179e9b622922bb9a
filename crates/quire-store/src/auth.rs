//! Sites, environments and API tokens.
//!
//! A token is a random secret shown once; only its SHA-256 is stored. The
//! secret carries 256 bits of entropy, so a fast hash is as safe as a slow
//! one here and keeps per-request authentication cheap.

use crate::db::{self, Row, read_row};
use crate::record::found;
use crate::{Result, Scope, Store, StoreError};
use chrono::{DateTime, Utc};
use quire_core::access::Group;
use quire_core::model::{ApprovalPolicy, Site};
use sha2::{Digest, Sha256};

/// What a new token may do and for how long.
#[derive(Debug, Clone)]
pub struct NewToken {
    /// A name for people to recognise it by.
    pub name: String,
    /// Its group.
    pub group: Group,
    /// The site it is scoped to (id or slug).
    pub site: String,
    /// Environments it may use; `None` means all of the site's.
    pub environments: Option<Vec<String>>,
    /// When it stops working.
    pub expires_at: Option<DateTime<Utc>>,
    /// Use this secret instead of a random one (bootstrap automation).
    pub secret: Option<String>,
    /// How its destructive calls are approved (default: a person approves each).
    pub approval_policy: Option<ApprovalPolicy>,
    /// The person who created it, if a person did: disabling them revokes it.
    pub user_id: Option<String>,
    /// Whether it is the instance's administrator's: it may manage every
    /// site (an admin token of its own site besides).
    pub instance_admin: bool,
}

impl NewToken {
    /// A token of `group` for every environment of `site`, that does not
    /// expire, with a random secret, the default approval policy and no
    /// person behind it; change the rest with struct update syntax.
    pub fn new(name: impl Into<String>, group: Group, site: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            group,
            site: site.into(),
            environments: None,
            expires_at: None,
            secret: None,
            approval_policy: None,
            user_id: None,
            instance_admin: false,
        }
    }
}

/// A token's public description (never its secret).
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenInfo {
    /// Token id.
    pub id: String,
    /// Name.
    pub name: String,
    /// First characters of the secret, to recognise it.
    pub prefix: String,
    /// Group.
    pub group: Group,
    /// Site id.
    pub site_id: String,
    /// Environments, or all when absent.
    pub environments: Option<Vec<String>>,
    /// Expiry.
    pub expires_at: Option<DateTime<Utc>>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// How its destructive calls are approved: user or conversational.
    #[schema(value_type = String)]
    pub approval_policy: ApprovalPolicy,
    /// When it was last presented, to the minute (never, when absent).
    pub last_used_at: Option<DateTime<Utc>>,
    /// For an OAuth grant: the client it was granted to (its tokens are
    /// issued by the token endpoint; this one's own secret is never shown).
    pub oauth_client_id: Option<String>,
    /// For an OAuth grant: which tools MCP offers it (`all`, `readonly`, `discover`).
    pub mcp_tools: Option<String>,
    /// Whether it is the instance's administrator's (it may manage every site).
    pub instance_admin: bool,
}

/// What presenting a token grants.
#[derive(Debug, Clone)]
pub struct TokenGrant {
    /// The token (for an OAuth access token, its grant, expiring when the
    /// access token does).
    pub token: TokenInfo,
    /// Whether it has expired.
    pub expired: bool,
    /// For an OAuth access token: the resource it is bound to (the MCP
    /// endpoint's URL); it works nowhere else.
    pub resource: Option<String>,
}

impl TokenGrant {
    /// The scope for environment `env` (default: the first allowed, or
    /// `production`), or `None` when the token may not use it.
    pub fn scope(&self, env: Option<&str>) -> Option<Scope> {
        let allowed = self.token.environments.as_deref();
        let env = match (env, allowed) {
            (Some(e), Some(list)) if list.iter().any(|a| a == e) => e.to_string(),
            (Some(_), Some(_)) => return None,
            (Some(e), None) => e.to_string(),
            (None, Some(list)) => list.first()?.clone(),
            (None, None) => "production".to_string(),
        };
        Some(Scope::new(self.token.site_id.clone(), env))
    }
}

/// SHA-256 of a token secret, hex.
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Checks that a new token's expiry lies in the future: a token that is
/// already expired would never work. `field` names the input at fault.
pub fn check_expiry(field: &str, at: DateTime<Utc>) -> Result<DateTime<Utc>> {
    if at <= Utc::now() {
        return Err(StoreError::invalid(
            field,
            format!("{} is not in the future; a token must expire after it is created", at.to_rfc3339()),
        ));
    }
    Ok(at)
}

/// Longest lifetime a token can be given, in days (100 years); beyond it a
/// date no longer has four digits for its year.
pub const MAX_EXPIRY_DAYS: i64 = 36_500;

/// The expiry `days` days from now; refuses fewer than one day (zero would
/// create an already expired token) and more than [`MAX_EXPIRY_DAYS`].
/// `field` names the input at fault.
pub fn expiry_in_days(field: &str, days: i64) -> Result<DateTime<Utc>> {
    if days < 1 {
        return Err(StoreError::invalid(
            field,
            format!("must be at least 1 day ({days} would create an already expired token)"),
        ));
    }
    if days > MAX_EXPIRY_DAYS {
        return Err(StoreError::invalid(
            field,
            format!("must be at most {MAX_EXPIRY_DAYS} days (100 years); {days} is too far in the future"),
        ));
    }
    chrono::TimeDelta::try_days(days)
        .and_then(|d| Utc::now().checked_add_signed(d))
        .ok_or_else(|| StoreError::invalid(field, format!("{days} days is too far in the future")))
}

fn token_of(row: &Row) -> Result<TokenInfo> {
    let group: String = row.try_get("grp")?;
    Ok(read_row!(row => TokenInfo {
        id, name, prefix, site_id, expires_at, created_at, last_used_at, oauth_client_id, mcp_tools;
        group: Group::parse(&group).map_err(StoreError::Corrupt)?,
        environments: crate::record::json_opt(row, "environments")?,
        approval_policy: crate::record::wire_col(row, "approval_policy")?,
        instance_admin: row.try_get::<i64, _>("instance_admin")? == 1,
    }))
}

fn random_secret() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| StoreError::Corrupt(format!("no randomness: {e}")))?;
    Ok(format!("qk_{}", hex::encode(bytes)))
}

impl Store {
    /// Creates a site with environments (the first is the default), in
    /// English (its default locale).
    pub async fn create_site(&self, slug: &str, name: &str, environments: &[&str]) -> Result<Site> {
        quire_core::slug::check_slug("slug", slug)?;
        quire_core::text::check_line("name", name, 120)?;
        let now = Utc::now();
        let id = crate::log::new_id();
        for env in environments {
            quire_core::slug::check_slug("environments", env)?;
        }
        let (slug, name) = (slug.to_string(), name.to_string());
        let environments: Vec<String> = environments.iter().map(|e| e.to_string()).collect();
        let created = slug.clone();
        self.db
            .write(move |c| {
                let taken: Option<i64> =
                    db::query_scalar("SELECT 1 FROM sites WHERE slug = ?1").bind(&slug).fetch_optional(c)?;
                if taken.is_some() {
                    return Err(StoreError::conflict(Some("slug"), format!("site \"{slug}\" already exists")));
                }
                db::query("INSERT INTO sites (id, slug, name, created_at) VALUES (?1, ?2, ?3, ?4)")
                    .bind(&id)
                    .bind(&slug)
                    .bind(&name)
                    .bind(now)
                    .execute(c)?;
                // Its default locale (decision 0050); the site's admins add others.
                db::query(
                    "INSERT INTO site_locales (site_id, tag, fallback, is_default, position, created_at)
                     VALUES (?1, 'en', NULL, 1, 0, ?2)",
                )
                .bind(&id)
                .bind(now)
                .execute(c)?;
                for env in &environments {
                    db::query("INSERT INTO environments (site_id, key, created_at) VALUES (?1, ?2, ?3)")
                        .bind(&id)
                        .bind(env)
                        .bind(now)
                        .execute(c)?;
                }
                Ok(())
            })
            .await?;
        self.site(&created).await
    }

    /// A live site by id or slug.
    pub async fn site(&self, id_or_slug: &str) -> Result<Site> {
        self.site_of(id_or_slug, false).await
    }

    /// A site by id or slug, archived or not.
    pub async fn any_site(&self, id_or_slug: &str) -> Result<Site> {
        self.site_of(id_or_slug, true).await
    }

    async fn site_of(&self, id_or_slug: &str, archived: bool) -> Result<Site> {
        let live = if archived { "" } else { " AND archived_at IS NULL" };
        let row = db::query(format!("SELECT * FROM sites WHERE (id = ?1 OR slug = ?1){live}"))
            .bind(id_or_slug)
            .read_optional(&self.db)
            .await?
            .ok_or_else(|| StoreError::not_found("site", id_or_slug))?;
        let id: String = row.try_get("id")?;
        let environments: Vec<String> = db::query_scalar(
            "SELECT key FROM environments WHERE site_id = ?1 AND archived_at IS NULL ORDER BY created_at, key",
        )
        .bind(&id)
        .read_all(&self.db)
        .await?;
        Ok(Site {
            id,
            slug: row.try_get("slug")?,
            name: row.try_get("name")?,
            environments,
            preview_url: row.try_get("preview_url")?,
            created_at: row.try_get("created_at")?,
            archived_at: row.try_get("archived_at")?,
        })
    }

    /// The live sites.
    pub async fn sites(&self) -> Result<Vec<Site>> {
        self.sites_of(false).await
    }

    /// Every site, the archived ones too.
    pub async fn all_sites(&self) -> Result<Vec<Site>> {
        self.sites_of(true).await
    }

    async fn sites_of(&self, archived: bool) -> Result<Vec<Site>> {
        let live = if archived { "" } else { " WHERE archived_at IS NULL" };
        let slugs: Vec<String> = db::query_scalar(format!("SELECT slug FROM sites{live} ORDER BY created_at, slug"))
            .read_all(&self.db)
            .await?;
        let mut out = Vec::new();
        for slug in slugs {
            out.push(self.site_of(&slug, archived).await?);
        }
        Ok(out)
    }

    /// Renames a site (id or slug, archived or not).
    pub async fn rename_site(&self, id_or_slug: &str, name: &str) -> Result<Site> {
        quire_core::text::check_line("name", name, 120)?;
        // An archived site is not found until it is restored.
        let site = self.site(id_or_slug).await?;
        db::query("UPDATE sites SET name = ?1 WHERE id = ?2").bind(name).bind(&site.id).write(&self.db).await?;
        self.any_site(&site.id).await
    }

    /// Archives a live site: its tokens stop working and its content is no
    /// longer delivered; everything it holds stays, and [`Store::restore_site`]
    /// brings it back. The last live site stays.
    pub async fn archive_site(&self, id_or_slug: &str) -> Result<Site> {
        let site = self.site(id_or_slug).await?;
        let id = site.id.clone();
        self.db
            .write(move |c| {
                let live: i64 =
                    db::query_scalar("SELECT COUNT(*) FROM sites WHERE archived_at IS NULL").fetch_one(c)?;
                if live <= 1 {
                    return Err(StoreError::conflict(None, "the last live site stays; make another first"));
                }
                db::query("UPDATE sites SET archived_at = ?1 WHERE id = ?2").bind(Utc::now()).bind(&id).execute(c)?;
                Ok(())
            })
            .await?;
        self.any_site(&site.id).await
    }

    /// Brings an archived site back, with its tokens and content.
    pub async fn restore_site(&self, id_or_slug: &str) -> Result<Site> {
        let site = self.any_site(id_or_slug).await?;
        if site.archived_at.is_none() {
            return Err(StoreError::conflict(None, format!("site {} is not archived", site.slug)));
        }
        db::query("UPDATE sites SET archived_at = NULL WHERE id = ?1").bind(&site.id).write(&self.db).await?;
        self.any_site(&site.id).await
    }

    /// Whether token `id` (live) is the instance's administrator's.
    pub async fn is_instance_admin(&self, token: &str) -> Result<bool> {
        let flag: Option<i64> =
            db::query_scalar("SELECT instance_admin FROM api_tokens WHERE id = ?1 AND revoked_at IS NULL")
                .bind(token)
                .read_optional(&self.db)
                .await?;
        Ok(flag == Some(1))
    }

    /// The scope of a site (id or slug) and environment, checking both exist.
    pub async fn scope_of(&self, site: &str, env: &str) -> Result<Scope> {
        let site = self.site(site).await?;
        if !site.environments.iter().any(|e| e == env) {
            return Err(StoreError::not_found("environment", env));
        }
        Ok(Scope::new(site.id, env))
    }

    /// Creates a token; returns its description and the secret (shown once).
    pub async fn create_token(&self, input: NewToken) -> Result<(TokenInfo, String)> {
        if input.name.trim().is_empty() {
            return Err(StoreError::invalid("name", "must not be empty"));
        }
        quire_core::text::check_line("name", &input.name, 120)?;
        let site = self.site(&input.site).await?;
        if let Some(envs) = &input.environments {
            if envs.is_empty() {
                return Err(StoreError::invalid("environments", "name at least one environment, or none for all"));
            }
            for env in envs {
                if !site.environments.contains(env) {
                    return Err(StoreError::invalid(
                        "environments",
                        format!("site {} has no environment \"{env}\"", site.slug),
                    ));
                }
            }
        }
        let secret = match input.secret {
            Some(s) if s.len() >= 16 => s,
            Some(_) => return Err(StoreError::invalid("token", "a chosen token must be at least 16 characters")),
            None => random_secret()?,
        };
        let approval_policy = input.approval_policy.unwrap_or(ApprovalPolicy::User);
        let now = Utc::now();
        let info = TokenInfo {
            id: crate::log::new_id(),
            name: input.name,
            prefix: secret.chars().take(7).collect(),
            group: input.group,
            site_id: site.id,
            environments: input.environments,
            expires_at: input.expires_at,
            created_at: now,
            approval_policy,
            last_used_at: None,
            oauth_client_id: None,
            mcp_tools: None,
            instance_admin: input.instance_admin,
        };
        db::query(
            "INSERT INTO api_tokens (id, name, token_hash, prefix, grp, site_id, environments, expires_at, created_at, approval_policy, user_id,
             instance_admin)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )
        .bind(&info.id)
        .bind(&info.name)
        .bind(hash_secret(&secret))
        .bind(&info.prefix)
        .bind(info.group.as_str())
        .bind(&info.site_id)
        .bind(info.environments.as_ref().map(crate::record::to_json))
        .bind(info.expires_at)
        .bind(now)
        .bind(info.approval_policy.as_str())
        .bind(&input.user_id)
        .bind(i64::from(input.instance_admin))
        .write(&self.db).await
        .map_err(|e| match e {
            e if e.is_unique_violation() => StoreError::conflict(Some("token"), "that token already exists"),
            other => other,
        })?;
        Ok((info, secret))
    }

    /// Looks a presented secret up: an API token, or an OAuth access token
    /// of a grant (as its grant, expiring with it and bound to its
    /// resource); `None` when unknown or revoked. A grant's own secret is
    /// never presented, so it is not looked up.
    pub async fn authenticate(&self, secret: &str) -> Result<Option<TokenGrant>> {
        let hash = hash_secret(secret);
        let row = db::query(
            "SELECT * FROM api_tokens WHERE token_hash = ?1 AND revoked_at IS NULL AND oauth_client_id IS NULL
             AND site_id IN (SELECT id FROM sites WHERE archived_at IS NULL)",
        )
        .bind(&hash)
        .read_optional(&self.db)
        .await?;
        if let Some(row) = row {
            let token = token_of(&row)?;
            let expired = token.expires_at.is_some_and(|t| t <= Utc::now());
            return Ok(Some(TokenGrant { token, expired, resource: None }));
        }
        let row = db::query(
            "SELECT a.*, t.resource AS bound_to, t.expires_at AS access_expires_at FROM oauth_tokens t
             JOIN api_tokens a ON a.id = t.token_id WHERE t.hash = ?1 AND t.kind = 'access' AND a.revoked_at IS NULL
             AND a.site_id IN (SELECT id FROM sites WHERE archived_at IS NULL)",
        )
        .bind(&hash)
        .read_optional(&self.db)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let mut token = token_of(&row)?;
        let access: DateTime<Utc> = row.try_get("access_expires_at")?;
        token.expires_at = Some(token.expires_at.map_or(access, |t| t.min(access)));
        let expired = token.expires_at.is_some_and(|t| t <= Utc::now());
        Ok(Some(TokenGrant { token, expired, resource: Some(row.try_get("bound_to")?) }))
    }

    /// The group of a token that is still valid (neither revoked nor
    /// expired), by id; `None` otherwise.
    pub async fn live_token_group(&self, id: &str) -> Result<Option<Group>> {
        let row = db::query("SELECT grp, expires_at FROM api_tokens WHERE id = ?1 AND revoked_at IS NULL")
            .bind(id)
            .read_optional(&self.db)
            .await?;
        let Some(row) = row else { return Ok(None) };
        let expires_at: Option<DateTime<Utc>> = row.try_get("expires_at")?;
        if expires_at.is_some_and(|t| t <= Utc::now()) {
            return Ok(None);
        }
        let group: String = row.try_get("grp")?;
        Ok(Some(Group::parse(&group).map_err(StoreError::Corrupt)?))
    }

    /// The current group of a change-log actor: a token's while it is
    /// neither revoked nor expired, a person's while they are enabled;
    /// `None` once that is no longer so. Any other actor (the local admin,
    /// the system) keeps `recorded`.
    pub async fn live_actor_group(&self, actor: &str, recorded: Group) -> Result<Option<Group>> {
        if let Some(token) = actor.strip_prefix("token:") {
            return self.live_token_group(token).await;
        }
        if let Some(user) = actor.strip_prefix("user:") {
            let row = db::query("SELECT grp FROM users WHERE id = ?1 AND disabled_at IS NULL")
                .bind(user)
                .read_optional(&self.db)
                .await?;
            return match row {
                Some(row) => Ok(Some(Group::parse(&row.try_get::<String, _>("grp")?).map_err(StoreError::Corrupt)?)),
                None => Ok(None),
            };
        }
        Ok(Some(recorded))
    }

    /// Number of tokens ever created (zero means a fresh database).
    pub async fn token_count(&self) -> Result<i64> {
        db::query_scalar("SELECT COUNT(*) FROM api_tokens").read_one(&self.db).await
    }

    /// The tokens of a site (id or slug) that are not revoked, expired ones
    /// included, oldest first. Never their secrets.
    pub async fn tokens(&self, site: &str) -> Result<Vec<TokenInfo>> {
        let site = self.site(site).await?;
        let rows =
            db::query("SELECT * FROM api_tokens WHERE site_id = ?1 AND revoked_at IS NULL ORDER BY created_at, id")
                .bind(&site.id)
                .read_all(&self.db)
                .await?;
        rows.iter().map(token_of).collect()
    }

    /// A token of site `site` (id or slug) that is not revoked, by id;
    /// never its secret. A token of another site, or a revoked one, is not
    /// found, as in [`Store::tokens`].
    pub async fn token(&self, site: &str, id: &str) -> Result<TokenInfo> {
        let site = self.site(site).await?;
        let row = db::query("SELECT * FROM api_tokens WHERE id = ?1 AND site_id = ?2 AND revoked_at IS NULL")
            .bind(id)
            .bind(&site.id)
            .read_optional(&self.db)
            .await?;
        found(row, token_of, "token", id)
    }

    /// Revokes a token of site `site` (id or slug) by id. A token of another
    /// site is not found, so one site's admin cannot revoke another's.
    pub async fn revoke_token(&self, site: &str, id: &str) -> Result<TokenInfo> {
        let site = self.site(site).await?;
        let row = db::query(
            "UPDATE api_tokens SET revoked_at = ?1 WHERE id = ?2 AND site_id = ?3 AND revoked_at IS NULL RETURNING *",
        )
        .bind(Utc::now())
        .bind(id)
        .bind(&site.id)
        .write_optional(&self.db)
        .await?;
        found(row, token_of, "token", id)
    }

    /// How many tokens have ever been revoked. Revocations are permanent, so
    /// a change of this number means a token was revoked since it was last
    /// read; a serving process polls it to drop its cached tokens.
    /// Disabling a user counts too (it ends their sessions; enabling them
    /// again changes the number as well, which only costs a re-check), and
    /// so does archiving a site (its tokens stop) or restoring it.
    pub async fn revocation_count(&self) -> Result<i64> {
        db::query_scalar(
            "SELECT (SELECT COUNT(*) FROM api_tokens WHERE revoked_at IS NOT NULL)
                  + (SELECT COUNT(*) FROM users WHERE disabled_at IS NOT NULL)
                  + (SELECT COUNT(*) FROM sites WHERE archived_at IS NOT NULL)",
        )
        .read_one(&self.db)
        .await
    }

    /// Records that a token was presented now. Callers throttle this (a
    /// serving process writes at most once a minute per token).
    pub async fn touch_token(&self, id: &str) -> Result<()> {
        db::query("UPDATE api_tokens SET last_used_at = ?1 WHERE id = ?2")
            .bind(Utc::now())
            .bind(id)
            .write(&self.db)
            .await?;
        Ok(())
    }
}
