//! Keyset-paginated lists. A cursor is an opaque token naming the last row a
//! page returned; the next page starts after it, so pages stay stable while
//! rows are added.

use crate::db::{Conn, QueryBuilder, Row, RowRef, parse_time, read_row};
use crate::record::{Record, Unique, Version, wire_text};
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
    scoped_columns("*", table, scope)
}

/// `columns` of the live rows of `table` in `scope`.
fn scoped_columns(columns: &str, table: &str, scope: &Scope) -> QueryBuilder {
    let mut q = QueryBuilder::new(format!("SELECT {columns} FROM {table} WHERE archive_id IS NULL AND site_id = "));
    q.push_bind(scope.site_id.clone()).push(" AND env = ").push_bind(scope.env.clone());
    q
}

/// `columns` of one page of the entries of a collection (id or slug) in
/// `table`, newest first, without its `LIMIT`. The collection is resolved
/// inside the query, so a page is one round trip.
fn entry_query(
    columns: &str,
    table: &str,
    scope: &Scope,
    collection: &str,
    filter: &EntryFilter,
    cursor: Option<&str>,
) -> Result<QueryBuilder> {
    let mut q = scoped_columns(columns, table, scope);
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
    Ok(q)
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

/// The columns [`entry_json`] writes, in the order of [`EntryView`]'s
/// fields.
const ENTRY_COLUMNS: &str = "id, collection_id, slug, title, content, status, author, category, tags, excerpt, \
     featured_image, published_at, version, created_at, updated_at";

/// One entry's JSON, byte for byte what [`EntryView`] serializes to, from
/// its row of [`ENTRY_COLUMNS`], its values borrowed from the statement:
/// no copy of a value, no parse of a time that is stored as it is sent.
/// `content` and `tags` are checked to be JSON and written as stored, as
/// [`EntryView`] passes them through; the rest is written by serde_json.
/// A test holds the two to the same bytes.
fn entry_json(row: &RowRef<'_>) -> Result<String> {
    // What the row holds, and the names, quotes and separators around it.
    let mut out = JsonText(String::with_capacity(row.text_len() + 256));
    out.push("{\"id\":");
    out.string(row.text(0)?)?;
    out.push(",\"collectionId\":");
    out.string(row.text(1)?)?;
    out.push(",\"slug\":");
    out.string(row.text(2)?)?;
    out.push(",\"title\":");
    out.string(row.text(3)?)?;
    out.push(",\"content\":");
    out.raw_json(row.text(4)?)?;
    out.push(",\"status\":");
    out.value(&wire_text::<EntryStatus>("status", row.text(5)?)?)?;
    out.push(",\"author\":");
    out.opt_string(row.opt_text(6)?)?;
    out.push(",\"category\":");
    out.opt_string(row.opt_text(7)?)?;
    out.push(",\"tags\":");
    out.raw_json(row.text(8)?)?;
    out.push(",\"excerpt\":");
    out.opt_string(row.opt_text(9)?)?;
    out.push(",\"featuredImage\":");
    out.opt_string(row.opt_text(10)?)?;
    out.push(",\"publishedAt\":");
    match row.opt_text(11)? {
        Some(time) => out.time(row.name(11), time)?,
        None => out.push("null"),
    }
    out.push(",\"version\":");
    out.value(&row.int(12)?)?;
    out.push(",\"createdAt\":");
    out.time(row.name(13), row.text(13)?)?;
    out.push(",\"updatedAt\":");
    out.time(row.name(14), row.text(14)?)?;
    out.push("}");
    Ok(out.0)
}

/// JSON being written into a `String`, serde_json writing what needs
/// escaping or formatting.
struct JsonText(String);

impl JsonText {
    fn push(&mut self, json: &str) {
        self.0.push_str(json);
    }

    /// A value as serde_json writes it.
    fn value<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        Ok(serde_json::to_writer(&mut *self, value)?)
    }

    /// A string, quoted and escaped as serde_json escapes.
    fn string(&mut self, text: &str) -> Result<()> {
        self.value(text)
    }

    /// A string, or `null`.
    fn opt_string(&mut self, text: Option<&str>) -> Result<()> {
        self.value(&text)
    }

    /// Stored JSON text, checked and written as it is, without the
    /// whitespace around it: what a `RawValue` made from it writes.
    fn raw_json(&mut self, text: &str) -> Result<()> {
        let raw: &serde_json::value::RawValue = serde_json::from_str(text)?;
        self.push(raw.get());
        Ok(())
    }

    /// A stored time (column `col`) as a `DateTime<Utc>` serializes: the
    /// text the store writes ([`crate::db`]'s `time_text`) with `Z` for its
    /// `+00:00`, else parsed and written by serde_json.
    fn time(&mut self, col: &str, text: &str) -> Result<()> {
        if let Some(utc) = stored_utc(text) {
            self.push("\"");
            self.push(utc);
            self.push("Z\"");
            return Ok(());
        }
        let time =
            parse_time(text).ok_or_else(|| StoreError::Corrupt(format!("column {col}: \"{text}\" is not a time")))?;
        self.value(&time)
    }
}

/// serde_json writes whole characters at a time (it splits a string only
/// around the ASCII it escapes), so each write is text of its own.
impl std::io::Write for JsonText {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.push_str(std::str::from_utf8(bytes).map_err(std::io::Error::other)?);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `text` without its `+00:00` when it is exactly what a `DateTime<Utc>`
/// serializes to but for that offset (`Z`): `YYYY-MM-DDTHH:MM:SS`, a real
/// date and time of the years 1 to 9999 (no leap second), then no fraction
/// or the fewest of 3, 6 or 9 digits that hold its nanoseconds (chrono's
/// `SecondsFormat::AutoSi`, as the store writes times too). Anything else
/// is `None`, to be parsed.
fn stored_utc(text: &str) -> Option<&str> {
    let utc = text.strip_suffix("+00:00")?;
    let bytes = utc.as_bytes();
    let (whole, fraction) = bytes.split_at_checked(19)?;
    let number = |at: usize, len: usize| {
        whole[at..at + len].iter().try_fold(0u32, |n, c| c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0')))
    };
    let marks = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if marks.iter().any(|&(at, mark)| whole[at] != mark) {
        return None;
    }
    let (year, month, day) = (number(0, 4)?, number(5, 2)?, number(8, 2)?);
    let (hour, minute, second) = (number(11, 2)?, number(14, 2)?, number(17, 2)?);
    let date = chrono::NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day);
    if year == 0 || date.is_none() || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    match fraction {
        [] => Some(utc),
        [b'.', digits @ ..]
            if matches!(digits.len(), 3 | 6 | 9)
                && digits.iter().all(u8::is_ascii_digit)
                && !digits.ends_with(b"000") =>
        {
            Some(utc)
        }
        _ => None,
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
    /// by `read`; an unknown collection is not found.
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
        let q = entry_query("*", table, scope, collection, filter, cursor)?;
        let listing = self.fetch_rows(q, limit, read, |e| encode_key(id(e))).await?;
        if listing.items.is_empty() {
            self.collection(scope, collection).await?;
        }
        Ok(listing)
    }

    /// [`Store::entry_page`] with each entry written as the JSON text
    /// [`EntryView`] serializes to, straight from its row ([`entry_json`]).
    ///
    /// A page whose filter an index answers (no category, tag or missing
    /// locale) reads at most `limit + 1` rows in the order of an index, so
    /// it runs as a short read, on the calling thread with no hand-off
    /// (`Db::read_short`); the others may pass over many rows and are
    /// handed to a reader as every list is.
    async fn entry_json_page(
        &self,
        table: &str,
        scope: &Scope,
        collection: &str,
        filter: &EntryFilter,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Listing<String>> {
        let mut q = entry_query(ENTRY_COLUMNS, table, scope, collection, filter, cursor)?;
        q.push(" LIMIT ").push_bind(limit as i64 + 1);
        let q = q.build();
        let read = move |c: &Conn| {
            let mut items = Vec::with_capacity(limit as usize);
            let (mut last, mut next_cursor) = (String::new(), None);
            q.each_ref(c, |row| {
                if items.len() == limit as usize {
                    next_cursor = Some(encode_key(&last));
                    return Ok(false);
                }
                items.push(entry_json(&row)?);
                last.clear();
                last.push_str(row.text(0)?);
                Ok(true)
            })?;
            Ok(Listing { items, next_cursor })
        };
        let indexed = filter.category.is_none() && filter.tag.is_none() && filter.missing_locale.is_none();
        let listing = if indexed { self.db.read_short(read).await? } else { self.db.read(read).await? };
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

    /// Like [`Store::entry_views`], each item the JSON text of one entry,
    /// exactly as [`EntryView`] serializes (a list over HTTP writes them
    /// as they are), written straight from its row: what the REST list
    /// answers, at a fraction of the cost.
    pub async fn entry_views_json(
        &self,
        scope: &Scope,
        collection: &str,
        filter: &EntryFilter,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Listing<String>> {
        self.entry_json_page("entries", scope, collection, filter, limit, cursor).await
    }

    /// Like [`Store::entry_views_json`], of `version`: the published
    /// copies, what the public site shows, or the drafts for a preview.
    pub async fn delivered_entry_views_json(
        &self,
        scope: &Scope,
        collection: &str,
        filter: &EntryFilter,
        limit: u32,
        cursor: Option<&str>,
        version: Version,
    ) -> Result<Listing<String>> {
        self.entry_json_page(version.table(EntityKind::Entry), scope, collection, filter, limit, cursor).await
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

#[cfg(test)]
mod json_tests {
    use super::{JsonText, stored_utc};
    use chrono::{DateTime, SecondsFormat, TimeZone, Utc};

    /// A stored time as [`JsonText::time`] writes it.
    fn written(text: &str) -> crate::Result<String> {
        let mut out = JsonText(String::new());
        out.time("at", text)?;
        Ok(out.0)
    }

    /// Times as the store writes them go through as they are, `Z` for
    /// `+00:00`, and come out as a `DateTime<Utc>` serializes: whole
    /// seconds, and nanoseconds that need 3, 6 or 9 digits.
    #[test]
    fn stored_times_are_written_as_a_datetime_serializes() {
        let base = Utc.with_ymd_and_hms(2026, 11, 28, 5, 8, 7).unwrap();
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut times: Vec<DateTime<Utc>> = Vec::new();
        for nanos in [0, 1, 999, 1_000, 120_000_000, 123_000_000, 123_456_000, 123_456_789, 999_999_999, 100] {
            times.push(base + chrono::Duration::nanoseconds(nanos));
        }
        for _ in 0..2_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Any second of years 1970 to 2100, with whole, milli, micro or nano precision.
            let secs = (seed % 4_102_444_800) as i64;
            let nanos = match seed % 4 {
                0 => 0,
                1 => (seed >> 20) % 1_000 * 1_000_000,
                2 => (seed >> 20) % 1_000_000 * 1_000,
                _ => (seed >> 20) % 1_000_000_000,
            } as u32;
            times.push(DateTime::from_timestamp(secs, nanos).unwrap());
        }
        times.push(Utc.with_ymd_and_hms(2024, 2, 29, 23, 59, 59).unwrap());
        times.push(Utc.with_ymd_and_hms(1, 1, 1, 0, 0, 0).unwrap());
        times.push(Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59).unwrap());
        for t in times {
            let stored = t.to_rfc3339_opts(SecondsFormat::AutoSi, false);
            assert!(stored_utc(&stored).is_some(), "{stored}");
            assert_eq!(written(&stored).unwrap(), serde_json::to_string(&t).unwrap(), "{stored}");
        }
    }

    /// Anything else is parsed as a stored time is read, and written as
    /// that time serializes; what is no time is an error.
    #[test]
    fn other_times_are_parsed() {
        for stored in [
            "2026-01-02 03:04:05",
            "2026-01-02 03:04:05.5",
            "2026-01-02 03:04:05+00:00",
            "2026-01-02T03:04:05.12+00:00",
            "2026-01-02T03:04:05.000+00:00",
            "2026-01-02T03:04:05.123456000+00:00",
            "2026-01-02T03:04:05.1+00:00",
            "2026-01-02T03:04:05+02:00",
            "2026-01-02T03:04:05Z",
            "2026-01-02t03:04:05+00:00",
            "2016-12-31T23:59:60+00:00",
        ] {
            assert!(stored_utc(stored).is_none(), "{stored}");
            let time = crate::db::parse_time(stored).unwrap();
            assert_eq!(written(stored).unwrap(), serde_json::to_string(&time).unwrap(), "{stored}");
        }
        for stored in
            ["2026-02-30T03:04:05+00:00", "2026-13-02T03:04:05+00:00", "yesterday", "", "2026-01-02T24:00:00+00:00"]
        {
            assert!(stored_utc(stored).is_none(), "{stored}");
            assert!(written(stored).is_err(), "{stored}");
        }
    }

    /// Stored JSON is written as it is, without the whitespace around it,
    /// and text that is not JSON is an error, as a `RawValue` has it.
    #[test]
    fn stored_json_is_checked_and_passed_through() {
        for stored in [r#"{"body":"a \"b\" \u00e9 é","n":[1,2.5e3,{"x":null}]}"#, " [\"a\", \"b\"] \n", "{}"] {
            let mut out = JsonText(String::new());
            out.raw_json(stored).unwrap();
            let raw = serde_json::value::RawValue::from_string(stored.to_string()).unwrap();
            assert_eq!(out.0, serde_json::to_string(&raw).unwrap());
        }
        for stored in ["{", "", "{\"a\":1} x", "[1,]"] {
            assert!(JsonText(String::new()).raw_json(stored).is_err(), "{stored}");
        }
    }
}
