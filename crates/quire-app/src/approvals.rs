//! Answer a destructive call someone asked for — check, resolve, resume —
//! once, for every surface.

use crate::{Actor, AppError, AppResult, Permission, authorize};
use quire_agent::{PendingCall, Runtime};
use quire_core::model::{AgentSession, SessionStatus, Surface};
use quire_store::{Confirmation, StoreError};
use std::sync::Arc;
use tokio::task::JoinHandle;

/// A person's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Let it run.
    Approve,
    /// Refuse it, with an optional reason passed on to whoever asked.
    Reject(Option<String>),
}

/// What answering did.
#[derive(Debug)]
pub struct Answered {
    /// The confirmation as it is now.
    pub confirmation: Confirmation,
    /// The agent session that asked, if one did.
    pub session: Option<String>,
    /// Its turn going on, when this was the last answer it waited for.
    pub resumed: Option<JoinHandle<()>>,
}

/// The pending destructive calls of the actor's scope.
pub async fn pending(runtime: &Runtime, actor: &Actor) -> AppResult<Vec<Confirmation>> {
    authorize(actor, Permission::Read)?;
    Ok(runtime.registry().pending(&actor.scope).await?)
}

/// Answers confirmation `id` as `actor`, then resumes the agent turn that
/// waits on it once nothing else holds it.
pub async fn answer(runtime: &Arc<Runtime>, actor: &Actor, id: &str, verdict: Verdict) -> AppResult<Answered> {
    let (confirmation, session) = resolve(runtime, actor, id, verdict).await?;
    let resumed = match &session {
        Some(s) => match runtime.resume(&actor.scope, s).await {
            Ok(handle) => handle,
            Err(e) => {
                // Answered all the same; the runtime's sweep resumes it later.
                tracing::warn!(session = %s, error = %e, "could not resume the agent turn");
                None
            }
        },
        None => None,
    };
    Ok(Answered { confirmation, session, resumed })
}

/// Answers every approval a paused session waits on, as `actor`, each
/// decided as [`answer`] decides one, then goes on with its turn in a run
/// of id `run_id` (when given). The answers must name exactly the
/// approvals the session waits on: none is answered otherwise.
pub async fn answer_all(
    runtime: &Arc<Runtime>,
    actor: &Actor,
    session: &AgentSession,
    answers: Vec<(String, Verdict)>,
    run_id: Option<String>,
) -> AppResult<JoinHandle<()>> {
    if session.status != SessionStatus::Paused {
        return Err(AppError::conflict(format!("session {} waits on no approval; send a message instead", session.id)));
    }
    let waiting: Vec<String> = serde_json::from_value::<Vec<PendingCall>>(session.pending.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|p| p.approval_id)
        .collect();
    if let Some((id, _)) = answers.iter().find(|(id, _)| !waiting.contains(id)) {
        return Err(AppError::invalid(
            "resume",
            format!("resume: session {} waits on no approval {id} (it waits on {})", session.id, waiting.join(", ")),
        ));
    }
    let unanswered: Vec<&str> =
        waiting.iter().filter(|w| !answers.iter().any(|(id, _)| id == *w)).map(String::as_str).collect();
    if !unanswered.is_empty() {
        return Err(AppError::invalid(
            "resume",
            format!(
                "resume: answer every approval session {} waits on; {} has no answer",
                session.id,
                unanswered.join(", ")
            ),
        ));
    }
    for (id, verdict) in answers {
        resolve(runtime, actor, &id, verdict).await?;
    }
    runtime
        .resume_run(&actor.scope, &session.id, run_id)
        .await?
        .ok_or_else(|| AppError::conflict(format!("session {} could not go on: it is no longer paused", session.id)))
}

/// Checks that `actor` may answer confirmation `id` and answers it; answers
/// the confirmation as it is now and the agent session that asked, if one did.
async fn resolve(
    runtime: &Arc<Runtime>,
    actor: &Actor,
    id: &str,
    verdict: Verdict,
) -> AppResult<(Confirmation, Option<String>)> {
    let registry = runtime.registry();
    let store = &registry.services().store;
    // Reading the request says what it is for; that decides the rest.
    authorize(actor, Permission::Read)?;
    let confirmation = match store.confirmation(&actor.scope, id).await {
        Ok(c) => c,
        Err(StoreError::NotFound { .. }) => return Err(AppError::not_found(format!("confirmation {id} not found"))),
        Err(e) => return Err(e.into()),
    };
    let tool = registry
        .get(&confirmation.tool)
        .ok_or_else(|| AppError::not_found(format!("confirmation {id} is for an unknown tool")))?;
    let session = match (confirmation.requested_via, &confirmation.session_id) {
        (Surface::Agent, Some(session)) => store.session(&actor.scope, session).await.ok(),
        _ => None,
    };
    let agent = match &session {
        Some(s) => Some(store.agent(&actor.scope, &s.agent_id).await?),
        None => None,
    };
    authorize(actor, Permission::AnswerApproval { tool: tool.access(), agent: agent.as_ref() })?;
    let ctx = actor.call_context();
    let confirmation = match verdict {
        Verdict::Approve => registry.approve(&ctx, id).await?,
        Verdict::Reject(reason) => registry.reject(&ctx, id, reason.as_deref()).await?,
    };
    Ok((confirmation, session.map(|s| s.id)))
}
