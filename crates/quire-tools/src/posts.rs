//! Post tools: getPost, createPost, updatePost, deletePost. Posts are entries
//! of a collection whose kind is posts (`blog` is seeded).

use crate::archive::{archive_execute, archive_preview, require_ids};
use crate::catalog::{CreatePostArgs, DeletePostArgs, GetPostArgs, UpdatePostArgs};
use crate::publishing::with_publication;
use crate::scope::{limit, select_one};
use crate::tool::*;
use quire_core::input::{EntryPatch, NewEntry};
use quire_core::model::{Collection, CollectionKind, EntityKind, Entry, EntryStatus};
use quire_store::{EntryFilter, SearchFilter, Searched};
use serde_json::{Value, json};

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
    let store = call.store();
    let content = a.include_content == Some(true);
    let (posts, next) = match sel.0 {
        "query" => {
            let filter = SearchFilter {
                collection_id: Some(collection.id.clone()),
                entries: EntryFilter { status: a.status, category: a.category, tag: None },
            };
            let (posts, ranking) = search_entries(call, a.query.as_deref(), &filter, limit(a.limit, 20, 100)?).await?;
            let mut out = items_result(posts.iter().map(|p| entry_json(p, content)).collect(), None);
            out["ranking"] = json!(ranking);
            return Ok(out);
        }
        "slug" => (
            vec![store.entry_by_slug(call.scope(), &collection.id, a.slug.as_deref().unwrap_or_default()).await?],
            None,
        ),
        _ => {
            let filter = EntryFilter { status: a.status, category: a.category, tag: None };
            let l = store
                .entries(call.scope(), &collection.id, &filter, limit(a.limit, 20, 100)?, a.cursor.as_deref())
                .await?;
            (l.items, l.next_cursor)
        }
    };
    let listed = items_result(posts.iter().map(|p| entry_json(p, content)).collect(), next);
    match sel.0 {
        "slug" => with_publication(call, EntityKind::Entry, listed).await,
        _ => Ok(listed),
    }
}

/// Entries matching `query` that pass `filter`, best first (at most `n`),
/// and which ranking answered (`embed::rank`); getPost and getEntry.
pub(crate) async fn search_entries(
    call: &Call<'_>,
    query: Option<&str>,
    filter: &SearchFilter,
    n: u32,
) -> Result<(Vec<Entry>, &'static str), ToolError> {
    let query = crate::embed::checked_query(query)?;
    let (store, scope) = (call.store(), call.scope());
    // Vector matches are narrowed by the filter after ranking: take more.
    let pool = if call.services.embedder.is_some() { (n as usize).max(crate::embed::POOL) } else { n as usize };
    let fulltext = store.search_ids(scope, Searched::Entry, query, filter, pool as u32);
    let (ids, ranking) =
        crate::embed::rank(store, call.services.embedder.as_deref(), scope, "entry", query, pool, fulltext).await?;
    let mut entries = store.ranked_entries(scope, &ids, filter).await?;
    entries.truncate(n as usize);
    Ok((entries, ranking))
}

pub(crate) async fn create_post(call: &Call<'_>, a: CreatePostArgs) -> ToolResult {
    let collection = posts_collection(call, Some(&a.collection_slug)).await?;
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
    Ok(item_result(entry_json(&post, true), msg))
}

pub(crate) async fn update_post(call: &Call<'_>, a: UpdatePostArgs) -> ToolResult {
    let collection = posts_collection(call, a.collection_slug.as_deref()).await?;
    let store = call.store();
    let post = store.entry_by_slug(call.scope(), &collection.id, &a.slug).await?;
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
