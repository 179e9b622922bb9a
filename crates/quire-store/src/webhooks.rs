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
use quire_core::model::{ChangeAction, ChangeContext, EntityKind, WireEnum};
use serde::Serialize;
use serde_json::{Value, json};

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
pub(crate) fn json_col<T: serde::de::DeserializeOwned>(row: &Row, column: &str) -> Result<T> {
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

/// Writes a delivery of change `seq` (`action` on record `id` of `kind`)
/// for each subscription of its scope that wants it, in the change's
/// transaction (see the module's text).
pub(crate) fn enqueue(
    conn: &Conn,
    scope: &Scope,
    seq: i64,
    kind: EntityKind,
    id: &str,
    action: ChangeAction,
) -> Result<()> {
    let Some(event) = event_of(action) else { return Ok(()) };
    // Notes live in the vault, their changes logged but not sent.
    if kind == EntityKind::Note {
        return Ok(());
    }
    // The body is built from the change log when it is sent (the same
    // bytes on every attempt): the delivery row stays small.
    let subject = format!("{}:{id}", kind.as_str());
    fan_out(conn, scope, kind.as_str(), event, &subject, seq, None::<fn(DateTime<Utc>) -> Value>)
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
    fan_out(conn, scope, kind, event, &format!("{kind}:{id}"), seq, Some(payload))
}

/// The one write of a delivery for each subscription of `scope` wanting
/// `kind`'s `event`, at place `seq` of the queue of `subject`. The payload
/// is made only when one does; none: it is built from change `seq` when
/// it is sent (`outbox.rs`).
fn fan_out(
    conn: &Conn,
    scope: &Scope,
    kind: &str,
    event: &str,
    subject: &str,
    seq: i64,
    payload: Option<impl FnOnce(DateTime<Utc>) -> Value>,
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
    let payload = payload.map(|p| p(now).to_string()).unwrap_or_default();
    for webhook in &wanting {
        insert_delivery(conn, webhook, scope, &format!("{kind}.{event}"), subject, seq, &payload, now)?;
    }
    Ok(())
}

/// Writes one delivery, at the head of its queue when no other waits in it.
#[allow(clippy::too_many_arguments)]
fn insert_delivery(
    conn: &Conn,
    webhook: &str,
    scope: &Scope,
    event: &str,
    subject: &str,
    seq: i64,
    payload: &str,
    now: DateTime<Utc>,
) -> Result<()> {
    // The oldest pending delivery of the queue, if any: on PostgreSQL,
    // locked, so a head that finishes at the same moment hands on to this
    // one after it commits, or (finished first) is passed over for the
    // next it handed on to.
    let lock = if conn.is_postgres() { " FOR UPDATE" } else { "" };
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
    .bind(event)
    .bind(subject)
    .bind(seq)
    .bind(payload)
    .bind(now.timestamp_millis())
    .bind(now)
    .bind(i64::from(waiting.is_none()))
    .execute(conn)?;
    Ok(())
}

/// At most this many deliveries of one subscription wait in the outbox;
/// on SQLite the changes after them wait in the change log, behind the
/// subscription's cursor, until the sender has room.
pub(crate) const WINDOW: i64 = 1_000;

/// The changes read past a cursor at a time, and how many such reads one
/// pass makes for a subscription at most (so a pass holds the writer briefly).
const READ_AHEAD: i64 = 500;
const READS: usize = 4;

/// How many deliveries of `webhook` wait, counted up to [`WINDOW`].
fn waiting(conn: &Conn, webhook: &str) -> Result<i64> {
    db::query_scalar(
        "SELECT COUNT(*) FROM (SELECT 1 FROM webhook_deliveries WHERE webhook_id = ?1 AND status = 'pending' LIMIT ?2) w",
    )
    .bind(webhook)
    .bind(WINDOW)
    .fetch_one(conn)
}

/// Whether a live subscription has changes past its cursor and room for
/// them (SQLite's outbox; see [`fan_out`]).
pub(crate) fn behind(conn: &Conn) -> Result<bool> {
    let hooks: Vec<String> = db::query_scalar(
        "SELECT id FROM webhooks WHERE archived_at IS NULL AND cursor < (SELECT COALESCE(MAX(id), 0) FROM changes)",
    )
    .fetch_all(conn)?;
    for hook in hooks {
        if waiting(conn, &hook)? < WINDOW {
            return Ok(true);
        }
    }
    Ok(false)
}

/// SQLite's enqueue: the deliveries of the changes logged since each live
/// subscription's cursor, up to its room in the outbox, written with the
/// cursor moved past what was read, in the writer's transaction. The
/// change log is itself the durable record a delivery is made from, and
/// on SQLite's one writer a change visible here has every change before
/// it committed, so nothing is passed over; a write pays nothing for its
/// subscribers. (On PostgreSQL ids are not committed in order, so each
/// change enqueues its deliveries in its own transaction: [`enqueue`].)
/// Answers how many deliveries it wrote.
pub(crate) fn fan_out_changes(conn: &Conn) -> Result<usize> {
    let hooks = db::query("SELECT id, site_id, env, events, kinds, cursor FROM webhooks WHERE archived_at IS NULL")
        .fetch_all(conn)?;
    let mut made = 0;
    for hook in &hooks {
        let id: String = hook.try_get("id")?;
        let mut cursor: i64 = hook.try_get("cursor")?;
        let room = WINDOW - waiting(conn, &id)?;
        if room <= 0 {
            continue;
        }
        let (site, env): (String, Option<String>) = (hook.try_get("site_id")?, hook.try_get("env")?);
        let events: Vec<String> = json_col(hook, "events")?;
        let kinds: Vec<String> = json_col(hook, "kinds")?;
        let now = Utc::now();
        let mut put = 0;
        'reads: for _ in 0..READS {
            let rows: Vec<(i64, String, String, String, String, String)> = db::query_as(
                "SELECT id, site_id, env, entity, entity_id, action FROM changes WHERE id > ?1 ORDER BY id LIMIT ?2",
            )
            .bind(cursor)
            .bind(READ_AHEAD)
            .fetch_all(conn)?;
            let read = rows.len() as i64;
            for (seq, site_id, change_env, entity, entity_id, action) in rows {
                if put == room {
                    break 'reads;
                }
                cursor = seq;
                if site_id != site || env.as_ref().is_some_and(|e| *e != change_env) || entity == "note" {
                    continue;
                }
                let action = <ChangeAction as WireEnum>::from_wire("action", &action)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                let Some(event) = event_of(action) else { continue };
                if !(events.is_empty() || events.iter().any(|e| e == event))
                    || !(kinds.is_empty() || kinds.contains(&entity))
                {
                    continue;
                }
                let (event, subject) = (format!("{entity}.{event}"), format!("{entity}:{entity_id}"));
                let scope = Scope { site_id, env: change_env };
                insert_delivery(conn, &id, &scope, &event, &subject, seq, "", now)?;
                put += 1;
            }
            if read < READ_AHEAD {
                break;
            }
        }
        db::query("UPDATE webhooks SET cursor = ?2 WHERE id = ?1").bind(&id).bind(cursor).execute(conn)?;
        made += put as usize;
    }
    Ok(made)
}

impl Store {
    /// Subscribes the scope's site (and `env`, if named) to events.
    pub async fn create_webhook(&self, ctx: &ChangeContext, scope: &Scope, new: NewWebhook) -> Result<Webhook> {
        let (ctx, scope) = (ctx.clone(), scope.clone());
        self.db
            .write(move |c| {
                let id = new_id();
                // It hears of the changes made from now on.
                db::query(
                    "INSERT INTO webhooks (id, site_id, env, url, events, kinds, secrets, description, created_by, created_at, cursor)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, (SELECT COALESCE(MAX(id), 0) FROM changes))",
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
}

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

pub(crate) fn load(conn: &Conn, scope: &Scope, id: &str) -> Result<Webhook> {
    let row = db::query("SELECT * FROM webhooks WHERE id = ?1 AND site_id = ?2 AND archived_at IS NULL")
        .bind(id)
        .bind(&scope.site_id)
        .fetch_optional(conn)?;
    row.as_ref().map(webhook_of).transpose()?.ok_or_else(|| StoreError::not_found("webhook", id))
}
