//! A turn's run: steps until it ends, pauses or fails, each one the
//! prompt prepared, the model asked, its tool calls run, the step written.

use super::Runtime;
use super::calls::{Answer, CallOutcome, PendingCall};
use super::error::LoopError;
use super::journal::Journal;
use super::record::Record;
use super::stream::{self, StreamState};
use crate::message::{Delta, Message};
use crate::prompt::{self, StepInput};
use crate::provider::{ModelWriter, NOT_CONFIGURED, Profile, Provider};
use quire_core::access::{Group, Principal};
use quire_core::model::{Agent, AgentSession, SessionStatus, Surface, WriteMode};
use quire_store::Scope;
use quire_tools::CallContext;
use serde_json::json;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use tokio::task::JoinHandle;
use tracing::{Instrument, Span};

/// How a run ended.
pub(super) enum Outcome {
    Finished(String),
    Paused(Vec<PendingCall>),
}

/// What every step of a run shares.
struct TurnRun<'a> {
    scope: &'a Scope,
    ctx: &'a CallContext,
    agent: &'a Agent,
    profile: &'a Profile,
    client: &'a dyn Provider,
    group: Group,
    /// The contexts in use this turn: the agent's and those chosen for it.
    contexts: &'a [quire_core::model::Context],
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

impl Runtime {
    /// Announces a run of the session's turn and runs it in the background
    /// (see [`Runtime::run`]). The start is stored before the caller hears
    /// of the turn, so a stream opened on another process right after
    /// starts at this run.
    pub(super) async fn launch(
        self: &Arc<Self>,
        scope: &Scope,
        session: AgentSession,
        agent: Agent,
        answers: Vec<(PendingCall, Answer)>,
        history: Option<Vec<Message>>,
        run_id: Option<String>,
    ) -> JoinHandle<()> {
        let run_id = self.run_started(&session.id, run_id);
        self.flush_session(&session.id).await;
        let runtime = Arc::clone(self);
        let scope = scope.clone();
        tokio::spawn(async move { runtime.run(scope, session, agent, run_id, answers, history).await })
    }

    /// One run: the answers to resume with (if any), then steps until the
    /// turn ends, pauses or fails. Never panics; failures end as RUN_ERROR.
    /// `history` is the conversation when the caller knows it (a new
    /// session); otherwise it is read from the database.
    pub(super) async fn run(
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
        let end = match outcome {
            Ok(Outcome::Finished(text)) => {
                session.pending = json!([]);
                Some((SessionStatus::Idle, "RUN_FINISHED", stream::finished(&thread, &run_id, &text)))
            }
            Ok(Outcome::Paused(pending)) => {
                session.pending = serde_json::to_value(&pending).unwrap_or(json!([]));
                Some((SessionStatus::Paused, "RUN_FINISHED", stream::interrupted(&thread, &run_id, &pending)))
            }
            Err(LoopError::TakenOver { .. }) => None,
            Err(e) => {
                journal.push_record(&Record::Failure { message: e.to_string(), code: e.code().to_string() });
                let end = json!({ "message": e.to_string(), "code": e.code() });
                Some((SessionStatus::Failed, "RUN_ERROR", end))
            }
        };
        if let Some((status, kind, end)) = end {
            session.status = status;
            let written = self.persist(&scope, &session, &mut journal, Some(status)).await;
            if !matches!(written, Err(LoopError::TakenOver { .. })) {
                hub.emit(&thread, kind, end);
                return;
            }
        }
        // Another process took the turn over (this one was silent too long):
        // it runs the turn now, and this one ends without a word.
        tracing::warn!(session = %thread, "the turn was taken over by another process; this one stops");
        hub.abandon(&thread);
    }

    /// The steps of a run: the call context of the person as they are now,
    /// the conversation, the answers this run resumes with, then one step
    /// after another until one ends the turn (or the profile's most steps).
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
        let thread = session.id.clone();
        // Permissions are those of the person now, not when the session began:
        // a token revoked, expired or regrouped since, or a person disabled or
        // regrouped since, takes effect here.
        let recorded = session.group;
        let group = store.live_actor_group(&session.actor, recorded).await?.ok_or(LoopError::Revoked)?;
        // The agent's own model: it answers the turn, and tools that write
        // with a model (deep search) use it too.
        let resolved = self.client(&agent.profile)?;
        let writer = resolved.as_ref().map(|(profile, client)| {
            Arc::new(ModelWriter::new(profile.clone(), Arc::clone(client))) as quire_tools::external::SharedWriter
        });
        // In release mode the turn's changes to documents go into the
        // release the person chose, or one of the turn's own, made on its
        // first such change.
        let staging = match agent.write_mode {
            WriteMode::Release => Some(store.session_release(scope, &session.id).await?),
            _ => None,
        };
        let staging = staging.map(|chosen| quire_store::Staging {
            release: chosen.unwrap_or_else(|| format!("{}.{}", session.id, session.turns)),
            name: format!("{}: {}, turn {}", agent.name, session.title, session.turns),
            scope: scope.clone(),
            actor: session.actor.clone(),
            session_id: session.id.clone(),
            turn_id: session.turns.to_string(),
        });
        let ctx = CallContext {
            session_id: Some(session.id.clone()),
            turn_id: Some(session.turns.to_string()),
            policy: agent.approval_policy,
            publishing: agent.write_mode.publishing(),
            staging,
            writer,
            ..CallContext::new(session.actor.clone(), group, scope.clone(), Surface::Agent)
        };
        // The conversation as the model reads it, each message wrapped once.
        let mut messages: Vec<Message> = match history {
            Some(history) => history.iter().map(prompt::for_model).collect(),
            None => self.conversation(scope, &session.id).await?.iter().map(prompt::for_model).collect(),
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
                let result = self.answered_call(&ctx, session, pending, answer).await;
                keep(result, journal, &mut messages);
            }
            session.pending = json!([]);
            self.persist(scope, session, journal, None).await?;
        }

        let Some((profile, client)) = resolved else {
            return Ok(self.finish_with(&thread, journal, NOT_CONFIGURED.to_string()));
        };
        // The contexts in use: the agent's own, then those chosen for the
        // turn, read once for the run (none read when none is in use).
        let keys: Vec<String> = agent.contexts.iter().chain(&session.contexts).cloned().collect();
        let contexts = store.contexts_by_keys(scope, &keys).await?;
        let turn_run =
            TurnRun { scope, ctx: &ctx, agent, profile: &profile, client: client.as_ref(), group, contexts: &contexts };

        loop {
            if session.steps >= profile.max_steps as i64 {
                let text = format!(
                    "I stopped after {} steps without finishing. Say \"continue\" to let me go on, or narrow the request.",
                    session.steps
                );
                return Ok(self.finish_with(&thread, journal, text));
            }
            // The site's model budget of the day, spent: no further call.
            if let Some(spent) = self.budget_spent(scope).await? {
                return Ok(self.finish_with(&thread, journal, format!("I stopped here: {spent}.")));
            }
            let span =
                tracing::info_span!("agent_step", session = %thread, turn = session.turns, step = session.steps + 1);
            let outcome = timed(span, "step ended", self.step(&turn_run, session, &mut messages, journal)).await;
            if let Some(outcome) = outcome? {
                return Ok(outcome);
            }
        }
    }

    /// Ends the turn with a text of the runtime's own, said as the model.
    fn finish_with(&self, thread: &str, journal: &mut Journal, text: String) -> Outcome {
        self.emit_text(thread, &text);
        journal.push(&Message::Assistant { content: text.clone(), tool_calls: vec![] });
        Outcome::Finished(text)
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
            prompt::prepare_step_with(
                &self.registry,
                &self.tool_specs,
                &StepInput {
                    agent: run.agent,
                    profile: run.profile,
                    who: Principal { actor: &session.actor, group: run.group, surface: Surface::Agent },
                    activated: &session.active_tools,
                    memory: &session.memory,
                    context: session.context.as_ref(),
                    contexts: run.contexts,
                },
                // Lent to the request and taken back after the model
                // call: the conversation is not copied at every step.
                std::mem::take(messages),
            )
        });
        let mut stream = StreamState::new(&self.hub, &thread);
        let response = {
            let mut sink = |d: Delta| stream.on(d);
            run.client.complete(&request, &mut sink).instrument(tracing::info_span!("model")).await
        };
        *messages = request.messages;
        stream.finish();
        let response = response?;
        session.steps += 1;
        self.spend(run.scope, response.usage).await?;
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
        journal.push_answer(&assistant, response.usage);
        messages.push(assistant);
        if response.tool_calls.is_empty() {
            return Ok(Some(Outcome::Finished(response.text)));
        }
        let mut pending = Vec::new();
        let mut final_text = None;
        for call in &response.tool_calls {
            self.still_ours(run.scope, session, journal).await?;
            let span = tracing::info_span!("tool_call", tool = %call.name);
            let outcome = timed(span, "tool call ended", self.tool_call(run.ctx, session, run.agent, call)).await;
            match outcome {
                CallOutcome::Result { content, is_error, final_answer } => {
                    if let Some(text) = final_answer {
                        final_text = Some(text);
                    }
                    let result = self.tool_result(&thread, &call.id, &call.name, &content, is_error);
                    keep(result, journal, messages);
                }
                CallOutcome::Pending(p) => {
                    self.hub.emit(&thread, "CUSTOM", json!({ "name": "approval_requested", "value": p }));
                    journal.push_record(&Record::Approval(Box::new(p.clone())));
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
}

/// A tool's result message, to write with the step and for the model to read.
fn keep(result: Message, journal: &mut Journal, messages: &mut Vec<Message>) {
    journal.push(&result);
    messages.push(prompt::for_model(&result));
}

/// Runs `work` in `span`, and logs there how long it took (at debug level),
/// so an operator sees where a slow turn went.
async fn timed<T>(span: Span, ended: &str, work: impl Future<Output = T>) -> T {
    let started = Instant::now();
    let out = work.instrument(span.clone()).await;
    span.in_scope(|| tracing::debug!(elapsed_us = started.elapsed().as_micros() as u64, "{ended}"));
    out
}
