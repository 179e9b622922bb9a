//! Search of pages (with their sections) and entries, described once for
//! both: [`Searched`] names each kind's full-text table, its BM25 weights
//! and the view that says what its text is (migration `content_search`);
//! the full-text ranking ([`Store::search_ids`]), the records read back in
//! rank order ([`Store::ranked_pages`], [`Store::ranked_entries`]) and the
//! documents the embedding sweep reads ([`Store::documents_to_embed`]) all
//! go through it. Images are searched the same way by `search_images`.
//!
//! Translations (decision 0050) are searched in their own language: on
//! SQLite their words are stemmed here by their locale's Snowball stemmer
//! ([`stem_words`]) and the stems indexed in `translations_fts`; on
//! PostgreSQL a trigger indexes them with the same language's Snowball
//! configuration (`search_language`). [`Store::search_ids_in`] searches a
//! reader's chain of locales, each in its language, then the records' own
//! text.

use crate::db::{self, QueryBuilder};
use crate::list::{fts_query, search_words, ts_query};
use crate::record::Record;
use crate::{EntryFilter, Result, Scope, Store};
use quire_core::model::{Entry, Page};

/// A kind of record searched by full text and by vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Searched {
    /// Pages, by name, slug, meta and their live sections' text.
    Page,
    /// Entries of any collection (posts too), by title, excerpt, content,
    /// tags and category.
    Entry,
}

/// What the search knows of a kind: its tables, its text and its weights.
struct Spec {
    /// The entity name its vectors are kept under.
    entity: &'static str,
    /// Its records' table.
    table: &'static str,
    /// Its full-text table.
    fts: &'static str,
    /// The columns of its full-text table, as its view names them.
    columns: &'static str,
    /// BM25 weights of those columns: names and titles weigh most, then
    /// tags and meta, then the body text.
    weights: &'static str,
    /// The view of its searchable text.
    view: &'static str,
    /// That text as one string.
    text: &'static str,
}

impl Searched {
    /// Every kind, in the order the embedding sweep visits them.
    pub const ALL: [Searched; 2] = [Searched::Page, Searched::Entry];

    fn spec(self) -> &'static Spec {
        match self {
            Searched::Page => &Spec {
                entity: "page",
                table: "pages",
                fts: "pages_fts",
                columns: "name, slug, meta, sections",
                weights: "10.0, 4.0, 5.0, 2.0",
                view: "page_search_text",
                text: "d.name || '. ' || d.slug || '. ' || d.meta || '. ' || d.sections",
            },
            Searched::Entry => &Spec {
                entity: "entry",
                table: "entries",
                fts: "entries_fts",
                columns: "title, excerpt, content, tags",
                weights: "10.0, 5.0, 2.0, 6.0",
                view: "entry_search_text",
                text: "d.title || '. ' || d.excerpt || '. ' || d.content || '. ' || d.tags",
            },
        }
    }

    /// The entity name its vectors are kept under.
    pub fn entity(self) -> &'static str {
        self.spec().entity
    }
}

/// Rebuilds the full-text rows of the documents whose text changed in this
/// transaction (the triggers note them in `search_pending`) and forgets
/// them. Runs once before each commit that may have changed content — the
/// writer's group commit, an import — so full-text search sees exactly what
/// is committed, and FTS5 writes one segment per transaction instead of
/// one per write.
pub(crate) fn index_pending(conn: &db::Conn) -> Result<()> {
    // Only the kinds with documents pending: a write changes one or two.
    let pending: Vec<String> = db::query_scalar("SELECT DISTINCT kind FROM search_pending").fetch_all(conn)?;
    if pending.is_empty() {
        return Ok(());
    }
    for kind in Searched::ALL.into_iter().filter(|k| pending.iter().any(|p| p == k.entity())) {
        let Spec { view, fts, columns, entity, .. } = kind.spec();
        let pending = format!("SELECT doc_rowid FROM search_pending WHERE kind = '{entity}'");
        db::query(format!("DELETE FROM {fts} WHERE rowid IN ({pending})")).execute(conn)?;
        // On PostgreSQL another process may index the same document at the
        // same moment: the row it wrote is written over, not a duplicate.
        let over = if conn.is_postgres() {
            let set: Vec<String> = columns.split(", ").map(|c| format!("{c} = excluded.{c}")).collect();
            format!(" ON CONFLICT (rowid) DO UPDATE SET {}", set.join(", "))
        } else {
            String::new()
        };
        db::query(format!(
            "INSERT INTO {fts} (rowid, {columns}) SELECT doc_rowid, {columns} FROM {view} WHERE doc_rowid IN ({pending}){over}"
        ))
        .execute(conn)?;
    }
    if !conn.is_postgres() && pending.iter().any(|p| p == "translation") {
        index_translations(conn)?;
    }
    db::query("DELETE FROM search_pending").execute(conn)?;
    Ok(())
}

/// The Snowball stemmer of a locale's language (its first subtag), if
/// rust-stemmers has one; PostgreSQL's `search_language` names the same
/// languages.
fn stemmer_of(locale: &str) -> Option<rust_stemmers::Stemmer> {
    use rust_stemmers::Algorithm::*;
    let language = locale.split('-').next().unwrap_or(locale).to_ascii_lowercase();
    let algorithm = match language.as_str() {
        "ar" => Arabic,
        "da" => Danish,
        "nl" => Dutch,
        "en" => English,
        "fi" => Finnish,
        "fr" => French,
        "de" => German,
        "el" => Greek,
        "hu" => Hungarian,
        "it" => Italian,
        "no" | "nb" | "nn" => Norwegian,
        "pt" => Portuguese,
        "ro" => Romanian,
        "ru" => Russian,
        "es" => Spanish,
        "sv" => Swedish,
        "ta" => Tamil,
        "tr" => Turkish,
        _ => return None,
    };
    Some(rust_stemmers::Stemmer::create(algorithm))
}

/// The words of `text` (split at every character that is not a letter or
/// a digit, lower-cased) stemmed by `stemmer`, or left whole without one.
pub(crate) fn stem_words(stemmer: Option<&rust_stemmers::Stemmer>, text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let word = w.to_lowercase();
            match stemmer {
                Some(s) => s.stem(&word).into_owned(),
                None => word,
            }
        })
        .collect()
}

/// Every string in `value`, in order, each followed by a space.
fn strings(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::String(s) => {
            out.push_str(s);
            out.push(' ');
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The text of a translation of a page or an entry, as the columns of
/// `translations_fts`: its name or title, slug, a page's meta or an
/// entry's excerpt, and its sections' or content's text.
fn translation_text(kind: &str, fields: &serde_json::Value) -> [String; 4] {
    let text = |key: &str| {
        let mut out = String::new();
        if let Some(v) = fields.get(key) {
            strings(v, &mut out);
        }
        out
    };
    let (title, summary, body) = match kind {
        "page" => (text("name"), text("meta"), text("sections")),
        _ => (text("title"), text("excerpt"), text("content")),
    };
    [title, text("slug"), summary, body]
}

/// SQLite: rebuilds the full-text rows of the translations noted in
/// `search_pending`, their words stemmed in their locale's language.
fn index_translations(conn: &db::Conn) -> Result<()> {
    let pending = "SELECT doc_rowid FROM search_pending WHERE kind = 'translation'";
    db::query(format!("DELETE FROM translations_fts WHERE rowid IN ({pending})")).execute(conn)?;
    let rows = db::query(format!(
        "SELECT rowid, record_kind, locale, {} AS fields FROM translations
         WHERE rowid IN ({pending}) AND record_kind IN ('page', 'entry')",
        crate::record::from_log(conn, "translations", "fields")
    ))
    .fetch_all(conn)?;
    for row in rows {
        let (rowid, kind, locale, fields): (i64, String, String, String) =
            (row.try_get("rowid")?, row.try_get("record_kind")?, row.try_get("locale")?, row.try_get("fields")?);
        let fields: serde_json::Value = serde_json::from_str(&fields).unwrap_or_default();
        let stemmer = stemmer_of(&locale);
        let [title, slug, summary, body] =
            translation_text(&kind, &fields).map(|t| stem_words(stemmer.as_ref(), &t).join(" "));
        db::query("INSERT INTO translations_fts (rowid, title, slug, summary, body) VALUES (?1, ?2, ?3, ?4, ?5)")
            .bind(rowid)
            .bind(title)
            .bind(slug)
            .bind(summary)
            .bind(body)
            .execute(conn)?;
    }
    Ok(())
}

/// A record's searchable text, for the embedding sweep.
#[derive(Debug, Clone)]
pub struct SearchDocument {
    /// Where the record lives.
    pub scope: Scope,
    /// The record's id.
    pub id: String,
    /// Its text (see the `*_search_text` views).
    pub text: String,
    /// The hash of the text its current vector was made of, if any.
    pub known_hash: Option<String>,
    /// The version of the text read: an entry's version; a page's version
    /// plus the count of changes to its sections' text (`text_version`),
    /// so a section's edit makes its page newer than its vector.
    pub version: i64,
}

/// Conditions only entries have: a collection (by id) and list filters.
#[derive(Debug, Clone, Default)]
pub struct SearchFilter {
    /// Only entries of this collection id.
    pub collection_id: Option<String>,
    /// Status, category and tag, as in lists.
    pub entries: EntryFilter,
}

fn push_filter(q: &mut QueryBuilder, alias: &str, kind: Searched, filter: &SearchFilter) {
    if kind != Searched::Entry {
        return;
    }
    if let Some(c) = &filter.collection_id {
        q.push(format!(" AND {alias}.collection_id = ")).push_bind(c.clone());
    }
    if let Some(s) = filter.entries.status {
        q.push(format!(" AND {alias}.status = ")).push_bind(s.as_str());
    }
    if let Some(c) = &filter.entries.category {
        q.push(format!(" AND {alias}.category = ")).push_bind(c.clone());
    }
    if let Some(t) = &filter.entries.tag {
        q.push(format!(" AND EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value = ")).push_bind(t.clone());
        q.push(")");
    }
}

impl Store {
    /// Ids of live `kind` records of `scope` holding any word of `query`
    /// (stemmed: "mountains" finds "mountain"), best first by BM25, at most
    /// `limit`; entries also narrowed by `filter`.
    pub async fn search_ids(
        &self,
        scope: &Scope,
        kind: Searched,
        query: &str,
        filter: &SearchFilter,
        limit: u32,
    ) -> Result<Vec<String>> {
        let Spec { table, fts: index, weights, .. } = kind.spec();
        let postgres = self.db.is_postgres();
        let mut q = if postgres {
            let Some(words) = ts_query(query) else { return Ok(Vec::new()) };
            let mut q = QueryBuilder::new(format!(
                "SELECT r.id FROM {index} f JOIN {table} r ON r.rowid = f.rowid, to_tsquery('quire', "
            ));
            q.push_bind(words).push(") q WHERE f.words @@ q");
            q
        } else {
            let Some(fts) = fts_query(query) else { return Ok(Vec::new()) };
            // CROSS JOIN keeps the full-text match as the outer loop.
            let mut q = QueryBuilder::new(format!(
                "SELECT r.id FROM {index} f CROSS JOIN {table} r ON r.rowid = f.rowid WHERE {index} MATCH "
            ));
            q.push_bind(fts);
            q
        };
        q.push(" AND r.site_id = ").push_bind(scope.site_id.clone());
        q.push(" AND r.env = ").push_bind(scope.env.clone());
        q.push(" AND r.archive_id IS NULL");
        push_filter(&mut q, "r", kind, filter);
        if postgres {
            q.push(" ORDER BY ts_rank(f.words, q) DESC, r.id DESC LIMIT ");
        } else {
            q.push(format!(" ORDER BY bm25({index}, {weights}), r.id DESC LIMIT "));
        }
        q.push_bind(limit as i64);
        let q = q.build_query_scalar::<String>();
        self.db.read(move |c| q.fetch_all(c)).await
    }

    /// Like [`Store::search_ids`], for a reader of the locales of `chain`
    /// (the asked one first, the default last; see
    /// `quire_core::locale::chain`): the records whose translation into
    /// each locale of the chain in turn holds a word of `query`, the query
    /// and the translations stemmed in that locale's language (German for
    /// `de`: "Haus" finds "Häuser"), then those whose own text (the
    /// default's) does; each record once, at most `limit`. A chain of the
    /// default alone, or none, searches the records' own text.
    pub async fn search_ids_in(
        &self,
        scope: &Scope,
        kind: Searched,
        query: &str,
        filter: &SearchFilter,
        limit: u32,
        chain: &[String],
    ) -> Result<Vec<String>> {
        let translated = &chain[..chain.len().saturating_sub(1)];
        let mut ids: Vec<String> = Vec::new();
        for locale in translated {
            let Some(q) = self.translated_query(scope, kind, query, filter, limit, locale) else { continue };
            let q = q.build_query_scalar::<String>();
            for id in self.db.read(move |c| q.fetch_all(c)).await? {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        for id in self.search_ids(scope, kind, query, filter, limit).await? {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        ids.truncate(limit as usize);
        Ok(ids)
    }

    /// The statement finding the live `kind` records of `scope` whose live
    /// translation into `locale` holds a word of `query`, best first.
    fn translated_query(
        &self,
        scope: &Scope,
        kind: Searched,
        query: &str,
        filter: &SearchFilter,
        limit: u32,
        locale: &str,
    ) -> Option<QueryBuilder> {
        let Spec { table, entity, .. } = kind.spec();
        let postgres = self.db.is_postgres();
        let mut q = if postgres {
            let words = ts_query(query)?;
            let mut q = QueryBuilder::new(format!(
                "SELECT r.id FROM translations_fts f JOIN translations t ON t.id = f.id
                 JOIN {table} r ON r.id = t.record_id, to_tsquery(search_language("
            ));
            q.push_bind(locale.to_string()).push("), ").push_bind(words).push(") q WHERE f.words @@ q");
            q
        } else {
            let stemmer = stemmer_of(locale);
            let mut stems: Vec<String> = Vec::new();
            for word in search_words(query)? {
                for stem in stem_words(stemmer.as_ref(), &word) {
                    if !stems.contains(&stem) {
                        stems.push(stem);
                    }
                }
            }
            let fts = stems.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(" OR ");
            // CROSS JOIN keeps the full-text match as the outer loop.
            let mut q = QueryBuilder::new(format!(
                "SELECT r.id FROM translations_fts f CROSS JOIN translations t ON t.rowid = f.rowid
                 CROSS JOIN {table} r ON r.id = t.record_id WHERE translations_fts MATCH "
            ));
            q.push_bind(fts);
            q
        };
        q.push(" AND t.site_id = ").push_bind(scope.site_id.clone());
        q.push(" AND t.env = ").push_bind(scope.env.clone());
        q.push(" AND t.locale = ").push_bind(locale.to_string());
        q.push(format!(" AND t.record_kind = '{entity}' AND t.archive_id IS NULL"));
        q.push(" AND r.site_id = ").push_bind(scope.site_id.clone());
        q.push(" AND r.env = ").push_bind(scope.env.clone());
        q.push(" AND r.archive_id IS NULL");
        push_filter(&mut q, "r", kind, filter);
        if postgres {
            q.push(" ORDER BY ts_rank(f.words, q) DESC, r.id DESC LIMIT ");
        } else {
            q.push(" ORDER BY bm25(translations_fts, 10.0, 4.0, 5.0, 2.0), r.id DESC LIMIT ");
        }
        q.push_bind(limit as i64);
        Some(q)
    }

    async fn ranked<T: Record>(
        &self,
        scope: &Scope,
        kind: Searched,
        ids: &[String],
        filter: &SearchFilter,
    ) -> Result<Vec<T>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = QueryBuilder::new(format!("SELECT * FROM {} r WHERE r.site_id = ", kind.spec().table));
        q.push_bind(scope.site_id.clone()).push(" AND r.env = ").push_bind(scope.env.clone());
        q.push(" AND r.archive_id IS NULL");
        push_filter(&mut q, "r", kind, filter);
        q.push(" AND r.id IN (");
        q.push_list(ids, ", ", |q, id| {
            q.push_bind(id);
        });
        q.push(")");
        let q = q.build();
        let records: Vec<T> = self.db.read(move |c| q.fetch_all(c)?.iter().map(T::from_row).collect()).await?;
        let mut found: Vec<(usize, T)> = records
            .into_iter()
            .map(|t| {
                let rank = ids.iter().position(|id| id == t.id()).unwrap_or(usize::MAX);
                (rank, t)
            })
            .collect();
        found.sort_by_key(|(rank, _)| *rank);
        Ok(found.into_iter().map(|(_, t)| t).collect())
    }

    /// The live pages of `scope` among `ids`, in the order of `ids`.
    pub async fn ranked_pages(&self, scope: &Scope, ids: &[String]) -> Result<Vec<Page>> {
        self.ranked(scope, Searched::Page, ids, &SearchFilter::default()).await
    }

    /// The live entries of `scope` among `ids` that pass `filter`, in the
    /// order of `ids`.
    pub async fn ranked_entries(&self, scope: &Scope, ids: &[String], filter: &SearchFilter) -> Result<Vec<Entry>> {
        self.ranked(scope, Searched::Entry, ids, filter).await
    }

    /// Up to `limit` live `kind` records (any scope) with no vector of
    /// `model`, or one older than the record (or than a section of a page,
    /// which marks it stale), with their text.
    pub async fn documents_to_embed(&self, kind: Searched, model: &str, limit: u32) -> Result<Vec<SearchDocument>> {
        let Spec { view, text, .. } = kind.spec();
        let sql = format!(
            "SELECT d.id, d.site_id, d.env, d.version, {text} AS text, e.text_hash AS known_hash FROM {view} d
             LEFT JOIN embeddings e ON e.entity_id = d.id AND e.model = ?1 AND e.site_id = d.site_id AND e.env = d.env
             WHERE d.archive_id IS NULL AND (e.entity_id IS NULL OR e.version < d.version)
             ORDER BY d.id LIMIT ?2"
        );
        // `view` and `text` are constants of `Searched`; values are bound.
        let q = db::query(sql).bind(model).bind(limit as i64);
        self.db
            .read(move |c| {
                q.fetch_all(c)?
                    .iter()
                    .map(|r| {
                        Ok(SearchDocument {
                            scope: Scope::of_row(r)?,
                            id: r.try_get("id")?,
                            text: r.try_get("text")?,
                            known_hash: r.try_get("known_hash")?,
                            version: r.try_get("version")?,
                        })
                    })
                    .collect()
            })
            .await
    }
}
