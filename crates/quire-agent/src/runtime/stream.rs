//! A turn as AG-UI events: streamed model output, tool results, whole
//! texts and the start of a run.

use super::Runtime;
use crate::events::EventHub;
use crate::message::{Delta, Message};
use serde_json::{Value, json};

impl Runtime {
    /// Announces a run before it is spawned, so a client that subscribes
    /// after the request was answered sees this run as the latest.
    pub(super) fn run_started(&self, thread: &str) -> String {
        let run_id = uuid::Uuid::now_v7().to_string();
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
                self.hub.emit(
                    self.thread,
                    "TOOL_CALL_START",
                    json!({ "toolCallId": id, "toolCallName": name, "parentMessageId": self.text_id }),
                );
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
