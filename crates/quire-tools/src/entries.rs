//! Entry tools for any collection: getEntry, createEntry, updateEntry, deleteEntry.

use crate::archive::{archive_execute, archive_preview};
use crate::catalog::{CreateEntryArgs, DeleteEntryArgs, GetEntryArgs, UpdateEntryArgs};
use crate::posts::{entry_json, search_entries};
use crate::publishing::with_publication;
use crate::scope::{limit, select_one};
use crate::tool::*;
use quire_core::input::{EntryPatch, NewEntry};
use quire_core::model::EntityKind;
use quire_store::{EntryFilter, SearchFilter};

fn need_collection(a: &GetEntryArgs) -> Result<&str, ToolError> {
    a.collection_id.as_deref().ok_or_else(|| {
        ToolError::invalid(
            "collectionId: required with slug or all",
            "Name the collection, e.g. collectionId: \"testimonials\".",
        )
    })
}

pub(crate) async fn get_entry(call: &Call<'_>, a: GetEntryArgs) -> ToolResult {
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

pub(crate) async fn create_entry(call: &Call<'_>, a: CreateEntryArgs) -> ToolResult {
    let input = NewEntry { slug: a.slug, title: a.title, content: a.content, status: a.status, ..Default::default() };
    let e = call.store().create_entry(&call.ctx.change_context(), call.scope(), &a.collection_id, input).await?;
    Ok(item_result(entry_json(&e, true), format!("Created entry \"{}\" ({}).", e.title, e.status)))
}

pub(crate) async fn update_entry(call: &Call<'_>, a: UpdateEntryArgs) -> ToolResult {
    let patch = EntryPatch { slug: a.slug, title: a.title, content: a.content, status: a.status, ..Default::default() };
    let e = call.store().update_entry(&call.ctx.change_context(), call.scope(), &a.id, patch).await?;
    Ok(item_result(entry_json(&e, true), format!("Updated entry \"{}\" (version {}).", e.title, e.version)))
}

pub(crate) async fn delete(call: &Call<'_>, a: DeleteEntryArgs) -> ToolResult {
    archive_execute(call, EntityKind::Entry, &a.ids, "entry").await
}

pub(crate) async fn preview_delete(call: &Call<'_>, a: DeleteEntryArgs) -> Result<Preview, ToolError> {
    archive_preview(call, EntityKind::Entry, &a.ids, "entry").await
}
