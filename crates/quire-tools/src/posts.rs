//! Post tools: getPost, createPost, updatePost, deletePost. Posts are entries
//! of a collection whose kind is posts (`blog` is seeded).

use crate::archive::{archive_execute, archive_preview, require_ids};
use crate::catalog::{CreatePostArgs, DeletePostArgs, GetPostArgs, UpdatePostArgs};
use crate::locales::{self, InLocale, Overlay};
use crate::pages::created_untranslated;
use crate::publishing::with_standing;
use crate::scope::{limit, select_one};
use crate::tool::*;
use quire_core::input::{EntryPatch, NewEntry};
use quire_core::model::{Collection, CollectionKind, EntityKind, Entry, EntryStatus, Translation};
use quire_store::{EntryFilter, SearchFilter, Searched};
use serde_json::{Map, Value, json};

/// Entry or post as listed.
pub fn entry_json(e: &Entry, include_content: bool) -> Value {
    let mut v = json!({
        "id": e.id, "collectionId": e.collection_id, "slug": e.slug, "title": e.title, "status": e.status,
        "author": e.author, "category": e.category, "tags": e.tags, "excerpt": e.excerpt,
        "featuredImage": e.featured_image, "publishedAt": e.published_at, "version": e.version,
    });
    if include_content {
        v["content"] = e.content.clone();
    }
    v
}

/// The posts collection named, or the first one.
pub(crate) async fn posts_collection(call: &Call<'_>, slug: Option<&str>) -> Result<Collection, ToolError> {
    let store = call.store();
    let collection = match slug {
        Some(s) => store.collection(call.scope(), s).await?,
        None => store
            .collections(call.scope(), 100, None)
            .await?
            .items
            .into_iter()
            .find(|c| c.kind == CollectionKind::Posts)
            .ok_or_else(|| {
                ToolError::new(ErrorCode::NotFound, "this site has no posts collection", "Create one first.")
            })?,
    };
    if collection.kind != CollectionKind::Posts {
        return Err(ToolError::invalid(
            format!("collectionSlug: {} holds entries, not posts", collection.slug),
            "Use getEntry / createEntry for entries collections.",
        ));
    }
    Ok(collection)
}

pub(crate) async fn get_post(call: &Call<'_>, a: GetPostArgs) -> ToolResult {
    let sel = select_one(&[("slug", a.slug.is_some()), ("query", a.query.is_some()), ("all", a.all == Some(true))])?;
    let collection = posts_collection(call, a.collection_slug.as_deref()).await?;
    let in_locale = locales::asked(call, a.locale.as_deref()).await?;
    let store = call.store();
    let content = a.include_content == Some(true);
    let (posts, next) = match sel.0 {
        "query" => {
            let filter = SearchFilter {
                collection_id: Some(collection.id.clone()),
                entries: EntryFilter { status: a.status, category: a.category, ..Default::default() },
            };
            let chain = in_locale.as_ref().map_or(&[][..], |l| &l.chain[..]);
            let (posts, ranking) =
                search_entries(call, a.query.as_deref(), &filter, limit(a.limit, 20, 100)?, chain).await?;
            let mut out = items_result(entries_in(call, in_locale.as_ref(), &posts, content).await?, None);
            out["ranking"] = json!(ranking);
            return Ok(out);
        }
        "slug" => {
            let slug = a.slug.as_deref().unwrap_or_default();
            (vec![entry_by_slug(call, in_locale.as_ref(), &collection.id, slug).await?], None)
        }
        _ => {
            let filter = EntryFilter { status: a.status, category: a.category, ..Default::default() };
            let l = store
                .entries(call.scope(), &collection.id, &filter, limit(a.limit, 20, 100)?, a.cursor.as_deref())
                .await?;
            (l.items, l.next_cursor)
        }
    };
    let listed = items_result(entries_in(call, in_locale.as_ref(), &posts, content).await?, next);
    match sel.0 {
        "slug" => with_standing(call, EntityKind::Entry, listed).await,
        _ => Ok(listed),
    }
}

/// Entries or posts as listed, in locale `l` when one is asked.
pub(crate) async fn entries_in(
    call: &Call<'_>,
    l: Option<&InLocale>,
    entries: &[Entry],
    content: bool,
) -> Result<Vec<Value>, ToolError> {
    let mut items: Vec<Value> = entries.iter().map(|e| entry_json(e, content)).collect();
    if let Some(l) = l {
        let mut overlay = Overlay::new(l);
        for item in &mut items {
            overlay.entry(call, item).await?;
        }
    }
    Ok(items)
}

/// The entry of `collection` (id) whose slug is `slug`: its own, or, in
/// locale `l`, its slug there (or in a fallback of it).
pub(crate) async fn entry_by_slug(
    call: &Call<'_>,
    l: Option<&InLocale>,
    collection: &str,
    slug: &str,
) -> Result<Entry, ToolError> {
    let translated = match l {
        Some(l) => locales::by_translated_slug(call, l, EntityKind::Entry, Some(collection), slug).await?,
        None => None,
    };
    Ok(match translated {
        Some(id) => call.store().entry(call.scope(), &id).await?,
        None => call.store().entry_by_slug(call.scope(), collection, slug).await?,
    })
}

/// The answer of a write in locale `l`: `entry` as that locale reads it,
/// with the translation written.
pub(crate) async fn entry_in(
    call: &Call<'_>,
    l: &InLocale,
    entry: &Entry,
    written: &Translation,
    msg: String,
) -> ToolResult {
    let mut item = entry_json(entry, true);
    Overlay::new(l).entry(call, &mut item).await?;
    item["translation"] = locales::translation_json(written);
    Ok(item_result(item, msg))
}

/// The localised values of a new entry's or post's texts: what its
/// translation into the call's locale starts with.
pub(crate) async fn texts_of(call: &Call<'_>, entry: &Entry) -> Result<Map<String, Value>, ToolError> {
    let localized = locales::collection_fields(call, &entry.collection_id).await?;
    let content: Map<String, Value> = entry
        .content
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| localized.contains(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut fields = Map::new();
    fields.insert("title".into(), json!(entry.title));
    fields.insert("slug".into(), json!(entry.slug));
    if let Some(excerpt) = &entry.excerpt {
        fields.insert("excerpt".into(), json!(excerpt));
    }
    if !content.is_empty() {
        fields.insert("content".into(), Value::Object(content));
    }
    Ok(fields)
}

/// Writes `title`, `slug`, `excerpt` and `content` (changes, merged) of
/// `entry` into its translation in locale `l`, after refusing content
/// fields its collection does not localise.
pub(crate) async fn translate_entry(
    call: &Call<'_>,
    l: &InLocale,
    entry: &Entry,
    texts: EntryTexts,
) -> Result<Translation, ToolError> {
    let localized = locales::collection_fields(call, &entry.collection_id).await?;
    let collection = call.store().collection(call.scope(), &entry.collection_id).await?;
    locales::only_localized_content(l, &format!("collection {}", collection.slug), texts.content.as_ref(), &localized)?;
    locales::write(call, l, EntityKind::Entry, &entry.id, |fields| {
        for (key, value) in [("title", texts.title), ("slug", texts.slug)] {
            if let Some(value) = value {
                fields.insert(key.into(), json!(value));
            }
        }
        match texts.excerpt {
            Some(Some(excerpt)) => {
                fields.insert("excerpt".into(), json!(excerpt));
            }
            Some(None) => {
                fields.remove("excerpt");
            }
            None => {}
        }
        if let Some(patch) = texts.content {
            let mut mine = match fields.remove("content") {
                Some(Value::Object(mine)) => mine,
                _ => Map::new(),
            };
            locales::merge_content(&mut mine, &entry.content, &patch);
            if !mine.is_empty() {
                fields.insert("content".into(), Value::Object(mine));
            }
        }
    })
    .await
}

/// The localised texts of an entry or a post a write in a locale changes.
pub(crate) struct EntryTexts {
    pub title: Option<String>,
    pub slug: Option<String>,
    /// Absent, cleared (falls back) or set.
    pub excerpt: Option<Option<String>>,
    pub content: Option<Value>,
}

/// Entries matching `query` that pass `filter`, best first (at most `n`),
/// and which ranking answered (`embed::rank`); getPost and getEntry. In a
/// locale, its `chain`'s translations are searched in their languages first.
pub(crate) async fn search_entries(
    call: &Call<'_>,
    query: Option<&str>,
    filter: &SearchFilter,
    n: u32,
    chain: &[String],
) -> Result<(Vec<Entry>, &'static str), ToolError> {
    let query = crate::embed::checked_query(query)?;
    let (store, scope) = (call.store(), call.scope());
    // Vector matches are narrowed by the filter after ranking: take more.
    let pool = if call.services.embedder.is_some() { (n as usize).max(crate::embed::POOL) } else { n as usize };
    let fulltext = store.search_ids_in(scope, Searched::Entry, query, filter, pool as u32, chain);
    let (ids, ranking) =
        crate::embed::rank(store, call.services.embedder.as_deref(), scope, "entry", query, pool, fulltext).await?;
    let mut entries = store.ranked_entries(scope, &ids, filter).await?;
    entries.truncate(n as usize);
    Ok((entries, ranking))
}

pub(crate) async fn create_post(call: &Call<'_>, a: CreatePostArgs) -> ToolResult {
    let collection = posts_collection(call, Some(&a.collection_slug)).await?;
    let in_locale = locales::asked(call, a.locale.as_deref()).await?;
    let mut content = json!({ "body": a.content.body });
    if let Some(cover) = a.content.cover {
        content["cover"] = Value::String(cover);
    }
    let input = NewEntry {
        slug: a.slug,
        title: a.title,
        content: Some(content),
        status: Some(EntryStatus::Draft),
        author: a.author,
        category: a.category,
        tags: a.tags,
        excerpt: a.excerpt,
        featured_image: a.featured_image,
    };
    let post = call.store().create_entry(&call.ctx.change_context(), call.scope(), &collection.id, input).await?;
    let msg = format!(
        "Created draft post \"{}\" in {}; publishContent makes it public once a person approves.",
        post.title, collection.slug
    );
    let Some(l) = in_locale else { return Ok(item_result(entry_json(&post, true), msg)) };
    let texts = texts_of(call, &post).await?;
    let written = locales::write(call, &l, EntityKind::Entry, &post.id, |fields| fields.extend(texts))
        .await
        .map_err(|e| created_untranslated(e, "post", &post.id, &l))?;
    let msg = format!("{msg} Its {} translation holds the same texts, as a draft.", l.tag);
    entry_in(call, &l, &post, &written, msg).await
}

pub(crate) async fn update_post(call: &Call<'_>, a: UpdatePostArgs) -> ToolResult {
    let collection = posts_collection(call, a.collection_slug.as_deref()).await?;
    let in_locale = locales::asked(call, a.locale.as_deref()).await?;
    let store = call.store();
    let post = entry_by_slug(call, in_locale.as_ref(), &collection.id, &a.slug).await?;
    if let Some(l) = &in_locale {
        let given = [
            ("status", a.status.is_some()),
            ("category", a.category.is_some()),
            ("author", a.author.is_some()),
            ("featuredImage", a.featured_image.is_some()),
            ("tags", a.tags.is_some()),
        ];
        locales::only_localized(
            l,
            "post",
            &given,
            &["title", "excerpt", "content (the collection's localised fields)"],
        )?;
        let texts = EntryTexts { title: a.title, slug: None, excerpt: a.excerpt, content: a.content };
        let written = translate_entry(call, l, &post, texts).await?;
        let msg = format!(
            "Wrote the {} translation of post {} ({}, version {}).",
            l.tag, post.slug, written.status, written.version
        );
        return entry_in(call, l, &post, &written, msg).await;
    }
    let patch = EntryPatch {
        slug: None,
        title: a.title,
        content: a.content,
        status: a.status,
        author: a.author,
        category: a.category,
        tags: a.tags,
        excerpt: a.excerpt,
        featured_image: a.featured_image,
    };
    let post = store.update_entry(&call.ctx.change_context(), call.scope(), &post.id, patch).await?;
    Ok(item_result(
        entry_json(&post, true),
        format!("Updated post \"{}\" ({}, version {}).", post.title, post.status, post.version),
    ))
}

async fn post_ids(call: &Call<'_>, a: &DeletePostArgs) -> Result<Vec<String>, ToolError> {
    require_ids(&a.slugs, "slugs")?;
    let collection = posts_collection(call, a.collection_slug.as_deref()).await?;
    let mut ids = Vec::new();
    for slug in &a.slugs {
        ids.push(call.store().entry_by_slug(call.scope(), &collection.id, slug).await?.id);
    }
    Ok(ids)
}

pub(crate) async fn delete(call: &Call<'_>, a: DeletePostArgs) -> ToolResult {
    archive_execute(call, EntityKind::Entry, &post_ids(call, &a).await?, "post").await
}

pub(crate) async fn preview_delete(call: &Call<'_>, a: DeletePostArgs) -> Result<Preview, ToolError> {
    archive_preview(call, EntityKind::Entry, &post_ids(call, &a).await?, "post").await
}
