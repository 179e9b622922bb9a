//! Fair use kept in the database: requests a minute per token or person
//! (429 with `Retry-After` in the one error shape, shared through the
//! database), and the sign-in lockout, which counts every replica's tries
//! and survives a restart.

mod common;

use axum::body::Body;
use axum::http::Request;
use common::TestApp;
use quire_app::people::{self, SignIn, Throttle};
use quire_store::Store;

/// A GET of the pages as `token`: its status and `Retry-After`, and its body.
async fn pages(app: &TestApp, token: &str) -> (u16, Option<u64>, serde_json::Value) {
    let req = Request::get("/api/v1/pages").header("authorization", format!("Bearer {token}")).body(Body::empty());
    let raw = app.raw(req.unwrap()).await;
    let retry = raw.headers.get("retry-after").map(|v| v.to_str().unwrap().parse().unwrap());
    (raw.status, retry, raw.json())
}

#[tokio::test]
async fn requests_past_the_limit_answer_429_with_retry_after_per_token() {
    let app = TestApp::build(|s| s.with_request_limit(3)).await;
    for _ in 0..3 {
        assert_eq!(pages(&app, &app.editor).await.0, 200);
    }
    let (status, retry, body) = pages(&app, &app.editor).await;
    assert_eq!(status, 429, "{body}");
    assert!(retry.is_some_and(|s| (1..=60).contains(&s)), "{retry:?}");
    assert_eq!(body["code"], "LIMIT");
    assert!(body["error"].as_str().unwrap().contains("3 requests a minute"), "{body}");
    // Another token has its own count.
    assert_eq!(pages(&app, &app.author).await.0, 200);
}

/// Two replicas (two stores on one database, each with its own limiter)
/// share a limit: once one has flushed its counts, the other refuses what
/// passes the limit after its next flush. Run with
/// `QUIRE_TEST_DATABASE_URL` to check it on PostgreSQL.
#[tokio::test]
async fn two_replicas_share_a_request_limit() {
    use quire_server::limits::RequestLimits;
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let first = quire_store::testing::open(dir.path()).await.unwrap();
    let second = Store::open_at(first.location().clone()).await.unwrap();
    let (a, b) = (Arc::new(RequestLimits::new(first.clone(), 5)), Arc::new(RequestLimits::new(second.clone(), 5)));
    let actor = "token:shared";
    for _ in 0..5 {
        assert!(a.admit(actor).is_ok());
    }
    assert!(a.admit(actor).is_err(), "its own count");
    a.flush().await;
    // B has not read the shared count yet: within the tolerance, it admits
    // until its flush (at most once a second), then refuses.
    assert!(b.admit(actor).is_ok());
    b.flush().await;
    let refused = b.admit(actor).unwrap_err();
    assert_eq!(refused.status.as_u16(), 429);
    assert!(refused.retry_after.is_some_and(|s| s <= 60));
    assert_eq!(
        first.usage("requests:token:shared", window_start()).await.unwrap(),
        6,
        "limit + what B admitted before its flush"
    );
    // Another key is untouched.
    assert!(b.admit("token:other").is_ok());
    second.close().await;
    first.close().await;
}

/// The start of the current minute, in seconds since 1970.
fn window_start() -> i64 {
    let now = chrono::Utc::now().timestamp();
    now - now.rem_euclid(60)
}

/// Wrong passwords until the email is locked; a restart keeps the lock.
#[tokio::test]
async fn the_sign_in_lockout_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("quire.db");
    let store = Store::open(&path).await.unwrap();
    let throttle = Throttle::default();
    for _ in 0..5 {
        let answer = people::sign_in(&store, &throttle, "Ada@example.org", "not the password", None).await.unwrap();
        assert!(matches!(answer, SignIn::Refused));
    }
    let answer = people::sign_in(&store, &throttle, "ada@example.org", "not the password", None).await.unwrap();
    assert!(matches!(answer, SignIn::Locked(_)), "the fifth failure locked it");
    store.close().await;

    let store = Store::open(&path).await.unwrap();
    let answer =
        people::sign_in(&store, &Throttle::default(), "ada@example.org", "not the password", None).await.unwrap();
    let SignIn::Locked(wait) = answer else { panic!("a restart forgot the lock") };
    assert!(wait.as_secs() <= 30 && wait.as_secs() >= 20, "{wait:?}");
    // Another email is not locked.
    let answer =
        people::sign_in(&store, &Throttle::default(), "bob@example.org", "not the password", None).await.unwrap();
    assert!(matches!(answer, SignIn::Refused));
    store.close().await;
}

/// A test app whose agents run on `base`, with these limits of fair use.
async fn limited(base: &str, limits: quire_agent::FairUse) -> TestApp {
    let profiles = quire_agent::testing::fake_profiles(base);
    TestApp::build(move |s| {
        let s = s.with_profiles(profiles);
        s.runtime().set_fair_use(limits);
        s
    })
    .await
}

/// Starts a turn as `token` and waits for its end; answers the reply.
async fn turn(app: &TestApp, token: &str, message: &str) -> common::Reply {
    let started = app.chat(token, serde_json::json!({ "message": message })).await;
    if started.status == 202 {
        let id = started.body["sessionId"].as_str().unwrap();
        app.sse(&format!("/api/v1/sessions/{id}/events"), token, None, "RUN_FINISHED").await;
    }
    started
}

#[tokio::test]
async fn agent_turns_past_the_hours_limit_answer_429_per_token() {
    use quire_agent::testing::{openai_stream, serve};
    let (fake, base) = serve().await;
    let app = limited(&base, quire_agent::FairUse { turns_per_hour: 2, model_tokens_per_day: 0 }).await;
    for i in 0..2 {
        fake.push(openai_stream(&format!("Answer {i}."), &[]));
        assert_eq!(turn(&app, &app.editor, "hello").await.status, 202);
    }
    let refused = turn(&app, &app.editor, "once more").await;
    assert_eq!((refused.status.as_u16(), refused.code()), (429, "LIMIT"), "{}", refused.body);
    assert!(refused.body["error"].as_str().unwrap().contains("2 agent turns an hour"), "{}", refused.body);
    let sessions = app.send("GET", "/api/v1/sessions", Some(&app.editor), None).await;
    assert_eq!(sessions.body["items"].as_array().unwrap().len(), 2, "no session was started: {}", sessions.body);
    // Another token has its own count.
    fake.push(openai_stream("Answer for the admin.", &[]));
    assert_eq!(turn(&app, &app.admin, "hello").await.status, 202);
}

#[tokio::test]
async fn a_sites_daily_model_budget_stops_a_turn_before_its_next_call_and_refuses_the_next() {
    use quire_agent::testing::{openai_stream, serve};
    let (fake, base) = serve().await;
    // Each scripted answer costs 110 tokens (100 in, 10 out).
    let app = limited(&base, quire_agent::FairUse { turns_per_hour: 0, model_tokens_per_day: 100 }).await;
    let about = app.page_id("about").await;
    fake.push(openai_stream("", &[("g1", "getPage", &serde_json::json!({ "id": about }).to_string())]));
    fake.push(openai_stream("Never asked for.", &[]));
    let started = turn(&app, &app.editor, "read the about page").await;
    assert_eq!(started.status, 202, "{}", started.body);
    let session = app.get(&format!("/api/v1/sessions/{}", started.body["sessionId"].as_str().unwrap())).await;
    let said = session.body.to_string();
    assert!(said.contains("daily budget of 100 model tokens is spent"), "{said}");
    assert_eq!(fake.requests().len(), 1, "the second model call was never made");

    let refused = app.chat(&app.author, serde_json::json!({ "message": "hello" })).await;
    assert_eq!((refused.status.as_u16(), refused.code()), (429, "LIMIT"), "{}", refused.body);
    assert!(refused.body["error"].as_str().unwrap().contains("renews at 00:00 UTC"), "{}", refused.body);
}

/// Two replicas take agent turns from one count in the database: the
/// limit holds whichever replica a turn starts on.
#[tokio::test]
async fn two_replicas_share_a_turn_limit() {
    let dir = tempfile::tempdir().unwrap();
    let first = quire_store::testing::open(dir.path()).await.unwrap();
    let second = Store::open_at(first.location().clone()).await.unwrap();
    let take = |by| quire_store::UsageAdd { key: "turns:user:shared".into(), window_start: 7_200, by };
    let mut taken = Vec::new();
    for i in 0..6 {
        let store = if i % 2 == 0 { &first } else { &second };
        taken.push(store.take_usage(take(1), 4).await.unwrap().is_some());
    }
    assert_eq!(taken, [true, true, true, true, false, false]);
    assert_eq!(second.usage("turns:user:shared", 7_200).await.unwrap(), 4);
    second.close().await;
    first.close().await;
}

/// `/mcp` counts each message against the token's requests, as REST does,
/// and refuses past the limit with a JSON-RPC error under 429 and `Retry-After`.
#[tokio::test]
async fn mcp_messages_count_against_the_request_limit() {
    let app = TestApp::build(|s| s.with_request_limit(2)).await;
    let post = || {
        let body = serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } },
        });
        Request::post("/mcp")
            .header("authorization", format!("Bearer {}", app.editor))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("host", "127.0.0.1")
            .body(Body::from(body.to_string()))
            .unwrap()
    };
    for _ in 0..2 {
        assert_eq!(app.raw(post()).await.status, 200);
    }
    let refused = app.raw(post()).await;
    assert_eq!(refused.status, 429);
    assert!(refused.headers.get("retry-after").is_some());
    let body = refused.json();
    assert_eq!(body["error"]["data"]["code"], "LIMIT", "{body}");
}
