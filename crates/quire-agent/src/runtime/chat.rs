//! A person's message: the agent they may use, the session it continues
//! (or a new one), the previews it answers, and the turn it starts.

use super::error::{AgentError, found, tool_failure};
use super::{Person, Runtime};
use crate::message::Message;
use crate::prompt;
use quire_core::access::{Permission, Principal, authorize};
use quire_core::model::{
    Agent, AgentPolicy, AgentSession, EntityKind, ReleaseState, SessionStatus, Surface, WriteMode,
};
use quire_tools::CallContext;
use serde_json::Value;
use std::sync::Arc;
use tokio::task::JoinHandle;

/// Longest message accepted.
const MAX_MESSAGE: usize = 32_000;

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

/// What a person asks of an agent's run.
#[derive(Debug, Clone, Default)]
pub struct Ask {
    /// What they say.
    pub message: String,
    /// The session it continues; none starts one.
    pub session: Option<String>,
    /// What their screen shows, if it says.
    pub context: Option<Value>,
    /// Their answer to a preview the last turn showed.
    pub answer: Option<PreviewAnswer>,
    /// The id the run takes (an AG-UI client's `runId`); none: a new one.
    pub run_id: Option<String>,
    /// The id a new session takes (an AG-UI `threadId`, already checked);
    /// none: one the server makes.
    pub new_session: Option<String>,
    /// The open release the turn stages in, for an agent in release mode;
    /// none: a release of the turn's own.
    pub release: Option<String>,
    /// The contexts (brand voice, style guide) the person chose for this
    /// turn, by key, besides the agent's own.
    pub contexts: Vec<String>,
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

impl Runtime {
    /// An agent the person may chat with.
    pub async fn agent_for(&self, person: &Person, alias: &str) -> Result<Agent, AgentError> {
        let Some(agent) = found(self.store().agent(&person.scope, alias).await)? else {
            return Err(AgentError::NotFound(format!("no agent \"{alias}\"")));
        };
        if !agent.enabled {
            return Err(AgentError::Conflict(format!("agent \"{alias}\" is disabled; enable it first")));
        }
        let who = Principal { actor: &person.actor, group: person.group, surface: Surface::Agent };
        authorize(&who, Permission::UseAgent(&agent)).map_err(|refused| AgentError::Forbidden(refused.message))?;
        Ok(agent)
    }

    /// Starts a turn: stores the message and runs the loop in the
    /// background. The message may answer the previews the last turn showed
    /// ([`Runtime::answer_previews`]): with `answer`, the one named; under
    /// the conversational policy, a plain yes approves the one preview just
    /// shown and any other message refuses them.
    pub async fn start(
        self: &Arc<Self>,
        person: &Person,
        alias: &str,
        message: &str,
        session_id: Option<&str>,
        context: Option<Value>,
        answer: Option<PreviewAnswer>,
    ) -> Result<TurnStarted, AgentError> {
        let ask = Ask {
            message: message.to_string(),
            session: session_id.map(str::to_string),
            context,
            answer,
            ..Ask::default()
        };
        self.start_run(person, alias, ask).await
    }

    /// [`Runtime::start`] with everything a person may ask of the run
    /// ([`Ask`]).
    pub async fn start_run(
        self: &Arc<Self>,
        person: &Person,
        alias: &str,
        ask: Ask,
    ) -> Result<TurnStarted, AgentError> {
        let Ask { message, session: session_id, context, answer, run_id, new_session, release, contexts } = ask;
        let message = message.as_str();
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
        let scope = &person.scope;
        self.check_contexts(scope, &contexts).await?;
        if let Some(id) = &release {
            self.check_release(person, &agent, id).await?;
        }
        // Every turn asked for counts, the last check before it starts.
        self.take_turn(person).await?;
        let user = Message::User { content: message.to_string() };
        let body = user.to_json();
        let (session, history) = match session_id.as_deref() {
            // The conversation so far is read when the run starts.
            Some(id) => {
                let session = self.continue_session(person, &agent, id, message, &body, context, &contexts, answer);
                (session.await?, None)
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
                    id: new_session,
                    agent_id: agent.id.clone(),
                    actor: person.actor.clone(),
                    group: person.group,
                    title,
                    context,
                    contexts,
                };
                (self.store().start_session(scope, new, &body).await?, Some(vec![user]))
            }
        };
        // The turn stages in the release chosen with this message, or in
        // one of its own; the choice outlives a pause for approval.
        if agent.write_mode == WriteMode::Release {
            self.store().choose_session_release(scope, &session.id, release.as_deref()).await?;
        }
        let (session_id, turn) = (session.id.clone(), session.turns);
        let handle = self.launch(scope, session, agent, Vec::new(), history, run_id).await;
        Ok(TurnStarted { session_id, turn, handle })
    }

    /// Refuses contexts chosen for a turn that are not live contexts of
    /// the scope, or more of them than an agent may carry.
    async fn check_contexts(&self, scope: &quire_store::Scope, keys: &[String]) -> Result<(), AgentError> {
        if keys.len() > quire_core::rules::MAX_AGENT_CONTEXTS {
            return Err(AgentError::Invalid {
                field: "contexts",
                message: format!("at most {} contexts", quire_core::rules::MAX_AGENT_CONTEXTS),
            });
        }
        let found = self.store().contexts_by_keys(scope, keys).await?;
        match keys.iter().find(|k| !found.iter().any(|c| &c.key == *k)) {
            Some(missing) => Err(AgentError::Invalid { field: "contexts", message: format!("no context {missing}") }),
            None => Ok(()),
        }
    }

    /// Refuses a release chosen for an agent's turns unless the agent
    /// stages its work ([`WriteMode::Release`]), the release is open in the
    /// person's site and environment, and the person may put documents
    /// into releases (publish some kind of document).
    async fn check_release(&self, person: &Person, agent: &Agent, id: &str) -> Result<(), AgentError> {
        if agent.write_mode != WriteMode::Release {
            return Err(AgentError::Invalid {
                field: "releaseId",
                message: format!(
                    "releaseId: agent \"{}\" writes in {} mode; only an agent in release mode stages its work in a release",
                    agent.alias,
                    agent.write_mode.as_str()
                ),
            });
        }
        let who = Principal { actor: &person.actor, group: person.group, surface: Surface::Agent };
        let kinds = [EntityKind::Page, EntityKind::Entry, EntityKind::Navigation];
        if !kinds.into_iter().any(|kind| authorize(&who, Permission::Publish(kind)).is_ok()) {
            return Err(AgentError::Forbidden(
                "releaseId: putting an agent's work into a chosen release needs the right to publish".into(),
            ));
        }
        let Some(release) = found(self.store().release(&person.scope, id).await)? else {
            return Err(AgentError::Invalid { field: "releaseId", message: format!("releaseId: no release {id}") });
        };
        if release.state != ReleaseState::Open {
            return Err(AgentError::Invalid {
                field: "releaseId",
                message: format!(
                    "releaseId: release \"{}\" is {} and takes no more changes; choose an open one",
                    release.name, release.state
                ),
            });
        }
        Ok(())
    }

    /// Begins the next turn of session `id` with the person's message
    /// (`body`, as stored), once it is theirs, with this agent, and ready:
    /// the previews the last turn showed are answered first.
    #[allow(clippy::too_many_arguments)]
    async fn continue_session(
        &self,
        person: &Person,
        agent: &Agent,
        id: &str,
        message: &str,
        body: &Value,
        context: Option<Value>,
        contexts: &[String],
        answer: Option<PreviewAnswer>,
    ) -> Result<AgentSession, AgentError> {
        let store = self.store();
        let scope = &person.scope;
        let Some(mut s) = found(store.session(scope, id).await)? else {
            return Err(AgentError::NotFound(format!("no session {id}")));
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
            self.answer_previews(person, &s, agent, message, answer.as_ref()).await?;
        }
        let Some(turn) = store.begin_turn(scope, &s.id, &from, context.as_ref(), contexts, body).await? else {
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
        s.contexts = contexts.to_vec();
        if context.is_some() {
            s.context = context;
        }
        Ok(s)
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
        let approver = CallContext::new(person.actor.clone(), person.group, scope.clone(), Surface::Rest);
        if let Some(answer) = answer {
            let id = &answer.confirmation_id;
            let theirs = found(store.confirmation(scope, id).await)?.is_some_and(|c| {
                c.requested_via == Surface::Agent && c.session_id.as_deref() == Some(session.id.as_str())
            });
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
}

/// The approvals a paused session waits for.
fn pending_ids(pending: &Value) -> Vec<String> {
    pending
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("approvalId").and_then(Value::as_str).map(str::to_string))
        .collect()
}
