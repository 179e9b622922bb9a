//! Reading the change log (written by `log.rs`): revisions of a record,
//! reverting to one, and undoing an agent turn.
//!
//! The record after any change is the last *anchor* before it (a whole
//! snapshot: create, restore, every [`ANCHOR_EVERY`](crate::log::ANCHOR_EVERY)th version) with the
//! later patches applied in order, which is how [`Change::before`] and
//! [`Change::after`] are rebuilt when read. Records written before patches
//! existed hold both snapshots and are anchors too, so a database keeps
//! every revision across the upgrade. A publication's `after` is rebuilt
//! from the revisions its records were copied from (`log::published_document`);
//! those logged before that, held whole, are read as they are.

use crate::db::{self, Conn, QueryBuilder, Row, read_row};
use crate::list::{ChangeFilter, Listing, decode_seq, encode_seq, page_of};
use crate::log::{PUBLICATIONS, logged, logged_publication, published_document, walk};
use crate::record::{
    Record, Version, document, json_opt, load_to_change, part_of, put_back, same_content, wire_col, with_record,
    write_version,
};
use crate::{Result, Scope, Store, StoreError};
use chrono::Utc;
use quire_core::model::*;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// A change-log record as read, before its snapshots are rebuilt.
struct Read {
    change: Change,
    site_id: String,
    env: String,
    patch: Option<Value>,
    prior: Option<Value>,
}

/// A change-log row's own columns, without the records it holds
/// (`before` and `after` left empty).
fn change_head(row: &Row) -> Result<Change> {
    Ok(read_row!(row => Change {
        id, actor, session_id, turn_id, entity_id, at;
        surface: wire_col(row, "surface")?,
        entity: wire_col(row, "entity")?,
        action: wire_col(row, "action")?,
        before: None,
        after: None,
    }))
}

fn change_from_row(row: &Row) -> Result<Read> {
    Ok(Read {
        change: Change { before: json_opt(row, "before")?, after: json_opt(row, "after")?, ..change_head(row)? },
        site_id: row.try_get("site_id")?,
        env: row.try_get("env")?,
        patch: json_opt(row, "patch")?,
        prior: json_opt(row, "prior")?,
    })
}

/// Reads change-log rows and rebuilds the whole before and after of each
/// (see the module's doc): per record, one read of its history from the
/// last anchor up to the newest change asked for; a publication's
/// document from the revisions it was published from.
fn read_changes(conn: &Conn, rows: &[Row]) -> Result<Vec<Change>> {
    let read = rows.iter().map(change_from_row).collect::<Result<Vec<_>>>()?;
    let publication = |r: &Read| PUBLICATIONS.contains(&r.change.action);
    // The oldest and newest patched change per record: its history is
    // walked from the last anchor before the oldest up to the newest.
    let mut walks: HashMap<(&str, &str, EntityKind, &str), (i64, i64)> = HashMap::new();
    for r in read.iter().filter(|r| r.patch.is_some() && !publication(r)) {
        let key = (r.site_id.as_str(), r.env.as_str(), r.change.entity, r.change.entity_id.as_str());
        let (oldest, newest) = walks.entry(key).or_insert((r.change.id, r.change.id));
        *oldest = (*oldest).min(r.change.id);
        *newest = (*newest).max(r.change.id);
    }
    let mut rebuilt: HashMap<i64, (Option<Value>, Option<Value>)> = HashMap::new();
    for ((site_id, env, entity, entity_id), (oldest, newest)) in walks {
        walk(conn, site_id, env, entity, entity_id, oldest, newest, &mut |id, before, after| {
            rebuilt.insert(id, (Some(before), after));
        })?;
    }
    read.into_iter()
        .map(|r| {
            let mut change = r.change;
            match r.patch {
                Some(stored) if PUBLICATIONS.contains(&change.action) => {
                    change.after =
                        Some(published_document(conn, &r.site_id, &r.env, change.entity, &change.entity_id, &stored)?);
                }
                Some(patch) => {
                    // A record whose history has no anchor (never expected: every
                    // record starts with a create) shows what the change itself holds.
                    let (before, after) = rebuilt.remove(&change.id).unwrap_or((r.prior, Some(patch)));
                    change.before = before;
                    change.after = after;
                }
                None => {}
            }
            Ok(change)
        })
        .collect()
}

/// What a change is shown as in a list: who changed which record how, and
/// the names of the fields an update changed — no record content.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeSummary {
    /// The change's own columns, `before` and `after` left empty.
    pub change: Change,
    /// The top-level fields an update or revert changed, in the record's
    /// order (empty for other actions and for records logged before
    /// patches were kept).
    pub fields: Vec<String>,
}

/// `SELECT columns FROM changes` of one scope matching `filter`, newest
/// first, one more than `limit` (see [`page_of`]). A record's history
/// (`filter.entity_id`) is its chain of changes, walked back from its
/// newest (see `log.rs`): no index of the log is kept by record.
fn filtered(
    conn: &Conn,
    columns: &str,
    scope: &Scope,
    filter: &ChangeFilter,
    limit: u32,
    cursor: Option<&str>,
) -> Result<QueryBuilder> {
    let cursor = cursor.map(decode_seq).transpose()?;
    let mut q = QueryBuilder::new("");
    if let Some(id) = &filter.entity_id {
        chain_of(conn, &mut q, scope, filter, id, limit, cursor)?;
    }
    q.push(format_args!("SELECT {columns} FROM changes WHERE site_id = "));
    q.push_bind(scope.site_id.clone()).push(" AND env = ").push_bind(scope.env.clone());
    if filter.entity_id.is_some() {
        q.push(" AND id IN (SELECT id FROM chain)");
    }
    if let Some(entity) = filter.entity {
        q.push(" AND entity = ").push_bind(entity.as_str());
    }
    if let Some(id) = &filter.entity_id {
        q.push(" AND entity_id = ").push_bind(id.clone());
    }
    if let Some(actor) = &filter.actor {
        q.push(" AND actor = ").push_bind(actor.clone());
    }
    if let Some(session) = &filter.session_id {
        q.push(" AND session_id = ").push_bind(session.clone());
    }
    if let Some(turn) = &filter.turn_id {
        q.push(" AND turn_id = ").push_bind(turn.clone());
    }
    if let Some(surface) = filter.surface {
        q.push(" AND surface = ").push_bind(surface.as_str());
    }
    if let Some(c) = cursor {
        q.push(" AND id < ").push_bind(c);
    }
    q.push(" ORDER BY id DESC LIMIT ").push_bind(limit as i64 + 1);
    Ok(q)
}

/// Pushes `WITH RECURSIVE chain (id, n) AS (…)`: the changes of record
/// `entity_id` (of `filter.entity`, or of any kind), newest first, from
/// its newest or, on a page after the first, from the change before the
/// cursor's. When nothing but the record is asked, the walk stops once it
/// holds a page (and the one more that says a next page exists).
fn chain_of(
    conn: &Conn,
    q: &mut QueryBuilder,
    scope: &Scope,
    filter: &ChangeFilter,
    entity_id: &str,
    limit: u32,
    cursor: Option<i64>,
) -> Result<()> {
    let kinds: Vec<EntityKind> = match filter.entity {
        Some(kind) => vec![kind],
        None => EntityKind::ALL.to_vec(),
    };
    let mut starts = Vec::new();
    // A cursor that is none of the record's changes (not one this list
    // gave) is still honoured, by a walk of the whole history.
    let mut whole = false;
    for kind in kinds {
        let Some(head) = crate::log::last_change(conn, &scope.site_id, &scope.env, kind, entity_id, false)? else {
            continue;
        };
        // The next page goes on from the change before the cursor's, when
        // the cursor is one of this record's changes.
        let start = match cursor {
            Some(c) if c < head => {
                let before: Option<Option<i64>> = db::query_scalar(
                    "SELECT prev FROM changes WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND entity = ?4 AND entity_id = ?5",
                )
                .bind(c)
                .bind_scope(scope)
                .bind(kind.as_str())
                .bind(entity_id)
                .fetch_optional(conn)?;
                match before {
                    Some(prev) => prev,
                    None => {
                        whole = true;
                        Some(head)
                    }
                }
            }
            _ => Some(head),
        };
        starts.extend(start);
    }
    let only_the_record = filter.actor.is_none()
        && filter.session_id.is_none()
        && filter.turn_id.is_none()
        && filter.surface.is_none()
        && starts.len() <= 1
        && !whole;
    q.push("WITH RECURSIVE chain (id, n) AS (SELECT id, CAST(1 AS BIGINT) FROM changes WHERE id IN (");
    if starts.is_empty() {
        q.push("NULL");
    }
    q.push_list(starts, ", ", |q, id| {
        q.push_bind(id);
    });
    q.push(") UNION ALL SELECT c.prev, h.n + 1 FROM changes c JOIN chain h ON c.id = h.id WHERE c.prev < h.id");
    if only_the_record {
        q.push(" AND h.n <= ").push_bind(limit as i64);
    }
    q.push(") ");
    Ok(())
}

impl Store {
    /// Lists change-log records, newest first.
    pub async fn changes(
        &self,
        scope: &Scope,
        filter: &ChangeFilter,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Listing<Change>> {
        let (scope, filter, cursor) = (scope.clone(), filter.clone(), cursor.map(str::to_string));
        let items = self
            .db
            .read(move |c| {
                let q = filtered(c, "*", &scope, &filter, limit, cursor.as_deref())?;
                read_changes(c, &q.build().fetch_all(c)?)
            })
            .await?;
        Ok(page_of(items, limit, |c| encode_seq(c.id)))
    }

    /// Lists change-log records newest first, as [`Store::changes`] does,
    /// without rebuilding their whole records: what a list of many changes
    /// shows.
    pub async fn change_summaries(
        &self,
        scope: &Scope,
        filter: &ChangeFilter,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Listing<ChangeSummary>> {
        let columns = "id, actor, surface, session_id, turn_id, entity, entity_id, action, prior, at";
        let (scope, filter, cursor) = (scope.clone(), filter.clone(), cursor.map(str::to_string));
        let rows = self
            .db
            .read(move |c| filtered(c, columns, &scope, &filter, limit, cursor.as_deref())?.build().fetch_all(c))
            .await?;
        let items = rows
            .iter()
            .map(|row| {
                let fields = match json_opt(row, "prior")? {
                    Some(Value::Object(prior)) => prior.into_iter().map(|(k, _)| k).collect(),
                    _ => Vec::new(),
                };
                Ok(ChangeSummary { change: change_head(row)?, fields })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(page_of(items, limit, |c: &ChangeSummary| encode_seq(c.change.id)))
    }

    /// One change-log record.
    pub async fn change(&self, scope: &Scope, id: i64) -> Result<Change> {
        let scope = scope.clone();
        self.db.read(move |c| change_in(c, &scope, id)).await
    }

    /// Puts a live record back to the state it had right after change `id`
    /// (its revision). The revert is itself a logged change (`revert`).
    pub async fn restore_revision(&self, ctx: &ChangeContext, scope: &Scope, id: i64) -> Result<Change> {
        let change = self.change(scope, id).await?;
        if PUBLICATIONS.contains(&change.action) {
            return Err(StoreError::invalid(
                "changeId",
                format!(
                    "change {id} published or unpublished the {}, which is no revision; publish or unpublish it instead",
                    change.entity
                ),
            ));
        }
        let Some(snapshot) = change.after.clone() else {
            return Err(StoreError::invalid(
                "changeId",
                format!("change {id} archived the {}; restore it from the archive instead", change.entity),
            ));
        };
        let (ctx, scope) = (ctx.clone(), scope.clone());
        self.db
            .write(move |c| {
                let (scope, ctx) = (&scope, &ctx);
                let id = with_record!(change.entity, |T| revert::<T>(c, scope, ctx, &change, snapshot)?, else {
                    return Err(StoreError::invalid(
                        "changeId",
                        format!("change {id} is a vault note; revert it through the vault"),
                    ));
                });
                change_in(c, scope, id)
            })
            .await
    }
}

/// The change-log record `id` of the scope, rebuilt.
pub(crate) fn change_in(conn: &Conn, scope: &Scope, id: i64) -> Result<Change> {
    let rows = db::query("SELECT * FROM changes WHERE id = ?1 AND site_id = ?2 AND env = ?3")
        .bind(id)
        .bind_scope(scope)
        .fetch_all(conn)?;
    read_changes(conn, &rows)?.pop().ok_or_else(|| StoreError::not_found("change", id.to_string()))
}

/// Puts the record back as `snapshot` has it; answers the id of the change that did.
fn revert<T: Record>(conn: &Conn, scope: &Scope, ctx: &ChangeContext, change: &Change, snapshot: Value) -> Result<i64> {
    let Some(mut current) = load_to_change::<T>(conn, scope, &change.entity_id)? else {
        return Err(StoreError::conflict(
            None,
            format!("{} {} is archived or gone; restore it from the archive first", change.entity, change.entity_id),
        ));
    };
    let mut target: T = serde_json::from_value(snapshot)?;
    if target.id() != current.id() {
        return Err(StoreError::Corrupt(format!("change {} holds a snapshot of another record", change.id)));
    }
    // Version and time continue from the current record, not the snapshot.
    target.stamp_as(&mut current);
    if target == current {
        return Err(StoreError::conflict(
            None,
            format!("{} {} is already at that revision", change.entity, change.entity_id),
        ));
    }
    write_version(conn, scope, ctx, &current, &mut target, ChangeAction::Revert)
}

/// Rejects the open confirmations (pending or approved, not yet used) of
/// one agent turn, as part of undoing it.
fn cancel_turn_confirmations(
    conn: &Conn,
    scope: &Scope,
    ctx: &ChangeContext,
    session_id: &str,
    turn_id: &str,
) -> Result<u64> {
    let done = db::query(
        "UPDATE confirmations SET status = 'rejected', resolved_by = ?1, resolved_at = ?2, reason = 'the turn was undone'
         WHERE site_id = ?3 AND env = ?4 AND session_id = ?5 AND turn_id = ?6 AND status IN ('pending', 'approved')",
    )
    .bind(&ctx.actor)
    .bind(Utc::now())
    .bind_scope(scope)
    .bind(session_id)
    .bind(turn_id)
    .execute(conn)?;
    Ok(done.rows_affected())
}

/// What undoing a turn did.
#[derive(Debug, Clone, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UndoReport {
    /// The change-log records the undo wrote, oldest first.
    pub reverted: Vec<Change>,
    /// The turn's changes to vault notes, newest first: the vault reverts
    /// those (files are not in the database).
    pub notes: Vec<Change>,
    /// How many of the turn's approvals, still open, were rejected.
    pub cancelled: u64,
    /// How many documents a turn in release mode had staged went back to
    /// what their release held before it.
    pub staged: usize,
}

/// Undoes one change to a live record of kind `T`: an update goes back to
/// its `before`; a create or a restore is archived. Refuses when the record
/// changed after this change.
fn undo_one<T: Record>(conn: &Conn, scope: &Scope, ctx: &ChangeContext, change: &Change) -> Result<()> {
    let label = format!("{} {}", change.entity, change.entity_id);
    let Some(mut current) = load_to_change::<T>(conn, scope, &change.entity_id)? else {
        return Err(StoreError::conflict(None, format!("{label} was archived since; restore it first")));
    };
    // Changed since = its content differs from what this change left
    // (versions and times move on with every write, including undos).
    let Some(after) = change.after.clone() else {
        return Err(StoreError::Corrupt(format!("change {} has no after", change.id)));
    };
    let mut left: T = serde_json::from_value(after)?;
    left.stamp_as(&mut current);
    if left != current {
        let now_version = *current.stamp().0;
        return Err(StoreError::conflict(
            None,
            format!("{label} changed since this turn (now version {now_version}); nothing was undone"),
        ));
    }
    match change.action {
        ChangeAction::Update | ChangeAction::Revert | ChangeAction::Undo => {
            let Some(before) = change.before.clone() else {
                return Err(StoreError::Corrupt(format!("change {} has no before", change.id)));
            };
            let mut target: T = serde_json::from_value(before)?;
            target.stamp_as(&mut current);
            write_version(conn, scope, ctx, &current, &mut target, ChangeAction::Undo).map(drop)
        }
        ChangeAction::Create | ChangeAction::Restore => {
            crate::archive::archive_in(conn, ctx, scope, change.entity, std::slice::from_ref(&change.entity_id), None)
                .map(|_| ())
        }
        other => Err(StoreError::Corrupt(format!("change {} of a record has the action {other}", change.id))),
    }
}

/// Undoes a publication of a turn: puts back the published document it
/// replaced (none: takes the document off the site), if what is published
/// is still what it left.
fn undo_publication(conn: &Conn, ctx: &ChangeContext, scope: &Scope, change: &Change) -> Result<()> {
    let label = format!("{} {}", change.entity, change.entity_id);
    if document(conn, scope, change.entity, &change.entity_id, Version::Working)?.is_none() {
        return Err(StoreError::conflict(None, format!("{label} was archived since; restore it first")));
    }
    let now = document(conn, scope, change.entity, &change.entity_id, Version::Published)?;
    let left = change.after.as_ref();
    let unchanged = match (now.as_ref(), left) {
        (Some(now), Some(left)) => same_content(now, left),
        (None, None) => true,
        _ => false,
    };
    if !unchanged {
        return Err(StoreError::conflict(
            None,
            format!("{label} was published again since this turn; nothing was undone"),
        ));
    }
    put_back(conn, scope, change.entity, &change.entity_id, change.before.as_ref()).map_err(|e| {
        if e.is_unique_violation() {
            StoreError::conflict(
                None,
                format!("what {label} had published holds a key another published record now uses"),
            )
        } else {
            e
        }
    })?;
    let action = if change.before.is_some() { ChangeAction::Publish } else { ChangeAction::Unpublish };
    let parts = part_of(change.entity).map(|(e, _, _)| e.kind);
    logged_publication(conn, scope, ctx, change.entity, parts, &change.entity_id, action, now, change.before.clone())
        .map(drop)
}

impl Store {
    /// Reverts every change of one agent turn, newest first, in one
    /// transaction: updates go back, creations and restores are archived,
    /// archives are restored. Any record changed since makes it a conflict
    /// and nothing is undone. A turn that changed nothing gives an empty report. Vault notes are returned for the vault to revert.
    pub async fn undo_turn(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        session_id: &str,
        turn_id: &str,
    ) -> Result<UndoReport> {
        let (ctx, scope, session_id, turn_id) =
            (ctx.clone(), scope.clone(), session_id.to_string(), turn_id.to_string());
        self.db.write(move |c| undo_turn_in(c, &ctx, &scope, &session_id, &turn_id)).await
    }
}

/// Undoes one agent turn inside the writer's transaction (see [`Store::undo_turn`]).
pub(crate) fn undo_turn_in(
    conn: &Conn,
    ctx: &ChangeContext,
    scope: &Scope,
    session_id: &str,
    turn_id: &str,
) -> Result<UndoReport> {
    let rows = db::query(
        "SELECT * FROM changes WHERE site_id = ?1 AND env = ?2 AND session_id = ?3 AND turn_id = ?4 ORDER BY id DESC",
    )
    .bind_scope(scope)
    .bind(session_id)
    .bind(turn_id)
    .fetch_all(conn)?;
    let changes = read_changes(conn, &rows)?;
    // The undo's own writes publish nothing: what the turn published is
    // put back by its publication changes, undone first (newest first).
    let ctx = &ChangeContext { publishing: Publishing::Never, ..ctx.clone() };
    // The turn's destructive calls still waiting for (or holding) an
    // approval end with it: nothing of an undone turn may run later.
    let cancelled = cancel_turn_confirmations(conn, scope, ctx, session_id, turn_id)?;
    // What a turn in release mode staged (nothing otherwise) comes out of
    // its release: refused once the release is published.
    let staged = crate::staging::undo_staged_in(conn, scope, session_id, turn_id)?;
    if changes.is_empty() {
        return Ok(UndoReport { cancelled, staged, ..UndoReport::default() });
    }
    let first_new: i64 = db::query_scalar("SELECT COALESCE(MAX(id), 0) + 1 FROM changes").fetch_one(conn)?;
    let mut report = UndoReport { cancelled, staged, ..UndoReport::default() };
    // Records this undo brought back with a whole archive: one archive
    // logs a change per record of its cascade, and restoring it for the
    // first of them restores them all.
    let mut restored_items: HashSet<(EntityKind, String)> = HashSet::new();
    for change in &changes {
        if change.entity == EntityKind::Note {
            report.notes.push(change.clone());
            continue;
        }
        if change.action == ChangeAction::Archive {
            if restored_items.contains(&(change.entity, change.entity_id.clone())) {
                continue;
            }
            let sql = format!(
                "SELECT archive_id FROM {} WHERE id = ?1 AND site_id = ?2 AND env = ?3",
                crate::record::table_of(change.entity)?
            );
            let archive: Option<Option<String>> =
                db::query_scalar(sql).bind(&change.entity_id).bind_scope(scope).fetch_optional(conn)?;
            match archive.flatten() {
                Some(id) => {
                    let restored = crate::archive::restore_in(conn, ctx, scope, std::slice::from_ref(&id), None)?;
                    restored_items
                        .extend(restored.iter().flat_map(|a| a.items.iter()).map(|i| (i.entity, i.id.clone())));
                }
                None => {
                    return Err(StoreError::conflict(
                        None,
                        format!("{} {} was restored since; nothing was undone", change.entity, change.entity_id),
                    ));
                }
            }
            continue;
        }
        if PUBLICATIONS.contains(&change.action) {
            undo_publication(conn, ctx, scope, change)?;
            continue;
        }
        if change.entity == EntityKind::Agent {
            return Err(StoreError::conflict(
                None,
                format!("change {} ({}) cannot be undone as part of a turn", change.id, change.entity),
            ));
        }
        with_record!(change.entity, |T| undo_one::<T>(conn, scope, ctx, change)?, else {
            return Err(StoreError::Corrupt(format!("change {} of a note reached the database's undo", change.id)));
        });
    }
    // What this undo wrote: on PostgreSQL another process may log changes
    // meanwhile, so the scope and the actor narrow it to this one's.
    let rows =
        db::query("SELECT * FROM changes WHERE id >= ?1 AND site_id = ?2 AND env = ?3 AND actor = ?4 ORDER BY id")
            .bind(first_new)
            .bind_scope(scope)
            .bind(&ctx.actor)
            .fetch_all(conn)?;
    report.reverted = read_changes(conn, &rows)?;
    Ok(report)
}

impl Store {
    /// Logs a change to a vault note (the vault itself wrote the file):
    /// `entity_id` is its path; before and after hold its content.
    pub async fn log_note_change(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        path: &str,
        action: ChangeAction,
        before: Option<Value>,
        after: Option<Value>,
    ) -> Result<Change> {
        let (ctx, scope, path) = (ctx.clone(), scope.clone(), path.to_string());
        self.db
            .write(move |c| {
                let id = logged(c, &scope, &ctx, EntityKind::Note, &path, action, before, after)?;
                change_in(c, &scope, id)
            })
            .await
    }
}
