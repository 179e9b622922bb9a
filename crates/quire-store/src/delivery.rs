//! Reads for the public delivery API: the published copies (see
//! `record/published.rs`), or the drafts for a preview, each answer from
//! one snapshot, shaped for a front end to render.

use crate::db::{self, Conn};
use crate::record::{Record, Version, found};
use crate::{Result, Scope, Store, StoreError};
use quire_core::model::*;
use serde::Serialize;
use serde_json::{Map, Value};
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
    let sections = sections_of(conn, scope, &page.id, version)?;
    let path = match &page.parent_id {
        None if page.slug == "home" => "/".to_string(),
        None => format!("/{}", page.slug),
        Some(_) => page_path(conn, scope, &page.id, version, &[], &mut HashMap::new())?
            .ok_or_else(|| StoreError::not_found("page", slug))?,
    };
    Ok(DeliveredPage { page, path, sections, locale: None, locale_of: Default::default() })
}

/// The visible, published sections of page `id` of `version`, in order.
pub(crate) fn sections_of(conn: &Conn, scope: &Scope, id: &str, version: Version) -> Result<Vec<PageSection>> {
    let rows = db::query(format!(
        "SELECT * FROM {} WHERE page_id = ?1 AND site_id = ?2 AND env = ?3
         AND archive_id IS NULL AND status = 'published' AND hidden = 0 ORDER BY sort_order, id",
        version.table(EntityKind::Section)
    ))
    .bind(id)
    .bind_scope(scope)
    .fetch_all(conn)?;
    rows.iter().map(PageSection::from_row).collect()
}

/// The navigation `key` and its visible items, nested, with hrefs
/// resolved (see [`Store::delivery_navigation`]).
pub(crate) fn navigation_items(
    conn: &Conn,
    scope: &Scope,
    key: &str,
    version: Version,
) -> Result<(Navigation, Vec<DeliveredNavItem>)> {
    navigation_items_in(conn, scope, key, version, &[])
}

/// The navigation `key` and its visible items, nested, with hrefs
/// resolved, in the locales of `chain` (the asked one first, the default
/// last; none: as they are): each label from the first locale of the
/// chain that has one, each page's link by its and its ancestors' slugs in
/// the same way, read with the menu's and the pages' own rows (the
/// translations of the menu in its statement, a page's slugs in its).
pub(crate) fn navigation_items_in(
    conn: &Conn,
    scope: &Scope,
    key: &str,
    version: Version,
    chain: &[String],
) -> Result<(Navigation, Vec<DeliveredNavItem>)> {
    let translated = &chain[..chain.len().saturating_sub(1)];
    let table = version.table(EntityKind::Navigation);
    let mut sql = "SELECT *".to_string();
    for (n, _) in translated.iter().enumerate() {
        sql.push_str(&format!(
            ", (SELECT {} FROM {} t WHERE t.site_id = {table}.site_id AND t.env = {table}.env
             AND t.record_id = {table}.id AND t.archive_id IS NULL AND t.locale = ?{}) AS translation_{n}",
            crate::record::from_log(conn, "t", "fields"),
            version.table(EntityKind::Translation),
            n + 4
        ));
    }
    sql.push_str(&format!(
        " FROM {table} WHERE site_id = ?1 AND env = ?2 AND (id = ?3 OR key = ?3)
         AND archive_id IS NULL ORDER BY id = ?3 DESC LIMIT 1"
    ));
    let mut q = db::query(sql).bind_scope(scope).bind(key);
    for locale in translated {
        q = q.bind(locale.as_str());
    }
    let row = q.fetch_optional(conn)?;
    let mut labels: Vec<(&str, Map<String, Value>)> = Vec::new();
    if let Some(row) = &row {
        for (n, locale) in translated.iter().enumerate() {
            let fields: Option<String> = row.try_get(format!("translation_{n}").as_str())?;
            if let Some(Value::Object(mut fields)) = fields.map(|f| serde_json::from_str(&f)).transpose()?
                && let Some(Value::Object(items)) = fields.remove("items")
            {
                labels.push((locale.as_str(), items));
            }
        }
    }
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
            && let Some(path) = page_path(conn, scope, target, version, translated, &mut known)?
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
    let mut tree = build(None, &items, &resolve, 0);
    if let Some(default) = chain.last() {
        label_items(&mut tree, &labels, default);
    }
    Ok((nav, tree))
}

/// Gives each of `items` (and their children) its label from the first
/// of `labels` (by locale, in the chain's order) that has one, else its
/// own (`default`'s), and says which.
fn label_items(items: &mut [DeliveredNavItem], labels: &[(&str, Map<String, Value>)], default: &str) {
    for item in items {
        let found = labels
            .iter()
            .find_map(|(locale, items)| items.get(&item.id)?.get("label")?.as_str().map(|label| (*locale, label)));
        let locale = match found {
            Some((locale, label)) => {
                item.label = label.to_string();
                locale
            }
            None => default,
        };
        item.label_locale = Some(locale.to_string());
        label_items(&mut item.children, labels, default);
    }
}

/// Pages read while making paths: id → (its slug, its slug in the locales
/// asked for, its parent), or none when it is not live.
pub(crate) type KnownPages = HashMap<String, Option<(String, String, Option<String>)>>;

/// The path of a page of `version` from its ancestors' slugs (`home` is
/// `/`), each in the first of the `translated` locales that has one (none:
/// its own); `None` when the page or an ancestor is not live in it
/// (published, for the published version). `known` memoizes pages across
/// calls: id → (its slug, its slug in those locales, parent).
pub(crate) fn page_path(
    conn: &Conn,
    scope: &Scope,
    page_id: &str,
    version: Version,
    translated: &[String],
    known: &mut KnownPages,
) -> Result<Option<String>> {
    let Some(segments) = page_segments(conn, scope, page_id, version, translated, known)? else { return Ok(None) };
    let home = segments.first().is_some_and(|(own, _)| own == "home");
    Ok(Some(path_of(home, segments.iter().map(|(_, slug)| slug.as_str()))))
}

/// The slugs of page `page_id` and its ancestors, the root's first: each
/// its own and the one of the first of the `translated` locales that has
/// one (else its own), read with the page's row; `None` when the page or
/// an ancestor is not live in `version` (see [`page_path`]).
pub(crate) fn page_segments(
    conn: &Conn,
    scope: &Scope,
    page_id: &str,
    version: Version,
    translated: &[String],
    known: &mut KnownPages,
) -> Result<Option<Vec<(String, String)>>> {
    let mut segments = Vec::new();
    let mut cursor = Some(page_id.to_string());
    while let Some(id) = cursor {
        if segments.len() > 64 {
            return Ok(None);
        }
        if !known.contains_key(&id) {
            let pages = version.table(EntityKind::Page);
            let row = if translated.is_empty() {
                db::query_as::<(String, Option<String>)>(format!(
                    "SELECT slug, parent_id FROM {pages} WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL"
                ))
                .bind(&id)
                .bind_scope(scope)
                .fetch_optional(conn)?
                .map(|(slug, parent)| (slug.clone(), slug, parent))
            } else {
                let mut sql = "SELECT slug, parent_id".to_string();
                for n in 0..translated.len() {
                    sql.push_str(&format!(
                        ", (SELECT t.slug FROM {} t WHERE t.record_id = ?1 AND t.site_id = ?2 AND t.env = ?3
                         AND t.archive_id IS NULL AND t.locale = ?{}) AS slug_{n}",
                        version.table(EntityKind::Translation),
                        n + 4
                    ));
                }
                sql.push_str(&format!(
                    " FROM {pages} WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL"
                ));
                let mut q = db::query(sql).bind(&id).bind_scope(scope);
                for locale in translated {
                    q = q.bind(locale.as_str());
                }
                match q.fetch_optional(conn)? {
                    None => None,
                    Some(row) => {
                        let own: String = row.try_get("slug")?;
                        let mut slug = None;
                        for n in 0..translated.len() {
                            slug = row.try_get::<Option<String>, _>(format!("slug_{n}").as_str())?;
                            if slug.is_some() {
                                break;
                            }
                        }
                        Some((own.clone(), slug.unwrap_or(own), row.try_get("parent_id")?))
                    }
                }
            };
            known.insert(id.clone(), row);
        }
        let Some(Some((own, slug, parent))) = known.get(&id) else { return Ok(None) };
        segments.push((own.clone(), slug.clone()));
        cursor = parent.clone();
    }
    segments.reverse();
    Ok(Some(segments))
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
