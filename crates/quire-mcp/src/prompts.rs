//! MCP prompts: the common workflows, written as instructions that use the
//! registry's tools in the order that works.

use rmcp::ErrorData;
use rmcp::model::*;
use serde_json::{Map, Value};

struct Workflow {
    name: &'static str,
    description: &'static str,
    arguments: &'static [(&'static str, &'static str, bool)],
    template: &'static str,
}

const WORKFLOWS: &[Workflow] = &[
    Workflow {
        name: "create-landing-page",
        description: "Create a landing page with a hero, features and a call to action, then publish it.",
        arguments: &[("topic", "What the page is about", true), ("slug", "URL slug (default: from the topic)", false)],
        template: "Create a landing page about {topic} (slug: {slug}).\n\
            1. getSectionTemplate {\"all\": true} to learn the fields of hero, feature-grid and cta.\n\
            2. getImage {\"query\": ...} to find a fitting image already in the library; use its exact url.\n\
            3. createPage with a name, the slug and meta.title / meta.description.\n\
            4. createSection for a hero (heading, subheading, backgroundImage, cta), a feature-grid with three features, and a cta.\n\
            5. updateSection status published for each section, then updatePage status published.\n\
            6. getPage {\"slug\": ..., \"includeContent\": true} and report what the page now shows.",
    },
    Workflow {
        name: "write-and-publish-post",
        description: "Write a blog post, give it a cover from the media library, and publish it.",
        arguments: &[
            ("topic", "What the post is about", true),
            ("collectionSlug", "Posts collection (default: blog)", false),
        ],
        template: "Write and publish a blog post about {topic} in the {collectionSlug} collection.\n\
            1. getPost {\"all\": true, \"limit\": 5} to match the tone and avoid a duplicate slug.\n\
            2. getImage {\"query\": ...} for a cover; set BOTH featuredImage and content.cover to its exact url.\n\
            3. createPost with collectionSlug, slug, title, content.body (markdown), excerpt, category and tags; it starts as a draft.\n\
            4. updatePost {\"slug\": ..., \"status\": \"published\"}.\n\
            5. getPost {\"slug\": ...} and report the published post.",
    },
    Workflow {
        name: "replace-image-on-page",
        description: "Replace an image on a page with another from the media library.",
        arguments: &[("page", "Slug of the page", true), ("image", "Words describing the new image", true)],
        template: "Replace an image on the page {page} with one matching \"{image}\".\n\
            1. getPage {\"slug\": \"{page}\", \"includeContent\": true} to find the section and the image field (e.g. backgroundImage).\n\
            2. getImage {\"query\": \"{image}\"} and pick the best match by alt text.\n\
            3. updateSection with pageSectionId, imageId and imageField; nothing else changes.\n\
            4. getSection {\"pageSectionId\": ..., \"includeContent\": true} and report the new image url.",
    },
];

/// The prompts offered.
pub fn list() -> Vec<Prompt> {
    WORKFLOWS
        .iter()
        .map(|w| {
            let args = w
                .arguments
                .iter()
                .map(|(n, d, req)| PromptArgument::new(*n).with_description(*d).with_required(*req))
                .collect();
            Prompt::new(w.name, Some(w.description), Some(args))
        })
        .collect()
}

/// Errors unless a prompt named `prompt` exists and takes `argument`.
pub fn check_argument(prompt: &str, argument: &str) -> Result<(), ErrorData> {
    let workflow = WORKFLOWS
        .iter()
        .find(|w| w.name == prompt)
        .ok_or_else(|| ErrorData::invalid_params(format!("no prompt named \"{prompt}\""), None))?;
    if workflow.arguments.iter().any(|(name, _, _)| *name == argument) {
        return Ok(());
    }
    let accepted: Vec<&str> = workflow.arguments.iter().map(|(name, _, _)| *name).collect();
    Err(ErrorData::invalid_params(
        format!("prompt \"{prompt}\" has no argument \"{argument}\" (accepted: {})", accepted.join(", ")),
        None,
    ))
}

/// Every prompt's text with its placeholders left in, for checks of the
/// tools it names.
#[cfg(test)]
pub fn templates() -> impl Iterator<Item = &'static str> {
    WORKFLOWS.iter().map(|w| w.template)
}

/// A prompt filled with its arguments; a missing required one is an error that names it.
pub fn get(name: &str, args: &Map<String, Value>) -> Result<GetPromptResult, ErrorData> {
    let workflow = WORKFLOWS
        .iter()
        .find(|w| w.name == name)
        .ok_or_else(|| ErrorData::invalid_params(format!("no prompt named \"{name}\""), None))?;
    let mut text = workflow.template.to_string();
    for (arg, _, required) in workflow.arguments {
        let value = args.get(*arg).and_then(Value::as_str).map(str::to_string);
        let value = match (value, *required) {
            (Some(v), _) => v,
            (None, true) => return Err(ErrorData::invalid_params(format!("argument \"{arg}\" is required"), None)),
            (None, false) => match *arg {
                "slug" => quire_core::slug::slugify(args.get("topic").and_then(Value::as_str).unwrap_or("page")),
                "collectionSlug" => "blog".to_string(),
                _ => String::new(),
            },
        };
        text = text.replace(&format!("{{{arg}}}"), &value);
    }
    Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).with_description(workflow.description))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fills_arguments_and_names_missing_ones() {
        let args = json!({"topic": "Spring Sale"}).as_object().cloned().unwrap();
        let prompt = get("create-landing-page", &args).unwrap();
        let text = serde_json::to_string(&prompt).unwrap();
        assert!(text.contains("Spring Sale (slug: spring-sale)"), "{text}");
        let err = get("replace-image-on-page", &args).unwrap_err();
        assert!(err.message.contains("\"page\" is required"));
        assert!(get("nope", &args).is_err());
        assert_eq!(list().len(), 3);
    }
}
