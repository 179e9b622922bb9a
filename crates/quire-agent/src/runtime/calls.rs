//! The model's tool calls: one run through the registry (or paused for a
//! person), one answered after a pause, and what a result changes in the
//! session (working memory, change notices).

use super::Runtime;
use super::error::CallError;
use crate::memory;
use crate::message::{Message, ToolCall};
use crate::prompt;
use chrono::{DateTime, Utc};
use quire_core::model::{Agent, AgentPolicy, AgentSession};
use quire_tools::{Approval, CallContext, Category, Tool};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tracing::Instrument;

/// A call waiting for a person (a destructive one, or one their approval
/// preferences ask about).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PendingCall {
    /// The model's tool call id.
    pub tool_call_id: String,
    /// The tool.
    pub tool: String,
    /// The exact arguments.
    pub arguments: Value,
    /// The approval record (a confirmation) to answer.
    pub approval_id: String,
    /// What would change, in words.
    pub message: String,
    /// What would change, record by record.
    pub items: Value,
    /// When the request lapses.
    pub expires_at: Option<DateTime<Utc>>,
}

/// The calls a paused session waits on.
pub(super) fn waiting_calls(session: &AgentSession) -> Vec<PendingCall> {
    serde_json::from_value(session.pending.clone()).unwrap_or_default()
}

/// What became of a call that waited for a person.
#[derive(Debug)]
pub(super) enum Answer {
    /// It runs now, with its approval.
    Approved,
    /// It never runs (rejected, expired): the model is told why.
    Refused(CallError),
}

/// What one tool call of the model came to.
pub(super) enum CallOutcome {
    /// It ran (or was refused): its result, and the final answer when it
    /// was finalAnswer.
    Result { content: Value, is_error: bool, final_answer: Option<String> },
    /// It waits for a person.
    Pending(PendingCall),
}

/// Whether a tool's result says it failed.
fn failed(result: &Value) -> bool {
    result.get("success").and_then(Value::as_bool) == Some(false)
}

impl Runtime {
    /// Runs one tool call of the model.
    pub(super) async fn tool_call(
        &self,
        ctx: &CallContext,
        session: &mut AgentSession,
        agent: &Agent,
        call: &ToolCall,
    ) -> CallOutcome {
        let error = |e: CallError| CallOutcome::Result { content: e.to_json(), is_error: true, final_answer: None };
        let Some(tool) = self.registry.get(&call.name) else {
            return error(CallError::UnknownTool(call.name.clone()));
        };
        if !prompt::enabled(agent, tool) {
            return error(CallError::NotEnabled { tool: tool.name, agent: agent.alias.clone() });
        }
        let mut args = match call.parsed_arguments() {
            Ok(v) => v,
            Err(e) => return error(CallError::BadArguments(e)),
        };
        // Approval is the runtime's business, never the model's: under the
        // conversational policy the model may only say `confirmed: true`,
        // which counts once the person approved (see `answer_previews`). A
        // call that waits only because the person's approval preferences
        // ask for it pauses for them under either policy.
        let conversational =
            agent.approval_policy == AgentPolicy::Conversational && !tool.sends_out() && tool.destructive;
        let mut approval = None;
        if let Some(obj) = args.as_object_mut() {
            obj.remove("confirmationId");
            if obj.remove("confirmed") == Some(Value::Bool(true)) && conversational {
                approval = Some(Approval::Confirmed);
            }
        }
        if !session.active_tools.iter().any(|n| n == tool.name) && tool.category != Category::Default {
            // An enabled tool called before discovery: allowed, and now active.
            session.active_tools.push(tool.name.to_string());
        }
        let outcome = self
            .registry
            .run(ctx, tool.name, args.clone(), approval.as_ref())
            .instrument(tracing::info_span!("registry_call"))
            .await;
        let result = match outcome {
            Ok(quire_tools::Outcome::NeedsApproval(preview)) if !conversational => {
                return CallOutcome::Pending(PendingCall {
                    tool_call_id: call.id.clone(),
                    tool: tool.name.to_string(),
                    arguments: args,
                    approval_id: preview.confirmation_id,
                    message: preview.message,
                    items: preview.items,
                    expires_at: Some(preview.expires_at),
                });
            }
            Ok(outcome) => outcome.into_json(),
            Err(e) => e.to_json(),
        };
        let failed = failed(&result);
        let mut final_answer = None;
        if !failed {
            match tool.name {
                "searchTools" => {
                    for name in result.get("tools").and_then(Value::as_array).into_iter().flatten() {
                        if let Some(name) = name.get("name").and_then(Value::as_str)
                            && !session.active_tools.iter().any(|n| n == name)
                        {
                            session.active_tools.push(name.to_string());
                        }
                    }
                }
                "acknowledgeRequest" | "finalAnswer" => {
                    let text = result.get("message").and_then(Value::as_str).unwrap_or_default().to_string();
                    self.emit_text(&session.id, &text);
                    if tool.name == "finalAnswer" {
                        final_answer = Some(text);
                    }
                }
                _ => {}
            }
            self.after_tool(session, tool.name, &result);
        }
        CallOutcome::Result { content: result, is_error: failed, final_answer }
    }

    /// The result of a call that waited for a person, now they answered:
    /// an approved call runs with its approval, a refused one tells the
    /// model why. Emitted, and answered as the tool message.
    pub(super) async fn answered_call(
        &self,
        ctx: &CallContext,
        session: &mut AgentSession,
        pending: PendingCall,
        answer: Answer,
    ) -> Message {
        let (content, is_error) = match answer {
            Answer::Approved => {
                let approval = Approval::Confirmation(pending.approval_id.clone());
                let result = match self.registry.run(ctx, &pending.tool, pending.arguments, Some(&approval)).await {
                    Ok(outcome) => outcome.into_json(),
                    Err(e) => e.to_json(),
                };
                let failed = failed(&result);
                if !failed {
                    self.after_tool(session, &pending.tool, &result);
                }
                (result, failed)
            }
            Answer::Refused(why) => (why.to_json(), true),
        };
        self.tool_result(&session.id, &pending.tool_call_id, &pending.tool, &content, is_error)
    }

    /// Working memory and change notices after a successful tool result.
    fn after_tool(&self, session: &mut AgentSession, tool_name: &str, result: &Value) {
        let Some(tool) = self.registry.get(tool_name) else { return };
        let thread = &session.id;
        memory::remember(&mut session.memory, tool.entity.as_str(), result);
        if tool_name == "openNote" {
            self.hub.emit(
                thread,
                "CUSTOM",
                json!({ "name": "open", "value": result.get("item").cloned().unwrap_or(Value::Null) }),
            );
        }
        // Values proposed for the form on the person's screen: their
        // screen shows each in its field, to keep or discard.
        if tool_name == "proposeFormValues" {
            let value = json!({ "values": result.get("values"), "reason": result.get("reason") });
            self.hub.emit(thread, "CUSTOM", json!({ "name": "form_values_proposed", "value": value }));
        }
        if !tool.read_only && tool.category != Category::Default {
            for changed in changed_records(tool, result) {
                self.hub.emit(thread, "CUSTOM", json!({ "name": "entity_changed", "value": changed }));
            }
        }
    }
}

/// What a successful write changed, one `entity_changed` value per
/// record: the record it answered (`item`), or each record a delete
/// archived or a restore brought back (an archive answer names records, and
/// the archive's own id is never one of them).
fn changed_records(tool: &Tool, result: &Value) -> Vec<Value> {
    let archived = memory::archived_records(result);
    if !archived.is_empty() {
        return archived
            .into_iter()
            .map(|(entity, id, label)| {
                json!({ "tool": tool.name, "entity": entity, "id": id, "label": label, "pageId": Value::Null })
            })
            .collect();
    }
    let Some(id) = ["/item/id", "/item/pageSectionId", "/item/path"].iter().find_map(|p| result.pointer(p)) else {
        return Vec::new();
    };
    let label = ["/item/name", "/item/title", "/item/label", "/item/path"]
        .iter()
        .find_map(|p| result.pointer(p))
        .cloned()
        .unwrap_or(Value::Null);
    vec![json!({
        "tool": tool.name,
        "entity": tool.entity,
        "id": id,
        "label": label,
        // A section's page, so a screen showing the page can tell.
        "pageId": result.pointer("/item/pageId").cloned().unwrap_or(Value::Null),
    })]
}
