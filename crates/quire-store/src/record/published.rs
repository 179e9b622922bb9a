//! The published copy of each document, kept beside the working copy in a
//! table of the same columns ([decision 0046]): a page with its sections,
//! an entry, a navigation with its items. The public site reads only the
//! published copies.
//!
//! A document is published whole: its published rows are replaced by its
//! live working rows, in the transaction of the write that publishes it.
//! Which writes publish is the caller's [`Publishing`]: with `Direct`, every
//! write republishes the documents it touches as their status says; with
//! `ByStatus`, a write that sets a page's or an entry's status to published
//! publishes it and one that sets it away takes it off the site; with
//! `Separately`, such a write is refused. Archiving a document marks its
//! published copy archived too, so it leaves the site at once, and
//! restoring it brings the copy back. Each publication is logged as a
//! `publish` or `unpublish` change: what was published before whole, what
//! is published now as patches over the revisions it was copied from
//! (`log::logged_publication`).
//!
//! [decision 0046]: ../../../../docs/decisions/0046-drafts-and-releases.md

use super::{Columns, Entity, Record, entity_of, insert, select_all, text_of, value_of, with_record};
use crate::db::{self, Conn};
use crate::log::logged_publication;
use crate::{Result, Scope, StoreError};
use quire_core::model::{ChangeAction, ChangeContext, EntityKind, Publishing};
use serde_json::{Value, json};

/// Where the published copies of a kind are kept.
#[derive(Debug)]
pub(crate) struct Published {
    /// Their table: the working table's columns, without foreign keys.
    pub table: &'static str,
    /// The document a record of the kind belongs to.
    pub document: Document,
}

/// The document a record belongs to, which is published and taken off the
/// site whole.
#[derive(Debug)]
pub(crate) enum Document {
    /// The record is a document (a page, an entry, a navigation), published
    /// while it is live and, if it has a `status`, while that says
    /// `published`.
    Own {
        /// The status it is given when it is taken off the site; none if it
        /// has no status.
        withdrawn: Option<&'static str>,
    },
    /// The record is a part of the document of `kind` whose id its `column`
    /// holds (a section of its page, an item of its navigation).
    Of {
        /// The column holding the document's id.
        column: &'static str,
        /// The document's kind.
        kind: EntityKind,
    },
}

/// The status a published page or entry has.
const PUBLISHED: &str = "published";

/// The column names of records of `kind`.
fn columns_of(kind: EntityKind) -> &'static [&'static str] {
    with_record!(kind, |T| <T as Record>::COLUMNS, else &[])
}

/// The published-copy table of a document's root kind, and the status it
/// is given when taken off the site (none: it has no status); none for a
/// kind that is no document.
pub(crate) fn root_of(kind: EntityKind) -> Option<(&'static Entity, &'static str, Option<&'static str>)> {
    let entity = entity_of(kind)?;
    match &entity.published {
        Some(Published { table, document: Document::Own { withdrawn } }) => Some((entity, table, *withdrawn)),
        _ => None,
    }
}

/// The kind whose records are parts of documents of `kind` (a page's
/// sections, a navigation's items), with its published-copy table and the
/// column naming their document; none for an entry.
pub(crate) fn part_of(kind: EntityKind) -> Option<(&'static Entity, &'static str, &'static str)> {
    EntityKind::ALL.iter().filter_map(|k| entity_of(*k)).find_map(|e| match &e.published {
        Some(Published { table, document: Document::Of { column, kind: of } }) if *of == kind => {
            Some((e, *table, *column))
        }
        _ => None,
    })
}

/// Whether `columns` say the record is published.
fn says_published(columns: &Columns) -> bool {
    text_of(value_of(columns, "status")) == Some(PUBLISHED)
}

/// On PostgreSQL, holds the lock of the document `id` of `kind` until the
/// transaction ends: a publish, an unpublish and every write of one of its
/// records take it, so a publish copies rows no other writer is changing
/// and checks an approval's versions against what it copies.
pub(crate) fn lock_document(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<()> {
    if !conn.is_postgres() {
        return Ok(());
    }
    db::query("SELECT pg_advisory_xact_lock(hashtextextended(?1, 0))")
        .bind(format!("document:{}:{}:{kind}:{id}", scope.site_id, scope.env))
        .execute(conn)?;
    Ok(())
}

/// What a write of a record of `entity` does to the public site, given its
/// columns before (none for a create) and after, in the write's
/// transaction (see the module's documentation).
pub(crate) fn after_write(
    conn: &Conn,
    ctx: &ChangeContext,
    scope: &Scope,
    entity: &Entity,
    before: Option<&Columns>,
    after: &Columns,
) -> Result<()> {
    let Some(published) = &entity.published else { return Ok(()) };
    let mut documents: Vec<(EntityKind, &str)> = Vec::new();
    for columns in before.into_iter().chain([after]) {
        let document = match published.document {
            Document::Own { .. } => text_of(value_of(columns, "id")).map(|id| (entity.kind, id)),
            Document::Of { column, kind } => text_of(value_of(columns, column)).map(|id| (kind, id)),
        };
        if let Some(document) = document
            && !documents.contains(&document)
        {
            lock_document(conn, scope, document.0, document.1)?;
            documents.push(document);
        }
    }
    if ctx.publishing == Publishing::Never {
        return Ok(());
    }
    if ctx.publishing == Publishing::Direct {
        for (kind, id) in documents {
            republish(conn, ctx, scope, kind, id)?;
        }
        return Ok(());
    }
    let Document::Own { withdrawn: Some(_) } = published.document else { return Ok(()) };
    let (was, is) = (before.is_some_and(says_published), says_published(after));
    if was == is {
        return Ok(());
    }
    if ctx.publishing == Publishing::Separately {
        let step = if is { "publishContent" } else { "unpublishContent" };
        return Err(StoreError::invalid(
            "status",
            format!("this caller publishes separately: leave status out to change the draft, then call {step}"),
        ));
    }
    let id = text_of(value_of(after, "id")).unwrap_or_default();
    if is {
        publish_document(conn, ctx, scope, entity.kind, id).map(drop)
    } else {
        unpublish_document(conn, ctx, scope, entity.kind, id).map(drop)
    }
}

/// Marks the published copies of the documents among `roots` (kind and
/// id, archived by `archive_id`) archived, parts and all: they leave the
/// site with their working copies.
pub(crate) fn archived<'a>(
    conn: &Conn,
    scope: &Scope,
    archive_id: &str,
    roots: impl IntoIterator<Item = (EntityKind, &'a str)>,
) -> Result<()> {
    for (kind, id) in roots {
        for (table, column) in published_tables(kind) {
            db::query(format!(
                "UPDATE {table} SET archive_id = ?1 WHERE {column} = ?2 AND site_id = ?3 AND env = ?4 AND archive_id IS NULL"
            ))
            .bind(archive_id)
            .bind(id)
            .bind_scope(scope)
            .execute(conn)?;
        }
    }
    Ok(())
}

/// Brings back the published copies archived by `archive_id`.
pub(crate) fn restored(conn: &Conn, scope: &Scope, archive_id: &str) -> Result<()> {
    for entity in EntityKind::ALL.iter().filter_map(|k| entity_of(*k)) {
        let Some(published) = &entity.published else { continue };
        db::query(format!(
            "UPDATE {} SET archive_id = NULL WHERE archive_id = ?1 AND site_id = ?2 AND env = ?3",
            published.table
        ))
        .bind(archive_id)
        .bind_scope(scope)
        .execute(conn)?;
    }
    Ok(())
}

/// With `Direct` publishing, republishes the documents of the records an
/// archive or a restore changed, each once.
pub(crate) fn republish_records<'a>(
    conn: &Conn,
    ctx: &ChangeContext,
    scope: &Scope,
    records: impl IntoIterator<Item = (EntityKind, &'a str)>,
) -> Result<()> {
    if ctx.publishing != Publishing::Direct {
        return Ok(());
    }
    let mut done: Vec<(EntityKind, String)> = Vec::new();
    for (kind, id) in records {
        let Some(Published { document, .. }) = entity_of(kind).and_then(|e| e.published.as_ref()) else { continue };
        let document = match document {
            Document::Own { .. } => (kind, id.to_string()),
            Document::Of { column, kind: of } => {
                let table = entity_of(kind).map_or("", |e| e.table);
                let sql = format!("SELECT {column} FROM {table} WHERE id = ?1 AND site_id = ?2 AND env = ?3");
                let Some(of_id) = db::query_scalar::<String>(sql).bind(id).bind_scope(scope).fetch_optional(conn)?
                else {
                    continue;
                };
                (*of, of_id)
            }
        };
        if !done.contains(&document) {
            republish(conn, ctx, scope, document.0, &document.1)?;
            done.push(document);
        }
    }
    Ok(())
}

/// Brings the published copy of the live document `id` of `kind` in line
/// with what its working copy says: published as it is now, or not at all.
/// An archived document keeps its archived copy for its restore.
fn republish(conn: &Conn, ctx: &ChangeContext, scope: &Scope, kind: EntityKind, id: &str) -> Result<()> {
    let Some((root, _, status)) = root_of(kind) else { return Ok(()) };
    let sql =
        format!("SELECT * FROM {} WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL", root.table);
    let Some(row) = db::query(sql).bind(id).bind_scope(scope).fetch_optional(conn)? else { return Ok(()) };
    let published = status.is_none() || row.try_get::<String, _>("status")? == PUBLISHED;
    if published {
        publish_document(conn, ctx, scope, kind, id).map(drop)
    } else if document(conn, scope, kind, id, Version::Published)?.is_some() {
        unpublish_document(conn, ctx, scope, kind, id).map(drop)
    } else {
        Ok(())
    }
}

/// Which version of the site's documents to read: what the public site
/// shows, or the drafts (a preview).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// The working copy: live rows of the working tables.
    Working,
    /// The published copy (live rows only).
    Published,
}

impl Version {
    /// The table holding records of `kind` in this version (a kind with no
    /// published copies has one table for both).
    pub(crate) fn table(self, kind: EntityKind) -> &'static str {
        let Some(entity) = entity_of(kind) else { return "" };
        match (self, &entity.published) {
            (Version::Published, Some(published)) => published.table,
            _ => entity.table,
        }
    }
}

/// A document as the change log and comparisons hold it: `{record, parts}`
/// with the parts in id order; none when it has no such copy.
pub(crate) fn document(
    conn: &Conn,
    scope: &Scope,
    kind: EntityKind,
    id: &str,
    version: Version,
) -> Result<Option<Value>> {
    let Some((root, table, _)) = root_of(kind) else { return Ok(None) };
    let table = if version == Version::Working { root.table } else { table };
    let Some(record) = rows_as_json(conn, scope, kind, table, "id", id)?.pop() else { return Ok(None) };
    let mut parts = Vec::new();
    if let Some((entity, published, column)) = part_of(kind) {
        let table = if version == Version::Working { entity.table } else { published };
        parts = rows_as_json(conn, scope, entity.kind, table, column, id)?;
    }
    Ok(Some(json!({ "record": record, "parts": parts })))
}

/// The live rows of `table` (holding records of `kind`) whose `column` is
/// `value`, as JSON records, by id.
fn rows_as_json(
    conn: &Conn,
    scope: &Scope,
    kind: EntityKind,
    table: &str,
    column: &str,
    value: &str,
) -> Result<Vec<Value>> {
    fn read<T: Record>(rows: &[db::Row]) -> Result<Vec<Value>> {
        rows.iter().map(|r| Ok(serde_json::to_value(T::from_row(r)?)?)).collect()
    }
    let all = entity_of(kind).map_or_else(|| "*".to_string(), |e| select_all(e, conn, table));
    let sql = format!(
        "SELECT {all} FROM {table} WHERE {column} = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL ORDER BY id"
    );
    let rows = db::query(sql).bind(value).bind_scope(scope).fetch_all(conn)?;
    with_record!(kind, |T| read::<T>(&rows), else Ok(Vec::new()))
}

/// Whether the live document `id` of `kind` is published, and whether its
/// published rows hold what its live working rows hold, column for column
/// (versions and change times aside), both told by the database in one
/// statement; `None` when the document is not live. Rows alike hold the
/// same content; rows that differ may still ([`same_content`] decides:
/// JSON text written with its keys in another order).
pub(crate) fn copies_alike(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<Option<(bool, bool)>> {
    // The statement of each kind, made once.
    static STATEMENTS: std::sync::LazyLock<Vec<(EntityKind, String)>> =
        std::sync::LazyLock::new(|| EntityKind::ALL.iter().filter_map(|k| Some((*k, copies_alike_sql(*k)?))).collect());
    let Some((_, sql)) = STATEMENTS.iter().find(|(k, _)| *k == kind) else { return Ok(None) };
    let sql = sql.as_str();
    let row = db::query_as::<(i64, i64)>(sql).bind(id).bind_scope(scope).fetch_optional(conn)?;
    Ok(row.map(|(published, alike)| (published > 0, alike > 0)))
}

/// The statement [`copies_alike`] runs for documents of `kind`; none for a
/// kind that is no document.
fn copies_alike_sql(kind: EntityKind) -> Option<String> {
    let (root, table, _) = root_of(kind)?;
    // `a` and `b` hold the same columns of `kind` but their id, version and
    // change time (their id is joined on).
    let alike = |kind: EntityKind, a: &str, b: &str| -> String {
        let mut on = format!("{a}.site_id = {b}.site_id AND {a}.env = {b}.env");
        for c in columns_of(kind).iter().filter(|c| !matches!(**c, "id" | "version" | "updated_at")) {
            on.push_str(&format!(" AND {a}.{c} IS NOT DISTINCT FROM {b}.{c}"));
        }
        // A column left to the change log is alike when both name one change.
        if let Some(c) = entity_of(kind).and_then(|e| e.kept_in_log) {
            on.push_str(&format!(" AND ({a}.{c} <> '' OR {a}.{c}_from IS NOT DISTINCT FROM {b}.{c}_from)"));
        }
        on
    };
    let mut same = format!(
        "SELECT COUNT(*) FROM {table} p WHERE p.id = w.id AND p.archive_id IS NULL AND {}",
        alike(root.kind, "p", "w")
    );
    if let Some((part, published, column)) = part_of(kind) {
        // Each live working part has a published twin alike, and each live
        // published part a live working one in the same document.
        let parts = part.table;
        same.push_str(&format!(
            " AND NOT EXISTS (SELECT 1 FROM {parts} x WHERE x.{column} = w.id AND x.site_id = w.site_id
               AND x.env = w.env AND x.archive_id IS NULL AND NOT EXISTS (SELECT 1 FROM {published} y
               WHERE y.id = x.id AND y.archive_id IS NULL AND {}))
             AND NOT EXISTS (SELECT 1 FROM {published} y WHERE y.{column} = w.id AND y.site_id = w.site_id
               AND y.env = w.env AND y.archive_id IS NULL AND NOT EXISTS (SELECT 1 FROM {parts} x
               WHERE x.id = y.id AND x.{column} = w.id AND x.site_id = y.site_id AND x.env = y.env
               AND x.archive_id IS NULL))",
            alike(part.kind, "y", "x")
        ));
    }
    Some(format!(
        "SELECT (SELECT COUNT(*) FROM {table} p WHERE p.id = w.id AND p.site_id = w.site_id AND p.env = w.env
           AND p.archive_id IS NULL), ({same})
         FROM {} w WHERE w.id = ?1 AND w.site_id = ?2 AND w.env = ?3 AND w.archive_id IS NULL",
        root.table
    ))
}

/// Whether two documents hold the same content: versions and change times
/// left aside, which move on with every write.
pub(crate) fn same_content(a: &Value, b: &Value) -> bool {
    fn bare(record: &Value) -> Value {
        let mut record = record.clone();
        if let Some(o) = record.as_object_mut() {
            o.remove("version");
            o.remove("updatedAt");
        }
        record
    }
    let parts = |d: &Value| d["parts"].as_array().map(|p| p.iter().map(bare).collect::<Vec<_>>()).unwrap_or_default();
    bare(&a["record"]) == bare(&b["record"]) && parts(a) == parts(b)
}

/// Replaces the published copy of the live document `id` of `kind` with
/// its live working rows, and logs a `publish` change when that changed
/// what is published; answers the change's id, if any.
pub(crate) fn publish_document(
    conn: &Conn,
    ctx: &ChangeContext,
    scope: &Scope,
    kind: EntityKind,
    id: &str,
) -> Result<Option<i64>> {
    let Some((root, table, _)) = root_of(kind) else { return Ok(None) };
    lock_document(conn, scope, kind, id)?;
    let before = document(conn, scope, kind, id, Version::Published)?;
    withdraw(conn, scope, kind, id)?;
    let copied = db::query(copy_rows(root, table, "id"))
        .bind(id)
        .bind_scope(scope)
        .execute(conn)
        .map_err(|e| if e.is_unique_violation() { taken_when_published(root, id) } else { e })?
        .rows_affected();
    if copied != 1 {
        return Err(StoreError::not_found(root.noun, id));
    }
    if let Some((entity, part, column)) = part_of(kind) {
        db::query(copy_rows(entity, part, column))
            .bind(id)
            .bind_scope(scope)
            .execute(conn)
            .map_err(|e| if e.is_unique_violation() { taken_when_published(root, id) } else { e })?;
    }
    let after = document(conn, scope, kind, id, Version::Published)?;
    if before == after {
        return Ok(None);
    }
    let parts = part_of(kind).map(|(e, _, _)| e.kind);
    logged_publication(conn, scope, ctx, kind, parts, id, ChangeAction::Publish, before, after).map(Some)
}

/// The conflict of a published copy whose key another record's published
/// copy holds (a race the checks before it could not see).
fn taken_when_published(root: &Entity, id: &str) -> StoreError {
    StoreError::conflict(
        None,
        format!("{} {id} cannot be published: another published {} holds its key", root.noun, root.noun),
    )
}

/// Takes the live document `id` of `kind` off the public site (its
/// published rows go; the change log keeps them) and logs an `unpublish`
/// change; answers its id, or none when it was not published.
pub(crate) fn unpublish_document(
    conn: &Conn,
    ctx: &ChangeContext,
    scope: &Scope,
    kind: EntityKind,
    id: &str,
) -> Result<Option<i64>> {
    lock_document(conn, scope, kind, id)?;
    let Some(before) = document(conn, scope, kind, id, Version::Published)? else { return Ok(None) };
    withdraw(conn, scope, kind, id)?;
    logged_publication(conn, scope, ctx, kind, None, id, ChangeAction::Unpublish, Some(before), None).map(Some)
}

/// The published-copy tables of documents of `kind`, each with the column
/// naming the document: the root's (`id`), then its parts'; none for a
/// kind that is no document.
fn published_tables(kind: EntityKind) -> impl Iterator<Item = (&'static str, &'static str)> {
    let root = root_of(kind).map(|(_, table, _)| (table, "id"));
    let part = root.and(part_of(kind)).map(|(_, table, column)| (table, column));
    root.into_iter().chain(part)
}

/// Deletes every published row of the document `id` of `kind`.
fn withdraw(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<()> {
    for (table, column) in published_tables(kind) {
        db::query(format!("DELETE FROM {table} WHERE {column} = ?1 AND site_id = ?2 AND env = ?3"))
            .bind(id)
            .bind_scope(scope)
            .execute(conn)?;
    }
    Ok(())
}

/// Puts `document` (as [`document`] reads it; none: nothing) back as the
/// published copy of the document `id` of `kind`, in place of what is
/// published now.
pub(crate) fn put_back(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str, document: Option<&Value>) -> Result<()> {
    fn one<T: Record>(conn: &Conn, scope: &Scope, table: &str, record: &Value) -> Result<()> {
        let record: T = serde_json::from_value(record.clone())?;
        insert(conn, scope, table, &record.columns())
    }
    lock_document(conn, scope, kind, id)?;
    withdraw(conn, scope, kind, id)?;
    let Some(document) = document else { return Ok(()) };
    let Some((_, table, _)) = root_of(kind) else { return Ok(()) };
    with_record!(kind, |T| one::<T>(conn, scope, table, &document["record"])?, else {});
    if let Some((entity, table, _)) = part_of(kind) {
        for part in document["parts"].as_array().into_iter().flatten() {
            with_record!(entity.kind, |T| one::<T>(conn, scope, table, part)?, else {});
        }
    }
    Ok(())
}

/// The statement copying the live rows of `entity` whose `column` is `?1`
/// (in the scope `?2`, `?3`) into `table`.
fn copy_rows(entity: &Entity, table: &str, column: &str) -> String {
    let mut columns = columns_of(entity.kind).join(", ");
    if let Some(kept) = entity.kept_in_log {
        columns.push_str(&format!(", {kept}_from"));
    }
    format!(
        "INSERT INTO {table} (site_id, env, {columns}) SELECT site_id, env, {columns} FROM {} \
         WHERE {column} = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL",
        entity.table
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Record, entity_of};
    use crate::{Store, StoreError};
    use quire_core::input::{EntryPatch, NavItemPatch, NewNavItem, NewSection, PagePatch, SectionPatch};
    use quire_core::model::{ChangeContext, EntryStatus, NavTargetType, PublishStatus};
    use serde_json::Value;

    /// The rows of `table` that meet `condition` (on alias `w`), as JSON
    /// records of `T`, by id.
    fn records<T: Record>(conn: &Conn, scope: &Scope, table: &str, condition: &str) -> Result<Vec<Value>> {
        let sql = format!("SELECT w.* FROM {table} w WHERE w.site_id = ?1 AND w.env = ?2{condition} ORDER BY w.id");
        let rows = db::query(sql).bind_scope(scope).fetch_all(conn)?;
        rows.iter().map(|r| Ok(serde_json::to_value(T::from_row(r)?)?)).collect()
    }

    /// Checks that the published copies are exactly the live rows of the
    /// published documents, as direct publishing keeps them: pages and
    /// entries whose status is published, every live navigation, and their
    /// live parts (archived documents keep archived copies for a restore).
    fn check_copies(conn: &Conn, scope: &Scope) -> Result<()> {
        type Page = quire_core::model::Page;
        type Section = quire_core::model::PageSection;
        type Entry = quire_core::model::Entry;
        type Navigation = quire_core::model::Navigation;
        type NavItem = quire_core::model::NavItem;
        let live = " AND w.archive_id IS NULL";
        let published_page = " AND w.archive_id IS NULL AND w.status = 'published'";
        let of_page = " AND w.archive_id IS NULL AND EXISTS (SELECT 1 FROM pages p WHERE p.id = w.page_id \
                       AND p.archive_id IS NULL AND p.status = 'published')";
        let of_navigation = " AND w.archive_id IS NULL AND EXISTS (SELECT 1 FROM navigations n \
                             WHERE n.id = w.navigation_id AND n.archive_id IS NULL)";
        let pairs = [
            (
                records::<Page>(conn, scope, "pages", published_page)?,
                records::<Page>(conn, scope, "published_pages", live)?,
            ),
            (
                records::<Section>(conn, scope, "page_sections", of_page)?,
                records::<Section>(conn, scope, "published_page_sections", live)?,
            ),
            (
                records::<Entry>(conn, scope, "entries", published_page)?,
                records::<Entry>(conn, scope, "published_entries", live)?,
            ),
            (
                records::<Navigation>(conn, scope, "navigations", live)?,
                records::<Navigation>(conn, scope, "published_navigations", live)?,
            ),
            (
                records::<NavItem>(conn, scope, "nav_items", of_navigation)?,
                records::<NavItem>(conn, scope, "published_nav_items", live)?,
            ),
        ];
        for (expected, copies) in pairs {
            assert_eq!(copies, expected, "the published copies and the published documents' live rows");
        }
        Ok(())
    }

    use crate::testing::Walk;

    async fn ids(store: &Store, scope: &Scope, table: &'static str) -> Vec<String> {
        let scope = scope.clone();
        store
            .db
            .read(move |c| {
                db::query_scalar(format!(
                    "SELECT id FROM {table} WHERE site_id = ?1 AND env = ?2 AND archive_id IS NULL ORDER BY id"
                ))
                .bind_scope(&scope)
                .fetch_all(c)
            })
            .await
            .unwrap()
    }

    /// Draft edits of pages, sections, entries, navigations and items (some
    /// putting back a value the document had), publications, archives and
    /// moves: after each, what the database tells of each document's two
    /// copies ([`copies_alike`]) is what comparing them as documents tells.
    #[tokio::test]
    async fn the_database_tells_alike_copies_as_the_documents_do() {
        use crate::PublishAction;
        use quire_core::model::Publishing;
        let dir = tempfile::tempdir().unwrap();
        let (store, scope) = crate::testing::demo(dir.path()).await.unwrap();
        let ctx = ChangeContext { publishing: Publishing::ByStatus, ..ChangeContext::system() };
        let mut walk = Walk(0x2545_f491_4f6c_dd1d);
        let (mut alike, mut differ) = (0, 0);
        for step in 0..120 {
            let pick = |walk: &mut Walk, ids: &[String]| ids.get(walk.next(ids.len().max(1))).cloned();
            let pages = ids(&store, &scope, "pages").await;
            let sections = ids(&store, &scope, "page_sections").await;
            let entries = ids(&store, &scope, "entries").await;
            let items = ids(&store, &scope, "nav_items").await;
            let navigations = ids(&store, &scope, "navigations").await;
            let two = ["First", "Second"];
            let outcome: std::result::Result<(), StoreError> = match walk.next(8) {
                0 => match pick(&mut walk, &pages) {
                    Some(id) => {
                        let patch = PagePatch { name: Some(two[walk.next(2)].into()), ..Default::default() };
                        store.update_page(&ctx, &scope, &id, patch).await.map(drop)
                    }
                    None => Ok(()),
                },
                1 => match pick(&mut walk, &sections) {
                    Some(id) => {
                        let patch = SectionPatch { hidden: Some(walk.next(2) == 0), ..Default::default() };
                        store.update_section(&ctx, &scope, &id, patch).await.map(drop)
                    }
                    None => Ok(()),
                },
                2 => match pick(&mut walk, &entries) {
                    Some(id) => {
                        let patch = EntryPatch { title: Some(two[walk.next(2)].into()), ..Default::default() };
                        store.update_entry(&ctx, &scope, &id, patch).await.map(drop)
                    }
                    None => Ok(()),
                },
                3 => match pick(&mut walk, &items) {
                    Some(id) => {
                        let patch = NavItemPatch { label: Some(two[walk.next(2)].into()), ..Default::default() };
                        store.update_nav_item(&ctx, &scope, &id, patch).await.map(drop)
                    }
                    None => Ok(()),
                },
                4 => match pick(&mut walk, &sections) {
                    Some(id) => store.archive(&ctx, &scope, EntityKind::Section, &[id]).await.map(drop),
                    None => Ok(()),
                },
                5 => match pick(&mut walk, &sections) {
                    Some(id) => store.shift_section(&ctx, &scope, &id, [-1, 1][walk.next(2)]).await,
                    None => Ok(()),
                },
                _ => {
                    let (kind, list) = match walk.next(3) {
                        0 => (EntityKind::Page, &pages),
                        1 => (EntityKind::Entry, &entries),
                        _ => (EntityKind::Navigation, &navigations),
                    };
                    match pick(&mut walk, list) {
                        Some(id) => {
                            let ids = [id];
                            store.publishing(&ctx, &scope, PublishAction::Publish, kind, &ids, None).await.map(drop)
                        }
                        None => Ok(()),
                    }
                }
            };
            match outcome {
                Ok(()) | Err(StoreError::Conflict { .. } | StoreError::Validation(_)) => {}
                Err(e) => panic!("step {step} failed: {e}"),
            }
            for (kind, list) in
                [(EntityKind::Page, pages), (EntityKind::Entry, entries), (EntityKind::Navigation, navigations)]
            {
                for id in list {
                    let scope = scope.clone();
                    let (told, working, published) = store
                        .db
                        .read(move |c| {
                            Ok((
                                copies_alike(c, &scope, kind, &id)?,
                                document(c, &scope, kind, &id, Version::Working)?,
                                document(c, &scope, kind, &id, Version::Published)?,
                            ))
                        })
                        .await
                        .unwrap();
                    let expected = working.as_ref().map(|w| {
                        let same = published.as_ref().is_some_and(|p| same_content(w, p));
                        (published.is_some(), same)
                    });
                    let told = told.map(|(published, same)| (published, published && same));
                    assert_eq!(told, expected, "step {step}: {kind} (published, alike)");
                    match told {
                        Some((true, true)) => alike += 1,
                        Some((true, false)) => differ += 1,
                        _ => {}
                    }
                }
            }
        }
        assert!(alike > 100 && differ > 100, "both answers seen often: {alike} alike, {differ} differing");
    }

    /// Random edits, status changes, archives and restores of pages,
    /// sections, entries, navigations and items: after each, the published
    /// copies are what the working copies say is published.
    #[tokio::test]
    async fn published_copies_follow_every_write() {
        let dir = tempfile::tempdir().unwrap();
        let (store, scope) = crate::testing::demo(dir.path()).await.unwrap();
        let ctx = ChangeContext::system();
        let statuses = [PublishStatus::Draft, PublishStatus::Published, PublishStatus::Unpublished];
        let mut walk = Walk(0x9e37_79b9_7f4a_7c15);
        let mut archives: Vec<String> = Vec::new();
        let (mut written, mut refused) = (0, 0);
        for step in 0..150 {
            let pick = |walk: &mut Walk, ids: &[String]| ids.get(walk.next(ids.len().max(1))).cloned();
            let pages = ids(&store, &scope, "pages").await;
            let sections = ids(&store, &scope, "page_sections").await;
            let entries = ids(&store, &scope, "entries").await;
            let items = ids(&store, &scope, "nav_items").await;
            let navigations = ids(&store, &scope, "navigations").await;
            let outcome: std::result::Result<(), StoreError> = match walk.next(9) {
                0 => match pick(&mut walk, &pages) {
                    Some(id) => {
                        let patch = PagePatch { status: Some(statuses[walk.next(3)]), ..Default::default() };
                        store.update_page(&ctx, &scope, &id, patch).await.map(drop)
                    }
                    None => Ok(()),
                },
                1 => match pick(&mut walk, &sections) {
                    Some(id) => {
                        let patch = SectionPatch {
                            status: Some(statuses[walk.next(3)]),
                            hidden: Some(walk.next(4) == 0),
                            ..Default::default()
                        };
                        store.update_section(&ctx, &scope, &id, patch).await.map(drop)
                    }
                    None => Ok(()),
                },
                2 => match (pick(&mut walk, &pages), pick(&mut walk, &sections)) {
                    (Some(page), Some(like)) => {
                        let like = store.section(&scope, &like).await.unwrap();
                        let input = NewSection {
                            template_key: like.template_key,
                            content: Some(like.content),
                            sort_order: None,
                            status: Some(statuses[walk.next(3)]),
                            hidden: None,
                        };
                        store.create_section(&ctx, &scope, &page, input).await.map(drop)
                    }
                    _ => Ok(()),
                },
                3 => match pick(&mut walk, &entries) {
                    Some(id) => {
                        let status = [EntryStatus::Draft, EntryStatus::Published][walk.next(2)];
                        let patch = EntryPatch {
                            status: Some(status),
                            title: Some(format!("Step {step}")),
                            ..Default::default()
                        };
                        store.update_entry(&ctx, &scope, &id, patch).await.map(drop)
                    }
                    None => Ok(()),
                },
                4 => match pick(&mut walk, &items) {
                    Some(id) => {
                        let patch = NavItemPatch { label: Some(format!("Item {step}")), ..Default::default() };
                        store.update_nav_item(&ctx, &scope, &id, patch).await.map(drop)
                    }
                    None => Ok(()),
                },
                5 => match pick(&mut walk, &navigations) {
                    Some(nav) => {
                        let input = NewNavItem {
                            label: format!("Link {step}"),
                            target_type: NavTargetType::Url,
                            target_id: None,
                            url: Some(format!("https://example.com/{step}")),
                            parent_id: None,
                            sort_order: None,
                            visible: None,
                        };
                        store.create_nav_item(&ctx, &scope, &nav, input).await.map(drop)
                    }
                    None => Ok(()),
                },
                6 => {
                    let (kind, list) = match walk.next(4) {
                        0 => (EntityKind::Page, &pages),
                        1 => (EntityKind::Section, &sections),
                        2 => (EntityKind::Entry, &entries),
                        _ => (EntityKind::NavItem, &items),
                    };
                    match pick(&mut walk, list) {
                        Some(id) => store.archive(&ctx, &scope, kind, &[id]).await.map(|made| {
                            archives.extend(made.into_iter().map(|a| a.id));
                        }),
                        None => Ok(()),
                    }
                }
                7 if !archives.is_empty() => {
                    let id = archives.remove(walk.next(archives.len()));
                    store.restore(&ctx, &scope, &[id]).await.map(drop)
                }
                _ => match pick(&mut walk, &sections) {
                    Some(id) => store.shift_section(&ctx, &scope, &id, [-1, 1][walk.next(2)]).await,
                    None => Ok(()),
                },
            };
            match outcome {
                Ok(()) => written += 1,
                // A refusal (a protected page, a key taken, a parent archived) changes nothing.
                Err(StoreError::Conflict { .. } | StoreError::Validation(_)) => refused += 1,
                Err(e) => panic!("step {step} failed: {e}"),
            }
            let scope = scope.clone();
            store.db.read(move |c| check_copies(c, &scope)).await.unwrap();
        }
        assert!(written > 100, "most steps wrote something: {written} written, {refused} refused");
        assert!(entity_of(EntityKind::Page).is_some_and(|e| e.published.is_some()));
    }
}
