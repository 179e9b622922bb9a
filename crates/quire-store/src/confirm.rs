//! Confirmations of destructive calls: created by a preview, resolved by a
//! person, consumed once by the execution.

use crate::db::{self, Conn, Row, read_row};
use crate::record::{found, json_col, table_of, wire_col};
use crate::{Result, Scope, Store, StoreError};
use chrono::{DateTime, Utc};
use quire_core::model::{ArchivedItem, EntityKind};
use serde::Serialize;
use serde_json::Value;

/// The version of every record a preview described: `(kind, id, version)`.
pub type Fingerprint = Vec<(EntityKind, String, i64)>;

pub use quire_core::model::ConfirmationStatus;

/// A destructive call waiting for, or holding, a person's decision.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Confirmation {
    /// The confirmationId.
    pub id: String,
    /// Tool name.
    pub tool: String,
    /// The exact arguments of the previewed call.
    #[schema(value_type = Object)]
    pub args: Value,
    /// Hash of the canonical arguments.
    #[serde(skip)]
    pub args_hash: String,
    /// Versions of the records the preview described.
    #[serde(skip)]
    pub fingerprint: Fingerprint,
    /// What would change: `{ message, items }`.
    #[schema(value_type = Object)]
    pub preview: Value,
    /// Who asked.
    pub requested_by: String,
    /// Through which surface.
    pub requested_via: quire_core::model::Surface,
    /// Agent session, if any.
    pub session_id: Option<String>,
    /// Agent turn, if any.
    pub turn_id: Option<String>,
    /// pending, approved, rejected or used.
    pub status: ConfirmationStatus,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it stops being usable.
    pub expires_at: DateTime<Utc>,
    /// Who approved or rejected it.
    pub resolved_by: Option<String>,
    /// Why it was rejected.
    pub reason: Option<String>,
}

/// A confirmation to record.
#[derive(Debug, Clone)]
pub struct NewConfirmation {
    /// Tool name.
    pub tool: String,
    /// Canonical arguments.
    pub args: Value,
    /// Their hash.
    pub args_hash: String,
    /// Versions of the described records.
    pub fingerprint: Fingerprint,
    /// `{ message, items }`.
    pub preview: Value,
    /// Who asked.
    pub requested_by: String,
    /// Through which surface.
    pub requested_via: quire_core::model::Surface,
    /// Agent session.
    pub session_id: Option<String>,
    /// Agent turn.
    pub turn_id: Option<String>,
    /// Expiry.
    pub expires_at: DateTime<Utc>,
}

fn from_row(row: &Row) -> Result<Confirmation> {
    Ok(read_row!(row => Confirmation {
        id, tool, args_hash, requested_by, session_id, turn_id, created_at, expires_at, resolved_by, reason;
        args: json_col(row, "args")?,
        fingerprint: json_col(row, "fingerprint")?,
        preview: json_col(row, "preview")?,
        requested_via: wire_col(row, "requested_via")?,
        status: wire_col(row, "status")?,
    }))
}

/// Current versions of `items` (archived or not) in `scope`; a missing
/// record, or one of another scope, has version -1.
pub(crate) fn fingerprint_of(conn: &Conn, scope: &Scope, items: &[ArchivedItem]) -> Result<Fingerprint> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let table = table_of(item.entity)?;
        let version: Option<i64> =
            db::query_scalar(format!("SELECT version FROM {table} WHERE id = ?1 AND site_id = ?2 AND env = ?3"))
                .bind(&item.id)
                .bind_scope(scope)
                .fetch_optional(conn)?;
        out.push((item.entity, item.id.clone(), version.unwrap_or(-1)));
    }
    Ok(out)
}

impl Store {
    /// The versions of these records of `scope` now.
    pub async fn fingerprint(&self, scope: &Scope, items: &[ArchivedItem]) -> Result<Fingerprint> {
        let (scope, items) = (scope.clone(), items.to_vec());
        self.db.read(move |c| fingerprint_of(c, &scope, &items)).await
    }

    /// Records a pending confirmation.
    pub async fn create_confirmation(&self, scope: &Scope, input: NewConfirmation) -> Result<Confirmation> {
        let id = format!("cf_{}", crate::log::new_id().replace('-', ""));
        let (cid, scope_in) = (id.clone(), scope.clone());
        self.db
            .write(move |c| {
                db::query(
                    "INSERT INTO confirmations (id, site_id, env, tool, args, args_hash, fingerprint, preview, requested_by, session_id,
                     turn_id, status, created_at, expires_at, requested_via)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'pending', ?12, ?13, ?14)",
                )
                .bind(&cid)
                .bind_scope(&scope_in)
                .bind(&input.tool)
                .bind(input.args.to_string())
                .bind(&input.args_hash)
                .bind(serde_json::to_string(&input.fingerprint)?)
                .bind(input.preview.to_string())
                .bind(&input.requested_by)
                .bind(&input.session_id)
                .bind(&input.turn_id)
                .bind(Utc::now())
                .bind(input.expires_at)
                .bind(input.requested_via.as_str())
                .execute(c)?;
                let data = serde_json::json!({
                    "tool": input.tool,
                    "sessionId": input.session_id,
                    "turnId": input.turn_id,
                    "expiresAt": input.expires_at,
                    "preview": input.preview,
                });
                crate::webhooks::announce(c, &scope_in, &input.requested_by, "approval", "waiting", &cid, data)
            })
            .await?;
        self.confirmation(scope, &id).await
    }

    /// A confirmation of this scope.
    pub async fn confirmation(&self, scope: &Scope, id: &str) -> Result<Confirmation> {
        found(db::row_in("confirmations", scope, id).write_optional(&self.db).await?, from_row, "confirmation", id)
    }

    /// The newest usable preview of this exact call that this caller
    /// (`requested_by`, through `surface`) made in a session.
    pub async fn session_confirmation(
        &self,
        scope: &Scope,
        session: &str,
        requested_by: &str,
        surface: quire_core::model::Surface,
        tool: &str,
        args_hash: &str,
    ) -> Result<Option<Confirmation>> {
        let row = db::query(
            "SELECT * FROM confirmations WHERE site_id = ?1 AND env = ?2 AND session_id = ?3 AND tool = ?4 AND args_hash = ?5
             AND requested_by = ?6 AND requested_via = ?7 AND status IN ('pending', 'approved') ORDER BY created_at DESC LIMIT 1",
        )
        .bind_scope(scope)
        .bind(session)
        .bind(tool)
        .bind(args_hash)
        .bind(requested_by)
        .bind(surface.as_str())
        .write_optional(&self.db).await?;
        row.as_ref().map(from_row).transpose()
    }

    /// The previews turn `turn` of agent session `session` asked for that
    /// nobody has answered yet and that have not expired, oldest first:
    /// what a person's next message may answer.
    pub async fn unanswered_previews(&self, scope: &Scope, session: &str, turn: &str) -> Result<Vec<Confirmation>> {
        let rows = db::query(
            "SELECT * FROM confirmations WHERE site_id = ?1 AND env = ?2 AND session_id = ?3 AND turn_id = ?4
             AND requested_via = 'agent' AND status = 'pending' AND expires_at > ?5 ORDER BY created_at",
        )
        .bind_scope(scope)
        .bind(session)
        .bind(turn)
        .bind(Utc::now())
        .read_all(&self.db)
        .await?;
        rows.iter().map(from_row).collect()
    }

    /// Pending confirmations of the scope, oldest first.
    pub async fn pending_confirmations(&self, scope: &Scope) -> Result<Vec<Confirmation>> {
        let rows = db::query(
            "SELECT * FROM confirmations WHERE site_id = ?1 AND env = ?2 AND status = 'pending' AND expires_at > ?3 ORDER BY created_at",
        )
        .bind_scope(scope)
        .bind(Utc::now())
        .read_all(&self.db).await?;
        rows.iter().map(from_row).collect()
    }

    /// Approves or rejects a pending confirmation.
    pub async fn resolve_confirmation(
        &self,
        scope: &Scope,
        id: &str,
        approve: bool,
        by: &str,
        reason: Option<&str>,
    ) -> Result<Confirmation> {
        let status = if approve { ConfirmationStatus::Approved } else { ConfirmationStatus::Rejected };
        let done = db::query(
            "UPDATE confirmations SET status = ?1, resolved_by = ?2, resolved_at = ?3, reason = ?4
             WHERE id = ?5 AND site_id = ?6 AND env = ?7 AND status = 'pending' AND expires_at > ?3",
        )
        .bind(status.as_str())
        .bind(by)
        .bind(Utc::now())
        .bind(reason)
        .bind(id)
        .bind_scope(scope)
        .write(&self.db)
        .await?;
        if done.rows_affected() == 0 {
            let current = self.confirmation(scope, id).await?;
            let why = if current.expires_at <= Utc::now() {
                "expired".to_string()
            } else {
                current.status.as_str().to_string()
            };
            return Err(StoreError::conflict(None, format!("confirmation {id} is {why}, not pending")));
        }
        self.confirmation(scope, id).await
    }

    /// Marks an approved confirmation used; false when it was not approved,
    /// already used, or expired (exactly one caller can win).
    pub async fn consume_confirmation(&self, scope: &Scope, id: &str, require_approved: bool) -> Result<bool> {
        let sql = if require_approved {
            "UPDATE confirmations SET status = 'used' WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND status = 'approved' AND expires_at > ?4"
        } else {
            "UPDATE confirmations SET status = 'used' WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND status IN ('pending', 'approved') AND expires_at > ?4"
        };
        let done = db::query(sql).bind(id).bind_scope(scope).bind(Utc::now()).write(&self.db).await?;
        Ok(done.rows_affected() == 1)
    }
}
