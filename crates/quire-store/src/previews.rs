//! Preview links: short-lived secrets that let a site's own front end read
//! the drafts of one site and environment through delivery, and where that
//! front end shows a draft (the site's `preview_url`).

use crate::auth::hash_secret;
use crate::db;
use crate::{Result, Scope, Store, StoreError};
use chrono::{DateTime, Duration, Utc};
use quire_core::access::Group;

/// How long a preview link works.
pub const PREVIEW_TTL: Duration = Duration::hours(1);

impl Store {
    /// Makes a preview link of `scope` for `actor`; answers its secret
    /// (shown once; stored hashed) and when it stops working. Links long
    /// expired are forgotten on the way.
    pub async fn create_preview_link(&self, scope: &Scope, actor: &str) -> Result<(String, DateTime<Utc>)> {
        let mut bytes = [0u8; 24];
        getrandom::fill(&mut bytes).map_err(|e| StoreError::Corrupt(format!("no randomness: {e}")))?;
        let secret = format!("qp_{}", hex::encode(bytes));
        let (hash, scope, actor) = (hash_secret(&secret), scope.clone(), actor.to_string());
        let now = Utc::now();
        let expires = now + PREVIEW_TTL;
        self.db
            .write(move |c| {
                db::query("DELETE FROM preview_links WHERE expires_at < ?1")
                    .bind(now - Duration::days(1))
                    .execute(c)?;
                db::query(
                    "INSERT INTO preview_links (hash, site_id, env, created_by, created_at, expires_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .bind(hash)
                .bind_scope(&scope)
                .bind(actor)
                .bind(now)
                .bind(expires)
                .execute(c)?;
                Ok(())
            })
            .await?;
        Ok((secret, expires))
    }

    /// The site and environment a preview link reads, while it works: until
    /// it expires, and while the one who made it may still act (a token
    /// revoked or a person disabled since ends their links).
    pub async fn preview_link(&self, secret: &str) -> Result<Option<Scope>> {
        let found: Option<(String, String, DateTime<Utc>, String)> =
            db::query_as("SELECT site_id, env, expires_at, created_by FROM preview_links WHERE hash = ?1")
                .bind(hash_secret(secret))
                .read_optional(&self.db)
                .await?;
        let Some((site, env, _, maker)) = found.filter(|(_, _, expires, _)| *expires > Utc::now()) else {
            return Ok(None);
        };
        // Anyone but a token or a person (the local admin) keeps what it had.
        if self.live_actor_group(&maker, Group::Viewer).await?.is_none() {
            return Ok(None);
        }
        Ok(Some(Scope::new(site, env)))
    }

    /// Sets (or, with none, clears) where site `site_id`'s own front end
    /// shows a draft.
    pub async fn set_preview_url(&self, site_id: &str, url: Option<&str>) -> Result<()> {
        let (site_id, url) = (site_id.to_string(), url.map(str::to_string));
        self.db
            .write(move |c| {
                db::query("UPDATE sites SET preview_url = ?1 WHERE id = ?2").bind(url).bind(site_id).execute(c)?;
                Ok(())
            })
            .await
    }
}
