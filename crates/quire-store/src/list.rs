//! Keyset-paginated lists. A cursor is an opaque token naming the last row a
//! page returned; the next page starts after it, so pages stay stable while
//! rows are added.

use crate::db::{QueryBuilder, Row, read_row};
use crate::record::{Record, Unique, Version};
use crate::{Result, Scope, Store, StoreError};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use quire_core::model::*;

/// One page of a list.
#[derive(Debug, Clone)]
pub struct Listing<T> {
    /// The records.
    pub items: Vec<T>,
    /// Cursor of the next page, if there is one.
    pub next_cursor: Option<String>,
}

/// Filters for the page list.
#[derive(Debug, Clone, Default)]
pub struct PageFilter {
    /// Only the page with this slug.
    pub slug: Option<String>,
    /// Only children of this page.
    pub parent_id: Option<String>,
    /// Only root pages.
    pub root_only: bool,
    /// Only pages with this status.
    pub status: Option<PublishStatus>,
    /// Only pages with no translation into this locale.
    pub missing_locale: Option<String>,
}

/// Filters for entry lists.
#[derive(Debug, Clone, Default)]
pub struct EntryFilter {
    /// Only the entry with this slug (its own, in the default locale).
    pub slug: Option<String>,
    /// Only entries with this status.
    pub status: Option<EntryStatus>,
    /// Only entries in this category.
    pub category: Option<String>,
    /// Only entries with this tag.
    pub tag: Option<String>,
    /// Only entries with no translation into this locale.
    pub missing_locale: Option<String>,
}

/// Filters for the change log.
#[derive(Debug, Clone, Default)]
pub struct ChangeFilter {
    /// Only changes to this kind.
    pub entity: Option<EntityKind>,
    /// Only changes to this record.
    pub entity_id: Option<String>,
    /// Only changes by this actor.
    pub actor: Option<String>,
    /// Only changes of this agent session.
    pub session_id: Option<String>,
    /// Only changes of this agent turn.
    pub turn_id: Option<String>,
    /// Only changes made through this surface.
    pub surface: Option<quire_core::model::Surface>,
}

/// Turns `limit + 1` fetched items into a page: the extra item, if any,
/// only says that there is a next page, whose cursor names the last kept item.
pub(crate) fn page_of<T>(mut items: Vec<T>, limit: u32, next: impl Fn(&T) -> String) -> Listing<T> {
    let next_cursor = if items.len() > limit as usize {
        items.truncate(limit as usize);
        items.last().map(next)
    } else {
        None
    };
    Listing { items, next_cursor }
}

fn bad_cursor() -> StoreError {
    StoreError::invalid("cursor", "is not a cursor this list returned")
}

fn encode(text: String) -> String {
    URL_SAFE_NO_PAD.encode(text)
}

fn decode(cursor: &str) -> Result<String> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| bad_cursor())?;
    String::from_utf8(bytes).map_err(|_| bad_cursor())
}

/// Cursor of a list ordered by (sortOrder, id).
pub(crate) fn encode_ordered(sort: i64, id: &str) -> String {
    encode(format!("o:{sort}:{id}"))
}

/// Decodes a (sortOrder, id) cursor.
pub(crate) fn decode_ordered(cursor: &str) -> Result<(i64, String)> {
    let text = decode(cursor)?;
    let mut parts = text.splitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some("o"), Some(sort), Some(id)) => Ok((sort.parse().map_err(|_| bad_cursor())?, id.to_string())),
        _ => Err(bad_cursor()),
    }
}

/// Cursor of a list ordered by a text key (id, slug).
pub(crate) fn encode_key(key: &str) -> String {
    encode(format!("k:{key}"))
}

/// Decodes a text-key cursor.
pub(crate) fn decode_key(cursor: &str) -> Result<String> {
    decode(cursor)?.strip_prefix("k:").map(str::to_string).ok_or_else(bad_cursor)
}

/// Cursor of a list ordered by a sequence number.
pub(crate) fn encode_seq(seq: i64) -> String {
    encode(format!("s:{seq}"))
}

/// Decodes a sequence cursor.
pub(crate) fn decode_seq(cursor: &str) -> Result<i64> {
    decode(cursor)?.strip_prefix("s:").and_then(|s| s.parse().ok()).ok_or_else(bad_cursor)
}

fn scoped(table: &str, scope: &Scope) -> QueryBuilder {
    let mut q = QueryBuilder::new(format!("SELECT * FROM {table} WHERE archive_id IS NULL AND site_id = "));
    q.push_bind(scope.site_id.clone()).push(" AND env = ").push_bind(scope.env.clone());
    q
}

fn push_ordered_after(q: &mut QueryBuilder, cursor: Option<&str>) -> Result<()> {
    if let Some(c) = cursor {
        let (sort, id) = decode_ordered(c)?;
        q.push(" AND (sort_order, id) > (").push_bind(sort).push(", ").push_bind(id).push(")");
    }
    Ok(())
}

/// The conditions of an entry list in `table` beyond its scope and
/// collection: `filter`'s, and after `cursor` (the list is newest first).
pub(crate) fn push_entry_filter(
    q: &mut QueryBuilder,
    table: &str,
    filter: &EntryFilter,
    cursor: Option<&str>,
) -> Result<()> {
    if let Some(slug) = &filter.slug {
        q.push(" AND slug = ").push_bind(slug.clone());
    }
    if let Some(status) = filter.status {
        q.push(" AND status = ").push_bind(status.as_str());
    }
    if let Some(category) = &filter.category {
        q.push(" AND category = ").push_bind(category.clone());
    }
    if let Some(tag) = &filter.tag {
        q.push(format!(" AND EXISTS (SELECT 1 FROM json_each({table}.tags) WHERE value = "))
            .push_bind(tag.clone())
            .push(")");
    }
    if let Some(locale) = &filter.missing_locale {
        push_missing(q, table, locale);
    }
    if let Some(c) = cursor {
        q.push(" AND id < ").push_bind(decode_key(c)?);
    }
    Ok(())
}

/// Keeps the records of `table` with no live translation into `locale`.
fn push_missing(q: &mut QueryBuilder, table: &str, locale: &str) {
    q.push(format!(
        " AND NOT EXISTS (SELECT 1 FROM translations t WHERE t.record_id = {table}.id AND t.site_id = {table}.site_id \
         AND t.env = {table}.env AND t.archive_id IS NULL AND t.locale = "
    ))
    .push_bind(locale.to_string())
    .push(")");
}

/// An entry as listed over HTTP: its JSON columns passed through unparsed.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntryView {
    /// Identifier.
    pub id: String,
    /// The collection it belongs to.
    pub collection_id: String,
    /// URL slug.
    pub slug: String,
    /// Title.
    pub title: String,
    /// Content, as stored.
    #[schema(value_type = Object)]
    pub content: Box<serde_json::value::RawValue>,
    /// draft, published or archived.
    pub status: EntryStatus,
    /// Author's name.
    pub author: Option<String>,
    /// Category.
    pub category: Option<String>,
    /// Tags, as stored.
    #[schema(value_type = Vec<String>)]
    pub tags: Box<serde_json::value::RawValue>,
    /// Short summary.
    pub excerpt: Option<String>,
    /// Featured image URL.
    pub featured_image: Option<String>,
    /// When it was first published.
    pub published_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Increases with every change.
    pub version: i64,
    /// When it was created.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When it last changed.
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

impl EntryView {
    pub(crate) fn from_row(row: &Row) -> Result<Self> {
        let raw = |col: &str| -> Result<Box<serde_json::value::RawValue>> {
            let text: String = row.try_get(col)?;
            Ok(serde_json::value::RawValue::from_string(text)?)
        };
        Ok(read_row!(row => EntryView {
            id, collection_id, slug, title, author, category, excerpt, featured_image, published_at, version,
            created_at, updated_at;
            content: raw("content")?,
            status: crate::record::wire_col(row, "status")?,
            tags: raw("tags")?,
        }))
    }
}

impl Store {
    async fn fetch_page<T: Record>(
        &self,
        q: QueryBuilder,
        limit: u32,
        next: impl Fn(&T) -> String,
    ) -> Result<Listing<T>> {
        self.fetch_rows(q, limit, T::from_row, next).await
    }

    /// One page of what `q` selects, each row read by `read`.
    async fn fetch_rows<T: Send + 'static>(
        &self,
        mut q: QueryBuilder,
        limit: u32,
        read: fn(&Row) -> Result<T>,
        next: impl Fn(&T) -> String,
    ) -> Result<Listing<T>> {
        q.push(" LIMIT ").push_bind(limit as i64 + 1);
        let items = self.db.read(move |c| q.build().fetch_all(c)?.iter().map(read).collect::<Result<Vec<_>>>()).await?;
        Ok(page_of(items, limit, next))
    }

    /// One page of the entries of a collection (id or slug) in `table` (the
    /// working copies or the published ones), newest first, each row read
    /// by `read`; an unknown collection is not found. The collection is
    /// resolved inside the query, so a page is one round trip.
    #[allow(clippy::too_many_arguments)]
    async fn entry_page<T: Send + 'static>(
        &self,
        table: &str,
        scope: &Scope,
        collection: &str,
        filter: &EntryFilter,
        limit: u32,
        cursor: Option<&str>,
        read: fn(&Row) -> Result<T>,
        id: fn(&T) -> &str,
    ) -> Result<Listing<T>> {
        let mut q = scoped(table, scope);
        q.push(" AND collection_id = (SELECT id FROM collections WHERE archive_id IS NULL AND site_id = ")
            .push_bind(scope.site_id.clone())
            .push(" AND env = ")
            .push_bind(scope.env.clone())
            .push(" AND (slug = ")
            .push_bind(collection.to_string())
            .push(" OR id = ")
            .push_bind(collection.to_string())
            .push(") LIMIT 1)");
        push_entry_filter(&mut q, table, filter, cursor)?;
        q.push(" ORDER BY id DESC");
        let listing = self.fetch_rows(q, limit, read, |e| encode_key(id(e))).await?;
        if listing.items.is_empty() {
            self.collection(scope, collection).await?;
        }
        Ok(listing)
    }

    /// Pages, ordered by sortOrder then id.
    pub async fn pages(
        &self,
        scope: &Scope,
        filter: &PageFilter,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Listing<Page>> {
        let mut q = scoped("pages", scope);
        if let Some(slug) = &filter.slug {
            q.push(" AND slug = ").push_bind(slug.clone());
        }
        if let Some(parent) = &filter.parent_id {
            q.push(" AND parent_id = ").push_bind(parent.clone());
        } else if filter.root_only {
            q.push(" AND parent_id IS NULL");
        }
        if let Some(status) = filter.status {
            q.push(" AND status = ").push_bind(status.as_str());
        }
        if let Some(locale) = &filter.missing_locale {
            push_missing(&mut q, "pages", locale);
        }
        push_ordered_after(&mut q, cursor)?;
        q.push(" ORDER BY sort_order, id");
        self.fetch_page(q, limit, |p: &Page| encode_ordered(p.sort_order, &p.id)).await
    }

    /// Sections of a page, in page order.
    pub async fn sections(
        &self,
        scope: &Scope,
        page_id: &str,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Listing<PageSection>> {
        self.page(scope, page_id).await?;
        let mut q = scoped("page_sections", scope);
        q.push(" AND page_id = ").push_bind(page_id.to_string());
        push_ordered_after(&mut q, cursor)?;
        q.push(" ORDER BY sort_order, id");
        self.fetch_page(q, limit, |s: &PageSection| encode_ordered(s.sort_order, &s.id)).await
    }

    /// The live records of a kind keyed scope-wide (templates, collections,
    /// navigations), in the order of that key, which is also their label.
    async fn by_key<T: Record>(&self, scope: &Scope, limit: u32, cursor: Option<&str>) -> Result<Listing<T>> {
        let Some(Unique { column, within: None }) = T::ENTITY.unique else {
            return Err(StoreError::Corrupt(format!("{} has no key of its own", T::ENTITY.noun)));
        };
        let mut q = scoped(T::TABLE, scope);
        if let Some(c) = cursor {
            q.push(format!(" AND {column} > ")).push_bind(decode_key(c)?);
        }
        q.push(format!(" ORDER BY {column}"));
        self.fetch_page(q, limit, |t: &T| encode_key(&t.label())).await
    }

    /// Section templates, by key.
    pub async fn templates(&self, scope: &Scope, limit: u32, cursor: Option<&str>) -> Result<Listing<SectionTemplate>> {
        self.by_key(scope, limit, cursor).await
    }

    /// Collections, by slug.
    pub async fn collections(&self, scope: &Scope, limit: u32, cursor: Option<&str>) -> Result<Listing<Collection>> {
        self.by_key(scope, limit, cursor).await
    }

    /// Entries of a collection (id or slug), newest first.
    pub async fn entries(
        &self,
        scope: &Scope,
        collection: &str,
        filter: &EntryFilter,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Listing<Entry>> {
        self.entry_page("entries", scope, collection, filter, limit, cursor, Entry::from_row, |e| &e.id).await
    }

    /// Like [`Store::entries`], with content and tags passed through as the
    /// stored JSON text instead of parsed and re-encoded: the same response
    /// for the REST and delivery lists, at less cost.
    pub async fn entry_views(
        &self,
        scope: &Scope,
        collection: &str,
        filter: &EntryFilter,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Listing<EntryView>> {
        self.entry_page("entries", scope, collection, filter, limit, cursor, EntryView::from_row, |e| &e.id).await
    }

    /// Like [`Store::entry_views`], of `version`: the published copies,
    /// what the public site shows, or the drafts for a preview.
    pub async fn delivered_entry_views(
        &self,
        scope: &Scope,
        collection: &str,
        filter: &EntryFilter,
        limit: u32,
        cursor: Option<&str>,
        version: Version,
    ) -> Result<Listing<EntryView>> {
        let table = version.table(EntityKind::Entry);
        self.entry_page(table, scope, collection, filter, limit, cursor, EntryView::from_row, |e| &e.id).await
    }

    /// Images, newest first.
    pub async fn images(
        &self,
        scope: &Scope,
        status: Option<ImageStatus>,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Listing<Image>> {
        let mut q = scoped("images", scope);
        if let Some(status) = status {
            q.push(" AND status = ").push_bind(status.as_str());
        }
        if let Some(c) = cursor {
            q.push(" AND id < ").push_bind(decode_key(c)?);
        }
        q.push(" ORDER BY id DESC");
        self.fetch_page(q, limit, |i: &Image| encode_key(&i.id)).await
    }

    /// Navigations, by key.
    pub async fn navigations(&self, scope: &Scope, limit: u32, cursor: Option<&str>) -> Result<Listing<Navigation>> {
        self.by_key(scope, limit, cursor).await
    }

    /// Items of a navigation (id or key), ordered by sortOrder then id;
    /// `parent_id` narrows to the children of one item.
    pub async fn nav_items(
        &self,
        scope: &Scope,
        navigation: &str,
        parent_id: Option<&str>,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Listing<NavItem>> {
        let nav = self.navigation(scope, navigation).await?;
        let mut q = scoped("nav_items", scope);
        q.push(" AND navigation_id = ").push_bind(nav.id);
        if let Some(parent) = parent_id {
            q.push(" AND parent_id = ").push_bind(parent.to_string());
        }
        push_ordered_after(&mut q, cursor)?;
        q.push(" ORDER BY sort_order, id");
        self.fetch_page(q, limit, |n: &NavItem| encode_ordered(n.sort_order, &n.id)).await
    }
}

/// A LIKE pattern (with `ESCAPE '\'`) matching text that contains `word`,
/// case-folded, with LIKE's own wildcards taken literally: a search for
/// `%` finds a percent sign, not everything.
fn like_contains(word: &str) -> String {
    let mut pattern = String::with_capacity(word.len() + 2);
    pattern.push('%');
    for c in word.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

impl Store {
    /// Images whose file name, alt text, description, tags or categories
    /// hold any word of `query` (stemmed: "mountains" finds "mountain"),
    /// best first by BM25 (alt text and tags weigh most).
    pub async fn search_images(&self, scope: &Scope, query: &str, limit: u32) -> Result<Vec<Image>> {
        let limit = limit as i64;
        let query = if self.db.is_postgres() {
            let Some(words) = ts_query(query) else { return Ok(Vec::new()) };
            crate::db::query(
                "SELECT i.* FROM images_fts f JOIN images i ON i.rowid = f.rowid, to_tsquery('quire', ?1) q
                 WHERE f.words @@ q AND i.site_id = ?2 AND i.env = ?3 AND i.archive_id IS NULL
                 ORDER BY ts_rank(f.words, q) DESC, i.id DESC LIMIT ?4",
            )
            .bind(words)
        } else {
            let Some(fts) = fts_query(query) else { return Ok(Vec::new()) };
            crate::db::query(
                // CROSS JOIN keeps the full-text match as the outer loop: the
                // other order would run the match once per image of the scope.
                "SELECT i.* FROM images_fts f CROSS JOIN images i ON i.rowid = f.rowid
                 WHERE images_fts MATCH ?1 AND i.site_id = ?2 AND i.env = ?3 AND i.archive_id IS NULL
                 ORDER BY bm25(images_fts, 4.0, 10.0, 3.0, 8.0, 4.0), i.id DESC LIMIT ?4",
            )
            .bind(fts)
        };
        let query = query.bind_scope(scope).bind(limit);
        self.db.read(move |c| query.fetch_all(c)?.iter().map(Image::from_row).collect()).await
    }

    /// Nav items whose label contains `label` (case-insensitive), optionally
    /// within one navigation (id or key).
    pub async fn search_nav_items(
        &self,
        scope: &Scope,
        navigation: Option<&str>,
        label: &str,
        limit: u32,
    ) -> Result<Vec<NavItem>> {
        let mut q = scoped("nav_items", scope);
        if let Some(nav) = navigation {
            let nav = self.navigation(scope, nav).await?;
            q.push(" AND navigation_id = ").push_bind(nav.id);
        }
        q.push(" AND lower(label) LIKE ").push_bind(like_contains(label)).push(" ESCAPE '\\'");
        q.push(" ORDER BY sort_order, id LIMIT ").push_bind(limit as i64);
        self.db.read(move |c| q.build().fetch_all(c)?.iter().map(NavItem::from_row).collect()).await
    }

    /// Images with this content hash (deduplication).
    pub async fn image_by_hash(&self, scope: &Scope, hash: &str) -> Result<Option<Image>> {
        let mut q = scoped("images", scope);
        q.push(" AND content_hash = ").push_bind(hash.to_string()).push(" LIMIT 1");
        self.db.read(move |c| q.build().fetch_optional(c)?.as_ref().map(Image::from_row).transpose()).await
    }
}

/// English words too common to say what a picture shows.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it", "of", "on", "or", "over",
    "the", "to", "under", "with",
];

/// An FTS5 query matching any of the words of `query` (letters and digits
/// only, at most 16, common words left out unless nothing else is left),
/// each quoted so nothing in it acts as query syntax.
pub(crate) fn fts_query(query: &str) -> Option<String> {
    let words = search_words(query)?;
    Some(words.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(" OR "))
}

/// The same words as [`fts_query`] as a PostgreSQL text query
/// (`to_tsquery`): any of them, stemmed.
pub(crate) fn ts_query(query: &str) -> Option<String> {
    Some(search_words(query)?.join(" | "))
}

/// The words of `query` a search looks for: letters and digits only, at
/// most 16, common words left out unless nothing else is left.
pub(crate) fn search_words(query: &str) -> Option<Vec<String>> {
    let words: Vec<String> =
        query.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).take(16).map(str::to_lowercase).collect();
    let telling: Vec<String> = words.iter().filter(|w| !STOP_WORDS.contains(&w.as_str())).cloned().collect();
    let chosen = if telling.is_empty() { words } else { telling };
    (!chosen.is_empty()).then_some(chosen)
}

#[cfg(test)]
mod fts_tests {
    #[test]
    fn queries_are_words_only() {
        assert_eq!(super::fts_query("Sunset over the mountains!").unwrap(), "\"sunset\" OR \"mountains\"");
        assert_eq!(super::fts_query("the").unwrap(), "\"the\"");
        assert_eq!(super::fts_query("x\" OR b* NEAR(c)").unwrap(), "\"x\" OR \"b\" OR \"near\" OR \"c\"");
        assert!(super::fts_query("%_\\ -").is_none());
        assert_eq!(super::ts_query("Sunset over the mountains!").unwrap(), "sunset | mountains");
    }
}
