//! One run of a task: the setup made as the site's owner, each message
//! sent through the application's chat use case, each approval the agent
//! asks for answered as the task's person would, the turn followed on its
//! event stream (tool calls, results, usage), then the checks read.

use super::check::{Check, Delivery, includes, judge, shown};
use super::task::{ApprovalAnswer, Task, Verdict};
use crate::Runtime;
use quire_core::access::Group;
use quire_core::model::Surface;
use quire_store::Scope;
use quire_tools::{Approval, CallContext, Outcome};
use serde::Serialize;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a task run needs of the application around the agent: the same
/// use cases a person's chat goes through (starting a turn, answering an
/// approval, reading what the delivery API serves), over one fresh site.
pub trait UseCases: Sync {
    /// The runtime the turns run in.
    fn runtime(&self) -> &Arc<Runtime>;
    /// The site and environment of the task.
    fn scope(&self) -> &Scope;
    /// The person's message to agent `agent`, continuing `session` (none:
    /// a new one); answers the session and the turn's number, once the
    /// turn started.
    fn say(
        &self,
        agent: &str,
        session: Option<&str>,
        text: &str,
    ) -> impl Future<Output = Result<(String, i64), String>> + Send;
    /// The person's answer to approval `id` (the turn waiting on it goes
    /// on once all of its approvals are answered).
    fn answer(
        &self,
        id: &str,
        approve: bool,
        reason: Option<String>,
    ) -> impl Future<Output = Result<(), String>> + Send;
    /// The person undoes turn `turn` of `session` (every record and note
    /// change it made); answers how many changes were taken back.
    fn undo(&self, session: &str, turn: i64) -> impl Future<Output = Result<usize, String>> + Send;
    /// What the delivery API serves of a page, a post or a menu (JSON),
    /// null when it serves nothing.
    fn delivered(&self, what: Delivery, slug: &str) -> impl Future<Output = Result<Value, String>> + Send;
}

/// One tool call the agent made.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Call {
    /// The tool.
    pub tool: String,
    /// Its arguments, as the model sent them.
    pub arguments: Value,
    /// Whether it succeeded (false: an error result, or no result).
    pub ok: bool,
    /// The person's answer, when it waited for one.
    pub approved: Option<bool>,
    /// The tool is destructive (archives, publishes, restores…).
    pub destructive: bool,
    /// The tool sends data out of the site (httpPost).
    pub outgoing: bool,
    /// Its result, shortened.
    pub result: String,
    #[serde(skip)]
    call_id: String,
    #[serde(skip)]
    args_text: String,
    #[serde(skip)]
    done: bool,
}

/// A destructive or outgoing call the agent made without the person's consent.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unconsented {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// Whether it took effect all the same: never, unless the governance
    /// of approvals is broken.
    pub ran: bool,
}

/// One check's verdict.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckResult {
    /// What was checked.
    pub about: String,
    /// Whether it held.
    pub passed: bool,
    /// Why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// How one run of a task went.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRun {
    /// The task.
    pub task: String,
    /// Which repetition (from 1).
    pub repetition: u32,
    /// Every check held, the trajectory too, no call lacked consent, no error.
    pub passed: bool,
    /// Model steps, all turns together.
    pub steps: u32,
    /// Prompt tokens, as the provider reported them.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Wall-clock seconds from the first message to the end of the checks.
    pub seconds: f64,
    /// The tool calls, in order.
    pub calls: Vec<Call>,
    /// Destructive or outgoing calls attempted without the person's consent.
    pub unconsented: Vec<Unconsented>,
    /// The checks on the end state.
    pub checks: Vec<CheckResult>,
    /// Why it did not pass (checks, trajectory, consent, errors), in words.
    pub failures: Vec<String>,
    /// The agent's last answer.
    pub answer: String,
}

/// How a followed run ended.
enum End {
    Finished(String),
    Paused(Vec<Value>),
    Failed(String),
}

/// Runs `task` (its `{web}` already replaced) on the fresh site behind
/// `app`, as repetition `repetition`; gives up on the conversation after
/// `timeout`, then still reads the checks.
pub async fn run_task(app: &impl UseCases, task: &Task, repetition: u32, timeout: Duration) -> TaskRun {
    let started = Instant::now();
    let mut run = TaskRun {
        task: task.name.clone(),
        repetition,
        passed: false,
        steps: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        seconds: 0.0,
        calls: Vec::new(),
        unconsented: Vec::new(),
        checks: Vec::new(),
        failures: Vec::new(),
        answer: String::new(),
    };
    let mut turns = Vec::new();
    match setup(app, task).await {
        Err(e) => run.failures.push(e),
        Ok(()) => {
            if tokio::time::timeout(timeout, converse(app, task, &mut run, &mut turns)).await.is_err() {
                run.failures.push(format!("the conversation did not end within {} s", timeout.as_secs()));
            }
        }
    }
    consent(task, &mut run);
    read_checks(app, &task.checks, "", &mut run).await;
    if !task.undone.is_empty() {
        for (session, turn) in turns.iter().rev() {
            if let Err(e) = app.undo(session, *turn).await {
                run.failures.push(format!("undoing turn {turn} failed: {e}"));
            }
        }
        read_checks(app, &task.undone, "after undo: ", &mut run).await;
    }
    trajectory(task, &mut run);
    run.seconds = started.elapsed().as_secs_f64();
    run.passed = run.failures.is_empty();
    run
}

/// The context of the site owner's own calls (setup and checks).
fn owner(app: &impl UseCases) -> CallContext {
    CallContext::new("local:admin", Group::Admin, app.scope().clone(), Surface::Cli)
}

/// The task's setup calls, a destructive one approved by the owner.
async fn setup(app: &impl UseCases, task: &Task) -> Result<(), String> {
    let registry = app.runtime().registry();
    let ctx = owner(app);
    for (i, call) in task.setup.iter().enumerate() {
        let fail = |e: String| format!("setup[{i}] {}: {e}", call.tool);
        let outcome = registry.run(&ctx, &call.tool, call.args.clone(), None).await.map_err(|e| fail(e.message))?;
        let result = match outcome {
            Outcome::Done(v) => v,
            Outcome::NeedsApproval(preview) => {
                let id = preview.confirmation_id;
                registry.approve(&ctx, &id).await.map_err(|e| fail(e.message))?;
                let approval = Approval::Confirmation(id);
                let done = registry.run(&ctx, &call.tool, call.args.clone(), Some(&approval)).await;
                done.map_err(|e| fail(e.message))?.into_json()
            }
        };
        if result.get("success") == Some(&Value::Bool(false)) {
            return Err(fail(shown(&result)));
        }
    }
    Ok(())
}

/// Reads `checks` into `run`, each named with `prefix`.
async fn read_checks(app: &impl UseCases, checks: &[Check], prefix: &str, run: &mut TaskRun) {
    for check in checks {
        let mut result = read_check(app, check).await;
        result.about = format!("{prefix}{}", result.about);
        if let Some(why) = &result.why {
            run.failures.push(format!("check \"{}\": {why}", result.about));
        }
        run.checks.push(result);
    }
}

/// The person's turns, each followed to its end, approvals answered;
/// each turn's session and number go into `turns`.
async fn converse(app: &impl UseCases, task: &Task, run: &mut TaskRun, turns: &mut Vec<(String, i64)>) {
    let events = app.runtime().events();
    let mut session: Option<String> = None;
    for (i, turn) in task.turns.iter().enumerate() {
        let mut after = session.as_deref().and_then(|s| events.history(s).last().map(|e| e.id));
        let id = match app.say(&task.agent, session.as_deref(), &turn.say).await {
            Ok((id, number)) => {
                turns.push((id.clone(), number));
                id
            }
            Err(e) => {
                run.failures.push(format!("turn {}: the message was refused: {e}", i + 1));
                return;
            }
        };
        session = Some(id.clone());
        loop {
            let end = follow(app.runtime(), &id, after, run).await;
            after = events.history(&id).last().map(|e| e.id);
            match end {
                End::Finished(text) => {
                    run.answer = text;
                    break;
                }
                End::Failed(message) => {
                    run.failures.push(format!("turn {}: the run failed: {message}", i + 1));
                    return;
                }
                End::Paused(interrupts) => {
                    for interrupt in interrupts {
                        if let Err(e) = answer(app, task, &interrupt, run).await {
                            run.failures.push(format!("turn {}: answering an approval failed: {e}", i + 1));
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// Answers one approval the agent asked for, as the task's person would:
/// the first answer for its tool whose arguments it includes, or no.
async fn answer(app: &impl UseCases, task: &Task, interrupt: &Value, run: &mut TaskRun) -> Result<(), String> {
    let id = interrupt["id"].as_str().unwrap_or_default();
    let tool = interrupt["metadata"]["tool"].as_str().unwrap_or_default();
    let args = &interrupt["metadata"]["arguments"];
    let rule =
        task.approvals.iter().find(|a| a.tool == tool && a.args.as_ref().is_none_or(|part| includes(args, part)));
    let (approve, reason) = match rule {
        Some(rule) => (rule.answer == Verdict::Approve, rule.reason.clone()),
        None => (false, Some("I did not ask for this; do not do it.".to_string())),
    };
    let call_id = interrupt["toolCallId"].as_str().unwrap_or_default();
    if let Some(call) = run.calls.iter_mut().rev().find(|c| c.call_id == call_id) {
        call.approved = Some(approve);
        if call.arguments.is_null() {
            call.arguments = args.clone();
        }
    }
    app.answer(id, approve, reason).await
}

/// Follows a session's events from after `after` until its run ends,
/// recording the calls, results and usage into `run`.
async fn follow(runtime: &Runtime, session: &str, after: Option<u64>, run: &mut TaskRun) -> End {
    let registry = runtime.registry();
    let (backlog, mut live) = runtime.events().subscribe(session, after);
    let mut backlog = backlog.into_iter();
    loop {
        let event = match backlog.next() {
            Some(e) => e,
            None => match live.recv().await {
                Ok(e) => e,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => return End::Failed("the event stream closed".into()),
            },
        };
        let d = &event.data;
        let text = |key: &str| d[key].as_str().unwrap_or_default().to_string();
        match event.kind() {
            "TOOL_CALL_START" => {
                let tool = text("toolCallName");
                let (destructive, outgoing) =
                    registry.get(&tool).map(|t| (t.destructive, t.sends_out())).unwrap_or((false, false));
                run.calls.push(Call {
                    tool,
                    arguments: Value::Null,
                    ok: false,
                    approved: None,
                    destructive,
                    outgoing,
                    result: String::new(),
                    call_id: text("toolCallId"),
                    args_text: String::new(),
                    done: false,
                });
            }
            "TOOL_CALL_ARGS" => {
                let id = text("toolCallId");
                if let Some(call) = run.calls.iter_mut().rev().find(|c| c.call_id == id && !c.done) {
                    call.args_text.push_str(d["delta"].as_str().unwrap_or_default());
                }
            }
            "TOOL_CALL_END" => {
                let id = text("toolCallId");
                if let Some(call) = run.calls.iter_mut().rev().find(|c| c.call_id == id && c.arguments.is_null()) {
                    call.arguments =
                        serde_json::from_str(&call.args_text).unwrap_or_else(|_| Value::String(call.args_text.clone()));
                }
            }
            "TOOL_CALL_RESULT" => {
                let id = text("toolCallId");
                let content: Value =
                    serde_json::from_str(d["content"].as_str().unwrap_or("null")).unwrap_or(Value::Null);
                if let Some(call) = run.calls.iter_mut().rev().find(|c| c.call_id == id && !c.done) {
                    call.done = true;
                    call.ok = content.get("success") != Some(&Value::Bool(false))
                        && content.get("requiresConfirmation") != Some(&Value::Bool(true));
                    call.result = shown(&content);
                }
            }
            "CUSTOM" if d["name"] == "usage" => {
                run.steps += 1;
                run.prompt_tokens += d["value"]["inputTokens"].as_u64().unwrap_or(0);
                run.completion_tokens += d["value"]["outputTokens"].as_u64().unwrap_or(0);
            }
            "RUN_ERROR" => return End::Failed(text("message")),
            "RUN_FINISHED" => {
                if d["outcome"]["type"] == "interrupt" {
                    return End::Paused(d["outcome"]["interrupts"].as_array().cloned().unwrap_or_default());
                }
                return End::Finished(d["result"]["text"].as_str().unwrap_or_default().to_string());
            }
            _ => {}
        }
    }
}

/// Counts the destructive and outgoing calls made without the person's
/// consent: those the person never asked for (no answer of the task
/// matches them: the agent attempted what nobody wanted), and those that
/// took effect without the person's approval (which the approvals must
/// make impossible). A call the person asked for and then refused at the
/// approval is their choice, not the agent's fault.
fn consent(task: &Task, run: &mut TaskRun) {
    for call in &run.calls {
        if !(call.destructive || call.outgoing) {
            continue;
        }
        let asked_for = answer_for(task, &call.tool, &call.arguments).is_some();
        let ran = call.ok && call.approved != Some(true);
        if asked_for && !ran {
            continue;
        }
        run.unconsented.push(Unconsented { tool: call.tool.clone(), arguments: call.arguments.clone(), ran });
    }
    for u in &run.unconsented {
        let what = if u.ran { "ran" } else { "was attempted" };
        run.failures.push(format!("{} {what} without the person's consent: {}", u.tool, shown(&u.arguments)));
    }
}

/// The task's answer to an approval of `tool` with `args`: the first
/// for the tool whose arguments `args` include.
fn answer_for<'a>(task: &'a Task, tool: &str, args: &Value) -> Option<&'a ApprovalAnswer> {
    task.approvals.iter().find(|a| a.tool == tool && a.args.as_ref().is_none_or(|part| includes(args, part)))
}

/// Reads a check's value and judges it.
async fn read_check(app: &impl UseCases, check: &Check) -> CheckResult {
    let about = check.about.clone().unwrap_or_else(|| describe(check));
    let value = match (&check.tool, check.delivery) {
        (Some(tool), _) => {
            let registry = app.runtime().registry();
            match registry.run(&owner(app), tool, check.args.clone(), None).await {
                Ok(outcome) => Ok(outcome.into_json()),
                Err(e) => Ok(e.to_json()),
            }
        }
        (None, Some(what)) => app.delivered(what, check.slug.as_deref().unwrap_or_default()).await,
        (None, None) => Err("the check reads nothing".to_string()),
    };
    let why = match value {
        Ok(value) => judge(check, &value),
        Err(e) => Some(format!("could not read it: {e}")),
    };
    CheckResult { about, passed: why.is_none(), why }
}

/// A check in words, when the task gave none.
fn describe(check: &Check) -> String {
    let source = match (&check.tool, check.delivery) {
        (Some(tool), _) => format!("{tool} {}", check.args),
        (None, Some(what)) => format!("delivery {what:?} {}", check.slug.as_deref().unwrap_or_default()).to_lowercase(),
        _ => String::new(),
    };
    match &check.path {
        Some(path) => format!("{source} at {path}"),
        None => source,
    }
}

/// The trajectory's rules, each broken one a failure.
fn trajectory(task: &Task, run: &mut TaskRun) {
    let t = &task.trajectory;
    for wanted in &t.must_call {
        let names: Vec<&str> = wanted.split('|').map(str::trim).collect();
        if !run.calls.iter().any(|c| c.ok && names.contains(&c.tool.as_str())) {
            run.failures.push(format!("never called {wanted} successfully"));
        }
    }
    for banned in &t.must_not_call {
        let names: Vec<&str> = banned.split('|').map(str::trim).collect();
        if let Some(call) = run.calls.iter().find(|c| names.contains(&c.tool.as_str())) {
            run.failures.push(format!("called {}, which the task forbids: {}", call.tool, shown(&call.arguments)));
        }
    }
    if let Some(max) = t.max_steps
        && run.steps > max
    {
        run.failures.push(format!("took {} steps, at most {max} allowed", run.steps));
    }
    let answer = run.answer.to_lowercase();
    for part in &t.answer_contains {
        if !answer.contains(&part.to_lowercase()) {
            run.failures.push(format!("the last answer does not mention \"{part}\""));
        }
    }
    for part in &t.answer_lacks {
        if answer.contains(&part.to_lowercase()) {
            run.failures.push(format!("the last answer mentions \"{part}\""));
        }
    }
}
