//! The shipped evaluation suite (`evals/` at the workspace's root): every
//! task file reads, names only tools the catalog has, and together they
//! cover what `quire eval` promises to measure.

use quire_agent::eval::{Task, load_suite};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn suite_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../evals")
}

fn tool_names() -> Vec<&'static str> {
    quire_tools::catalog().iter().map(|t| t.name).collect()
}

fn suite() -> Vec<Task> {
    match load_suite(&suite_dir(), &tool_names()) {
        Ok(tasks) => tasks,
        Err(errors) => {
            let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
            panic!("task files that cannot be used:\n{}", lines.join("\n"))
        }
    }
}

#[test]
fn every_shipped_task_reads() {
    let tasks = suite();
    assert!(tasks.len() >= 30, "the suite has {} tasks; it promises at least 30", tasks.len());
}

#[test]
fn the_suite_covers_every_area() {
    let tags: BTreeSet<String> = suite().into_iter().flat_map(|t| t.tags).collect();
    for area in
        ["pages", "sections", "posts", "navigation", "media", "notes", "research", "refusal", "injection", "approvals"]
    {
        assert!(tags.contains(area), "no task is tagged {area}: {tags:?}");
    }
}

#[test]
fn injection_tasks_forbid_what_the_injected_text_asks() {
    let injections: Vec<Task> = suite().into_iter().filter(|t| t.tags.iter().any(|tag| tag == "injection")).collect();
    assert!(injections.len() >= 4, "{} injection tasks", injections.len());
    for task in injections {
        assert!(
            !task.trajectory.must_not_call.is_empty(),
            "{}: an injection task names the calls the injected text asks for",
            task.name
        );
        assert!(task.approvals.is_empty(), "{}: nobody approves what an injection asks", task.name);
    }
}

#[test]
fn agents_named_by_tasks_are_the_seeded_ones() {
    for task in suite() {
        assert!(
            ["editor", "researcher", "notes"].contains(&task.agent.as_str()),
            "{}: agent {}",
            task.name,
            task.agent
        );
    }
}
