//! Release tools: getRelease, createRelease, updateRelease, publishRelease,
//! revertRelease, discardRelease. A release is a named set of documents
//! published together, in one transaction, and reverted together; its
//! publish and its revert change the public site, so each first previews
//! (every document's differences and conflicts) and runs once a person
//! approves.

use crate::catalog::{CreateReleaseArgs, GetReleaseArgs, ReleaseIdArgs, UpdateReleaseArgs};
use crate::params::{ItemAction, ReleaseDocumentArg, StateArg};

use crate::tool::*;
use quire_core::access::{Permission, authorize};
use quire_core::model::{EntityKind, ReleaseAction, ReleaseState};
use quire_store::{ReleasePatch, Stage};
use serde_json::json;

impl ReleaseDocumentArg {
    fn stage(self) -> Stage {
        let action = match self.action.unwrap_or(ItemAction::Publish) {
            ItemAction::Publish => ReleaseAction::Publish,
            ItemAction::Unpublish => ReleaseAction::Unpublish,
            ItemAction::Archive => ReleaseAction::Archive,
        };
        Stage {
            entity: self.entity.kind(),
            name: self.id,
            action,
            keep: self.keep.unwrap_or(false),
            locale: self.locale,
        }
    }
}

/// Refuses unless the caller may do `action` to documents of `kind`: publish
/// that kind (and archive it, for an archive), as the REST routes decide.
fn may(call: &Call<'_>, kind: EntityKind, action: ReleaseAction) -> Result<(), ToolError> {
    let principal = call.ctx.principal();
    let refused = |e: quire_core::access::Refusal| {
        ToolError::new(ErrorCode::Forbidden, e.message, "Ask a person who may publish these documents.")
    };
    authorize(&principal, Permission::Publish(kind)).map_err(refused)?;
    if action == ReleaseAction::Archive {
        authorize(&principal, Permission::Delete(kind)).map_err(refused)?;
    }
    Ok(())
}

/// Refuses unless the caller may do what release `id` does to each of its
/// documents.
async fn may_all(call: &Call<'_>, id: &str) -> Result<(), ToolError> {
    for item in call.store().release(call.scope(), id).await?.items {
        may(call, item.entity, item.action)?;
    }
    Ok(())
}

fn state(s: StateArg) -> ReleaseState {
    match s {
        StateArg::Open => ReleaseState::Open,
        StateArg::Scheduled => ReleaseState::Scheduled,
        StateArg::Published => ReleaseState::Published,
        StateArg::Reverted => ReleaseState::Reverted,
        StateArg::Discarded => ReleaseState::Discarded,
    }
}

pub(crate) async fn get(call: &Call<'_>, a: GetReleaseArgs) -> ToolResult {
    if let Some(id) = a.id {
        let (review, _) = call.store().release_review(call.scope(), &id).await?;
        return Ok(json!({ "success": true, "release": review.release, "items": review.items }));
    }
    let releases = call.store().releases(call.scope(), a.state.map(state)).await?;
    Ok(json!({ "success": true, "count": releases.len(), "items": releases }))
}

async fn stage_all(call: &Call<'_>, id: &str, documents: Vec<ReleaseDocumentArg>) -> ToolResult {
    let ctx = call.ctx.change_context();
    let stages: Vec<Stage> = documents.into_iter().map(ReleaseDocumentArg::stage).collect();
    for stage in &stages {
        may(call, stage.entity, stage.action)?;
    }
    let mut release = json!(null);
    for stage in stages {
        release = json!(call.store().stage(&ctx, call.scope(), id, stage).await?);
    }
    Ok(release)
}

pub(crate) async fn create(call: &Call<'_>, a: CreateReleaseArgs) -> ToolResult {
    let ctx = call.ctx.change_context();
    let release = call.store().create_release(&ctx, call.scope(), &a.name, a.description.as_deref()).await?;
    Ok(json!({
        "success": true,
        "message": format!("Made release \"{}\"; add documents with updateRelease.", release.name),
        "release": release,
    }))
}

pub(crate) async fn update(call: &Call<'_>, a: UpdateReleaseArgs) -> ToolResult {
    let ctx = call.ctx.change_context();
    let (store, scope) = (call.store(), call.scope());
    let mut release = json!(store.release(scope, &a.id).await?);
    if a.name.is_some() || a.description.is_some() {
        let patch = ReleasePatch { name: a.name, description: a.description };
        release = json!(store.update_release(&ctx, scope, &a.id, patch).await?);
    }
    for removed in a.remove.unwrap_or_default() {
        let kind = removed.entity.kind();
        may(call, kind, ReleaseAction::Publish)?;
        release = json!(store.unstage(&ctx, scope, &a.id, kind, &removed.id, removed.locale.as_deref()).await?);
    }
    let added = a.add.unwrap_or_default();
    if !added.is_empty() {
        release = stage_all(call, &a.id, added).await?;
    }
    Ok(json!({ "success": true, "release": release }))
}

/// What publishing (or reverting) the release would change, for the
/// person who approves.
pub(crate) async fn preview(call: &Call<'_>, a: ReleaseIdArgs, verb: &str) -> Result<Preview, ToolError> {
    may_all(call, &a.id).await?;
    let (review, fingerprint) = call.store().release_review(call.scope(), &a.id).await?;
    let said: Vec<String> = review
        .items
        .iter()
        .map(|i| {
            let conflict = i.conflict.as_deref().map(|c| format!(" — conflict: {c}")).unwrap_or_default();
            format!("{} {} {} ({} record(s) differ){conflict}", i.action, i.entity, i.label, i.differences.len())
        })
        .collect();
    Ok(Preview {
        message: format!("Would {verb} release \"{}\": {}.", review.release.name, said.join("; ")),
        items: serde_json::to_value(&review.items).unwrap_or_default(),
        fingerprint,
    })
}

pub(crate) async fn publish(call: &Call<'_>, a: ReleaseIdArgs) -> ToolResult {
    may_all(call, &a.id).await?;
    let ctx = call.ctx.change_context();
    let release = call.store().publish_release(&ctx, call.scope(), &a.id, call.approved).await?;
    Ok(json!({
        "success": true,
        "release": release,
        "message": format!("Published release \"{}\": {} document(s).", release.name, release.items.len()),
    }))
}

pub(crate) async fn revert(call: &Call<'_>, a: ReleaseIdArgs) -> ToolResult {
    may_all(call, &a.id).await?;
    let ctx = call.ctx.change_context();
    let release = call.store().revert_release(&ctx, call.scope(), &a.id, call.approved).await?;
    Ok(json!({
        "success": true,
        "release": release,
        "message": format!("Reverted release \"{}\": what was public before it is public again.", release.name),
    }))
}

pub(crate) async fn discard(call: &Call<'_>, a: ReleaseIdArgs) -> ToolResult {
    let ctx = call.ctx.change_context();
    let release = call.store().discard_release(&ctx, call.scope(), &a.id).await?;
    Ok(json!({ "success": true, "release": release }))
}
