//! `/api/v1/agents` and `/api/v1/sessions`: agents as records, chatting
//! with them, their sessions, the event stream of a session (Server-Sent
//! Events in AG-UI names, resumable with Last-Event-ID) and undoing a turn.

use super::{ListResponse, Paging};
use crate::AppState;
use crate::auth::{Caller, Records};
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::Stream;
use quire_agent::AgentError;
use quire_app::content::Confirmation;
use quire_core::input::{AgentPatch, NewAgent};
use quire_core::model::{Agent, AgentSession, SessionStatus};
use serde::Deserialize;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::time::Duration;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/agents", get(list).post(create))
        // No DELETE: disabling (PATCH `enabled: false`) is an agent's archive,
        // and a disabled agent stays readable to admins, which a DELETE would deny.
        .route("/api/v1/agents/{alias}", get(read).patch(update))
        .route("/api/v1/agents/{alias}/chat", post(chat))
        .route("/api/v1/agents/{alias}/chat/stream", post(chat_stream))
        .route("/api/v1/sessions", get(sessions))
        .route("/api/v1/sessions/{id}", get(session))
        .route("/api/v1/sessions/{id}/events", get(events))
        .route("/api/v1/sessions/{id}/turns/{turn}/undo", post(undo))
}

/// An agent's error answers as the use cases map it (see [`quire_app::AppError`]).
impl From<AgentError> for ApiError {
    fn from(e: AgentError) -> Self {
        quire_app::AppError::from(e).into()
    }
}

/// An agent with the selectors that match no tool (ignored until such tools exist).
fn with_warnings(state: &AppState, agent: Agent) -> Value {
    let unknown = quire_agent::prompt::unknown_selectors(&agent, state.registry());
    let mut v = serde_json::to_value(&agent).unwrap_or_default();
    if !unknown.is_empty() {
        v["warnings"] = json!(
            unknown.iter().map(|s| format!("tools: \"{s}\" matches no tool yet; it is ignored")).collect::<Vec<_>>()
        );
    }
    v
}

/// Lists the agents of the site the caller can use (admins: all of them).
#[utoipa::path(get, path = "/api/v1/agents", operation_id = "listAgents", tag = "agents", security(("bearer" = [])),
    responses((status = 200, description = "The agents the caller may use (admins: all)", body = ListResponse<Agent>)))]
pub async fn list(State(state): State<AppState>, records: Records) -> ApiResult<Json<Value>> {
    let items: Vec<Value> = records.agents().await?.into_iter().map(|a| with_warnings(&state, a)).collect();
    Ok(Json(json!({ "count": items.len(), "items": items })))
}

/// Creates an agent (admins).
#[utoipa::path(post, path = "/api/v1/agents", operation_id = "createAgent", tag = "agents", request_body = NewAgent, security(("bearer" = [])),
    responses((status = 201, description = "The created agent (with `warnings` for selectors that match no tool)", body = Agent), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    records: Records,
    ApiJson(input): ApiJson<NewAgent>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let agent = records.create_agent(input).await?;
    Ok((StatusCode::CREATED, Json(with_warnings(&state, agent))))
}

/// One agent, by alias or id.
#[utoipa::path(get, path = "/api/v1/agents/{alias}", operation_id = "getAgent", tag = "agents", params(("alias" = String, Path, description = "Alias or id")),
    security(("bearer" = [])), responses((status = 200, description = "The agent (with `warnings` for selectors that match no tool)", body = Agent), (status = 404, body = ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    records: Records,
    ApiPath(alias): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(with_warnings(&state, records.agent(&alias).await?)))
}

/// Changes an agent (admins); `enabled: false` disables it, which is its
/// archive: sessions and history stay, and `enabled: true` brings it back.
#[utoipa::path(patch, path = "/api/v1/agents/{alias}", operation_id = "updateAgent", tag = "agents", params(("alias" = String, Path, description = "Alias or id")),
    request_body = AgentPatch, security(("bearer" = [])),
    responses((status = 200, description = "The changed agent", body = Agent), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    records: Records,
    ApiPath(alias): ApiPath<String>,
    ApiJson(patch): ApiJson<AgentPatch>,
) -> ApiResult<Json<Value>> {
    let agent = records.update_agent(&alias, &patch, None).await?;
    Ok(Json(with_warnings(&state, agent)))
}

/// A message to an agent.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChatBody {
    /// What the user says.
    #[schema(
        min_length = 1,
        max_length = 32000,
        pattern = "[^\\t\\n\\u000b\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
    )]
    pub message: String,
    /// Continue this session; omit to start one.
    #[serde(default)]
    pub session_id: Option<String>,
    /// What the user's UI shows (page being edited, selection, ...).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub context: Option<serde_json::Map<String, Value>>,
    /// Wait for the turn to end or pause and answer `{ text, toolCalls, pendingApprovals, isComplete }`
    /// (default: answer at once with the session and its event stream).
    #[serde(default)]
    pub wait: Option<bool>,
    /// The person's answer to a preview the agent showed in this session,
    /// sent with the message: approving lets the model run exactly the
    /// previewed call; refusing ends it.
    #[serde(default)]
    pub confirm: Option<ConfirmBody>,
    /// For an agent in release mode: the open release this turn stages its
    /// changes in (omit: a release of the turn's own, named after it).
    #[serde(default)]
    #[schema(min_length = 1)]
    pub release_id: Option<String>,
    /// Keys of the site's contexts (brand voice, style guide) the agent
    /// reads in this turn, besides its own.
    #[serde(default)]
    #[schema(max_items = 5)]
    pub contexts: Option<Vec<String>>,
}

/// A person's explicit answer to one preview of the session.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfirmBody {
    /// The preview's confirmationId.
    pub confirmation_id: String,
    /// true approves the preview, false refuses it.
    pub approve: bool,
}

/// Starts a turn. Answers at once with the session id; follow the turn on
/// `GET /api/v1/sessions/{id}/events`.
#[utoipa::path(post, path = "/api/v1/agents/{alias}/chat", operation_id = "chatWithAgent", tag = "agents", params(("alias" = String, Path, description = "Agent alias")),
    request_body = ChatBody, security(("bearer" = [])),
    responses((status = 202, description = "`{ sessionId, turn, events }`: the turn started; follow it on `events`", body = Object), (status = 200, description = "With `wait: true`, the turn that ended or paused: `{ sessionId, turn, events, text, toolCalls, pendingApprovals, isComplete }`", body = Object), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn chat(
    State(state): State<AppState>,
    records: Records,
    ApiPath(alias): ApiPath<String>,
    ApiJson(body): ApiJson<ChatBody>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let wait = body.wait == Some(true);
    let started = start_turn(&state, &records, &alias, body).await?;
    let events = format!("/api/v1/sessions/{}/events", started.session_id);
    if !wait {
        return Ok((
            StatusCode::ACCEPTED,
            Json(json!({ "sessionId": started.session_id, "turn": started.turn, "events": events })),
        ));
    }
    let (session_id, turn) = (started.session_id.clone(), started.turn);
    if tokio::time::timeout(CHAT_WAIT, started.handle).await.is_err() {
        return Ok((
            StatusCode::ACCEPTED,
            Json(json!({ "sessionId": session_id, "turn": turn, "events": events, "isComplete": false,
                         "text": Value::Null, "pendingApprovals": [] })),
        ));
    }
    let session = records.session(&session_id).await?;
    let (backlog, _) = state.runtime().events().subscribe(&session_id, None);
    let end = backlog.iter().rev().find(|e| matches!(e.kind(), "RUN_FINISHED" | "RUN_ERROR"));
    let text = end.and_then(|e| e.data.pointer("/result/text")).cloned().unwrap_or(Value::Null);
    let error = end.filter(|e| e.kind() == "RUN_ERROR").and_then(|e| e.data.get("message")).cloned();
    let mut answer = json!({
        "sessionId": session_id,
        "turn": turn,
        "events": events,
        "text": text,
        "toolCalls": ran_tools(&backlog),
        "pendingApprovals": session.pending,
        "isComplete": session.status == SessionStatus::Idle,
    });
    if let Some(error) = error {
        answer["error"] = error;
    }
    Ok((StatusCode::OK, Json(answer)))
}

/// The tools a run called and that answered, in order: `{ id, name,
/// success, error? }` (calls waiting for approval are in `pendingApprovals`).
fn ran_tools(run: &[quire_agent::Event]) -> Vec<Value> {
    let mut names: Vec<(&str, &str)> = Vec::new();
    let mut out = Vec::new();
    for e in run {
        let id = e.data.get("toolCallId").and_then(Value::as_str).unwrap_or_default();
        match e.kind() {
            "TOOL_CALL_START" => {
                names.push((id, e.data.get("toolCallName").and_then(Value::as_str).unwrap_or_default()));
            }
            "TOOL_CALL_RESULT" => {
                let name = names.iter().find(|(i, _)| *i == id).map_or("", |(_, n)| *n);
                let result: Value = e
                    .data
                    .get("content")
                    .and_then(Value::as_str)
                    .and_then(|c| serde_json::from_str(c).ok())
                    .unwrap_or(Value::Null);
                let success = result.get("success").and_then(Value::as_bool) != Some(false);
                let mut call = json!({ "id": id, "name": name, "success": success });
                if let Some(error) = result.get("error").filter(|_| !success) {
                    call["error"] = error.clone();
                }
                out.push(call);
            }
            _ => {}
        }
    }
    out
}

/// Starts a turn of a chat request (both the answered and the streamed form).
/// The session a message continues must be one the caller may see; an
/// unknown one is a rule of the body (like a parentId naming no page), so a
/// 422 naming `sessionId`, not a 404 that would read as "no such agent".
async fn start_turn(
    state: &AppState,
    records: &Records,
    alias: &str,
    body: ChatBody,
) -> ApiResult<quire_agent::TurnStarted> {
    let message = quire_app::chat::Message {
        agent: alias.to_string(),
        text: body.message,
        session: body.session_id,
        context: body.context.map(Value::Object),
        answer: body
            .confirm
            .map(|c| quire_agent::PreviewAnswer { confirmation_id: c.confirmation_id, approve: c.approve }),
        run_id: None,
        release: body.release_id,
        contexts: body.contexts.unwrap_or_default(),
    };
    Ok(quire_app::chat::start(state.runtime(), records.actor(), message).await?)
}

/// Longest a `wait: true` chat request waits for its turn.
pub(super) const CHAT_WAIT: Duration = Duration::from_secs(300);

/// Starts a turn and answers its events as Server-Sent Events (AG-UI 1.0
/// names) until the turn ends or pauses; the stream then closes. The same
/// events stay available on `GET /api/v1/sessions/{id}/events`.
#[utoipa::path(post, path = "/api/v1/agents/{alias}/chat/stream", operation_id = "chatWithAgentStream", tag = "agents", params(("alias" = String, Path, description = "Agent alias")),
    request_body = ChatBody, security(("bearer" = [])),
    responses((status = 200, description = "A text/event-stream of this turn's AG-UI events", content_type = "text/event-stream", body = SessionEvent), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn chat_stream(
    State(state): State<AppState>,
    records: Records,
    ApiPath(alias): ApiPath<String>,
    ApiJson(body): ApiJson<ChatBody>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let started = start_turn(&state, &records, &alias, body).await?;
    Ok(run_stream(&state, &started.session_id))
}

/// The events of a session's latest run as Server-Sent Events, ending
/// right after the run's last event. Called once the run was announced
/// (it is announced before it is spawned), so the backlog starts with it.
pub(super) fn run_stream(
    state: &AppState,
    session: &str,
) -> Sse<impl Stream<Item = Result<Event, Infallible>> + use<>> {
    use futures_util::StreamExt;
    let events = run_events(state, session);
    Sse::new(events.map(|e| Ok(sse_event(&e)))).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// The events of a session's latest run, ending right after its last event
/// (`RUN_FINISHED` or `RUN_ERROR`) without waiting for another. Called
/// once the run was announced, as [`run_stream`].
pub(super) fn run_events(state: &AppState, session: &str) -> impl Stream<Item = quire_agent::Event> + use<> {
    let (backlog, receiver) = state.runtime().events().subscribe(session, None);
    use futures_util::StreamExt;
    futures_util::stream::unfold((Box::pin(event_stream(backlog, receiver)), false), |(mut events, ended)| async move {
        if ended {
            return None;
        }
        let e = events.next().await?;
        let last = matches!(e.kind(), "RUN_FINISHED" | "RUN_ERROR");
        Some((e, (events, last)))
    })
}

/// A session's backlog, then its live events (a slow reader skips what it
/// missed; it may reconnect with Last-Event-ID).
fn event_stream(
    backlog: Vec<quire_agent::Event>,
    receiver: tokio::sync::broadcast::Receiver<quire_agent::Event>,
) -> impl Stream<Item = quire_agent::Event> {
    use futures_util::StreamExt;
    let live = futures_util::stream::unfold(receiver, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(event) => return Some((event, rx)),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    futures_util::stream::iter(backlog).chain(live)
}

/// One AG-UI event as an SSE event: id, type and JSON data.
fn sse_event(e: &quire_agent::Event) -> Event {
    Event::default().id(e.id.to_string()).event(e.kind()).data(e.data.to_string())
}

super::list_query! {
    /// Whose sessions to list.
    SessionQuery {
        /// Admins: every user's sessions (default: the caller's own).
        all: Option<bool>,
    }
}

/// The caller's chat sessions, newest first.
#[utoipa::path(get, path = "/api/v1/sessions", operation_id = "listSessions", tag = "agents", params(SessionQuery), security(("bearer" = [])),
    responses((status = 200, description = "One page of the caller's sessions, newest first", body = ListResponse<AgentSession>)))]
pub async fn sessions(
    records: Records,
    ApiQuery(q): ApiQuery<SessionQuery>,
) -> ApiResult<Json<ListResponse<AgentSession>>> {
    let paging = Paging { limit: q.limit, cursor: q.cursor };
    Ok(Json(records.sessions(q.all == Some(true), paging.limit()?, paging.cursor()).await?.into()))
}

/// A session as it happened: its messages, what happened besides them,
/// and the approvals it asked for as they stand.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionConversation {
    /// The session.
    session: AgentSession,
    /// Its stored messages in order, `{ seq, turn, body, at }`: a body's
    /// `role` is `user`, `assistant` (text and tool calls) or `tool` (a
    /// call's result, `isError` when it failed) for what the model reads,
    /// and `approval` (a call that waited for a person: `toolCallId`,
    /// `tool`, `arguments`, `approvalId`, `message`, `items`), `undo` (a
    /// person undid `turn`: `by`, `reverted`, `cancelled`) or `failure`
    /// (the turn stopped: `message`, `code`) for what happened besides.
    #[schema(value_type = Vec<Object>)]
    messages: Vec<quire_app::content::StoredMessage>,
    /// Each approval the session asked for, as it stands now (who answered
    /// and why), in the order asked.
    approvals: Vec<Confirmation>,
    /// The stream's last event so far: follow `events` after it to get
    /// only what these messages do not hold.
    last_event_id: String,
}

/// A session with its messages, what happened besides them (approvals
/// asked, undos, failures) and its approvals as they stand.
#[utoipa::path(get, path = "/api/v1/sessions/{id}", operation_id = "getSession", tag = "agents", params(("id" = String, Path, description = "Session id")),
    security(("bearer" = [])), responses((status = 200, description = "The session as it happened", body = SessionConversation), (status = 404, body = ErrorBody)))]
pub async fn session(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<SessionConversation>> {
    let c = quire_app::chat::conversation(state.runtime(), &caller.acting(), &id).await?;
    Ok(Json(SessionConversation {
        session: c.session,
        messages: c.messages,
        approvals: c.approvals,
        last_event_id: c.last_event_id.to_string(),
    }))
}

/// Where to resume a stream.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Same as the Last-Event-ID header (for clients that cannot set it).
    #[param(minimum = 0)]
    pub last_event_id: Option<i64>,
}

/// One Server-Sent Event of a session's stream.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct SessionEvent {
    /// Increasing id; send it back as Last-Event-ID to resume after it.
    id: String,
    /// The AG-UI event type (`RUN_STARTED`, `TEXT_MESSAGE_CONTENT`, ...).
    event: String,
    /// The event as JSON text (`{ type, timestamp, ... }`).
    data: String,
}

/// The session's events as Server-Sent Events (AG-UI 1.0 names), from any
/// process serving the site (events are stored for an hour). Without
/// Last-Event-ID the stream starts at the latest run; with it, right after
/// that event. The stream stays open for later turns, and ends when its
/// token is revoked or expires, or when the session's events leave memory
/// (two minutes after its last run ended, or sooner when many sessions
/// ended since); the session's messages stay on `GET /api/v1/sessions/{id}`.
#[utoipa::path(get, path = "/api/v1/sessions/{id}/events", operation_id = "streamSessionEvents", tag = "agents",
    params(("id" = String, Path, description = "Session id"), EventsQuery), security(("bearer" = [])),
    responses((status = 200, description = "A text/event-stream of AG-UI events", content_type = "text/event-stream", body = SessionEvent), (status = 404, body = ErrorBody)))]
pub async fn events(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    ApiPath(id): ApiPath<String>,
    ApiQuery(q): ApiQuery<EventsQuery>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    Records::of(&state, &caller).session(&id).await?;
    let last = match headers.get("last-event-id").map(|v| v.to_str().ok().and_then(|s| s.trim().parse::<u64>().ok())) {
        Some(None) => return Err(ApiError::bad_field("Last-Event-ID", "expected the id of an earlier event")),
        Some(Some(v)) => Some(v),
        None => match q.last_event_id {
            Some(id) => {
                Some(u64::try_from(id).map_err(|_| ApiError::bad_field("lastEventId", "must not be negative"))?)
            }
            None => None,
        },
    };
    if last.is_some_and(|l| l > i64::MAX as u64) {
        return Err(ApiError::bad_field("Last-Event-ID", "expected the id of an earlier event"));
    }
    let (backlog, receiver) = state.runtime().subscribe(&id, last).await?;
    use futures_util::StreamExt;
    // Events stored late by another process may reach the receiver with
    // ids before where this stream started: those are skipped.
    let from = last.map(|l| l + 1).or(backlog.first().map(|e| e.id)).unwrap_or(0);
    // The stream ends when its token is revoked or expires, or its
    // browser session ends.
    let revoked = state.until_ended(&caller);
    let stream = event_stream(backlog, receiver)
        .filter(move |e| std::future::ready(e.id >= from))
        .take_until(revoked)
        .map(|e| Ok(sse_event(&e)));
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

/// Reverts every change a turn made, newest first, through the change log,
/// and ends the turn (its open approvals are rejected); refused with a
/// conflict, changing nothing, when a record changed since.
#[utoipa::path(post, path = "/api/v1/sessions/{id}/turns/{turn}/undo", operation_id = "undoTurn", tag = "agents",
    params(("id" = String, Path, description = "Session id"), ("turn" = i64, Path, description = "Turn number")),
    security(("bearer" = [])), responses((status = 200, description = "`{ count, reverted: Change[], cancelled }`", body = Object), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn undo(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((id, turn)): ApiPath<(String, i64)>,
) -> ApiResult<Json<Value>> {
    let undone = quire_app::undo::undo_turn(state.runtime(), &caller.acting(), &id, turn).await?;
    Ok(Json(json!({ "count": undone.reverted.len(), "reverted": undone.reverted, "cancelled": undone.cancelled })))
}
