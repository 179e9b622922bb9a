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
//! is not an object. A publication keeps what it published the same way:
//! each record of the document as a patch over the revision it was copied
//! from ([`logged_publication`]), and what was published before whole.
//! `changes.rs` reads them back, through [`walk`] and [`published_document`].
//!
//! A record's changes are a chain, not an index of the log by record: each
//! change names the record's change before it (`prev`) and its revision
//! before it (`prev_revision`, publications left out), and the record's own
//! row names its newest (`last_change`, in the page its write dirtied
//! anyway; a vault note's in `change_heads`). An index by record put each
//! change's key in a leaf of its own, one more page for every write.

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

/// The table whose rows name their newest change (`last_change`), for the
/// records of `entity` the database holds; vault notes have no row, and
/// `change_heads` names theirs.
pub(crate) fn head_table(entity: EntityKind) -> Option<&'static str> {
    Some(match entity {
        EntityKind::Page => "pages",
        EntityKind::Section => "page_sections",
        EntityKind::SectionTemplate => "section_templates",
        EntityKind::Collection => "collections",
        EntityKind::Entry => "entries",
        EntityKind::Image => "images",
        EntityKind::Navigation => "navigations",
        EntityKind::NavItem => "nav_items",
        EntityKind::Agent => "agents",
        EntityKind::Translation => "translations",
        EntityKind::Context => "contexts",
        EntityKind::Workspace => "workspaces",
        EntityKind::Note => return None,
    })
}

/// The statement answering the newest change (any action) of record `?1`
/// of `entity` in scope (`?2`, `?3`); on PostgreSQL, with `lock`, its row
/// stays locked until the transaction ends.
fn last_change_sql(entity: EntityKind, lock: bool) -> String {
    match head_table(entity) {
        Some(table) => {
            let lock = if lock { " FOR UPDATE" } else { "" };
            format!("SELECT last_change FROM {table} WHERE id = ?1 AND site_id = ?2 AND env = ?3{lock}")
        }
        None => format!(
            "SELECT last_change FROM change_heads WHERE entity_id = ?1 AND site_id = ?2 AND env = ?3 AND entity = '{}'",
            entity.as_str()
        ),
    }
}

/// The newest change (any action) of record `entity_id` of `entity`: the
/// head of its chain, which each change's `prev` walks back. `lock`: see
/// [`last_change_sql`].
pub(crate) fn last_change(
    conn: &Conn,
    site_id: &str,
    env: &str,
    entity: EntityKind,
    entity_id: &str,
    lock: bool,
) -> Result<Option<i64>> {
    let lock = lock && conn.is_postgres();
    let head: Option<Option<i64>> =
        db::query_scalar(last_change_sql(entity, lock)).bind(entity_id).bind(site_id).bind(env).fetch_optional(conn)?;
    Ok(head.flatten())
}

/// The newest revision (publications left out) of record `entity_id` of
/// `entity`.
pub(crate) fn last_revision(
    conn: &Conn,
    site_id: &str,
    env: &str,
    entity: EntityKind,
    entity_id: &str,
) -> Result<Option<i64>> {
    let Some(head) = last_change(conn, site_id, env, entity, entity_id, false)? else { return Ok(None) };
    let at: Option<Option<i64>> = db::query_scalar(
        "SELECT CASE WHEN action IN ('publish', 'unpublish') THEN prev_revision ELSE id END FROM changes WHERE id = ?1",
    )
    .bind(head)
    .fetch_optional(conn)?;
    Ok(at.flatten())
}

/// How often an update is stored whole: the versions divisible by this.
/// Reading any change walks at most this many patches from its anchor, and
/// the log grows by one whole record per this many updates of a record.
pub const ANCHOR_EVERY: i64 = 32;

/// What to store for a change from `before` to `after` of a record.
/// Notes are stored whole; publications are stored by
/// [`logged_publication`].
fn stored(entity: EntityKind, before: Option<&Value>, after: Option<&Value>) -> Stored {
    let text = |v: Option<&Value>| v.map(Value::to_string);
    let whole = entity == EntityKind::Note;
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
    debug_assert!(!PUBLICATIONS.contains(&action), "publications are logged by logged_publication");
    let stored = stored(entity, before.as_ref(), after.as_ref());
    append(conn, scope, ctx, entity, entity_id, action, stored)
}

/// Appends a change-log record holding `stored`; answers its id.
fn append(
    conn: &Conn,
    scope: &Scope,
    ctx: &ChangeContext,
    entity: EntityKind,
    entity_id: &str,
    action: ChangeAction,
    stored: Stored,
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
    // The record's chain: this change points at its newest change before
    // it, and at its newest revision (see [`walk`]); its row then names
    // this change as its newest. On PostgreSQL the row stays locked until
    // the transaction ends, so two processes logging changes of one record
    // chain them one after the other.
    let prev = last_change(conn, &scope.site_id, &scope.env, entity, entity_id, true)?;
    let prev_revision: Option<i64> = match prev {
        Some(prev) => db::query_scalar(
            "SELECT CASE WHEN action IN ('publish', 'unpublish') THEN prev_revision ELSE id END FROM changes WHERE id = ?1",
        )
        .bind(prev)
        .fetch_optional(conn)?
        .flatten(),
        None => None,
    };
    let seq: i64 = db::query_scalar(
        "INSERT INTO changes (site_id, env, actor, surface, session_id, turn_id, entity, entity_id, action, before, after, patch, prior, at, prev, prev_revision)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) RETURNING id",
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
    .bind(prev)
    .bind(prev_revision)
    .fetch_one(conn)?;
    let headed = match head_table(entity) {
        Some(table) => {
            db::query(format!("UPDATE {table} SET last_change = ?1 WHERE id = ?2 AND site_id = ?3 AND env = ?4"))
                .bind(seq)
                .bind(entity_id)
                .bind_scope(scope)
                .execute(conn)?
                .rows_affected()
        }
        None => db::query(
            "INSERT INTO change_heads (site_id, env, entity, entity_id, last_change) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (site_id, env, entity, entity_id) DO UPDATE SET last_change = excluded.last_change",
        )
        .bind_scope(scope)
        .bind(entity.as_str())
        .bind(entity_id)
        .bind(seq)
        .execute(conn)?
        .rows_affected(),
    };
    if headed != 1 {
        return Err(crate::StoreError::Corrupt(format!(
            "a change of {entity} {entity_id} was logged before its row was written"
        )));
    }
    // Subscribers hear of it through the outbox: on PostgreSQL written in
    // this same transaction; on SQLite made from this record after it
    // commits (`webhooks::fan_out_changes`).
    if conn.is_postgres() {
        crate::webhooks::enqueue(conn, scope, seq, entity, entity_id, action)?;
    }
    Ok(seq)
}

/// Appends the change-log record of a publication (`publish` or
/// `unpublish`) of document `id` of `kind`, whose parts (if it has any)
/// are records of `parts`; answers its id. `before` and `after` are the
/// published documents (`{record, parts}`). What was published before is
/// kept whole; what is published now is kept as each of its records'
/// patch over the revision of that record the log holds now, the one it
/// was copied from (nothing, then, for a document published as its
/// working copy is), or whole where no revision rebuilds it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn logged_publication(
    conn: &Conn,
    scope: &Scope,
    ctx: &ChangeContext,
    kind: EntityKind,
    parts: Option<EntityKind>,
    id: &str,
    action: ChangeAction,
    before: Option<Value>,
    after: Option<Value>,
) -> Result<i64> {
    let patch = match &after {
        Some(document) => over_revisions(conn, scope, kind, parts, id, document)?,
        None => None,
    };
    let stored = Stored {
        before: before.as_ref().map(Value::to_string),
        after: if patch.is_some() { None } else { after.as_ref().map(Value::to_string) },
        patch: patch.map(|p| p.to_string()),
        prior: None,
    };
    append(conn, scope, ctx, kind, id, action, stored)
}

/// Published document `document` (`{record, parts}`) of `kind` as
/// [`published_document`] rebuilds it: `{record, partEntity, parts}`, the
/// record and each part `{id, at, patch}`; none when it is not of that
/// shape (it is then stored whole).
fn over_revisions(
    conn: &Conn,
    scope: &Scope,
    kind: EntityKind,
    parts: Option<EntityKind>,
    id: &str,
    document: &Value,
) -> Result<Option<Value>> {
    let (Some(Value::Object(record)), Some(Value::Array(items))) = (document.get("record"), document.get("parts"))
    else {
        return Ok(None);
    };
    let mut stored_parts = Vec::with_capacity(items.len());
    for item in items {
        let (Some(part), Value::Object(fields)) = (parts, item) else { return Ok(None) };
        let Some(part_id) = fields.get("id").and_then(Value::as_str) else { return Ok(None) };
        stored_parts.push(over_revision(conn, scope, part, part_id, fields)?);
    }
    let mut stored = Map::new();
    stored.insert("record".into(), over_revision(conn, scope, kind, id, record)?);
    if let Some(part) = parts.filter(|_| !items.is_empty()) {
        stored.insert("partEntity".into(), Value::String(part.as_str().into()));
    }
    stored.insert("parts".into(), Value::Array(stored_parts));
    Ok(Some(Value::Object(stored)))
}

/// Record `id` of `entity` as `{id, at, patch}`: the patch over its
/// revision after change `at`, the newest the log holds, when that patch
/// rebuilds it exactly; else `at` null and the record whole.
fn over_revision(
    conn: &Conn,
    scope: &Scope,
    entity: EntityKind,
    id: &str,
    record: &Map<String, Value>,
) -> Result<Value> {
    let at = last_revision(conn, &scope.site_id, &scope.env, entity, id)?;
    let base = match at {
        Some(at) => walk(conn, &scope.site_id, &scope.env, entity, id, at, at, &mut |_, _, _| {})?,
        None => None,
    };
    let (at, patch) = match base {
        Some(base) => {
            let patch = diff(&base, record).0;
            if patched(base, &patch) == *record { (at, patch) } else { (None, record.clone()) }
        }
        None => (None, record.clone()),
    };
    Ok(serde_json::json!({ "id": id, "at": at, "patch": patch }))
}

/// `base` with the fields of `patch` laid over it.
fn patched(mut base: Map<String, Value>, patch: &Map<String, Value>) -> Map<String, Value> {
    for (key, value) in patch {
        base.insert(key.clone(), value.clone());
    }
    base
}

/// Rebuilds the published document a publication's `stored` patch (see
/// [`logged_publication`]) holds, of document `entity_id` of `entity`.
pub(crate) fn published_document(
    conn: &Conn,
    site_id: &str,
    env: &str,
    entity: EntityKind,
    entity_id: &str,
    stored: &Value,
) -> Result<Value> {
    let corrupt = || crate::StoreError::Corrupt(format!("the publication of {entity} {entity_id} is unreadable"));
    let rebuild = |kind: EntityKind, item: &Value| -> Result<Value> {
        let (Some(id), Some(Value::Object(patch))) = (item.get("id").and_then(Value::as_str), item.get("patch")) else {
            return Err(corrupt());
        };
        let base = match item.get("at").and_then(Value::as_i64) {
            Some(at) => walk(conn, site_id, env, kind, id, at, at, &mut |_, _, _| {})?.ok_or_else(corrupt)?,
            None => Map::new(),
        };
        Ok(Value::Object(patched(base, patch)))
    };
    let record = rebuild(entity, stored.get("record").ok_or_else(corrupt)?)?;
    let items = stored.get("parts").and_then(Value::as_array).ok_or_else(corrupt)?;
    let mut parts = Vec::with_capacity(items.len());
    if !items.is_empty() {
        let kind = stored.get("partEntity").and_then(Value::as_str).ok_or_else(corrupt)?;
        let kind = EntityKind::parse("partEntity", kind).map_err(|_| corrupt())?;
        for item in items {
            parts.push(rebuild(kind, item)?);
        }
    }
    Ok(serde_json::json!({ "record": record, "parts": parts }))
}

/// Walks the revisions of record `entity_id` of `entity` (publications
/// left out) from the last anchor at or before change `oldest` up to
/// change `newest`: `visit` hears each patched change with the record as
/// it was before it and after it (none: an archive). Answers the record
/// as the walk leaves it, after `newest`; none when its history holds no
/// anchor.
#[allow(clippy::too_many_arguments)]
pub(crate) fn walk(
    conn: &Conn,
    site_id: &str,
    env: &str,
    entity: EntityKind,
    entity_id: &str,
    oldest: i64,
    newest: i64,
    visit: &mut dyn FnMut(i64, Value, Option<Value>),
) -> Result<Option<Map<String, Value>>> {
    // From `newest` back along the record's revisions (each change's
    // `prev_revision`) to the last anchor at or before `oldest`, or to its
    // first change; ids only go down, so a damaged chain cannot loop.
    let steps = db::query_as::<(i64, Option<String>, Option<String>, Option<String>)>(
        "WITH RECURSIVE chain (id, before, after, patch, prev_revision) AS (
             SELECT id, before, after, patch, prev_revision FROM changes
             WHERE id = ?6 AND site_id = ?1 AND env = ?2 AND entity = ?3 AND entity_id = ?4
               AND action NOT IN ('publish', 'unpublish')
             UNION ALL
             SELECT c.id, c.before, c.after, c.patch, c.prev_revision FROM changes c JOIN chain h ON c.id = h.prev_revision
             WHERE c.id < h.id AND NOT (h.patch IS NULL AND h.id <= ?5)
         )
         SELECT id, before, after, patch FROM chain ORDER BY id",
    )
    .bind(site_id)
    .bind(env)
    .bind(entity.as_str())
    .bind(entity_id)
    .bind(oldest)
    .bind(newest)
    .fetch_all(conn)?;
    let mut state: Option<Map<String, Value>> = None;
    for (id, before, after, patch) in steps {
        let parse = |t: Option<String>| t.map(|t| serde_json::from_str::<Value>(&t)).transpose();
        match parse(patch)? {
            // An anchor: the record as it was then.
            None => {
                state = match parse(after)?.or(parse(before)?) {
                    Some(Value::Object(o)) => Some(o),
                    _ => None,
                };
            }
            Some(Value::Object(patch)) => {
                let Some(current) = state.as_mut() else { continue };
                let before = Value::Object(current.clone());
                if patch.is_empty() {
                    // An archive: the record left as it was.
                    visit(id, before, None);
                    continue;
                }
                for (key, value) in patch {
                    current.insert(key, value);
                }
                visit(id, before, Some(Value::Object(current.clone())));
            }
            Some(_) => {
                return Err(crate::StoreError::Corrupt(format!("change {id} holds a patch that is no object")));
            }
        }
    }
    Ok(state)
}
