//! Durability: 1,000 concurrent writes over real HTTP to the real binary,
//! `kill -9` of the server while they run, then a restart on the same data.
//! Every write that was answered 2xx must be there, and the server must
//! start cleanly.

mod support;
use support::start;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Writes in all, and writes answered before the kill.
const WRITES: usize = 1000;
const KILL_AFTER: usize = 350;
const WORKERS: usize = 32;

/// One HTTP/1.1 request; `None` when the connection failed or was cut.
fn request(addr: &str, method: &str, path: &str, token: &str, body: Option<&str>) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    let body = body.unwrap_or("");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).ok()?;
    stream.write_all(body.as_bytes()).ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let status = response.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, response.split("\r\n\r\n").nth(1).unwrap_or_default().to_string()))
}

#[test]
fn every_acknowledged_write_survives_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap().to_string();
    let mut server = start(&data, None);
    let token = server.stdout.split_whitespace().find(|w| w.starts_with("qk_")).expect("an admin token").to_string();
    let addr = server.addr.clone();
    let (_, about) = request(&addr, "GET", "/api/v1/pages?limit=100", &token, None).unwrap();
    let pages: serde_json::Value = serde_json::from_str(&about).unwrap();
    let about_id = pages["items"].as_array().unwrap().iter().find(|p| p["slug"] == "about").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();

    // creates of new pages, and updates of one page, from many connections
    let next = Arc::new(AtomicUsize::new(0));
    let answered = Arc::new(AtomicUsize::new(0));
    let acknowledged: Arc<Mutex<Vec<(usize, bool)>>> = Arc::default();
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (next, answered, acknowledged) = (next.clone(), answered.clone(), acknowledged.clone());
            let (addr, token, about_id) = (addr.clone(), token.clone(), about_id.clone());
            std::thread::spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= WRITES {
                        return;
                    }
                    let update = i % 4 == 3;
                    let reply = if update {
                        let body = format!(r#"{{"meta": {{"write{i}": true}}}}"#);
                        request(&addr, "PATCH", &format!("/api/v1/pages/{about_id}"), &token, Some(&body))
                    } else {
                        let body = format!(r#"{{"name": "Durable {i}", "slug": "durable-{i}"}}"#);
                        request(&addr, "POST", "/api/v1/pages", &token, Some(&body))
                    };
                    match reply {
                        Some((status, _)) if (200..300).contains(&status) => {
                            acknowledged.lock().unwrap().push((i, update));
                            answered.fetch_add(1, Ordering::SeqCst);
                        }
                        Some((status, body)) => panic!("write {i} answered {status}: {body}"),
                        None => {} // cut by the kill: no answer, no promise
                    }
                }
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(120);
    while answered.load(Ordering::SeqCst) < KILL_AFTER {
        assert!(Instant::now() < deadline, "writes too slow");
        std::thread::sleep(Duration::from_millis(2));
    }
    server.child.kill().unwrap(); // SIGKILL: no shutdown of any kind
    server.child.wait().unwrap();
    for w in workers {
        w.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(acknowledged.len() >= KILL_AFTER && acknowledged.len() < WRITES, "killed mid-way: {}", acknowledged.len());

    // restart on the same data: clean start, and every acknowledged write is there
    let server = start(&data, None);
    let addr = server.addr.clone();
    let (status, _) = request(&addr, "GET", "/api/v1/me", &token, None).unwrap();
    assert_eq!(status, 200);
    // updates: each acknowledged one left its key in the page's meta
    let (_, about) = request(&addr, "GET", &format!("/api/v1/pages/{about_id}"), &token, None).unwrap();
    let about: serde_json::Value = serde_json::from_str(&about).unwrap();
    let mut missing: Vec<usize> = acknowledged
        .iter()
        .filter(|(i, update)| *update && about["meta"][format!("write{i}")] != true)
        .map(|(i, _)| *i)
        .collect();
    // creates: each acknowledged one is in the listing of pages
    let mut slugs = std::collections::HashSet::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/api/v1/pages?limit=100&cursor={c}"),
            None => "/api/v1/pages?limit=100".to_string(),
        };
        let (_, body) = request(&addr, "GET", &path, &token, None).unwrap();
        let page: serde_json::Value = serde_json::from_str(&body).unwrap();
        for p in page["items"].as_array().unwrap() {
            slugs.insert(p["slug"].as_str().unwrap().to_string());
        }
        match page["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    missing.extend(
        acknowledged.iter().filter(|(i, update)| !update && !slugs.contains(&format!("durable-{i}"))).map(|(i, _)| *i),
    );
    assert!(missing.is_empty(), "{} of {} acknowledged writes lost: {missing:?}", missing.len(), acknowledged.len());
    eprintln!(
        "durability: {WRITES} writes started, {} acknowledged before kill -9, 0 lost after restart",
        acknowledged.len()
    );
}

/// Size of the write-ahead log next to the database in `data` (0 when the
/// file is gone, as SQLite leaves it after a clean close).
fn wal_bytes(data: &str) -> u64 {
    std::fs::metadata(std::path::Path::new(data).join("quire.db-wal")).map(|m| m.len()).unwrap_or(0)
}

/// Sends `signal` (`TERM`, `INT`) to a child process.
fn signal(child: &std::process::Child, signal: &str) {
    let sent = std::process::Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status();
    assert!(sent.unwrap().success(), "kill -{signal} failed");
}

/// Waits for a child to exit, at most `limit`.
fn wait_exit(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "the server did not stop within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGTERM and SIGINT both stop the server cleanly: exit code 0, the
/// write-ahead log folded into the database (no log left behind), and
/// every acknowledged write there on the next start.
#[test]
fn sigterm_and_sigint_stop_cleanly_and_leave_no_log() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap().to_string();
    let mut slugs = Vec::new();
    for (round, sig) in ["TERM", "INT"].into_iter().enumerate() {
        let mut server = start(&data, Some("qk_stop_test_token_0123456789abcdef"));
        let token = "qk_stop_test_token_0123456789abcdef";
        for i in 0..50 {
            let slug = format!("stop-{round}-{i}");
            let body = format!(r#"{{"name": "Stop {i}", "slug": "{slug}"}}"#);
            let (status, reply) = request(&server.addr, "POST", "/api/v1/pages", token, Some(&body)).unwrap();
            assert_eq!(status, 201, "{reply}");
            let page: serde_json::Value = serde_json::from_str(&reply).unwrap();
            slugs.push((page["id"].as_str().unwrap().to_string(), slug));
        }
        assert!(wal_bytes(&data) > 0, "writes go through the write-ahead log first");
        signal(&server.child, sig);
        let status = wait_exit(&mut server.child, Duration::from_secs(20));
        assert!(status.success(), "SIG{sig} exits cleanly: {status:?}\n{}", server.log());
        assert_eq!(wal_bytes(&data), 0, "SIG{sig} leaves no write-ahead log\n{}", server.log());
    }
    let server = start(&data, None);
    for (id, slug) in &slugs {
        let path = format!("/api/v1/pages/{id}");
        let (status, body) = request(&server.addr, "GET", &path, "qk_stop_test_token_0123456789abcdef", None).unwrap();
        assert_eq!(status, 200, "{slug}: {body}");
        let page: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(page["slug"], slug.as_str());
    }
}

/// Commands that write leave no large write-ahead log behind: seeding
/// benchmark data, and a tool call.
#[test]
fn writing_commands_leave_no_large_log() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let (ok, _, err) = support::run(&["seed", "--data", data, "--bench-pages", "100", "--bench-posts", "1000"]);
    assert!(ok, "{err}");
    assert!(wal_bytes(data) < 64 * 1024, "seed left a {} byte log", wal_bytes(data));
    let (ok, out, err) = support::run(&[
        "tools",
        "call",
        "createPage",
        "--args",
        r#"{"name":"Logged","slug":"logged"}"#,
        "--data",
        data,
    ]);
    assert!(ok, "{out}{err}");
    assert!(wal_bytes(data) < 64 * 1024, "a tool call left a {} byte log", wal_bytes(data));
    // a refused call (bad arguments) also closes the store on its way out
    let (ok, _, _) = support::run(&["tools", "call", "createPage", "--args", r#"{"slug":"Bad Slug"}"#, "--data", data]);
    assert!(!ok);
    assert!(wal_bytes(data) < 64 * 1024, "a refused call left a {} byte log", wal_bytes(data));
}
