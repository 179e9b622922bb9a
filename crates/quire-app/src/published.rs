//! What is published, as the delivery API serves it: the pages (with their
//! published sections) and the posts of every posts collection, by slug —
//! what an MCP client lists and reads as resources, and completes slugs of —
//! and the menus and entry lists the delivery API serves anyone, in the
//! scope its query names.

use crate::{Actor, AppError, AppResult, Permission, authorize};
use quire_core::model::{CollectionKind, Entry, EntryStatus, Navigation, PublishStatus};
use quire_store::{DeliveredNavItem, DeliveredPage, EntryFilter, Listing, PageFilter, Scope, Version};
use quire_tools::Services;

/// How many records a listing reads per store call.
const BATCH: u32 = 100;

/// A published page or post, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Page or post.
    pub kind: Kind,
    /// Its slug.
    pub slug: String,
    /// Its name (a page's) or title (a post's).
    pub title: String,
    /// A post's collection slug.
    pub collection: Option<String>,
}

/// What kind of published record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A page.
    Page,
    /// A post of a posts collection.
    Post,
}

/// The published pages and posts of the actor's scope (the first hundred
/// of each, and of each posts collection).
pub async fn list(services: &Services, actor: &Actor) -> AppResult<Vec<Listed>> {
    let store = &services.store;
    let mut out = Vec::new();
    let filter = PageFilter { status: Some(PublishStatus::Published), ..Default::default() };
    for page in store.pages(&actor.scope, &filter, BATCH, None).await?.items {
        out.push(Listed { kind: Kind::Page, slug: page.slug, title: page.name, collection: None });
    }
    for collection in store.collections(&actor.scope, BATCH, None).await?.items {
        if collection.kind != CollectionKind::Posts {
            continue;
        }
        let filter = EntryFilter { status: Some(EntryStatus::Published), ..Default::default() };
        for post in store.entries(&actor.scope, &collection.id, &filter, BATCH, None).await?.items {
            out.push(Listed {
                kind: Kind::Post,
                slug: post.slug,
                title: post.title,
                collection: Some(collection.slug.clone()),
            });
        }
    }
    Ok(out)
}

/// What a delivery request reads: a site and environment, in the version
/// the public site shows or, for a preview, as drafted.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The site and environment.
    pub scope: Scope,
    /// Published, or the drafts.
    pub version: Version,
}

impl Reading {
    /// What anyone may read of `scope`: what is published.
    pub fn public(scope: Scope) -> Self {
        Reading { scope, version: Version::Published }
    }

    /// The drafts of the site and environment a preview link names; none
    /// when the link is unknown or expired.
    pub async fn preview_link(services: &Services, secret: &str) -> AppResult<Option<Self>> {
        let scope = services.store.preview_link(secret).await?;
        Ok(scope.map(|scope| Reading { scope, version: Version::Working }))
    }

    /// A preview of the actor's site and environment as drafted: for an
    /// actor who may read what is not public.
    pub fn preview(actor: &Actor) -> AppResult<Self> {
        authorize(actor, Permission::Read)?;
        Ok(Reading { scope: actor.scope.clone(), version: Version::Working })
    }
}

/// A published page with its published sections, as delivered.
pub async fn page(services: &Services, actor: &Actor, slug: &str) -> AppResult<DeliveredPage> {
    delivered_page(services, &Reading::public(actor.scope.clone()), slug).await
}

/// A page with its visible, published sections in order, as `reading`
/// reads it: what the delivery API serves.
pub async fn delivered_page(services: &Services, reading: &Reading, slug: &str) -> AppResult<DeliveredPage> {
    Ok(services.store.delivered_page(&reading.scope, slug, reading.version).await?)
}

/// A menu with its visible items nested and their links resolved (items
/// whose target is not there to read are left out), as `reading` reads it.
pub async fn delivered_navigation(
    services: &Services,
    reading: &Reading,
    key: &str,
) -> AppResult<(Navigation, Vec<DeliveredNavItem>)> {
    Ok(services.store.delivered_navigation(&reading.scope, key, reading.version).await?)
}

/// One page of the entries of a collection, newest first, of a category
/// or with a tag when given, as `reading` reads them: each the JSON text
/// an [`EntryView`](quire_store::EntryView) serializes to.
pub async fn delivered_entries(
    services: &Services,
    reading: &Reading,
    collection: &str,
    category: Option<String>,
    tag: Option<String>,
    limit: u32,
    cursor: Option<&str>,
) -> AppResult<Listing<String>> {
    let filter = EntryFilter { category, tag, ..EntryFilter::default() };
    let store = &services.store;
    Ok(store.delivered_entry_views_json(&reading.scope, collection, &filter, limit, cursor, reading.version).await?)
}

/// A published post, from whichever posts collection has it.
pub async fn post(services: &Services, actor: &Actor, slug: &str) -> AppResult<Entry> {
    let store = &services.store;
    for collection in posts_collections(services, actor).await? {
        if let Ok(post) = store.delivery_entry(&actor.scope, &collection, slug).await {
            return Ok(post);
        }
    }
    Err(AppError::not_found(format!("no published post {slug}")))
}

/// Slugs starting with `prefix`: of published pages only, or of every live
/// page. At most `max`; the flag says whether more matched.
pub async fn page_slugs(
    services: &Services,
    actor: &Actor,
    prefix: &str,
    published_only: bool,
    max: usize,
) -> AppResult<(Vec<String>, bool)> {
    let filter = PageFilter { status: published_only.then_some(PublishStatus::Published), ..Default::default() };
    let mut found = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let listing = services.store.pages(&actor.scope, &filter, BATCH, cursor.as_deref()).await?;
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
    actor: &Actor,
    prefix: &str,
    max: usize,
) -> AppResult<(Vec<String>, bool)> {
    let store = &services.store;
    let filter = EntryFilter { status: Some(EntryStatus::Published), ..Default::default() };
    let mut found = Vec::new();
    for collection in posts_collections(services, actor).await? {
        let mut cursor: Option<String> = None;
        loop {
            let listing = store.entries(&actor.scope, &collection, &filter, BATCH, cursor.as_deref()).await?;
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
pub async fn posts_collection_slugs(services: &Services, actor: &Actor, prefix: &str) -> AppResult<Vec<String>> {
    let collections = services.store.collections(&actor.scope, BATCH, None).await?.items;
    Ok(collections
        .into_iter()
        .filter(|c| c.kind == CollectionKind::Posts && c.slug.starts_with(prefix))
        .map(|c| c.slug)
        .collect())
}

/// Ids of the posts collections.
async fn posts_collections(services: &Services, actor: &Actor) -> AppResult<Vec<String>> {
    let collections = services.store.collections(&actor.scope, BATCH, None).await?.items;
    Ok(collections.into_iter().filter(|c| c.kind == CollectionKind::Posts).map(|c| c.id).collect())
}
