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
