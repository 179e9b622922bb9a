//! Webhooks ([decision 0049]): a site's subscriptions to events, and the
//! outbox of their deliveries.
//!
//! A delivery is written by [`enqueue`], called by the change log's one
//! write ([`crate::log::logged`]) inside the transaction of the change: a
//! change that commits has its deliveries, one rolled back has none, and a
//! crash loses nothing and invents nothing. A delivery keeps its id (the
//! Standard Webhooks `webhook-id`) and payload across attempts. The
//! sender (`quire_tools::webhooks`) claims due deliveries, one per record
//! and subscription at a time in the order of their changes, so a record's
//! events arrive in order; a failed attempt waits longer each time, up to
//! the subscription's last attempt.
//!
//! Each record's deliveries to one subscription form a queue whose oldest
//! pending delivery is marked its head (`head = 1`) when it is enqueued or
//! when the one before it is delivered or fails for good; only heads are
//! claimed, so what is due is one index range however long the queues
//! behind them grow. On PostgreSQL, enqueueing locks the queue's oldest
//! pending delivery, so that a head finishing at the same moment hands on
//! to the delivery being written and none is left without a head.
//!
//! [decision 0049]: ../../../docs/decisions/0049-webhooks-outbox.md

use crate::db::{self, Conn, Row};
use crate::{Result, Scope, Store, StoreError};
use chrono::{DateTime, Utc};
use quire_core::model::{ChangeAction, ChangeContext, EntityKind};
use serde::Serialize;
use serde_json::{Value, json};
use std::time::Duration;

/// The events a subscription may name: a record's changes, and
/// `published` of a release, `ran` of a schedule, `finished` of an agent's
/// turn, `waiting` of an approval (see [`KINDS`]).
pub const EVENTS: [&str; 10] = [
    "created",
    "updated",
    "published",
    "unpublished",
    "archived",
    "restored",
    "reverted",
    "ran",
    "finished",
    "waiting",
];

/// The kinds of event that are not a record's change, beside the record
/// kinds a subscription may name.
pub const KINDS: [&str; 4] = ["release", "schedule", "turn", "approval"];

/// A site's subscription to events.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Webhook {
    /// Identifier.
    pub id: String,
    /// The environment it listens to; none: every environment of the site.
    pub env: Option<String>,
    /// Where deliveries are POSTed.
    pub url: String,
    /// The events it receives (`published`, …); empty: every one.
    pub events: Vec<String>,
    /// The kinds of record it receives (`page`, `entry`, …); empty: every one.
    pub kinds: Vec<String>,
    /// What it is for.
    pub description: String,
    /// How many secrets sign each delivery (more than one while a secret rotates).
    pub secrets: usize,
    /// Who made it.
    pub created_by: String,
    /// When.
    pub created_at: DateTime<Utc>,
}

/// A new subscription.
#[derive(Debug, Clone)]
pub struct NewWebhook {
    /// The environment, or none for all of the site's.
    pub env: Option<String>,
    /// Where to POST (checked by the caller: an http(s) URL).
    pub url: String,
    /// Events, each one of [`EVENTS`]; empty: all.
    pub events: Vec<String>,
    /// Record kinds and [`KINDS`]; empty: all.
    pub kinds: Vec<String>,
    /// What it is for.
    pub description: String,
    /// Its first secret (`whsec_…`).
    pub secret: String,
}

/// One delivery of an event to a subscription, with its last attempt.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// The message id (`webhook-id`), the same on every attempt.
    pub id: String,
    /// The subscription.
    pub webhook_id: String,
    /// The event type (`page.published`).
    pub event: String,
    /// pending, delivered or failed.
    pub status: String,
    /// Attempts made.
    pub attempts: i64,
    /// The HTTP status of the last attempt, if it got one.
    pub last_status: Option<i64>,
    /// Why the last attempt failed, if it did.
    pub last_error: Option<String>,
    /// When the next attempt is due, while pending.
    pub next_at: Option<DateTime<Utc>>,
    /// When it was made (with its change).
    pub created_at: DateTime<Utc>,
    /// When it was delivered.
    pub delivered_at: Option<DateTime<Utc>>,
    /// What is sent.
    #[schema(value_type = Object)]
    pub payload: Value,
}

/// A delivery claimed for an attempt: what to send and sign.
#[derive(Debug, Clone)]
pub struct Claimed {
    /// The message id.
    pub id: String,
    /// Where to send it.
    pub url: String,
    /// The secrets that sign it.
    pub secrets: Vec<String>,
    /// The body, exactly as signed.
    pub payload: String,
    /// This attempt's number (from 1).
    pub attempt: i64,
    /// The subscription.
    pub webhook_id: String,
    /// The record (`kind:id`) whose queue it heads.
    pub subject: String,
}

/// A JSON column of `row`, decoded. (The record module's helpers are not
/// used here: the record module writes through the change log, which
/// calls this one.)
fn json_col<T: serde::de::DeserializeOwned>(row: &Row, column: &str) -> Result<T> {
    let text: String = row.try_get(column)?;
    Ok(serde_json::from_str(&text)?)
}

/// A new id (time-ordered, as the change log's). Made here rather than
/// with the log's: the log's write calls this module.
fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

fn webhook_of(row: &Row) -> Result<Webhook> {
    let secrets: Vec<String> = json_col(row, "secrets")?;
    Ok(Webhook {
        id: row.try_get("id")?,
        env: row.try_get("env")?,
        url: row.try_get("url")?,
        events: json_col(row, "events")?,
        kinds: json_col(row, "kinds")?,
        description: row.try_get("description")?,
        secrets: secrets.len(),
        created_by: row.try_get("created_by")?,
        created_at: row.try_get("created_at")?,
    })
}

fn delivery_of(row: &Row) -> Result<Delivery> {
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
        payload: json_col(row, "payload")?,
    })
}

/// The event a change is, if subscribers hear of it.
fn event_of(action: ChangeAction) -> Option<&'static str> {
    Some(match action {
        ChangeAction::Create => "created",
        ChangeAction::Update => "updated",
        ChangeAction::Archive => "archived",
        ChangeAction::Restore => "restored",
        ChangeAction::Revert | ChangeAction::Undo => "reverted",
        ChangeAction::Publish => "published",
        ChangeAction::Unpublish => "unpublished",
        _ => return None,
    })
}

/// Writes a delivery of change `seq` for each subscription of its scope
/// that wants it, in the change's transaction (see the module's text).
#[allow(clippy::too_many_arguments)]
pub(crate) fn enqueue(
    conn: &Conn,
    scope: &Scope,
    ctx: &ChangeContext,
    seq: i64,
    kind: EntityKind,
    id: &str,
    action: ChangeAction,
    record: Option<&Value>,
) -> Result<()> {
    let Some(event) = event_of(action) else { return Ok(()) };
    // Notes live in the vault, their changes logged but not sent.
    if kind == EntityKind::Note {
        return Ok(());
    }
    let payload = |now: DateTime<Utc>| {
        json!({
            "type": format!("{}.{event}", kind.as_str()),
            "timestamp": now,
            "data": {
                "kind": kind.as_str(),
                "id": id,
                "site": scope.site_id,
                "env": scope.env,
                "changeId": seq,
                "actor": ctx.actor,
                "record": record,
            },
        })
    };
    fan_out(conn, scope, kind.as_str(), event, &format!("{}:{id}", kind.as_str()), seq, payload)
}

/// Writes a delivery of event `event` of `kind` (one of [`KINDS`]) about
/// `id`, with `data`, for each subscription of `scope` that wants it, in the
/// caller's transaction: a release published, a schedule run, an agent's
/// turn finished, an approval waiting.
pub(crate) fn announce(
    conn: &Conn,
    scope: &Scope,
    actor: &str,
    kind: &str,
    event: &str,
    id: &str,
    data: Value,
) -> Result<()> {
    debug_assert!(KINDS.contains(&kind) && EVENTS.contains(&event));
    let payload = |now: DateTime<Utc>| {
        let mut about = json!({ "kind": kind, "id": id, "site": scope.site_id, "env": scope.env, "actor": actor });
        if let (Some(about), Value::Object(data)) = (about.as_object_mut(), data) {
            about.extend(data);
        }
        json!({ "type": format!("{kind}.{event}"), "timestamp": now, "data": about })
    };
    // Each is its subject's one event: its place in the queue is its time.
    let seq = Utc::now().timestamp_micros();
    fan_out(conn, scope, kind, event, &format!("{kind}:{id}"), seq, payload)
}

/// The one write of a delivery for each subscription of `scope` wanting
/// `kind`'s `event`, at place `seq` of the queue of `subject`. The payload
/// is made only when one does.
fn fan_out(
    conn: &Conn,
    scope: &Scope,
    kind: &str,
    event: &str,
    subject: &str,
    seq: i64,
    payload: impl FnOnce(DateTime<Utc>) -> Value,
) -> Result<()> {
    let rows = db::query(
        "SELECT id, events, kinds FROM webhooks WHERE site_id = ?1 AND (env IS NULL OR env = ?2) AND archived_at IS NULL",
    )
    .bind_scope(scope)
    .fetch_all(conn)?;
    if rows.is_empty() {
        return Ok(());
    }
    let now = Utc::now();
    let mut wanting = Vec::new();
    for row in &rows {
        let events: Vec<String> = json_col(row, "events")?;
        let kinds: Vec<String> = json_col(row, "kinds")?;
        if (events.is_empty() || events.iter().any(|e| e == event))
            && (kinds.is_empty() || kinds.iter().any(|k| k == kind))
        {
            wanting.push(row.try_get::<String, _>("id")?);
        }
    }
    if wanting.is_empty() {
        return Ok(());
    }
    let payload = payload(now).to_string();
    // The oldest pending delivery of the queue, if any: on PostgreSQL,
    // locked, so a head that finishes at the same moment hands on to this
    // one after it commits, or (finished first) is passed over for the
    // next it handed on to.
    let lock = if conn.is_postgres() { " FOR UPDATE" } else { "" };
    for webhook in &wanting {
        let waiting = db::query(format!(
            "SELECT id FROM webhook_deliveries WHERE webhook_id = ?1 AND subject = ?2 AND status = 'pending'
             ORDER BY seq LIMIT 1{lock}"
        ))
        .bind(webhook)
        .bind(subject)
        .fetch_optional(conn)?;
        db::query(
            "INSERT INTO webhook_deliveries (id, webhook_id, site_id, env, event, subject, seq, payload, status, next_at, created_at, head)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'pending', ?9, ?10, ?11)",
        )
        .bind(format!("msg_{}", new_id()))
        .bind(webhook)
        .bind_scope(scope)
        .bind(format!("{kind}.{event}"))
        .bind(subject)
        .bind(seq)
        .bind(&payload)
        .bind(now.timestamp_millis())
        .bind(now)
        .bind(i64::from(waiting.is_none()))
        .execute(conn)?;
    }
    Ok(())
}

impl Store {
    /// Subscribes the scope's site (and `env`, if named) to events.
    pub async fn create_webhook(&self, ctx: &ChangeContext, scope: &Scope, new: NewWebhook) -> Result<Webhook> {
        let (ctx, scope) = (ctx.clone(), scope.clone());
        self.db
            .write(move |c| {
                let id = new_id();
                db::query(
                    "INSERT INTO webhooks (id, site_id, env, url, events, kinds, secrets, description, created_by, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )
                .bind(&id)
                .bind(&scope.site_id)
                .bind(&new.env)
                .bind(&new.url)
                .bind(to_json(&new.events))
                .bind(to_json(&new.kinds))
                .bind(to_json(&vec![new.secret.clone()]))
                .bind(&new.description)
                .bind(&ctx.actor)
                .bind(Utc::now())
                .execute(c)?;
                load(c, &scope, &id)
            })
            .await
    }

    /// The site's live subscriptions, oldest first.
    pub async fn webhooks(&self, scope: &Scope) -> Result<Vec<Webhook>> {
        let rows =
            db::query("SELECT * FROM webhooks WHERE site_id = ?1 AND archived_at IS NULL ORDER BY created_at, id")
                .bind(&scope.site_id)
                .read_all(&self.db)
                .await?;
        rows.iter().map(webhook_of).collect()
    }

    /// A live subscription of the site.
    pub async fn webhook(&self, scope: &Scope, id: &str) -> Result<Webhook> {
        let (scope, id) = (scope.clone(), id.to_string());
        self.db.read(move |c| load(c, &scope, &id)).await
    }

    /// Archives a subscription: nothing more is enqueued for it, and what
    /// waits is no longer sent (its log stays).
    pub async fn archive_webhook(&self, scope: &Scope, id: &str) -> Result<Webhook> {
        let (scope, id) = (scope.clone(), id.to_string());
        self.db
            .write(move |c| {
                let webhook = load(c, &scope, &id)?;
                db::query("UPDATE webhooks SET archived_at = ?1 WHERE id = ?2")
                    .bind(Utc::now())
                    .bind(&id)
                    .execute(c)?;
                db::query(
                    "UPDATE webhook_deliveries SET status = 'failed', last_error = 'the subscription was archived'
                     WHERE webhook_id = ?1 AND status = 'pending'",
                )
                .bind(&id)
                .execute(c)?;
                Ok(webhook)
            })
            .await
    }

    /// Adds `secret` as the subscription's newest; the older ones keep
    /// signing until [`Store::retire_webhook_secrets`] (rotation).
    pub async fn add_webhook_secret(&self, scope: &Scope, id: &str, secret: &str) -> Result<Webhook> {
        let (scope, id, secret) = (scope.clone(), id.to_string(), secret.to_string());
        self.db
            .write(move |c| {
                load(c, &scope, &id)?;
                let mut secrets: Vec<String> = db::query_scalar::<String>("SELECT secrets FROM webhooks WHERE id = ?1")
                    .bind(&id)
                    .fetch_one(c)
                    .and_then(|s| Ok(serde_json::from_str(&s)?))?;
                secrets.insert(0, secret);
                secrets.truncate(3);
                db::query("UPDATE webhooks SET secrets = ?1 WHERE id = ?2")
                    .bind(to_json(&secrets))
                    .bind(&id)
                    .execute(c)?;
                load(c, &scope, &id)
            })
            .await
    }

    /// Keeps only the newest secret of a subscription.
    pub async fn retire_webhook_secrets(&self, scope: &Scope, id: &str) -> Result<Webhook> {
        let (scope, id) = (scope.clone(), id.to_string());
        self.db
            .write(move |c| {
                load(c, &scope, &id)?;
                let secrets: Vec<String> = db::query_scalar::<String>("SELECT secrets FROM webhooks WHERE id = ?1")
                    .bind(&id)
                    .fetch_one(c)
                    .and_then(|s| Ok(serde_json::from_str(&s)?))?;
                let newest: Vec<String> = secrets.into_iter().take(1).collect();
                db::query("UPDATE webhooks SET secrets = ?1 WHERE id = ?2")
                    .bind(to_json(&newest))
                    .bind(&id)
                    .execute(c)?;
                load(c, &scope, &id)
            })
            .await
    }

    /// A subscription's deliveries, newest first (at most `limit`).
    pub async fn webhook_deliveries(&self, scope: &Scope, id: &str, limit: u32) -> Result<Vec<Delivery>> {
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
                rows.iter().map(delivery_of).collect()
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
                delivery_of(&row)
            })
            .await
    }

    /// Claims up to `limit` deliveries due, each for `lease`: heads of
    /// their queues (see the module's text), not held by another sender,
    /// the longest due first. Empty when nothing is due.
    pub async fn claim_deliveries(&self, lease: Duration, limit: usize) -> Result<Vec<Claimed>> {
        let lock = if self.db.is_postgres() { " FOR UPDATE SKIP LOCKED" } else { "" };
        let now = Utc::now().timestamp_millis();
        let rows = db::query(format!(
            "UPDATE webhook_deliveries SET attempts = attempts + 1, lease_until = ?1
             WHERE id IN (SELECT d.id FROM webhook_deliveries d
                          WHERE d.status = 'pending' AND d.head = 1 AND d.next_at <= ?2
                            AND (d.lease_until IS NULL OR d.lease_until <= ?2)
                          ORDER BY d.next_at, d.seq LIMIT ?3{lock})
             RETURNING id, webhook_id, subject, payload, attempts"
        ))
        .bind(now + lease.as_millis() as i64)
        .bind(now)
        .bind(limit as i64)
        .write_all(&self.db)
        .await?;
        let mut hooks: std::collections::HashMap<String, (String, Vec<String>)> = Default::default();
        let mut claimed = Vec::with_capacity(rows.len());
        for row in &rows {
            let webhook: String = row.try_get("webhook_id")?;
            if !hooks.contains_key(&webhook) {
                let hook = db::query("SELECT url, secrets FROM webhooks WHERE id = ?1")
                    .bind(&webhook)
                    .read_optional(&self.db)
                    .await?
                    .ok_or_else(|| StoreError::not_found("webhook", &webhook))?;
                hooks.insert(webhook.clone(), (hook.try_get("url")?, json_col(&hook, "secrets")?));
            }
            let (url, secrets) = hooks[&webhook].clone();
            claimed.push(Claimed {
                id: row.try_get("id")?,
                url,
                secrets,
                payload: row.try_get("payload")?,
                attempt: row.try_get("attempts")?,
                webhook_id: webhook,
                subject: row.try_get("subject")?,
            });
        }
        Ok(claimed)
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
        let at: Option<i64> = db::query_scalar(
            "SELECT min(CASE WHEN lease_until > next_at THEN lease_until ELSE next_at END)
             FROM webhook_deliveries WHERE status = 'pending' AND head = 1",
        )
        .read_one(&self.db)
        .await?;
        Ok(at.and_then(DateTime::from_timestamp_millis))
    }
}

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn load(conn: &Conn, scope: &Scope, id: &str) -> Result<Webhook> {
    let row = db::query("SELECT * FROM webhooks WHERE id = ?1 AND site_id = ?2 AND archived_at IS NULL")
        .bind(id)
        .bind(&scope.site_id)
        .fetch_optional(conn)?;
    row.as_ref().map(webhook_of).transpose()?.ok_or_else(|| StoreError::not_found("webhook", id))
}
