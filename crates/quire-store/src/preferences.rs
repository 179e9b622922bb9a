//! Each person's approval preferences on a site: when a tool that runs for
//! them waits for their approval. The store keeps them as given; which
//! tools and categories exist is the registry's to check, and the floor
//! (destructive calls always ask) is the registry's to hold.

use crate::db;
use crate::{Result, Store, StoreError};
use chrono::{DateTime, Utc};
use quire_core::model::ApprovalPreferences;

/// A person's approval preferences as stored, with who last changed them.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPreferences {
    /// The preferences (the defaults when never set).
    pub preferences: ApprovalPreferences,
    /// When they were last changed; none when never set.
    pub updated_at: Option<DateTime<Utc>>,
    /// Who last changed them (`user:<id>`, `token:<id>`); none when never set.
    pub updated_by: Option<String>,
}

impl Store {
    /// The person (user id) a change-log actor acts for: a signed-in
    /// person's own id, or the person a token was made by; none for a
    /// token made without one (by the local admin, the CLI), the local
    /// admin and the system.
    pub async fn person_of(&self, actor: &str) -> Result<Option<String>> {
        if let Some(user) = actor.strip_prefix("user:") {
            return Ok(Some(user.to_string()));
        }
        let Some(token) = actor.strip_prefix("token:") else { return Ok(None) };
        let row = db::query("SELECT user_id FROM api_tokens WHERE id = ?1").bind(token).read_optional(&self.db).await?;
        match row {
            Some(row) => Ok(row.try_get::<Option<String>, _>("user_id")?),
            None => Ok(None),
        }
    }

    /// A person's approval preferences on site `site_id` (the defaults when
    /// they never set any).
    pub async fn approval_preferences(&self, user_id: &str, site_id: &str) -> Result<StoredPreferences> {
        let row = db::query(
            "SELECT preferences, updated_at, updated_by FROM approval_preferences WHERE user_id = ?1 AND site_id = ?2",
        )
        .bind(user_id)
        .bind(site_id)
        .read_optional(&self.db)
        .await?;
        let Some(row) = row else {
            return Ok(StoredPreferences {
                preferences: ApprovalPreferences::default(),
                updated_at: None,
                updated_by: None,
            });
        };
        Ok(StoredPreferences {
            preferences: crate::record::json_col(&row, "preferences")?,
            updated_at: Some(row.try_get("updated_at")?),
            updated_by: Some(row.try_get("updated_by")?),
        })
    }

    /// The approval preferences that apply to a call by `actor` on site
    /// `site_id`: its person's (see [`Store::person_of`]); none when no
    /// person stands behind it or they set none. One indexed read per call,
    /// on the calling thread (no hand-off).
    pub async fn actor_approval_preferences(&self, actor: &str, site_id: &str) -> Result<Option<ApprovalPreferences>> {
        let row = if let Some(user) = actor.strip_prefix("user:") {
            let q = db::query("SELECT preferences FROM approval_preferences WHERE user_id = ?1 AND site_id = ?2")
                .bind(user)
                .bind(site_id);
            self.db.read_short(move |c| q.fetch_optional(c)).await?
        } else if let Some(token) = actor.strip_prefix("token:") {
            let q = db::query(
                "SELECT p.preferences FROM api_tokens t
                 JOIN approval_preferences p ON p.user_id = t.user_id AND p.site_id = ?2
                 WHERE t.id = ?1",
            )
            .bind(token)
            .bind(site_id);
            self.db.read_short(move |c| q.fetch_optional(c)).await?
        } else {
            None
        };
        row.map(|row| crate::record::json_col(&row, "preferences")).transpose()
    }

    /// Sets a person's approval preferences on site `site_id`, recording
    /// `by` (the actor who changed them) and when.
    pub async fn set_approval_preferences(
        &self,
        user_id: &str,
        site_id: &str,
        preferences: &ApprovalPreferences,
        by: &str,
    ) -> Result<StoredPreferences> {
        let user = self.user(user_id).await?;
        if !user.sites.iter().any(|s| s.site_id == site_id) {
            return Err(StoreError::not_found("user", user_id));
        }
        let now = Utc::now();
        db::query(
            "INSERT INTO approval_preferences (user_id, site_id, preferences, updated_at, updated_by)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (user_id, site_id) DO UPDATE SET preferences = excluded.preferences,
                 updated_at = excluded.updated_at, updated_by = excluded.updated_by",
        )
        .bind(&user.id)
        .bind(site_id)
        .bind(crate::record::to_json(preferences))
        .bind(now)
        .bind(by)
        .write(&self.db)
        .await?;
        tracing::info!(target: "quire::preferences", user = %user.id, site = site_id, by, "approval preferences changed");
        self.approval_preferences(&user.id, site_id).await
    }
}
