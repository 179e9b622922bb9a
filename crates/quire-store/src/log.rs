//! The change log's writing side, at the bottom of the crate: every
//! mutation appends one record here, in the same transaction, and nothing
//! here imports any other part of the store but the database layer.
//!
//! A record stores what changed, not the whole record twice: an update
//! keeps the changed top-level fields' new values (`patch`) and their
//! previous values (`prior`); an archive keeps neither (`patch` is `{}`).
//! Whole snapshots are kept only where a record's history starts again — a
//! create, a restore —, for every [`ANCHOR_EVERY`]th version of a record
//! (so no read walks a long history), and for vault notes, whose content
//! is not an object. `changes.rs` reads them back.

use crate::db;
use crate::db::Conn;
use crate::{Result, Scope};
use chrono::Utc;
use quire_core::model::{ChangeAction, ChangeContext, EntityKind};
use serde::Serialize;
use serde_json::{Map, Value};

/// A new, time-ordered id (UUID v7): ids sort in creation order, which
/// keyset pagination relies on.
pub(crate) fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// The JSON snapshot of a record kept in the change log.
pub(crate) fn snapshot<T: Serialize>(record: &T) -> Value {
    serde_json::to_value(record).unwrap_or(Value::Null)
}

/// The columns one change-log record is stored in.
#[derive(Debug, Default)]
struct Stored {
    /// A whole snapshot before (old records, notes).
    before: Option<String>,
    /// A whole snapshot after (an anchor: create, restore, old records, notes).
    after: Option<String>,
    /// The changed fields' new values; `{}` for an archive. Absent on anchors.
    patch: Option<String>,
    /// The changed fields' previous values (updates only).
    prior: Option<String>,
}

/// The actions that log a publication, not a revision: a record's history
/// of revisions leaves them out (`changes.rs`).
pub(crate) const PUBLICATIONS: [ChangeAction; 2] = [ChangeAction::Publish, ChangeAction::Unpublish];

/// How often an update is stored whole: the versions divisible by this.
/// Reading any change walks at most this many patches from its anchor, and
/// the log grows by one whole record per this many updates of a record.
pub const ANCHOR_EVERY: i64 = 32;

/// What to store for a change from `before` to `after` of a record.
/// Notes, and publications (whose before and after are published
/// documents, not revisions of the record), are stored whole.
fn stored(entity: EntityKind, action: ChangeAction, before: Option<&Value>, after: Option<&Value>) -> Stored {
    let text = |v: Option<&Value>| v.map(Value::to_string);
    let whole = entity == EntityKind::Note || PUBLICATIONS.contains(&action);
    match (before, after) {
        _ if whole => Stored { before: text(before), after: text(after), ..Stored::default() },
        // Every [`ANCHOR_EVERY`]th version is stored whole, so rebuilding a
        // change never walks more than that many patches.
        (Some(Value::Object(_)), Some(Value::Object(a)))
            if a.get("version").and_then(Value::as_i64).is_some_and(|v| v % ANCHOR_EVERY == 0) =>
        {
            let Some(Value::Object(b)) = before else { unreachable!("matched above") };
            Stored {
                before: text(before),
                after: text(after),
                prior: Some(Value::Object(diff(b, a).1).to_string()),
                ..Stored::default()
            }
        }
        (Some(Value::Object(b)), Some(Value::Object(a))) => {
            let (patch, prior) = diff(b, a);
            Stored {
                patch: Some(Value::Object(patch).to_string()),
                prior: Some(Value::Object(prior).to_string()),
                ..Stored::default()
            }
        }
        // An archive: the record leaves as it was; the next restore anchors it again.
        (Some(Value::Object(_)), None) => Stored { patch: Some("{}".into()), ..Stored::default() },
        _ => Stored { before: text(before), after: text(after), ..Stored::default() },
    }
}

/// The top-level fields of `after` that differ from `before`: their new
/// values, and their previous ones (`null` where a field was absent, and
/// `null` as the new value of a field that went away).
fn diff(before: &Map<String, Value>, after: &Map<String, Value>) -> (Map<String, Value>, Map<String, Value>) {
    let (mut patch, mut prior) = (Map::new(), Map::new());
    for (key, value) in after {
        if before.get(key) != Some(value) {
            patch.insert(key.clone(), value.clone());
            prior.insert(key.clone(), before.get(key).cloned().unwrap_or(Value::Null));
        }
    }
    for (key, value) in before {
        if !after.contains_key(key) {
            patch.insert(key.clone(), Value::Null);
            prior.insert(key.clone(), value.clone());
        }
    }
    (patch, prior)
}

/// Appends a change-log record; answers its id.
#[allow(clippy::too_many_arguments)]
pub(crate) fn logged(
    conn: &Conn,
    scope: &Scope,
    ctx: &ChangeContext,
    entity: EntityKind,
    entity_id: &str,
    action: ChangeAction,
    before: Option<Value>,
    after: Option<Value>,
) -> Result<i64> {
    // A locked environment takes content only from a promotion; notes are
    // the site's, not an environment's.
    if entity != EntityKind::Note && !conn.promoting() {
        let locked: Option<i64> = db::query_scalar("SELECT locked FROM environments WHERE site_id = ?1 AND key = ?2")
            .bind_scope(scope)
            .fetch_optional(conn)?;
        if locked == Some(1) {
            return Err(crate::StoreError::conflict(
                None,
                format!(
                    "environment {} is locked: content reaches it only by promotion from another environment",
                    scope.env
                ),
            ));
        }
    }
    let stored = stored(entity, action, before.as_ref(), after.as_ref());
    let seq: i64 = db::query_scalar(
        "INSERT INTO changes (site_id, env, actor, surface, session_id, turn_id, entity, entity_id, action, before, after, patch, prior, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) RETURNING id",
    )
    .bind_scope(scope)
    .bind(&ctx.actor)
    .bind(ctx.surface.as_str())
    .bind(&ctx.session_id)
    .bind(&ctx.turn_id)
    .bind(entity.as_str())
    .bind(entity_id)
    .bind(action.as_str())
    .bind(stored.before)
    .bind(stored.after)
    .bind(stored.patch)
    .bind(stored.prior)
    .bind(Utc::now())
    .fetch_one(conn)?;
    // Subscribers hear of it through the outbox: on PostgreSQL written in
    // this same transaction; on SQLite made from this record after it
    // commits (`webhooks::fan_out_changes`).
    if conn.is_postgres() {
        crate::webhooks::enqueue(conn, scope, seq, entity, entity_id, action)?;
    }
    Ok(seq)
}
