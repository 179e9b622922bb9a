//! The published copy of each document, kept beside the working copy in a
//! table of the same columns ([decision 0046]): a page with its sections,
//! an entry, a navigation with its items. The public site reads only the
//! published copies.
//!
//! A document is published whole: its published rows are replaced by its
//! live working rows in the transaction of the write that changed it, when
//! its working copy says it is published (a live navigation always is), and
//! taken away otherwise. Every write of a record reaches it through
//! [`super::create`], [`super::write_version`], archive and restore.
//!
//! [decision 0046]: ../../../../docs/decisions/0046-drafts-and-releases.md

use super::{Columns, Entity, entity_of, text_of, value_of, with_record};
use crate::db::{self, Conn};
use crate::{Result, Scope};
use quire_core::model::EntityKind;

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
    /// while it is live and its working row meets `when` (always, if none).
    Own {
        /// The condition on the working row, in SQL.
        when: Option<&'static str>,
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

/// The column names of records of `kind`.
fn columns_of(kind: EntityKind) -> &'static [&'static str] {
    with_record!(kind, |T| <T as super::Record>::COLUMNS, else &[])
}

/// The kinds whose records are parts of documents of `kind`, with the
/// column naming their document.
fn parts_of(kind: EntityKind) -> impl Iterator<Item = (&'static Entity, &'static Published, &'static str)> {
    EntityKind::ALL.iter().filter_map(|k| entity_of(*k)).filter_map(move |e| match &e.published {
        Some(p @ Published { document: Document::Of { column, kind: of }, .. }) if *of == kind => Some((e, p, *column)),
        _ => None,
    })
}

/// Republishes the documents a record of `entity` belongs to, given its
/// columns before and after a write (a part may move to another document).
pub(crate) fn republish_documents(conn: &Conn, scope: &Scope, entity: &Entity, columns: &[&Columns]) -> Result<()> {
    let Some(published) = &entity.published else { return Ok(()) };
    let mut done: Vec<(EntityKind, &str)> = Vec::new();
    for columns in columns {
        let document = match published.document {
            Document::Own { .. } => text_of(value_of(columns, "id")).map(|id| (entity.kind, id)),
            Document::Of { column, kind } => text_of(value_of(columns, column)).map(|id| (kind, id)),
        };
        if let Some(document) = document
            && !done.contains(&document)
        {
            republish(conn, scope, document.0, document.1)?;
            done.push(document);
        }
    }
    Ok(())
}

/// Republishes the documents of the records named (after an archive or a
/// restore changed them), each once.
pub(crate) fn republish_records<'a>(
    conn: &Conn,
    scope: &Scope,
    records: impl IntoIterator<Item = (EntityKind, &'a str)>,
) -> Result<()> {
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
            republish(conn, scope, document.0, &document.1)?;
            done.push(document);
        }
    }
    Ok(())
}

/// Brings the published copy of the document `id` of `kind` in line with
/// its working copy: its live rows, root and parts, when the root is live
/// and published; none otherwise.
fn republish(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<()> {
    let Some(root) = entity_of(kind) else { return Ok(()) };
    let Some(Published { table, document: Document::Own { when } }) = &root.published else { return Ok(()) };
    db::query(format!("DELETE FROM {table} WHERE id = ?1 AND site_id = ?2 AND env = ?3"))
        .bind(id)
        .bind_scope(scope)
        .execute(conn)?;
    for (_, part, column) in parts_of(kind) {
        db::query(format!("DELETE FROM {} WHERE {column} = ?1 AND site_id = ?2 AND env = ?3", part.table))
            .bind(id)
            .bind_scope(scope)
            .execute(conn)?;
    }
    let when = when.map(|w| format!(" AND {w}")).unwrap_or_default();
    let copied = db::query(copy(root, table, "id", &when)).bind(id).bind_scope(scope).execute(conn)?.rows_affected();
    if copied == 1 {
        for (entity, part, column) in parts_of(kind) {
            db::query(copy(entity, part.table, column, "")).bind(id).bind_scope(scope).execute(conn)?;
        }
    }
    Ok(())
}

/// The statement copying the live rows of `entity` whose `column` is `?1`
/// (in the scope `?2`, `?3`) and that meet `when` into `table`.
fn copy(entity: &Entity, table: &str, column: &str, when: &str) -> String {
    let columns = columns_of(entity.kind).join(", ");
    format!(
        "INSERT INTO {table} (site_id, env, {columns}) SELECT site_id, env, {columns} FROM {} \
         WHERE {column} = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL{when}",
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
    /// published documents: pages and entries whose status is published,
    /// every live navigation, and their live parts.
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
                records::<Page>(conn, scope, "published_pages", "")?,
            ),
            (
                records::<Section>(conn, scope, "page_sections", of_page)?,
                records::<Section>(conn, scope, "published_page_sections", "")?,
            ),
            (
                records::<Entry>(conn, scope, "entries", published_page)?,
                records::<Entry>(conn, scope, "published_entries", "")?,
            ),
            (
                records::<Navigation>(conn, scope, "navigations", live)?,
                records::<Navigation>(conn, scope, "published_navigations", "")?,
            ),
            (
                records::<NavItem>(conn, scope, "nav_items", of_navigation)?,
                records::<NavItem>(conn, scope, "published_nav_items", "")?,
            ),
        ];
        for (expected, copies) in pairs {
            assert_eq!(copies, expected, "the published copies and the published documents' live rows");
        }
        Ok(())
    }

    /// A small, seeded generator: the same walk on every run.
    struct Walk(u64);
    impl Walk {
        fn next(&mut self, below: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % below as u64) as usize
        }
    }

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
