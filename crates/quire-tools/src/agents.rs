//! Agent tools: getAgent, createAgent, updateAgent, archiveAgent.
//!
//! An agent's settings decide what runs without a person, so every change
//! to one is a destructive call: admins only (the access rules), previewed
//! with what it would become, and run once a person approves. The preview
//! checks everything the write will, so a call that cannot succeed is
//! refused before anyone is asked.

use crate::catalog::{ArchiveAgentArgs, CreateAgentArgs, GetAgentArgs, UpdateAgentArgs};
use crate::scope::select_one;
use crate::tool::*;
use quire_core::access::{Permission, authorize};
use quire_core::input::{AgentPatch, NewAgent};
use quire_core::model::{Agent, EntityKind};
use serde_json::{Value, json};

/// An agent as tools answer it.
fn agent_json(a: &Agent) -> Value {
    serde_json::to_value(a).unwrap_or_default()
}

/// One line of what an agent does, for a person deciding on it.
fn described(a: &Agent) -> String {
    let tools = if a.tools.is_empty() { "no tools beyond the defaults".to_string() } else { a.tools.join(", ") };
    let asks = match a.approval_policy {
        quire_core::model::AgentPolicy::User => "a person approves each destructive call",
        quire_core::model::AgentPolicy::Conversational => "a yes in the chat approves destructive calls",
    };
    let contexts =
        if a.contexts.is_empty() { String::new() } else { format!("; carries the contexts {}", a.contexts.join(", ")) };
    let state = if a.enabled { "" } else { "; disabled" };
    format!("{} ({}): tools {tools}; {asks}; writes {}{contexts}{state}", a.alias, a.name, a.write_mode)
}

pub(crate) async fn get(call: &Call<'_>, a: GetAgentArgs) -> ToolResult {
    let sel = select_one(&[("id", a.id.is_some()), ("all", a.all == Some(true))])?;
    let who = call.ctx.principal();
    if sel.0 == "id" {
        let agent = call.store().agent(call.scope(), a.id.as_deref().unwrap_or_default()).await?;
        // One the caller may not see is, to them, not there.
        if let Err(refused) = authorize(&who, Permission::SeeAgent(&agent)) {
            return Err(ToolError::new(ErrorCode::NotFound, refused.message, "List with getAgent all: true."));
        }
        return Ok(items_result(vec![agent_json(&agent)], None));
    }
    let agents = call.store().agents(call.scope()).await?;
    let seen: Vec<Value> =
        agents.iter().filter(|agent| authorize(&who, Permission::SeeAgent(agent)).is_ok()).map(agent_json).collect();
    Ok(items_result(seen, None))
}

fn new_agent(a: CreateAgentArgs) -> NewAgent {
    let CreateAgentArgs {
        alias,
        name,
        description,
        system_prompt,
        tools,
        pinned,
        allowed_groups,
        approval_policy,
        write_mode,
        contexts,
    } = a;
    NewAgent {
        alias,
        name,
        description,
        profile: None,
        system_prompt,
        tools,
        pinned,
        allowed_groups: allowed_groups.map(|g| g.into_iter().map(Into::into).collect()),
        approval_policy: approval_policy.map(Into::into),
        write_mode: write_mode.map(Into::into),
        enabled: None,
        contexts,
    }
}

/// Refuses what the store would refuse: the values' rules, an alias taken,
/// a context that is not there.
async fn check(call: &Call<'_>, agent: &Agent, before: Option<&Agent>) -> Result<(), ToolError> {
    Ok(call.store().check_agent(call.scope(), agent, before).await?)
}

pub(crate) async fn preview_create(call: &Call<'_>, a: CreateAgentArgs) -> Result<Preview, ToolError> {
    let agent = new_agent(a).into_agent(String::new(), chrono::Utc::now());
    check(call, &agent, None).await?;
    Ok(Preview {
        message: format!("Would create the agent {}.", described(&agent)),
        items: json!([{ "entity": "agent", "label": agent.alias, "after": agent_json(&agent) }]),
        fingerprint: Vec::new(),
    })
}

pub(crate) async fn create(call: &Call<'_>, a: CreateAgentArgs) -> ToolResult {
    let agent = call.store().create_agent(&call.ctx.change_context(), call.scope(), new_agent(a)).await?;
    Ok(item_result(agent_json(&agent), format!("Created the agent {}.", described(&agent))))
}

fn patch_of(a: UpdateAgentArgs) -> (String, Option<i64>, AgentPatch) {
    let UpdateAgentArgs {
        id,
        version,
        name,
        description,
        system_prompt,
        tools,
        pinned,
        allowed_groups,
        approval_policy,
        write_mode,
        contexts,
        enabled,
    } = a;
    let patch = AgentPatch {
        name,
        description,
        profile: None,
        system_prompt,
        tools,
        pinned,
        allowed_groups: allowed_groups.map(|g| g.into_iter().map(Into::into).collect()),
        approval_policy: approval_policy.map(Into::into),
        write_mode: write_mode.map(Into::into),
        enabled,
        contexts,
    };
    (id, version, patch)
}

/// The preview of changing agent `id` by `patch`: what it would become,
/// fingerprinted by the version it is at.
async fn preview_change(
    call: &Call<'_>,
    id: &str,
    version: Option<i64>,
    patch: &AgentPatch,
    verb: &str,
) -> Result<Preview, ToolError> {
    let current = call.store().agent(call.scope(), id).await?;
    if let Some(v) = version.filter(|v| *v != current.version) {
        return Err(ToolError::new(
            ErrorCode::Conflict,
            format!("agent {} is at version {}, not {v}", current.alias, current.version),
            "Read it again with getAgent.",
        ));
    }
    let next = patch.apply(&current);
    check(call, &next, Some(&current)).await?;
    let message = if next == current {
        format!("Would change nothing: the agent {} already is so.", current.alias)
    } else {
        format!("Would {verb} the agent {}; it would be: {}.", current.alias, described(&next))
    };
    Ok(Preview {
        message,
        items: json!([{ "entity": "agent", "id": current.id, "label": current.alias,
                        "before": agent_json(&current), "after": agent_json(&next) }]),
        fingerprint: vec![(EntityKind::Agent, current.id.clone(), current.version)],
    })
}

/// The version a change was approved at, else the one the caller read.
fn approved_version(call: &Call<'_>, read: Option<i64>) -> Option<i64> {
    call.approved.and_then(|f| f.iter().find(|(k, _, _)| *k == EntityKind::Agent).map(|(_, _, v)| *v)).or(read)
}

pub(crate) async fn preview_update(call: &Call<'_>, a: UpdateAgentArgs) -> Result<Preview, ToolError> {
    let (id, version, patch) = patch_of(a);
    preview_change(call, &id, version, &patch, "change").await
}

pub(crate) async fn update(call: &Call<'_>, a: UpdateAgentArgs) -> ToolResult {
    let (id, version, patch) = patch_of(a);
    let expected = approved_version(call, version);
    let agent = call.store().update_agent(&call.ctx.change_context(), call.scope(), &id, &patch, expected).await?;
    Ok(item_result(agent_json(&agent), format!("Updated the agent {}.", described(&agent))))
}

fn disabling() -> AgentPatch {
    AgentPatch { enabled: Some(false), ..AgentPatch::default() }
}

pub(crate) async fn preview_archive(call: &Call<'_>, a: ArchiveAgentArgs) -> Result<Preview, ToolError> {
    preview_change(call, &a.id, None, &disabling(), "archive (disable)").await
}

pub(crate) async fn archive(call: &Call<'_>, a: ArchiveAgentArgs) -> ToolResult {
    let expected = approved_version(call, None);
    let agent =
        call.store().update_agent(&call.ctx.change_context(), call.scope(), &a.id, &disabling(), expected).await?;
    Ok(item_result(
        agent_json(&agent),
        format!(
            "Archived the agent {}: it is disabled, its sessions stay. updateAgent with enabled: true brings it back.",
            agent.alias
        ),
    ))
}
