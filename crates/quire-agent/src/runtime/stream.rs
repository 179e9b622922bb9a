//! A turn as AG-UI 1.0 events: streamed model output, tool results, whole
//! texts, the start of a run and how it ended (the outcome objects and
//! interrupts of `@ag-ui/core`'s schemas; optional fields are left out
//! rather than null).

use super::Runtime;
use super::calls::PendingCall;
use crate::events::EventHub;
use crate::message::{Delta, Message};
use serde_json::{Value, json};

impl Runtime {
    /// Announces a run before it is spawned, so a client that subscribes
    /// after the request was answered sees this run as the latest. The run
    /// takes the id its caller chose (an AG-UI client's `runId`), or a new one.
    pub(super) fn run_started(&self, thread: &str, run_id: Option<String>) -> String {
        let run_id = run_id.unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
        self.hub.emit(thread, "RUN_STARTED", json!({ "threadId": thread, "runId": run_id }));
        run_id
    }

    /// A tool call's result (`content`, an error's when `is_error`) as a
    /// TOOL_CALL_RESULT event; answers it as the tool message.
    pub(super) fn tool_result(
        &self,
        thread: &str,
        call_id: &str,
        tool: &str,
        content: &Value,
        is_error: bool,
    ) -> Message {
        let text = content.to_string();
        self.hub.emit(
            thread,
            "TOOL_CALL_RESULT",
            json!({ "messageId": uuid::Uuid::now_v7().to_string(), "toolCallId": call_id, "content": text, "role": "tool" }),
        );
        Message::Tool { tool_call_id: call_id.to_string(), name: tool.to_string(), content: text, is_error }
    }

    /// A whole text message as events (final answers, notices).
    pub(super) fn emit_text(&self, thread: &str, text: &str) {
        let id = uuid::Uuid::now_v7().to_string();
        self.hub.emit(thread, "TEXT_MESSAGE_START", json!({ "messageId": id, "role": "assistant" }));
        self.hub.emit(thread, "TEXT_MESSAGE_CONTENT", json!({ "messageId": id, "delta": text }));
        self.hub.emit(thread, "TEXT_MESSAGE_END", json!({ "messageId": id }));
    }
}

/// Turns streamed pieces into AG-UI events.
pub(super) struct StreamState<'a> {
    hub: &'a EventHub,
    thread: &'a str,
    text_id: Option<String>,
    calls: Vec<String>,
}

impl<'a> StreamState<'a> {
    pub(super) fn new(hub: &'a EventHub, thread: &'a str) -> Self {
        StreamState { hub, thread, text_id: None, calls: Vec::new() }
    }

    /// Emits a piece as it arrives.
    pub(super) fn on(&mut self, delta: Delta) {
        match delta {
            Delta::Text(text) => {
                if text.is_empty() {
                    return;
                }
                let id = match &self.text_id {
                    Some(id) => id.clone(),
                    None => {
                        let id = uuid::Uuid::now_v7().to_string();
                        self.hub.emit(
                            self.thread,
                            "TEXT_MESSAGE_START",
                            json!({ "messageId": id, "role": "assistant" }),
                        );
                        self.text_id = Some(id.clone());
                        id
                    }
                };
                self.hub.emit(self.thread, "TEXT_MESSAGE_CONTENT", json!({ "messageId": id, "delta": text }));
            }
            Delta::ToolCallStart { index, id, name } => {
                if self.calls.len() <= index {
                    self.calls.resize(index + 1, String::new());
                }
                self.calls[index] = id.clone();
                let mut start = json!({ "toolCallId": id, "toolCallName": name });
                if let Some(text) = &self.text_id {
                    start["parentMessageId"] = json!(text);
                }
                self.hub.emit(self.thread, "TOOL_CALL_START", start);
            }
            Delta::ToolCallArgs { index, delta } => {
                if let Some(id) = self.calls.get(index).filter(|id| !id.is_empty()) {
                    self.hub.emit(self.thread, "TOOL_CALL_ARGS", json!({ "toolCallId": id, "delta": delta }));
                }
            }
        }
    }

    /// Ends the text and the tool calls the stream opened.
    pub(super) fn finish(&mut self) {
        if let Some(id) = self.text_id.take() {
            self.hub.emit(self.thread, "TEXT_MESSAGE_END", json!({ "messageId": id }));
        }
        for id in self.calls.drain(..).filter(|id| !id.is_empty()) {
            self.hub.emit(self.thread, "TOOL_CALL_END", json!({ "toolCallId": id }));
        }
    }
}

/// How a run that completed ended: `RUN_FINISHED`'s fields, with the
/// model's last text as the result.
pub(super) fn finished(thread: &str, run_id: &str, text: &str) -> Value {
    json!({ "threadId": thread, "runId": run_id, "outcome": { "type": "success" }, "result": { "text": text } })
}

/// How a run that paused for approvals ended: `RUN_FINISHED`'s fields, one
/// interrupt per waiting call (see [`interrupt`]).
pub(super) fn interrupted(thread: &str, run_id: &str, pending: &[PendingCall]) -> Value {
    json!({
        "threadId": thread, "runId": run_id,
        "outcome": { "type": "interrupt", "interrupts": pending.iter().map(interrupt).collect::<Vec<_>>() },
    })
}

/// What a person answers to an approval interrupt (`resume[].payload`).
fn answer_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "approved": { "type": "boolean", "description": "true runs the call exactly as shown; false refuses it" },
            "reason": { "type": "string", "description": "Why it was refused, passed on to the agent" },
        },
        "required": ["approved"],
    })
}

/// One call waiting for a person as an AG-UI interrupt: bound to its tool
/// call (`reason: "tool_call"`), its id the approval's, with the words a
/// person reads, when it lapses, and in `metadata` the tool, the exact
/// arguments and what would change record by record.
pub(super) fn interrupt(p: &PendingCall) -> Value {
    let mut interrupt = json!({
        "id": p.approval_id,
        "reason": "tool_call",
        "message": format!("Approve {}? {}", p.tool, p.message),
        "toolCallId": p.tool_call_id,
        "responseSchema": answer_schema(),
        "metadata": {
            "approvalId": p.approval_id,
            "tool": p.tool,
            "arguments": p.arguments,
            "items": p.items,
        },
    });
    if let Some(at) = p.expires_at {
        interrupt["expiresAt"] = json!(at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    }
    interrupt
}
