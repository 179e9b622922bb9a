//! `quire eval`: runs a suite of agent tasks against the configured model
//! and reports how it did. Each run gets a fresh data directory of its own
//! (SQLite, the demo site, its uploads and notes vault) and the agent runs
//! through the same use cases a person's chat does (`quire_app::chat`,
//! `quire_app::approvals`, `quire_app::published`); what a task is and how
//! it is judged is `quire_agent::eval`'s.

use super::{AnyResult, Outcome};
use crate::cli::EvalArgs;
use crate::config::{Config, MediaConfig};
use crate::services::{DataDir, seed, services};
use quire_agent::eval::{Delivery, Report, Task, TaskRun, UseCases, Web, load_suite, run_task};
use quire_agent::{Profiles, Runtime};
use quire_app::approvals::Verdict;
use quire_app::published::{self, Reading};
use quire_app::{Actor, Failure};
use quire_store::Scope;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The application around one run: the local admin chatting with the
/// agent of a fresh demo site.
struct Site {
    runtime: Arc<Runtime>,
    actor: Actor,
}

impl UseCases for Site {
    fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    fn scope(&self) -> &Scope {
        &self.actor.scope
    }

    async fn say(&self, agent: &str, session: Option<&str>, text: &str) -> Result<(String, i64), String> {
        let message = quire_app::chat::Message {
            agent: agent.to_string(),
            text: text.to_string(),
            session: session.map(str::to_string),
            ..Default::default()
        };
        let started = quire_app::chat::start(&self.runtime, &self.actor, message).await.map_err(|e| e.to_string())?;
        Ok((started.session_id, started.turn))
    }

    async fn answer(&self, id: &str, approve: bool, reason: Option<String>) -> Result<(), String> {
        let verdict = if approve { Verdict::Approve } else { Verdict::Reject(reason) };
        quire_app::approvals::answer(&self.runtime, &self.actor, id, verdict).await.map_err(|e| e.to_string())?;
        Ok(())
    }

    async fn undo(&self, session: &str, turn: i64) -> Result<usize, String> {
        match quire_app::undo::undo_turn(&self.runtime, &self.actor, session, turn).await {
            Ok(undone) => Ok(undone.reverted.len()),
            // A turn that only read changed nothing: nothing to take back.
            Err(e) if e.failure == Failure::Conflict => Ok(0),
            Err(e) => Err(e.to_string()),
        }
    }

    async fn delivered(&self, what: Delivery, slug: &str) -> Result<Value, String> {
        let services = self.runtime.registry().services();
        let reading = Reading::public(self.actor.scope.clone());
        let found = match what {
            Delivery::Page => published::delivered_page(services, &reading, slug).await.map(|p| json!(p)),
            Delivery::Post => published::post(services, &self.actor, slug).await.map(|p| json!(p)),
            Delivery::Navigation => published::delivered_navigation(services, &reading, slug)
                .await
                .map(|(menu, items)| json!({ "navigation": menu, "items": items })),
        };
        match found {
            Ok(v) => Ok(v),
            Err(e) if e.failure == Failure::NotFound => Ok(Value::Null),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// `quire eval`.
pub async fn run(args: EvalArgs, config: &Config) -> AnyResult<Outcome> {
    let catalog = quire_tools::catalog();
    let names: Vec<&str> = catalog.iter().map(|t| t.name).collect();
    let tasks = load_suite(&args.suite, &names).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| format!("  {e}")).collect();
        format!("the suite has task files that cannot be used:\n{}", lines.join("\n"))
    })?;
    let tasks: Vec<Task> = tasks
        .into_iter()
        .filter(|t| args.task.is_empty() || args.task.iter().any(|n| t.name.contains(n.as_str())))
        .filter(|t| args.tag.is_empty() || args.tag.iter().any(|tag| t.tags.contains(tag)))
        .collect();
    if tasks.is_empty() {
        return Err(format!("no task in {} matches", args.suite.display()).into());
    }
    if args.list {
        for t in &tasks {
            outln!("{:<32} [{}] {}", t.name, t.tags.join(", "), t.description)?;
        }
        return Ok(Outcome::Succeeded);
    }
    let profiles = config.model_profiles()?;
    let Some(profile) = profiles.get("default") else {
        return Err(quire_agent::NOT_CONFIGURED.into());
    };
    let model = format!("{} {}", profile.provider.as_str(), profile.model.as_deref().unwrap_or_default());
    let repeat = args.repeat.max(1);
    let timeout = Duration::from_secs(args.timeout.max(1));
    let mut runs = Vec::new();
    for repetition in 1..=repeat {
        for task in &tasks {
            eprint!("{} #{repetition} ... ", task.name);
            let run = run_one(task, repetition, timeout, config, &profiles).await?;
            eprintln!("{} ({} steps, {:.1} s)", if run.passed { "passed" } else { "FAILED" }, run.steps, run.seconds);
            runs.push(run);
        }
    }
    let report = Report::new(&model, repeat, &tasks, runs);
    outln!("{}", report.table())?;
    if let Some(file) = &args.json {
        write(file, &report.json())?;
    }
    if let Some(file) = &args.html {
        write(file, &report.html())?;
    }
    Ok(if report.all_passed() { Outcome::Succeeded } else { Outcome::Failed })
}

fn write(file: &Path, text: &str) -> AnyResult {
    std::fs::write(file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(())
}

/// One run of `task` on a data directory of its own, removed afterwards.
async fn run_one(
    task: &Task,
    repetition: u32,
    timeout: Duration,
    config: &Config,
    profiles: &Profiles,
) -> AnyResult<TaskRun> {
    let dir = fresh_dir(&task.name, repetition)?;
    let ran = run_in(task, repetition, timeout, config, profiles, &dir).await;
    // The folder is scratch space; a leftover one is only disk used.
    let _ = std::fs::remove_dir_all(&dir);
    ran
}

/// A new empty folder in the system's temporary folder.
fn fresh_dir(name: &str, repetition: u32) -> AnyResult<PathBuf> {
    let unique = format!("quire-eval-{}-{name}-{repetition}-{}", std::process::id(), uuid_like());
    let dir = std::env::temp_dir().join(unique);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// A value unique enough for a scratch folder's name.
fn uuid_like() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!("{:x}", now.as_nanos())
}

async fn run_in(
    task: &Task,
    repetition: u32,
    timeout: Duration,
    config: &Config,
    profiles: &Profiles,
    dir: &Path,
) -> AnyResult<TaskRun> {
    // The run's own site: nothing of the operator's data, vaults or
    // media storage is read or written.
    let mut config = config.clone();
    config.database_url = None;
    config.vaults_dir = None;
    config.vaults.clear();
    config.media = MediaConfig::default();
    let web = if task.web.is_empty() { None } else { Some(Web::serve(task.web.clone()).await?) };
    let task = match &web {
        Some(web) => {
            // The task's web is on this machine: the guarded client may
            // reach its address (and, as ever, no other private one).
            config.http.allow.push(web.host.clone());
            config.external.searxng_url = Some(web.base.clone());
            config.external.search = vec!["searxng".into()];
            task.with_web(&web.base)
        }
        None => task.clone(),
    };
    let data = DataDir::new(dir.to_path_buf(), None, config.store_options()?);
    let store = data.open_or_create().await?;
    let ran = async {
        let report = seed(&store, dir, &config).await?;
        let scope = report.scope.ok_or("the demo site was not seeded")?;
        let registry = Arc::new(quire_tools::Registry::new(services(&store, dir, &config)?));
        let runtime = Runtime::new(registry, profiles.clone());
        let site = Site { runtime: Arc::clone(&runtime), actor: Actor::local_admin(scope) };
        let run = run_task(&site, &task, repetition, timeout).await;
        runtime.flush_events().await;
        AnyResult::Ok(run)
    }
    .await;
    data.close_stores().await;
    ran
}
