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
