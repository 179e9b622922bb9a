//! Fake OpenAI-compatible and Anthropic servers answering from a script,
//! for tests of the runtime and of every surface that drives it (enable the
//! `testing` feature). They speak the real wire formats over real HTTP, so
//! the provider clients under test are the production ones.

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{Response, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Creates an editor token of the demo site, for a person to chat as;
/// answers its id.
pub async fn editor_token(store: &quire_store::Store) -> String {
    let token = quire_store::NewToken::new("chat", quire_core::access::Group::Editor, "demo");
    store.create_token(token).await.expect("a token of the demo site").0.id
}

/// One scripted answer; `Dynamic` builds it from the request (to use ids
/// that earlier tool results returned).
pub enum Reply {
    /// An OpenAI event stream.
    OpenAiStream(String),
    /// An Anthropic event stream.
    AnthropicStream(String),
    /// A JSON answer (non-streaming).
    Json(Value),
    /// An error status with an optional Retry-After.
    Status(u16, Option<u64>),
    /// Built from the request body.
    Dynamic(Box<dyn Fn(&Value) -> Reply + Send + Sync>),
    /// Another answer, given after a while (a slow or hanging model).
    Delayed(std::time::Duration, Box<Reply>),
}

/// A scripted fake provider.
#[derive(Clone, Default)]
pub struct Fake {
    script: Arc<Mutex<VecDeque<Reply>>>,
    /// Request bodies, in order.
    pub requests: Arc<Mutex<Vec<Value>>>,
    /// Request headers of interest (authorization / x-api-key), in order.
    pub keys: Arc<Mutex<Vec<String>>>,
}

impl Fake {
    /// Appends an answer to the script.
    pub fn push(&self, reply: Reply) {
        self.script.lock().unwrap().push_back(reply);
    }

    /// Request bodies so far.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }

    /// Answers not used yet.
    pub fn remaining(&self) -> usize {
        self.script.lock().unwrap().len()
    }
}

fn render(reply: Reply, body: &Value) -> Response<Body> {
    match reply {
        Reply::OpenAiStream(s) | Reply::AnthropicStream(s) => {
            Response::builder().header("content-type", "text/event-stream").body(Body::from(s)).unwrap()
        }
        Reply::Json(v) => {
            Response::builder().header("content-type", "application/json").body(Body::from(v.to_string())).unwrap()
        }
        Reply::Status(code, retry) => {
            let mut b = Response::builder().status(StatusCode::from_u16(code).unwrap());
            if let Some(r) = retry {
                b = b.header("retry-after", r.to_string());
            }
            b.header("content-type", "application/json")
                .body(Body::from(json!({ "error": { "message": format!("scripted {code}") } }).to_string()))
                .unwrap()
        }
        Reply::Dynamic(f) => render(f(body), body),
        Reply::Delayed(_, reply) => render(*reply, body),
    }
}

async fn answer(State(fake): State<Fake>, headers: axum::http::HeaderMap, body: String) -> Response<Body> {
    let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    fake.requests.lock().unwrap().push(body.clone());
    let key = headers
        .get("authorization")
        .or_else(|| headers.get("x-api-key"))
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    fake.keys.lock().unwrap().push(key);
    let mut next = fake.script.lock().unwrap().pop_front();
    while let Some(Reply::Delayed(wait, reply)) = next {
        tokio::time::sleep(wait).await;
        next = Some(*reply);
    }
    match next {
        Some(reply) => render(reply, &body),
        None => Response::builder()
            .status(500)
            .body(Body::from(json!({ "error": { "message": "script exhausted" } }).to_string()))
            .unwrap(),
    }
}

/// Starts a fake server with nothing scripted yet; answers the fake (to
/// script it and read what it received) and the server's base URL.
pub async fn serve() -> (Fake, String) {
    let fake = Fake::default();
    let app = Router::new()
        .route("/v1/chat/completions", post(answer))
        .route("/v1/messages", post(answer))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (fake, format!("http://{addr}"))
}

/// A profile of `kind` whose model, `fake-model`, is the fake at `base`
/// (see [`serve`]), with a test key and retries 5 ms apart.
pub fn fake_profile(kind: crate::ProviderKind, base: &str) -> crate::Profile {
    let mut p = crate::Profile::new(kind);
    p.base_url = Some(match kind {
        crate::ProviderKind::Openai => format!("{base}/v1"),
        crate::ProviderKind::Anthropic => base.to_string(),
    });
    p.api_key = Some("test-key".into());
    p.model = Some("fake-model".into());
    p.backoff_ms = 5;
    p
}

/// Model profiles whose `default` is the OpenAI-compatible fake at `base`.
pub fn fake_profiles(base: &str) -> crate::Profiles {
    let mut profiles = crate::Profiles::default();
    profiles.insert("default", fake_profile(crate::ProviderKind::Openai, base));
    profiles
}

/// A Server-Sent Event as read: `(id, event type, data as JSON)`.
pub type SseEvent = (String, String, Value);

/// Takes every complete Server-Sent Event out of `text` (what a stream sent
/// so far; an unfinished event stays), skipping keep-alive comments.
pub fn take_sse_events(text: &mut String) -> Vec<SseEvent> {
    let mut events = Vec::new();
    while let Some(end) = text.find("\n\n") {
        let block: String = text.drain(..end + 2).collect();
        let (mut id, mut kind, mut data) = (String::new(), String::new(), String::new());
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("id:") {
                id = v.trim().to_string();
            } else if let Some(v) = line.strip_prefix("event:") {
                kind = v.trim().to_string();
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push_str(v.strip_prefix(' ').unwrap_or(v));
            }
        }
        if !kind.is_empty() {
            events.push((id, kind, serde_json::from_str(&data).unwrap_or(Value::Null)));
        }
    }
    events
}

/// An event stream read chunk by chunk until an event of a given type.
#[derive(Default)]
pub struct SseReader {
    /// What arrived of an event not yet complete.
    text: String,
    /// The events read so far, the one awaited last.
    pub events: Vec<SseEvent>,
}

impl SseReader {
    /// Reads `chunk`; answers whether an event of type `until` came (events
    /// after it in the same chunk are dropped).
    pub fn read_until(&mut self, chunk: &[u8], until: &str) -> bool {
        self.text.push_str(&String::from_utf8_lossy(chunk));
        for event in take_sse_events(&mut self.text) {
            let done = event.1 == until;
            self.events.push(event);
            if done {
                return true;
            }
        }
        false
    }
}

/// An OpenAI stream: text in two pieces, then each call with its arguments
/// in two pieces, then usage.
pub fn openai_stream(text: &str, calls: &[(&str, &str, &str)]) -> Reply {
    let mut out = String::new();
    let mut chunk = |v: Value| out.push_str(&format!("data: {v}\n\n"));
    chunk(json!({ "choices": [{ "index": 0, "delta": { "role": "assistant" } }] }));
    if !text.is_empty() {
        let mid = text.char_indices().nth(text.chars().count() / 2).map(|(i, _)| i).unwrap_or(0);
        for part in [&text[..mid], &text[mid..]] {
            chunk(json!({ "choices": [{ "index": 0, "delta": { "content": part } }] }));
        }
    }
    for (i, (id, name, args)) in calls.iter().enumerate() {
        chunk(json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [
            { "index": i, "id": id, "type": "function", "function": { "name": name, "arguments": "" } }
        ] } }] }));
        let mid = args.char_indices().nth(args.chars().count() / 2).map(|(i, _)| i).unwrap_or(0);
        for part in [&args[..mid], &args[mid..]] {
            chunk(json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [
                { "index": i, "function": { "arguments": part } }
            ] } }] }));
        }
    }
    let reason = if calls.is_empty() { "stop" } else { "tool_calls" };
    chunk(json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": reason }] }));
    chunk(json!({ "choices": [], "usage": { "prompt_tokens": 100, "completion_tokens": 10 } }));
    out.push_str("data: [DONE]\n\n");
    Reply::OpenAiStream(out)
}

/// The same answer as one JSON body.
pub fn openai_json(text: &str, calls: &[(&str, &str, &str)]) -> Reply {
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(
            |(id, name, args)| json!({ "id": id, "type": "function", "function": { "name": name, "arguments": args } }),
        )
        .collect();
    let mut message = json!({ "role": "assistant", "content": text });
    if !tool_calls.is_empty() {
        message["tool_calls"] = json!(tool_calls);
    }
    Reply::Json(json!({
        "choices": [{ "index": 0, "message": message, "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" } }],
        "usage": { "prompt_tokens": 100, "completion_tokens": 10 },
    }))
}

/// An Anthropic stream with text and tool_use blocks.
pub fn anthropic_stream(text: &str, calls: &[(&str, &str, &str)]) -> Reply {
    let mut out = String::new();
    let mut event = |name: &str, v: Value| out.push_str(&format!("event: {name}\ndata: {v}\n\n"));
    event(
        "message_start",
        json!({ "type": "message_start", "message": { "id": "msg_1", "usage": { "input_tokens": 80, "output_tokens": 1 } } }),
    );
    let mut index = 0;
    if !text.is_empty() {
        event(
            "content_block_start",
            json!({ "type": "content_block_start", "index": index, "content_block": { "type": "text", "text": "" } }),
        );
        event(
            "content_block_delta",
            json!({ "type": "content_block_delta", "index": index, "delta": { "type": "text_delta", "text": text } }),
        );
        event("content_block_stop", json!({ "type": "content_block_stop", "index": index }));
        index += 1;
    }
    for (id, name, args) in calls {
        event(
            "content_block_start",
            json!({ "type": "content_block_start", "index": index, "content_block": { "type": "tool_use", "id": id, "name": name, "input": {} } }),
        );
        let mid = args.char_indices().nth(args.chars().count() / 2).map(|(i, _)| i).unwrap_or(0);
        for part in [&args[..mid], &args[mid..]] {
            event(
                "content_block_delta",
                json!({ "type": "content_block_delta", "index": index, "delta": { "type": "input_json_delta", "partial_json": part } }),
            );
        }
        event("content_block_stop", json!({ "type": "content_block_stop", "index": index }));
        index += 1;
    }
    let reason = if calls.is_empty() { "end_turn" } else { "tool_use" };
    event(
        "message_delta",
        json!({ "type": "message_delta", "delta": { "stop_reason": reason }, "usage": { "output_tokens": 12 } }),
    );
    event("message_stop", json!({ "type": "message_stop" }));
    Reply::AnthropicStream(out)
}

/// A non-streamed Anthropic answer.
pub fn anthropic_json(text: &str, calls: &[(&str, &str, &str)]) -> Reply {
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(json!({ "type": "text", "text": text }));
    }
    for (id, name, args) in calls {
        content.push(json!({ "type": "tool_use", "id": id, "name": name, "input": serde_json::from_str::<Value>(args).unwrap() }));
    }
    Reply::Json(json!({
        "content": content,
        "stop_reason": if calls.is_empty() { "end_turn" } else { "tool_use" },
        "usage": { "input_tokens": 80, "output_tokens": 12 },
    }))
}

/// The last tool result in a request (OpenAI or Anthropic), as the JSON
/// inside its `<untrusted source="tool:NAME">` element.
pub fn last_tool_result(body: &Value) -> Value {
    let messages = body["messages"].as_array().unwrap();
    for m in messages.iter().rev() {
        if m["role"] == "tool" {
            return tool_result_json(m["content"].as_str().unwrap());
        }
        if let Some(blocks) = m["content"].as_array()
            && let Some(b) = blocks.iter().rev().find(|b| b["type"] == "tool_result")
        {
            return tool_result_json(b["content"].as_str().unwrap());
        }
    }
    panic!("no tool result in {body}");
}

/// The JSON of a tool result as the model reads it; panics unless it is
/// wrapped in an `<untrusted source="tool:NAME">` element.
pub fn tool_result_json(text: &str) -> Value {
    let inner = text
        .strip_prefix("<untrusted source=\"tool:")
        .and_then(|rest| rest.split_once('\n'))
        .filter(|(open, _)| open.ends_with("\">"))
        .and_then(|(_, rest)| rest.strip_suffix("\n</untrusted>"))
        .unwrap_or_else(|| panic!("tool result not marked as untrusted data: {text}"));
    serde_json::from_str(inner).unwrap()
}

/// Tool names offered in a request.
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| t.iter().map(|t| t["function"]["name"].as_str().or(t["name"].as_str()).unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// The system prompt of a request (OpenAI or Anthropic).
pub fn system_of(body: &Value) -> String {
    body["system"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| body["messages"][0]["content"].as_str().unwrap().to_string())
}

/// A step of an in-process scripted model: a whole answer, or one built
/// from the request (to use ids that earlier tool results returned).
pub enum Step {
    /// This answer.
    Answer(crate::ChatResponse),
    /// An answer built from the step's request.
    Dynamic(Box<dyn Fn(&crate::ChatRequest) -> crate::ChatResponse + Send + Sync>),
}

/// A model that answers from a script in process, without HTTP and in no
/// time: inject it with [`crate::Runtime::set_provider`]. Each answer is
/// handed to the runtime as pieces, as a streaming provider would.
#[derive(Clone, Default)]
pub struct Scripted {
    script: Arc<Mutex<VecDeque<Step>>>,
    /// How many requests it answered.
    pub calls: Arc<std::sync::atomic::AtomicUsize>,
}

impl Scripted {
    /// Appends a step to the script.
    pub fn push(&self, step: Step) {
        self.script.lock().unwrap().push_back(step);
    }

    /// Appends an answer with `text` and these `(id, tool, arguments)` calls.
    pub fn answer(&self, text: &str, calls: &[(&str, &str, &str)]) {
        self.push(Step::Answer(response(text, calls)));
    }

    /// Answers not used yet.
    pub fn remaining(&self) -> usize {
        self.script.lock().unwrap().len()
    }
}

/// A model answer with `text` and these `(id, tool, arguments)` calls.
pub fn response(text: &str, calls: &[(&str, &str, &str)]) -> crate::ChatResponse {
    crate::ChatResponse {
        text: text.to_string(),
        tool_calls: calls
            .iter()
            .map(|(id, name, args)| crate::ToolCall {
                id: id.to_string(),
                name: name.to_string(),
                arguments: args.to_string(),
            })
            .collect(),
        usage: crate::Usage { input_tokens: 100, output_tokens: 10 },
        finish_reason: Some(if calls.is_empty() { "stop" } else { "tool_calls" }.into()),
    }
}

impl crate::Provider for Scripted {
    fn complete<'a>(
        &'a self,
        request: &'a crate::ChatRequest,
        sink: &'a mut (dyn FnMut(crate::Delta) + Send),
    ) -> crate::provider::ChatFuture<'a> {
        Box::pin(async move {
            self.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let step = self.script.lock().unwrap().pop_front();
            let answer = match step {
                Some(Step::Answer(a)) => a,
                Some(Step::Dynamic(f)) => f(request),
                None => {
                    return Err(crate::ProviderError::Status { status: 500, message: "script exhausted".into() });
                }
            };
            if !answer.text.is_empty() {
                sink(crate::Delta::Text(answer.text.clone()));
            }
            for (index, c) in answer.tool_calls.iter().enumerate() {
                sink(crate::Delta::ToolCallStart { index, id: c.id.clone(), name: c.name.clone() });
                sink(crate::Delta::ToolCallArgs { index, delta: c.arguments.clone() });
            }
            Ok(answer)
        })
    }
}

/// The text a provider receives for one tool: name, description and schema.
pub fn tool_text(t: &crate::ToolSpec) -> String {
    format!("{}\n{}\n{}", t.name, t.description, t.parameters)
}

/// The system prompt and the tools of a request, as the text a model reads.
pub fn request_text(r: &crate::ChatRequest) -> String {
    let tools: Vec<String> = r.tools.iter().map(tool_text).collect();
    format!("{}\n{}", r.system, tools.join("\n"))
}

/// What the step `request` would read with every tool of `registry`: every
/// rule, the agent's own block, and every tool with its guidance — as
/// published (`published`: the definitions MCP's tools/list sends any
/// client, and the guidance lines of every tool but the default ones, whose
/// guidance the base prompt holds, in one block) or in the form a step
/// sends them. The reference a step's prompt tokens are measured against.
pub fn everything_text(registry: &quire_tools::Registry, request: &crate::ChatRequest, published: bool) -> String {
    let tools = registry.tools();
    let agent_block = request.system.find("<agent ").map(|start| {
        let end =
            request.system[start..].find("</agent>").map_or(request.system.len(), |e| e + start + "</agent>".len());
        &request.system[start..end]
    });
    let mut system = vec![crate::prompt::BASE_PROMPT.to_string(), quire_tools::all_rules()];
    system.extend(agent_block.map(str::to_string));
    let specs: Vec<String> = if published {
        // The default tools' guidance is the base prompt's.
        let names: Vec<&str> =
            tools.iter().filter(|t| t.category != quire_tools::Category::Default).map(|t| t.name).collect();
        system.push(quire_tools::render_guidance(registry, &names));
        tools.iter().map(|t| format!("{}\n{}\n{}", t.name, t.description, quire_tools::full_schema(t))).collect()
    } else {
        let user = quire_core::model::AgentPolicy::User;
        tools.iter().map(|t| tool_text(&crate::prompt::tool_spec(registry, t, user))).collect()
    };
    format!("{}\n{}", system.join("\n\n"), specs.join("\n"))
}
