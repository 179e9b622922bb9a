//! `quire chat` as a user runs it, against a fake OpenAI-compatible server.

use quire_agent::testing::{Fake, openai_stream, serve};
use serde_json::json;
use std::process::{Command, Stdio};

mod support;
use support::{outcome, seeded};

/// The binary, its model the fake provider at `base`.
fn quire(base: &str) -> Command {
    let mut cmd = support::quire();
    cmd.env("QUIRE_LLM_PROVIDER", "openai")
        .env("QUIRE_LLM_BASE_URL", format!("{base}/v1"))
        .env("QUIRE_LLM_MODEL", "fake-model")
        .stdin(Stdio::null());
    cmd
}

async fn run(base: &str, args: &[&str]) -> (bool, String, String) {
    let mut cmd = quire(base);
    cmd.args(args);
    tokio::task::spawn_blocking(move || outcome(&mut cmd)).await.unwrap()
}

/// A fake provider, its address and a data directory with the demo site.
async fn seeded_with_model() -> (Fake, String, tempfile::TempDir) {
    let (fake, base) = serve().await;
    (fake, base, seeded())
}

#[tokio::test(flavor = "multi_thread")]
async fn one_message_streams_the_answer_and_exits() {
    let (fake, base) = serve().await;
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
    let (fake, base, dir) = seeded_with_model().await;
    let data = dir.path().to_str().unwrap();
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
    assert!(out.contains("Archived the contact page."), "{out}\n{err}\n{:#}", serde_json::json!(fake.requests()));
    let (ok, _, _) = run(&base, &["tools", "call", "getPage", "--args", r#"{"slug":"contact"}"#, "--data", data]).await;
    assert!(!ok, "the page is archived");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_provider_chat_says_how_to_configure_one() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let mut cmd = support::quire();
    cmd.args(["chat", "-m", "hello", "--data", data]).stdin(Stdio::null());
    let (ok, out, _) = tokio::task::spawn_blocking(move || outcome(&mut cmd)).await.unwrap();
    assert!(ok);
    assert!(out.contains("QUIRE_LLM_PROVIDER"), "{out}");
}

/// In a terminal (a pseudo-terminal from `script`), approvals are asked y/N
/// and the turn goes on at once.
#[tokio::test(flavor = "multi_thread")]
async fn in_a_terminal_approvals_are_asked_and_the_turn_continues() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: `script` (util-linux) is not installed");
        return;
    }
    let (fake, base, dir) = seeded_with_model().await;
    let data = dir.path().to_str().unwrap().to_string();
    let (_, out, _) =
        run(&base, &["tools", "call", "getPage", "--args", r#"{"slug":"pricing"}"#, "--data", &data]).await;
    let pricing =
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["items"][0]["id"].as_str().unwrap().to_string();
    let args = json!({ "ids": [pricing] }).to_string();
    fake.push(openai_stream("", &[("d1", "deletePage", &args)]));
    fake.push(openai_stream("Pricing is archived.", &[]));
    let bin = env!("CARGO_BIN_EXE_quire");
    let inner = format!("{bin} chat -m 'archive pricing' --data {data}");
    // The same environment as every other run here, around `script`.
    let template = quire(&base);
    let mut script = Command::new("script");
    script.args(["-qec", &inner, "/dev/null"]);
    for (k, v) in template.get_envs() {
        match v {
            Some(v) => script.env(k, v),
            None => script.env_remove(k),
        };
    }
    script.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let out = tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = script.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        stdin.write_all(b"y\n").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        drop(stdin);
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("Approve?"), "{text}");
    assert!(text.contains("Pricing is archived."), "{text}");
    let (ok, out, _) =
        run(&base, &["tools", "call", "getPage", "--args", r#"{"slug":"pricing"}"#, "--data", &data]).await;
    assert!(!ok && out.contains("NOT_FOUND"), "the page is archived: {out}");
}

/// `quire undo SESSION TURN` takes back what an agent's turn changed, through
/// the same use case as REST and the back-office.
#[tokio::test(flavor = "multi_thread")]
async fn an_agents_turn_is_undone_from_the_command_line() {
    let (fake, base, dir) = seeded_with_model().await;
    let data = dir.path().to_str().unwrap();
    fake.push(openai_stream("", &[("c1", "createPage", r#"{"name":"Launch","slug":"launch"}"#)]));
    fake.push(openai_stream("Made the launch page.", &[]));
    let (ok, _, err) = run(&base, &["chat", "-m", "make a launch page", "--data", data]).await;
    assert!(ok, "{err}");
    let session = err
        .lines()
        .find_map(|l| l.split("session: ").nth(1))
        .map(|s| s.split_whitespace().next().unwrap().to_string())
        .unwrap_or_else(|| panic!("{err}"));
    let (ok, _, _) = run(&base, &["tools", "call", "getPage", "--args", r#"{"slug":"launch"}"#, "--data", data]).await;
    assert!(ok, "the turn made the page");
    let (ok, out, err) = run(&base, &["undo", &session, "1", "--data", data]).await;
    assert!(ok, "{err}");
    let undone: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(undone["reverted"].as_array().unwrap().len(), 1, "{out}");
    let (ok, _, _) = run(&base, &["tools", "call", "getPage", "--args", r#"{"slug":"launch"}"#, "--data", data]).await;
    assert!(!ok, "the page it made is archived");
    // undone already: refused with the reason, and a failure
    let (ok, _, err) = run(&base, &["undo", &session, "1", "--data", data]).await;
    assert!(!ok && err.contains("was archived since"), "{err}");
    let (ok, _, err) = run(&base, &["undo", &session, "7", "--data", data]).await;
    assert!(!ok && err.contains("has no turn 7"), "{err}");
}
