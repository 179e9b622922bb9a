//! Anthropic Messages: tool use as content blocks, tool results as user
//! blocks, usage from `message_start` and `message_delta`.

use super::sse::{events, is_event_stream};
use super::{
    ChatFuture, Profile, Provider, ProviderError, join, send_with_retry, whole_answer, with_tools_and_temperature,
};
use crate::message::*;
use futures_util::StreamExt;
use serde_json::{Map, Value, json};

/// The API version this adapter speaks.
const VERSION: &str = "2023-06-01";

/// A client of the Anthropic Messages API.
pub struct Anthropic {
    http: reqwest::Client,
    url: String,
    api_key: Option<String>,
    profile: Profile,
}

impl Anthropic {
    /// A client for the profile.
    pub fn new(profile: &Profile) -> Result<Self, ProviderError> {
        let base = profile.base_url.clone().unwrap_or_else(|| "https://api.anthropic.com".into());
        let url = if base.trim_end_matches('/').ends_with("/v1") {
            join(&base, "messages")
        } else {
            join(&base, "v1/messages")
        };
        Ok(Anthropic {
            http: super::http_client(profile)?,
            url,
            api_key: profile.api_key.clone(),
            profile: profile.clone(),
        })
    }
}

/// The request body of a Messages call. Adjacent messages of one role are
/// merged (tool results and the next user text share a user message), as
/// the API requires alternating roles.
pub fn body(request: &ChatRequest) -> Value {
    let mut merged: Vec<(&str, Vec<Value>)> = Vec::new();
    for m in &request.messages {
        let (role, blocks) = match m {
            Message::User { content } => ("user", vec![json!({ "type": "text", "text": content })]),
            Message::Assistant { content, tool_calls } => {
                let mut blocks = Vec::new();
                if !content.is_empty() {
                    blocks.push(json!({ "type": "text", "text": content }));
                }
                for c in tool_calls {
                    let input =
                        c.parsed_arguments().ok().filter(Value::is_object).unwrap_or_else(|| Value::Object(Map::new()));
                    blocks.push(json!({ "type": "tool_use", "id": c.id, "name": c.name, "input": input }));
                }
                ("assistant", blocks)
            }
            Message::Tool { tool_call_id, content, is_error, .. } => (
                "user",
                vec![
                    json!({ "type": "tool_result", "tool_use_id": tool_call_id, "content": content, "is_error": is_error }),
                ],
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match merged.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => merged.push((role, blocks)),
        }
    }
    let messages: Vec<Value> =
        merged.into_iter().map(|(role, content)| json!({ "role": role, "content": content })).collect();
    let body = json!({
        "model": request.model,
        "system": request.system,
        "messages": messages,
        "max_tokens": request.max_tokens,
        "stream": request.stream,
    });
    with_tools_and_temperature(
        body,
        request,
        |t| json!({ "name": t.name, "description": t.description, "input_schema": t.parameters }),
    )
}

fn parse_whole(v: &Value) -> Result<ChatResponse, ProviderError> {
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::Protocol("no content in the answer".into()))?;
    let mut answer = ChatResponse::default();
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => answer.text.push_str(b.get("text").and_then(Value::as_str).unwrap_or_default()),
            Some("tool_use") => answer.tool_calls.push(ToolCall {
                id: b.get("id").and_then(Value::as_str).unwrap_or_default().to_string(),
                name: b.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                arguments: b.get("input").map(Value::to_string).unwrap_or_else(|| "{}".into()),
            }),
            _ => {}
        }
    }
    answer.usage = Usage {
        input_tokens: v.pointer("/usage/input_tokens").and_then(Value::as_u64).unwrap_or(0),
        output_tokens: v.pointer("/usage/output_tokens").and_then(Value::as_u64).unwrap_or(0),
    };
    answer.finish_reason = v.get("stop_reason").and_then(Value::as_str).map(str::to_string);
    Ok(answer)
}

impl Provider for Anthropic {
    fn complete<'a>(&'a self, request: &'a ChatRequest, sink: &'a mut (dyn FnMut(Delta) + Send)) -> ChatFuture<'a> {
        Box::pin(async move {
            let body = body(request);
            let response = send_with_retry(&self.profile, || {
                let mut rb = self.http.post(&self.url).header("anthropic-version", VERSION).json(&body);
                if let Some(key) = self.api_key.as_deref().filter(|k| !k.is_empty()) {
                    rb = rb.header("x-api-key", key);
                }
                rb
            })
            .await?;
            if !request.stream || !is_event_stream(&response) {
                return whole_answer(response, parse_whole, sink).await;
            }
            let mut answer = ChatResponse::default();
            // Content block index → position in answer.tool_calls.
            let mut block_calls: Vec<Option<usize>> = Vec::new();
            let mut stream = Box::pin(events(response));
            while let Some(event) = stream.next().await {
                let event = event?;
                if event.data.trim().is_empty() {
                    continue;
                }
                let v: Value = serde_json::from_str(&event.data)
                    .map_err(|e| ProviderError::Protocol(format!("bad stream event: {e}")))?;
                let kind = v.get("type").and_then(Value::as_str).unwrap_or(event.event.as_str()).to_string();
                match kind.as_str() {
                    "message_start" => {
                        answer.usage.input_tokens =
                            v.pointer("/message/usage/input_tokens").and_then(Value::as_u64).unwrap_or(0);
                        answer.usage.output_tokens =
                            v.pointer("/message/usage/output_tokens").and_then(Value::as_u64).unwrap_or(0);
                    }
                    "content_block_start" => {
                        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
                        if block_calls.len() <= index {
                            block_calls.resize(index + 1, None);
                        }
                        let block = v.get("content_block").cloned().unwrap_or(Value::Null);
                        if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                            let position = answer.tool_calls.len();
                            let call = ToolCall {
                                id: block.get("id").and_then(Value::as_str).unwrap_or_default().to_string(),
                                name: block.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                                arguments: String::new(),
                            };
                            sink(Delta::ToolCallStart {
                                index: position,
                                id: call.id.clone(),
                                name: call.name.clone(),
                            });
                            answer.tool_calls.push(call);
                            block_calls[index] = Some(position);
                        } else if let Some(text) = block.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                            answer.text.push_str(text);
                            sink(Delta::Text(text.to_string()));
                        }
                    }
                    "content_block_delta" => {
                        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
                        let delta = v.get("delta").cloned().unwrap_or(Value::Null);
                        match delta.get("type").and_then(Value::as_str) {
                            Some("text_delta") => {
                                let text = delta.get("text").and_then(Value::as_str).unwrap_or_default();
                                answer.text.push_str(text);
                                sink(Delta::Text(text.to_string()));
                            }
                            Some("input_json_delta") => {
                                let part = delta.get("partial_json").and_then(Value::as_str).unwrap_or_default();
                                if let Some(Some(position)) = block_calls.get(index) {
                                    answer.tool_calls[*position].arguments.push_str(part);
                                    sink(Delta::ToolCallArgs { index: *position, delta: part.to_string() });
                                }
                            }
                            _ => {}
                        }
                    }
                    "message_delta" => {
                        if let Some(reason) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                            answer.finish_reason = Some(reason.to_string());
                        }
                        if let Some(out) = v.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                            answer.usage.output_tokens = out;
                        }
                        if let Some(input) = v.pointer("/usage/input_tokens").and_then(Value::as_u64) {
                            answer.usage.input_tokens = input;
                        }
                    }
                    "message_stop" => break,
                    "error" => {
                        return Err(ProviderError::Status {
                            status: 500,
                            message: v
                                .pointer("/error/message")
                                .and_then(Value::as_str)
                                .unwrap_or("error in stream")
                                .to_string(),
                        });
                    }
                    _ => {}
                }
            }
            for call in &mut answer.tool_calls {
                if call.arguments.trim().is_empty() {
                    call.arguments = "{}".into();
                }
            }
            Ok(answer)
        })
    }
}
