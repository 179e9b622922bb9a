//! Publishing tools: publishContent, unpublishContent, discardDraft. Every
//! write of a tool changes a draft; these change what the public site
//! shows, so each first previews (the differences record by record and
//! field by field) and runs once a person approves, as archiving does.

use crate::archive::require_ids;
use crate::catalog::PublishingArgs;
use crate::params::DocumentKind;
use crate::tool::*;
use quire_core::model::EntityKind;
use quire_store::PublishAction;
use serde_json::{Value, json};

impl DocumentKind {
    pub(crate) fn kind(self) -> EntityKind {
        match self {
            DocumentKind::Page => EntityKind::Page,
            DocumentKind::Post | DocumentKind::Entry => EntityKind::Entry,
            DocumentKind::Navigation => EntityKind::Navigation,
        }
    }
}

/// What `action` would change, for the person who approves.
pub(crate) async fn preview(call: &Call<'_>, a: PublishingArgs, action: PublishAction) -> Result<Preview, ToolError> {
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
pub(crate) async fn execute(call: &Call<'_>, a: PublishingArgs, action: PublishAction) -> ToolResult {
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
