//! `/v1/models` and `/v1/chat/completions`: the site's agents as the models
//! of an OpenAI-compatible API, for the chat interfaces and SDKs that speak
//! it (the official `openai` clients with base URL `<server>/v1` and an API
//! token as the key).
//!
//! A chat completion is a turn of the agent its `model` names, run as
//! `quire_app::chat::run_thread` runs an AG-UI client's: the agent's own
//! tools run on the server, under the same approvals. The last message, the
//! person's, is what they say; the rest of the conversation is the
//! session's own, kept on the server.
//!
//! The session travels in the conversation: every answer ends with the line
//! `[quire-session]: <session id>`, a Markdown link reference definition
//! (Markdown renders it as nothing), and a request whose assistant messages
//! carry one continues that session (the latest one named); a request
//! without starts a new session. A turn that pauses for approvals answers
//! what waits, for whom, and where to approve it; once answered the turn
//! goes on, and the next message continues the session.
//!
//! Errors have OpenAI's shape, `{ error: { message, type, param, code } }`
//! ([`crate::error::json_errors`] gives it to every error under `/v1`).

use super::agents::{CHAT_WAIT, run_events};
use crate::AppState;
use crate::auth::Records;
use crate::error::{ApiError, ApiResult, OpenAiErrorBody};
use crate::extract::{ApiJson, ApiPath};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::{Stream, StreamExt};
use quire_agent::PendingCall;
use quire_app::{AppError, Failure};
use quire_core::model::{Agent, SessionStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::convert::Infallible;
use std::time::Duration;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/models", get(models))
        .route("/v1/models/{model}", get(model))
        .route("/v1/chat/completions", post(complete))
}

/// The line every answer ends with, naming its session (see the module's doc).
const SESSION_REFERENCE: &str = "[quire-session]:";

/// OpenAI's list of models.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ModelList {
    /// Always `list`.
    pub object: &'static str,
    /// The agents the caller may use.
    pub data: Vec<Model>,
}

/// An agent as an OpenAI model.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Model {
    /// The agent's alias, which `model` names.
    pub id: String,
    /// Always `model`.
    pub object: &'static str,
    /// When the agent was created (Unix seconds).
    pub created: i64,
    /// Always `quire`.
    pub owned_by: &'static str,
}

impl Model {
    fn of(agent: &Agent) -> Self {
        Model { id: agent.alias.clone(), object: "model", created: agent.created_at.timestamp(), owned_by: "quire" }
    }
}

/// The enabled agents the caller may use.
async fn usable(records: &Records) -> ApiResult<Vec<Agent>> {
    Ok(records.agents().await?.into_iter().filter(|a| a.enabled).collect())
}

/// Lists the agents the credential may use, as OpenAI models.
#[utoipa::path(get, path = "/v1/models", operation_id = "listModels", tag = "openai", security(("bearer" = [])),
    responses((status = 200, description = "The agents the caller may use, as OpenAI's list of models", body = ModelList)))]
pub async fn models(records: Records) -> ApiResult<Json<ModelList>> {
    let data = usable(&records).await?.iter().map(Model::of).collect();
    Ok(Json(ModelList { object: "list", data }))
}

/// One agent the credential may use, as an OpenAI model.
#[utoipa::path(get, path = "/v1/models/{model}", operation_id = "getModel", tag = "openai", security(("bearer" = [])),
    params(("model" = String, Path, description = "Agent alias")),
    responses((status = 200, description = "The agent as an OpenAI model", body = Model), (status = 404, body = OpenAiErrorBody)))]
pub async fn model(records: Records, ApiPath(alias): ApiPath<String>) -> ApiResult<Json<Model>> {
    match usable(&records).await?.iter().find(|a| a.alias == alias) {
        Some(agent) => Ok(Json(Model::of(agent))),
        None => Err(model_not_found(&alias, &format!("no agent \"{alias}\" you may use"))),
    }
}

/// 404 for a `model` that names no agent the caller may use, as OpenAI
/// words it, with why.
fn model_not_found(model: &str, why: &str) -> ApiError {
    ApiError {
        status: StatusCode::NOT_FOUND,
        code: "MODEL_NOT_FOUND",
        message: format!("The model `{model}` does not exist or you do not have access to it: {why}"),
        field: Some("model".into()),
        details: Vec::new(),
        retry_after: None,
    }
}

/// A chat completion request. Other OpenAI parameters (`temperature`,
/// `max_tokens`, `tools`, `user`, `metadata`, …) are accepted and not
/// read: the agent's profile samples, and its tools are its own.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct ChatCompletionRequest {
    /// The agent's alias (`GET /v1/models`).
    pub model: String,
    /// The conversation. The last message, the person's, is what they say
    /// now; the session's answers (assistant messages ending with
    /// `[quire-session]: <id>`) name the session it continues.
    #[schema(min_items = 1)]
    pub messages: Vec<ChatMessage>,
    /// Answer as Server-Sent Events of `chat.completion.chunk`s, ending with `data: [DONE]`.
    #[serde(default)]
    pub stream: Option<bool>,
    /// With `include_usage: true`, a last chunk carries the turn's usage.
    #[serde(default)]
    pub stream_options: Option<StreamOptions>,
    /// How many answers: one.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 1)]
    pub n: Option<u32>,
}

/// Options of a streamed answer.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct StreamOptions {
    /// Add a last chunk with the turn's usage.
    #[serde(default)]
    pub include_usage: Option<bool>,
}

/// One message of the conversation.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct ChatMessage {
    /// Who said it.
    pub role: ChatRole,
    /// Text, or parts of which the text ones are read.
    #[serde(default)]
    pub content: Option<MessageContent>,
}

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChatRole {
    /// Instructions: not read (the agent's prompt is its own).
    System,
    /// Instructions: not read (the agent's prompt is its own).
    Developer,
    /// The person.
    User,
    /// The agent.
    Assistant,
    /// A tool's result: not read (the agent's tools run on the server).
    Tool,
    /// A function's result: not read.
    Function,
}

/// A message's content.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum MessageContent {
    /// Text.
    Text(String),
    /// Parts.
    Parts(Vec<ContentPart>),
}

/// One part of a message's content: `text` parts are read.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct ContentPart {
    /// `text`, `image_url`, `input_audio`, `file`, `refusal`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// A text part's text.
    #[serde(default)]
    pub text: Option<String>,
}

impl MessageContent {
    /// The text of the content: itself, or its text parts, one a line.
    fn text(&self) -> String {
        match self {
            MessageContent::Text(text) => text.clone(),
            MessageContent::Parts(parts) => {
                parts.iter().filter_map(|p| p.text.as_deref()).collect::<Vec<_>>().join("\n")
            }
        }
    }
}

/// OpenAI's chat completion: the turn's answer.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ChatCompletion {
    /// `chatcmpl-` and the run's id.
    pub id: String,
    /// Always `chat.completion`.
    pub object: &'static str,
    /// When the answer was made (Unix seconds).
    pub created: i64,
    /// The agent's alias.
    pub model: String,
    /// The one answer.
    pub choices: Vec<Choice>,
    /// The turn's tokens, all its steps.
    pub usage: Usage,
}

/// The one answer of a completion.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Choice {
    /// Always 0.
    pub index: u32,
    /// The agent's message.
    pub message: AssistantMessage,
    /// Always null.
    #[schema(value_type = Option<Object>)]
    pub logprobs: Option<Value>,
    /// `stop`.
    pub finish_reason: &'static str,
}

/// The agent's message.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AssistantMessage {
    /// Always `assistant`.
    pub role: &'static str,
    /// What the agent wrote in the turn (or what its pause waits for), and
    /// the line naming the session.
    pub content: String,
    /// Always null.
    #[schema(value_type = Option<String>)]
    pub refusal: Option<String>,
}

/// Tokens a turn used.
#[derive(Debug, Clone, Copy, Default, Serialize, utoipa::ToSchema)]
pub struct Usage {
    /// Input tokens, every step of the turn.
    pub prompt_tokens: u64,
    /// Output tokens, every step of the turn.
    pub completion_tokens: u64,
    /// Their sum.
    pub total_tokens: u64,
}

/// One Server-Sent Event of a streamed completion: `data:` a JSON
/// `chat.completion.chunk` (`choices[0].delta.content` the next piece of
/// text; the last with `finish_reason`), an error `{ error }`, or `[DONE]`.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct ChatCompletionChunkEvent {
    /// The chunk as JSON text, or `[DONE]`.
    data: String,
}

/// Runs a turn of the agent `model` names, in the session the conversation
/// names (a new one when it names none of the caller's), on the person's
/// last message. Answers the turn's text, or what its pause waits for, as
/// one completion or (`stream: true`) as chunks. A message to a session
/// still waiting for approvals answers what it waits for.
#[utoipa::path(post, path = "/v1/chat/completions", operation_id = "createChatCompletion", tag = "openai",
    request_body = ChatCompletionRequest, security(("bearer" = [])),
    responses(
        (status = 200, description = "The turn's answer: a chat completion, or with `stream: true` a text/event-stream of chunks ending with `data: [DONE]`",
            content((ChatCompletion = "application/json"), (ChatCompletionChunkEvent = "text/event-stream"))),
        (status = 404, body = OpenAiErrorBody), (status = 409, body = OpenAiErrorBody), (status = 422, body = OpenAiErrorBody),
        (status = 502, body = OpenAiErrorBody)))]
pub async fn complete(
    State(state): State<AppState>,
    records: Records,
    headers: HeaderMap,
    ApiJson(request): ApiJson<ChatCompletionRequest>,
) -> ApiResult<Response> {
    if request.n.is_some_and(|n| n != 1) {
        return Err(ApiError::bad_field("n", "only one answer is made: leave n out or send 1"));
    }
    let said = said(&request.messages)?;
    // A session the caller cannot see is none of theirs: a new one starts.
    let session = match session_named(&request.messages) {
        Some(id) => match records.session(&id).await {
            Ok(_) => Some(id),
            Err(e) if e.failure == Failure::NotFound => None,
            Err(e) => return Err(e.into()),
        },
        None => None,
    };
    let model = request.model.clone();
    let run = quire_app::chat::ThreadRun {
        agent: request.model.clone(),
        thread: session.clone(),
        text: Some(said),
        ..Default::default()
    };
    let reply = Reply {
        model: model.clone(),
        created: chrono::Utc::now().timestamp(),
        base: state.base_url(&headers),
        include_usage: request.stream_options.as_ref().and_then(|o| o.include_usage) == Some(true),
    };
    let stream = request.stream == Some(true);
    let session = match quire_app::chat::run_thread(state.runtime(), records.actor(), run).await {
        Ok(session) => session,
        Err(e) => {
            let waiting = match (&session, e.failure) {
                (Some(id), Failure::Conflict) => {
                    records.session(id).await.ok().filter(|s| s.status == SessionStatus::Paused)
                }
                _ => None,
            };
            if let Some(paused) = waiting {
                // Still waiting: say so again, rather than refuse the message.
                let text = reply.waiting(&calls_of(&paused.pending));
                let id = format!("chatcmpl-{}-{}", paused.id, paused.turns);
                let answer = Answer { id, text, usage: Usage::default(), session: paused.id };
                return Ok(if stream { reply.stream_of(answer) } else { reply.whole(answer) });
            }
            return Err(turn_refused(e, &model));
        }
    };
    let mut events = Box::pin(run_events(&state, &session));
    if stream {
        let records = records.0;
        let chunks = chunk_stream(reply, session, records, events);
        return Ok(Sse::new(chunks).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response());
    }
    let mut transcript = Transcript::default();
    let ended = tokio::time::timeout(CHAT_WAIT, async {
        while let Some(e) = events.next().await {
            transcript.read(&e);
        }
    })
    .await;
    if ended.is_err() {
        transcript.text.push_str("\n\n(The turn goes on; its answer will be in this session.)");
    }
    if let Some(error) = transcript.error {
        return Err(error);
    }
    let pending = match transcript.interrupted {
        true => calls_of(&records.session(&session).await?.pending),
        false => Vec::new(),
    };
    let mut text = transcript.text;
    if !pending.is_empty() {
        text = joined(text, &reply.waiting(&pending));
    }
    let answer = Answer { id: transcript.id, text, usage: transcript.usage, session };
    Ok(reply.whole(answer))
}

/// A refusal of the turn in this API's words: an unknown agent is an
/// unknown model; a session with another agent is the conversation's.
fn turn_refused(e: AppError, model: &str) -> ApiError {
    match (e.failure, e.field.as_deref()) {
        (Failure::NotFound, _) => model_not_found(model, &e.message),
        // Someone else's, which the caller may see (an admin) but not speak in.
        (Failure::Conflict, Some("threadId")) => {
            AppError::forbidden("this conversation's session belongs to someone else; start a new conversation").into()
        }
        (Failure::Invalid, Some("threadId")) if !e.message.contains("another agent") => AppError::invalid(
            "messages",
            format!("messages: the conversation's [quire-session] line names no session this server made ({})", e.message),
        )
        .into(),
        (Failure::Invalid, Some("threadId")) => AppError::invalid(
            "messages",
            format!(
                "messages: this conversation's session is with another agent; start a new conversation to talk to {model}"
            ),
        )
        .into(),
        _ => e.into(),
    }
}

/// What the person says now: the text of the last message, which must be
/// theirs.
fn said(messages: &[ChatMessage]) -> ApiResult<String> {
    let at = messages.len().saturating_sub(1);
    let Some(last) = messages.last() else {
        return Err(AppError::invalid("messages", "messages: send at least the person's message").into());
    };
    if last.role != ChatRole::User {
        let message = format!("messages.{at}: the last message must be the person's (role user)");
        return Err(AppError::invalid(format!("messages.{at}.role"), message).into());
    }
    let text = last.content.as_ref().map(MessageContent::text).unwrap_or_default();
    if text.trim().is_empty() {
        let message = format!("messages.{at}.content: the person's message has no text");
        return Err(AppError::invalid(format!("messages.{at}.content"), message).into());
    }
    Ok(text)
}

/// The session the conversation names: the latest `[quire-session]: <id>`
/// line of its assistant messages.
fn session_named(messages: &[ChatMessage]) -> Option<String> {
    messages.iter().rev().filter(|m| m.role == ChatRole::Assistant).find_map(|m| {
        let text = m.content.as_ref()?.text();
        text.lines().rev().find_map(|line| {
            let id = line.trim().strip_prefix(SESSION_REFERENCE)?.trim();
            (!id.is_empty()).then(|| id.to_string())
        })
    })
}

/// The calls a session's `pending` holds.
fn calls_of(pending: &Value) -> Vec<PendingCall> {
    serde_json::from_value(pending.clone()).unwrap_or_default()
}

/// What a run's events add up to.
#[derive(Default)]
struct Transcript {
    /// `chatcmpl-` and the run's id.
    id: String,
    /// The text written so far, each message of the run a paragraph.
    text: String,
    /// The message the text's last piece belongs to.
    message: Option<String>,
    usage: Usage,
    /// Whether the run paused for approvals.
    interrupted: bool,
    /// The run's error, if it failed.
    error: Option<ApiError>,
}

impl Transcript {
    /// Reads one event; answers the text it adds.
    fn read(&mut self, e: &quire_agent::Event) -> String {
        let data = &e.data;
        match e.kind() {
            "RUN_STARTED" => {
                self.id = format!("chatcmpl-{}", data["runId"].as_str().unwrap_or_default());
            }
            "TEXT_MESSAGE_CONTENT" => {
                let delta = data["delta"].as_str().unwrap_or_default();
                let message = data["messageId"].as_str().map(str::to_string);
                let mut piece = String::new();
                if !self.text.is_empty() && message != self.message {
                    piece.push_str("\n\n");
                }
                piece.push_str(delta);
                self.message = message;
                self.text.push_str(&piece);
                return piece;
            }
            "CUSTOM" if data["name"] == "usage" => {
                let count = |key: &str| data["value"][key].as_u64().unwrap_or(0);
                self.usage.prompt_tokens += count("inputTokens");
                self.usage.completion_tokens += count("outputTokens");
                self.usage.total_tokens = self.usage.prompt_tokens + self.usage.completion_tokens;
            }
            "RUN_FINISHED" => self.interrupted = data["outcome"]["type"] == "interrupt",
            "RUN_ERROR" => {
                let message = data["message"].as_str().unwrap_or("the turn failed");
                let code = data["code"].as_str().unwrap_or("INTERNAL");
                let mut error =
                    ApiError::with_status(StatusCode::BAD_GATEWAY, format!("the agent's turn failed: {message}"));
                error.code = if code == "MODEL_ERROR" { "MODEL_ERROR" } else { error.code };
                self.error = Some(error);
            }
            _ => {}
        }
        String::new()
    }
}

/// `text`, then `more` as the next paragraph.
fn joined(text: String, more: &str) -> String {
    if text.is_empty() { more.to_string() } else { format!("{text}\n\n{more}") }
}

/// A finished answer.
struct Answer {
    id: String,
    text: String,
    usage: Usage,
    session: String,
}

/// How answers to one request are made.
struct Reply {
    model: String,
    created: i64,
    /// Where people reach this server.
    base: String,
    include_usage: bool,
}

impl Reply {
    /// What a paused turn waits for, for whom, and where to answer it.
    fn waiting(&self, calls: &[PendingCall]) -> String {
        let base = &self.base;
        let mut text = String::from("This turn waits for a person's approval before it goes on:\n");
        for call in calls {
            text.push_str(&format!("\n- {}: {} (approval `{}`", call.tool, call.message, call.approval_id));
            if let Some(at) = call.expires_at {
                text.push_str(&format!(", until {}", at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)));
            }
            text.push(')');
        }
        let tools: Vec<&str> = calls.iter().map(|c| c.tool.as_str()).collect();
        let first = calls.first().map_or("<id>", |c| c.approval_id.as_str());
        text.push_str(&format!(
            "\n\nIt waits for you, or anyone of this site whose group may use {}. \
             Approve or reject it in the back-office at {base}/approvals, \
             or over the API: POST {base}/api/v1/approvals/{first}/approve (or /reject) with an API token. \
             Once it is answered the turn goes on; your next message here continues this session.",
            tools.join(", ")
        ));
        text
    }

    /// The answer as one chat completion.
    fn whole(&self, answer: Answer) -> Response {
        let content = joined(answer.text, &format!("{SESSION_REFERENCE} {}", answer.session));
        Json(ChatCompletion {
            id: answer.id,
            object: "chat.completion",
            created: self.created,
            model: self.model.clone(),
            choices: vec![Choice {
                index: 0,
                message: AssistantMessage { role: "assistant", content, refusal: None },
                logprobs: None,
                finish_reason: "stop",
            }],
            usage: answer.usage,
        })
        .into_response()
    }

    /// A finished answer as a stream: its text in one chunk, then the end.
    fn stream_of(self, answer: Answer) -> Response {
        let mut chunks = vec![self.chunk(&answer.id, serde_json::json!({ "role": "assistant", "content": "" }), None)];
        chunks.push(self.chunk(&answer.id, serde_json::json!({ "content": answer.text }), None));
        chunks.extend(self.end(&answer.id, &answer.session, answer.usage));
        let events = futures_util::stream::iter(chunks.into_iter().map(Ok::<_, Infallible>));
        Sse::new(events).into_response()
    }

    /// One `chat.completion.chunk` event.
    fn chunk(&self, id: &str, delta: Value, finish: Option<&str>) -> Event {
        let chunk = serde_json::json!({
            "id": id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
            "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }],
        });
        Event::default().data(chunk.to_string())
    }

    /// The last events of a stream: the session's line, the finish, the
    /// usage if asked for, `[DONE]`.
    fn end(&self, id: &str, session: &str, usage: Usage) -> Vec<Event> {
        let reference = format!("\n\n{SESSION_REFERENCE} {session}");
        let mut events = vec![
            self.chunk(id, serde_json::json!({ "content": reference }), None),
            self.chunk(id, serde_json::json!({}), Some("stop")),
        ];
        if self.include_usage {
            let chunk = serde_json::json!({
                "id": id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": [], "usage": usage,
            });
            events.push(Event::default().data(chunk.to_string()));
        }
        events.push(Event::default().data("[DONE]"));
        events
    }
}

/// A run's events as completion chunks: its text as it comes, then what a
/// pause waits for, the session's line and the end; a failed run ends
/// with OpenAI's error event.
fn chunk_stream(
    reply: Reply,
    session: String,
    records: quire_app::content::Content,
    events: std::pin::Pin<Box<impl Stream<Item = quire_agent::Event> + Send + 'static>>,
) -> impl Stream<Item = Result<Event, Infallible>> {
    struct Streaming<S> {
        reply: Reply,
        session: String,
        records: quire_app::content::Content,
        events: std::pin::Pin<Box<S>>,
        transcript: Transcript,
        started: bool,
        ended: bool,
    }
    let state =
        Streaming { reply, session, records, events, transcript: Transcript::default(), started: false, ended: false };
    futures_util::stream::unfold(state, |mut s| async move {
        if s.ended {
            return None;
        }
        let mut out = Vec::new();
        match s.events.next().await {
            Some(e) => {
                let piece = s.transcript.read(&e);
                if !s.started && !s.transcript.id.is_empty() {
                    s.started = true;
                    out.push(s.reply.chunk(
                        &s.transcript.id,
                        serde_json::json!({ "role": "assistant", "content": "" }),
                        None,
                    ));
                }
                if !piece.is_empty() {
                    out.push(s.reply.chunk(&s.transcript.id, serde_json::json!({ "content": piece }), None));
                }
            }
            None => {
                s.ended = true;
                if let Some(error) = s.transcript.error.take() {
                    out.push(Event::default().data(crate::error::openai_body(&error).to_string()));
                } else {
                    if s.transcript.interrupted {
                        let pending = match s.records.session(&s.session).await {
                            Ok(session) => calls_of(&session.pending),
                            Err(_) => Vec::new(),
                        };
                        let text = format!(
                            "{}{}",
                            if s.transcript.text.is_empty() { "" } else { "\n\n" },
                            s.reply.waiting(&pending)
                        );
                        out.push(s.reply.chunk(&s.transcript.id, serde_json::json!({ "content": text }), None));
                    }
                    let usage = s.transcript.usage;
                    out.extend(s.reply.end(&s.transcript.id, &s.session, usage));
                }
            }
        }
        Some((futures_util::stream::iter(out.into_iter().map(Ok)), s))
    })
    .flatten()
}
