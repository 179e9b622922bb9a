//! Undo an agent's turn: every record and note change it made, in one go,
//! with its open requests refused; for a turn in release mode, what it
//! staged leaves its release.

use crate::{Actor, AppError, AppResult, Permission, authorize};
use quire_agent::{Runtime, TurnUndone};

/// Undoes turn `turn` of session `session_id` as `actor`.
pub async fn undo_turn(runtime: &Runtime, actor: &Actor, session_id: &str, turn: i64) -> AppResult<TurnUndone> {
    // Reading the session says whose it is; that decides the rest.
    authorize(actor, Permission::Read)?;
    let session = runtime.registry().services().store.session(&actor.scope, session_id).await?;
    authorize(actor, Permission::UndoTurn { owner: &session.actor, session: &session.id })?;
    let undone = runtime.undo_turn(&actor.change_context(), &actor.scope, session_id, turn).await?;
    if undone.reverted.is_empty() && undone.cancelled == 0 && undone.staged == 0 {
        return Err(AppError::conflict(format!("turn {turn} of session {session_id} changed nothing")));
    }
    Ok(undone)
}
