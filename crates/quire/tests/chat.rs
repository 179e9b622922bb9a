//! `quire chat` as a user runs it, against a fake OpenAI-compatible server.

use quire_agent::testing::{Fake, openai_stream, serve};
use serde_json::json;
use std::process::{Command, Stdio};

fn quire(base: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_quire"));
    cmd.env_remove("QUIRE_BOOTSTRAP_TOKEN")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env("QUIRE_LOG", "warn")
        .env("QUIRE_LLM_PROVIDER", "openai")
        .env("QUIRE_LLM_BASE_URL", format!("{base}/v1"))
        .env("QUIRE_LLM_MODEL", "fake-model")
        .stdin(Stdio::null());
    cmd
}

async fn run(base: &str, args: &[&str]) -> (bool, String, String) {
    let mut cmd = quire(base);
    cmd.args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[tokio::test(flavor = "multi_thread")]
async fn one_message_streams_the_answer_and_exits() {
    let fake = Fake::default();
    let base = serve(fake.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    fake.push(openai_stream("", &[("c1", "getPage", r#"{"slug":"about"}"#)]));
    fake.push(openai_stream("The about page is a draft.", &[]));
    let (ok, out, err) = run(&base, &["chat", "-m", "is about published?", "--data", data]).await;
    assert!(ok, "{err}");
    assert!(out.contains("The about page is a draft."), "{out}");
    assert!(err.contains("· getPage"), "{err}");
    assert!(err.contains("session: "), "{err}");
    assert_eq!(fake.requests().len(), 2);
    assert_eq!(fake.requests()[0]["model"], "fake-model");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_terminal_approvals_stay_pending_and_the_cli_answers_them() {
    let fake = Fake::default();
    let base = serve(fake.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    run(&base, &["seed", "--data", data]).await;
    let (ok, out, _) =
        run(&base, &["tools", "call", "getPage", "--args", r#"{"slug":"contact"}"#, "--data", data]).await;
    assert!(ok);
    let contact =
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["items"][0]["id"].as_str().unwrap().to_string();
    let args = json!({ "ids": [contact] }).to_string();
    fake.push(openai_stream("", &[("d1", "deletePage", &args)]));
    let (ok, out, err) = run(&base, &["chat", "-m", "delete contact", "--data", data]).await;
    assert!(ok, "exit 0 while waiting: {err}");
    let line = out.lines().find(|l| l.starts_with("approval pending: ")).unwrap_or_else(|| panic!("{out}"));
    let id = line.trim_start_matches("approval pending: ").split_whitespace().next().unwrap().to_string();
    assert!(line.contains("deletePage"), "{line}");
    let (_, listed, _) = run(&base, &["approvals", "list", "--data", data]).await;
    assert!(listed.contains(&id), "{listed}");
    // the answer continues the turn in the answering process
    fake.push(openai_stream("Archived the contact page.", &[]));
    let (ok, out, err) = run(&base, &["approvals", "approve", &id, "--data", data]).await;
    assert!(ok, "{err}");
    assert!(out.contains("Archived the contact page."), "{out}");
    let (ok, _, _) = run(&base, &["tools", "call", "getPage", "--args", r#"{"slug":"contact"}"#, "--data", data]).await;
    assert!(!ok, "the page is archived");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_provider_chat_says_how_to_configure_one() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_quire"));
    cmd.args(["chat", "-m", "hello", "--data", data])
        .env_remove("QUIRE_LLM_PROVIDER")
        .env_remove("QUIRE_LLM_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env("QUIRE_LOG", "warn")
        .stdin(Stdio::null());
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("QUIRE_LLM_PROVIDER"));
}
