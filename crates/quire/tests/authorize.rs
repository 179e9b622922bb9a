//! Every CLI command that acts for someone is decided by
//! `quire_core::access::authorize`, generated from the binary's own help:
//! each command is either the machine operator's (it works on the data
//! directory itself: serve, migrate, seed, users…) or is run here, with a
//! viewer's token where it takes one, and must log a decision of
//! `authorize` (`quire::authorize` events, read from the JSON log); a
//! refusal it prints must be one `authorize` gave.

mod support;
use support::*;

use serde_json::Value;
use std::io::Write;
use std::process::Stdio;

/// Commands of the machine's operator: they open the data directory with
/// the file system's authority and act for no one inside a site.
const OPERATOR: &[&str] = &[
    "serve",
    "migrate",
    "seed",
    "export",
    "import",
    "user create",
    "user list",
    "user disable",
    "user enable",
    "user link",
    "tools list",
    "tools show",
    // Runs its tasks on scratch data directories of its own, each a fresh
    // demo site; the operator's data directory is not opened.
    "eval",
];

/// The commands (`token create`) listed under "Commands:" in `help`.
fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// Every leaf command of the binary, as words.
fn leaves() -> Vec<String> {
    let (_, top, _) = run(&["--help"]);
    let mut out = Vec::new();
    for command in commands(&top) {
        let (_, help, _) = run(&[&command, "--help"]);
        let subcommands = commands(&help);
        if subcommands.is_empty() {
            out.push(command);
        } else {
            out.extend(subcommands.into_iter().map(|s| format!("{command} {s}")));
        }
    }
    out
}

/// The decisions a run logged, and its refusal message if it printed one.
fn decisions(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["target"] == quire_core::access::DECISIONS)
        .map(|v| v["fields"].clone())
        .collect()
}

#[test]
fn every_command_that_acts_for_someone_is_decided_by_authorize() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    let (ok, viewer, err) = run(&["token", "create", "--group", "viewer", "--data", data]);
    assert!(ok, "{err}");
    let viewer = viewer.trim().to_string();
    let image = dir.path().join("probe.png");
    std::fs::write(&image, b"not really a picture").unwrap();
    let image = image.to_str().unwrap().to_string();
    let mcp_input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ]
    .map(|line| format!("{line}\n"))
    .concat();
    let v = viewer.as_str();
    // What each acting command is run with (and what it reads on stdin).
    let acting: Vec<(&str, Vec<&str>, &str)> = vec![
        ("token create", vec!["token", "create", "--group", "viewer"], ""),
        ("token list", vec!["token", "list"], ""),
        ("token revoke", vec!["token", "revoke", "no-such-token"], ""),
        ("site list", vec!["site", "list"], ""),
        ("site create", vec!["site", "create", "probe", "--name", "Probe"], ""),
        ("site rename", vec!["site", "rename", "probe", "Probe two"], ""),
        ("site archive", vec!["site", "archive", "no-such-site"], ""),
        ("site restore", vec!["site", "restore", "no-such-site"], ""),
        ("env list", vec!["env", "list"], ""),
        ("env create", vec!["env", "create", "probe", "--from", "production"], ""),
        ("env rename", vec!["env", "rename", "probe", "Probe two"], ""),
        ("env lock", vec!["env", "lock", "probe"], ""),
        ("env unlock", vec!["env", "unlock", "probe"], ""),
        ("env compare", vec!["env", "compare", "probe", "production"], ""),
        ("env promote", vec!["env", "promote", "probe", "production"], ""),
        ("env undo", vec!["env", "undo", "no-such-promotion"], ""),
        ("env archive", vec!["env", "archive", "no-such-env"], ""),
        ("env restore", vec!["env", "restore", "no-such-env"], ""),
        ("tools call", vec!["tools", "call", "deletePage", "--args", r#"{"ids":["x"]}"#, "--token", v], ""),
        ("images upload", vec!["images", "upload", &image, "--no-wait", "--token", v], ""),
        ("mcp", vec!["mcp", "--token", v], &mcp_input),
        ("chat", vec!["chat", "-m", "hello", "--token", v], ""),
        ("undo", vec!["undo", "no-such-session", "1", "--token", v], ""),
        ("restore", vec!["restore", "1", "--token", v], ""),
        ("approvals list", vec!["approvals", "list", "--token", v], ""),
        ("approvals approve", vec!["approvals", "approve", "cf_none", "--token", v], ""),
        ("approvals reject", vec!["approvals", "reject", "cf_none", "--token", v], ""),
    ];

    let leaves = leaves();
    assert!(leaves.len() >= 20, "the help lists the commands: {leaves:?}");
    let mut problems = Vec::new();
    for leaf in &leaves {
        if OPERATOR.contains(&leaf.as_str()) {
            continue;
        }
        let Some((_, args, input)) = acting.iter().find(|(name, _, _)| name == leaf) else {
            problems.push(format!("{leaf}: neither the operator's nor run here; add it to one of the two"));
            continue;
        };
        let mut child = quire()
            .args(args)
            .args(["--data", data])
            .env("QUIRE_LOG", "warn,quire::authorize=debug")
            .env("QUIRE_LOG_FORMAT", "json")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let seen = decisions(&stderr);
        if seen.is_empty() {
            problems.push(format!("{leaf}: no decision of authorize; stderr: {stderr}"));
            continue;
        }
        // A refusal the command printed is one authorize gave.
        let refusal = stderr.lines().find(|l| l.contains(" may not ") && !l.starts_with('{'));
        if let Some(refusal) = refusal
            && !seen.iter().any(|d| d["allowed"] == false && refusal.contains(d["refused"].as_str().unwrap_or("?")))
        {
            problems.push(format!("{leaf}: refused \"{refusal}\", which is no refusal of authorize: {seen:?}"));
        }
        if leaf == "tools call" {
            assert!(
                seen.iter().any(|d| d["permission"] == "use tool deletePage" && d["allowed"] == false),
                "a viewer may not delete: {seen:?}"
            );
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}
