//! Entry tools for any collection: getEntry, createEntry, updateEntry, deleteEntry.

use crate::archive::{archive_execute, archive_preview};
use crate::args::parse;
use crate::posts::{entry_json, search_entries};
use crate::publishing::with_publication;
use crate::registry::schema;
use crate::scope::{limit, select_one};
use crate::subject::Subject;
use crate::tool::*;
use quire_core::input::{EntryPatch, NewEntry};
use quire_core::model::{EntityKind, EntryStatus};
use quire_store::{EntryFilter, SearchFilter};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// Arguments of getEntry.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetEntryArgs {
    /// Entry id.
    pub id: Option<String>,
    /// Entry slug (needs collectionId).
    pub slug: Option<String>,
    /// Search by words or meaning, best first; collectionId narrows it.
    pub query: Option<String>,
    /// Collection id or slug, e.g. "testimonials".
    pub collection_id: Option<String>,
    /// List the collection's entries, newest first (needs collectionId).
    pub all: Option<bool>,
    /// Include the content.
    pub include_content: Option<bool>,
    /// Only entries with this status.
    pub status: Option<EntryStatus>,
    /// Max entries (default 20, max 100).
    pub limit: Option<u32>,
    /// nextCursor of the previous list.
    pub cursor: Option<String>,
}

/// Arguments of createEntry.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateEntryArgs {
    /// Collection id or slug.
    pub collection_id: String,
    /// URL slug, unique in the collection.
    pub slug: String,
    /// Title.
    pub title: String,
    /// Content matching the collection's fields.
    pub content: Option<Value>,
    /// draft (default), published or archived.
    pub status: Option<EntryStatus>,
}

/// Arguments of updateEntry.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateEntryArgs {
    /// Entry id.
    pub id: String,
    /// New slug.
    pub slug: Option<String>,
    /// New title.
    pub title: Option<String>,
    /// Content changes, merged; null removes a key.
    pub content: Option<Value>,
    /// draft, published or archived.
    pub status: Option<EntryStatus>,
}

/// Arguments of deleteEntry.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteEntryArgs {
    /// Entry ids to archive (always an array).
    pub ids: Vec<String>,
}

fn need_collection(a: &GetEntryArgs) -> Result<&str, ToolError> {
    a.collection_id.as_deref().ok_or_else(|| {
        ToolError::invalid(
            "collectionId: required with slug or all",
            "Name the collection, e.g. collectionId: \"testimonials\".",
        )
    })
}

async fn get_entry(call: &Call<'_>, a: GetEntryArgs) -> ToolResult {
    let sel = select_one(&[
        ("id", a.id.is_some()),
        ("slug", a.slug.is_some()),
        ("query", a.query.is_some()),
        ("all", a.all == Some(true)),
    ])?;
    let store = call.store();
    let content = a.include_content == Some(true);
    let (entries, next) = match sel.0 {
        "query" => {
            let collection_id = match &a.collection_id {
                Some(c) => Some(store.collection(call.scope(), c).await?.id),
                None => None,
            };
            let filter =
                SearchFilter { collection_id, entries: EntryFilter { status: a.status, ..Default::default() } };
            let (entries, ranking) =
                search_entries(call, a.query.as_deref(), &filter, limit(a.limit, 20, 100)?).await?;
            let mut out = items_result(entries.iter().map(|e| entry_json(e, content)).collect(), None);
            out["ranking"] = serde_json::json!(ranking);
            return Ok(out);
        }
        "id" => (vec![store.entry(call.scope(), a.id.as_deref().unwrap_or_default()).await?], None),
        "slug" => (
            vec![store.entry_by_slug(call.scope(), need_collection(&a)?, a.slug.as_deref().unwrap_or_default()).await?],
            None,
        ),
        _ => {
            let filter = EntryFilter { status: a.status, ..Default::default() };
            let l = store
                .entries(call.scope(), need_collection(&a)?, &filter, limit(a.limit, 20, 100)?, a.cursor.as_deref())
                .await?;
            (l.items, l.next_cursor)
        }
    };
    let listed = items_result(entries.iter().map(|e| entry_json(e, content)).collect(), next);
    match sel.0 {
        "id" | "slug" => with_publication(call, EntityKind::Entry, listed).await,
        _ => Ok(listed),
    }
}

async fn create_entry(call: &Call<'_>, a: CreateEntryArgs) -> ToolResult {
    let input = NewEntry { slug: a.slug, title: a.title, content: a.content, status: a.status, ..Default::default() };
    let e = call.store().create_entry(&call.ctx.change_context(), call.scope(), &a.collection_id, input).await?;
    Ok(item_result(entry_json(&e, true), format!("Created entry \"{}\" ({}).", e.title, e.status)))
}

async fn update_entry(call: &Call<'_>, a: UpdateEntryArgs) -> ToolResult {
    let patch = EntryPatch { slug: a.slug, title: a.title, content: a.content, status: a.status, ..Default::default() };
    let e = call.store().update_entry(&call.ctx.change_context(), call.scope(), &a.id, patch).await?;
    Ok(item_result(entry_json(&e, true), format!("Updated entry \"{}\" (version {}).", e.title, e.version)))
}

/// The entry tools.
pub fn tools() -> Vec<Tool> {
    vec![
        Tool {
            name: "getEntry",
            description: "Get collection entries by id, by slug or all: true within a collectionId (id or slug), optionally by status; content only with includeContent. Returns { items }.",
            guidance: "For blog posts prefer getPost; entries belong to collections like testimonials.",
            tags: &["entry", "entries", "item", "record", "collection", "testimonial", "read", "list"],
            phrases: &["list testimonials", "show collection items", "find an entry", "read a record"],
            input_schema: schema::<GetEntryArgs>,
            execute: |call, v| Box::pin(async move { get_entry(call, parse(v)?).await }),
            ..Tool::base(Category::Internal, Subject::Record(EntityKind::Entry), Effect::ReadOnly)
        },
        Tool {
            name: "createEntry",
            description: "Create an entry in a collection (collectionId = id or slug) with slug, title and content validated against the collection's fields. Returns the entry.",
            guidance: "Content must match the collection's fields; status defaults to draft.",
            tags: &["entry", "item", "record", "collection", "create", "add", "testimonial"],
            phrases: &["add a testimonial", "new collection item", "add a record", "create an entry"],
            input_schema: schema::<CreateEntryArgs>,
            execute: |call, v| Box::pin(async move { create_entry(call, parse(v)?).await }),
            ..Tool::base(Category::Internal, Subject::Record(EntityKind::Entry), Effect::Write)
        },
        Tool {
            name: "updateEntry",
            description: "Update an entry by id: slug, title, content (merged) or status. Returns the entry.",
            guidance: "Content keys are the fields of the entry's collection.",
            tags: &["entry", "item", "record", "collection", "update", "edit", "testimonial", "publish"],
            phrases: &["edit a testimonial", "change a collection item", "publish an entry", "update the record"],
            input_schema: schema::<UpdateEntryArgs>,
            execute: |call, v| Box::pin(async move { update_entry(call, parse(v)?).await }),
            ..Tool::base(Category::Internal, Subject::Record(EntityKind::Entry), Effect::IdempotentWrite)
        },
        Tool {
            name: "deleteEntry",
            description: "Delete entries by ids, archiving them; the first call only previews. Nothing changes until a person approves.",
            guidance: "Archives. Consider unpublishContent, which keeps the entry, instead.",
            tags: &["entry", "item", "record", "collection", "delete", "remove", "testimonial", "archive"],
            phrases: &["remove a testimonial", "delete a collection item", "delete the entry"],
            input_schema: schema::<DeleteEntryArgs>,
            execute: |call, v| {
                Box::pin(async move {
                    archive_execute(call, EntityKind::Entry, &parse::<DeleteEntryArgs>(v)?.ids, "entry").await
                })
            },
            preview: Some(|call, v| {
                Box::pin(async move {
                    archive_preview(call, EntityKind::Entry, &parse::<DeleteEntryArgs>(v)?.ids, "entry").await
                })
            }),
            ..Tool::base(Category::Internal, Subject::Record(EntityKind::Entry), Effect::Destructive)
        },
    ]
}
