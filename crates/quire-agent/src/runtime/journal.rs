//! What of a running turn the database does not hold yet, and its writes:
//! each step's, fenced on the session's runner.

use super::Runtime;
use super::error::LoopError;
use super::record::Record;
use crate::message::{Message, Usage};
use quire_core::model::{AgentSession, SessionStatus};
use quire_store::{QueuedWrite, Scope, SessionUpdate, StoreError};
use serde_json::Value;
use std::time::Instant;
use tracing::Instrument;

/// What of a running turn the database does not hold yet: the messages
/// since the last write, and the state as last written (so a write carries
/// only what changed).
pub(super) struct Journal {
    messages: Vec<Value>,
    /// The last write, queued and not yet known to have committed.
    in_flight: Option<QueuedWrite>,
    /// When a write last showed the turn is still this process's.
    confirmed: Instant,
    /// When the write in flight was queued.
    queued_at: Instant,
    memory: Value,
    active_tools: Vec<String>,
    pending: Value,
}

impl Journal {
    /// A journal of a session as the database holds it.
    pub(super) fn new(session: &AgentSession) -> Self {
        Journal {
            messages: Vec::new(),
            in_flight: None,
            confirmed: Instant::now(),
            queued_at: Instant::now(),
            memory: session.memory.clone(),
            active_tools: session.active_tools.clone(),
            pending: session.pending.clone(),
        }
    }

    /// A message of the turn, to write with the next step.
    pub(super) fn push(&mut self, message: &Message) {
        self.messages.push(message.to_json());
    }

    /// What happened besides the messages (an approval asked, the turn's
    /// failure), to write with the next step.
    pub(super) fn push_record(&mut self, record: &Record) {
        self.messages.push(record.to_json());
    }

    /// The model's answer of a step, stored with the tokens it took.
    pub(super) fn push_answer(&mut self, message: &Message, usage: Usage) {
        let mut value = message.to_json();
        if let Some(obj) = value.as_object_mut() {
            obj.insert("usage".into(), serde_json::to_value(usage).unwrap_or(Value::Null));
        }
        self.messages.push(value);
    }

    /// Waits for the write in flight, if any: once it committed, the turn
    /// was this process's when it was queued.
    async fn settle(&mut self) -> Result<(), StoreError> {
        if let Some(previous) = self.in_flight.take() {
            previous.done().await?;
            self.confirmed = self.queued_at;
        }
        Ok(())
    }

    /// The update that brings the stored session to `session`.
    fn update(&mut self, session: &AgentSession, status: Option<SessionStatus>) -> SessionUpdate {
        fn changed<T: PartialEq + Clone>(saved: &mut T, now: &T) -> Option<T> {
            (saved != now).then(|| {
                *saved = now.clone();
                now.clone()
            })
        }
        SessionUpdate {
            status,
            steps: Some(session.steps),
            usage: Some((session.input_tokens, session.output_tokens)),
            active_tools: changed(&mut self.active_tools, &session.active_tools),
            memory: changed(&mut self.memory, &session.memory),
            pending: changed(&mut self.pending, &session.pending),
        }
    }
}

impl Runtime {
    /// Writes what the database does not hold of the session yet: the
    /// messages since the last write and the state that changed (and the
    /// status, when given), in one write of the store's group commit.
    ///
    /// Within a turn the write is queued and the loop goes on (the step
    /// before's write is awaited first, so at most one is in flight and they
    /// commit in order); a write with a status — the turn's end or pause —
    /// is awaited with everything before it, so a pause or an end is
    /// announced only once the database holds it.
    pub(super) async fn persist(
        &self,
        scope: &Scope,
        session: &AgentSession,
        journal: &mut Journal,
        status: Option<SessionStatus>,
    ) -> Result<(), LoopError> {
        let span = tracing::info_span!("persist", messages = journal.messages.len());
        let written = async {
            journal.settle().await?;
            let update = journal.update(session, status);
            let messages = std::mem::take(&mut journal.messages);
            journal.queued_at = Instant::now();
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

    /// A session's conversation as the database holds it (messages that
    /// cannot be read left out, and the records stored with them, which are
    /// for people: see [`Record`]).
    pub(super) async fn conversation(&self, scope: &Scope, session_id: &str) -> Result<Vec<Message>, StoreError> {
        let stored = self.store().session_messages(scope, session_id).await?;
        Ok(stored.into_iter().filter_map(|m| serde_json::from_value(m.body).ok()).collect())
    }

    /// Makes sure the turn is still this process's before a tool runs: when
    /// no write showed it for half of the silence a take-over waits for
    /// ([`super::RUNNER_SILENT`]; a long model call or tool, a stalled process),
    /// the step before's write is awaited and, if that was queued too long
    /// ago to tell, an empty fenced write is made, so a turn another
    /// process took over stops here without running anything.
    pub(super) async fn still_ours(
        &self,
        scope: &Scope,
        session: &AgentSession,
        journal: &mut Journal,
    ) -> Result<(), LoopError> {
        let half = self.silent() / 2;
        if journal.confirmed.elapsed() < half {
            return Ok(());
        }
        journal.settle().await?;
        if journal.confirmed.elapsed() < half {
            return Ok(());
        }
        let asked = Instant::now();
        self.store()
            .queue_step(scope, &session.id, &SessionUpdate::default(), session.turns, &[])
            .await?
            .done()
            .await?;
        journal.confirmed = asked;
        Ok(())
    }
}
