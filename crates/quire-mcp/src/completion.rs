//! `completion/complete`: values for the resource templates' `{slug}` and
//! for the prompt arguments that name something on the site. Arguments that
//! are free text (a topic, words describing an image) have no completions;
//! a prompt, template or argument that does not exist is an error naming it.

use crate::{prompts, resources};
use quire_tools::{CallContext, Services};
use rmcp::ErrorData;
use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};

/// The completions of one request.
pub async fn complete(
    services: &Services,
    ctx: &CallContext,
    request: &CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let max = CompletionInfo::MAX_VALUES;
    let argument = request.argument.name.as_str();
    let typed = request.argument.value.as_str();
    let (values, more) = match &request.r#ref {
        Reference::Resource(r) => match (r.uri.as_str(), argument) {
            (resources::PAGE_TEMPLATE, "slug") => resources::page_slugs(services, ctx, typed, true, max).await?,
            (resources::POST_TEMPLATE, "slug") => resources::post_slugs(services, ctx, typed, max).await?,
            (resources::PAGE_TEMPLATE | resources::POST_TEMPLATE, other) => {
                return Err(ErrorData::invalid_params(format!("{} has no argument \"{other}\"", r.uri), None));
            }
            (uri, _) => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "no resource template {uri}: use {} or {}",
                        resources::PAGE_TEMPLATE,
                        resources::POST_TEMPLATE
                    ),
                    None,
                ));
            }
        },
        Reference::Prompt(p) => {
            prompts::check_argument(&p.name, argument)?;
            match (p.name.as_str(), argument) {
                ("replace-image-on-page", "page") => resources::page_slugs(services, ctx, typed, false, max).await?,
                ("write-and-publish-post", "collectionSlug") => {
                    (resources::posts_collection_slugs(services, ctx, typed).await?, false)
                }
                _ => (Vec::new(), false),
            }
        }
        _ => return Err(ErrorData::invalid_params("completion for an unknown kind of reference", None)),
    };
    let mut info = CompletionInfo::new(values).map_err(|e| ErrorData::internal_error(e, None))?;
    info.has_more = Some(more);
    Ok(CompleteResult::new(info))
}
