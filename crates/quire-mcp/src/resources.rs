//! MCP resources: published pages (`quire://pages/{slug}`) and published
//! posts (`quire://posts/{slug}`), read as the public delivery API serves them,
//! through the application layer (`quire_app::published`). Both URI forms
//! are also published as resource templates, so a client can read any
//! published page or post by slug (with slugs offered through
//! `completion/complete`), not only those `resources/list` names.

use quire_app::published::{self, Kind};
use quire_app::{Actor, AppError, Failure};
use quire_tools::{CallContext, Services};
use rmcp::ErrorData;
use rmcp::model::*;

/// The URI template of published pages.
pub const PAGE_TEMPLATE: &str = "quire://pages/{slug}";
/// The URI template of published posts.
pub const POST_TEMPLATE: &str = "quire://posts/{slug}";
const PAGE_PREFIX: &str = "quire://pages/";
const POST_PREFIX: &str = "quire://posts/";

/// A use case's failure as an MCP error.
fn mcp_error(e: AppError) -> ErrorData {
    match e.failure {
        Failure::NotFound => ErrorData::resource_not_found(e.message, None),
        Failure::Invalid => ErrorData::invalid_params(e.message, None),
        _ => ErrorData::internal_error(e.message, None),
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
    let listed = published::list(services, &Actor::of_call(ctx)).await.map_err(mcp_error)?;
    Ok(listed
        .into_iter()
        .map(|item| {
            let (uri, description) = match item.kind {
                Kind::Page => (format!("{PAGE_PREFIX}{}", item.slug), format!("Published page /{}", item.slug)),
                Kind::Post => (
                    format!("{POST_PREFIX}{}", item.slug),
                    format!("Published post in {}", item.collection.unwrap_or_default()),
                ),
            };
            Resource::new(uri, item.title).with_description(description).with_mime_type("application/json")
        })
        .collect())
}

/// One published page or post as JSON.
pub async fn read(services: &Services, ctx: &CallContext, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let actor = Actor::of_call(ctx);
    let json = if let Some(slug) = uri.strip_prefix(PAGE_PREFIX).filter(|s| !s.is_empty()) {
        serde_json::to_string_pretty(&published::page(services, &actor, slug).await.map_err(mcp_error)?)
    } else if let Some(slug) = uri.strip_prefix(POST_PREFIX).filter(|s| !s.is_empty()) {
        serde_json::to_string_pretty(&published::post(services, &actor, slug).await.map_err(mcp_error)?)
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
    published::page_slugs(services, &Actor::of_call(ctx), prefix, published_only, max).await.map_err(mcp_error)
}

/// Slugs of published posts (every posts collection) starting with `prefix`.
pub async fn post_slugs(
    services: &Services,
    ctx: &CallContext,
    prefix: &str,
    max: usize,
) -> Result<(Vec<String>, bool), ErrorData> {
    published::post_slugs(services, &Actor::of_call(ctx), prefix, max).await.map_err(mcp_error)
}

/// Slugs of the posts collections starting with `prefix`.
pub async fn posts_collection_slugs(
    services: &Services,
    ctx: &CallContext,
    prefix: &str,
) -> Result<Vec<String>, ErrorData> {
    published::posts_collection_slugs(services, &Actor::of_call(ctx), prefix).await.map_err(mcp_error)
}
