//! Chat with an agent: start a turn in a new session, or continue one the
//! actor may see, the message perhaps answering the previews the last turn
//! showed; or run a thread as a front end that keeps its own (AG-UI) asks:
//! a message, or the answers to the approvals its last run paused on; or
//! read a conversation again as it happened.

use crate::approvals::{self, Verdict};
use crate::content::{ChangeFilter, ChangeSummary, Confirmation, Content, StoredMessage};
use crate::{Actor, AppError, AppResult, Failure};
use chrono::{DateTime, Utc};
use quire_agent::{Ask, PreviewAnswer, Runtime, TurnStarted};
use quire_core::model::{AgentSession, SessionStatus, Surface};
use serde_json::Value;
use std::sync::Arc;

/// A message to an agent.
#[derive(Debug, Clone, Default)]
pub struct Message {
    /// The agent's alias.
    pub agent: String,
    /// What the person says.
    pub text: String,
    /// The session it continues; none starts one.
    pub session: Option<String>,
    /// What the person's screen shows, if it says.
    pub context: Option<Value>,
    /// A person's answer to a preview of the last turn, given with the
    /// message.
    pub answer: Option<PreviewAnswer>,
    /// The id the turn's run takes (an AG-UI client's `runId`); none: a new one.
    pub run_id: Option<String>,
    /// The open release the turn stages in, for an agent in release mode;
    /// none: a release of the turn's own.
    pub release: Option<String>,
    /// The contexts the person chose for this turn, by key.
    pub contexts: Vec<String>,
}

/// Starts the turn `message` begins, as `actor`. The session it continues
/// must be one the actor may see; one they may not (or that does not
/// exist) is a rule of the message, so it is refused naming `sessionId`.
pub async fn start(runtime: &Arc<Runtime>, actor: &Actor, message: Message) -> AppResult<TurnStarted> {
    start_in(runtime, actor, message, None).await
}

/// [`start`], a new session taking `new_session_id` (checked) when given.
async fn start_in(
    runtime: &Arc<Runtime>,
    actor: &Actor,
    message: Message,
    new_session_id: Option<String>,
) -> AppResult<TurnStarted> {
    let content = Content::new(runtime.registry().services().store.clone(), actor.clone());
    let session = message.session.as_deref();
    content.continued_session(session).await.map_err(|e| match e.failure {
        Failure::NotFound => {
            AppError::invalid("sessionId", format!("sessionId: no session {} of yours", session.unwrap_or_default()))
        }
        _ => e,
    })?;
    let ask = Ask {
        message: message.text,
        session: message.session,
        context: message.context,
        answer: message.answer,
        run_id: message.run_id,
        new_session: new_session_id,
        release: message.release,
        contexts: message.contexts,
    };
    Ok(runtime.start_run(&actor.person(), &message.agent, ask).await?)
}

/// A run of a thread, as a front end that keeps the conversation's thread
/// asks for it (an AG-UI `RunAgentInput`).
#[derive(Debug, Clone, Default)]
pub struct ThreadRun {
    /// The agent's alias.
    pub agent: String,
    /// The thread: a session of the actor's continues it; any other value
    /// starts a new session with that id (`threadId`'s rule,
    /// [`quire_core::text::check_client_id`]), unless another actor or
    /// site holds it; none starts one with an id the server makes.
    pub thread: Option<String>,
    /// The id the run takes.
    pub run_id: Option<String>,
    /// What the person says (the thread's last message), when the run does
    /// not answer approvals.
    pub text: Option<String>,
    /// What the person's screen shows.
    pub context: Option<Value>,
    /// The contexts the person chose for this run, by key.
    pub contexts: Vec<String>,
    /// The person's answers to the approvals the thread's last run paused
    /// on, by approval id: every one of them, or none.
    pub answers: Vec<(String, Verdict)>,
}

/// Starts the run `run` asks for, as `actor`; answers the session it runs
/// in. With answers, the thread must be a session of the actor's paused on
/// exactly those approvals: they are answered (each decided by
/// `authorize`, as [`approvals::answer`] does) and the paused turn goes on
/// in this run. Without, the text starts the session's next turn, or a new
/// session whose id is the thread when it names none of the actor's. A
/// thread another actor or site holds is a conflict that says nothing of
/// that session.
pub async fn run_thread(runtime: &Arc<Runtime>, actor: &Actor, run: ThreadRun) -> AppResult<String> {
    let content = Content::new(runtime.registry().services().store.clone(), actor.clone());
    // The agent first: whether the actor may use it decides the rest.
    let agent = runtime.agent_for(&actor.person(), &run.agent).await?;
    let fresh = run.thread.is_none();
    let thread = run.thread.unwrap_or_default();
    if !fresh {
        quire_core::text::check_client_id("threadId", &thread)
            .map_err(|e| AppError::invalid("threadId", e.to_string()))?;
    }
    let taken = || AppError {
        field: Some("threadId".into()),
        ..AppError::conflict(format!("threadId: {thread} is taken; choose another threadId"))
    };
    let session = if fresh {
        None
    } else {
        match content.session(&thread).await {
            Ok(session) if session.actor == actor.id => Some(session),
            // Someone else's (an admin may see it, not continue it).
            Ok(_) => return Err(taken()),
            Err(e) if e.failure == Failure::NotFound => None,
            Err(e) if e.failure == Failure::Forbidden => return Err(taken()),
            Err(e) => return Err(e),
        }
    };
    if let Some(s) = session.as_ref().filter(|s| s.agent_id != agent.id) {
        return Err(AppError::invalid("threadId", format!("threadId: session {} is with another agent", s.id)));
    }
    if !run.answers.is_empty() {
        let Some(session) = session else {
            return Err(AppError::invalid(
                "resume",
                format!("resume: thread {thread} is no session of yours, so it waits on no approval"),
            ));
        };
        approvals::answer_all(runtime, actor, &session, run.answers, run.run_id).await?;
        return Ok(session.id);
    }
    let Some(text) = run.text else {
        return Err(AppError::invalid("messages", "messages: the last message must be the person's, with text"));
    };
    let new_session_id = (session.is_none() && !fresh).then(|| thread.clone());
    let message = Message {
        agent: run.agent,
        text,
        session: session.map(|s| s.id),
        context: run.context,
        answer: None,
        run_id: run.run_id,
        release: None,
        contexts: run.contexts,
    };
    match start_in(runtime, actor, message, new_session_id).await {
        Ok(started) => Ok(started.session_id),
        // Another site holds the id (the store says only that it is taken).
        Err(e) if e.failure == Failure::Conflict && e.field.as_deref() == Some("id") => Err(taken()),
        Err(e) => Err(e),
    }
}

/// A conversation as it happened, for a person reading it again: what
/// was said, every call and its result, each approval asked with its
/// answer as it stands, each undo and failure, and the records each turn
/// changed.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// The session.
    pub session: AgentSession,
    /// Its messages in order, with the records of what happened besides
    /// them among them ([`quire_agent::Record`]: `role` approval, undo or
    /// failure).
    pub messages: Vec<StoredMessage>,
    /// Each approval the conversation asked for, as it stands now
    /// (answered or not, by whom, why), in the order it was asked.
    pub approvals: Vec<Confirmation>,
    /// The changes its turns made, oldest first, without their records.
    pub changes: Vec<ChangeSummary>,
    /// The stream's last event so far: a client showing these messages
    /// follows the stream after it, so nothing is shown twice.
    pub last_event_id: u64,
    /// While a turn runs, when its latest run started: a client may leave
    /// the messages stored since to the stream, which replays that run
    /// from its start.
    pub run_started: Option<DateTime<Utc>>,
}

impl Conversation {
    /// The messages a client shows before it follows the stream: all of
    /// them, or while a turn runs, those stored before its latest run
    /// started (the stream replays that run from its start).
    pub fn settled(&self) -> impl Iterator<Item = &StoredMessage> {
        self.messages.iter().filter(|m| self.run_started.is_none_or(|started| m.at < started))
    }
}

/// Whether an approval still waits for a person's answer: nobody
/// answered it and it has not expired.
pub fn waiting(approval: &Confirmation) -> bool {
    approval.status == quire_core::model::ConfirmationStatus::Pending && approval.expires_at > Utc::now()
}

/// Most changes of a conversation read for it: past them, its oldest
/// turns are shown without what they changed.
const MOST_CHANGES: u32 = 1_000;

/// Conversation `id` as the actor may read it (their own, or any for
/// administrators).
pub async fn conversation(runtime: &Runtime, actor: &Actor, id: &str) -> AppResult<Conversation> {
    let store = &runtime.registry().services().store;
    let content = Content::new(store.clone(), actor.clone());
    let (session, messages) = content.session_messages(id).await?;
    let mut approvals = Vec::new();
    for m in messages.iter().filter(|m| m.body["role"] == "approval") {
        let Some(approval) = m.body["approvalId"].as_str() else { continue };
        match store.confirmation(&actor.scope, approval).await {
            Ok(c) => approvals.push(c),
            Err(quire_store::StoreError::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let filter = ChangeFilter { session_id: Some(session.id.clone()), ..Default::default() };
    let mut changes = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = content.change_summaries(&filter, 200, cursor.as_deref()).await?;
        changes.extend(page.items);
        match page.next_cursor {
            Some(next) if changes.len() < MOST_CHANGES as usize => cursor = Some(next),
            _ => break,
        }
    }
    changes.reverse();
    let run_started = match session.status {
        SessionStatus::Running => runtime.latest_run_start(&session.id).await?,
        _ => None,
    };
    let last_event_id = runtime.last_event_id(&session.id).await?;
    Ok(Conversation { session, messages, approvals, changes, last_event_id, run_started })
}

/// Approval `id` an agent asked for, in a conversation the actor may read
/// (their own, or any for administrators), as it stands now.
pub async fn asked_approval(runtime: &Runtime, actor: &Actor, id: &str) -> AppResult<Confirmation> {
    let store = &runtime.registry().services().store;
    let content = Content::new(store.clone(), actor.clone());
    let unknown = || AppError::not_found(format!("no approval {id} in a conversation of yours"));
    let confirmation = match store.confirmation(&actor.scope, id).await {
        Ok(c) => c,
        Err(quire_store::StoreError::NotFound { .. }) => return Err(unknown()),
        Err(e) => return Err(e.into()),
    };
    let Some(session) = confirmation.session_id.as_deref().filter(|_| confirmation.requested_via == Surface::Agent)
    else {
        return Err(unknown());
    };
    // Whose conversation it is decides.
    match content.session(session).await {
        Ok(_) => Ok(confirmation),
        Err(e) if matches!(e.failure, Failure::NotFound | Failure::Forbidden) => Err(unknown()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeDelta;
    use serde_json::json;

    fn session(status: SessionStatus) -> AgentSession {
        AgentSession {
            id: "s".into(),
            agent_id: "a".into(),
            actor: "user:u".into(),
            group: quire_core::access::Group::Editor,
            title: "t".into(),
            status,
            turns: 2,
            steps: 0,
            active_tools: Vec::new(),
            memory: json!({}),
            pending: json!([]),
            context: None,
            contexts: Vec::new(),
            input_tokens: 0,
            output_tokens: 0,
            created_at: Utc::now(),
            updated_at: Utc::now(),
        }
    }

    #[test]
    fn while_a_turn_runs_its_latest_run_is_left_to_the_stream() {
        let start = Utc::now();
        let at = |s: i64| start + TimeDelta::seconds(s);
        let messages: Vec<StoredMessage> = [(1, -60), (2, -1), (3, 0), (4, 2)]
            .into_iter()
            .map(|(seq, s)| StoredMessage { seq, turn: 2, body: json!({ "role": "user" }), at: at(s) })
            .collect();
        let mut c = Conversation {
            session: session(SessionStatus::Running),
            messages,
            approvals: Vec::new(),
            changes: Vec::new(),
            last_event_id: 9,
            run_started: Some(start),
        };
        let shown: Vec<i64> = c.settled().map(|m| m.seq).collect();
        assert_eq!(shown, [1, 2], "what the running run stored is replayed by its stream");
        c.run_started = None;
        assert_eq!(c.settled().count(), 4, "at rest, every message is shown");
    }
}
