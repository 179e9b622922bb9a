//! Find records by words or meaning, as the agent's tools find them: pages
//! (`getPage` with a query), entries (`getEntry`), images and notes
//! (`searchNotes`) are ranked by the registry's own search — full text, and
//! hybrid with the embedding model when one is configured — run as the
//! actor, so a screen's search box and the agent find the same records in
//! the same order. Only the records behind the ranked ids are read here.

use crate::{Actor, AppError, AppResult, Failure, Permission, authorize};
use quire_core::model::{Entry, Image, Page};
use quire_store::SearchFilter;
use quire_tools::{Outcome, Registry};
use serde_json::{Value, json};

/// A note found: where, and the line that matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteHit {
    /// Its path in the vault.
    pub path: String,
    /// The matching line, 1-based.
    pub line: usize,
    /// The line, cut around the match.
    pub snippet: String,
}

/// What a search across the site found, best first in each kind.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// Pages.
    pub pages: Vec<Page>,
    /// Entries of every collection (posts too).
    pub entries: Vec<Entry>,
    /// Images.
    pub images: Vec<Image>,
    /// Notes of the vault, one hit per note.
    pub notes: Vec<NoteHit>,
}

impl Found {
    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty() && self.entries.is_empty() && self.images.is_empty() && self.notes.is_empty()
    }
}

/// Runs read tool `name` with `args` as the actor; answers its items.
async fn items_of(registry: &Registry, actor: &Actor, name: &str, args: Value) -> AppResult<Vec<Value>> {
    match registry.run(&actor.call_context(), name, args, None).await? {
        Outcome::Done(mut v) => match v.get_mut("items").map(Value::take) {
            Some(Value::Array(items)) => Ok(items),
            _ => Err(AppError::new(Failure::Internal, format!("{name} answered no items"))),
        },
        // A read tool never waits for an approval.
        Outcome::NeedsApproval(_) => Err(AppError::new(Failure::Internal, format!("{name} asked for an approval"))),
    }
}

/// The ids of items, in their order, read from `key`.
fn ids(items: &[Value], key: &str) -> Vec<String> {
    items.iter().filter_map(|i| i.get(key).and_then(Value::as_str)).map(str::to_string).collect()
}

/// The arguments of a search tool: the query, the limit and, when given,
/// the locale it searches in.
fn search_args(query: &str, limit: u32, locale: Option<&str>) -> Value {
    let mut args = json!({ "query": query, "limit": limit });
    if let Some(l) = locale {
        args["locale"] = json!(l);
    }
    args
}

/// Up to `limit` pages matching `query`, best first.
pub async fn pages(registry: &Registry, actor: &Actor, query: &str, limit: u32) -> AppResult<Vec<Page>> {
    pages_in(registry, actor, query, limit, None).await
}

/// Up to `limit` pages matching `query`, best first, searched in `locale`
/// (one of the site's; none: the default): its translations (and those of
/// its fallbacks) by the stems of their language, then the pages' own text.
pub async fn pages_in(
    registry: &Registry,
    actor: &Actor,
    query: &str,
    limit: u32,
    locale: Option<&str>,
) -> AppResult<Vec<Page>> {
    authorize(actor, Permission::Read)?;
    let items = items_of(registry, actor, "getPage", search_args(query, limit, locale)).await?;
    Ok(registry.services().store.ranked_pages(&actor.scope, &ids(&items, "id")).await?)
}

/// Up to `limit` entries matching `query`, best first; `collection` (id or
/// slug) narrows them to one collection.
pub async fn entries(
    registry: &Registry,
    actor: &Actor,
    collection: Option<&str>,
    query: &str,
    limit: u32,
) -> AppResult<Vec<Entry>> {
    entries_in(registry, actor, collection, query, limit, None).await
}

/// Up to `limit` entries matching `query`, best first, searched in `locale`
/// as [`pages_in`] searches pages; `collection` (id or slug) narrows them
/// to one collection.
pub async fn entries_in(
    registry: &Registry,
    actor: &Actor,
    collection: Option<&str>,
    query: &str,
    limit: u32,
    locale: Option<&str>,
) -> AppResult<Vec<Entry>> {
    authorize(actor, Permission::Read)?;
    let mut args = search_args(query, limit, locale);
    if let Some(c) = collection {
        args["collectionId"] = json!(c);
    }
    let items = items_of(registry, actor, "getEntry", args).await?;
    Ok(registry.services().store.ranked_entries(&actor.scope, &ids(&items, "id"), &SearchFilter::default()).await?)
}

/// Up to `limit` notes matching `query`, best first, one hit per note.
pub async fn notes(registry: &Registry, actor: &Actor, query: &str, limit: u32) -> AppResult<Vec<NoteHit>> {
    authorize(actor, Permission::Read)?;
    let items = items_of(registry, actor, "searchNotes", json!({ "query": query, "limit": limit * 3 })).await?;
    let mut out: Vec<NoteHit> = Vec::new();
    for i in items {
        let Some(path) = i.get("path").and_then(Value::as_str) else { continue };
        if out.iter().any(|h| h.path == path) {
            continue;
        }
        out.push(NoteHit {
            path: path.to_string(),
            line: i.get("line").and_then(Value::as_u64).unwrap_or(1) as usize,
            snippet: i.get("snippet").and_then(Value::as_str).unwrap_or_default().to_string(),
        });
        if out.len() >= limit as usize {
            break;
        }
    }
    Ok(out)
}

/// Up to `per_kind` pages, entries, images and notes matching `query`,
/// searched at once. A kind whose search fails (a vault that cannot be
/// opened) is left empty rather than failing the others.
pub async fn everything(registry: &Registry, actor: &Actor, query: &str, per_kind: u32) -> AppResult<Found> {
    everything_in(registry, actor, query, per_kind, None).await
}

/// Like [`everything`], with pages and entries searched in `locale` (see
/// [`pages_in`]); images and notes have one language.
pub async fn everything_in(
    registry: &Registry,
    actor: &Actor,
    query: &str,
    per_kind: u32,
    locale: Option<&str>,
) -> AppResult<Found> {
    authorize(actor, Permission::Read)?;
    let (pages, entries, images, notes) = tokio::join!(
        pages_in(registry, actor, query, per_kind, locale),
        entries_in(registry, actor, None, query, per_kind, locale),
        crate::images::search(registry.services(), actor, query, per_kind),
        notes(registry, actor, query, per_kind),
    );
    // The query itself is checked the same way by every kind: its refusal is the answer.
    if let Err(e) = &pages
        && e.failure == Failure::Invalid
    {
        return Err(e.clone());
    }
    Ok(Found {
        pages: pages.unwrap_or_default(),
        entries: entries.unwrap_or_default(),
        images: images.unwrap_or_default(),
        notes: notes.unwrap_or_default(),
    })
}
