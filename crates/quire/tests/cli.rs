//! The binary, run as a user runs it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn quire() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_quire"));
    cmd.env_remove("QUIRE_BOOTSTRAP_TOKEN").env("QUIRE_LOG", "warn");
    cmd
}

fn run(args: &[&str]) -> (bool, String, String) {
    let out = quire().args(args).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

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
    assert!(dir.path().join("uploads/demo/hero-dawn.png").exists());
    let (ok, out, _) = run(&["migrate", "--data", data]);
    assert!(ok);
    let migrations =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../migrations/sqlite")).unwrap().count();
    assert!(out.contains(&format!("is at migration {migrations}")), "{out}");
}

#[test]
fn token_create_prints_the_token_alone() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    run(&["seed", "--data", data]);
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

struct Server {
    child: Child,
    addr: String,
    stdout: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(data: &str, bootstrap: Option<&str>) -> Server {
    let mut cmd = quire();
    cmd.args(["serve", "--addr", "127.0.0.1:0", "--data", data]).stdout(Stdio::piped()).stderr(Stdio::piped());
    if let Some(token) = bootstrap {
        cmd.env("QUIRE_BOOTSTRAP_TOKEN", token);
    }
    let mut child = cmd.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    let addr = loop {
        assert!(Instant::now() < deadline, "server did not start");
        let line = lines.next().expect("server exited").unwrap();
        if let Some(rest) = line.split("listening on http://").nth(1) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let out = child.stdout.take().unwrap();
    // stdout is written before the listener starts: collect what arrives.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            if tx.send(line.unwrap_or_default()).is_err() {
                break;
            }
        }
    });
    let mut stdout = String::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_millis(300)) {
        stdout.push_str(&line);
        stdout.push('\n');
    }
    Server { child, addr, stdout }
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
    assert_eq!(list.len(), 40);
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

    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    run(&["seed", "--data", data]);
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

#[test]
fn destructive_call_approved_from_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    run(&["seed", "--data", data]);
    let (_, out, _) = run(&["tools", "call", "deletePost", "--args", r#"{"slugs":["roadmap-draft"]}"#, "--data", data]);
    let preview: serde_json::Value = serde_json::from_str(&out).unwrap();
    let id = preview["confirmationId"].as_str().unwrap().to_string();
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
fn unrelated_quire_variables_do_not_break_the_configuration() {
    let out = quire().args(["tools", "list", "--json"]).env("QUIRE_BIN", "x").env("QUIRE_TOKEN", "y").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bad = quire().args(["tools", "list"]).env("QUIRE_WORKERS", "many").output().unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("configuration"));
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
