//! Entry tools for any collection: getEntry, createEntry, updateEntry, deleteEntry.

use crate::archive::{archive_execute, archive_preview};
use crate::catalog::{CreateEntryArgs, DeleteEntryArgs, GetEntryArgs, UpdateEntryArgs};
use crate::locales;
use crate::pages::created_untranslated;
use crate::posts::{
    EntryTexts, entries_in, entry_by_slug, entry_in, entry_json, search_entries, texts_of, translate_entry,
};
use crate::publishing::with_standing;
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
    let in_locale = locales::asked(call, a.locale.as_deref()).await?;
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
            let chain = in_locale.as_ref().map_or(&[][..], |l| &l.chain[..]);
            let (entries, ranking) =
                search_entries(call, a.query.as_deref(), &filter, limit(a.limit, 20, 100)?, chain).await?;
            let mut out = items_result(entries_in(call, in_locale.as_ref(), &entries, content).await?, None);
            out["ranking"] = serde_json::json!(ranking);
            return Ok(out);
        }
        "id" => (vec![store.entry(call.scope(), a.id.as_deref().unwrap_or_default()).await?], None),
        "slug" => {
            let collection = store.collection(call.scope(), need_collection(&a)?).await?;
            let slug = a.slug.as_deref().unwrap_or_default();
            (vec![entry_by_slug(call, in_locale.as_ref(), &collection.id, slug).await?], None)
        }
        _ => {
            let filter = EntryFilter { status: a.status, ..Default::default() };
            let l = store
                .entries(call.scope(), need_collection(&a)?, &filter, limit(a.limit, 20, 100)?, a.cursor.as_deref())
                .await?;
            (l.items, l.next_cursor)
        }
    };
    let listed = items_result(entries_in(call, in_locale.as_ref(), &entries, content).await?, next);
    match sel.0 {
        "id" | "slug" => with_standing(call, EntityKind::Entry, listed).await,
        _ => Ok(listed),
    }
}

pub(crate) async fn create_entry(call: &Call<'_>, a: CreateEntryArgs) -> ToolResult {
    let in_locale = locales::asked(call, a.locale.as_deref()).await?;
    let input = NewEntry { slug: a.slug, title: a.title, content: a.content, status: a.status, ..Default::default() };
    let e = call.store().create_entry(&call.ctx.change_context(), call.scope(), &a.collection_id, input).await?;
    let msg = format!("Created entry \"{}\" ({}).", e.title, e.status);
    let Some(l) = in_locale else { return Ok(item_result(entry_json(&e, true), msg)) };
    let texts = texts_of(call, &e).await?;
    let written = locales::write(call, &l, EntityKind::Entry, &e.id, |fields| fields.extend(texts))
        .await
        .map_err(|err| created_untranslated(err, "entry", &e.id, &l))?;
    let msg = format!("{msg} Its {} translation holds the same texts, as a draft.", l.tag);
    entry_in(call, &l, &e, &written, msg).await
}

pub(crate) async fn update_entry(call: &Call<'_>, a: UpdateEntryArgs) -> ToolResult {
    if let Some(l) = locales::asked(call, a.locale.as_deref()).await? {
        locales::only_localized(
            &l,
            "entry",
            &[("status", a.status.is_some())],
            &["title", "slug", "content (the collection's localised fields)"],
        )?;
        let entry = call.store().entry(call.scope(), &a.id).await?;
        let texts = EntryTexts { title: a.title, slug: a.slug, excerpt: None, content: a.content };
        let written = translate_entry(call, &l, &entry, texts).await?;
        let msg = format!(
            "Wrote the {} translation of entry {} ({}, version {}).",
            l.tag, entry.slug, written.status, written.version
        );
        return entry_in(call, &l, &entry, &written, msg).await;
    }
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
