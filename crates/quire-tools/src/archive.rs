//! Archive tools: getArchive, restoreArchive.

use crate::catalog::{GetArchiveArgs, RestoreArchiveArgs};
use crate::params::ArchivedKind;
use crate::scope::{limit, select_one};
use crate::tool::*;
use quire_core::model::EntityKind;
use serde_json::{Value, json};

impl From<ArchivedKind> for EntityKind {
    fn from(k: ArchivedKind) -> Self {
        match k {
            ArchivedKind::Page => EntityKind::Page,
            ArchivedKind::Section => EntityKind::Section,
            ArchivedKind::SectionTemplate => EntityKind::SectionTemplate,
            ArchivedKind::Collection => EntityKind::Collection,
            ArchivedKind::Entry => EntityKind::Entry,
            ArchivedKind::Image => EntityKind::Image,
            ArchivedKind::Navigation => EntityKind::Navigation,
            ArchivedKind::NavItem => EntityKind::NavItem,
            ArchivedKind::Context => EntityKind::Context,
            ArchivedKind::Workspace => EntityKind::Workspace,
        }
    }
}

pub(crate) async fn get_archive(call: &Call<'_>, a: GetArchiveArgs) -> ToolResult {
    let sel = select_one(&[("id", a.id.is_some()), ("entity", a.entity.is_some()), ("all", a.all == Some(true))])?;
    let store = call.store();
    let (archives, next) = match sel.0 {
        "id" => (vec![store.archive_record(call.scope(), a.id.as_deref().unwrap_or_default()).await?], None),
        _ => {
            let l = store
                .archives(call.scope(), a.entity.map(Into::into), limit(a.limit, 20, 100)?, a.cursor.as_deref())
                .await?;
            (l.items, l.next_cursor)
        }
    };
    Ok(items_result(archives.iter().map(|a| serde_json::to_value(a).unwrap_or_default()).collect(), next))
}

pub(crate) async fn preview_restore(call: &Call<'_>, a: RestoreArchiveArgs) -> Result<Preview, ToolError> {
    require_ids(&a.ids, "ids")?;
    let store = call.store();
    // A dry run checks every conflict exactly as the real restore will.
    let archives = store.restore_checked(&call.ctx.change_context(), call.scope(), &a.ids, None, true).await?;
    let items: Vec<_> = archives.iter().flat_map(|a| a.items.iter().cloned()).collect();
    let fingerprint = store.fingerprint(call.scope(), &items).await?;
    let labels: Vec<String> = archives.iter().map(|a| format!("{} {}", a.entity, a.label)).collect();
    Ok(Preview {
        message: format!("Would restore {} ({} record(s) in all).", labels.join(", "), items.len()),
        items: serde_json::to_value(&items).unwrap_or_default(),
        fingerprint,
    })
}

pub(crate) async fn restore(call: &Call<'_>, a: RestoreArchiveArgs) -> ToolResult {
    let archives =
        call.store().restore_checked(&call.ctx.change_context(), call.scope(), &a.ids, call.approved, false).await?;
    let count: usize = archives.iter().map(|a| a.items.len()).sum();
    Ok(json!({
        "success": true,
        "count": archives.len(),
        "items": archives,
        "message": format!("Restored {} archive(s), {count} record(s) in all.", archives.len()),
    }))
}

/// Refuses an empty list of `what` (`ids`, `slugs`).
pub(crate) fn require_ids(ids: &[String], what: &str) -> Result<(), ToolError> {
    if ids.is_empty() {
        return Err(ToolError::invalid(
            format!("{what}: at least one"),
            format!("Pass {what} as an array, even for one."),
        ));
    }
    Ok(())
}

/// The preview of archiving `ids` (at least one) of `kind`, cascade included.
pub(crate) async fn archive_preview(
    call: &Call<'_>,
    kind: EntityKind,
    ids: &[String],
    noun: &str,
) -> Result<Preview, ToolError> {
    require_ids(ids, "ids")?;
    let groups = call.store().archive_preview(call.scope(), kind, ids).await?;
    let all: Vec<_> = groups.iter().flatten().cloned().collect();
    let fingerprint = call.store().fingerprint(call.scope(), &all).await?;
    let roots = groups.len();
    let extra = all.len() - roots;
    let labels: Vec<String> = groups.iter().map(|g| g[0].label.clone()).collect();
    let message = if extra > 0 {
        format!("Would archive {roots} {noun}(s) ({}) and {extra} record(s) that go with them.", labels.join(", "))
    } else {
        format!("Would archive {roots} {noun}(s): {}.", labels.join(", "))
    };
    Ok(Preview { message, items: serde_json::to_value(&all).unwrap_or_default(), fingerprint })
}

/// Archives after approval, refusing if anything changed since the preview.
pub(crate) async fn archive_execute(call: &Call<'_>, kind: EntityKind, ids: &[String], noun: &str) -> ToolResult {
    let archives =
        call.store().archive_checked(&call.ctx.change_context(), call.scope(), kind, ids, call.approved).await?;
    let count: usize = archives.iter().map(|a| a.items.len()).sum();
    let items: Vec<Value> = archives.iter().map(|a| serde_json::to_value(a).unwrap_or_default()).collect();
    Ok(json!({
        "success": true,
        "count": items.len(),
        "items": items,
        "message": format!("Archived {} {noun}(s), {count} record(s) in all. Restore with restoreArchive.", archives.len()),
    }))
}
