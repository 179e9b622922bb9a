//! `quire chat`: talk to an agent from a terminal. Text streams to stdout;
//! tool calls and approvals show on stderr. In a terminal, approvals are
//! asked y/N; without one they stay pending and their ids are printed.

use super::{AnyResult, Outcome};
use crate::cli::CallerArgs;
use crate::config::Config;
use crate::services::{DataDir, Existing, cli_actor, seed, services};
use quire_agent::{Event, Runtime};
use quire_app::Actor;
use quire_app::approvals::Verdict;
use serde_json::Value;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

/// How a turn ended, as far as the terminal is concerned.
pub enum Ended {
    /// The turn finished (or failed: `false`).
    Done(bool),
    /// Waiting for these approvals (the run's AG-UI interrupts).
    Paused(Vec<Value>),
}

/// Prints a session's events from after `after` until the run ends.
pub async fn follow(runtime: &Runtime, session: &str, after: Option<u64>) -> Ended {
    let (backlog, mut live) = runtime.events().subscribe(session, after);
    let mut pending = backlog.into_iter();
    loop {
        let event: Event = match pending.next() {
            Some(e) => e,
            None => match live.recv().await {
                Ok(e) => e,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => return Ended::Done(false),
            },
        };
        let d = &event.data;
        let mut out = std::io::stdout();
        match event.kind() {
            "TEXT_MESSAGE_CONTENT" => {
                let _ = write!(out, "{}", d["delta"].as_str().unwrap_or_default());
                let _ = out.flush();
            }
            "TEXT_MESSAGE_END" => {
                let _ = writeln!(out);
            }
            "TOOL_CALL_START" => eprintln!("  · {}", d["toolCallName"].as_str().unwrap_or_default()),
            "TOOL_CALL_RESULT" => {
                let result: Value =
                    serde_json::from_str(d["content"].as_str().unwrap_or("null")).unwrap_or(Value::Null);
                if result["success"] == false {
                    eprintln!("    ✗ {}", result["error"].as_str().unwrap_or("failed"));
                }
            }
            "RUN_ERROR" => {
                eprintln!("error: {}", d["message"].as_str().unwrap_or("the run failed"));
                return Ended::Done(false);
            }
            "RUN_FINISHED" => {
                if d["outcome"]["type"] == "interrupt" {
                    return Ended::Paused(d["outcome"]["interrupts"].as_array().cloned().unwrap_or_default());
                }
                return Ended::Done(true);
            }
            _ => {}
        }
    }
}

/// Asks y/N on the terminal.
fn ask(question: &str) -> bool {
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return false;
    }
    matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// Runs one message to its end: follows the stream, answers approvals on a
/// terminal (and resumes), or prints them when there is none. Answers the
/// session id and whether the turn ended without error.
pub async fn turn(
    runtime: &Arc<Runtime>,
    actor: &Actor,
    agent: &str,
    session: Option<&str>,
    message: &str,
) -> Result<(String, bool), String> {
    let last = session.and_then(|s| runtime.events().history(s).last().map(|e| e.id));
    let message = quire_app::chat::Message {
        agent: agent.to_string(),
        text: message.to_string(),
        session: session.map(str::to_string),
        ..Default::default()
    };
    let started = quire_app::chat::start(runtime, actor, message).await.map_err(|e| e.to_string())?;
    let session = started.session_id.clone();
    let mut after = last;
    loop {
        let ended = follow(runtime, &session, after).await;
        after = runtime.events().history(&session).last().map(|e| e.id);
        match ended {
            Ended::Done(ok) => return Ok((session, ok)),
            Ended::Paused(approvals) => {
                if !std::io::stdin().is_terminal() {
                    // A closed stdout (`| head`) loses these lines, never the turn.
                    for a in &approvals {
                        let _ = outln!(
                            "approval pending: {}  {} — {}",
                            a["id"].as_str().unwrap_or_default(),
                            a["metadata"]["tool"].as_str().unwrap_or_default(),
                            a["message"].as_str().unwrap_or_default()
                        );
                    }
                    let _ =
                        outln!("answer with `quire approvals approve ID` or `quire approvals reject ID [--reason R]`");
                    return Ok((session, true));
                }
                // The last answer resumes the turn, as it does on every surface.
                let mut resumed = false;
                for a in &approvals {
                    let id = a["id"].as_str().unwrap_or_default();
                    eprintln!("\n{} wants to run {}:", agent, a["metadata"]["tool"].as_str().unwrap_or_default());
                    eprintln!("  {}", a["message"].as_str().unwrap_or_default());
                    let verdict = if ask("Approve?") {
                        Verdict::Approve
                    } else {
                        Verdict::Reject(Some("declined in the terminal".into()))
                    };
                    let answered = quire_app::approvals::answer(runtime, actor, id, verdict).await;
                    resumed |= answered.map_err(|e| e.to_string())?.resumed.is_some();
                }
                if !resumed {
                    return Err("the turn could not resume".into());
                }
            }
        }
    }
}

/// The interactive loop: one turn per line until EOF or `exit`.
pub async fn repl(
    runtime: &Arc<Runtime>,
    actor: &Actor,
    agent: &str,
    mut session: Option<String>,
) -> Result<(), String> {
    eprintln!("Chatting with {agent}. Empty line or Ctrl-D to leave.");
    loop {
        eprint!("> ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = line.trim();
        if line.is_empty() || line == "exit" {
            break;
        }
        match turn(runtime, actor, agent, session.as_deref(), line).await {
            Ok((id, _)) => session = Some(id),
            Err(e) => eprintln!("error: {e}"),
        }
    }
    if let Some(id) = session {
        eprintln!("session: {id}");
    }
    Ok(())
}

/// `quire chat`: one message (`message`) or a conversation on the
/// terminal with agent `agent`, in a new session or `session`.
pub async fn run(
    agent: String,
    session: Option<String>,
    message: Option<String>,
    caller: CallerArgs,
    config: &Config,
    data: &DataDir,
) -> AnyResult<Outcome> {
    let profiles = config.model_profiles()?;
    let store = data.open_existing(Existing::Directory).await?;
    if store.sites().await?.is_empty() {
        seed(&store, &data.path, config).await?;
    }
    let actor = cli_actor(&store, config, caller).await?;
    let registry = std::sync::Arc::new(quire_tools::Registry::new(services(&store, &data.path, config)?));
    let runtime = quire_agent::Runtime::new(registry, profiles);
    let mut outcome = Outcome::Succeeded;
    match message {
        Some(m) => {
            let (id, ok) = turn(&runtime, &actor, &agent, session.as_deref(), &m).await?;
            eprintln!("session: {id}");
            if !ok {
                outcome = Outcome::Failed;
            }
        }
        None => repl(&runtime, &actor, &agent, session).await?,
    }
    runtime.flush_events().await;
    store.close().await;
    Ok(outcome)
}
