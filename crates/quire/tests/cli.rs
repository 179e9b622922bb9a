//! The binary, run as a user runs it.

mod support;
use support::*;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn seed_is_idempotent_and_migrate_reports() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let (ok, out, err) = run(&["seed", "--data", data]);
    assert!(ok, "{err}");
    let first: usize = out.split_whitespace().find_map(|w| w.parse().ok()).unwrap();
    assert!(first > 50, "{out}");
    let (ok, out, _) = run(&["seed", "--data", data]);
    assert!(ok);
    assert!(out.contains("0 records created"), "{out}");
    // Each site's files are in a folder of its own.
    let sites: Vec<_> = std::fs::read_dir(dir.path().join("uploads")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(sites.len(), 1, "{sites:?}");
    assert!(sites[0].join("hero-dawn.png").exists());
    let (ok, out, _) = run(&["migrate", "--data", data]);
    assert!(ok);
    let migrations =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../migrations/sqlite")).unwrap().count();
    assert!(out.contains(&format!("is at migration {migrations}")), "{out}");
}

#[test]
fn token_create_prints_the_token_alone() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    let (ok, out, err) = run(&["token", "create", "--group", "editor", "--site", "demo", "--data", data]);
    assert!(ok, "{err}");
    let line = out.trim_end_matches('\n');
    assert!(!line.contains('\n'), "{out:?}");
    assert!(line.starts_with("qk_") && line.len() == 67, "{line}");

    let (ok, _, err) = run(&["token", "create", "--group", "owner", "--data", data]);
    assert!(!ok);
    assert!(err.contains("group \"owner\" is not one of viewer, author, editor, admin"), "{err}");
    let (ok, _, err) = run(&["token", "create", "--group", "admin", "--site", "nowhere", "--data", data]);
    assert!(!ok);
    assert!(err.contains("site nowhere not found"), "{err}");
}

fn http_get(addr: &str, path: &str, token: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default().to_string();
    (status, body)
}

#[test]
fn serve_seeds_prints_an_admin_token_once_and_answers_http() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let server = start(data, None);
    let token = server.stdout.split_whitespace().find(|w| w.starts_with("qk_")).map(str::to_string);
    let token = token.unwrap_or_else(|| panic!("no admin token printed: {:?}", server.stdout));
    let (status, body) = http_get(&server.addr, "/api/v1/me", Some(&token));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"group\":\"admin\""), "{body}");
    assert_eq!(http_get(&server.addr, "/api/v1/pages", None).0, 401);
    let (status, body) = http_get(&server.addr, "/api/v1/delivery/pages/about", None);
    assert_eq!(status, 200);
    assert!(body.contains("\"path\":\"/about\""), "{body}");
    drop(server);

    // second start: no new token printed
    let again = start(data, None);
    assert!(!again.stdout.contains("qk_"), "{}", again.stdout);
}

#[test]
fn bootstrap_token_becomes_the_admin_token() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let secret = "automation-secret-0123456789";
    let server = start(data, Some(secret));
    assert!(!server.stdout.contains("qk_"));
    let (status, body) = http_get(&server.addr, "/api/v1/me", Some(secret));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"group\":\"admin\""));
}

#[test]
fn tools_list_show_and_call() {
    let (ok, out, _) = run(&["tools", "list", "--json"]);
    assert!(ok);
    let list: serde_json::Value = serde_json::from_str(&out).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 68);
    for t in list {
        let keys: Vec<&str> = t.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["name", "description", "category", "risk", "destructive"]);
    }
    let (ok, out, _) = run(&["tools", "show", "updateSection"]);
    assert!(ok);
    let show: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(show["inputSchema"]["properties"]["imageField"].is_object());
    let (ok, _, err) = run(&["tools", "show", "nope"]);
    assert!(!ok && err.contains("no tool named \"nope\""));

    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    let (ok, out, err) =
        run(&["tools", "call", "getPage", "--args", r#"{"slug":"about","includeChildren":true}"#, "--data", data]);
    assert!(ok, "{err}");
    let page: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(page["items"][0]["children"][0]["slug"], "team");

    let (ok, out, _) = run(&["tools", "call", "getPage", "--args", r#"{"slug":"nope"}"#, "--data", data]);
    assert!(!ok, "a failed tool exits non-zero");
    assert!(out.contains("NOT_FOUND"));
    let (ok, _, err) = run(&["tools", "call", "getPage", "--args", "{oops", "--data", data]);
    assert!(!ok && err.contains("--args is not valid JSON"));

    let (_, viewer, _) = run(&["token", "create", "--group", "viewer", "--data", data]);
    let (ok, out, _) = run(&[
        "tools",
        "call",
        "createPage",
        "--args",
        r#"{"name":"X","slug":"x"}"#,
        "--token",
        viewer.trim(),
        "--data",
        data,
    ]);
    assert!(!ok);
    assert!(out.contains("group viewer may not use createPage"), "{out}");
}

/// Previews archiving the demo's draft post from the CLI; answers the confirmationId.
fn preview_post_archive(data: &str) -> String {
    let (_, out, _) = run(&["tools", "call", "deletePost", "--args", r#"{"slugs":["roadmap-draft"]}"#, "--data", data]);
    let preview: serde_json::Value = serde_json::from_str(&out).unwrap();
    preview["confirmationId"].as_str().unwrap().to_string()
}

#[test]
fn destructive_call_approved_from_the_cli() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    let id = preview_post_archive(data);
    let (ok, out, _) = run(&["approvals", "list", "--data", data]);
    assert!(ok && out.contains(&id));
    let (ok, out, err) = run(&["approvals", "approve", &id, "--data", data]);
    assert!(ok, "{err}");
    assert!(out.contains("\"status\": \"approved\""));
    let args = format!(r#"{{"slugs":["roadmap-draft"],"confirmationId":"{id}"}}"#);
    let (ok, out, _) = run(&["tools", "call", "deletePost", "--args", &args, "--data", data]);
    assert!(ok, "{out}");
    assert!(out.contains("Archived 1 post(s)"));
}

#[test]
fn a_revision_and_an_archive_are_restored_from_the_command_line() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    let call = |tool: &str, args: &str| {
        let (ok, out, err) = run(&["tools", "call", tool, "--args", args, "--data", data]);
        assert!(ok, "{tool}: {out}{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let about = call("getPage", r#"{"slug":"about"}"#)["items"][0]["id"].as_str().unwrap().to_string();
    call("updatePage", &format!(r#"{{"id":"{about}","name":"About us"}}"#));
    call("updatePage", &format!(r#"{{"id":"{about}","name":"Who we are"}}"#));
    // the change that named it "About us", from the change log
    let (_, out, _) = run(&["tools", "call", "getPage", "--args", r#"{"slug":"about"}"#, "--data", data]);
    assert!(out.contains("Who we are"));
    let db = quire_store_changes(data, &about);
    let first =
        db.iter().find(|c| c.1.contains(r#""name":"About us""#)).map(|c| c.0).expect("the first rename is logged");
    let (ok, out, err) = run(&["restore", &first.to_string(), "--data", data]);
    assert!(ok, "{err}");
    assert!(out.contains("\"action\": \"revert\""), "{out}");
    assert_eq!(call("getPage", r#"{"slug":"about"}"#)["items"][0]["name"], "About us");

    // an archive by its id
    let contact = call("getPage", r#"{"slug":"contact"}"#)["items"][0]["id"].as_str().unwrap().to_string();
    let preview = call("deletePage", &format!(r#"{{"ids":["{contact}"]}}"#));
    let id = preview["confirmationId"].as_str().unwrap();
    run(&["approvals", "approve", id, "--data", data]);
    let archived = call("deletePage", &format!(r#"{{"ids":["{contact}"],"confirmationId":"{id}"}}"#));
    let archive = archived["items"][0]["id"].as_str().unwrap().to_string();
    let (ok, out, err) = run(&["restore", &archive, "--data", data]);
    assert!(ok, "{err}");
    assert!(out.contains("\"restoredBy\": \"local:admin\""), "{out}");
    assert_eq!(call("getPage", r#"{"slug":"contact"}"#)["items"][0]["id"], serde_json::json!(contact));
    // a viewer may not
    let (_, viewer, _) = run(&["token", "create", "--group", "viewer", "--data", data]);
    let (ok, _, err) = run(&["restore", &first.to_string(), "--token", viewer.trim(), "--data", data]);
    assert!(!ok && err.contains("group viewer may not restore revisions"), "{err}");
    let (ok, _, err) = run(&["restore", "no-such-archive", "--data", data]);
    assert!(!ok && err.contains("no-such-archive"), "{err}");
}

/// The change log of one record, oldest first: (id, what it left).
fn quire_store_changes(data: &str, id: &str) -> Vec<(i64, String)> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let store = quire_store::Store::open(&std::path::Path::new(data).join("quire.db")).await.unwrap();
        let scope = store.scope_of("demo", "production").await.unwrap();
        let filter = quire_store::ChangeFilter { entity_id: Some(id.to_string()), ..Default::default() };
        let mut items = store.changes(&scope, &filter, 100, None).await.unwrap().items;
        items.reverse();
        let out = items.into_iter().map(|c| (c.id, serde_json::to_string(&c.after).unwrap())).collect();
        store.close().await;
        out
    })
}

#[test]
fn unrelated_quire_variables_do_not_break_the_configuration() {
    let out = quire().args(["tools", "list", "--json"]).env("QUIRE_BIN", "x").env("QUIRE_TOKEN", "y").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bad = quire().args(["tools", "list"]).env("QUIRE_WORKERS", "many").output().unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("configuration"));
}

#[test]
fn the_sqlite_sync_setting_is_read_from_the_environment_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let migrate =
        |value: &str| quire().args(["migrate", "--data", data]).env("QUIRE_SQLITE_SYNCHRONOUS", value).output();
    let normal = migrate("normal").unwrap();
    assert!(normal.status.success(), "{}", String::from_utf8_lossy(&normal.stderr));
    let bad = migrate("sometimes").unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("configuration: sqlite_synchronous: \"sometimes\" is not one of full, normal"), "{err}");
}

#[test]
fn a_site_vault_can_be_an_existing_folder() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let notes = dir.path().join("My Obsidian Vault");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(notes.join("existing.md"), "# Already here\n").unwrap();
    let config = dir.path().join("quire.toml");
    std::fs::write(&config, format!("[vaults]\ndemo = {:?}\n", notes.to_str().unwrap())).unwrap();
    let cfg = config.to_str().unwrap();
    let data = data.to_str().unwrap();
    let (ok, _, err) = run(&["seed", "--data", data, "--config", cfg]);
    assert!(ok, "{err}");
    // an existing vault is not seeded over
    assert!(!notes.join("Welcome.md").exists());
    let (ok, out, err) =
        run(&["tools", "call", "searchNotes", "--args", r#"{"query":"already"}"#, "--data", data, "--config", cfg]);
    assert!(ok, "{err}");
    assert!(out.contains("existing.md"), "{out}");
    let args = r#"{"path":"inbox/from-quire.md","content":"written by quire"}"#;
    let (ok, _, err) = run(&["tools", "call", "writeNote", "--args", args, "--data", data, "--config", cfg]);
    assert!(ok, "{err}");
    assert_eq!(std::fs::read_to_string(notes.join("inbox/from-quire.md")).unwrap(), "written by quire");
    // without the setting, the demo vault lives under the data folder, seeded
    let other = dir.path().join("other");
    let other = other.to_str().unwrap();
    let (ok, _, _) = run(&["seed", "--data", other]);
    assert!(ok);
    assert!(std::path::Path::new(other).join("vaults/demo/Welcome.md").exists());
}

/// Runs `quire args` with its stdout a pipe whose reader is already gone,
/// as when `head -1` has read its line and exited.
fn run_into_closed_pipe(args: &[&str]) -> (std::process::ExitStatus, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = quire().args(args).stdout(writer).stderr(Stdio::piped()).output().unwrap();
    (out.status, String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn a_closed_stdout_ends_quietly_without_a_panic() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    for args in [
        &["tools", "list"][..],
        &["tools", "list", "--json"],
        &["tools", "show", "getPage"],
        &["token", "list", "--data", data],
        &["tools", "call", "getPage", "--args", r#"{"slug":"home"}"#, "--data", data],
    ] {
        let (status, err) = run_into_closed_pipe(args);
        assert!(status.success(), "{args:?}: {status:?} {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
    // Through a real shell pipe too.
    let bin = env!("CARGO_BIN_EXE_quire");
    let out = Command::new("sh")
        .args(["-c", &format!("'{bin}' tools list | head -1; echo \"status=${{PIPESTATUS:-}}\"")])
        .env("QUIRE_LOG", "warn")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("searchTools "), "{stdout}");
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn commands_do_not_create_a_data_directory_and_name_the_one_they_looked_for() {
    let cwd = tempfile::tempdir().unwrap();
    let expected = cwd.path().canonicalize().unwrap().join("quire-data");
    let commands: [&[&str]; 7] = [
        &["token", "list"],
        &["token", "create", "--group", "editor"],
        &["token", "revoke", "some-id"],
        &["tools", "call", "getPage", "--args", r#"{"slug":"home"}"#],
        &["approvals", "list"],
        &["mcp"],
        &["chat", "-m", "hello"],
    ];
    for args in commands {
        let out = quire().args(args).current_dir(cwd.path()).stdin(Stdio::null()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(err.contains(&format!("no data directory at {}", expected.display())), "{args:?}: {err}");
        assert!(err.contains("quire serve --data") && err.contains("quire seed --data"), "{err}");
        assert!(!err.contains("site demo not found"), "{err}");
        assert!(!expected.exists(), "{args:?} created {}", expected.display());
    }
    // A relative --data is reported as the absolute path it means.
    let out = quire().args(["token", "list", "--data", "elsewhere"]).current_dir(cwd.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "no data directory at {}",
            cwd.path().canonicalize().unwrap().join("elsewhere").display()
        )),
        "{err}"
    );
    // So is QUIRE_DATA.
    let out = quire().args(["token", "list"]).env("QUIRE_DATA", "/nonexistent/quire").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no data directory at /nonexistent/quire"));
    // An existing folder without a database is not a data directory either
    // (mcp and chat alone start a fresh database in a folder they are given).
    let empty = cwd.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let (ok, _, err) = run(&["token", "list", "--data", empty.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("no Quire database (quire.db) in the data directory"), "{err}");
    assert!(!empty.join("quire.db").exists());
    // serve, migrate and seed create it.
    let (ok, _, err) = run(&["migrate", "--data", cwd.path().join("made").to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(cwd.path().join("made/quire.db").exists());
}

#[test]
fn data_is_accepted_by_every_command_even_before_the_subcommand() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    let (ok, out, err) = run(&["tools", "list", "--data", data]);
    assert!(ok, "{err}");
    assert!(out.starts_with("searchTools"), "{out}");
    let (ok, out, err) = run(&["tools", "show", "getPage", "--data", data]);
    assert!(ok, "{err}");
    assert!(out.contains("\"name\": \"getPage\""));
    let (ok, _, err) = run(&["--data", data, "tools", "call", "getPage", "--args", r#"{"slug":"home"}"#]);
    assert!(ok, "{err}");
    let (ok, _, err) = run(&["approvals", "--data", data, "list"]);
    assert!(ok, "{err}");
}

#[test]
fn tokens_are_listed_without_secrets_and_revoked_within_their_site() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    let (_, secret, _) = run(&["token", "create", "--group", "editor", "--name", "laptop", "--data", data]);
    let secret = secret.trim().to_string();
    let (_, other, _) = run(&["token", "create", "--group", "viewer", "--env", "staging", "--data", data]);
    let (ok, out, err) = run(&["token", "list", "--json", "--data", data]);
    assert!(ok, "{err}");
    let list: serde_json::Value = serde_json::from_str(&out).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert!(!out.contains(&secret) && !out.contains(other.trim()), "no secret in a list");
    let laptop = list.iter().find(|t| t["name"] == "laptop").unwrap();
    assert_eq!(laptop["prefix"], &secret[..7]);
    assert!(laptop["lastUsedAt"].is_null());
    let id = laptop["id"].as_str().unwrap().to_string();

    // Using it records its use.
    let (ok, _, err) =
        run(&["tools", "call", "getPage", "--args", r#"{"slug":"home"}"#, "--token", &secret, "--data", data]);
    assert!(ok, "{err}");
    let (_, table, _) = run(&["token", "list", "--data", data]);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("ID") && lines[0].contains("LAST USED"), "{table}");
    let row = lines.iter().find(|l| l.starts_with(&id)).unwrap();
    assert!(row.contains("laptop") && row.contains("editor") && row.contains(" all "), "{row}");
    assert!(!row.ends_with("never"), "last use recorded: {row}");
    let staging = lines.iter().find(|l| l.contains("viewer")).unwrap();
    assert!(staging.contains("staging") && staging.ends_with("never"), "{staging}");

    // Another site cannot revoke it.
    run(&["tools", "call", "getPage", "--data", data]); // keeps the database warm
    let (ok, _, err) = run(&["token", "revoke", &id, "--site", "nowhere", "--data", data]);
    assert!(!ok && err.contains("site nowhere not found"), "{err}");

    let (ok, out, err) = run(&["token", "revoke", &id, "--data", data]);
    assert!(ok, "{err}");
    assert!(out.contains(&format!("revoked token {id} (laptop, editor)")), "{out}");
    let (ok, _, err) = run(&["token", "revoke", &id, "--data", data]);
    assert!(!ok && err.contains(&format!("token {id} not found")), "{err}");
    let (ok, _, err) = run(&["tools", "call", "getPage", "--args", "{}", "--token", &secret, "--data", data]);
    assert!(!ok && err.contains("the token is not valid"), "{err}");
    let (_, out, _) = run(&["token", "list", "--json", "--data", data]);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&out).unwrap().as_array().unwrap().len(), 1);
}

#[test]
fn a_token_that_would_be_born_expired_is_refused() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    for days in ["--expires-in-days=0", "--expires-in-days=-1"] {
        let (ok, out, err) = run(&["token", "create", "--group", "editor", days, "--data", data]);
        assert!(!ok);
        assert!(out.is_empty(), "{out}");
        assert!(err.contains("--expires-in-days: must be at least 1 day"), "{err}");
    }
    let (ok, out, err) = run(&["token", "create", "--group", "editor", "--expires-in-days", "1", "--data", data]);
    assert!(ok, "{err}");
    assert!(out.starts_with("qk_"));
    let (_, out, _) = run(&["token", "list", "--json", "--data", data]);
    let list: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "only the valid one was created");
    assert!(list[0]["expiresAt"].is_string());
}

#[test]
fn a_revocation_on_the_command_line_reaches_a_running_server_within_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let server = start(data, Some("automation-secret-0123456789"));
    let (ok, secret, err) = run(&["token", "create", "--group", "viewer", "--data", data]);
    assert!(ok, "{err}");
    let secret = secret.trim();
    assert_eq!(http_get(&server.addr, "/api/v1/me", Some(secret)).0, 200);
    let (_, out, _) = run(&["token", "list", "--json", "--data", data]);
    let list: serde_json::Value = serde_json::from_str(&out).unwrap();
    let id =
        list.as_array().unwrap().iter().find(|t| t["group"] == "viewer").unwrap()["id"].as_str().unwrap().to_string();
    let (ok, _, err) = run(&["token", "revoke", &id, "--data", data]);
    assert!(ok, "{err}");
    let revoked = Instant::now();
    let mut status = 200;
    while revoked.elapsed() < Duration::from_secs(4) && status != 401 {
        std::thread::sleep(Duration::from_millis(100));
        status = http_get(&server.addr, "/api/v1/me", Some(secret)).0;
    }
    assert_eq!(status, 401, "still accepted {:?} after the revocation", revoked.elapsed());
    assert!(revoked.elapsed() < Duration::from_secs(3), "took {:?}", revoked.elapsed());
    // The admin token still works.
    assert_eq!(http_get(&server.addr, "/api/v1/me", Some("automation-secret-0123456789")).0, 200);
}

#[test]
fn a_bad_model_configuration_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let (ok, _, err) =
        outcome(quire().args(["serve", "--data", data, "--addr", "127.0.0.1:0"]).env("QUIRE_LLM_PROVIDER", "llama"));
    assert!(!ok);
    assert!(err.contains("QUIRE_LLM_PROVIDER: \"llama\" is not one of openai, anthropic"), "{err}");
    assert!(!std::path::Path::new(data).exists(), "nothing was created");

    let (ok, _, err) = outcome(
        quire()
            .args(["serve", "--data", data, "--addr", "127.0.0.1:0"])
            .env("QUIRE_LLM_PROVIDER", "openai")
            .env("OPENAI_API_KEY", "sk-test"),
    );
    assert!(!ok);
    assert!(err.contains("QUIRE_LLM_MODEL is not set: QUIRE_LLM_PROVIDER selects the openai provider"), "{err}");

    run(&["seed", "--data", data]);
    let (ok, _, err) = outcome(
        quire()
            .args(["chat", "-m", "hi", "--data", data])
            .env("QUIRE_LLM_BASE_URL", "http://127.0.0.1:9/v1")
            .stdin(Stdio::null()),
    );
    assert!(!ok);
    assert!(err.contains("QUIRE_LLM_MODEL is not set: QUIRE_LLM_BASE_URL selects the openai provider"), "{err}");
    assert!(!err.contains("could not reach"), "the provider was not called: {err}");

    let config = dir.path().join("quire.toml");
    std::fs::write(&config, "[profiles.default]\nprovider = \"anthropic\"\n").unwrap();
    let (ok, _, err) = outcome(
        quire().args(["chat", "-m", "hi", "--data", data, "--config", config.to_str().unwrap()]).stdin(Stdio::null()),
    );
    assert!(!ok);
    assert!(err.contains("model profile \"default\" names no model"), "{err}");
}

#[test]
fn logs_carry_no_colours_off_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let out = quire().args(["seed", "--data", data]).env("QUIRE_LOG", "debug").output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("DEBUG"), "some logs were written: {err}");
    assert!(!err.contains('\u{1b}'), "no escape codes: {err}");
    // A closed stderr loses the logs, not the command.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out =
        quire().args(["token", "list", "--data", data]).env("QUIRE_LOG", "debug").stderr(writer).output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
}

#[test]
fn approvals_reject_needs_no_reason() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    let id = preview_post_archive(data);
    let (ok, out, err) = run(&["approvals", "reject", &id, "--data", data]);
    assert!(ok, "{err}");
    let answered: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answered["status"], "rejected");
    let (_, out, _) = run(&["approvals", "list", "--data", data]);
    assert!(!out.contains(&id), "{out}");
}

/// A stdio MCP client: `quire mcp` with `args`, initialised.
struct McpClient {
    child: Child,
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl McpClient {
    fn start(args: &[&str]) -> Self {
        let mut child = quire()
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut client = McpClient { child, stdin, lines };
        client.request(
            1,
            "initialize",
            serde_json::json!({
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "cli-test", "version": "0" }
            }),
        );
        writeln!(client.stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
        client
    }

    fn request(&mut self, id: u64, method: &str, params: serde_json::Value) -> serde_json::Value {
        let msg = serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        writeln!(self.stdin, "{msg}").unwrap();
        loop {
            let line = self.lines.next().expect("quire mcp answered").unwrap();
            let reply: serde_json::Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == id {
                return reply;
            }
        }
    }

    fn call(&mut self, id: u64, tool: &str, args: serde_json::Value) -> serde_json::Value {
        self.request(id, "tools/call", serde_json::json!({ "name": tool, "arguments": args }))["result"]
            ["structuredContent"]
            .clone()
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the README says: a stdio MCP client's request is approved on the
/// same machine with other credentials than the client's.
#[test]
fn a_stdio_mcp_request_is_approved_with_other_credentials_on_the_same_machine() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    let (_, admin, _) = run(&["token", "create", "--group", "admin", "--name", "me", "--data", data]);
    let admin = admin.trim();

    // `quire mcp` as the local admin: the local CLI holds the same
    // credentials, so a token of your own approves.
    let mut mcp = McpClient::start(&["--data", data]);
    let preview = mcp.call(2, "deletePost", serde_json::json!({ "slugs": ["roadmap-draft"] }));
    let id = preview["confirmationId"].as_str().unwrap_or_else(|| panic!("{preview}")).to_string();
    let (ok, _, err) = run(&["approvals", "approve", &id, "--data", data]);
    assert!(!ok);
    assert!(err.contains("cannot be approved with the same credentials"), "{err}");
    let (ok, out, err) = run(&["approvals", "approve", &id, "--token", admin, "--data", data]);
    assert!(ok, "{err}");
    assert!(out.contains("\"status\": \"approved\""), "{out}");
    let done = mcp.call(3, "deletePost", serde_json::json!({ "slugs": ["roadmap-draft"], "confirmationId": id }));
    assert_eq!(done["success"], true, "{done}");
    drop(mcp);

    // `quire mcp --token T`: the local CLI (without --token) approves.
    let (_, editor, _) = run(&["token", "create", "--group", "editor", "--name", "mcp", "--data", data]);
    let mut mcp = McpClient::start(&["--data", data, "--token", editor.trim()]);
    let preview = mcp.call(2, "deletePost", serde_json::json!({ "slugs": ["hello-quire"] }));
    let id = preview["confirmationId"].as_str().unwrap_or_else(|| panic!("{preview}")).to_string();
    let (ok, _, err) = run(&["approvals", "approve", &id, "--token", editor.trim(), "--data", data]);
    assert!(!ok && err.contains("same credentials"), "{err}");
    let (ok, _, err) = run(&["approvals", "approve", &id, "--data", data]);
    assert!(ok, "{err}");
    let done = mcp.call(3, "deletePost", serde_json::json!({ "slugs": ["hello-quire"], "confirmationId": id }));
    assert_eq!(done["success"], true, "{done}");
}

/// The demo site seeded in `dir`'s folder `from` and exported to its
/// `site.jsonl`: the paths of `from`, of a folder `to` not made yet, and of
/// the file.
fn exported_demo(dir: &std::path::Path) -> (String, String, String) {
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let (from, to, file) = (path("from"), path("to"), path("site.jsonl"));
    run(&["seed", "--data", &from]);
    let (ok, _, err) = run(&["export", "--data", &from, "--out", &file]);
    assert!(ok, "{err}");
    assert!(err.contains("exported") && err.contains("rows of"), "{err}");
    (from, to, file)
}

/// A site on SQLite moves to PostgreSQL with the same binary and one
/// setting changed: exported, imported into the database `database_url`
/// names, and served from there. Needs a PostgreSQL server: runs where
/// `QUIRE_TEST_DATABASE_URL` names one (the test script's second pass).
#[test]
fn a_sqlite_site_moves_into_postgresql_and_is_served_from_it() {
    if quire_store::testing::postgres_url().is_none() {
        eprintln!("no QUIRE_TEST_DATABASE_URL: nothing to move into");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let quire_store::Location::Postgres(url) = rt.block_on(quire_store::testing::location(dir.path())).unwrap() else {
        panic!("the test database is PostgreSQL");
    };
    let (_, to, file) = exported_demo(dir.path());
    let (to, file) = (to.as_str(), file.as_str());
    let on_pg = |args: &[&str]| outcome(quire().env("QUIRE_DATABASE_URL", &url).args(args));
    let (ok, out, err) = on_pg(&["import", file, "--data", to]);
    assert!(ok, "{err}");
    assert!(out.contains("imported") && out.contains("postgres://"), "{out}");
    // The same rows come back out of PostgreSQL.
    let (ok, again, err) = on_pg(&["export", "--data", to]);
    assert!(ok, "{err}");
    assert_eq!(again, std::fs::read_to_string(file).unwrap());
    // It is served from there, full-text search included.
    let (ok, out, err) = on_pg(&["tools", "call", "getPage", "--args", r#"{"slug":"about"}"#, "--data", to]);
    assert!(ok, "{err}");
    assert!(out.contains("\"slug\": \"about\"") || out.contains("\"slug\":\"about\""), "{out}");
    let (ok, out, err) =
        on_pg(&["tools", "call", "getPage", "--args", r#"{"query":"tidy content models"}"#, "--data", to]);
    assert!(ok, "{err}");
    assert!(out.contains("\"team\""), "the team page is found by its section text: {out}");
    // And it takes no second import.
    let (ok, _, err) = on_pg(&["import", file, "--data", to]);
    assert!(!ok && err.contains("already holds data"), "{err}");
}

#[test]
fn a_site_moves_to_a_new_data_directory_by_export_and_import() {
    let dir = tempfile::tempdir().unwrap();
    let (from, to, file) = exported_demo(dir.path());
    let (from, to, file) = (from.as_str(), to.as_str(), file.as_str());
    let (ok, out, err) = run(&["import", file, "--data", to]);
    assert!(ok, "{err}");
    assert!(out.contains("imported"), "{out}");
    // Exported again, the new directory's database is the same file.
    let (ok, again, _) = run(&["export", "--data", to]);
    assert!(ok);
    assert_eq!(again, std::fs::read_to_string(file).unwrap());
    // The site answers from it as before; no demo was seeded over it.
    let (ok, out, err) = run(&["tools", "call", "getPage", "--args", r#"{"slug":"about"}"#, "--data", to]);
    assert!(ok, "{err}");
    assert!(out.contains("\"slug\": \"about\"") || out.contains("\"slug\":\"about\""), "{out}");
    // A database that holds data takes no import, and says so.
    let (ok, _, err) = run(&["import", file, "--data", from]);
    assert!(!ok);
    assert!(err.contains("already holds data"), "{err}");
    let (ok, _, err) = run(&["export", "--data", dir.path().join("none").to_str().unwrap()]);
    assert!(!ok && err.contains("no data directory"), "{err}");
}

#[test]
fn an_environment_is_copied_compared_promoted_and_the_promotion_undone_from_the_command_line() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    let (ok, out, err) = run(&["env", "create", "next", "--from", "production", "--name", "Next", "--data", data]);
    assert!(ok, "{err}");
    assert!(out.contains("copied ") && out.contains("from production"), "{out}");
    let (ok, out, err) = run(&["env", "compare", "next", "production", "--data", data]);
    assert!(ok, "{err}");
    assert!(out.contains("0 difference(s) from next to production"), "{out}");
    // A change in the copy, by a token of its own.
    let (ok, token, err) = run(&["token", "create", "--group", "admin", "--env", "next", "--data", data]);
    assert!(ok, "{err}");
    let token = token.trim();
    let (ok, page, err) =
        run(&["tools", "call", "getPage", "--args", r#"{"slug":"about"}"#, "--token", token, "--data", data]);
    assert!(ok, "{err}");
    let page: serde_json::Value = serde_json::from_str(&page).unwrap();
    let id = page["items"][0]["id"].as_str().unwrap_or_else(|| panic!("{page}"));
    let args = serde_json::json!({ "id": id, "name": "About the studio" }).to_string();
    let (ok, _, err) = run(&["tools", "call", "updatePage", "--args", &args, "--token", token, "--data", data]);
    assert!(ok, "{err}");
    let (ok, out, err) = run(&["env", "compare", "next", "production", "--data", data]);
    assert!(ok, "{err}");
    assert!(out.contains("about") && out.contains("1 difference(s)"), "{out}");
    let (ok, out, err) = run(&["env", "lock", "production", "--data", data]);
    assert!(ok && out.contains("locked"), "{out}{err}");
    let (ok, out, err) = run(&["env", "promote", "next", "production", "--data", data]);
    assert!(ok, "{err}");
    let promotion = out.split("(promotion ").nth(1).unwrap().trim().trim_end_matches(')').to_string();
    let (ok, out, _) = run(&["env", "compare", "next", "production", "--data", data]);
    assert!(ok && out.contains("0 difference(s)"), "{out}");
    let (ok, out, err) = run(&["env", "undo", &promotion, "--data", data]);
    assert!(ok, "{err}");
    assert!(out.contains("undid promotion"), "{out}");
    let (ok, out, _) = run(&["env", "compare", "next", "production", "--data", data]);
    assert!(ok && out.contains("1 difference(s)"), "{out}");
    let (ok, out, _) = run(&["env", "list", "--data", data]);
    assert!(ok);
    assert!(out.contains("next") && out.contains("production") && out.contains("locked"), "{out}");
}
