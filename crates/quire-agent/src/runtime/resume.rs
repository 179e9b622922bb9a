//! Turns that go on later: a paused turn once its approvals are answered,
//! and a turn whose process stopped, taken over here.

use super::Runtime;
use super::calls::{Answer, waiting_calls};
use super::error::{AgentError, CallError, found};
use crate::message::Message;
use chrono::Utc;
use quire_core::model::{AgentSession, SessionStatus};
use quire_store::{Confirmation, ConfirmationStatus, Scope, StoreError};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use tokio::task::JoinHandle;

impl Runtime {
    /// Resumes a paused session once every pending approval is answered
    /// (or expired). Answers the running continuation, or None when the
    /// session is not ready (or another process took it).
    pub async fn resume(
        self: &Arc<Self>,
        scope: &Scope,
        session_id: &str,
    ) -> Result<Option<JoinHandle<()>>, AgentError> {
        self.resume_run(scope, session_id, None).await
    }

    /// [`Runtime::resume`], the run taking the id its caller chose (an
    /// AG-UI client's `runId`) when given.
    pub async fn resume_run(
        self: &Arc<Self>,
        scope: &Scope,
        session_id: &str,
        run_id: Option<String>,
    ) -> Result<Option<JoinHandle<()>>, AgentError> {
        let store = self.store();
        let session = store.session(scope, session_id).await?;
        if session.status != SessionStatus::Paused {
            return Ok(None);
        }
        let mut answers = Vec::new();
        for p in waiting_calls(&session) {
            let Some(answer) = answer_of(found(store.confirmation(scope, &p.approval_id).await)?) else {
                return Ok(None);
            };
            answers.push((p, answer));
        }
        if !store.claim_session(scope, session_id, &[SessionStatus::Paused], SessionStatus::Running).await? {
            return Ok(None);
        }
        let agent = store.agent(scope, &session.agent_id).await?;
        Ok(Some(self.launch(scope, session, agent, answers, None, run_id).await))
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
        let orphans = match self.store().orphaned_sessions(self.silent()).await {
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
        if !store.take_over_session(scope, &session.id, runner, self.silent()).await? {
            return Ok(None);
        }
        tracing::warn!(session = %session.id, turn = session.turns, "taking over a turn whose process stopped");
        let thread = session.id.clone();
        let run_id = self.run_started(&thread, None);
        match self.recover(scope, session, run_id.clone()).await {
            Ok(handle) => Ok(Some(handle)),
            // Yet another process took the turn over meanwhile: it runs it.
            Err(AgentError::Store(StoreError::TakenOver { .. })) => {
                tracing::warn!(session = %thread, "the turn was taken over by another process first");
                self.hub.abandon(&thread);
                Ok(None)
            }
            Err(e) => {
                // Not left running with nobody to run it: the turn fails, and
                // its user can go on.
                tracing::error!(session = %thread, error = %e, "could not take a turn over");
                store.claim_session(scope, &thread, &[SessionStatus::Running], SessionStatus::Failed).await.ok();
                let message = format!("the turn could not go on after its server stopped: {e}");
                self.hub.emit(&thread, "RUN_ERROR", json!({ "message": message, "code": "INTERNAL" }));
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
        let history = self.conversation(scope, &session.id).await?;
        let mut recovered = Vec::new();
        let mut answered = HashSet::new();
        for m in history.iter().rev() {
            match m {
                Message::Tool { tool_call_id, .. } => {
                    answered.insert(tool_call_id.as_str());
                }
                Message::Assistant { tool_calls, .. } => {
                    for call in tool_calls.iter().filter(|c| !answered.contains(c.id.as_str())) {
                        let content = CallError::Interrupted.to_json();
                        recovered.push(self.tool_result(&thread, &call.id, &call.name, &content, true));
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
        let bodies: Vec<Value> = recovered.iter().map(Message::to_json).collect();
        store
            .queue_step(scope, &session.id, &quire_store::SessionUpdate::default(), session.turns, &bodies)
            .await?
            .done()
            .await?;
        self.flush_events().await;
        session.status = SessionStatus::Running;
        let runtime = Arc::clone(self);
        let scope = scope.clone();
        Ok(tokio::spawn(async move { runtime.run(scope, session, agent, run_id, Vec::new(), None).await }))
    }
}

/// What became of a waiting call, by its approval record (gone: expired);
/// None while it still waits for a person.
fn answer_of(confirmation: Option<Confirmation>) -> Option<Answer> {
    let Some(c) = confirmation else { return Some(Answer::Refused(CallError::Expired)) };
    match c.status {
        ConfirmationStatus::Approved => Some(Answer::Approved),
        ConfirmationStatus::Rejected => {
            Some(Answer::Refused(CallError::Rejected { by: c.resolved_by.unwrap_or_default(), reason: c.reason }))
        }
        ConfirmationStatus::Used => Some(Answer::Refused(CallError::Expired)),
        ConfirmationStatus::Pending if c.expires_at <= Utc::now() => Some(Answer::Refused(CallError::Expired)),
        ConfirmationStatus::Pending => None,
    }
}
