//! The default tools, always active: searchTools, acknowledgeRequest, finalAnswer.

use crate::args::parse;
use crate::registry::{permits, schema};
use crate::scope::limit;
use crate::subject::Subject;
use crate::tool::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Arguments of searchTools.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchToolsArgs {
    /// Keywords, e.g. "menu link".
    pub query: String,
    /// Default 8, max 20.
    pub limit: Option<u32>,
}

/// Arguments of acknowledgeRequest and finalAnswer.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageArgs {
    /// For the user.
    pub message: String,
}

/// Longest searchTools query accepted.
const MAX_QUERY: usize = 300;

async fn search_tools(call: &Call<'_>, a: SearchToolsArgs) -> ToolResult {
    if a.query.trim().is_empty() {
        return Err(ToolError::invalid("query: required", "Describe the capability, e.g. \"create blog post\"."));
    }
    if a.query.chars().count() > MAX_QUERY {
        return Err(ToolError::invalid(
            format!("query: at most {MAX_QUERY} characters"),
            "Use a few capability keywords.",
        ));
    }
    let n = limit(a.limit, 8, 20)? as usize;
    let registry = call.registry;
    let ranked = registry.search(&a.query);
    let found: Vec<&Tool> =
        ranked.into_iter().filter(|t| t.category != Category::Default && permits(call.ctx, t)).take(n).collect();
    if let Some(session) = &call.ctx.session_id {
        let names: Vec<&'static str> = found.iter().map(|t| t.name).collect();
        // Sessions are per caller: the same id from another token is another session.
        registry.activate(&session_key(call.ctx, session), &names);
    }
    let tools: Vec<_> = found.iter().map(|t| json!({ "name": t.name, "description": t.description })).collect();
    Ok(json!({ "success": true, "count": tools.len(), "tools": tools }))
}

async fn message(a: MessageArgs, what: &str) -> ToolResult {
    if a.message.trim().is_empty() {
        return Err(ToolError::invalid("message: required", format!("Write the {what} for the user.")));
    }
    Ok(json!({ "success": true, "message": a.message }))
}

/// The key a session's activated tools are kept under: scope, caller and
/// session id, so callers cannot read or extend each other's sessions.
pub fn session_key(ctx: &crate::CallContext, session: &str) -> String {
    actor_session_key(&ctx.scope, &ctx.actor, session)
}

/// [`session_key`] from its parts.
pub fn actor_session_key(scope: &quire_store::Scope, actor: &str, session: &str) -> String {
    format!("{}/{}/{actor}/{session}", scope.site_id, scope.env)
}

/// The default tools.
pub fn tools() -> Vec<Tool> {
    vec![
        Tool {
            name: "searchTools",
            description: "Find and activate more tools by entity and action words. Returns their names and descriptions.",
            guidance: "Search with entity + action words (\"update section\").",
            tags: &["tools", "search", "discover", "capability"],
            phrases: &["which tool can", "find a tool"],
            input_schema: schema::<SearchToolsArgs>,
            execute: |call, v| Box::pin(async move { search_tools(call, parse(v)?).await }),
            ..Tool::base(Category::Default, Subject::Tool, Effect::ReadOnly)
        },
        Tool {
            name: "acknowledgeRequest",
            description: "Tell the user in one sentence what you understood.",
            guidance: "Once per turn, first.",
            tags: &["acknowledge", "confirm", "understood"],
            phrases: &[],
            input_schema: schema::<MessageArgs>,
            execute: |_, v| Box::pin(async move { message(parse(v)?, "acknowledgement").await }),
            ..Tool::base(Category::Default, Subject::Conversation, Effect::ReadOnly)
        },
        Tool {
            name: "finalAnswer",
            description: "Give the user the final answer; ends the turn.",
            guidance: "Report only what fresh reads confirmed.",
            tags: &["answer", "done", "finish", "reply"],
            phrases: &[],
            input_schema: schema::<MessageArgs>,
            execute: |_, v| Box::pin(async move { message(parse(v)?, "answer").await }),
            ..Tool::base(Category::Default, Subject::Conversation, Effect::ReadOnly)
        },
    ]
}
