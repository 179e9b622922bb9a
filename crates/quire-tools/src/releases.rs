//! Release tools: getRelease, createRelease, updateRelease, publishRelease,
//! revertRelease, discardRelease. A release is a named set of documents
//! published together, in one transaction, and reverted together; its
//! publish and its revert change the public site, so each first previews
//! (every document's differences and conflicts) and runs once a person
//! approves.

use crate::args::parse;
use crate::publishing::DocumentKind;
use crate::registry::schema;
use crate::subject::Subject;
use crate::tool::*;
use quire_core::access::{Permission, authorize};
use quire_core::model::{EntityKind, ReleaseAction, ReleaseState};
use quire_store::{ReleasePatch, Stage};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

// What publishing the release does to a document. Plain comments: doc
// comments would turn the schema's enum into a oneOf of described constants.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ItemAction {
    Publish,
    Unpublish,
    Archive,
}

// Where a release stands (see ReleaseState).
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StateArg {
    Open,
    Scheduled,
    Published,
    Reverted,
    Discarded,
}

/// A document to put into a release.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReleaseDocumentArg {
    /// Its kind.
    pub entity: DocumentKind,
    /// Its id, a page's slug or a navigation's key.
    pub id: String,
    /// Default publish: a copy of its draft as it is now.
    pub action: Option<ItemAction>,
    /// Keep the release's copy (settles a conflict) rather than copying the draft anew.
    pub keep: Option<bool>,
}

impl ReleaseDocumentArg {
    fn stage(self) -> Stage {
        let action = match self.action.unwrap_or(ItemAction::Publish) {
            ItemAction::Publish => ReleaseAction::Publish,
            ItemAction::Unpublish => ReleaseAction::Unpublish,
            ItemAction::Archive => ReleaseAction::Archive,
        };
        Stage { entity: self.entity.kind(), name: self.id, action, keep: self.keep.unwrap_or(false) }
    }
}

/// Arguments of getRelease.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetReleaseArgs {
    /// A release's id: it with each document's differences and conflicts. Without it, the releases are listed.
    pub id: Option<String>,
    /// When listing: only releases in this state.
    pub state: Option<StateArg>,
}

/// Arguments of createRelease.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateReleaseArgs {
    /// Its name (`Spring launch`), up to 200 characters.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
}

/// Arguments of updateRelease.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateReleaseArgs {
    /// The release's id.
    pub id: String,
    /// A new name.
    pub name: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// Documents to put into it (again: copies their drafts anew).
    pub add: Option<Vec<ReleaseDocumentArg>>,
    /// Documents to take out of it.
    pub remove: Option<Vec<RemovedDocumentArg>>,
}

/// A document to take out of a release.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RemovedDocumentArg {
    /// Its kind.
    pub entity: DocumentKind,
    /// Its id.
    pub id: String,
}

/// Arguments of publishRelease, revertRelease and discardRelease.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReleaseIdArgs {
    /// The release's id.
    pub id: String,
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

async fn get(call: &Call<'_>, a: GetReleaseArgs) -> ToolResult {
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

async fn create(call: &Call<'_>, a: CreateReleaseArgs) -> ToolResult {
    let ctx = call.ctx.change_context();
    let release = call.store().create_release(&ctx, call.scope(), &a.name, a.description.as_deref()).await?;
    Ok(json!({
        "success": true,
        "message": format!("Made release \"{}\"; add documents with updateRelease.", release.name),
        "release": release,
    }))
}

async fn update(call: &Call<'_>, a: UpdateReleaseArgs) -> ToolResult {
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
        release = json!(store.unstage(&ctx, scope, &a.id, kind, &removed.id).await?);
    }
    let added = a.add.unwrap_or_default();
    if !added.is_empty() {
        release = stage_all(call, &a.id, added).await?;
    }
    Ok(json!({ "success": true, "release": release }))
}

/// What publishing (or reverting) the release would change, for the
/// person who approves.
async fn preview(call: &Call<'_>, a: ReleaseIdArgs, verb: &str) -> Result<Preview, ToolError> {
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

async fn publish(call: &Call<'_>, a: ReleaseIdArgs) -> ToolResult {
    may_all(call, &a.id).await?;
    let ctx = call.ctx.change_context();
    let release = call.store().publish_release(&ctx, call.scope(), &a.id, call.approved).await?;
    Ok(json!({
        "success": true,
        "release": release,
        "message": format!("Published release \"{}\": {} document(s).", release.name, release.items.len()),
    }))
}

async fn revert(call: &Call<'_>, a: ReleaseIdArgs) -> ToolResult {
    may_all(call, &a.id).await?;
    let ctx = call.ctx.change_context();
    let release = call.store().revert_release(&ctx, call.scope(), &a.id, call.approved).await?;
    Ok(json!({
        "success": true,
        "release": release,
        "message": format!("Reverted release \"{}\": what was public before it is public again.", release.name),
    }))
}

async fn discard(call: &Call<'_>, a: ReleaseIdArgs) -> ToolResult {
    let ctx = call.ctx.change_context();
    let release = call.store().discard_release(&ctx, call.scope(), &a.id).await?;
    Ok(json!({ "success": true, "release": release }))
}

/// The release tools.
pub fn tools() -> Vec<Tool> {
    let base = |effect| Tool::base(Category::Internal, Subject::Release, effect);
    vec![
        Tool {
            name: "getRelease",
            description: "Get a release by id with each document's differences against what is public and any conflict, or list the releases (by state).",
            guidance: "A conflict names a document changed since it was staged; stage it again or keep the release's copy.",
            tags: &["release", "launch", "bundle", "staged", "scheduled"],
            phrases: &["what is in the launch", "show the release", "list the releases", "what would go live"],
            input_schema: schema::<GetReleaseArgs>,
            execute: |call, v| Box::pin(async move { get(call, parse(v)?).await }),
            ..base(Effect::ReadOnly)
        },
        Tool {
            name: "createRelease",
            description: "Create an empty release: a named set of changes to publish together later, in one step. Nothing public changes.",
            guidance: "Add documents with updateRelease once their drafts are ready: it copies each draft as it is then.",
            tags: &["release", "launch", "bundle", "prepare", "together"],
            phrases: &["prepare a launch", "group these changes", "publish these together later", "make a release"],
            input_schema: schema::<CreateReleaseArgs>,
            execute: |call, v| Box::pin(async move { create(call, parse(v)?).await }),
            ..base(Effect::Write)
        },
        Tool {
            name: "updateRelease",
            description: "Rename a release or change which documents it holds (a copy of each draft as it is then, or to unpublish or archive); only before it is published.",
            guidance: "Adding a document again takes its current draft.",
            tags: &["release", "stage", "launch"],
            phrases: &["put this in the launch", "take it out of the release", "rename the release"],
            input_schema: schema::<UpdateReleaseArgs>,
            execute: |call, v| Box::pin(async move { update(call, parse(v)?).await }),
            ..base(Effect::Write)
        },
        Tool {
            name: "publishRelease",
            description: "Publish a release: all of its documents reach the public site in one step, or none when one conflicts; the first call only previews. Nothing changes until a person approves.",
            guidance: "Read getRelease first; conflicts must be settled before it can publish.",
            tags: &["release", "publish", "launch", "go live"],
            phrases: &["launch it", "publish the release", "ship the launch", "make the release live"],
            input_schema: schema::<ReleaseIdArgs>,
            execute: |call, v| Box::pin(async move { publish(call, parse(v)?).await }),
            preview: Some(|call, v| Box::pin(async move { preview(call, parse(v)?, "publish").await })),
            ..base(Effect::Destructive)
        },
        Tool {
            name: "revertRelease",
            description: "Revert a published release: what was public before it is public again, as one step; the first call only previews. Nothing changes until a person approves.",
            guidance: "Refused when a document of it was changed or published since.",
            tags: &["release", "revert", "roll back", "undo launch"],
            phrases: &["roll back the launch", "revert the release", "undo the release"],
            input_schema: schema::<ReleaseIdArgs>,
            execute: |call, v| Box::pin(async move { revert(call, parse(v)?).await }),
            preview: Some(|call, v| Box::pin(async move { preview(call, parse(v)?, "revert").await })),
            ..base(Effect::Destructive)
        },
        Tool {
            name: "discardRelease",
            description: "Discard a release that is not published: nothing of it is published, and it is kept, discarded, with its documents.",
            guidance: "Drafts are not touched; only the release is given up.",
            tags: &["release", "discard", "cancel", "give up"],
            phrases: &["cancel the launch", "drop the release", "forget this release"],
            input_schema: schema::<ReleaseIdArgs>,
            execute: |call, v| Box::pin(async move { discard(call, parse(v)?).await }),
            ..base(Effect::Write)
        },
    ]
}
