//! OpenAI-compatible chat completions. Parsed leniently: compatible servers
//! differ (empty `finish_reason`, missing usage, ignored `stream`).

use super::sse::{events, is_event_stream};
use super::{
    ChatFuture, Profile, Provider, ProviderError, join, send_with_retry, whole_answer, with_tools_and_temperature,
};
use crate::message::*;
use futures_util::StreamExt;
use serde_json::{Value, json};

/// A client of one OpenAI-compatible endpoint.
pub struct OpenAi {
    http: reqwest::Client,
    url: String,
    api_key: Option<String>,
    profile: Profile,
    limit: TokenLimit,
}

/// The request field that caps an answer's tokens. OpenAI deprecated
/// `max_tokens` for `max_completion_tokens`, which its reasoning models
/// (o-series, gpt-5) require, refusing `max_tokens`; most other
/// OpenAI-compatible servers (Ollama, vLLM, llama.cpp) know only
/// `max_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenLimit {
    /// `max_tokens`.
    MaxTokens,
    /// `max_completion_tokens`.
    MaxCompletionTokens,
}

impl TokenLimit {
    /// The field a profile's requests use: the one it names; unset,
    /// `max_completion_tokens` on OpenAI's own API (every model there takes
    /// it) and for an OpenAI reasoning model on any server (Azure and
    /// proxies serve them under the same names, and refuse `max_tokens`
    /// the same way), `max_tokens` otherwise.
    pub fn for_profile(profile: &Profile) -> Self {
        if let Some(named) = profile.max_tokens_field {
            return named;
        }
        let openai = profile
            .base_url
            .as_deref()
            .is_none_or(|base| reqwest::Url::parse(base).is_ok_and(|url| url.host_str() == Some("api.openai.com")));
        if openai || is_reasoning_model(&profile.model_name()) { Self::MaxCompletionTokens } else { Self::MaxTokens }
    }

    /// The field's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaxTokens => "max_tokens",
            Self::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// Whether `model` names one of OpenAI's reasoning models (`o1`, `o3-mini`,
/// `o4-mini`, `gpt-5`, `gpt-5-mini`, …), perhaps behind a provider prefix
/// (`openai/o3`, as routers name them).
fn is_reasoning_model(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    let o_series = name.strip_prefix('o').is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    o_series || name == "gpt-5" || name.starts_with("gpt-5-") || name.starts_with("gpt-5.")
}

impl OpenAi {
    /// A client for the profile.
    pub fn new(profile: &Profile) -> Result<Self, ProviderError> {
        let base = profile.base_url.clone().unwrap_or_else(|| "https://api.openai.com/v1".into());
        Ok(OpenAi {
            http: super::http_client(profile)?,
            url: join(&base, "chat/completions"),
            api_key: profile.api_key.clone(),
            profile: profile.clone(),
            limit: TokenLimit::for_profile(profile),
        })
    }
}

/// The request body of a chat completion, its token cap in `limit`'s field.
pub fn body(request: &ChatRequest, limit: TokenLimit) -> Value {
    let mut messages = vec![json!({ "role": "system", "content": request.system })];
    for m in &request.messages {
        messages.push(match m {
            Message::User { content } => json!({ "role": "user", "content": content }),
            Message::Assistant { content, tool_calls } => {
                let mut msg = json!({ "role": "assistant", "content": if content.is_empty() { Value::Null } else { json!(content) } });
                if !tool_calls.is_empty() {
                    msg["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } }))
                        .collect();
                }
                msg
            }
            Message::Tool { tool_call_id, content, .. } => {
                json!({ "role": "tool", "tool_call_id": tool_call_id, "content": content })
            }
        });
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": request.stream,
    });
    body[limit.as_str()] = json!(request.max_tokens);
    let mut body = with_tools_and_temperature(
        body,
        request,
        |t| json!({ "type": "function", "function": { "name": t.name, "description": t.description, "parameters": t.parameters } }),
    );
    if request.stream {
        body["stream_options"] = json!({ "include_usage": true });
    }
    body
}

fn usage_of(v: &Value) -> Option<Usage> {
    let u = v.get("usage").filter(|u| u.is_object())?;
    Some(Usage {
        input_tokens: u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
        output_tokens: u.get("completion_tokens").and_then(Value::as_u64).unwrap_or(0),
    })
}

/// Reads a complete (non-streamed) answer.
fn parse_whole(v: &Value) -> Result<ChatResponse, ProviderError> {
    let choice = v.pointer("/choices/0").ok_or_else(|| ProviderError::Protocol("no choices in the answer".into()))?;
    let message = choice.get("message").cloned().unwrap_or(Value::Null);
    let text = message.get("content").and_then(Value::as_str).unwrap_or_default().to_string();
    let mut tool_calls = Vec::new();
    for (i, c) in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let arguments = match c.pointer("/function/arguments") {
            Some(Value::String(s)) => s.clone(),
            Some(other) if !other.is_null() => other.to_string(),
            _ => String::new(),
        };
        tool_calls.push(ToolCall {
            id: c.get("id").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| format!("call_{i}")),
            name: c.pointer("/function/name").and_then(Value::as_str).unwrap_or_default().to_string(),
            arguments,
        });
    }
    Ok(ChatResponse {
        text,
        tool_calls,
        usage: usage_of(v).unwrap_or_default(),
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    })
}

impl Provider for OpenAi {
    fn complete<'a>(&'a self, request: &'a ChatRequest, sink: &'a mut (dyn FnMut(Delta) + Send)) -> ChatFuture<'a> {
        Box::pin(async move {
            let body = body(request, self.limit);
            let response = send_with_retry(&self.profile, || {
                let mut rb = self.http.post(&self.url).json(&body);
                if let Some(key) = self.api_key.as_deref().filter(|k| !k.is_empty()) {
                    rb = rb.bearer_auth(key);
                }
                rb
            })
            .await?;
            if !request.stream || !is_event_stream(&response) {
                return whole_answer(response, parse_whole, sink).await;
            }
            let mut answer = ChatResponse::default();
            let mut stream = Box::pin(events(response));
            while let Some(event) = stream.next().await {
                let event = event?;
                let data = event.data.trim();
                if data.is_empty() {
                    continue;
                }
                if data == "[DONE]" {
                    break;
                }
                let v: Value = serde_json::from_str(data)
                    .map_err(|e| ProviderError::Protocol(format!("bad stream chunk: {e}")))?;
                if let Some(err) = v.get("error") {
                    return Err(ProviderError::Status {
                        status: 500,
                        message: err.get("message").and_then(Value::as_str).unwrap_or("error in stream").to_string(),
                    });
                }
                if let Some(u) = usage_of(&v) {
                    answer.usage = u;
                }
                let Some(choice) = v.pointer("/choices/0") else { continue };
                if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                    answer.finish_reason = Some(reason.to_string());
                }
                let Some(delta) = choice.get("delta") else { continue };
                if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                    answer.text.push_str(text);
                    sink(Delta::Text(text.to_string()));
                }
                for c in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                    let index =
                        c.get("index").and_then(Value::as_u64).unwrap_or(answer.tool_calls.len() as u64) as usize;
                    if index >= answer.tool_calls.len() {
                        answer.tool_calls.resize(
                            index + 1,
                            ToolCall { id: String::new(), name: String::new(), arguments: String::new() },
                        );
                    }
                    let call = &mut answer.tool_calls[index];
                    let started = !call.name.is_empty();
                    if let Some(id) = c.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                        call.id = id.to_string();
                    }
                    if let Some(name) = c.pointer("/function/name").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                        call.name.push_str(name);
                    }
                    if !started && !call.name.is_empty() {
                        if call.id.is_empty() {
                            call.id = format!("call_{index}");
                        }
                        sink(Delta::ToolCallStart { index, id: call.id.clone(), name: call.name.clone() });
                    }
                    if let Some(args) =
                        c.pointer("/function/arguments").and_then(Value::as_str).filter(|s| !s.is_empty())
                    {
                        call.arguments.push_str(args);
                        sink(Delta::ToolCallArgs { index, delta: args.to_string() });
                    }
                }
            }
            answer.tool_calls.retain(|c| !c.name.is_empty());
            Ok(answer)
        })
    }
}
