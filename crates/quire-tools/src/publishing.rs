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

/// The kind and names `action` works on: the documents named, or with a
/// `locale` other than the site's default, their translations into it
/// (each published, taken off or discarded on its own, as over REST).
async fn targets(call: &Call<'_>, a: &PublishingArgs) -> Result<(EntityKind, Vec<String>), ToolError> {
    require_ids(&a.ids, "ids")?;
    let Some(locale) = crate::locales::asked(call, a.locale.as_deref()).await? else {
        return Ok((a.entity.kind(), a.ids.clone()));
    };
    let mut ids = Vec::with_capacity(a.ids.len());
    for name in &a.ids {
        match call.store().translation_of(call.scope(), a.entity.kind(), name, &locale.tag).await? {
            Some(id) => ids.push(id),
            None => {
                return Err(ToolError::invalid(
                    format!("ids: {name} has no translation into {}", locale.tag),
                    format!("Write it first: the update tool with locale {}.", locale.tag),
                ));
            }
        }
    }
    Ok((EntityKind::Translation, ids))
}

/// What `action` would change, for the person who approves.
pub(crate) async fn preview(call: &Call<'_>, a: PublishingArgs, action: PublishAction) -> Result<Preview, ToolError> {
    let (kind, ids) = targets(call, &a).await?;
    let (previews, fingerprint) = call.store().publishing_preview(call.scope(), kind, &ids).await?;
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
    let (kind, ids) = targets(call, &a).await?;
    let ctx = call.ctx.change_context();
    let done = call.store().publishing(&ctx, call.scope(), action, kind, &ids, call.approved).await?;
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

/// Adds to each listed record, a document of `kind` read by id or slug,
/// where it stands with the public site (`publication: { published,
/// changed }`) and, on a site of more than one locale, with its locales
/// (`locales`: which it has a translation in, which of those are on the
/// public site, which it lacks, and which went stale since the default
/// locale's values changed); both from one read of the store.
pub(crate) async fn with_standing(call: &Call<'_>, kind: EntityKind, mut listed: Value) -> ToolResult {
    for item in listed["items"].as_array_mut().into_iter().flatten() {
        let Some(id) = item["id"].as_str() else { continue };
        let (publication, t) = call.store().standing(call.scope(), kind, id).await?;
        item["publication"] = json!(publication);
        // Each of a site's other locales is translated or missing: neither
        // means the site has one locale.
        if t.translations.is_empty() && t.missing.is_empty() {
            continue;
        }
        let tags = |published: bool| -> Vec<&str> {
            t.translations.iter().filter(|s| !published || s.published).map(|s| s.translation.locale.as_str()).collect()
        };
        item["locales"] = json!({
            "default": t.default_locale,
            "translated": tags(false),
            "published": tags(true),
            "missing": t.missing,
            "stale": t.stale,
        });
    }
    Ok(listed)
}
