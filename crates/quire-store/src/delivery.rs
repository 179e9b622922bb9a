//! Reads for the public delivery API: the published copies (see
//! `record/published.rs`), or the drafts for a preview, each answer from
//! one snapshot, shaped for a front end to render.

use crate::db::{self, Conn};
use crate::record::{Record, Version, found};
use crate::{Result, Scope, Store, StoreError};
use quire_core::model::*;
use serde::Serialize;
use std::collections::HashMap;

/// A published page with its visible, published sections in order.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveredPage {
    /// The page.
    #[serde(flatten)]
    pub page: Page,
    /// Path of the page from the root (`/about/team`).
    pub path: String,
    /// Its sections, in order.
    pub sections: Vec<PageSection>,
    /// The locale asked for, when one other than the default was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// For a locale asked for: the locale each localised value came from
    /// (`name`, `slug`, `meta`, `sections.<id>.<field>`), the asked one or
    /// a fallback.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub locale_of: std::collections::BTreeMap<String, String>,
}

/// An entry of a delivered list, in a locale asked for: its translation's
/// values laid over its own along the fallbacks.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveredEntry {
    /// The entry, with the localised values of the locale asked for.
    #[serde(flatten)]
    pub entry: crate::EntryView,
    /// The locale asked for, when one other than the default was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// For a locale asked for: the locale each localised value came from
    /// (`title`, `slug`, `excerpt`, `content.<field>`), the asked one or a
    /// fallback.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub locale_of: std::collections::BTreeMap<String, String>,
}

/// A visible navigation item with its resolved href and visible children.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveredNavItem {
    /// Item id.
    pub id: String,
    /// Text shown.
    pub label: String,
    /// What it points at.
    pub target_type: NavTargetType,
    /// Resolved link; `null` for a placeholder.
    pub href: Option<String>,
    /// Nested items.
    #[schema(no_recursion)]
    pub children: Vec<DeliveredNavItem>,
    /// For a locale asked for: the locale its label came from (the asked
    /// one or a fallback).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_locale: Option<String>,
}

impl Store {
    /// A published page by slug with its visible, published sections,
    /// read in one snapshot: never a page from before a write with
    /// sections from after it.
    pub async fn delivery_page(&self, scope: &Scope, slug: &str) -> Result<DeliveredPage> {
        self.delivered_page(scope, slug, Version::Published).await
    }

    /// A page by slug with its visible sections, in `version`: as
    /// published, or as its draft would be published now (a preview).
    pub async fn delivered_page(&self, scope: &Scope, slug: &str, version: Version) -> Result<DeliveredPage> {
        let (scope, slug) = (scope.clone(), slug.to_string());
        self.db.read_short(move |c| c.transaction(false, |c| page_of(c, &scope, &slug, version))).await
    }

    /// The published entry `slug` of the collection with id `collection`.
    pub async fn delivery_entry(&self, scope: &Scope, collection: &str, slug: &str) -> Result<Entry> {
        let (scope, collection, slug) = (scope.clone(), collection.to_string(), slug.to_string());
        self.db
            .read_short(move |c| {
                let row = db::query(
                    "SELECT * FROM published_entries WHERE site_id = ?1 AND env = ?2 AND collection_id = ?3
                     AND slug = ?4 AND archive_id IS NULL",
                )
                .bind_scope(&scope)
                .bind(&collection)
                .bind(&slug)
                .fetch_optional(c)?;
                found(row, Entry::from_row, "entry", &slug)
            })
            .await
    }

    /// A navigation by id or key, with its visible items nested and hrefs
    /// resolved, read in one snapshot. Items whose target is unpublished
    /// or archived are left out.
    pub async fn delivery_navigation(&self, scope: &Scope, key: &str) -> Result<(Navigation, Vec<DeliveredNavItem>)> {
        self.delivered_navigation(scope, key, Version::Published).await
    }

    /// A navigation by id or key with its visible items, in `version` (see
    /// [`Store::delivery_navigation`]); in the working version, its items
    /// link to live pages and entries whatever their status.
    pub async fn delivered_navigation(
        &self,
        scope: &Scope,
        key: &str,
        version: Version,
    ) -> Result<(Navigation, Vec<DeliveredNavItem>)> {
        let (scope, key) = (scope.clone(), key.to_string());
        // A few indexed reads per item: short, with no hand-off.
        self.db.read_short(move |c| c.transaction(false, |c| navigation_items(c, &scope, &key, version))).await
    }
}

/// The page `slug` of `version` with its visible sections (see
/// [`Store::delivered_page`]).
pub(crate) fn page_of(conn: &Conn, scope: &Scope, slug: &str, version: Version) -> Result<DeliveredPage> {
    let pages = version.table(EntityKind::Page);
    let sql = format!("SELECT * FROM {pages} WHERE site_id = ?1 AND env = ?2 AND slug = ?3 AND archive_id IS NULL");
    let row = db::query(sql).bind_scope(scope).bind(slug).fetch_optional(conn)?;
    let page = found(row, Page::from_row, "page", slug)?;
    let rows = db::query(format!(
        "SELECT * FROM {} WHERE page_id = ?1 AND site_id = ?2 AND env = ?3
         AND archive_id IS NULL AND status = 'published' AND hidden = 0 ORDER BY sort_order, id",
        version.table(EntityKind::Section)
    ))
    .bind(&page.id)
    .bind_scope(scope)
    .fetch_all(conn)?;
    let sections = rows.iter().map(PageSection::from_row).collect::<Result<Vec<_>>>()?;
    let path = match &page.parent_id {
        None if page.slug == "home" => "/".to_string(),
        None => format!("/{}", page.slug),
        Some(_) => page_path(conn, scope, &page.id, version, &mut HashMap::new())?
            .ok_or_else(|| StoreError::not_found("page", slug))?,
    };
    Ok(DeliveredPage { page, path, sections, locale: None, locale_of: Default::default() })
}

/// The navigation `key` and its visible items, nested, with hrefs
/// resolved (see [`Store::delivery_navigation`]).
pub(crate) fn navigation_items(
    conn: &Conn,
    scope: &Scope,
    key: &str,
    version: Version,
) -> Result<(Navigation, Vec<DeliveredNavItem>)> {
    let row = db::query(format!(
        "SELECT * FROM {} WHERE site_id = ?1 AND env = ?2 AND (id = ?3 OR key = ?3)
         AND archive_id IS NULL ORDER BY id = ?3 DESC LIMIT 1",
        version.table(EntityKind::Navigation)
    ))
    .bind_scope(scope)
    .bind(key)
    .fetch_optional(conn)?;
    let nav = found(row, Navigation::from_row, "navigation", key)?;
    let rows = db::query(format!(
        "SELECT * FROM {} WHERE navigation_id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL
         AND visible = 1 ORDER BY sort_order, id",
        version.table(EntityKind::NavItem)
    ))
    .bind(&nav.id)
    .bind_scope(scope)
    .fetch_all(conn)?;
    let items = rows.iter().map(NavItem::from_row).collect::<Result<Vec<_>>>()?;
    let mut known = HashMap::new();
    let mut page_paths = HashMap::new();
    for item in items.iter().filter(|i| i.target_type == NavTargetType::Page) {
        if let Some(target) = &item.target_id
            && let Some(path) = page_path(conn, scope, target, version, &mut known)?
        {
            page_paths.insert(target.clone(), path);
        }
    }
    // Entries and images by the ids the items name: a few indexed
    // lookups, whatever the size of the site.
    let mut entry_paths = HashMap::new();
    let mut image_urls = HashMap::new();
    for item in &items {
        let Some(target) = &item.target_id else { continue };
        if entry_paths.contains_key(target) || image_urls.contains_key(target) {
            continue;
        }
        match item.target_type {
            NavTargetType::Entry => {
                if let Some((collection, slug)) = db::query_as::<(String, String)>(format!(
                    "SELECT c.slug, e.slug FROM {} e JOIN collections c
                     ON c.id = e.collection_id AND c.site_id = e.site_id AND c.env = e.env
                     WHERE e.id = ?1 AND e.site_id = ?2 AND e.env = ?3 AND e.archive_id IS NULL
                     AND c.archive_id IS NULL",
                    version.table(EntityKind::Entry)
                ))
                .bind(target)
                .bind_scope(scope)
                .fetch_optional(conn)?
                {
                    entry_paths.insert(target.clone(), format!("/{collection}/{slug}"));
                }
            }
            NavTargetType::Media => {
                if let Some((url,)) = db::query_as::<(String,)>(
                    "SELECT url FROM images WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL",
                )
                .bind(target)
                .bind_scope(scope)
                .fetch_optional(conn)?
                {
                    image_urls.insert(target.clone(), url);
                }
            }
            _ => {}
        }
    }
    let resolve = |item: &NavItem| -> Option<Option<String>> {
        let target = item.target_id.as_deref().unwrap_or_default();
        match item.target_type {
            NavTargetType::Page => page_paths.get(target).cloned().map(Some),
            NavTargetType::Entry => entry_paths.get(target).cloned().map(Some),
            NavTargetType::Media => image_urls.get(target).cloned().map(Some),
            NavTargetType::Url => Some(item.url.clone()),
            NavTargetType::Placeholder => Some(None),
        }
    };
    fn build(
        parent: Option<&str>,
        items: &[NavItem],
        resolve: &dyn Fn(&NavItem) -> Option<Option<String>>,
        depth: usize,
    ) -> Vec<DeliveredNavItem> {
        if depth > 16 {
            return Vec::new();
        }
        items
            .iter()
            .filter(|i| i.parent_id.as_deref() == parent)
            .filter_map(|i| {
                let href = resolve(i)?;
                Some(DeliveredNavItem {
                    id: i.id.clone(),
                    label: i.label.clone(),
                    target_type: i.target_type,
                    href,
                    children: build(Some(&i.id), items, resolve, depth + 1),
                    label_locale: None,
                })
            })
            .collect()
    }
    let tree = build(None, &items, &resolve, 0);
    Ok((nav, tree))
}

/// The path of a page of `version` from its ancestors' slugs (`home` is
/// `/`); `None` when the page or an ancestor is not live in it (published,
/// for the published version). `known` memoizes pages across calls: id →
/// (slug, parent).
fn page_path(
    conn: &Conn,
    scope: &Scope,
    page_id: &str,
    version: Version,
    known: &mut HashMap<String, Option<(String, Option<String>)>>,
) -> Result<Option<String>> {
    let mut segments = Vec::new();
    let mut cursor = Some(page_id.to_string());
    while let Some(id) = cursor {
        if segments.len() > 64 {
            return Ok(None);
        }
        if !known.contains_key(&id) {
            let row: Option<(String, Option<String>)> = db::query_as(format!(
                "SELECT slug, parent_id FROM {} WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL",
                version.table(EntityKind::Page)
            ))
            .bind(&id)
            .bind_scope(scope)
            .fetch_optional(conn)?;
            known.insert(id.clone(), row);
        }
        let Some(Some((slug, parent))) = known.get(&id) else { return Ok(None) };
        segments.push(slug.clone());
        cursor = parent.clone();
    }
    segments.reverse();
    let home = segments.first().is_some_and(|s| s == "home");
    Ok(Some(path_of(home, segments.iter().map(String::as_str))))
}

/// A page's path from its ancestors' slugs, the root's first: the home
/// page (slug `home` at the root, `home`) is `/`, and the pages under it
/// are addressed from the root (`/services`, not `/home/services`), as a
/// menu item linking them suggests. Slugs are unique in a site, so no two
/// pages share a path.
pub(crate) fn path_of<'a>(home: bool, slugs: impl IntoIterator<Item = &'a str>) -> String {
    let rest: Vec<&str> = slugs.into_iter().skip(usize::from(home)).collect();
    format!("/{}", rest.join("/"))
}
