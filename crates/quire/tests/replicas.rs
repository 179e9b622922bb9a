//! Two `quire serve` processes on one PostgreSQL database, as a cluster of
//! replicas behind a load balancer runs them: a chat started through one is
//! streamed from the other, an approval answered on the other resumes the
//! turn once, writes spread over both are all kept and logged once, a turn
//! whose process is killed is finished by the other, a token revoked
//! through one is refused by the other within a second, and schedules due
//! while both run are each published once, near their time — one due while
//! both are stopped at the next start.
//!
//! They run where `QUIRE_TEST_DATABASE_URL` names a PostgreSQL server (as
//! `scripts/test` does in its PostgreSQL pass).

mod support;

use quire_agent::testing::{Fake, Reply, SseEvent, SseReader, openai_stream, serve};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use support::{Server, start_with};

const ADMIN: &str = "qk_replica_test_token_0123456789abcdef";

struct Cluster {
    a: Server,
    b: Server,
    fake: Fake,
    http: reqwest::Client,
    /// The database both share, for a restart.
    url: String,
    _dir: tempfile::TempDir,
}

/// Two replicas on a fresh schema of the test server, with a fake model;
/// None (and a note) without a PostgreSQL server.
async fn cluster() -> Option<Cluster> {
    if quire_store::testing::postgres_url().is_none() {
        eprintln!("no QUIRE_TEST_DATABASE_URL: replicas share a PostgreSQL database");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let quire_store::Location::Postgres(url) = quire_store::testing::location(dir.path()).await.unwrap() else {
        unreachable!("a PostgreSQL test database")
    };
    let (fake, base) = serve().await;
    let root = dir.path().to_path_buf();
    let shared = url.clone();
    let (a, b) = tokio::task::spawn_blocking(move || {
        let envs = [
            ("QUIRE_DATABASE_URL", url.as_str()),
            ("QUIRE_LLM_PROVIDER", "openai"),
            ("QUIRE_LLM_BASE_URL", &format!("{base}/v1")),
            ("QUIRE_LLM_MODEL", "fake-model"),
            ("QUIRE_LLM_API_KEY", "test-key"),
        ];
        // The first start migrates and seeds; the second finds it done.
        let a = start_with(root.join("a").to_str().unwrap(), Some(ADMIN), &envs);
        let b = start_with(root.join("b").to_str().unwrap(), Some(ADMIN), &envs);
        (a, b)
    })
    .await
    .unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    Some(Cluster { a, b, fake, http: reqwest::Client::new(), url: shared, _dir: dir })
}

impl Cluster {
    /// A JSON request to a replica's API: (status, body).
    async fn call(&self, on: &Server, method: &str, path: &str, token: &str, body: Option<Value>) -> (u16, Value) {
        let url = format!("http://{}{path}", on.addr);
        let mut req = self.http.request(method.parse().unwrap(), url).bearer_auth(token);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// A session's events streamed from a replica until one of kind
    /// `until`: (id, kind, data) each.
    async fn events(&self, on: &Server, session: &str, last: Option<&str>, until: &str) -> Vec<SseEvent> {
        let url = format!("http://{}/api/v1/sessions/{session}/events", on.addr);
        let mut req = self.http.get(url).bearer_auth(ADMIN);
        if let Some(id) = last {
            req = req.header("last-event-id", id);
        }
        let mut res = req.send().await.unwrap();
        assert_eq!(res.status(), 200, "{}", on.log());
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        let mut reader = SseReader::default();
        loop {
            let chunk = tokio::time::timeout_at(deadline, res.chunk()).await;
            let Ok(Ok(Some(chunk))) = chunk else { panic!("the stream ended before {until}: {:?}", reader.events) };
            if reader.read_until(&chunk, until) {
                return reader.events;
            }
        }
    }

    /// Starts a chat turn through a replica; answers the session id.
    async fn chat(&self, on: &Server, message: &str) -> String {
        let (status, body) =
            self.call(on, "POST", "/api/v1/agents/editor/chat", ADMIN, Some(json!({ "message": message }))).await;
        assert_eq!(status, 202, "{body}");
        body["sessionId"].as_str().unwrap().to_string()
    }

    /// Waits until a session has `status`, read through a replica; answers it.
    async fn wait_status(&self, on: &Server, session: &str, status: &str, limit: Duration) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let (_, body) = self.call(on, "GET", &format!("/api/v1/sessions/{session}"), ADMIN, None).await;
            if body["session"]["status"] == status {
                return body;
            }
            assert!(Instant::now() < deadline, "session {session} not {status}: {body}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Every item of a paged list, read through a replica.
    async fn all_items(&self, on: &Server, path: &str) -> Vec<Value> {
        let (mut items, mut cursor) = (Vec::new(), None::<String>);
        loop {
            let page = match &cursor {
                Some(at) => format!("{path}&cursor={at}"),
                None => path.to_string(),
            };
            let (status, body) = self.call(on, "GET", &page, ADMIN, None).await;
            assert_eq!(status, 200, "{body}");
            items.extend(body["items"].as_array().unwrap().iter().cloned());
            match body["nextCursor"].as_str() {
                Some(at) => cursor = Some(at.into()),
                None => return items,
            }
        }
    }

    async fn page_id(&self, slug: &str) -> String {
        let (_, body) = self.call(&self.a, "GET", "/api/v1/pages?limit=100", ADMIN, None).await;
        let items = body["items"].as_array().unwrap();
        items.iter().find(|p| p["slug"] == slug).unwrap_or_else(|| panic!("no page {slug}: {body}"))["id"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

fn slow(reply: Reply) -> Reply {
    Reply::Delayed(Duration::from_millis(300), Box::new(reply))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_started_on_one_replica_streams_from_the_other() {
    let Some(c) = cluster().await else { return };
    c.fake.push(slow(openai_stream("Let me look.", &[("c1", "getPage", r#"{"slug":"about"}"#)])));
    c.fake.push(slow(openai_stream("The about page is a draft.", &[])));
    let session = c.chat(&c.a, "is about published?").await;
    // Streamed from B while A runs the turn.
    let there = c.events(&c.b, &session, None, "RUN_FINISHED").await;
    let here = c.events(&c.a, &session, None, "RUN_FINISHED").await;
    let kinds = |e: &[SseEvent]| e.iter().map(|(id, k, _)| (id.clone(), k.clone())).collect::<Vec<_>>();
    assert_eq!(kinds(&there), kinds(&here), "the same events, in the same order, with the same ids");
    assert_eq!(there[0].1, "RUN_STARTED");
    assert_eq!(there.last().unwrap().2["outcome"]["type"], "success");
    let text: String = there
        .iter()
        .filter(|(_, k, _)| k == "TEXT_MESSAGE_CONTENT")
        .map(|(_, _, d)| d["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Let me look.The about page is a draft.");
    // Reconnecting to B with Last-Event-ID: what followed that event.
    let rest = c.events(&c.b, &session, Some(&there[2].0), "RUN_FINISHED").await;
    assert_eq!(kinds(&rest), kinds(&there[3..]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_answered_on_the_other_replica_resumes_the_turn_once() {
    let Some(c) = cluster().await else { return };
    let contact = c.page_id("contact").await;
    let args = json!({ "ids": [contact] }).to_string();
    c.fake.push(openai_stream("I'll archive it.", &[("d1", "deletePage", &args)]));
    c.fake.push(openai_stream("Archived the contact page.", &[]));
    let session = c.chat(&c.a, "delete the contact page").await;
    let paused = c.wait_status(&c.a, &session, "paused", Duration::from_secs(20)).await;
    let approval = paused["session"]["pending"][0]["approvalId"].as_str().unwrap().to_string();
    let pause = c.events(&c.a, &session, None, "RUN_FINISHED").await;
    assert_eq!(pause.last().unwrap().2["outcome"]["type"], "interrupt");

    let (status, body) = c.call(&c.b, "POST", &format!("/api/v1/approvals/{approval}/approve"), ADMIN, None).await;
    assert_eq!(status, 200, "{body}");
    c.wait_status(&c.a, &session, "idle", Duration::from_secs(20)).await;
    // Longer than a sweep of either replica: still resumed once.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(c.fake.requests().len(), 2, "the model was asked once after the approval");
    let resumed = c.events(&c.a, &session, Some(&pause.last().unwrap().0), "RUN_FINISHED").await;
    let starts = resumed.iter().filter(|(_, k, _)| k == "RUN_STARTED").count();
    assert_eq!(starts, 1, "{resumed:?}");
    assert_eq!(resumed.last().unwrap().2["outcome"]["type"], "success");
    let (status, _) = c.call(&c.b, "GET", &format!("/api/v1/pages/{contact}"), ADMIN, None).await;
    assert_eq!(status, 404, "archived");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_writes_spread_over_both_replicas_are_all_kept_and_logged_once() {
    let Some(c) = cluster().await else { return };
    let c = std::sync::Arc::new(c);
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let workers: Vec<_> = (0..32)
        .map(|_| {
            let (c, next) = (c.clone(), next.clone());
            tokio::spawn(async move {
                let mut made = Vec::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= 1000 {
                        return made;
                    }
                    let on = if i % 2 == 0 { &c.a } else { &c.b };
                    let page = json!({ "name": format!("Spread {i}"), "slug": format!("spread-{i}") });
                    let (status, body) = c.call(on, "POST", "/api/v1/pages", ADMIN, Some(page)).await;
                    assert_eq!(status, 201, "write {i}: {body}");
                    made.push(body["id"].as_str().unwrap().to_string());
                }
            })
        })
        .collect();
    let mut made = Vec::new();
    for w in workers {
        made.extend(w.await.unwrap());
    }
    assert_eq!(made.len(), 1000);
    // Every page is there, read through either replica.
    let pages = c.all_items(&c.b, "/api/v1/pages?limit=100").await;
    let slugs: std::collections::HashSet<&str> = pages.iter().map(|p| p["slug"].as_str().unwrap()).collect();
    let lost: Vec<usize> = (0..1000).filter(|i| !slugs.contains(format!("spread-{i}").as_str())).collect();
    assert!(lost.is_empty(), "lost: {lost:?}");
    // Each creation is in the change log once.
    let mut logged: HashMap<String, usize> = HashMap::new();
    for change in c.all_items(&c.a, "/api/v1/changes?entity=page&limit=100").await {
        if change["action"] == "create" {
            *logged.entry(change["entityId"].as_str().unwrap().to_string()).or_default() += 1;
        }
    }
    let wrong: Vec<(&String, usize)> =
        made.iter().map(|id| (id, logged.get(id).copied().unwrap_or(0))).filter(|(_, n)| *n != 1).collect();
    assert!(wrong.is_empty(), "pages not logged exactly once: {wrong:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_on_a_killed_replica_is_finished_by_the_other() {
    let Some(mut c) = cluster().await else { return };
    c.fake.push(openai_stream("", &[("c1", "searchTools", r#"{"query":"create page"}"#)]));
    c.fake.push(openai_stream("", &[("c2", "createPage", r#"{"name":"Launch","slug":"launch"}"#)]));
    // A is killed while the model writes its third step.
    c.fake.push(Reply::Delayed(Duration::from_secs(300), Box::new(openai_stream("never", &[]))));
    c.fake.push(openai_stream("Made the launch page.", &[]));
    let session = c.chat(&c.a, "make a launch page").await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while c.fake.requests().len() < 3 {
        assert!(Instant::now() < deadline, "the turn did not reach its third step");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let page = c.page_id("launch").await;
    c.a.child.kill().unwrap(); // SIGKILL
    c.a.child.wait().unwrap();

    // B takes the turn over once A has been silent for 10 s.
    let done = c.wait_status(&c.b, &session, "idle", Duration::from_secs(40)).await;
    assert_eq!(c.fake.requests().len(), 4, "{}", c.b.log());
    let told = c.fake.requests()[3]["messages"].to_string();
    assert!(told.contains(&page), "the model is told the turn made the page: {told}");
    let last = done["messages"].as_array().unwrap().last().unwrap()["body"]["content"].clone();
    assert_eq!(last, "Made the launch page.");
    let events = c.events(&c.b, &session, None, "RUN_FINISHED").await;
    assert_eq!(events.last().unwrap().2["outcome"]["type"], "success");
    // The page was made once.
    let (_, log) = c.call(&c.b, "GET", &format!("/api/v1/changes?entityId={page}"), ADMIN, None).await;
    assert_eq!(log["items"].as_array().unwrap().len(), 1, "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_revoked_on_one_replica_is_refused_by_the_other_within_a_second() {
    let Some(c) = cluster().await else { return };
    let (status, made) =
        c.call(&c.a, "POST", "/api/v1/tokens", ADMIN, Some(json!({ "name": "leaving", "group": "editor" }))).await;
    assert_eq!(status, 201, "{made}");
    let (id, secret) = (made["id"].as_str().unwrap(), made["secret"].as_str().unwrap());
    // B knows the token (and keeps it in its cache).
    assert_eq!(c.call(&c.b, "GET", "/api/v1/me", secret, None).await.0, 200);
    let (status, body) = c.call(&c.a, "DELETE", &format!("/api/v1/tokens/{id}"), ADMIN, None).await;
    assert!((200..300).contains(&status), "{status} {body}");
    let revoked = Instant::now();
    assert_eq!(c.call(&c.a, "GET", "/api/v1/me", secret, None).await.0, 401, "refused at once where revoked");
    loop {
        let (status, _) = c.call(&c.b, "GET", "/api/v1/me", secret, None).await;
        if status == 401 {
            break;
        }
        assert_eq!(status, 200);
        assert!(revoked.elapsed() < Duration::from_secs(1), "still accepted by B after {:?}", revoked.elapsed());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until every schedule has run, read through a replica; answers them.
async fn ran_schedules(c: &Cluster, on: &Server, count: usize, limit: Duration) -> Vec<Value> {
    let deadline = Instant::now() + limit;
    loop {
        let (_, body) = c.call(on, "GET", "/api/v1/schedules?all=true", ADMIN, None).await;
        let items = body["items"].as_array().cloned().unwrap_or_default();
        let waiting = items.iter().filter(|s| s["status"] == "queued" || s["status"] == "running").count();
        if items.len() >= count && waiting == 0 {
            return items;
        }
        assert!(Instant::now() < deadline, "{waiting} of {count} schedules still waiting: {}", on.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_schedules_on_two_replicas_publish_once_each_near_their_time() {
    let Some(mut c) = cluster().await else { return };
    const PAGES: usize = 100;
    let mut ids = Vec::new();
    for i in 0..PAGES {
        let on = if i % 2 == 0 { &c.a } else { &c.b };
        let page = json!({ "name": format!("Scheduled {i}"), "slug": format!("scheduled-{i}"), "status": "draft" });
        let (status, body) = c.call(on, "POST", "/api/v1/pages", ADMIN, Some(page)).await;
        assert_eq!(status, 201, "{body}");
        ids.push(body["id"].as_str().unwrap().to_string());
    }
    // Due within two seconds of one another, scheduled through either replica.
    let start = chrono::Utc::now() + chrono::Duration::seconds(2);
    for (i, id) in ids.iter().enumerate() {
        let on = if i % 2 == 0 { &c.b } else { &c.a };
        let at = start + chrono::Duration::milliseconds((i % 20) as i64 * 100);
        let body = json!({ "entity": "page", "id": id, "at": at.to_rfc3339() });
        let (status, made) = c.call(on, "POST", "/api/v1/schedules", ADMIN, Some(body)).await;
        assert_eq!(status, 201, "{made}");
    }
    let ran = ran_schedules(&c, &c.a, PAGES, Duration::from_secs(60)).await;
    assert!(ran.iter().all(|s| s["status"] == "done"), "{ran:?}");
    let mut late: Vec<i64> = ran.iter().map(|s| s["lateMs"].as_i64().unwrap()).collect();
    late.sort();
    eprintln!("100 schedules ran late by: median {} ms, max {} ms", late[late.len() / 2], late[late.len() - 1]);
    assert!(late[late.len() - 1] < 1000, "each within a second of its time: {late:?}");
    for (i, id) in ids.iter().enumerate() {
        let on = if i % 2 == 0 { &c.a } else { &c.b };
        let (status, _) = c.call(on, "GET", &format!("/api/v1/delivery/pages/scheduled-{i}"), ADMIN, None).await;
        assert_eq!(status, 200, "page {i} is public");
        let (_, log) = c.call(on, "GET", &format!("/api/v1/changes?entityId={id}&limit=100"), ADMIN, None).await;
        let publishes = log["items"].as_array().unwrap().iter().filter(|ch| ch["action"] == "publish").count();
        assert_eq!(publishes, 1, "page {i} published once: {log}");
    }

    // Due while both are stopped: run by the next start, which says how late.
    let at = chrono::Utc::now() + chrono::Duration::milliseconds(1500);
    let body = json!({ "entity": "page", "id": "about", "action": "unpublish", "at": at.to_rfc3339() });
    let (status, made) = c.call(&c.a, "POST", "/api/v1/schedules", ADMIN, Some(body)).await;
    assert_eq!(status, 201, "{made}");
    for server in [&mut c.a, &mut c.b] {
        server.child.kill().unwrap();
        server.child.wait().unwrap();
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let url = c.url.clone();
    let root = c._dir.path().join("a");
    c.a = tokio::task::spawn_blocking(move || {
        start_with(root.to_str().unwrap(), Some(ADMIN), &[("QUIRE_DATABASE_URL", url.as_str())])
    })
    .await
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let schedule = loop {
        let (_, body) =
            c.call(&c.a, "GET", &format!("/api/v1/schedules/{}", made["id"].as_str().unwrap()), ADMIN, None).await;
        if body["status"] == "done" {
            break body;
        }
        assert!(Instant::now() < deadline, "not run after the restart: {body} {}", c.a.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(schedule["lateMs"].as_i64().unwrap() >= 1000, "it says it ran late: {schedule}");
    let (status, _) = c.call(&c.a, "GET", "/api/v1/delivery/pages/about", ADMIN, None).await;
    assert_eq!(status, 404, "taken off the site");
}
