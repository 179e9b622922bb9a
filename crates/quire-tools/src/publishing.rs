//! Publishing tools: publishContent, unpublishContent, discardDraft. Every
//! write of a tool changes a draft; these change what the public site
//! shows, so each first previews (the differences record by record and
//! field by field) and runs once a person approves, as archiving does.

use crate::archive::require_ids;
use crate::args::parse;
use crate::registry::schema;
use crate::subject::Subject;
use crate::tool::*;
use quire_core::model::EntityKind;
use quire_store::PublishAction;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

// What a publishing tool works on. Plain comments: doc comments would turn
// the schema's enum into a oneOf of described constants.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum DocumentKind {
    Page,
    Post,
    Entry,
    Navigation,
}

impl DocumentKind {
    pub(crate) fn kind(self) -> EntityKind {
        match self {
            DocumentKind::Page => EntityKind::Page,
            DocumentKind::Post | DocumentKind::Entry => EntityKind::Entry,
            DocumentKind::Navigation => EntityKind::Navigation,
        }
    }
}

/// Arguments of publishContent, unpublishContent and discardDraft.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublishingArgs {
    /// What the ids name: a page (published with its sections), a post or an entry, a navigation (with its items).
    pub entity: DocumentKind,
    /// Their ids (always an array); a page may be named by slug, a navigation by key.
    pub ids: Vec<String>,
}

/// What `action` would change, for the person who approves.
async fn preview(call: &Call<'_>, action: PublishAction, a: PublishingArgs) -> Result<Preview, ToolError> {
    require_ids(&a.ids, "ids")?;
    let (previews, fingerprint) = call.store().publishing_preview(call.scope(), a.entity.kind(), &a.ids).await?;
    let said: Vec<String> = previews
        .iter()
        .map(|p| match (action, p.publication.published) {
            (PublishAction::Publish, false) => format!("{} {} (not on the site yet)", p.entity, p.label),
            (PublishAction::Unpublish, _) => format!("{} {}", p.entity, p.label),
            _ => format!("{} {} ({} record(s) differ)", p.entity, p.label, p.differences.len()),
        })
        .collect();
    let verb = match action {
        PublishAction::Publish => "publish",
        PublishAction::Unpublish => "take off the public site",
        PublishAction::Discard => "discard the draft changes of",
    };
    Ok(Preview {
        message: format!("Would {verb} {}.", said.join(", ")),
        items: serde_json::to_value(&previews).unwrap_or_default(),
        fingerprint,
    })
}

/// Does `action` once approved, refusing if anything changed since the preview.
async fn execute(call: &Call<'_>, action: PublishAction, a: PublishingArgs) -> ToolResult {
    let ctx = call.ctx.change_context();
    let done = call.store().publishing(&ctx, call.scope(), action, a.entity.kind(), &a.ids, call.approved).await?;
    let what = match action {
        PublishAction::Publish => "Published",
        PublishAction::Unpublish => "Took off the site",
        PublishAction::Discard => "Discarded the draft changes of",
    };
    let items: Vec<_> = a.ids.iter().zip(&done).map(|(id, p)| json!({ "id": id, "publication": p })).collect();
    Ok(json!({
        "success": true,
        "count": items.len(),
        "items": items,
        "message": format!("{what} {} record(s).", items.len()),
    }))
}

/// Adds to each listed record, a document of `kind`, where it stands with
/// the public site (`publication: { published, changed }`): what a read of
/// one record by id or slug answers.
pub(crate) async fn with_publication(call: &Call<'_>, kind: EntityKind, mut listed: Value) -> ToolResult {
    for item in listed["items"].as_array_mut().into_iter().flatten() {
        if let Some(id) = item["id"].as_str() {
            item["publication"] = json!(call.store().publication(call.scope(), kind, id).await?);
        }
    }
    Ok(listed)
}

/// The publishing tools.
pub fn tools() -> Vec<Tool> {
    let base = || Tool::base(Category::Internal, Subject::Document, Effect::Destructive);
    vec![
        Tool {
            name: "publishContent",
            description: "Publish pages (with their sections), posts, entries or navigations by ids, making their drafts public; the first call only previews the differences. Nothing changes until a person approves.",
            guidance: "Writes only change drafts; publish what the person asked to go live.",
            tags: &["publish", "go live", "live", "release", "draft", "online"],
            phrases: &[
                "publish the page",
                "make it live",
                "put the post online",
                "release the changes",
                "publish the menu",
            ],
            input_schema: schema::<PublishingArgs>,
            execute: |call, v| Box::pin(async move { execute(call, PublishAction::Publish, parse(v)?).await }),
            preview: Some(|call, v| Box::pin(async move { preview(call, PublishAction::Publish, parse(v)?).await })),
            ..base()
        },
        Tool {
            name: "unpublishContent",
            description: "Take pages, posts, entries or navigations off the public site by ids, keeping their drafts; the first call only previews. Nothing changes until a person approves.",
            guidance: "The record stays, as a draft; deletePage and the like archive instead.",
            tags: &["unpublish", "take down", "offline", "withdraw"],
            phrases: &["take the page offline", "unpublish the post", "remove it from the site but keep it"],
            input_schema: schema::<PublishingArgs>,
            execute: |call, v| Box::pin(async move { execute(call, PublishAction::Unpublish, parse(v)?).await }),
            preview: Some(|call, v| Box::pin(async move { preview(call, PublishAction::Unpublish, parse(v)?).await })),
            ..base()
        },
        Tool {
            name: "discardDraft",
            description: "Discard the draft changes of published pages, posts, entries or navigations by ids, going back to what is published; the first call only previews. Nothing changes until a person approves.",
            guidance: "Only for records published before; each record goes back as a revision.",
            tags: &["discard", "draft", "throw away", "published version"],
            phrases: &["throw away my changes", "go back to the published version", "discard the draft"],
            input_schema: schema::<PublishingArgs>,
            execute: |call, v| Box::pin(async move { execute(call, PublishAction::Discard, parse(v)?).await }),
            preview: Some(|call, v| Box::pin(async move { preview(call, PublishAction::Discard, parse(v)?).await })),
            ..base()
        },
    ]
}
