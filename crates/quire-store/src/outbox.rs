//! The outbox's sending side ([decision 0049]): claiming due deliveries,
//! recording attempts, the delivery log and sending one again. A delivery
//! of a record's change is written (`webhooks::enqueue`, by the change
//! log) without its body, which is built here from the change log when it
//! is read or sent: the record as that change left it, the same bytes on
//! every attempt, and a small row in the writer's transaction.
//!
//! [decision 0049]: ../../../docs/decisions/0049-webhooks-outbox.md

use crate::db::{self, Conn, Row};
use crate::webhooks::{Claimed, Delivery, json_col, load};
use crate::{Result, Scope, Store, StoreError};
use chrono::{DateTime, Utc};
use serde_json::json;
use std::time::Duration;

/// The body of delivery `row`: as stored, or (for a record's change, stored
/// empty) built from its change: `{ type, timestamp, data: { kind, id,
/// site, env, changeId, actor, record } }`, the record as the change left
/// it (as it was, for an archive), the timestamp the delivery's own.
pub(crate) fn payload_of(conn: &Conn, row: &Row) -> Result<String> {
    let stored: String = row.try_get("payload")?;
    if !stored.is_empty() {
        return Ok(stored);
    }
    let scope = Scope { site_id: row.try_get("site_id")?, env: row.try_get("env")? };
    let seq: i64 = row.try_get("seq")?;
    let event: String = row.try_get("event")?;
    let created: DateTime<Utc> = row.try_get("created_at")?;
    let change = crate::changes::change_in(conn, &scope, seq)?;
    let record = change.after.as_ref().or(change.before.as_ref());
    let body = json!({
        "type": event,
        "timestamp": created,
        "data": {
            "kind": change.entity.as_str(),
            "id": change.entity_id,
            "site": scope.site_id,
            "env": scope.env,
            "changeId": seq,
            "actor": change.actor,
            "record": record,
        },
    });
    Ok(body.to_string())
}

fn delivery_of(conn: &Conn, row: &Row) -> Result<Delivery> {
    let status: String = row.try_get("status")?;
    let next: i64 = row.try_get("next_at")?;
    Ok(Delivery {
        id: row.try_get("id")?,
        webhook_id: row.try_get("webhook_id")?,
        event: row.try_get("event")?,
        next_at: (status == "pending").then(|| DateTime::from_timestamp_millis(next)).flatten(),
        status,
        attempts: row.try_get("attempts")?,
        last_status: row.try_get("last_status")?,
        last_error: row.try_get("last_error")?,
        created_at: row.try_get("created_at")?,
        delivered_at: row.try_get("delivered_at")?,
        payload: serde_json::from_str(&payload_of(conn, row)?)?,
    })
}

impl Store {
    /// On SQLite, writes the deliveries of the changes logged past the
    /// subscriptions' cursors, as far as each has room (see
    /// `webhooks::fan_out_changes`); answers how many. Nothing on PostgreSQL,
    /// where each change enqueues its own.
    pub async fn fan_out_deliveries(&self) -> Result<usize> {
        if self.db.is_postgres() || !self.db.read(crate::webhooks::behind).await? {
            return Ok(0);
        }
        self.db.write(crate::webhooks::fan_out_changes).await
    }

    /// A subscription's deliveries, newest first (at most `limit`).
    pub async fn webhook_deliveries(&self, scope: &Scope, id: &str, limit: u32) -> Result<Vec<Delivery>> {
        self.fan_out_deliveries().await?;
        let (scope, id) = (scope.clone(), id.to_string());
        self.db
            .read(move |c| {
                load(c, &scope, &id)?;
                let rows = db::query(
                    "SELECT * FROM webhook_deliveries WHERE webhook_id = ?1 AND site_id = ?2
                     ORDER BY seq DESC, created_at DESC LIMIT ?3",
                )
                .bind(&id)
                .bind(&scope.site_id)
                .bind(i64::from(limit))
                .fetch_all(c)?;
                rows.iter().map(|row| delivery_of(c, row)).collect()
            })
            .await
    }

    /// Sends a delivery again (after a failure, or to replay one): it is
    /// due now, with the same id and payload.
    pub async fn redeliver(&self, scope: &Scope, delivery: &str) -> Result<Delivery> {
        let (scope, delivery) = (scope.clone(), delivery.to_string());
        self.db
            .write(move |c| {
                let live: Option<String> = db::query_scalar(
                    "SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
                     WHERE d.id = ?1 AND d.site_id = ?2 AND w.archived_at IS NULL",
                )
                .bind(&delivery)
                .bind(&scope.site_id)
                .fetch_optional(c)?;
                if live.is_none() {
                    return Err(StoreError::not_found("delivery", &delivery));
                }
                // It heads its queue again unless another delivery heads
                // it now; then it is next (the oldest waiting).
                db::query(
                    "UPDATE webhook_deliveries SET status = 'pending', next_at = ?2, lease_until = NULL,
                     head = CASE WHEN EXISTS (SELECT 1 FROM webhook_deliveries o
                                              WHERE o.webhook_id = webhook_deliveries.webhook_id
                                                AND o.subject = webhook_deliveries.subject AND o.status = 'pending'
                                                AND o.head = 1 AND o.id <> ?1) THEN 0 ELSE 1 END
                     WHERE id = ?1",
                )
                .bind(&delivery)
                .bind(Utc::now().timestamp_millis())
                .execute(c)?;
                let row = db::query("SELECT * FROM webhook_deliveries WHERE id = ?1").bind(&delivery).fetch_one(c)?;
                delivery_of(c, &row)
            })
            .await
    }

    /// Claims up to `limit` deliveries due, each for `lease`: heads of
    /// their queues (see the module's text), not held by another sender,
    /// the longest due first. Empty when nothing is due.
    pub async fn claim_deliveries(&self, lease: Duration, limit: usize) -> Result<Vec<Claimed>> {
        self.fan_out_deliveries().await?;
        let lock = if self.db.is_postgres() { " FOR UPDATE SKIP LOCKED" } else { "" };
        let now = Utc::now().timestamp_millis();
        let rows = db::query(format!(
            "UPDATE webhook_deliveries SET attempts = attempts + 1, lease_until = ?1
             WHERE id IN (SELECT d.id FROM webhook_deliveries d
                          WHERE d.status = 'pending' AND d.head = 1 AND d.next_at <= ?2
                            AND (d.lease_until IS NULL OR d.lease_until <= ?2)
                          ORDER BY d.next_at, d.seq LIMIT ?3{lock})
             RETURNING id, webhook_id, site_id, env, event, subject, seq, payload, attempts, created_at"
        ))
        .bind(now + lease.as_millis() as i64)
        .bind(now)
        .bind(limit as i64)
        .write_all(&self.db)
        .await?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        self.db
            .read(move |c| {
                let mut hooks: std::collections::HashMap<String, (String, Vec<String>)> = Default::default();
                let mut claimed = Vec::with_capacity(rows.len());
                for row in &rows {
                    let webhook: String = row.try_get("webhook_id")?;
                    if !hooks.contains_key(&webhook) {
                        let hook = db::query("SELECT url, secrets FROM webhooks WHERE id = ?1")
                            .bind(&webhook)
                            .fetch_optional(c)?
                            .ok_or_else(|| StoreError::not_found("webhook", &webhook))?;
                        hooks.insert(webhook.clone(), (hook.try_get("url")?, json_col(&hook, "secrets")?));
                    }
                    let (url, secrets) = hooks[&webhook].clone();
                    claimed.push(Claimed {
                        id: row.try_get("id")?,
                        url,
                        secrets,
                        payload: payload_of(c, row)?,
                        attempt: row.try_get("attempts")?,
                        webhook_id: webhook,
                        subject: row.try_get("subject")?,
                    });
                }
                Ok(claimed)
            })
            .await
    }

    /// Records an attempt of `claimed`: delivered, or failed with the
    /// status it got (if any) and why, then due again after `retry` (none:
    /// it failed for good). A delivery that is done hands its queue on to
    /// the next delivery waiting in it, in the same transaction.
    pub async fn record_attempt(
        &self,
        claimed: &Claimed,
        delivered: bool,
        status: Option<u16>,
        error: Option<&str>,
        retry: Option<Duration>,
    ) -> Result<()> {
        let now = Utc::now();
        let (next, state) = match (delivered, retry) {
            (true, _) => (now.timestamp_millis(), "delivered"),
            (false, Some(after)) => (now.timestamp_millis() + after.as_millis() as i64, "pending"),
            (false, None) => (now.timestamp_millis(), "failed"),
        };
        let (claimed, error) = (claimed.clone(), error.map(str::to_string));
        self.db
            .write(move |c| {
                let done = db::query(
                    "UPDATE webhook_deliveries SET status = ?2, next_at = ?3, lease_until = NULL, last_status = ?4,
                     last_error = ?5, delivered_at = ?6 WHERE id = ?1 AND attempts = ?7",
                )
                .bind(&claimed.id)
                .bind(state)
                .bind(next)
                .bind(status.map(i64::from))
                .bind(&error)
                .bind(delivered.then_some(now))
                .bind(claimed.attempt)
                .execute(c)?;
                if done.rows_affected() > 0 && state != "pending" {
                    db::query(
                        "UPDATE webhook_deliveries SET head = 1
                         WHERE id = (SELECT n.id FROM webhook_deliveries n WHERE n.webhook_id = ?1 AND n.subject = ?2
                                       AND n.status = 'pending' AND n.head = 0 ORDER BY n.seq LIMIT 1)
                           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries h WHERE h.webhook_id = ?1
                                             AND h.subject = ?2 AND h.status = 'pending' AND h.head = 1)",
                    )
                    .bind(&claimed.webhook_id)
                    .bind(&claimed.subject)
                    .execute(c)?;
                }
                Ok(())
            })
            .await
    }

    /// When the next delivery is due (a head whose wait or lease runs
    /// out), if one waits.
    pub async fn next_delivery_due(&self) -> Result<Option<DateTime<Utc>>> {
        // Changes waiting past a cursor with room for them are due now.
        if !self.db.is_postgres() && self.db.read(crate::webhooks::behind).await? {
            return Ok(Some(Utc::now()));
        }
        let at: Option<i64> = db::query_scalar(
            "SELECT min(CASE WHEN lease_until > next_at THEN lease_until ELSE next_at END)
             FROM webhook_deliveries WHERE status = 'pending' AND head = 1",
        )
        .read_one(&self.db)
        .await?;
        Ok(at.and_then(DateTime::from_timestamp_millis))
    }
}
