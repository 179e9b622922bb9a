//! MCP resources: published pages (`quire://pages/{slug}`) and published
//! posts (`quire://posts/{slug}`), read as the public delivery API serves them.
//! Both URI forms are also published as resource templates, so a client can
//! read any published page or post by slug (with slugs offered through
//! `completion/complete`), not only those `resources/list` names.

use quire_core::model::{CollectionKind, EntryStatus, PublishStatus};
use quire_store::{EntryFilter, PageFilter, StoreError};
use quire_tools::{CallContext, Services};
use rmcp::ErrorData;
use rmcp::model::*;

/// The URI template of published pages.
pub const PAGE_TEMPLATE: &str = "quire://pages/{slug}";
/// The URI template of published posts.
pub const POST_TEMPLATE: &str = "quire://posts/{slug}";
const PAGE_PREFIX: &str = "quire://pages/";
const POST_PREFIX: &str = "quire://posts/";

/// How many records a listing reads per store call.
const BATCH: u32 = 100;

fn internal(e: StoreError) -> ErrorData {
    match e {
        StoreError::NotFound { .. } => ErrorData::resource_not_found(e.to_string(), None),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

/// The resource templates: one for pages, one for posts.
pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(PAGE_TEMPLATE, "page")
            .with_title("Published page")
            .with_description("A published page with its published sections, by slug, as the delivery API serves it.")
            .with_mime_type("application/json"),
        ResourceTemplate::new(POST_TEMPLATE, "post")
            .with_title("Published post")
            .with_description("A published blog post, by slug, from any posts collection.")
            .with_mime_type("application/json"),
    ]
}

/// Published pages and posts of the caller's scope (the first 100 of each).
pub async fn list(services: &Services, ctx: &CallContext) -> Result<Vec<Resource>, ErrorData> {
    let store = &services.store;
    let mut out = Vec::new();
    let filter = PageFilter { status: Some(PublishStatus::Published), ..Default::default() };
    for page in store.pages(&ctx.scope, &filter, BATCH, None).await.map_err(internal)?.items {
        out.push(
            Resource::new(format!("{PAGE_PREFIX}{}", page.slug), page.name.clone())
                .with_description(format!("Published page /{}", page.slug))
                .with_mime_type("application/json"),
        );
    }
    for collection in store.collections(&ctx.scope, BATCH, None).await.map_err(internal)?.items {
        if collection.kind != CollectionKind::Posts {
            continue;
        }
        let filter = EntryFilter { status: Some(EntryStatus::Published), ..Default::default() };
        for post in store.entries(&ctx.scope, &collection.id, &filter, BATCH, None).await.map_err(internal)?.items {
            out.push(
                Resource::new(format!("{POST_PREFIX}{}", post.slug), post.title.clone())
                    .with_description(format!("Published post in {}", collection.slug))
                    .with_mime_type("application/json"),
            );
        }
    }
    Ok(out)
}

/// One published page or post as JSON.
pub async fn read(services: &Services, ctx: &CallContext, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let store = &services.store;
    let json = if let Some(slug) = uri.strip_prefix(PAGE_PREFIX).filter(|s| !s.is_empty()) {
        serde_json::to_string_pretty(&store.delivery_page(&ctx.scope, slug).await.map_err(internal)?)
    } else if let Some(slug) = uri.strip_prefix(POST_PREFIX).filter(|s| !s.is_empty()) {
        let mut found = None;
        for collection in store.collections(&ctx.scope, BATCH, None).await.map_err(internal)?.items {
            if collection.kind == CollectionKind::Posts
                && let Ok(post) = store.entry_by_slug(&ctx.scope, &collection.id, slug).await
                && post.status == EntryStatus::Published
            {
                found = Some(post);
                break;
            }
        }
        let post = found.ok_or_else(|| ErrorData::resource_not_found(format!("no published post {slug}"), None))?;
        serde_json::to_string_pretty(&post)
    } else {
        return Err(ErrorData::invalid_params(
            format!("unknown resource {uri}: use {PAGE_TEMPLATE} or {POST_TEMPLATE}"),
            None,
        ));
    }
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(ReadResourceResult::new(vec![ResourceContents::text(json, uri).with_mime_type("application/json")]))
}

/// Slugs starting with `prefix`: of published pages only, or of every live
/// page. At most `max`; the flag says whether more matched.
pub async fn page_slugs(
    services: &Services,
    ctx: &CallContext,
    prefix: &str,
    published_only: bool,
    max: usize,
) -> Result<(Vec<String>, bool), ErrorData> {
    let filter = PageFilter { status: published_only.then_some(PublishStatus::Published), ..Default::default() };
    let mut found = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let listing = services.store.pages(&ctx.scope, &filter, BATCH, cursor.as_deref()).await.map_err(internal)?;
        for page in listing.items {
            if page.slug.starts_with(prefix) {
                if found.len() == max {
                    return Ok((found, true));
                }
                found.push(page.slug);
            }
        }
        match listing.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok((found, false)),
        }
    }
}

/// Slugs of published posts (every posts collection) starting with `prefix`.
pub async fn post_slugs(
    services: &Services,
    ctx: &CallContext,
    prefix: &str,
    max: usize,
) -> Result<(Vec<String>, bool), ErrorData> {
    let store = &services.store;
    let filter = EntryFilter { status: Some(EntryStatus::Published), ..Default::default() };
    let mut found = Vec::new();
    for collection in posts_collections(services, ctx).await? {
        let mut cursor: Option<String> = None;
        loop {
            let listing =
                store.entries(&ctx.scope, &collection, &filter, BATCH, cursor.as_deref()).await.map_err(internal)?;
            for post in listing.items {
                if post.slug.starts_with(prefix) && !found.contains(&post.slug) {
                    if found.len() == max {
                        return Ok((found, true));
                    }
                    found.push(post.slug);
                }
            }
            match listing.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
    }
    Ok((found, false))
}

/// Slugs of the posts collections starting with `prefix`.
pub async fn posts_collection_slugs(
    services: &Services,
    ctx: &CallContext,
    prefix: &str,
) -> Result<Vec<String>, ErrorData> {
    let collections = services.store.collections(&ctx.scope, BATCH, None).await.map_err(internal)?.items;
    Ok(collections
        .into_iter()
        .filter(|c| c.kind == CollectionKind::Posts && c.slug.starts_with(prefix))
        .map(|c| c.slug)
        .collect())
}

/// Ids of the posts collections.
async fn posts_collections(services: &Services, ctx: &CallContext) -> Result<Vec<String>, ErrorData> {
    let collections = services.store.collections(&ctx.scope, BATCH, None).await.map_err(internal)?.items;
    Ok(collections.into_iter().filter(|c| c.kind == CollectionKind::Posts).map(|c| c.id).collect())
}
