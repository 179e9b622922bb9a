//! Release mode ([decision 0046]): a store handle whose writes to pages,
//! sections, entries, navigations and their items land in a release, and
//! whose reads see that release laid over the working copies. Neither the
//! drafts nor the public site move; a person publishes the release.
//!
//! Each read or write through the handle runs on the writer, inside a
//! savepoint: the release's documents are first written over the working
//! rows (its copies in place, its archives hidden), then the call runs as
//! it would anywhere — checks, the change log, everything — then every
//! document the call changed is read back, and the savepoint is rolled
//! back. A write then keeps only that: each changed document becomes the
//! release's copy of it (or an archive of it, or leaves the release when
//! the release had made it), and the turn's log of staged documents keeps
//! what each was before, for an undo. A call that changed anything but
//! documents (an image, a publication) is refused, and nothing is kept.
//!
//! [decision 0046]: ../../../docs/decisions/0046-drafts-and-releases.md

use crate::db::{self, Conn, Overlay, QueryBuilder};
use crate::record::{
    Record, Version, document, entity_of, in_a_tree, insert, lock_trees, part_of, root_of, with_record,
};
use crate::releases::{items_of, label_of, load, versions};
use crate::{Result, Scope, Store, StoreError};
use chrono::Utc;
use quire_core::model::{EntityKind, ReleaseAction, ReleaseState};
use serde_json::{Value, json};
use std::sync::Arc;

/// Where a turn in release mode stages its work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Staging {
    /// The release's id (made on the first staged write).
    pub release: String,
    /// Its name, when it is made.
    pub name: String,
    /// The site and environment.
    pub scope: Scope,
    /// Who stages (`user:<id>`, the person the agent acts for).
    pub actor: String,
    /// The agent session.
    pub session_id: String,
    /// The turn.
    pub turn_id: String,
}

/// The id of the archive that hides, inside the savepoint, what the
/// release archives.
fn hiding(release: &str) -> String {
    format!("staged:{release}")
}

/// A document a staged write changed: its kind, id, copy as the write left
/// it (none: archived) and label.
type Captured = (EntityKind, String, Option<Value>, String);

/// A row of a turn's log of staged documents: release, kind, id, before, after.
type StagedRow = (String, String, String, Option<String>, Option<String>);

const SAVEPOINT: &str = "SAVEPOINT staging";
const ROLLBACK: &str = "ROLLBACK TO SAVEPOINT staging; RELEASE SAVEPOINT staging";
const ITEM: &str = "SAVEPOINT staged_item";
const ITEM_KEPT: &str = "RELEASE SAVEPOINT staged_item";
const ITEM_UNDONE: &str = "ROLLBACK TO SAVEPOINT staged_item; RELEASE SAVEPOINT staged_item";

impl Staging {
    /// Lays the release over the working rows (see the module's text);
    /// answers the documents whose copy could not be laid: a key of theirs
    /// that a working record took since (a person's page of the same slug).
    /// Those read as their working copies, and a write of one is refused.
    fn apply(&self, conn: &Conn) -> Result<Vec<(EntityKind, String)>> {
        let scope = &self.scope;
        let exists: Option<String> =
            db::query_scalar("SELECT state FROM releases WHERE id = ?1 AND site_id = ?2 AND env = ?3")
                .bind(&self.release)
                .bind_scope(scope)
                .fetch_optional(conn)?;
        if exists.as_deref() != Some(ReleaseState::Open.as_str()) {
            return Ok(Vec::new());
        }
        let items = items_of(conn, &self.release)?;
        if items.is_empty() {
            return Ok(Vec::new());
        }
        // The trees' locks before any row of a page or a menu, as every
        // write of one takes them (on PostgreSQL): a person's write of such
        // a draft on another replica waits for this one, or this one for
        // it, never each for the other (`record::lock_trees`).
        if items.iter().any(|i| in_a_tree(i.item.entity)) {
            lock_trees(conn, scope)?;
        }
        let hidden = hiding(&self.release);
        db::query(
            "INSERT INTO archives (id, site_id, env, entity, entity_id, label, items, archived_by, archived_at)
             VALUES (?1, ?2, ?3, 'page', ?1, 'staged', '[]', 'system', ?4)",
        )
        .bind(&hidden)
        .bind_scope(scope)
        .bind(Utc::now())
        .execute(conn)?;
        // What the release archives first: a copy may take a key one of
        // them held.
        for item in items.iter().filter(|i| i.item.action == ReleaseAction::Archive) {
            let (kind, id) = (item.item.entity, item.item.id.as_str());
            let Some((root, _, _)) = root_of(kind) else { continue };
            db::query(format!(
                "UPDATE {} SET archive_id = ?1 WHERE id = ?2 AND site_id = ?3 AND env = ?4 AND archive_id IS NULL",
                root.table
            ))
            .bind(&hidden)
            .bind(id)
            .bind_scope(scope)
            .execute(conn)?;
            if let Some((part, _, column)) = part_of(kind) {
                hide_parts(conn, scope, part.table, column, id, &[], &hidden)?;
            }
        }
        let mut clashing = Vec::new();
        for item in &items {
            let (kind, id) = (item.item.entity, item.item.id.as_str());
            let (ReleaseAction::Publish, Some(copy)) = (item.item.action, &item.document) else { continue };
            conn.batch(ITEM)?;
            let laid = (|| -> Result<()> {
                with_record!(kind, |T| put::<T>(conn, scope, &copy["record"])?, else {});
                if let Some((part, _, column)) = part_of(kind) {
                    let kept: Vec<&str> =
                        copy["parts"].as_array().into_iter().flatten().filter_map(|p| p["id"].as_str()).collect();
                    hide_parts(conn, scope, part.table, column, id, &kept, &hidden)?;
                    for record in copy["parts"].as_array().into_iter().flatten() {
                        with_record!(part.kind, |T| put::<T>(conn, scope, record)?, else {});
                    }
                }
                Ok(())
            })();
            match laid {
                Ok(()) => conn.batch(ITEM_KEPT)?,
                Err(e) if e.is_unique_violation() => {
                    conn.batch(ITEM_UNDONE)?;
                    clashing.push((kind, id.to_string()));
                }
                Err(e) => {
                    conn.batch(ITEM_UNDONE)?;
                    return Err(e);
                }
            }
        }
        Ok(clashing)
    }

    /// The documents the changes this session logged after `mark` touched
    /// (another process's, committed meanwhile, are not this write's), each
    /// once, in order; a refusal when one is of anything else.
    fn touched(&self, conn: &Conn, mark: i64) -> Result<Vec<(EntityKind, String)>> {
        let rows: Vec<(String, String, String)> = db::query_as(
            "SELECT entity, entity_id, action FROM changes WHERE id > ?1 AND site_id = ?2 AND env = ?3
             AND session_id = ?4 ORDER BY id",
        )
        .bind(mark)
        .bind_scope(&self.scope)
        .bind(&self.session_id)
        .fetch_all(conn)?;
        let mut documents: Vec<(EntityKind, String)> = Vec::new();
        for (entity, id, action) in rows {
            let kind = EntityKind::parse("entity", &entity).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            if action == "publish" || action == "unpublish" {
                return Err(self.refusal("publishing is a person's call: they publish the release as a whole"));
            }
            let document = if root_of(kind).is_some() {
                (kind, id)
            } else if let Some(of) =
                EntityKind::ALL.iter().copied().find(|k| part_of(*k).is_some_and(|p| p.0.kind == kind))
            {
                let (part, _, column) = part_of(of).expect("found above");
                let sql = format!("SELECT {column} FROM {} WHERE id = ?1 AND site_id = ?2 AND env = ?3", part.table);
                let parent: String = db::query_scalar(sql).bind(&id).bind_scope(&self.scope).fetch_one(conn)?;
                (of, parent)
            } else {
                let noun = entity_of(kind).map_or(kind.as_str(), |e| e.noun);
                return Err(self.refusal(&format!(
                    "a release holds pages, posts, entries and menus, so a change of {noun} is not staged; ask a person to make it"
                )));
            };
            if !documents.contains(&document) {
                documents.push(document);
            }
        }
        Ok(documents)
    }

    fn refusal(&self, why: &str) -> StoreError {
        StoreError::conflict(None, format!("this agent stages its work in release {}: {why}", self.release))
    }

    /// Keeps what a write staged: `captured` holds each document it touched
    /// as the write left it (none: archived) with its label.
    fn keep(&self, conn: &Conn, captured: Vec<Captured>) -> Result<()> {
        if captured.is_empty() {
            return Ok(());
        }
        let scope = &self.scope;
        let now = Utc::now();
        db::query(
            "INSERT INTO releases (id, site_id, env, name, description, state, created_by, created_at, updated_at, version)
             VALUES (?1, ?2, ?3, ?4, ?5, 'open', ?6, ?7, ?7, 1) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&self.release)
        .bind_scope(scope)
        .bind(&self.name)
        .bind(format!("Staged by agent session {}, turn {}", self.session_id, self.turn_id))
        .bind(&self.actor)
        .bind(now)
        .execute(conn)?;
        let (release, items) = load(conn, scope, &self.release)?;
        if release.state != ReleaseState::Open {
            return Err(self.refusal(&format!("the release is {} and takes no more changes", release.state)));
        }
        for (kind, id, copy, label) in captured {
            let existing = items.iter().find(|i| i.item.entity == kind && i.item.id == id);
            let before =
                existing.map(|i| json!({ "action": i.item.action, "document": i.document, "label": i.item.label }));
            let outside = document(conn, scope, kind, &id, Version::Working)?;
            let (action, copy) = match copy {
                Some(copy) => (Some(ReleaseAction::Publish), Some(copy)),
                // Archived: staged as an archive, or, when the release had
                // made it, no longer in the release.
                None if outside.is_some() => (Some(ReleaseAction::Archive), None),
                None => (None, None),
            };
            let staged = match existing {
                Some(item) => item.staged.clone(),
                None => {
                    let published = document(conn, scope, kind, &id, Version::Published)?;
                    json!({ "working": versions(outside.as_ref()), "published": versions(published.as_ref()) })
                }
            };
            let after = match action {
                Some(action) => {
                    db::query(
                        "INSERT INTO release_items (release_id, kind, document_id, action, label, document, staged, revision,
                         added_by, added_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                         ON CONFLICT (release_id, kind, document_id) DO UPDATE SET action = excluded.action,
                           label = excluded.label, document = excluded.document, staged = excluded.staged,
                           revision = excluded.revision, removed_at = NULL",
                    )
                    .bind(&self.release)
                    .bind(kind.as_str())
                    .bind(&id)
                    .bind(action.as_str())
                    .bind(&label)
                    .bind(copy.as_ref().map(Value::to_string))
                    .bind(staged.to_string())
                    .bind(release.version + 1)
                    .bind(&self.actor)
                    .bind(now)
                    .execute(conn)?;
                    Some(json!({ "action": action, "document": copy, "label": label }))
                }
                None => {
                    db::query(
                        "UPDATE release_items SET removed_at = ?1 WHERE release_id = ?2 AND kind = ?3 AND document_id = ?4",
                    )
                    .bind(now)
                    .bind(&self.release)
                    .bind(kind.as_str())
                    .bind(&id)
                    .execute(conn)?;
                    None
                }
            };
            // The turn's log: what the release held before the turn's
            // first change to the document, and after its last.
            db::query(
                "INSERT INTO release_changes (release_id, kind, document_id, session_id, turn_id, actor, before, after, at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (release_id, kind, document_id, session_id, turn_id) DO UPDATE SET after = excluded.after,
                   at = excluded.at",
            )
            .bind(&self.release)
            .bind(kind.as_str())
            .bind(&id)
            .bind(&self.session_id)
            .bind(&self.turn_id)
            .bind(&self.actor)
            .bind(before.map(|b| b.to_string()))
            .bind(after.map(|a| a.to_string()))
            .bind(now)
            .execute(conn)?;
        }
        crate::releases::touch(conn, scope, &self.release, "", Vec::new())
    }
}

/// Writes `record` (a record of `T` as JSON) over its working row, live,
/// or inserts it: no check, no log (inside the savepoint only).
fn put<T: Record>(conn: &Conn, scope: &Scope, record: &Value) -> Result<()> {
    let record: T = serde_json::from_value(record.clone())?;
    let columns = record.columns();
    let exists: Option<i64> =
        db::query_scalar(format!("SELECT 1 FROM {} WHERE id = ?1 AND site_id = ?2 AND env = ?3", T::TABLE))
            .bind(record.id())
            .bind_scope(scope)
            .fetch_optional(conn)?;
    if exists.is_none() {
        return insert(conn, scope, T::TABLE, &columns);
    }
    let mut sql = QueryBuilder::new(format!("UPDATE {} SET archive_id = NULL", T::TABLE));
    for (name, value) in &columns {
        sql.push(", ").push(name).push(" = ").push_bind(value);
    }
    sql.push(" WHERE id = ").push_bind(record.id()).push(" AND site_id = ").push_bind(&scope.site_id);
    sql.push(" AND env = ").push_bind(&scope.env);
    sql.build().execute(conn)?;
    Ok(())
}

/// Hides the live parts of document `id` not among `kept`.
fn hide_parts(
    conn: &Conn,
    scope: &Scope,
    table: &str,
    column: &str,
    id: &str,
    kept: &[&str],
    hidden: &str,
) -> Result<()> {
    let live: Vec<String> = db::query_scalar(format!(
        "SELECT id FROM {table} WHERE {column} = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL"
    ))
    .bind(id)
    .bind_scope(scope)
    .fetch_all(conn)?;
    for part in live.iter().filter(|p| !kept.contains(&p.as_str())) {
        db::query(format!("UPDATE {table} SET archive_id = ?1 WHERE id = ?2 AND site_id = ?3 AND env = ?4"))
            .bind(hidden)
            .bind(part)
            .bind_scope(scope)
            .execute(conn)?;
    }
    Ok(())
}

impl Overlay for Staging {
    fn read(&self, conn: &Conn, f: &mut dyn FnMut(&Conn) -> Result<()>) -> Result<()> {
        conn.batch(SAVEPOINT)?;
        let out = self.apply(conn).and_then(|_| f(conn));
        conn.batch(ROLLBACK)?;
        out
    }

    fn write(&self, conn: &Conn, f: &mut dyn FnMut(&Conn) -> Result<()>) -> Result<()> {
        // Held first, as a publish of the release holds it before its
        // documents: a write that lands in it cannot miss a publish.
        crate::releases::lock(conn, &self.scope, &self.release)?;
        conn.batch(SAVEPOINT)?;
        let staged = (|| -> Result<Vec<Captured>> {
            let clashing = self.apply(conn)?;
            let mark: i64 = db::query_scalar("SELECT COALESCE(MAX(id), 0) FROM changes").fetch_one(conn)?;
            f(conn)?;
            let mut captured = Vec::new();
            for (kind, id) in self.touched(conn, mark)? {
                // Written over its working copy, not the release's: the
                // release's changes to it would be lost.
                if clashing.contains(&(kind, id.clone())) {
                    let noun = entity_of(kind).map_or(kind.as_str(), |e| e.noun);
                    return Err(self.refusal(&format!(
                        "the release's copy of {noun} {id} holds a key another {noun} took since; ask a person to settle it"
                    )));
                }
                let copy = document(conn, &self.scope, kind, &id, Version::Working)?;
                let label = match &copy {
                    Some(_) => label_of(conn, &self.scope, kind, &id)?,
                    None => String::new(),
                };
                captured.push((kind, id, copy, label));
            }
            Ok(captured)
        })();
        conn.batch(ROLLBACK)?;
        let mut captured = staged?;
        // An archived document keeps the label it had.
        for (kind, id, copy, label) in &mut captured {
            if copy.is_none() {
                *label = label_of(conn, &self.scope, *kind, id).unwrap_or_else(|_| id.clone());
            }
        }
        self.keep(conn, captured)
    }
}

impl Store {
    /// A handle on this store whose reads see the release of `staging`
    /// laid over the working copies and whose writes of documents land in
    /// it (see the module's text).
    pub fn staged(&self, staging: Staging) -> Store {
        Store { db: self.db.with_overlay(Arc::new(staging)), ..self.clone() }
    }

    /// Chooses the release the turns of session `session_id` stage in from
    /// now on (none: each turn makes one of its own). The release must be
    /// open in the session's site and environment.
    pub async fn choose_session_release(&self, scope: &Scope, session_id: &str, release: Option<&str>) -> Result<()> {
        let (scope, session_id, release) = (scope.clone(), session_id.to_string(), release.map(str::to_string));
        self.db
            .write(move |c| {
                if let Some(id) = &release {
                    let release = load(c, &scope, id)?.0;
                    if release.state != ReleaseState::Open {
                        return Err(StoreError::conflict(
                            Some("releaseId"),
                            format!(
                                "releaseId: release \"{}\" is {} and takes no more changes; choose an open one",
                                release.name, release.state
                            ),
                        ));
                    }
                }
                db::query("UPDATE agent_sessions SET release_id = ?1 WHERE id = ?2 AND site_id = ?3 AND env = ?4")
                    .bind(&release)
                    .bind(&session_id)
                    .bind_scope(&scope)
                    .execute(c)?;
                Ok(())
            })
            .await
    }

    /// The release a person chose for session `session_id`'s turns, if any.
    pub async fn session_release(&self, scope: &Scope, session_id: &str) -> Result<Option<String>> {
        let (scope, session_id) = (scope.clone(), session_id.to_string());
        self.db
            .read(move |c| {
                Ok(db::query_scalar::<Option<String>>(
                    "SELECT release_id FROM agent_sessions WHERE id = ?1 AND site_id = ?2 AND env = ?3",
                )
                .bind(&session_id)
                .bind_scope(&scope)
                .fetch_optional(c)?
                .flatten())
            })
            .await
    }

    /// The releases session `session_id`'s turns staged documents in, as
    /// (turn, release id), in turn order.
    pub async fn staged_releases(&self, scope: &Scope, session_id: &str) -> Result<Vec<(i64, String)>> {
        let (scope, session_id) = (scope.clone(), session_id.to_string());
        self.db
            .read(move |c| {
                let rows: Vec<(String, String)> = db::query_as(
                    "SELECT DISTINCT c.turn_id, c.release_id FROM release_changes c
                     JOIN releases r ON r.id = c.release_id AND r.site_id = ?2 AND r.env = ?3
                     WHERE c.session_id = ?1",
                )
                .bind(&session_id)
                .bind_scope(&scope)
                .fetch_all(c)?;
                let mut turns: Vec<(i64, String)> =
                    rows.into_iter().filter_map(|(turn, release)| Some((turn.parse().ok()?, release))).collect();
                turns.sort();
                Ok(turns)
            })
            .await
    }
}

/// Undoes what a turn staged, inside the writer's transaction of the
/// turn's undo: each document it staged goes back to what the release held
/// before the turn (or leaves it). Refused when the release was published
/// (revert it instead) or a document was staged again since by another
/// turn; answers how many documents.
pub(crate) fn undo_staged_in(c: &Conn, scope: &Scope, session_id: &str, turn_id: &str) -> Result<usize> {
    let rows: Vec<StagedRow> = db::query_as(
        "SELECT release_id, kind, document_id, before, after FROM release_changes
         WHERE session_id = ?1 AND turn_id = ?2 AND undone_at IS NULL
         AND release_id IN (SELECT id FROM releases WHERE site_id = ?3 AND env = ?4) ORDER BY at",
    )
    .bind(session_id)
    .bind(turn_id)
    .bind_scope(scope)
    .fetch_all(c)?;
    for (release_id, kind, id, before, after) in &rows {
        crate::releases::lock(c, scope, release_id)?;
        let (release, items) = load(c, scope, release_id)?;
        if release.state != ReleaseState::Open {
            let instead = match release.state {
                ReleaseState::Scheduled => "unschedule it first",
                _ => "revert it instead",
            };
            return Err(StoreError::conflict(
                None,
                format!("release \"{}\" is {}: {instead}", release.name, release.state),
            ));
        }
        let later: i64 = db::query_scalar(
            "SELECT COUNT(*) FROM release_changes WHERE release_id = ?1 AND kind = ?2 AND document_id = ?3
             AND undone_at IS NULL AND at > (SELECT at FROM release_changes WHERE release_id = ?1 AND kind = ?2
                       AND document_id = ?3 AND session_id = ?4 AND turn_id = ?5)",
        )
        .bind(release_id)
        .bind(kind)
        .bind(id)
        .bind(session_id)
        .bind(turn_id)
        .fetch_one(c)?;
        if later > 0 {
            return Err(StoreError::conflict(
                None,
                format!("{kind} {id} was staged again since this turn; nothing was undone"),
            ));
        }
        // The item must still be what the turn left: a person who
        // staged the document again (or took it out) since made it
        // theirs, and an undo would silently throw that away.
        let now = items.iter().find(|i| i.item.entity.as_str() == kind && &i.item.id == id);
        let left: Option<Value> = after.as_deref().map(serde_json::from_str).transpose()?;
        let unchanged = match (&left, now) {
            (None, None) => true,
            (Some(left), Some(now)) => {
                left["action"] == json!(now.item.action)
                    && left["document"] == now.document.clone().unwrap_or(Value::Null)
            }
            _ => false,
        };
        if !unchanged {
            return Err(StoreError::conflict(
                None,
                format!(
                    "{kind} {id} changed in release \"{}\" since this turn staged it; nothing was undone",
                    release.name
                ),
            ));
        }
        let before: Option<Value> = before.as_deref().map(serde_json::from_str).transpose()?;
        match before {
            Some(b) => {
                // A new revision: an approval of the release's
                // publish previewed what the turn left.
                db::query(
                    "UPDATE release_items SET action = ?1, document = ?2, label = ?3, removed_at = NULL,
                     revision = ?7 WHERE release_id = ?4 AND kind = ?5 AND document_id = ?6",
                )
                .bind(b["action"].as_str().unwrap_or("publish"))
                .bind(Some(&b["document"]).filter(|d| !d.is_null()).map(Value::to_string))
                .bind(b["label"].as_str().unwrap_or_default())
                .bind(release_id)
                .bind(kind)
                .bind(id)
                .bind(release.version + 1)
                .execute(c)?;
            }
            None => {
                db::query(
                    "UPDATE release_items SET removed_at = ?1 WHERE release_id = ?2 AND kind = ?3
                     AND document_id = ?4",
                )
                .bind(Utc::now())
                .bind(release_id)
                .bind(kind)
                .bind(id)
                .execute(c)?;
            }
        }
        crate::releases::touch(c, scope, release_id, "", Vec::new())?;
    }
    db::query(
        "UPDATE release_changes SET undone_at = ?3 WHERE session_id = ?1 AND turn_id = ?2
         AND release_id IN (SELECT id FROM releases WHERE site_id = ?4 AND env = ?5)",
    )
    .bind(session_id)
    .bind(turn_id)
    .bind(Utc::now())
    .bind_scope(scope)
    .execute(c)?;
    Ok(rows.len())
}
