//! MCP resources: published pages (`quire://pages/{slug}`) and published
//! posts (`quire://posts/{slug}`), read as the public delivery API serves them.

use quire_core::model::{CollectionKind, EntryStatus, PublishStatus};
use quire_store::{EntryFilter, PageFilter, StoreError};
use quire_tools::{CallContext, Services};
use rmcp::ErrorData;
use rmcp::model::*;

fn internal(e: StoreError) -> ErrorData {
    match e {
        StoreError::NotFound { .. } => ErrorData::resource_not_found(e.to_string(), None),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

/// Published pages and posts of the caller's scope (the first 100 of each).
pub async fn list(services: &Services, ctx: &CallContext) -> Result<Vec<Resource>, ErrorData> {
    let store = &services.store;
    let mut out = Vec::new();
    let filter = PageFilter { status: Some(PublishStatus::Published), ..Default::default() };
    for page in store.pages(&ctx.scope, &filter, 100, None).await.map_err(internal)?.items {
        out.push(
            Resource::new(format!("quire://pages/{}", page.slug), page.name.clone())
                .with_description(format!("Published page /{}", page.slug))
                .with_mime_type("application/json"),
        );
    }
    for collection in store.collections(&ctx.scope, 100, None).await.map_err(internal)?.items {
        if collection.kind != CollectionKind::Posts {
            continue;
        }
        let filter = EntryFilter { status: Some(EntryStatus::Published), ..Default::default() };
        for post in store.entries(&ctx.scope, &collection.id, &filter, 100, None).await.map_err(internal)?.items {
            out.push(
                Resource::new(format!("quire://posts/{}", post.slug), post.title.clone())
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
    let json = if let Some(slug) = uri.strip_prefix("quire://pages/") {
        serde_json::to_string_pretty(&store.delivery_page(&ctx.scope, slug).await.map_err(internal)?)
    } else if let Some(slug) = uri.strip_prefix("quire://posts/") {
        let mut found = None;
        for collection in store.collections(&ctx.scope, 100, None).await.map_err(internal)?.items {
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
            format!("unknown resource {uri}: use quire://pages/{{slug}} or quire://posts/{{slug}}"),
            None,
        ));
    }
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(ReadResourceResult::new(vec![ResourceContents::text(json, uri).with_mime_type("application/json")]))
}
