//! Chat with an agent: start a turn in a new session, or continue one the
//! actor may see, the message perhaps answering the previews the last turn
//! showed.

use crate::content::Content;
use crate::{Actor, AppError, AppResult, Failure};
use quire_agent::{PreviewAnswer, Runtime, TurnStarted};
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
}

/// Starts the turn `message` begins, as `actor`. The session it continues
/// must be one the actor may see; one they may not (or that does not
/// exist) is a rule of the message, so it is refused naming `sessionId`.
pub async fn start(runtime: &Arc<Runtime>, actor: &Actor, message: Message) -> AppResult<TurnStarted> {
    let content = Content::new(runtime.registry().services().store.clone(), actor.clone());
    let session = message.session.as_deref();
    content.continued_session(session).await.map_err(|e| match e.failure {
        Failure::NotFound => {
            AppError::invalid("sessionId", format!("sessionId: no session {} of yours", session.unwrap_or_default()))
        }
        _ => e,
    })?;
    Ok(runtime.start(&actor.person(), &message.agent, &message.text, session, message.context, message.answer).await?)
}
