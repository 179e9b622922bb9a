//! Undoing a turn: its changes to records and notes, its open approvals,
//! and a paused turn closed.

use super::Runtime;
use super::calls::waiting_calls;
use super::error::{AgentError, CallError, tool_failure};
use super::record::Record;
use quire_core::model::{AgentSession, Change, ChangeContext, EntityKind, SessionStatus};
use quire_store::Scope;
use serde::Serialize;
use serde_json::json;

/// What undoing a turn did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnUndone {
    /// The change-log records the undo wrote, oldest first (notes last).
    pub reverted: Vec<Change>,
    /// How many of the turn's approvals, still open, were rejected.
    pub cancelled: u64,
    /// How many documents a turn in release mode had staged went back to
    /// what the release held before it.
    pub staged: usize,
}

impl Runtime {
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
        // What the person did, kept in the conversation where it happened.
        let record = undone.as_ref().ok().map(|u| Record::Undo {
            turn,
            by: ctx.actor.clone(),
            reverted: u.reverted.len(),
            cancelled: u.cancelled,
        });
        if paused {
            let mut session = store.session(scope, session_id).await?;
            match record {
                Some(record) => self.close_undone_turn(scope, &mut session, record).await?,
                None => {
                    session.status = SessionStatus::Paused;
                    store.save_session(scope, &session, &[]).await?;
                }
            }
        } else if let Some(record) = record
            && let Err(e) = self.record_aside(scope, session_id, &record).await
        {
            // The undo itself is done; only its mention in the conversation is missing.
            tracing::warn!(session = %session_id, turn, error = %e, "the undo could not be kept in the conversation");
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
        // The turn's records, and what it staged in release mode, in one
        // transaction.
        let report = store.undo_turn(ctx, scope, session_id, &turn.to_string()).await?;
        let mut reverted = report.reverted;
        let notes =
            quire_tools::notes::undo_note_changes(services, ctx, scope, &note_changes).await.map_err(tool_failure)?;
        reverted.extend(notes);
        Ok(TurnUndone { reverted, cancelled: report.cancelled, staged: report.staged })
    }

    /// Ends a paused turn whose changes were undone: the undo is recorded,
    /// each waiting call gets a result saying it never ran, and the session
    /// is idle again.
    async fn close_undone_turn(
        &self,
        scope: &Scope,
        session: &mut AgentSession,
        undo: Record,
    ) -> Result<(), AgentError> {
        let thread = session.id.clone();
        let mut messages = vec![(session.turns, undo.to_json())];
        for p in waiting_calls(session) {
            let content = CallError::Undone.to_json();
            let msg = self.tool_result(&thread, &p.tool_call_id, &p.tool, &content, true);
            messages.push((session.turns, msg.to_json()));
        }
        session.status = SessionStatus::Idle;
        session.pending = json!([]);
        self.store().save_session(scope, session, &messages).await?;
        let run_id = uuid::Uuid::now_v7().to_string();
        self.hub.emit(&thread, "RUN_FINISHED", super::stream::finished(&thread, &run_id, "The turn was undone."));
        Ok(())
    }
}
