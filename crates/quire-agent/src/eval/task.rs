//! A task: one TOML file saying what the site starts with, what the person
//! says and answers, and what must be true at the end. Read strictly:
//! an unknown key, a tool the catalog does not have or a check that
//! checks nothing is an error naming the file and the place.

use super::check::{Check, empty_object, one_or_many};
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path as FsPath, PathBuf};

/// A task, as its file says.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// The task's name: its file name without `.toml`.
    #[serde(skip)]
    pub name: String,
    /// What it asks of the agent, in a sentence (shown in reports).
    pub description: String,
    /// What it covers (pages, sections, posts, navigation, media, notes,
    /// research, refusal, injection…): `--tag` selects by them.
    #[serde(default)]
    pub tags: Vec<String>,
    /// The agent the person chats with (default `editor`).
    #[serde(default = "default_agent")]
    pub agent: String,
    /// What the site starts as.
    #[serde(default)]
    pub start: Start,
    /// Calls the site's owner makes before the conversation (as the local
    /// admin, destructive ones approved), to add what the task needs to
    /// the starting content.
    #[serde(default)]
    pub setup: Vec<Setup>,
    /// Pages a local web server serves during the task; `{web}` in
    /// messages, setup arguments and checks is its address. Its
    /// `/search` answers as a SearXNG server with these pages.
    #[serde(default)]
    pub web: Vec<WebPage>,
    /// What the person says, turn after turn.
    #[serde(rename = "turn")]
    pub turns: Vec<Turn>,
    /// How the person answers the approvals the agent asks for; a request
    /// no answer matches is rejected (the person did not ask for it).
    #[serde(default, rename = "approval")]
    pub approvals: Vec<ApprovalAnswer>,
    /// What must be true of the site at the end.
    #[serde(default, rename = "check")]
    pub checks: Vec<Check>,
    /// What must be true once the person undoes every turn of the
    /// conversation, newest first, as the back-office's Undo does (read
    /// after the checks above).
    #[serde(default)]
    pub undone: Vec<Check>,
    /// What must be true of the way there.
    #[serde(default)]
    pub trajectory: Trajectory,
}

fn default_agent() -> String {
    "editor".into()
}

/// What the site starts as.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Start {
    /// The demo site and its notes vault, as `quire seed` makes them.
    #[default]
    Demo,
}

/// A call made before the conversation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    #[serde(default = "empty_object")]
    pub args: Value,
}

/// A page of the task's web server.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebPage {
    /// Its path (`/article`).
    pub path: String,
    /// Its title (for search results).
    #[serde(default)]
    pub title: String,
    /// The body served.
    pub body: String,
    /// Its content type (default `text/html; charset=utf-8`).
    #[serde(default = "default_content_type")]
    pub content_type: String,
}

fn default_content_type() -> String {
    "text/html; charset=utf-8".into()
}

/// One message of the person.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// What they say.
    pub say: String,
}

/// The person's answer to the approvals of one tool (and, when given,
/// arguments that include `args`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalAnswer {
    /// The tool asked about.
    pub tool: String,
    /// Arguments the call must include (a JSON subset) for this answer.
    #[serde(default)]
    pub args: Option<Value>,
    /// Approve or reject.
    pub answer: Verdict,
    /// The reason given with a rejection.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A person's answer to an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Let the call run.
    Approve,
    /// Refuse it.
    Reject,
}

/// What must be true of the way there.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trajectory {
    /// Tools the agent must call (successfully); `a|b` accepts either.
    #[serde(default)]
    pub must_call: Vec<String>,
    /// Tools the agent must not call at all.
    #[serde(default)]
    pub must_not_call: Vec<String>,
    /// At most this many model steps in all turns together.
    #[serde(default)]
    pub max_steps: Option<u32>,
    /// The last answer contains each of these (case does not count).
    #[serde(default, deserialize_with = "one_or_many")]
    pub answer_contains: Vec<String>,
    /// The last answer contains none of these.
    #[serde(default, deserialize_with = "one_or_many")]
    pub answer_lacks: Vec<String>,
}

/// A task file that cannot be used, and why.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct TaskError {
    /// The file (as given).
    pub file: String,
    /// What is wrong, naming the place.
    pub message: String,
}

impl Task {
    /// Reads a task from its text; `name` is what it is called in reports.
    /// The tool names it uses are checked against `tools` (the catalog's).
    pub fn parse(name: &str, text: &str, tools: &[&str]) -> Result<Task, TaskError> {
        let fail = |message: String| TaskError { file: name.to_string(), message };
        let mut task: Task = toml::from_str(text).map_err(|e| fail(e.to_string().trim_end().to_string()))?;
        task.name = name.to_string();
        task.validate(tools).map_err(fail)?;
        Ok(task)
    }

    /// Reads the task file at `path` (named after its file stem).
    pub fn load(path: &FsPath, tools: &[&str]) -> Result<Task, TaskError> {
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let text = std::fs::read_to_string(path)
            .map_err(|e| TaskError { file: path.display().to_string(), message: e.to_string() })?;
        Task::parse(&name, &text, tools).map_err(|e| TaskError { file: path.display().to_string(), ..e })
    }

    /// The rules a file's content must follow beyond its shape.
    fn validate(&self, tools: &[&str]) -> Result<(), String> {
        let known = |name: &str, place: &str| {
            if tools.contains(&name) { Ok(()) } else { Err(format!("{place}: no tool named \"{name}\"")) }
        };
        if self.description.trim().is_empty() {
            return Err("description: required".into());
        }
        if self.agent.trim().is_empty() {
            return Err("agent: must name an agent".into());
        }
        if self.turns.is_empty() {
            return Err("turn: at least one [[turn]] with `say`".into());
        }
        for (i, turn) in self.turns.iter().enumerate() {
            if turn.say.trim().is_empty() {
                return Err(format!("turn[{i}].say: required"));
            }
        }
        for (i, setup) in self.setup.iter().enumerate() {
            known(&setup.tool, &format!("setup[{i}].tool"))?;
            if !setup.args.is_object() {
                return Err(format!("setup[{i}].args: must be a table"));
            }
        }
        for (i, page) in self.web.iter().enumerate() {
            if !page.path.starts_with('/') || page.path == "/search" {
                return Err(format!("web[{i}].path: must start with / (and /search is the search endpoint)"));
            }
        }
        for (i, answer) in self.approvals.iter().enumerate() {
            known(&answer.tool, &format!("approval[{i}].tool"))?;
        }
        if self.checks.is_empty() && self.trajectory.is_empty() {
            return Err("check: a task checks something: add a [[check]] or a [trajectory]".into());
        }
        for (i, check) in self.checks.iter().enumerate() {
            check.validate(&format!("check[{i}]"), &known)?;
        }
        for (i, check) in self.undone.iter().enumerate() {
            check.validate(&format!("undone[{i}]"), &known)?;
        }
        for (list, place) in
            [(&self.trajectory.must_call, "must_call"), (&self.trajectory.must_not_call, "must_not_call")]
        {
            for entry in list {
                for name in entry.split('|') {
                    known(name.trim(), &format!("trajectory.{place}"))?;
                }
            }
        }
        if self.trajectory.max_steps == Some(0) {
            return Err("trajectory.max_steps: at least 1".into());
        }
        Ok(())
    }

    /// The task with `{web}` replaced by the address of its web server in
    /// everything the person says, the setup and the checks.
    pub fn with_web(&self, base: &str) -> Task {
        let mut task = self.clone();
        let put = |s: &mut String| *s = s.replace("{web}", base);
        for turn in &mut task.turns {
            put(&mut turn.say);
        }
        for setup in &mut task.setup {
            replace_in(&mut setup.args, base);
        }
        for check in task.checks.iter_mut().chain(task.undone.iter_mut()) {
            replace_in(&mut check.args, base);
            for s in check.contains.iter_mut().chain(check.lacks.iter_mut()) {
                put(s);
            }
            if let Some(v) = &mut check.equals {
                replace_in(v, base);
            }
        }
        for page in &mut task.web {
            put(&mut page.body);
        }
        task
    }
}

impl Trajectory {
    /// Whether it asks for nothing.
    pub fn is_empty(&self) -> bool {
        self.must_call.is_empty()
            && self.must_not_call.is_empty()
            && self.max_steps.is_none()
            && self.answer_contains.is_empty()
            && self.answer_lacks.is_empty()
    }
}

/// Replaces `{web}` in every string of `value`.
fn replace_in(value: &mut Value, base: &str) {
    match value {
        Value::String(s) => *s = s.replace("{web}", base),
        Value::Array(items) => items.iter_mut().for_each(|v| replace_in(v, base)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_in(v, base)),
        _ => {}
    }
}

/// The task files of a suite: `dir`'s `*.toml` files (not in
/// subfolders), in name order.
pub fn task_files(dir: &FsPath) -> Result<Vec<PathBuf>, TaskError> {
    let fail = |e: std::io::Error| TaskError { file: dir.display().to_string(), message: e.to_string() };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(fail)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

/// Reads every task of the suite in `dir`; every file that cannot be used
/// is reported, not only the first.
pub fn load_suite(dir: &FsPath, tools: &[&str]) -> Result<Vec<Task>, Vec<TaskError>> {
    let files = task_files(dir).map_err(|e| vec![e])?;
    let (mut tasks, mut errors) = (Vec::new(), Vec::new());
    for file in files {
        match Task::load(&file, tools) {
            Ok(task) => tasks.push(task),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() { Ok(tasks) } else { Err(errors) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: &[&str] = &["getPage", "updatePage", "deletePage"];

    fn parse(text: &str) -> Result<Task, String> {
        Task::parse("t", text, TOOLS).map_err(|e| e.to_string())
    }

    const GOOD: &str = r#"
description = "Rename"
[[turn]]
say = "Rename pricing"
[[approval]]
tool = "deletePage"
answer = "reject"
[[check]]
tool = "getPage"
args = { slug = "pricing" }
path = "/items/0/name"
equals = "Plans"
[trajectory]
must_call = ["updatePage|getPage"]
max_steps = 3
"#;

    #[test]
    fn a_task_reads_with_its_defaults() {
        let task = parse(GOOD).unwrap();
        assert_eq!(task.name, "t");
        assert_eq!(task.agent, "editor");
        assert_eq!(task.start, Start::Demo);
        assert_eq!(task.turns.len(), 1);
        assert_eq!(task.approvals[0].answer, Verdict::Reject);
        assert_eq!(task.checks[0].args["slug"], "pricing");
        assert_eq!(task.trajectory.max_steps, Some(3));
    }

    #[test]
    fn mistakes_are_named() {
        let cases = [
            (GOOD.replace("max_steps", "max_step"), "unknown field `max_step`"),
            (GOOD.replace("tool = \"getPage\"", "tool = \"getPages\""), "check[0].tool: no tool named \"getPages\""),
            (GOOD.replace("updatePage|getPage", "updatePage|nope"), "trajectory.must_call: no tool named \"nope\""),
            (GOOD.replace("equals = \"Plans\"", ""), "check[0]: say what must hold"),
            (GOOD.replace("path = \"/items/0/name\"", "path = \"items\""), "check[0].path"),
            (GOOD.replace("answer = \"reject\"", "answer = \"maybe\""), "unknown variant `maybe`"),
            (GOOD.replace("say = \"Rename pricing\"", "say = \" \""), "turn[0].say: required"),
            (format!("{GOOD}[[undone]]\ntool = \"getPage\"\n"), "undone[0]: say what must hold"),
        ];
        for (text, expected) in cases {
            let error = parse(&text).unwrap_err();
            assert!(error.contains(expected), "expected {expected:?} in {error:?}");
        }
    }

    #[test]
    fn web_addresses_are_filled_in() {
        let text = GOOD.replace("Rename pricing", "Read {web}/a").replace("\"Plans\"", "\"{web}/b\"");
        let task = parse(&text).unwrap().with_web("http://127.0.0.1:9");
        assert_eq!(task.turns[0].say, "Read http://127.0.0.1:9/a");
        assert_eq!(task.checks[0].equals.as_ref().unwrap(), "http://127.0.0.1:9/b");
    }
}
