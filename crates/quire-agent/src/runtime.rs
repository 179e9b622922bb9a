//! The step loop: acknowledgeRequest → tools → finalAnswer, with approvals
//! that pause a turn until a person answers, sessions that survive a
//! restart, and every step streamed as AG-UI events.

use crate::events::EventHub;
use crate::memory;
use crate::message::*;
use crate::prompt::{self, StepInput};
use crate::provider::{NOT_CONFIGURED, Profiles, Provider};
use chrono::{DateTime, Utc};
use quire_core::access::Group;
use quire_core::model::*;
use quire_store::{ConfirmationStatus, Scope, StoreError};
use quire_tools::{ApprovalPolicy, CallContext, ErrorCode, Registry, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::task::JoinHandle;
use tracing::Instrument;

/// Why a chat request was refused.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// No such agent or session in the scope.
    #[error("{0}")]
    NotFound(String),
    /// The person may not use this agent or session.
    #[error("{0}")]
    Forbidden(String),
    /// The session is busy or waiting for approvals.
    #[error("{0}")]
    Conflict(String),
    /// A field of the request is wrong.
    #[error("{field}: {message}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Something that is not the caller's fault (a vault that cannot be read).
    #[error("{0}")]
    Internal(String),
}

/// Why a running turn stopped before its end. Its words reach the person
/// as the run's `RUN_ERROR` message, except a take-over's: that run ends
/// without a word.
#[derive(Debug, thiserror::Error)]
enum LoopError {
    /// Another process took the turn over (this one was silent too long):
    /// it runs the turn now, and this one stops.
    #[error("session {session} is not run by this process (another took its turn over)")]
    TakenOver {
        /// The session.
        session: String,
    },
    /// The token or person that started the session may no longer act.
    #[error(
        "the token or person that started this session was revoked, has expired or was disabled; nothing more runs"
    )]
    Revoked,
    /// The group the session recorded is not one Quire knows.
    #[error("session group: {0}")]
    Group(String),
    /// The model could not be reached or answered an error, or its client
    /// could not be built.
    #[error(transparent)]
    Model(#[from] crate::ProviderError),
    /// The store failed.
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for LoopError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::TakenOver { session } => LoopError::TakenOver { session },
            e => LoopError::Store(e),
        }
    }
}

/// Why a tool call of the model did not run as asked. The model reads it
/// as the call's result (`{ success: false, error, errorCode, hint }`).
#[derive(Debug, thiserror::Error)]
enum CallError {
    /// No tool of that name.
    #[error("no tool named \"{0}\"")]
    UnknownTool(String),
    /// The tool exists but the agent may not use it.
    #[error("tool {tool} is not enabled for agent {agent}")]
    NotEnabled {
        /// The tool.
        tool: &'static str,
        /// The agent's alias.
        agent: String,
    },
    /// The arguments are not JSON.
    #[error("arguments are not valid JSON: {0}")]
    BadArguments(#[from] serde_json::Error),
    /// A person rejected the call.
    #[error("{by} rejected this call{}", .reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default())]
    Rejected {
        /// Who rejected it.
        by: String,
        /// Why, when they said.
        reason: Option<String>,
    },
    /// Nobody answered the approval request in time.
    #[error("nobody answered the approval request before it expired; nothing changed")]
    Expired,
    /// The process running the call stopped before its result was written.
    #[error("the process running this call stopped; it may or may not have taken effect")]
    Interrupted,
    /// The turn was undone while the call waited for approval.
    #[error("the turn was undone before this call was approved; nothing changed")]
    Undone,
}

impl CallError {
    /// The code the result carries.
    fn code(&self) -> ErrorCode {
        match self {
            CallError::UnknownTool(_) => ErrorCode::NotFound,
            CallError::NotEnabled { .. } => ErrorCode::Forbidden,
            CallError::BadArguments(_) => ErrorCode::Validation,
            CallError::Rejected { .. } | CallError::Undone => ErrorCode::Rejected,
            CallError::Expired => ErrorCode::ApprovalExpired,
            CallError::Interrupted => ErrorCode::Interrupted,
        }
    }

    /// What the model should do about it.
    fn hint(&self) -> &'static str {
        match self {
            CallError::UnknownTool(_) => "Use searchTools to find the right tool name.",
            CallError::NotEnabled { .. } => "Use the tools you have, or tell the user this agent cannot do it.",
            CallError::BadArguments(_) => "Send the arguments as one JSON object matching the schema.",
            CallError::Rejected { .. } => {
                "Nothing changed. Do not retry the same call; tell the user and ask what they want instead."
            }
            CallError::Expired => "Tell the user; call the tool again if they still want it.",
            CallError::Interrupted => "Check the record before calling again.",
            CallError::Undone => "Do not retry; the user undid this request.",
        }
    }

    /// The call's result, as the model reads it.
    fn to_json(&self) -> Value {
        ToolError::new(self.code(), self.to_string(), self.hint()).to_json()
    }
}

/// What undoing a turn did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnUndone {
    /// The change-log records the undo wrote, oldest first (notes last).
    pub reverted: Vec<Change>,
    /// How many of the turn's approvals, still open, were rejected.
    pub cancelled: u64,
}

/// The person chatting.
#[derive(Debug, Clone)]
pub struct Person {
    /// `token:<id>` or `local:admin`.
    pub actor: String,
    /// Their group.
    pub group: Group,
    /// Site and environment.
    pub scope: Scope,
}

/// A person's explicit answer to a preview the agent showed them, sent
/// with their next message (the chat request's `confirm`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviewAnswer {
    /// The preview's confirmationId.
    pub confirmation_id: String,
    /// Yes runs exactly the previewed call once the model asks again; no
    /// refuses it.
    pub approve: bool,
}

/// A turn that started.
#[derive(Debug)]
pub struct TurnStarted {
    /// The session (new or given).
    pub session_id: String,
    /// The turn's number.
    pub turn: i64,
    /// The running turn; await it to wait for the end (or the pause).
    pub handle: JoinHandle<()>,
}

/// A destructive call waiting for a person.
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

/// How a run ended.
enum Outcome {
    Finished(String),
    Paused(Vec<PendingCall>),
}

/// The agent runtime: one per process, shared by REST, CLI and tests.
pub struct Runtime {
    registry: Arc<Registry>,
    profiles: Profiles,
    hub: Arc<EventHub>,
    /// Clients by profile name: built from a profile on first use, or
    /// injected with [`Runtime::set_provider`].
    clients: Mutex<HashMap<String, ProfileClient>>,
    /// How long (milliseconds) a runner may stay silent before its running
    /// turns are taken over ([`RUNNER_SILENT`] unless changed).
    silent_ms: AtomicU64,
    /// Turns running here now: the process beats only while some do.
    running: Arc<AtomicU64>,
    /// Held while events are stored, so batches are stored in order.
    flushing: tokio::sync::Mutex<()>,
    /// Stores of the relay's batch that failed in a row.
    flush_failures: std::sync::atomic::AtomicU32,
}

/// Counts a running turn while it lives.
struct Running(Arc<AtomicU64>);

impl Running {
    fn new(count: &Arc<AtomicU64>) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        Running(Arc::clone(count))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Longest message accepted.
const MAX_MESSAGE: usize = 32_000;

/// How often the relay stores the events emitted here.
const RELAY_EVERY: Duration = Duration::from_millis(50);
/// Every how many relay ticks events stored by other processes are read
/// for the streams open here (every 250 ms).
const FOLLOW_TICKS: u64 = 5;
/// How far back following reads again, for events stored late (a batch of
/// another process committed after a later one).
const FOLLOW_BACK: Duration = Duration::from_secs(5);
/// Most events of one session read by one follow.
const FOLLOW_LIMIT: u32 = 2_000;
/// How often the process beats while it runs turns.
const HEARTBEAT_EVERY: Duration = Duration::from_secs(2);
/// Every how many relay ticks old stored events are forgotten (every 10
/// min, and at the first tick).
const PRUNE_TICKS: u64 = 12_000;
/// Most events kept for the database while it cannot be written.
const OUTBOX_MAX: usize = 50_000;
/// How long stored events are kept: long after any stream reconnects.
const KEEP_STORED: Duration = Duration::from_secs(3600);
/// A process silent this long is taken to have stopped: its running turns
/// are taken over by another.
pub const RUNNER_SILENT: Duration = Duration::from_secs(10);

impl Runtime {
    /// A runtime over the registry with these model profiles.
    ///
    /// Inside a Tokio runtime it also starts its relay: the events emitted
    /// here are stored (every [`RELAY_EVERY`]), events other processes
    /// stored reach the streams open here, and the process's heartbeat
    /// tells the others its turns are alive. The relay ends with the runtime.
    pub fn new(registry: Arc<Registry>, profiles: Profiles) -> Arc<Self> {
        let runtime = Arc::new(Runtime {
            registry,
            profiles,
            hub: Arc::new(EventHub::default()),
            clients: Mutex::new(HashMap::new()),
            silent_ms: AtomicU64::new(RUNNER_SILENT.as_millis() as u64),
            running: Arc::new(AtomicU64::new(0)),
            flushing: tokio::sync::Mutex::new(()),
            flush_failures: std::sync::atomic::AtomicU32::new(0),
        });
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            runtime.hub.persist();
            handle.spawn(relay(Arc::downgrade(&runtime)));
            handle.spawn(heartbeat(runtime.store().clone(), Arc::downgrade(&runtime.running)));
        }
        runtime
    }

    /// Takes over running turns whose runner was silent for `silent`
    /// (instead of [`RUNNER_SILENT`]).
    pub fn set_runner_silent(&self, silent: Duration) {
        self.silent_ms.store(silent.as_millis() as u64, Ordering::Relaxed);
    }

    /// Stores the events emitted here and not stored yet, after those
    /// another call is storing; a batch that could not be stored is kept
    /// for the next call (up to [`OUTBOX_MAX`] events).
    pub async fn flush_events(&self) {
        let _order = self.flushing.lock().await;
        let outgoing = self.hub.take_outbox();
        if outgoing.is_empty() {
            return;
        }
        match self.store().append_events(outgoing.clone()).await {
            Ok(()) => self.flush_failures.store(0, Ordering::Relaxed),
            // A batch the database keeps refusing is given up after a few
            // tries rather than holding back every event after it.
            Err(e) if self.flush_failures.fetch_add(1, Ordering::Relaxed) >= 3 => {
                self.flush_failures.store(0, Ordering::Relaxed);
                tracing::error!(error = %e, events = outgoing.len(), "agent events could not be stored; given up");
            }
            Err(e) => {
                tracing::warn!(error = %e, events = outgoing.len(), "could not store agent events; kept to try again");
                self.hub.put_back(outgoing, OUTBOX_MAX);
            }
        }
    }

    /// Stores a session's events emitted here and not stored yet, ahead of
    /// the others (a new run's start, before its caller hears of it), where
    /// other processes serve the same database (PostgreSQL; on a SQLite
    /// file the relay stores them within 50 ms).
    async fn flush_session(&self, session: &str) {
        if !matches!(self.store().location(), quire_store::Location::Postgres(_)) {
            return;
        }
        let _order = self.flushing.lock().await;
        let outgoing = self.hub.take_outbox_of(session);
        if outgoing.is_empty() {
            return;
        }
        if let Err(e) = self.store().append_events(outgoing.clone()).await {
            tracing::warn!(error = %e, events = outgoing.len(), "could not store agent events; kept to try again");
            self.hub.put_back(outgoing, OUTBOX_MAX);
        }
    }

    /// Reads what other processes stored for the streams open here (the
    /// runs they emit, and what they add to runs emitted here), from a
    /// little before the last event each stream's session holds.
    async fn follow(&self) {
        let back = FOLLOW_BACK.as_micros() as u64;
        for (session, last) in self.hub.followed() {
            // Pages until one comes back short, so a busy session (more
            // than a page within the look-back) is never stuck on it.
            let mut from = last.saturating_sub(back);
            loop {
                let page = match self.store().events_since(&[(session.clone(), from)], FOLLOW_LIMIT).await {
                    Ok(page) => page,
                    Err(e) => {
                        tracing::warn!(error = %e, "could not read agent events");
                        return;
                    }
                };
                let full = page.len() as u32 == FOLLOW_LIMIT;
                from = page.last().map_or(from, |(_, id, _)| *id);
                let events = page
                    .into_iter()
                    .filter_map(|(_, id, data)| serde_json::from_str(&data).ok().map(|data| crate::Event { id, data }))
                    .collect();
                self.hub.deliver(&session, events, true);
                if !full {
                    break;
                }
            }
        }
    }

    /// A session's events to replay and a receiver of those to come (see
    /// [`EventHub::subscribe`]): after `last_id` when given, else from the
    /// latest run's start. A session whose run is not emitted here (it runs
    /// in another process, or ran before a restart) is read from the
    /// database first, and followed there. The receiver may also get
    /// events stored late with ids before the replay's last: a stream
    /// skips those before where it started.
    pub async fn subscribe(
        &self,
        session: &str,
        last_id: Option<u64>,
    ) -> Result<(Vec<crate::Event>, tokio::sync::broadcast::Receiver<crate::Event>), AgentError> {
        if !self.hub.runs_here(session) {
            let stored = self.store().events_after(session, last_id).await?;
            let events = stored
                .into_iter()
                .filter_map(|(id, data)| serde_json::from_str(&data).ok().map(|data| crate::Event { id, data }))
                .collect();
            // Streams already open here get what they missed too; the new
            // one subscribes after, so it gets nothing twice.
            self.hub.deliver(session, events, true);
        }
        Ok(self.hub.subscribe(session, last_id))
    }

    /// Runs agents of profile `name` (and, when `name` is `default`, of
    /// every profile not configured otherwise) on `provider`, with the
    /// limits of `profile`: any [`Provider`] implementation, so tests and
    /// benchmarks drive the loop in process and a new provider needs no
    /// change here. Replaces what `name` used before.
    pub fn set_provider(&self, name: &str, profile: crate::provider::Profile, provider: Arc<dyn Provider>) {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        clients.insert(name.to_string(), (profile, provider));
    }

    /// The event streams of all sessions.
    pub fn events(&self) -> &EventHub {
        &self.hub
    }

    /// The tool registry.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    fn store(&self) -> &quire_store::Store {
        &self.registry.services().store
    }

    /// An agent the person may chat with.
    pub async fn agent_for(&self, person: &Person, alias: &str) -> Result<Agent, AgentError> {
        let agent = match self.store().agent(&person.scope, alias).await {
            Ok(a) => a,
            Err(StoreError::NotFound { .. }) => return Err(AgentError::NotFound(format!("no agent \"{alias}\""))),
            Err(e) => return Err(e.into()),
        };
        if !agent.enabled {
            return Err(AgentError::Conflict(format!("agent \"{alias}\" is disabled; enable it first")));
        }
        if !allowed_for(&agent, person.group) {
            return Err(AgentError::Forbidden(format!(
                "group {} may not use agent \"{alias}\" (allowed: {})",
                person.group.as_str(),
                agent.allowed_groups.join(", ")
            )));
        }
        Ok(agent)
    }

    /// Starts a turn: stores the message and runs the loop in the background.
    pub async fn start(
        self: &Arc<Self>,
        person: &Person,
        alias: &str,
        message: &str,
        session_id: Option<&str>,
        context: Option<Value>,
    ) -> Result<TurnStarted, AgentError> {
        self.start_answering(person, alias, message, session_id, context, None).await
    }

    /// Starts a turn whose message may answer the previews the last turn
    /// showed ([`Runtime::answer_previews`]): with `answer`, the one named;
    /// under the conversational policy, a plain yes approves the one
    /// preview just shown and any other message refuses them.
    pub async fn start_answering(
        self: &Arc<Self>,
        person: &Person,
        alias: &str,
        message: &str,
        session_id: Option<&str>,
        context: Option<Value>,
        answer: Option<PreviewAnswer>,
    ) -> Result<TurnStarted, AgentError> {
        if message.trim().is_empty() {
            return Err(AgentError::Invalid { field: "message", message: "required".into() });
        }
        if message.chars().count() > MAX_MESSAGE {
            return Err(AgentError::Invalid { field: "message", message: format!("at most {MAX_MESSAGE} characters") });
        }
        let agent = self.agent_for(person, alias).await?;
        for unknown in prompt::unknown_selectors(&agent, &self.registry) {
            tracing::warn!(agent = %agent.alias, selector = %unknown, "agent tool selector matches no tool; ignored");
        }
        let store = self.store();
        let scope = &person.scope;
        let user = Message::User { content: message.to_string() };
        let body = to_json(&user);
        let (session, history) = match session_id {
            Some(id) => {
                let mut s = match store.session(scope, id).await {
                    Ok(s) => s,
                    Err(StoreError::NotFound { .. }) => {
                        return Err(AgentError::NotFound(format!("no session {id}")));
                    }
                    Err(e) => return Err(e.into()),
                };
                if s.actor != person.actor {
                    return Err(AgentError::Forbidden("this session belongs to someone else".into()));
                }
                if s.agent_id != agent.id {
                    return Err(AgentError::Invalid {
                        field: "sessionId",
                        message: format!("session {id} is with another agent"),
                    });
                }
                let from = [SessionStatus::Idle, SessionStatus::Failed];
                if from.contains(&s.status) {
                    self.answer_previews(person, &s, &agent, message, answer.as_ref()).await?;
                }
                let Some(turn) = store.begin_turn(scope, &s.id, &from, context.as_ref(), &body).await? else {
                    let current = store.session(scope, &s.id).await?;
                    return Err(AgentError::Conflict(match current.status {
                        SessionStatus::Paused => format!(
                            "session {} waits for approvals ({}); approve or reject them first",
                            current.id,
                            pending_ids(&current.pending).join(", ")
                        ),
                        _ => format!("session {} is answering; wait for the turn to end", current.id),
                    }));
                };
                s.status = SessionStatus::Running;
                s.turns = turn;
                s.steps = 0;
                if context.is_some() {
                    s.context = context;
                }
                // The conversation so far is read when the run starts.
                (s, None)
            }
            None if answer.is_some() => {
                return Err(AgentError::Invalid {
                    field: "confirm",
                    message: "a new conversation has no preview to answer; pass its sessionId".into(),
                });
            }
            None => {
                let title: String = message.trim().chars().take(80).collect();
                let new = quire_store::NewSession {
                    agent_id: agent.id.clone(),
                    actor: person.actor.clone(),
                    group: person.group.as_str().to_string(),
                    title,
                    context,
                };
                (store.start_session(scope, new, &body).await?, Some(vec![user]))
            }
        };
        let turn = session.turns;
        let runtime = Arc::clone(self);
        let scope = scope.clone();
        let session_id = session.id.clone();
        let run_id = self.run_started(&session_id);
        // Stored before the caller hears of the turn, so a stream opened on
        // another process right after starts at this run.
        self.flush_session(&session_id).await;
        let handle = tokio::spawn(async move { runtime.run(scope, session, agent, run_id, Vec::new(), history).await });
        Ok(TurnStarted { session_id, turn, handle })
    }

    /// Answers the previews of a conversation before the person's next
    /// message starts a turn. Consent comes from the person, never from the
    /// model's reading of them: `answer` approves or refuses the preview it
    /// names; otherwise, under the conversational policy, a message the
    /// server reads as a plain yes ([`crate::consent::is_plain_yes`])
    /// approves the one preview the last turn showed, and any other message
    /// (a refusal, a new request, "thanks, bye") refuses what it showed.
    /// A preview of a call that sends data out is never approved by a
    /// message: it waits for the Approve button or an explicit `answer`.
    async fn answer_previews(
        &self,
        person: &Person,
        session: &AgentSession,
        agent: &Agent,
        message: &str,
        answer: Option<&PreviewAnswer>,
    ) -> Result<(), AgentError> {
        let store = self.store();
        let scope = &person.scope;
        let approver = CallContext {
            actor: person.actor.clone(),
            group: person.group,
            scope: scope.clone(),
            surface: Surface::Rest,
            session_id: None,
            turn_id: None,
            policy: ApprovalPolicy::User,
            writer: None,
        };
        if let Some(answer) = answer {
            let id = &answer.confirmation_id;
            let theirs = match store.confirmation(scope, id).await {
                Ok(c) => c.requested_via == Surface::Agent && c.session_id.as_deref() == Some(session.id.as_str()),
                Err(StoreError::NotFound { .. }) => false,
                Err(e) => return Err(e.into()),
            };
            if !theirs {
                return Err(AgentError::Invalid {
                    field: "confirm",
                    message: format!("{id} is not a preview of session {}", session.id),
                });
            }
            let answered = if answer.approve {
                self.registry.approve(&approver, id).await
            } else {
                self.registry.reject(&approver, id, Some("the user declined it")).await
            };
            answered.map_err(tool_failure)?;
            return Ok(());
        }
        if agent.approval_policy != AgentPolicy::Conversational {
            return Ok(());
        }
        let previews = store.unanswered_previews(scope, &session.id, &session.turns.to_string()).await?;
        let yes = match previews.as_slice() {
            [one] => {
                crate::consent::is_plain_yes(message) && self.registry.get(&one.tool).is_some_and(|t| !t.sends_out())
            }
            _ => false,
        };
        for preview in &previews {
            let tool = self.registry.get(&preview.tool).map(|t| t.sends_out());
            let answered = if yes {
                self.registry.approve(&approver, &preview.id).await
            } else if tool == Some(true) {
                // Waits for the Approve button; a message neither approves
                // nor refuses it.
                continue;
            } else {
                self.registry.reject(&approver, &preview.id, Some("the user's next message did not approve it")).await
            };
            if let Err(e) = answered {
                tracing::warn!(preview = %preview.id, error = %e.message, "could not answer a preview");
            }
        }
        Ok(())
    }

    /// Resumes a paused session once every pending approval is answered
    /// (or expired). Answers the running continuation, or None when the
    /// session is not ready (or another process took it).
    pub async fn resume(
        self: &Arc<Self>,
        scope: &Scope,
        session_id: &str,
    ) -> Result<Option<JoinHandle<()>>, AgentError> {
        let store = self.store();
        let session = store.session(scope, session_id).await?;
        if session.status != SessionStatus::Paused {
            return Ok(None);
        }
        let pending: Vec<PendingCall> = serde_json::from_value(session.pending.clone()).unwrap_or_default();
        let mut answers = Vec::new();
        for p in &pending {
            let confirmation = match store.confirmation(scope, &p.approval_id).await {
                Ok(c) => Some(c),
                Err(StoreError::NotFound { .. }) => None,
                Err(e) => return Err(e.into()),
            };
            let answer = match confirmation {
                None => Answer::Expired,
                Some(c) => match c.status {
                    ConfirmationStatus::Approved => Answer::Approved,
                    ConfirmationStatus::Rejected => {
                        Answer::Rejected { by: c.resolved_by.clone().unwrap_or_default(), reason: c.reason.clone() }
                    }
                    ConfirmationStatus::Used => Answer::Expired,
                    ConfirmationStatus::Pending if c.expires_at <= Utc::now() => Answer::Expired,
                    ConfirmationStatus::Pending => return Ok(None),
                },
            };
            answers.push((p.clone(), answer));
        }
        if !store.claim_session(scope, session_id, &[SessionStatus::Paused], SessionStatus::Running).await? {
            return Ok(None);
        }
        let agent = match store.agent(scope, &session.agent_id).await {
            Ok(a) => a,
            Err(e) => return Err(e.into()),
        };
        let runtime = Arc::clone(self);
        let scope = scope.clone();
        let run_id = self.run_started(session_id);
        self.flush_session(session_id).await;
        Ok(Some(tokio::spawn(async move { runtime.run(scope, session, agent, run_id, answers, None).await })))
    }

    /// Resumes every paused session whose approvals are all answered;
    /// answers how many it resumed. Run periodically and at start-up, so
    /// approvals given through any process (or before a restart) continue.
    pub async fn sweep(self: &Arc<Self>) -> usize {
        self.hub.prune();
        let paused = match self.store().paused_sessions().await {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(error = %e, "could not list paused sessions");
                return 0;
            }
        };
        let mut resumed = 0;
        for (scope, session) in paused {
            match self.resume(&scope, &session.id).await {
                Ok(Some(_)) => resumed += 1,
                Ok(None) => {}
                Err(e) => tracing::warn!(session = %session.id, error = %e, "could not resume session"),
            }
        }
        let silent = Duration::from_millis(self.silent_ms.load(Ordering::Relaxed));
        let orphans = match self.store().orphaned_sessions(silent).await {
            Ok(o) => o,
            Err(e) => {
                tracing::warn!(error = %e, "could not list the turns of stopped processes");
                return resumed;
            }
        };
        for (scope, session, runner) in orphans {
            if runner == self.store().replica() {
                continue;
            }
            match self.take_over(&scope, session, &runner).await {
                Ok(Some(_)) => resumed += 1,
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "could not take a turn over"),
            }
        }
        resumed
    }

    /// Goes on with a turn whose process stopped while running it, from
    /// what the database holds: a call it left without a result gets one
    /// saying it was interrupted, and the model is told which changes the
    /// turn made already (an interrupted step's writes may have committed
    /// without the step), then the turn runs on here. Answers None when
    /// another process took it first.
    pub async fn take_over(
        self: &Arc<Self>,
        scope: &Scope,
        session: AgentSession,
        runner: &str,
    ) -> Result<Option<JoinHandle<()>>, AgentError> {
        let store = self.store();
        let silent = Duration::from_millis(self.silent_ms.load(Ordering::Relaxed));
        if !store.take_over_session(scope, &session.id, runner, silent).await? {
            return Ok(None);
        }
        tracing::warn!(session = %session.id, turn = session.turns, "taking over a turn whose process stopped");
        let thread = session.id.clone();
        let run_id = self.run_started(&thread);
        match self.recover(scope, session, run_id.clone()).await {
            Ok(handle) => Ok(Some(handle)),
            Err(e) => {
                // Not left running with nobody to run it: the turn fails, and
                // its user can go on.
                tracing::error!(session = %thread, error = %e, "could not take a turn over");
                store.claim_session(scope, &thread, &[SessionStatus::Running], SessionStatus::Failed).await.ok();
                let message = format!("the turn could not go on after its server stopped: {e}");
                self.hub.emit(&thread, "RUN_ERROR", json!({ "threadId": thread, "runId": run_id, "message": message }));
                self.flush_events().await;
                Err(e)
            }
        }
    }

    /// The part of [`Runtime::take_over`] after the claim: the results of
    /// interrupted calls and a note of what the turn did are written, and
    /// the turn runs on.
    async fn recover(
        self: &Arc<Self>,
        scope: &Scope,
        mut session: AgentSession,
        run_id: String,
    ) -> Result<JoinHandle<()>, AgentError> {
        let store = self.store();
        let agent = store.agent(scope, &session.agent_id).await?;
        let thread = session.id.clone();
        let stored = store.session_messages(scope, &session.id).await?;
        let history: Vec<Message> = stored.into_iter().filter_map(|m| serde_json::from_value(m.body).ok()).collect();
        let mut recovered = Vec::new();
        let mut answered: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for m in history.iter().rev() {
            match m {
                Message::Tool { tool_call_id, .. } => {
                    answered.insert(tool_call_id);
                }
                Message::Assistant { tool_calls, .. } => {
                    for call in tool_calls.iter().filter(|c| !answered.contains(c.id.as_str())) {
                        let content = CallError::Interrupted.to_json();
                        recovered.push(self.failed_call(&thread, &call.id, &call.name, &content));
                    }
                    break;
                }
                Message::User { .. } => break,
            }
        }
        let filter = quire_store::ChangeFilter {
            session_id: Some(session.id.clone()),
            turn_id: Some(session.turns.to_string()),
            ..Default::default()
        };
        let changes = store.changes(scope, &filter, 50, None).await?.items;
        let made = if changes.is_empty() {
            "It has changed nothing yet.".to_string()
        } else {
            let lines: Vec<String> =
                changes.iter().map(|c| format!("- {} {} {}", c.action, c.entity.as_str(), c.entity_id)).collect();
            format!("Changes this turn already made:\n{}", lines.join("\n"))
        };
        // Said as the server, in the user's place: the model answers it
        // rather than continuing a text of its own.
        let note = format!(
            "[Quire server] The server that was running this turn stopped; another goes on with it. {made}\n\
             Check before repeating any of them, then finish what the user asked."
        );
        recovered.push(Message::User { content: note });
        let bodies: Vec<Value> = recovered.iter().map(to_json).collect();
        store.record_step(scope, &session.id, &quire_store::SessionUpdate::default(), session.turns, &bodies).await?;
        self.flush_events().await;
        session.status = SessionStatus::Running;
        let runtime = Arc::clone(self);
        let scope = scope.clone();
        Ok(tokio::spawn(async move { runtime.run(scope, session, agent, run_id, Vec::new(), None).await }))
    }

    /// Undoes every change turn `turn` of a session made (database records
    /// and vault notes) and ends the turn: its approvals still open are
    /// rejected, and a turn paused on them is closed with a result for each
    /// waiting call, so nothing of it runs later. A running turn is refused
    /// (wait for it to end or pause). Answers the change-log records the undo
    /// wrote, oldest first.
    pub async fn undo_turn(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        session_id: &str,
        turn: i64,
    ) -> Result<TurnUndone, AgentError> {
        let store = self.store();
        let session = store.session(scope, session_id).await?;
        if turn < 1 || turn > session.turns {
            return Err(AgentError::NotFound(format!(
                "session {session_id} has no turn {turn} (it has {})",
                session.turns
            )));
        }
        let current = turn == session.turns;
        if current && session.status == SessionStatus::Running {
            return Err(AgentError::Conflict(format!(
                "turn {turn} of session {session_id} is still running; undo it once it has ended or paused"
            )));
        }
        // A paused turn is taken over, so no approval answered meanwhile resumes it.
        let paused = current
            && session.status == SessionStatus::Paused
            && store.claim_session(scope, session_id, &[SessionStatus::Paused], SessionStatus::Running).await?;
        let undone = self.undo_changes(ctx, scope, session_id, turn).await;
        if paused {
            let mut session = store.session(scope, session_id).await?;
            if undone.is_err() {
                session.status = SessionStatus::Paused;
                store.save_session(scope, &session, &[]).await?;
            } else {
                self.close_undone_turn(scope, &mut session).await?;
            }
        }
        undone
    }

    /// The undo itself: notes checked first, then the database in one
    /// transaction (which also rejects the turn's open approvals), then notes.
    async fn undo_changes(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        session_id: &str,
        turn: i64,
    ) -> Result<TurnUndone, AgentError> {
        let store = self.store();
        let services = self.registry.services();
        let filter = quire_store::ChangeFilter {
            entity: Some(EntityKind::Note),
            session_id: Some(session_id.to_string()),
            turn_id: Some(turn.to_string()),
            ..Default::default()
        };
        // Every note change of the turn, a page at a time: none is left out.
        let mut note_changes = Vec::new();
        let mut cursor = None;
        loop {
            let page = store.changes(scope, &filter, 100, cursor.as_deref()).await?;
            note_changes.extend(page.items);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        quire_tools::notes::check_note_changes(services, scope, &note_changes).await.map_err(tool_failure)?;
        let report = store.undo_turn(ctx, scope, session_id, &turn.to_string()).await?;
        let mut reverted = report.reverted;
        let notes =
            quire_tools::notes::undo_note_changes(services, ctx, scope, &note_changes).await.map_err(tool_failure)?;
        reverted.extend(notes);
        Ok(TurnUndone { reverted, cancelled: report.cancelled })
    }

    /// Ends a paused turn whose changes were undone: each waiting call gets
    /// a result saying it never ran, and the session is idle again.
    async fn close_undone_turn(&self, scope: &Scope, session: &mut AgentSession) -> Result<(), AgentError> {
        let pending: Vec<PendingCall> = serde_json::from_value(session.pending.clone()).unwrap_or_default();
        let thread = session.id.clone();
        let mut messages = Vec::new();
        for p in pending {
            let content = CallError::Undone.to_json();
            let msg = self.failed_call(&thread, &p.tool_call_id, &p.tool, &content);
            messages.push((session.turns, to_json(&msg)));
        }
        session.status = SessionStatus::Idle;
        session.pending = json!([]);
        self.store().save_session(scope, session, &messages).await?;
        self.hub.emit(
            &thread,
            "RUN_FINISHED",
            json!({ "threadId": thread, "runId": uuid::Uuid::now_v7().to_string(), "outcome": "success",
                    "result": { "text": "The turn was undone." } }),
        );
        Ok(())
    }

    /// A call that did not run as asked, closed with `content` as its
    /// result: emitted to the stream and answered as the tool message.
    fn failed_call(&self, thread: &str, call_id: &str, tool: &str, content: &Value) -> Message {
        let text = self.emit_result(thread, call_id, content);
        Message::Tool { tool_call_id: call_id.to_string(), name: tool.to_string(), content: text, is_error: true }
    }

    /// Announces a run before it is spawned, so a client that subscribes
    /// after the request was answered sees this run as the latest.
    fn run_started(&self, thread: &str) -> String {
        let run_id = uuid::Uuid::now_v7().to_string();
        self.hub.emit(thread, "RUN_STARTED", json!({ "threadId": thread, "runId": run_id }));
        run_id
    }

    /// One run: the answers to resume with (if any), then steps until the
    /// turn ends, pauses or fails. Never panics; failures end as RUN_ERROR.
    /// `history` is the conversation when the caller knows it (a new
    /// session); otherwise it is read from the database.
    async fn run(
        self: Arc<Self>,
        scope: Scope,
        mut session: AgentSession,
        agent: Agent,
        run_id: String,
        answers: Vec<(PendingCall, Answer)>,
        history: Option<Vec<Message>>,
    ) {
        let _running = Running::new(&self.running);
        let hub = Arc::clone(&self.hub);
        let thread = session.id.clone();
        let mut journal = Journal::new(&session);
        let outcome = self.steps(&scope, &mut session, &agent, answers, history, &mut journal).await;
        // The session keeps its activated tools; the registry's copy is for
        // the run only (restored at the next one), so memory stays flat.
        self.registry.forget(&quire_tools::defaults::actor_session_key(&scope, &session.actor, &session.id));
        // The turn's last messages and its end are written together, before
        // the end is announced: a paused turn is in the database first.
        let (status, kind, end) = match outcome {
            Ok(Outcome::Finished(text)) => {
                session.pending = json!([]);
                let end =
                    json!({ "threadId": thread, "runId": run_id, "outcome": "success", "result": { "text": text } });
                (SessionStatus::Idle, "RUN_FINISHED", end)
            }
            Ok(Outcome::Paused(pending)) => {
                session.pending = serde_json::to_value(&pending).unwrap_or(json!([]));
                let end = json!({
                    "threadId": thread, "runId": run_id, "outcome": "interrupt",
                    "interrupt": { "reason": "approval_required", "approvals": pending },
                });
                (SessionStatus::Paused, "RUN_FINISHED", end)
            }
            // Another process took the turn over (this one was silent too
            // long): it runs the turn now, and this one ends without a word.
            Err(LoopError::TakenOver { .. }) => {
                tracing::warn!(session = %thread, "the turn was taken over by another process; this one stops");
                hub.abandon(&thread);
                return;
            }
            Err(e) => (
                SessionStatus::Failed,
                "RUN_ERROR",
                json!({ "threadId": thread, "runId": run_id, "message": e.to_string() }),
            ),
        };
        session.status = status;
        if let Err(LoopError::TakenOver { .. }) = self.persist(&scope, &session, &mut journal, Some(status)).await {
            tracing::warn!(session = %thread, "the turn was taken over by another process; this one stops");
            hub.abandon(&thread);
            return;
        }
        hub.emit(&thread, kind, end);
    }

    /// Writes what the database does not hold of the session yet: the
    /// messages since the last write and the state that changed (and the
    /// status, when given), in one write of the store's group commit.
    ///
    /// Within a turn the write is queued and the loop goes on (the step
    /// before's write is awaited first, so at most one is in flight and they
    /// commit in order); a write with a status — the turn's end or pause —
    /// is awaited with everything before it, so a pause or an end is
    /// announced only once the database holds it.
    async fn persist(
        &self,
        scope: &Scope,
        session: &AgentSession,
        journal: &mut Journal,
        status: Option<SessionStatus>,
    ) -> Result<(), LoopError> {
        let span = tracing::info_span!("persist", messages = journal.messages.len());
        let written = async {
            if let Some(previous) = journal.in_flight.take() {
                previous.done().await?;
                // It ran after it was queued: the turn was this process's then.
                journal.confirmed = journal.queued_at;
            }
            let update = journal.update(session, status);
            let messages = std::mem::take(&mut journal.messages);
            journal.queued_at = std::time::Instant::now();
            let write = self.store().queue_step(scope, &session.id, &update, session.turns, &messages).await?;
            if status.is_some() {
                write.done().await
            } else {
                journal.in_flight = Some(write);
                Ok(())
            }
        }
        .instrument(span)
        .await;
        if let Err(e) = &written {
            tracing::error!(session = %session.id, error = %e, "could not save the session");
        }
        Ok(written?)
    }

    /// Makes sure the turn is still this process's before a tool runs: when
    /// no write showed it for half of the silence a take-over waits for
    /// ([`RUNNER_SILENT`]; a long model call or tool, a stalled process),
    /// the step before's write is awaited and, if that was queued too long
    /// ago to tell, an empty fenced write is made, so a turn another
    /// process took over stops here without running anything.
    async fn still_ours(&self, scope: &Scope, session: &AgentSession, journal: &mut Journal) -> Result<(), LoopError> {
        let half = Duration::from_millis(self.silent_ms.load(Ordering::Relaxed) / 2);
        if journal.confirmed.elapsed() < half {
            return Ok(());
        }
        if let Some(previous) = journal.in_flight.take() {
            previous.done().await?;
            journal.confirmed = journal.queued_at;
            if journal.confirmed.elapsed() < half {
                return Ok(());
            }
        }
        let asked = std::time::Instant::now();
        let update = quire_store::SessionUpdate::default();
        self.store().record_step(scope, &session.id, &update, session.turns, &[]).await?;
        journal.confirmed = asked;
        Ok(())
    }

    /// The profile and client agents of `profile_name` run on: an injected
    /// or already built one, else one built from the configured profile
    /// (falling back to `default`, injected or configured). None when no
    /// profile applies.
    fn client(&self, profile_name: &str) -> Result<Option<ProfileClient>, crate::ProviderError> {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = clients.get(profile_name) {
            return Ok(Some(c.clone()));
        }
        let key = if self.profiles.contains(profile_name) { profile_name } else { "default" };
        if let Some(c) = clients.get(key) {
            return Ok(Some(c.clone()));
        }
        let Some(profile) = self.profiles.get(key) else { return Ok(None) };
        let client = profile.client()?;
        clients.insert(key.to_string(), (profile.clone(), Arc::clone(&client)));
        Ok(Some((profile.clone(), client)))
    }

    async fn steps(
        &self,
        scope: &Scope,
        session: &mut AgentSession,
        agent: &Agent,
        answers: Vec<(PendingCall, Answer)>,
        history: Option<Vec<Message>>,
        journal: &mut Journal,
    ) -> Result<Outcome, LoopError> {
        let store = self.store();
        let turn = session.turns;
        let thread = session.id.clone();
        // Permissions are those of the person now, not when the session began:
        // a token revoked, expired or regrouped since, or a person disabled or
        // regrouped since, takes effect here.
        let recorded = Group::parse(&session.group).map_err(LoopError::Group)?;
        let group = store.live_actor_group(&session.actor, recorded).await?.ok_or(LoopError::Revoked)?;
        // The agent's own model: it answers the turn, and tools that write
        // with a model (deep search) use it too.
        let resolved = self.client(&agent.profile)?;
        let writer = resolved.as_ref().map(|(profile, client)| {
            Arc::new(crate::ModelWriter::new(profile.clone(), Arc::clone(client)))
                as quire_tools::external::SharedWriter
        });
        let ctx = CallContext {
            actor: session.actor.clone(),
            group,
            scope: scope.clone(),
            surface: Surface::Agent,
            session_id: Some(session.id.clone()),
            turn_id: Some(turn.to_string()),
            policy: match agent.approval_policy {
                AgentPolicy::User => ApprovalPolicy::User,
                AgentPolicy::Conversational => ApprovalPolicy::Conversational,
            },
            writer,
        };
        // The conversation as the model reads it, each message wrapped once.
        let mut messages: Vec<Message> = match history {
            Some(history) => history.iter().map(prompt::for_model).collect(),
            None => store
                .session_messages(scope, &session.id)
                .await?
                .into_iter()
                .filter_map(|m| serde_json::from_value(m.body).ok())
                .map(|m| prompt::for_model(&m))
                .collect(),
        };
        // The restored activation: the registry's own record is per process.
        if !session.active_tools.is_empty() {
            self.registry.activate(
                &quire_tools::defaults::session_key(&ctx, &session.id),
                &session.active_tools.iter().filter_map(|n| self.registry.get(n).map(|t| t.name)).collect::<Vec<_>>(),
            );
        }

        // Answers to the approvals this run resumes.
        if !answers.is_empty() {
            for (pending, answer) in answers {
                let (content, is_error) = match answer {
                    Answer::Approved => {
                        let approval = quire_tools::Approval::Confirmation(pending.approval_id.clone());
                        let result = match self
                            .registry
                            .run(&ctx, &pending.tool, pending.arguments.clone(), Some(&approval))
                            .await
                        {
                            Ok(outcome) => outcome.into_json(),
                            Err(e) => e.to_json(),
                        };
                        self.after_tool(&thread, session, &pending.tool, &result);
                        let failed = result.get("success").and_then(Value::as_bool) == Some(false);
                        (result, failed)
                    }
                    Answer::Rejected { by, reason } => (CallError::Rejected { by, reason }.to_json(), true),
                    Answer::Expired => (CallError::Expired.to_json(), true),
                };
                let text = self.emit_result(&thread, &pending.tool_call_id, &content);
                let msg =
                    Message::Tool { tool_call_id: pending.tool_call_id, name: pending.tool, content: text, is_error };
                journal.messages.push(to_json(&msg));
                messages.push(prompt::for_model(&msg));
            }
            session.pending = json!([]);
            self.persist(scope, session, journal, None).await?;
        }

        let Some((profile, client)) = resolved else {
            let msg = Message::Assistant { content: NOT_CONFIGURED.to_string(), tool_calls: vec![] };
            self.emit_text(&thread, NOT_CONFIGURED);
            journal.messages.push(to_json(&msg));
            return Ok(Outcome::Finished(NOT_CONFIGURED.to_string()));
        };
        let turn_run = TurnRun { scope, ctx: &ctx, agent, profile: &profile, client: client.as_ref(), group };

        loop {
            if session.steps >= profile.max_steps as i64 {
                let text = format!(
                    "I stopped after {} steps without finishing. Say \"continue\" to let me go on, or narrow the request.",
                    session.steps
                );
                self.emit_text(&thread, &text);
                let msg = Message::Assistant { content: text.clone(), tool_calls: vec![] };
                journal.messages.push(to_json(&msg));
                return Ok(Outcome::Finished(text));
            }
            let span = tracing::info_span!("agent_step", session = %thread, turn, step = session.steps + 1);
            let started = std::time::Instant::now();
            let outcome = self.step(&turn_run, session, &mut messages, journal).instrument(span.clone()).await;
            span.in_scope(|| tracing::debug!(elapsed_us = started.elapsed().as_micros() as u64, "step ended"));
            if let Some(outcome) = outcome? {
                return Ok(outcome);
            }
        }
    }

    /// One step: prepare the request, ask the model, run its tool calls,
    /// and write the step. Answers the turn's outcome when the step ended it
    /// (its messages are then left in `journal` for the run's last write).
    async fn step(
        &self,
        run: &TurnRun<'_>,
        session: &mut AgentSession,
        messages: &mut Vec<Message>,
        journal: &mut Journal,
    ) -> Result<Option<Outcome>, LoopError> {
        let thread = session.id.clone();
        let request = tracing::info_span!("prepare_step").in_scope(|| {
            prompt::prepare_step_for_model(
                &self.registry,
                &StepInput {
                    agent: run.agent,
                    profile: run.profile,
                    group: run.group,
                    activated: &session.active_tools,
                    memory: &session.memory,
                    context: session.context.as_ref(),
                },
                messages.clone(),
            )
        });
        let mut stream = StreamState::new(&self.hub, &thread);
        let response = {
            let mut sink = |d: Delta| stream.on(d);
            run.client.complete(&request, &mut sink).instrument(tracing::info_span!("model")).await
        };
        stream.finish();
        let response = response?;
        session.steps += 1;
        session.input_tokens += response.usage.input_tokens as i64;
        session.output_tokens += response.usage.output_tokens as i64;
        self.hub.emit(
            &thread,
            "CUSTOM",
            json!({ "name": "usage", "value": {
                "step": session.steps,
                "inputTokens": response.usage.input_tokens,
                "outputTokens": response.usage.output_tokens,
                "sessionInputTokens": session.input_tokens,
                "sessionOutputTokens": session.output_tokens,
            } }),
        );
        let assistant = Message::Assistant { content: response.text.clone(), tool_calls: response.tool_calls.clone() };
        journal.messages.push(with_usage(to_json(&assistant), response.usage));
        messages.push(assistant);
        if response.tool_calls.is_empty() {
            return Ok(Some(Outcome::Finished(response.text)));
        }
        let mut pending = Vec::new();
        let mut final_text = None;
        for call in &response.tool_calls {
            self.still_ours(run.scope, session, journal).await?;
            let span = tracing::info_span!("tool_call", tool = %call.name);
            let started = std::time::Instant::now();
            let outcome = self.tool_call(run.ctx, session, run.agent, call).instrument(span.clone()).await;
            span.in_scope(|| tracing::debug!(elapsed_us = started.elapsed().as_micros() as u64, "tool call ended"));
            match outcome {
                CallOutcome::Result { content, is_error, final_answer } => {
                    if let Some(text) = final_answer {
                        final_text = Some(text);
                    }
                    let text = self.emit_result(&thread, &call.id, &content);
                    let msg = Message::Tool {
                        tool_call_id: call.id.clone(),
                        name: call.name.clone(),
                        content: text,
                        is_error,
                    };
                    journal.messages.push(to_json(&msg));
                    messages.push(prompt::for_model(&msg));
                }
                CallOutcome::Pending(p) => {
                    self.hub.emit(&thread, "CUSTOM", json!({ "name": "approval_requested", "value": p }));
                    pending.push(p);
                }
            }
        }
        if !pending.is_empty() {
            return Ok(Some(Outcome::Paused(pending)));
        }
        if let Some(text) = final_text {
            return Ok(Some(Outcome::Finished(text)));
        }
        self.persist(run.scope, session, journal, None).await?;
        Ok(None)
    }

    /// Runs one tool call of the model.
    async fn tool_call(
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
        // which counts once the person approved (see `answer_previews`).
        let conversational = agent.approval_policy == AgentPolicy::Conversational && !tool.sends_out();
        let mut approval = None;
        if let Some(obj) = args.as_object_mut() {
            obj.remove("confirmationId");
            if obj.remove("confirmed") == Some(Value::Bool(true)) && conversational && tool.destructive {
                approval = Some(quire_tools::Approval::Confirmed);
            }
        }
        if !session.active_tools.iter().any(|n| n == tool.name) && tool.category != quire_tools::Category::Default {
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
        let failed = result.get("success").and_then(Value::as_bool) == Some(false);
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
        }
        if !failed {
            let thread = session.id.clone();
            self.after_tool(&thread, session, tool.name, &result);
        }
        CallOutcome::Result { content: result, is_error: failed, final_answer }
    }

    /// Working memory and change notices after a successful tool result.
    fn after_tool(&self, thread: &str, session: &mut AgentSession, tool_name: &str, result: &Value) {
        let Some(tool) = self.registry.get(tool_name) else { return };
        if result.get("success").and_then(Value::as_bool) == Some(false) {
            return;
        }
        memory::remember(&mut session.memory, tool.entity.as_str(), result);
        if tool_name == "openNote" {
            self.hub.emit(
                thread,
                "CUSTOM",
                json!({ "name": "open", "value": result.get("item").cloned().unwrap_or(Value::Null) }),
            );
        }
        if !tool.read_only && tool.category != quire_tools::Category::Default {
            for changed in changed_records(tool, result) {
                self.hub.emit(thread, "CUSTOM", json!({ "name": "entity_changed", "value": changed }));
            }
        }
    }

    /// A tool result as a TOOL_CALL_RESULT event; answers its text.
    fn emit_result(&self, thread: &str, tool_call_id: &str, content: &Value) -> String {
        let text = content.to_string();
        self.hub.emit(
            thread,
            "TOOL_CALL_RESULT",
            json!({ "messageId": uuid::Uuid::now_v7().to_string(), "toolCallId": tool_call_id, "content": text, "role": "tool" }),
        );
        text
    }

    /// A whole text message as events (final answers, notices).
    fn emit_text(&self, thread: &str, text: &str) {
        let id = uuid::Uuid::now_v7().to_string();
        self.hub.emit(thread, "TEXT_MESSAGE_START", json!({ "messageId": id, "role": "assistant" }));
        self.hub.emit(thread, "TEXT_MESSAGE_CONTENT", json!({ "messageId": id, "delta": text }));
        self.hub.emit(thread, "TEXT_MESSAGE_END", json!({ "messageId": id }));
    }
}

/// The relay of a runtime (see [`Runtime::new`]): stores the events
/// emitted here, reads those stored elsewhere for the streams open here and
/// forgets old events; ends with the runtime.
async fn relay(runtime: Weak<Runtime>) {
    let mut tick = tokio::time::interval(RELAY_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    for n in 0u64.. {
        tick.tick().await;
        let Some(runtime) = runtime.upgrade() else { break };
        runtime.flush_events().await;
        if n % FOLLOW_TICKS == 0 {
            runtime.follow().await;
        }
        if n % PRUNE_TICKS == 0
            && let Err(e) = runtime.store().prune_events(KEEP_STORED).await
        {
            tracing::debug!(error = %e, "could not forget old agent events");
        }
    }
}

/// The process's heartbeat, every [`HEARTBEAT_EVERY`] while turns run here
/// (see [`quire_store::Store::heartbeat`]), on a task of its own so that no other work
/// delays it; ends with the runtime.
async fn heartbeat(store: quire_store::Store, running: Weak<AtomicU64>) {
    let mut tick = tokio::time::interval(HEARTBEAT_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(running) = running.upgrade() else { break };
        if running.load(Ordering::Relaxed) > 0
            && let Err(e) = store.heartbeat().await
        {
            tracing::warn!(error = %e, "could not write the process's heartbeat");
        }
    }
}

/// A profile and its client.
type ProfileClient = (crate::provider::Profile, Arc<dyn Provider>);

/// What every step of a run shares.
struct TurnRun<'a> {
    scope: &'a Scope,
    ctx: &'a CallContext,
    agent: &'a Agent,
    profile: &'a crate::provider::Profile,
    client: &'a dyn Provider,
    group: Group,
}

/// What of a running turn the database does not hold yet: the messages
/// since the last write, and the state as last written (so a write carries
/// only what changed).
struct Journal {
    messages: Vec<Value>,
    /// The last write, queued and not yet known to have committed.
    in_flight: Option<quire_store::QueuedWrite>,
    /// When a write last showed the turn is still this process's.
    confirmed: std::time::Instant,
    /// When the write in flight was queued.
    queued_at: std::time::Instant,
    memory: Value,
    active_tools: Vec<String>,
    pending: Value,
}

impl Journal {
    /// A journal of a session as the database holds it.
    fn new(session: &AgentSession) -> Self {
        Journal {
            messages: Vec::new(),
            in_flight: None,
            confirmed: std::time::Instant::now(),
            queued_at: std::time::Instant::now(),
            memory: session.memory.clone(),
            active_tools: session.active_tools.clone(),
            pending: session.pending.clone(),
        }
    }

    /// The update that brings the stored session to `session`.
    fn update(&mut self, session: &AgentSession, status: Option<SessionStatus>) -> quire_store::SessionUpdate {
        fn changed<T: PartialEq + Clone>(saved: &mut T, now: &T) -> Option<T> {
            (saved != now).then(|| {
                *saved = now.clone();
                now.clone()
            })
        }
        quire_store::SessionUpdate {
            status,
            steps: Some(session.steps),
            usage: Some((session.input_tokens, session.output_tokens)),
            active_tools: changed(&mut self.active_tools, &session.active_tools),
            memory: changed(&mut self.memory, &session.memory),
            pending: changed(&mut self.pending, &session.pending),
        }
    }
}

/// Whether `group` is among the groups an agent allows (all, when it names none).
pub fn allowed_for(agent: &Agent, group: Group) -> bool {
    agent.allowed_groups.is_empty() || agent.allowed_groups.iter().any(|g| g == group.as_str())
}

/// Whether a person of `group` can chat with the agent now: enabled and allowed.
pub fn usable_by(agent: &Agent, group: Group) -> bool {
    agent.enabled && allowed_for(agent, group)
}

/// Before a person answers approval `id`: when an agent's turn asked for
/// it, their group must be allowed to use that agent. Answers the session to
/// resume afterwards (None for approvals no agent asked for).
pub async fn check_approver(
    store: &quire_store::Store,
    scope: &Scope,
    group: Group,
    id: &str,
) -> Result<Option<String>, AgentError> {
    let confirmation = match store.confirmation(scope, id).await {
        Ok(c) => c,
        // Unknown ids get the registry's own answer.
        Err(StoreError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let (Surface::Agent, Some(session_id)) = (confirmation.requested_via, confirmation.session_id) else {
        return Ok(None);
    };
    let Ok(session) = store.session(scope, &session_id).await else { return Ok(None) };
    let agent = store.agent(scope, &session.agent_id).await?;
    if !allowed_for(&agent, group) {
        return Err(AgentError::Forbidden(format!(
            "group {} may not use agent \"{}\", so it may not answer its requests",
            group.as_str(),
            agent.alias
        )));
    }
    Ok(Some(session_id))
}

/// What became of a resumed approval.
#[derive(Debug, Clone)]
enum Answer {
    Approved,
    Rejected { by: String, reason: Option<String> },
    Expired,
}

enum CallOutcome {
    Result { content: Value, is_error: bool, final_answer: Option<String> },
    Pending(PendingCall),
}

/// Turns streamed pieces into AG-UI events.
struct StreamState<'a> {
    hub: &'a EventHub,
    thread: &'a str,
    text_id: Option<String>,
    calls: Vec<String>,
}

impl<'a> StreamState<'a> {
    fn new(hub: &'a EventHub, thread: &'a str) -> Self {
        StreamState { hub, thread, text_id: None, calls: Vec::new() }
    }

    fn on(&mut self, delta: Delta) {
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

    fn finish(&mut self) {
        if let Some(id) = self.text_id.take() {
            self.hub.emit(self.thread, "TEXT_MESSAGE_END", json!({ "messageId": id }));
        }
        for id in self.calls.drain(..).filter(|id| !id.is_empty()) {
            self.hub.emit(self.thread, "TOOL_CALL_END", json!({ "toolCallId": id }));
        }
    }
}

/// What a successful write changed, one `entity_changed` value per
/// record: the record it answered (`item`), or each record a delete
/// archived or a restore brought back (an archive answer names records, and
/// the archive's own id is never one of them).
fn changed_records(tool: &quire_tools::Tool, result: &Value) -> Vec<Value> {
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

/// A tool-layer failure (vault notes) as the runtime's error.
fn tool_failure(e: quire_tools::ToolError) -> AgentError {
    use quire_tools::ErrorCode;
    match e.code {
        ErrorCode::NotFound => AgentError::NotFound(e.message),
        ErrorCode::Forbidden => AgentError::Forbidden(e.message),
        ErrorCode::Validation => AgentError::Invalid { field: "turn", message: e.message },
        ErrorCode::Internal => AgentError::Internal(e.message),
        _ => AgentError::Conflict(e.message),
    }
}

fn to_json(m: &Message) -> Value {
    serde_json::to_value(m).unwrap_or(Value::Null)
}

fn with_usage(mut v: Value, usage: Usage) -> Value {
    if let Some(obj) = v.as_object_mut() {
        obj.insert("usage".into(), serde_json::to_value(usage).unwrap_or(Value::Null));
    }
    v
}

fn pending_ids(pending: &Value) -> Vec<String> {
    pending
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("approvalId").and_then(Value::as_str).map(str::to_string))
        .collect()
}
