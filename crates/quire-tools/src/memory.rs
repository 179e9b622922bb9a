//! What agents keep: contexts (getContext, createContext, updateContext,
//! deleteContext) and workspaces (getWorkspace, saveWorkspace,
//! loadWorkspace, deleteWorkspace). Both are records of the store, so each
//! change is logged and undone, and a delete archives.

use crate::archive::{archive_execute, archive_preview};
use crate::catalog::{
    CreateContextArgs, DeleteContextArgs, DeleteWorkspaceArgs, GetContextArgs, GetWorkspaceArgs, LoadWorkspaceArgs,
    SaveWorkspaceArgs, UpdateContextArgs,
};
use crate::scope::{limit, select_one};
use crate::tool::*;
use quire_core::input::{ContextPatch, NewContext, WorkspaceInput};
use quire_core::model::{Context, EntityKind, Workspace};
use serde_json::{Value, json};

/// A context as listed: what it is and when to use it, without its text.
fn context_listed(c: &Context) -> Value {
    json!({ "id": c.id, "key": c.key, "name": c.name, "description": c.description, "version": c.version })
}

/// A context whole.
fn context_json(c: &Context) -> Value {
    let mut out = context_listed(c);
    out["body"] = json!(c.body);
    out
}

pub(crate) async fn get_context(call: &Call<'_>, a: GetContextArgs) -> ToolResult {
    let sel = select_one(&[("id", a.id.is_some()), ("all", a.all == Some(true))])?;
    if sel.0 == "id" {
        let c = call.store().context(call.scope(), a.id.as_deref().unwrap_or_default()).await?;
        return Ok(items_result(vec![context_json(&c)], None));
    }
    let all = call.store().contexts(call.scope()).await?;
    Ok(items_result(all.iter().map(context_listed).collect(), None))
}

pub(crate) async fn create_context(call: &Call<'_>, a: CreateContextArgs) -> ToolResult {
    let CreateContextArgs { key, name, description, body } = a;
    let input = NewContext { key, name, description, body };
    let c = call.store().create_context(&call.ctx.change_context(), call.scope(), input).await?;
    let msg = format!("Created the context {} ({}). Attach it to an agent or choose it for a turn.", c.key, c.name);
    Ok(item_result(context_json(&c), msg))
}

pub(crate) async fn update_context(call: &Call<'_>, a: UpdateContextArgs) -> ToolResult {
    let UpdateContextArgs { id, version, name, description, body } = a;
    let patch = ContextPatch { name, description, body };
    let c = call.store().update_context(&call.ctx.change_context(), call.scope(), &id, patch, version).await?;
    Ok(item_result(context_json(&c), format!("Updated the context {}.", c.key)))
}

pub(crate) async fn delete_context(call: &Call<'_>, a: DeleteContextArgs) -> ToolResult {
    archive_execute(call, EntityKind::Context, &a.ids, "context").await
}

pub(crate) async fn preview_delete_context(call: &Call<'_>, a: DeleteContextArgs) -> Result<Preview, ToolError> {
    archive_preview(call, EntityKind::Context, &a.ids, "context").await
}

fn workspace_json(w: &Workspace) -> Value {
    serde_json::to_value(w).unwrap_or_default()
}

pub(crate) async fn get_workspace(call: &Call<'_>, a: GetWorkspaceArgs) -> ToolResult {
    let sel = select_one(&[("id", a.id.is_some()), ("all", a.all == Some(true))])?;
    if sel.0 == "id" {
        let w = call.store().workspace(call.scope(), a.id.as_deref().unwrap_or_default()).await?;
        return Ok(items_result(vec![workspace_json(&w)], None));
    }
    let n = limit(a.limit, 20, 100)?;
    let all = call.store().workspaces(call.scope(), i64::from(n)).await?;
    Ok(items_result(all.iter().map(workspace_json).collect(), None))
}

pub(crate) async fn save_workspace(call: &Call<'_>, a: SaveWorkspaceArgs) -> ToolResult {
    let SaveWorkspaceArgs { name, goal, summary, records, notes, version } = a;
    if name.trim().is_empty() {
        return Err(ToolError::invalid("name: required", "Name the work, e.g. \"spring campaign\"."));
    }
    let input = WorkspaceInput { name, goal, summary, records, notes };
    let (w, created) = call.store().save_workspace(&call.ctx.change_context(), call.scope(), input, version).await?;
    let msg = if created {
        format!("Saved the workspace \"{}\"; loadWorkspace picks it up in a later session.", w.name)
    } else {
        format!("Updated the workspace \"{}\" (version {}).", w.name, w.version)
    };
    Ok(item_result(workspace_json(&w), msg))
}

pub(crate) async fn load_workspace(call: &Call<'_>, a: LoadWorkspaceArgs) -> ToolResult {
    let w = call.store().workspace(call.scope(), &a.id).await?;
    let labels = call.store().live_labels(call.scope(), &w.records).await?;
    let records: Vec<Value> = w
        .records
        .iter()
        .zip(&labels)
        .map(|(r, label)| match label {
            Some(label) => json!({ "kind": r.kind, "id": r.id, "label": label, "live": true }),
            None => json!({ "kind": r.kind, "id": r.id, "live": false }),
        })
        .collect();
    let gone = records.iter().filter(|r| r["live"] == json!(false)).count();
    let mut item = workspace_json(&w);
    item["records"] = json!(records);
    let mut msg = format!("Loaded the workspace \"{}\", saved {}.", w.name, w.updated_at.format("%Y-%m-%d %H:%M UTC"));
    if gone > 0 {
        msg.push_str(&format!(" {gone} of its records are archived or gone (live: false)."));
    }
    Ok(item_result(item, msg))
}

pub(crate) async fn delete_workspace(call: &Call<'_>, a: DeleteWorkspaceArgs) -> ToolResult {
    archive_execute(call, EntityKind::Workspace, &a.ids, "workspace").await
}

pub(crate) async fn preview_delete_workspace(call: &Call<'_>, a: DeleteWorkspaceArgs) -> Result<Preview, ToolError> {
    archive_preview(call, EntityKind::Workspace, &a.ids, "workspace").await
}
