//! `POST /api/v1/agents/{alias}/agui`: an agent run by an AG-UI 1.0 client
//! (`@ag-ui/client`'s `HttpAgent`, CopilotKit and the like). The body is
//! AG-UI's `RunAgentInput`; the answer is the run's AG-UI event stream
//! (Server-Sent Events), ending with its `RUN_FINISHED` or `RUN_ERROR`.
//!
//! `threadId` is the session: one of the caller's continues it, any other
//! value starts a new session with that id (so a client keeps its own
//! thread id); an id another caller or site holds is refused (409). The last message, the person's, starts the turn; a run
//! whose `resume` answers the interrupts of the last (every approval the
//! session waits on: approve, or reject with a reason) goes on with the
//! paused turn instead. `context` becomes what the person's screen shows;
//! `forwardedProps.contexts` names the site's contexts (brand voice, style
//! guide) chosen for the turn; `tools`, `state` and the rest of
//! `forwardedProps` are accepted and not read (the agent's tools are its
//! own, run on the server).

use super::agents::{SessionEvent, run_stream};
use crate::AppState;
use crate::auth::Records;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath};
use axum::Router;
use axum::extract::State;
use axum::response::sse::{Event, Sse};
use axum::routing::post;
use futures_util::Stream;
use quire_app::AppError;
use quire_app::approvals::Verdict;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::convert::Infallible;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/agents/{alias}/agui", post(run))
}

/// AG-UI's `RunAgentInput`: a request to run the agent on a thread. Keys
/// AG-UI adds later are accepted and not read.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunAgentInput {
    /// The session to continue; any value that names none of the caller's
    /// sessions starts a new one with that id (409 when another caller or
    /// site holds it).
    #[schema(min_length = 1, max_length = 128, pattern = "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}(?![\\s\\S])")]
    pub thread_id: String,
    /// The run's id, which its events carry.
    pub run_id: String,
    /// Not read.
    #[serde(default)]
    pub parent_run_id: Option<String>,
    /// Not read.
    #[serde(default)]
    pub protocol_version: Option<String>,
    /// The conversation as the client holds it: the last message, the
    /// person's, is what they say now (earlier ones are the session's own).
    pub messages: Vec<AguiMessage>,
    /// The client's own tools: not offered to the agent, whose tools run on the server.
    #[serde(default)]
    pub tools: Vec<AguiTool>,
    /// What the person's screen shows, each piece named by its description.
    #[serde(default)]
    pub context: Vec<AguiContext>,
    /// Not read.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub state: Option<Value>,
    /// `contexts`: keys of the site's contexts chosen for the turn; the
    /// rest is not read.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub forwarded_props: Option<Value>,
    /// Answers to the interrupts the thread's last run ended with: every
    /// approval it waits on, each approved or rejected.
    #[serde(default)]
    pub resume: Option<Vec<ResumeEntry>>,
}

/// One message of the conversation.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AguiMessage {
    /// The message's id.
    pub id: String,
    /// Who said it.
    pub role: AguiRole,
    /// Its content: text, or parts of which the text ones are read.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub content: Option<Value>,
}

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AguiRole {
    /// The developer.
    Developer,
    /// The system.
    System,
    /// The agent.
    Assistant,
    /// The person.
    User,
    /// A tool's result.
    Tool,
    /// An activity shown on the front end.
    Activity,
    /// The agent's reasoning.
    Reasoning,
}

/// A tool of the client's own.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct AguiTool {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its parameters' JSON Schema.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub parameters: Option<Value>,
}

/// A named piece of what the person's screen shows.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct AguiContext {
    /// What it is.
    pub description: String,
    /// Its value.
    pub value: String,
}

/// An answer to one interrupt.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResumeEntry {
    /// The interrupt's id: the approval's.
    pub interrupt_id: String,
    /// `resolved` with `payload: { approved, reason? }`; `cancelled`
    /// (dismissed without an answer) rejects it.
    pub status: ResumeStatus,
    /// `{ approved: boolean, reason?: string }`, as the interrupt's `responseSchema` says.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub payload: Option<Value>,
    /// Not read.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Value>,
}

/// Whether the person answered an interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResumeStatus {
    /// They answered (`payload`).
    Resolved,
    /// They dismissed it.
    Cancelled,
}

/// A person's answer to an approval interrupt.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovalAnswer {
    approved: bool,
    #[serde(default)]
    reason: Option<String>,
}

/// Runs the agent as an AG-UI client asks: the person's last message
/// starts a turn of the thread's session (a new one, whose id is the
/// `threadId`, when it names none of the caller's), or `resume` answers the approvals its last run
/// paused on and the turn goes on. Answers the run's AG-UI events as
/// Server-Sent Events until its `RUN_FINISHED` (outcome `success`, or
/// `interrupt` with one interrupt per approval waited on) or `RUN_ERROR`.
#[utoipa::path(post, path = "/api/v1/agents/{alias}/agui", operation_id = "runAgentAgui", tag = "agents", params(("alias" = String, Path, description = "Agent alias")),
    request_body = RunAgentInput, security(("bearer" = [])),
    responses((status = 200, description = "A text/event-stream of the run's AG-UI 1.0 events", content_type = "text/event-stream", body = SessionEvent), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn run(
    State(state): State<AppState>,
    records: Records,
    ApiPath(alias): ApiPath<String>,
    ApiJson(input): ApiJson<RunAgentInput>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let answers = match &input.resume {
        Some(entries) => entries.iter().enumerate().map(|(i, e)| verdict(i, e)).collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let run = quire_app::chat::ThreadRun {
        agent: alias,
        text: said(&input.messages)?,
        context: screen(&input.context),
        contexts: chosen_contexts(input.forwarded_props.as_ref())?,
        thread: Some(input.thread_id),
        run_id: Some(input.run_id),
        answers,
    };
    let session = quire_app::chat::run_thread(state.runtime(), records.actor(), run).await?;
    Ok(run_stream(&state, &session))
}

/// What one resume entry answers: its approval and the verdict.
/// The contexts `forwardedProps.contexts` chose: an array of keys, or none.
fn chosen_contexts(props: Option<&Value>) -> Result<Vec<String>, ApiError> {
    let Some(given) = props.and_then(|p| p.get("contexts")).filter(|c| !c.is_null()) else { return Ok(Vec::new()) };
    serde_json::from_value::<Vec<String>>(given.clone()).map_err(|_| {
        let field = "forwardedProps.contexts";
        AppError::invalid(field, format!("{field}: expected an array of context keys")).into()
    })
}

fn verdict(at: usize, entry: &ResumeEntry) -> Result<(String, Verdict), ApiError> {
    let verdict = match entry.status {
        ResumeStatus::Cancelled => Verdict::Reject(Some("the person dismissed it without answering".into())),
        ResumeStatus::Resolved => {
            let answer = entry.payload.clone().and_then(|p| serde_json::from_value::<ApprovalAnswer>(p).ok());
            match answer {
                Some(ApprovalAnswer { approved: true, .. }) => Verdict::Approve,
                Some(ApprovalAnswer { approved: false, reason }) => Verdict::Reject(reason),
                None => {
                    let field = format!("resume.{at}.payload");
                    let message = format!("{field}: expected {{ approved: boolean, reason?: string }}");
                    return Err(AppError::invalid(field, message).into());
                }
            }
        }
    };
    Ok((entry.interrupt_id.clone(), verdict))
}

/// What the person says now: the text of the last message, when it is
/// theirs (text, or the text parts of its content).
fn said(messages: &[AguiMessage]) -> Result<Option<String>, ApiError> {
    let Some(last) = messages.last().filter(|m| m.role == AguiRole::User) else { return Ok(None) };
    let at = messages.len() - 1;
    match &last.content {
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(Value::Array(parts)) => {
            let mut texts = Vec::new();
            for part in parts {
                match (part.get("type").and_then(Value::as_str), part.get("text").and_then(Value::as_str)) {
                    (Some("text"), Some(text)) => texts.push(text),
                    (kind, _) => {
                        let field = format!("messages.{at}.content");
                        let kind = kind.unwrap_or("untyped");
                        let message = format!("{field}: only text parts are read; a {kind} part is not");
                        return Err(AppError::invalid(field, message).into());
                    }
                }
            }
            Ok(Some(texts.join("\n")))
        }
        _ => Ok(None),
    }
}

/// The context pieces as what the person's screen shows: each value under
/// its description.
fn screen(context: &[AguiContext]) -> Option<Value> {
    let shown: Map<String, Value> =
        context.iter().map(|c| (c.description.clone(), Value::String(c.value.clone()))).collect();
    (!shown.is_empty()).then_some(Value::Object(shown))
}
