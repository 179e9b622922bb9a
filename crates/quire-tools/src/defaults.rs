//! The default tools, always active: searchTools, acknowledgeRequest, finalAnswer.

use crate::catalog::{MessageArgs, SearchToolsArgs};
use crate::registry::permits;
use crate::scope::limit;
use crate::tool::*;
use serde_json::json;

/// Longest searchTools query accepted.
const MAX_QUERY: usize = 300;

pub(crate) async fn search_tools(call: &Call<'_>, a: SearchToolsArgs) -> ToolResult {
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
    let lexical = registry.search(&a.query);
    let (ranked, _) =
        crate::search::rank_tools(call.services.embedder.as_deref(), registry.tools(), lexical, &a.query).await;
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

/// acknowledgeRequest and finalAnswer: `what` names the message.
pub(crate) async fn message(_: &Call<'_>, a: MessageArgs, what: &str) -> ToolResult {
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
