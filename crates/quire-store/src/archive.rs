//! Archive instead of delete: a delete marks the record and everything that
//! cascades with it (a page's sections and child pages, a collection's
//! entries, a navigation's items, a nav item's children) with one archive
//! record; restore clears the mark on all of them at once, unless a slug or
//! key has been reused since, or a parent is gone.

use crate::confirm::{Fingerprint, fingerprint_of};
use crate::db::{self, Conn, QueryBuilder, Row, read_row};
use crate::list::{Listing, decode_key, encode_key, page_of};
use crate::log::{logged, new_id, snapshot};
use crate::record::{
    Entity, Record, archived, check_restore, entity_of, enum_col, found, json_col, load_live, republish_records,
    select_all, table_of, with_record,
};
use crate::{Result, Scope, Store, StoreError};
use chrono::Utc;
use quire_core::model::*;
use serde_json::Value;
use std::collections::HashSet;

/// A live record as (label, JSON snapshot), whatever its kind.
fn load_any(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<Option<(String, Value)>> {
    fn one<T: Record>(conn: &Conn, scope: &Scope, id: &str) -> Result<Option<(String, Value)>> {
        Ok(load_live::<T>(conn, scope, id)?.map(|r| (r.label(), snapshot(&r))))
    }
    with_record!(kind, |T| one::<T>(conn, scope, id), else Ok(None))
}

/// The live children of `id`, a record of `entity`, in the order its
/// [`Entity::children`] lists them (last taken first, so reversed here).
fn children(conn: &Conn, scope: &Scope, entity: &Entity, id: &str) -> Result<Vec<(EntityKind, String)>> {
    let mut out = Vec::new();
    for child in entity.children {
        let Some(of) = entity_of(child.kind) else { continue };
        let top = if child.top_level { " AND parent_id IS NULL" } else { "" };
        let order = if of.positioned { "sort_order DESC, id DESC" } else { "id DESC" };
        let sql = format!(
            "SELECT id FROM {} WHERE {} = ?1 AND site_id = ?2 AND env = ?3{top} AND archive_id IS NULL ORDER BY {order}",
            of.table, child.column
        );
        let ids: Vec<String> = db::query_scalar(sql).bind(id).bind_scope(scope).fetch_all(conn)?;
        out.extend(ids.into_iter().map(|i| (child.kind, i)));
    }
    Ok(out)
}

/// Everything archiving (kind, id) takes along, root first, depth first.
fn cascade(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<Vec<ArchivedItem>> {
    let mut out = Vec::new();
    let mut stack = vec![(kind, id.to_string())];
    let mut seen = HashSet::new();
    while let Some((kind, id)) = stack.pop() {
        if !seen.insert((kind, id.clone())) {
            continue;
        }
        let Some((label, _)) = load_any(conn, scope, kind, &id)? else {
            continue;
        };
        let Some(entity) = entity_of(kind).filter(|e| e.archived) else { continue };
        let children = children(conn, scope, entity, &id)?;
        out.push(ArchivedItem { entity: kind, id, label });
        stack.extend(children);
    }
    Ok(out)
}

fn changed_since_preview() -> StoreError {
    StoreError::conflict(None, "the records changed since the preview; preview again and ask for a new approval")
}

fn archive_from_row(row: &Row) -> Result<Archive> {
    Ok(read_row!(row => Archive {
        id, entity_id, label, archived_by, archived_at, restored_at, restored_by;
        entity: enum_col(row, "entity", EntityKind::parse)?,
        items: json_col(row, "items")?,
    }))
}

/// Refuses to archive what others still depend on.
fn check_archivable(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<()> {
    fn one<T: Record>(conn: &Conn, scope: &Scope, id: &str) -> Result<()> {
        match load_live::<T>(conn, scope, id)? {
            Some(record) => record.check_archive(conn, scope),
            None => Ok(()),
        }
    }
    with_record!(kind, |T| one::<T>(conn, scope, id), else Ok(()))
}

impl Store {
    /// What archiving these records would take along, without changing
    /// anything: one list per root, cascade included.
    pub async fn archive_preview(
        &self,
        scope: &Scope,
        kind: EntityKind,
        ids: &[String],
    ) -> Result<Vec<Vec<ArchivedItem>>> {
        let (scope, ids) = (scope.clone(), ids.to_vec());
        self.db
            .read(move |conn| {
                let mut out: Vec<Vec<ArchivedItem>> = Vec::new();
                for id in &ids {
                    if out.iter().flatten().any(|i| &i.id == id) {
                        continue; // already taken along by an earlier id
                    }
                    let items = cascade(conn, &scope, kind, id)?;
                    if items.is_empty() {
                        return Err(StoreError::not_found(kind.as_str(), id.clone()));
                    }
                    check_archivable(conn, &scope, kind, id)?;
                    out.push(items);
                }
                Ok(out)
            })
            .await
    }

    /// Archives each record with its cascade, one archive record per id, in
    /// one transaction: either all are archived or none.
    pub async fn archive(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        kind: EntityKind,
        ids: &[String],
    ) -> Result<Vec<Archive>> {
        self.archive_checked(ctx, scope, kind, ids, None).await
    }

    /// Like [`Store::archive`], but refuses with a conflict, changing nothing,
    /// unless the records it would archive are exactly those of `expected`
    /// at the same versions (the fingerprint of an approved preview).
    pub async fn archive_checked(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        kind: EntityKind,
        ids: &[String],
        expected: Option<&Fingerprint>,
    ) -> Result<Vec<Archive>> {
        if ids.is_empty() {
            return Err(StoreError::invalid("ids", "at least one id"));
        }
        let (ctx, scope, ids, expected) = (ctx.clone(), scope.clone(), ids.to_vec(), expected.cloned());
        self.db.write(move |c| archive_in(c, &ctx, &scope, kind, &ids, expected.as_ref())).await
    }

    /// Archive records, newest first; `entity` narrows to one kind.
    pub async fn archives(
        &self,
        scope: &Scope,
        entity: Option<EntityKind>,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Listing<Archive>> {
        let mut q = QueryBuilder::new("SELECT * FROM archives WHERE site_id = ");
        q.push_bind(scope.site_id.clone()).push(" AND env = ").push_bind(scope.env.clone());
        if let Some(kind) = entity {
            q.push(" AND entity = ").push_bind(kind.as_str());
        }
        if let Some(c) = cursor {
            q.push(" AND id < ").push_bind(decode_key(c)?);
        }
        q.push(" ORDER BY id DESC LIMIT ").push_bind(limit as i64 + 1);
        let rows = q.build().read_all(&self.db).await?;
        let items = rows.iter().map(archive_from_row).collect::<Result<Vec<_>>>()?;
        Ok(page_of(items, limit, |a| encode_key(&a.id)))
    }

    /// One archive record.
    pub async fn archive_record(&self, scope: &Scope, id: &str) -> Result<Archive> {
        found(db::row_in("archives", scope, id).read_optional(&self.db).await?, archive_from_row, "archive", id)
    }

    /// Restores archives (each with everything it took along) in one
    /// transaction. A slug or key reused since, or a parent that is itself
    /// archived, is a conflict that names it; nothing is restored then.
    pub async fn restore(&self, ctx: &ChangeContext, scope: &Scope, archive_ids: &[String]) -> Result<Vec<Archive>> {
        self.restore_checked(ctx, scope, archive_ids, None, false).await
    }

    /// Like [`Store::restore`]; with `expected`, refuses unless the archived
    /// records are at the versions of the preview; with `dry_run`, checks
    /// everything and rolls back (the preview of a restore).
    pub async fn restore_checked(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        archive_ids: &[String],
        expected: Option<&Fingerprint>,
        dry_run: bool,
    ) -> Result<Vec<Archive>> {
        if archive_ids.is_empty() {
            return Err(StoreError::invalid("ids", "at least one archive id"));
        }
        let (ctx, scope, ids, expected) = (ctx.clone(), scope.clone(), archive_ids.to_vec(), expected.cloned());
        self.db
            .write(move |c| {
                let restore = |c: &Conn| restore_in(c, &ctx, &scope, &ids, expected.as_ref());
                if !dry_run {
                    return restore(c);
                }
                let mut restored = c.dry_run(restore)?;
                for a in &mut restored {
                    a.restored_at = None;
                    a.restored_by = None;
                }
                Ok(restored)
            })
            .await
    }
}

/// Archives inside a caller's transaction (see [`Store::archive_checked`]).
pub(crate) fn archive_in(
    tx: &Conn,
    ctx: &ChangeContext,
    scope: &Scope,
    kind: EntityKind,
    ids: &[String],
    expected: Option<&Fingerprint>,
) -> Result<Vec<Archive>> {
    // Before any row: the cascade sees every child moved in meanwhile.
    if crate::record::in_a_tree(kind) {
        crate::record::lock_trees(tx, scope)?;
    }
    if let Some(expected) = expected {
        let mut items: Vec<ArchivedItem> = Vec::new();
        for id in ids {
            if !items.iter().any(|i| &i.id == id) {
                items.extend(cascade(tx, scope, kind, id)?);
            }
        }
        if &fingerprint_of(tx, scope, &items)? != expected {
            return Err(changed_since_preview());
        }
    }
    let mut archives = Vec::new();
    let now = Utc::now();
    let mut done: Vec<String> = Vec::new();
    for id in ids {
        if done.contains(id) {
            continue; // already archived along with an earlier id
        }
        let items = cascade(tx, scope, kind, id)?;
        done.extend(items.iter().map(|i| i.id.clone()));
        let Some(root) = items.first().cloned() else {
            return Err(StoreError::not_found(kind.as_str(), id.clone()));
        };
        check_archivable(tx, scope, kind, id)?;
        let archive = Archive {
            id: new_id(),
            entity: kind,
            entity_id: id.clone(),
            label: root.label.clone(),
            items: items.clone(),
            archived_by: ctx.actor.clone(),
            archived_at: now,
            restored_at: None,
            restored_by: None,
        };
        db::query(
            "INSERT INTO archives (id, site_id, env, entity, entity_id, label, items, archived_by, archived_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )
        .bind(&archive.id)
        .bind_scope(scope)
        .bind(kind.as_str())
        .bind(id)
        .bind(&archive.label)
        .bind(serde_json::to_string(&items)?)
        .bind(&archive.archived_by)
        .bind(now)
        .execute(tx)?;
        for item in &items {
            let (_, before) = load_any(tx, scope, item.entity, &item.id)?
                .ok_or_else(|| StoreError::not_found(item.entity.as_str(), item.id.clone()))?;
            let sql = format!(
                "UPDATE {} SET archive_id = ?1, version = version + 1, updated_at = ?2 WHERE id = ?3 AND site_id = ?4 AND env = ?5",
                table_of(item.entity)?
            );
            db::query(sql).bind(&archive.id).bind(now).bind(&item.id).bind_scope(scope).execute(tx)?;
            logged(tx, scope, ctx, item.entity, &item.id, ChangeAction::Archive, Some(before), None)?;
        }
        archived(tx, scope, &archive.id, items.iter().map(|i| (i.entity, i.id.as_str())))?;
        republish_records(tx, ctx, scope, items.iter().map(|i| (i.entity, i.id.as_str())))?;
        archives.push(archive);
    }
    Ok(archives)
}

/// Restores inside a caller's transaction (see [`Store::restore_checked`]).
pub(crate) fn restore_in(
    tx: &Conn,
    ctx: &ChangeContext,
    scope: &Scope,
    archive_ids: &[String],
    expected: Option<&Fingerprint>,
) -> Result<Vec<Archive>> {
    let now = Utc::now();
    let mut restored = Vec::new();
    let mut all_items = Vec::new();
    for archive_id in archive_ids {
        let row = db::row_in("archives", scope, archive_id).fetch_optional(tx)?;
        let mut archive = found(row, archive_from_row, "archive", archive_id)?;
        if archive.restored_at.is_some() {
            return Err(StoreError::conflict(None, format!("archive {archive_id} was already restored")));
        }
        all_items.extend(archive.items.iter().cloned());
        // Before any row: a restored record's parent is checked against
        // moves and archives made meanwhile.
        if archive.items.iter().any(|i| crate::record::in_a_tree(i.entity)) {
            crate::record::lock_trees(tx, scope)?;
        }
        for item in &archive.items {
            restore_conflict(tx, scope, item, &archive.id)?;
        }
        for item in &archive.items {
            let sql = format!(
                "UPDATE {} SET archive_id = NULL, version = version + 1, updated_at = ?1 WHERE id = ?2 AND archive_id = ?3 AND site_id = ?4 AND env = ?5",
                table_of(item.entity)?
            );
            db::query(sql).bind(now).bind(&item.id).bind(&archive.id).bind_scope(scope).execute(tx)?;
            let after = load_any(tx, scope, item.entity, &item.id)?.map(|(_, v)| v);
            logged(tx, scope, ctx, item.entity, &item.id, ChangeAction::Restore, None, after)?;
        }
        db::query("UPDATE archives SET restored_at = ?1, restored_by = ?2 WHERE id = ?3 AND site_id = ?4 AND env = ?5")
            .bind(now)
            .bind(&ctx.actor)
            .bind(&archive.id)
            .bind_scope(scope)
            .execute(tx)?;
        crate::record::restored(tx, scope, &archive.id).map_err(|e| {
            if e.is_unique_violation() {
                StoreError::conflict(
                    None,
                    format!(
                        "what {} {} had published holds a slug or key another published record now uses; rename that one first",
                        archive.entity, archive.label
                    ),
                )
            } else {
                e
            }
        })?;
        archive.restored_at = Some(now);
        archive.restored_by = Some(ctx.actor.clone());
        restored.push(archive);
    }
    republish_records(tx, ctx, scope, all_items.iter().map(|i| (i.entity, i.id.as_str())))?;
    if let Some(expected) = expected {
        // Versions were bumped by the restore above; compare what they were.
        let now_versions: Fingerprint =
            fingerprint_of(tx, scope, &all_items)?.into_iter().map(|(k, i, v)| (k, i, v - 1)).collect();
        if &now_versions != expected {
            return Err(changed_since_preview());
        }
    }
    Ok(restored)
}

/// Why restoring `item` from archive `archive_id` would clash, if it would.
fn restore_conflict(conn: &Conn, scope: &Scope, item: &ArchivedItem, archive_id: &str) -> Result<()> {
    let table = table_of(item.entity)?;
    let all = entity_of(item.entity).map_or_else(|| "*".to_string(), |e| select_all(e, conn, table));
    let row = db::query(format!("SELECT {all} FROM {table} WHERE id = ?1 AND site_id = ?2 AND env = ?3"))
        .bind(&item.id)
        .bind_scope(scope)
        .fetch_optional(conn)?;
    let Some(row) = row else {
        return Err(StoreError::Corrupt(format!("archived {} {} is missing", item.entity, item.id)));
    };
    let current_archive: Option<String> = row.try_get("archive_id")?;
    if current_archive.as_deref() != Some(archive_id) {
        return Err(StoreError::conflict(
            None,
            format!("{} {} is no longer part of this archive", item.entity, item.id),
        ));
    }
    fn one<T: Record>(conn: &Conn, scope: &Scope, row: &Row, archive_id: &str) -> Result<()> {
        check_restore(conn, scope, &T::from_row(row)?, archive_id)
    }
    with_record!(item.entity, |T| one::<T>(conn, scope, &row, archive_id), else Ok(()))
}
