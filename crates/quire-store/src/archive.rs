//! Archive instead of delete: a delete marks the record and everything that
//! cascades with it (a page's sections and child pages, a collection's
//! entries, a navigation's items, a nav item's children) with one archive
//! record; restore clears the mark on all of them at once, unless a slug or
//! key has been reused since, or a parent is gone.

use crate::changes::log_change;
use crate::confirm::{Fingerprint, fingerprint_of};
use crate::db::{self, Conn, QueryBuilder, Row};
use crate::list::{Listing, decode_key, encode_key, page_of};
use crate::ops::{new_id, snapshot};
use crate::record::{Record, enum_col, json_col, load_live, table_of};
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
    match kind {
        EntityKind::Page => one::<Page>(conn, scope, id),
        EntityKind::Section => one::<PageSection>(conn, scope, id),
        EntityKind::SectionTemplate => one::<SectionTemplate>(conn, scope, id),
        EntityKind::Collection => one::<Collection>(conn, scope, id),
        EntityKind::Entry => one::<Entry>(conn, scope, id),
        EntityKind::Image => one::<Image>(conn, scope, id),
        EntityKind::Navigation => one::<Navigation>(conn, scope, id),
        EntityKind::NavItem => one::<NavItem>(conn, scope, id),
        // Agents are disabled, not archived; notes are archived in the vault.
        EntityKind::Agent | EntityKind::Note => Ok(None),
    }
}

fn live_ids(conn: &Conn, sql: &'static str, parent: &str) -> Result<Vec<String>> {
    db::query_scalar(sql).bind(parent).fetch_all(conn)
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
        let children: Vec<(EntityKind, String)> = match kind {
            EntityKind::Page => {
                let mut c: Vec<_> = live_ids(
                    conn,
                    "SELECT id FROM page_sections WHERE page_id = ?1 AND archive_id IS NULL ORDER BY sort_order DESC, id DESC",
                    &id,
                )?
                .into_iter()
                .map(|s| (EntityKind::Section, s))
                .collect();
                c.extend(
                    live_ids(conn, "SELECT id FROM pages WHERE parent_id = ?1 AND archive_id IS NULL ORDER BY sort_order DESC, id DESC", &id)?
                        .into_iter()
                        .map(|p| (EntityKind::Page, p)),
                );
                c
            }
            EntityKind::Collection => live_ids(conn, "SELECT id FROM entries WHERE collection_id = ?1 AND archive_id IS NULL ORDER BY id DESC", &id)?
                .into_iter()
                .map(|e| (EntityKind::Entry, e))
                .collect(),
            EntityKind::Navigation => live_ids(
                conn,
                "SELECT id FROM nav_items WHERE navigation_id = ?1 AND parent_id IS NULL AND archive_id IS NULL ORDER BY sort_order DESC, id DESC",
                &id,
            )?
            .into_iter()
            .map(|n| (EntityKind::NavItem, n))
            .collect(),
            EntityKind::NavItem => live_ids(conn, "SELECT id FROM nav_items WHERE parent_id = ?1 AND archive_id IS NULL ORDER BY sort_order DESC, id DESC", &id)?
                .into_iter()
                .map(|n| (EntityKind::NavItem, n))
                .collect(),
            _ => Vec::new(),
        };
        out.push(ArchivedItem { entity: kind, id, label });
        stack.extend(children);
    }
    Ok(out)
}

fn changed_since_preview() -> StoreError {
    StoreError::conflict(None, "the records changed since the preview; preview again and ask for a new approval")
}

fn archive_from_row(row: &Row) -> Result<Archive> {
    Ok(Archive {
        id: row.try_get("id")?,
        entity: enum_col(row, "entity", EntityKind::parse)?,
        entity_id: row.try_get("entity_id")?,
        label: row.try_get("label")?,
        items: json_col(row, "items")?,
        archived_by: row.try_get("archived_by")?,
        archived_at: row.try_get("archived_at")?,
        restored_at: row.try_get("restored_at")?,
        restored_by: row.try_get("restored_by")?,
    })
}

/// Refuses to archive what others still depend on.
fn check_archivable(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<()> {
    if kind == EntityKind::SectionTemplate {
        let key: Option<String> =
            db::query_scalar("SELECT key FROM section_templates WHERE id = ?1").bind(id).fetch_optional(conn)?;
        let used: i64 = db::query_scalar(
            "SELECT COUNT(*) FROM page_sections WHERE site_id = ?1 AND env = ?2 AND template_key = ?3 AND archive_id IS NULL",
        )
        .bind(&scope.site_id)
        .bind(&scope.env)
        .bind(&key)
        .fetch_one(conn)?;
        if used > 0 {
            return Err(StoreError::conflict(
                None,
                format!(
                    "template {} is used by {used} live sections; archive or change those first",
                    key.unwrap_or_default()
                ),
            ));
        }
    }
    Ok(())
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
        let row = db::query("SELECT * FROM archives WHERE id = ?1 AND site_id = ?2 AND env = ?3")
            .bind(id)
            .bind(&scope.site_id)
            .bind(&scope.env)
            .read_optional(&self.db)
            .await?;
        row.as_ref().map(archive_from_row).transpose()?.ok_or_else(|| StoreError::not_found("archive", id))
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
    if let Some(expected) = expected {
        let mut items: Vec<ArchivedItem> = Vec::new();
        for id in ids {
            if !items.iter().any(|i| &i.id == id) {
                items.extend(cascade(tx, scope, kind, id)?);
            }
        }
        if &fingerprint_of(tx, &items)? != expected {
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
        .bind(&scope.site_id)
        .bind(&scope.env)
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
                "UPDATE {} SET archive_id = ?1, version = version + 1, updated_at = ?2 WHERE id = ?3",
                table_of(item.entity)
            );
            db::query(sql).bind(&archive.id).bind(now).bind(&item.id).execute(tx)?;
            log_change(tx, scope, ctx, item.entity, &item.id, "archive", Some(before), None)?;
        }
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
        let row = db::query("SELECT * FROM archives WHERE id = ?1 AND site_id = ?2 AND env = ?3")
            .bind(archive_id)
            .bind(&scope.site_id)
            .bind(&scope.env)
            .fetch_optional(tx)?;
        let Some(mut archive) = row.as_ref().map(archive_from_row).transpose()? else {
            return Err(StoreError::not_found("archive", archive_id.clone()));
        };
        if archive.restored_at.is_some() {
            return Err(StoreError::conflict(None, format!("archive {archive_id} was already restored")));
        }
        all_items.extend(archive.items.iter().cloned());
        for item in &archive.items {
            restore_conflict(tx, scope, item, &archive.id)?;
        }
        for item in &archive.items {
            let sql = format!(
                "UPDATE {} SET archive_id = NULL, version = version + 1, updated_at = ?1 WHERE id = ?2 AND archive_id = ?3",
                table_of(item.entity)
            );
            db::query(sql).bind(now).bind(&item.id).bind(&archive.id).execute(tx)?;
            let after = load_any(tx, scope, item.entity, &item.id)?.map(|(_, v)| v);
            log_change(tx, scope, ctx, item.entity, &item.id, "restore", None, after)?;
        }
        db::query("UPDATE archives SET restored_at = ?1, restored_by = ?2 WHERE id = ?3")
            .bind(now)
            .bind(&ctx.actor)
            .bind(&archive.id)
            .execute(tx)?;
        archive.restored_at = Some(now);
        archive.restored_by = Some(ctx.actor.clone());
        restored.push(archive);
    }
    if let Some(expected) = expected {
        // Versions were bumped by the restore above; compare what they were.
        let now_versions: Fingerprint =
            fingerprint_of(tx, &all_items)?.into_iter().map(|(k, i, v)| (k, i, v - 1)).collect();
        if &now_versions != expected {
            return Err(changed_since_preview());
        }
    }
    Ok(restored)
}

/// Why restoring `item` from archive `archive_id` would clash, if it would.
fn restore_conflict(conn: &Conn, scope: &Scope, item: &ArchivedItem, archive_id: &str) -> Result<()> {
    let row = db::query(format!("SELECT * FROM {} WHERE id = ?1", table_of(item.entity)))
        .bind(&item.id)
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
    match item.entity {
        EntityKind::Page => {
            let p = Page::from_row(&row)?;
            clash(
                conn,
                "SELECT 1 FROM pages WHERE site_id = ?1 AND env = ?2 AND slug = ?3 AND archive_id IS NULL",
                &[&scope.site_id, &scope.env, &p.slug],
                || format!("slug \"{}\" is now used by another page; rename that page first", p.slug),
            )?;
            if let Some(parent) = &p.parent_id {
                parent_live(conn, "pages", parent, archive_id, "parent page")?;
            }
        }
        EntityKind::Section => {
            let s = PageSection::from_row(&row)?;
            parent_live(conn, "pages", &s.page_id, archive_id, "page")?;
            if crate::records::template_by_key(conn, scope, &s.template_key)?.is_none() {
                return Err(StoreError::conflict(
                    None,
                    format!(
                        "a section uses template {}, which is archived; restore the template first",
                        s.template_key
                    ),
                ));
            }
        }
        EntityKind::SectionTemplate => {
            let t = SectionTemplate::from_row(&row)?;
            clash(
                conn,
                "SELECT 1 FROM section_templates WHERE site_id = ?1 AND env = ?2 AND key = ?3 AND archive_id IS NULL",
                &[&scope.site_id, &scope.env, &t.key],
                || format!("template key \"{}\" is now used by another template", t.key),
            )?;
        }
        EntityKind::Collection => {
            let c = Collection::from_row(&row)?;
            clash(
                conn,
                "SELECT 1 FROM collections WHERE site_id = ?1 AND env = ?2 AND slug = ?3 AND archive_id IS NULL",
                &[&scope.site_id, &scope.env, &c.slug],
                || format!("collection slug \"{}\" is now used by another collection", c.slug),
            )?;
        }
        EntityKind::Entry => {
            let e = Entry::from_row(&row)?;
            clash(
                conn,
                "SELECT 1 FROM entries WHERE collection_id = ?1 AND slug = ?2 AND archive_id IS NULL",
                &[&e.collection_id, &e.slug],
                || format!("slug \"{}\" is now used by another entry of the collection", e.slug),
            )?;
            parent_live(conn, "collections", &e.collection_id, archive_id, "collection")?;
        }
        EntityKind::Navigation => {
            let n = Navigation::from_row(&row)?;
            clash(
                conn,
                "SELECT 1 FROM navigations WHERE site_id = ?1 AND env = ?2 AND key = ?3 AND archive_id IS NULL",
                &[&scope.site_id, &scope.env, &n.key],
                || format!("navigation key \"{}\" is now used by another navigation", n.key),
            )?;
        }
        EntityKind::NavItem => {
            let n = NavItem::from_row(&row)?;
            parent_live(conn, "navigations", &n.navigation_id, archive_id, "navigation")?;
            match &n.parent_id {
                Some(parent) => parent_live(conn, "nav_items", parent, archive_id, "parent item")?,
                None => crate::records::top_level_room(conn, &n.navigation_id, &n.id)?,
            }
        }
        EntityKind::Image | EntityKind::Agent | EntityKind::Note => {}
    }
    Ok(())
}

fn clash(conn: &Conn, sql: &'static str, args: &[&str], message: impl FnOnce() -> String) -> Result<()> {
    let mut q = db::query_scalar::<i64>(sql);
    for a in args {
        q = q.bind(*a);
    }
    if q.fetch_optional(conn)?.is_some() {
        return Err(StoreError::conflict(Some("slug"), message()));
    }
    Ok(())
}

/// The parent must be live, or be restored by this same archive.
fn parent_live(conn: &Conn, table: &'static str, id: &str, archive_id: &str, what: &str) -> Result<()> {
    let sql = format!("SELECT archive_id FROM {table} WHERE id = ?1");
    let state: Option<Option<String>> = db::query_scalar(sql).bind(id).fetch_optional(conn)?;
    match state {
        Some(None) => Ok(()),
        Some(Some(a)) if a == archive_id => Ok(()),
        Some(Some(other)) => Err(StoreError::conflict(
            None,
            format!("its {what} {id} is archived (archive {other}); restore that first"),
        )),
        None => Err(StoreError::conflict(None, format!("its {what} {id} no longer exists"))),
    }
}
