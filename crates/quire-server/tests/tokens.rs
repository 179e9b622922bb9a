//! API tokens over HTTP: list without secrets, create with the secret shown
//! once, revoke with immediate effect (open event streams end too), tenancy
//! of revocation, expiry checks, and revocations made by another process.

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::TestApp;
use http_body_util::BodyExt;
use quire_agent::testing::{Fake, openai_stream, serve};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

/// Ids of the tokens a list answered.
fn ids(list: &Value) -> Vec<String> {
    list["items"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap().to_string()).collect()
}

/// Creates a token over REST as the admin; answers (id, secret).
async fn create(app: &TestApp, body: Value) -> (String, String) {
    let created = app.post("/api/v1/tokens", body).await;
    assert_status!(created, 201);
    (created.body["id"].as_str().unwrap().to_string(), created.body["secret"].as_str().unwrap().to_string())
}

#[tokio::test]
async fn admins_list_create_and_revoke_tokens_and_a_revoked_token_is_refused_at_once() {
    let app = TestApp::new().await;
    let before = app.get("/api/v1/tokens").await;
    assert_status!(before, 200);
    // admin, editor, author, viewer and the expired one of the demo site;
    // not the other site's admin.
    assert_eq!(before.body["count"], 5, "{}", before.body);
    for t in before.body["items"].as_array().unwrap() {
        let keys: Vec<&str> = t.as_object().unwrap().keys().map(String::as_str).collect();
        assert!(!keys.iter().any(|k| k.contains("secret") || k.contains("hash")), "{keys:?}");
        assert_eq!(t["siteId"], app.scope.site_id.as_str());
    }

    let created = app
        .post(
            "/api/v1/tokens",
            json!({ "name": "ci", "group": "editor", "environments": ["staging"], "expiresInDays": 30 }),
        )
        .await;
    assert_status!(created, 201);
    let secret = created.body["secret"].as_str().unwrap().to_string();
    let id = created.body["id"].as_str().unwrap().to_string();
    assert!(secret.starts_with("qk_") && secret.starts_with(created.body["prefix"].as_str().unwrap()));
    assert_eq!(created.body["group"], "editor");
    assert_eq!(created.body["environments"], json!(["staging"]));
    let expires: chrono::DateTime<chrono::Utc> = serde_json::from_value(created.body["expiresAt"].clone()).unwrap();
    assert!((expires - chrono::Utc::now() - chrono::TimeDelta::days(30)).num_seconds().abs() < 60);

    // The secret works (and is now cached by the server) for its environment only.
    let me = app.send("GET", "/api/v1/me", Some(&secret), None).await;
    assert_status!(me, 200);
    assert_eq!(me.body["environment"], "staging");
    let prod = app.send_raw("GET", "/api/v1/me", Some(&secret), None, &[("x-quire-env", "production")]).await;
    assert_status!(prod, 403);

    let list = app.get("/api/v1/tokens").await;
    assert_eq!(list.body["count"], 6);
    assert!(ids(&list.body).contains(&id));
    assert!(!list.body.to_string().contains(&secret), "a list never carries a secret");

    // Its use is recorded (in the background, once a minute at most).
    let mut used = Value::Null;
    for _ in 0..50 {
        let list = app.get("/api/v1/tokens").await;
        used = list.body["items"].as_array().unwrap().iter().find(|t| t["id"] == id.as_str()).unwrap().clone();
        if !used["lastUsedAt"].is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(used["lastUsedAt"].is_string(), "{used}");

    let revoked = app.delete(&format!("/api/v1/tokens/{id}")).await;
    assert_status!(revoked, 200);
    assert_eq!(revoked.body["id"], id.as_str());
    // Refused at once, although the server had it cached.
    let me = app.send("GET", "/api/v1/me", Some(&secret), None).await;
    assert_status!(me, 401);
    assert_eq!(me.code(), "UNAUTHORIZED");
    let list = app.get("/api/v1/tokens").await;
    assert_eq!(list.body["count"], 5);
    assert!(!ids(&list.body).contains(&id));
    // Revoking again: it is gone.
    let again = app.delete(&format!("/api/v1/tokens/{id}")).await;
    assert_status!(again, 404);
    assert_eq!(again.code(), "NOT_FOUND");
}

#[tokio::test]
async fn only_admins_manage_tokens() {
    let app = TestApp::new().await;
    let editor_id = app.send("GET", "/api/v1/me", Some(&app.editor), None).await.body["tokenId"].clone();
    let editor_id = editor_id.as_str().unwrap();
    for token in [&app.editor, &app.author, &app.viewer] {
        let list = app.send("GET", "/api/v1/tokens", Some(token), None).await;
        assert_status!(list, 403);
        assert_eq!(list.code(), "FORBIDDEN");
        let create =
            app.send("POST", "/api/v1/tokens", Some(token), Some(json!({ "name": "x", "group": "admin" }))).await;
        assert_status!(create, 403);
        let revoke = app.send("DELETE", &format!("/api/v1/tokens/{editor_id}"), Some(token), None).await;
        assert_status!(revoke, 403);
    }
    assert_status!(app.send("GET", "/api/v1/tokens", None, None).await, 401);
    assert_status!(app.send("GET", "/api/v1/tokens", Some(&app.expired), None).await, 401);
    assert_status!(app.send("GET", "/api/v1/me", Some(&app.editor), None).await, 200);
}

#[tokio::test]
async fn another_sites_admin_can_neither_see_nor_revoke_a_token() {
    let app = TestApp::new().await;
    let editor_id = app.send("GET", "/api/v1/me", Some(&app.editor), None).await.body["tokenId"].clone();
    let editor_id = editor_id.as_str().unwrap().to_string();

    let theirs = app.send("GET", "/api/v1/tokens", Some(&app.other_admin), None).await;
    assert_status!(theirs, 200);
    assert_eq!(theirs.body["count"], 1, "only the other site's own admin: {}", theirs.body);
    assert!(!ids(&theirs.body).contains(&editor_id));

    let revoke = app.send("DELETE", &format!("/api/v1/tokens/{editor_id}"), Some(&app.other_admin), None).await;
    assert_status!(revoke, 404);
    assert_eq!(revoke.error(), format!("token {editor_id} not found"));
    assert_status!(app.send("GET", "/api/v1/me", Some(&app.editor), None).await, 200);

    // A token the other admin creates belongs to their site, whatever it asks.
    let created = app
        .send(
            "POST",
            "/api/v1/tokens",
            Some(&app.other_admin),
            Some(json!({ "name": "theirs", "group": "viewer", "environments": ["staging"] })),
        )
        .await;
    assert_status!(created, 422);
    assert_eq!(created.body["field"], "environments");
    let created = app
        .send("POST", "/api/v1/tokens", Some(&app.other_admin), Some(json!({ "name": "theirs", "group": "viewer" })))
        .await;
    assert_status!(created, 201);
    assert_eq!(created.body["siteId"], app.other_scope.site_id.as_str());
}

#[tokio::test]
async fn bad_token_requests_are_refused_and_create_nothing() {
    let app = TestApp::new().await;
    let past = (chrono::Utc::now() - chrono::TimeDelta::minutes(5)).to_rfc3339();
    let future = (chrono::Utc::now() + chrono::TimeDelta::days(1)).to_rfc3339();
    let cases = [
        (json!({ "name": "x", "group": "editor", "expiresInDays": 0 }), 422, "expiresInDays", "at least 1 day"),
        (json!({ "name": "x", "group": "editor", "expiresInDays": -3 }), 422, "expiresInDays", "at least 1 day"),
        (json!({ "name": "x", "group": "editor", "expiresAt": past }), 422, "expiresAt", "is not in the future"),
        (
            json!({ "name": "x", "group": "editor", "expiresAt": future, "expiresInDays": 2 }),
            422,
            "expiresInDays",
            "either expiresAt or expiresInDays",
        ),
        (json!({ "name": "x", "group": "editor", "expiresInDays": i64::MAX }), 422, "expiresInDays", "too far"),
        (
            json!({ "name": "x", "group": "owner" }),
            400,
            "group",
            "\"owner\" is not one of viewer, author, editor, admin",
        ),
        (json!({ "name": "x", "group": "editor", "secret": "mine-0123456789abc" }), 400, "secret", "unknown field"),
        (json!({ "name": " ", "group": "editor" }), 422, "name", "must not be empty"),
        (json!({ "group": "editor" }), 400, "", "missing field `name`"),
        (json!({ "name": "x", "group": "editor", "approvalPolicy": "yolo" }), 422, "approvalPolicy", "not one of"),
        (json!({ "name": "x", "group": "editor", "environments": ["moon"] }), 422, "environments", "moon"),
    ];
    for (body, status, field, message) in cases {
        let reply = app.post("/api/v1/tokens", body.clone()).await;
        assert_eq!(reply.status.as_u16(), status, "{body} → {}", reply.body);
        if !field.is_empty() {
            assert_eq!(reply.body["field"], field, "{body} → {}", reply.body);
        }
        assert!(reply.error().contains(message), "{body} → {}", reply.body);
    }
    assert_status!(app.send_raw("POST", "/api/v1/tokens", Some(&app.admin), Some("{".into()), &[]).await, 400);
    assert_eq!(app.get("/api/v1/tokens").await.body["count"], 5, "nothing was created");
}

#[tokio::test]
async fn a_token_limited_to_some_environments_cannot_grant_others() {
    let app = TestApp::new().await;
    let (_, staging_admin) =
        create(&app, json!({ "name": "staging admin", "group": "admin", "environments": ["staging"] })).await;
    let wider = app
        .send(
            "POST",
            "/api/v1/tokens",
            Some(&staging_admin),
            Some(json!({ "name": "x", "group": "viewer", "environments": ["production"] })),
        )
        .await;
    assert_status!(wider, 403);
    assert!(wider.error().contains("\"production\""), "{}", wider.body);
    // Without a list, the new token gets the creator's environments, not all.
    let narrow =
        app.send("POST", "/api/v1/tokens", Some(&staging_admin), Some(json!({ "name": "x", "group": "viewer" }))).await;
    assert_status!(narrow, 201);
    assert_eq!(narrow.body["environments"], json!(["staging"]));
}

/// Reads an event stream until it ends (answering true) or `limit` passes
/// (false), collecting the event names seen.
async fn read_until_end(body: &mut Body, limit: Duration, seen: &mut Vec<String>) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => return false,
            Ok(None) => return true,
            Ok(Some(frame)) => {
                let frame = frame.unwrap();
                if let Some(data) = frame.data_ref() {
                    for line in String::from_utf8_lossy(data).lines() {
                        if let Some(kind) = line.strip_prefix("event: ").or_else(|| line.strip_prefix("event:")) {
                            seen.push(kind.to_string());
                        }
                    }
                }
            }
        }
    }
}

/// Opens the events of a finished chat turn as a fresh editor token, and
/// reads them: the turn's events arrive and the stream stays open for later
/// turns. Answers the token's id and secret, the open stream and the events
/// seen.
async fn open_stream(app: &TestApp, fake: &Fake) -> (String, String, Body, Vec<String>) {
    let (id, secret) = create(app, json!({ "name": "chatter", "group": "editor" })).await;
    fake.push(openai_stream("Hello.", &[]));
    let session = app.start_chat(&secret, "hi").await;
    let req = Request::builder()
        .uri(format!("/api/v1/sessions/{session}/events"))
        .header("authorization", format!("Bearer {secret}"))
        .body(Body::empty())
        .unwrap();
    let res = app.router.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let mut body = res.into_body();
    let mut seen = Vec::new();
    assert!(!read_until_end(&mut body, Duration::from_millis(700), &mut seen).await, "ended early: {seen:?}");
    assert!(seen.contains(&"RUN_FINISHED".to_string()), "{seen:?}");
    (id, secret, body, seen)
}

#[tokio::test]
async fn an_open_event_stream_ends_when_its_token_is_revoked() {
    let (fake, base) = serve().await;
    let app = TestApp::with_llm(&base).await;
    let (id, _, mut body, mut seen) = open_stream(&app, &fake).await;
    assert_status!(app.delete(&format!("/api/v1/tokens/{id}")).await, 200);
    assert!(read_until_end(&mut body, Duration::from_secs(2), &mut seen).await, "the stream stayed open");
}

#[tokio::test]
async fn an_open_event_stream_ends_when_its_session_leaves_memory() {
    let (fake, base) = serve().await;
    let runtime: Arc<std::sync::Mutex<Option<Arc<quire_agent::Runtime>>>> = Arc::default();
    let profiles = quire_agent::testing::fake_profiles(&base);
    let app = TestApp::build({
        let keep = Arc::clone(&runtime);
        move |state| {
            let state = state.with_profiles(profiles);
            *keep.lock().unwrap() = Some(Arc::clone(state.runtime()));
            state
        }
    })
    .await;
    let runtime = runtime.lock().unwrap().clone().unwrap();
    let (_, _, mut body, mut seen) = open_stream(&app, &fake).await;
    // Enough later runs end that this ended session's events are dropped.
    for i in 0..quire_agent::events::KEEP_ENDED {
        let other = format!("other-{i}");
        runtime.events().emit(&other, "RUN_STARTED", json!({}));
        runtime.events().emit(&other, "RUN_FINISHED", json!({}));
    }
    assert!(read_until_end(&mut body, Duration::from_secs(2), &mut seen).await, "the stream stayed open");
    assert!(runtime.events().sessions() <= quire_agent::events::KEEP_ENDED, "memory stays bounded");
}

#[tokio::test]
async fn a_revocation_made_by_another_process_takes_effect_within_a_second_or_two() {
    let (fake, base) = serve().await;
    let app = TestApp::serving_with_llm(&base).await;
    let (id, secret, mut body, mut seen) = open_stream(&app, &fake).await;
    assert_status!(app.send("GET", "/api/v1/me", Some(&secret), None).await, 200);

    // Straight in the database, as `quire token revoke` does: this server's
    // state is not told.
    app.store.revoke_token("demo", &id).await.unwrap();
    let started = std::time::Instant::now();
    assert!(read_until_end(&mut body, Duration::from_secs(3), &mut seen).await, "the stream stayed open");
    let mut status = 200;
    while started.elapsed() < Duration::from_secs(3) {
        status = app.send("GET", "/api/v1/me", Some(&secret), None).await.status.as_u16();
        if status == 401 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, 401);
    assert!(started.elapsed() < Duration::from_millis(2500), "took {:?}", started.elapsed());
}
