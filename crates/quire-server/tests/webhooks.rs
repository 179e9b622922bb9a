//! Webhooks: a subscription hears of every change of its site through the
//! outbox written with the change, signed as Standard Webhooks say, in the
//! order of each record's changes, retried until the receiver takes it; a
//! refused write sends nothing; an archived subscription hears nothing
//! more; a delivery can be sent again with its id. (The signatures are
//! checked by the `standardwebhooks` package too, in tests/webhooks.)

mod common;

use axum::http::HeaderMap;
use common::TestApp;
use quire_agent::testing::{openai_stream, serve};
use quire_app::schedules::Scheduler;
use quire_core::model::ChangeContext;
use quire_store::NewWebhook;
use quire_tools::webhooks::{Sender, new_secret, signature};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the receiver saw: every attempt's id, and the bodies it took.
#[derive(Default, Clone)]
struct Seen {
    tries: HashMap<String, u32>,
    taken: Vec<(HeaderMap, String)>,
}

/// A receiver on 127.0.0.1 that fails the first `fail` attempts of each
/// delivery with 500; answers its URL and what it saw.
async fn receiver(fail: u32) -> (String, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let kept = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: String| {
            let seen = Arc::clone(&kept);
            async move {
                let id = headers.get("webhook-id").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
                let mut seen = seen.lock().unwrap();
                let tries = seen.tries.entry(id).or_default();
                *tries += 1;
                if *tries <= fail {
                    return axum::http::StatusCode::INTERNAL_SERVER_ERROR;
                }
                seen.taken.push((headers, body));
                axum::http::StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

/// A sender that may reach this machine and retries at once.
fn sender(app: &TestApp) -> Sender {
    let net = quire_net::NetClient::new(&["127.0.0.1".to_string()], quire_net::Limits::default()).unwrap();
    Sender::new(app.store.clone(), net).with_retries(vec![Duration::ZERO; 8])
}

fn admin() -> ChangeContext {
    quire_store::testing::person()
}

#[tokio::test]
async fn every_change_reaches_the_subscriber_signed_in_order_per_record_despite_failures() {
    let app = TestApp::new().await;
    // Over REST a private address is refused, as the external tools' are.
    let refused = app.post("/api/v1/webhooks", json!({ "url": "http://127.0.0.1:9/hook" })).await;
    assert_eq!((refused.status.as_u16(), refused.body["field"].as_str()), (422, Some("url")), "{}", refused.body);
    let bad =
        app.post("/api/v1/webhooks", json!({ "url": "https://hooks.example.com/x", "events": ["exploded"] })).await;
    assert_eq!((bad.status.as_u16(), bad.body["field"].as_str()), (422, Some("events")), "{}", bad.body);
    let public = app.post("/api/v1/webhooks", json!({ "url": "https://hooks.example.com/x", "kinds": ["page"] })).await;
    assert_eq!(public.status, 201, "{}", public.body);
    assert!(public.body["secret"].as_str().unwrap().starts_with("whsec_"));
    assert_eq!(app.send("GET", "/api/v1/webhooks", Some(&app.editor), None).await.status, 403, "admins only");
    app.send("DELETE", &format!("/api/v1/webhooks/{}", public.body["id"].as_str().unwrap()), Some(&app.admin), None)
        .await;

    // A subscription to a receiver here (an operator's allow list would
    // admit it), which fails the first two attempts of every delivery.
    let (url, seen) = receiver(2).await;
    let secret = new_secret().unwrap();
    let new = NewWebhook {
        env: None,
        url,
        events: Vec::new(),
        kinds: Vec::new(),
        description: "build the site".into(),
        secret: secret.clone(),
    };
    let hook = app.store.create_webhook(&admin(), &app.scope, new).await.unwrap();
    let before: i64 = app.get("/api/v1/changes?limit=1").await.body["items"][0]["id"].as_i64().unwrap();

    let pages = [app.page_id("about").await, app.page_id("team").await, app.page_id("pricing").await];
    for round in 0..20 {
        for (i, page) in pages.iter().enumerate() {
            let patched =
                app.patch(&format!("/api/v1/pages/{page}"), json!({ "name": format!("Page {i}, take {round}") })).await;
            assert_eq!(patched.status, 200, "{}", patched.body);
        }
    }
    // A refused write logs nothing, so sends nothing.
    let refused = app.patch(&format!("/api/v1/pages/{}", pages[0]), json!({ "slug": "Not A Slug!" })).await;
    assert_eq!(refused.status, 422);
    let published = app.post(&format!("/api/v1/pages/{}/publish", pages[1]), json!({})).await;
    assert_eq!(published.status, 200, "{}", published.body);

    let sender = sender(&app);
    while sender.run_due().await.unwrap() > 0 {}
    let changes = app.get("/api/v1/changes?limit=100").await.body["items"].as_array().unwrap().clone();
    let logged: Vec<i64> = changes.iter().filter_map(|c| c["id"].as_i64()).filter(|id| *id > before).collect();

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.taken.len(), logged.len(), "one delivery per change");
    assert!(seen.tries.values().all(|t| *t == 3), "each delivered on its third attempt");
    let mut last: HashMap<String, i64> = HashMap::new();
    let mut types = Vec::new();
    for (headers, body) in &seen.taken {
        let header = |n: &str| headers.get(n).unwrap().to_str().unwrap().to_string();
        let (id, timestamp) = (header("webhook-id"), header("webhook-timestamp").parse::<i64>().unwrap());
        assert_eq!(header("webhook-signature"), signature(std::slice::from_ref(&secret), &id, timestamp, body));
        let payload: Value = serde_json::from_str(body).unwrap();
        let record = payload["data"]["id"].as_str().unwrap().to_string();
        let seq = payload["data"]["changeId"].as_i64().unwrap();
        assert!(last.insert(record.clone(), seq).is_none_or(|prior| prior < seq), "{record}'s events in order");
        types.push(payload["type"].as_str().unwrap().to_string());
    }
    assert!(types.contains(&"page.updated".to_string()) && types.contains(&"page.published".to_string()), "{types:?}");
    // Each body carries the record as its change left it (built from the
    // change log when sent): the last update of each page is its last name.
    for (i, page) in pages.iter().enumerate() {
        let last = seen.taken.iter().rev().find_map(|(_, body)| {
            let payload: Value = serde_json::from_str(body).unwrap();
            (payload["type"] == "page.updated" && payload["data"]["id"] == page.as_str()).then_some(payload)
        });
        assert_eq!(last.unwrap()["data"]["record"]["name"], format!("Page {i}, take 19"));
    }

    // The delivery log, and a delivery sent again with its id.
    let log = app.get(&format!("/api/v1/webhooks/{}/deliveries?limit=5", hook.id)).await;
    let first = &log.body["items"][0];
    assert_eq!((first["status"].as_str(), first["attempts"].as_i64()), (Some("delivered"), Some(3)), "{}", log.body);
    let id = first["id"].as_str().unwrap().to_string();
    let again = app.post(&format!("/api/v1/webhook-deliveries/{id}/redeliver"), json!({})).await;
    assert_eq!(again.status, 200, "{}", again.body);
    while sender.run_due().await.unwrap() > 0 {}
    let seen_now = app.store.webhook_deliveries(&app.scope, &hook.id, 1).await.unwrap();
    assert_eq!(seen_now[0].attempts, 4);

    // Archived: nothing more is enqueued.
    let archived = app.send("DELETE", &format!("/api/v1/webhooks/{}", hook.id), Some(&app.admin), None).await;
    assert_eq!(archived.status, 200, "{}", archived.body);
    app.patch(&format!("/api/v1/pages/{}", pages[2]), json!({ "name": "After the archive" })).await;
    assert!(app.store.claim_deliveries(Duration::from_secs(1), 8).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_subscription_hears_only_its_events_and_kinds_and_a_rotation_signs_with_both_secrets() {
    let app = TestApp::new().await;
    let (url, seen) = receiver(0).await;
    let old = new_secret().unwrap();
    let new = NewWebhook {
        env: Some(app.scope.env.clone()),
        url,
        events: vec!["published".into()],
        kinds: vec!["page".into()],
        description: String::new(),
        secret: old.clone(),
    };
    let hook = app.store.create_webhook(&admin(), &app.scope, new).await.unwrap();
    let rotated = app.post(&format!("/api/v1/webhooks/{}/secrets", hook.id), json!({})).await;
    assert_eq!((rotated.status.as_u16(), rotated.body["secrets"].as_i64()), (201, Some(2)), "{}", rotated.body);
    let newer = rotated.body["secret"].as_str().unwrap().to_string();
    let about = app.page_id("about").await;
    app.patch(&format!("/api/v1/pages/{about}"), json!({ "name": "Not sent: an update" })).await;
    app.post(&format!("/api/v1/pages/{about}/publish"), json!({})).await;
    let sender = sender(&app);
    while sender.run_due().await.unwrap() > 0 {}
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.taken.len(), 1, "only the page's publication");
    let (headers, body) = &seen.taken[0];
    let header = |n: &str| headers.get(n).unwrap().to_str().unwrap().to_string();
    let (id, timestamp) = (header("webhook-id"), header("webhook-timestamp").parse::<i64>().unwrap());
    assert_eq!(header("webhook-signature"), signature(&[newer, old], &id, timestamp, body));
    let retired = app.send("DELETE", &format!("/api/v1/webhooks/{}/secrets", hook.id), Some(&app.admin), None).await;
    assert_eq!(retired.body["secrets"], 1, "{}", retired.body);
}

/// Two replicas on one database (PostgreSQL with `QUIRE_TEST_DATABASE_URL`)
/// write changes at once and both run senders: each change is enqueued
/// once, and each delivery reaches the receiver, with one webhook-id per
/// change.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_enqueue_each_event_once_and_both_send() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, scope) = quire_store::testing::replicas(dir.path()).await.unwrap();
    let (url, seen) = receiver(1).await;
    let new = NewWebhook {
        env: None,
        url,
        events: vec!["updated".into()],
        kinds: vec!["page".into()],
        description: String::new(),
        secret: new_secret().unwrap(),
    };
    a.create_webhook(&admin(), &scope, new).await.unwrap();
    let pages: Vec<String> = {
        let listed = a.pages(&scope, &Default::default(), 10, None).await.unwrap().items;
        listed.into_iter().map(|p| p.id).take(4).collect()
    };
    let write = |store: quire_store::Store, scope: quire_store::Scope, pages: Vec<String>, who: &'static str| {
        tokio::spawn(async move {
            for round in 0..15 {
                for page in &pages {
                    let patch =
                        quire_core::input::PagePatch { name: Some(format!("{who} {round}")), ..Default::default() };
                    // A conflict with the other replica's write is a refused write: nothing sent.
                    let _ = store.update_page(&admin(), &scope, page, patch).await;
                }
            }
        })
    };
    let (wa, wb) = (write(a.clone(), scope.clone(), pages.clone(), "a"), write(b.clone(), scope.clone(), pages, "b"));
    wa.await.unwrap();
    wb.await.unwrap();
    let net = || quire_net::NetClient::new(&["127.0.0.1".to_string()], quire_net::Limits::default()).unwrap();
    let (sa, sb) = (
        Sender::new(a.clone(), net()).with_retries(vec![Duration::ZERO; 8]),
        Sender::new(b.clone(), net()).with_retries(vec![Duration::ZERO; 8]),
    );
    let (ra, rb) = tokio::join!(async { while sa.run_due().await.unwrap() > 0 {} }, async {
        while sb.run_due().await.unwrap() > 0 {}
    });
    let _ = (ra, rb);
    while sa.run_due().await.unwrap() + sb.run_due().await.unwrap() > 0 {}
    let filter = quire_store::ChangeFilter { entity: Some(quire_core::model::EntityKind::Page), ..Default::default() };
    let mut updates = Vec::new();
    let mut cursor = None;
    loop {
        let page = a.changes(&scope, &filter, 100, cursor.as_deref()).await.unwrap();
        updates.extend(
            page.items
                .iter()
                .filter(|c| c.action == quire_core::model::ChangeAction::Update && c.actor == "user:ana")
                .map(|c| c.id),
        );
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert!(updates.len() >= 60, "{} updates", updates.len());
    let seen = seen.lock().unwrap().clone();
    let mut delivered: Vec<i64> = seen
        .taken
        .iter()
        .map(|(_, body)| serde_json::from_str::<Value>(body).unwrap()["data"]["changeId"].as_i64().unwrap())
        .collect();
    delivered.sort();
    let mut ids: Vec<&String> = seen.tries.keys().collect();
    ids.dedup();
    assert_eq!(ids.len(), delivered.len(), "one webhook-id per delivery");
    updates.sort();
    assert_eq!(delivered, updates, "each update delivered once");
    b.close().await;
    a.close().await;
}

#[tokio::test]
async fn only_the_head_of_a_records_queue_is_attempted_and_a_waiting_queue_does_not_keep_the_sender_busy() {
    let app = TestApp::new().await;
    // A receiver that never takes anything, and an hour between attempts.
    let (url, seen) = receiver(u32::MAX).await;
    let new = NewWebhook {
        env: None,
        url,
        events: Vec::new(),
        kinds: Vec::new(),
        description: String::new(),
        secret: new_secret().unwrap(),
    };
    let hook = app.store.create_webhook(&admin(), &app.scope, new).await.unwrap();
    let (about, team) = (app.page_id("about").await, app.page_id("team").await);
    for take in 0..3 {
        app.patch(&format!("/api/v1/pages/{about}"), json!({ "name": format!("About, take {take}") })).await;
    }
    app.patch(&format!("/api/v1/pages/{team}"), json!({ "name": "Team, again" })).await;

    let hourly = sender(&app).with_retries(vec![Duration::from_secs(3600); 3]);
    assert_eq!(hourly.run_due().await.unwrap(), 2, "one attempt per record: the oldest of each queue");
    assert_eq!(seen.lock().unwrap().tries.len(), 2);
    assert!(app.store.claim_deliveries(Duration::from_secs(60), 8).await.unwrap().is_empty(), "the rest wait");
    let due = app.store.next_delivery_due().await.unwrap().expect("something waits");
    assert!(due > chrono::Utc::now() + chrono::Duration::minutes(59), "next due in an hour, not now: {due}");

    // A delivery sent again is due at once; when it fails for good, the
    // record's next change heads its queue.
    let log = app.store.webhook_deliveries(&app.scope, &hook.id, 10).await.unwrap();
    let abouts: Vec<_> = log.iter().rev().filter(|d| d.payload["data"]["id"] == about.as_str()).collect();
    assert_eq!(abouts.len(), 3);
    app.post(&format!("/api/v1/webhook-deliveries/{}/redeliver", abouts[0].id), json!({})).await;
    let claimed = app.store.claim_deliveries(Duration::from_secs(60), 8).await.unwrap();
    assert_eq!(claimed.iter().map(|c| &c.id).collect::<Vec<_>>(), vec![&abouts[0].id]);
    app.store.record_attempt(&claimed[0], false, Some(410), Some("gone"), None).await.unwrap();
    let claimed = app.store.claim_deliveries(Duration::from_secs(60), 8).await.unwrap();
    assert_eq!(claimed.iter().map(|c| &c.id).collect::<Vec<_>>(), vec![&abouts[1].id], "in the order of its changes");
    assert_eq!(claimed[0].subject, format!("page:{about}"));
}

#[tokio::test]
async fn releases_schedules_approvals_and_turns_are_announced_to_those_who_subscribe() {
    let (fake, base) = serve().await;
    let app = TestApp::with_llm(&base).await;
    let (url, seen) = receiver(0).await;
    let kinds: Vec<String> = quire_store::WEBHOOK_KINDS.iter().map(|k| k.to_string()).collect();
    let new = NewWebhook {
        env: None,
        url,
        events: Vec::new(),
        kinds,
        description: String::new(),
        secret: new_secret().unwrap(),
    };
    app.store.create_webhook(&admin(), &app.scope, new).await.unwrap();
    let bad = app.post("/api/v1/webhooks", json!({ "url": "https://hooks.example.com/x", "kinds": ["launch"] })).await;
    assert_eq!((bad.status.as_u16(), bad.body["field"].as_str()), (422, Some("kinds")), "{}", bad.body);
    assert!(bad.error().contains("release, schedule, turn, approval"), "{}", bad.body);

    // A release published.
    let about = app.page_id("about").await;
    app.patch(&format!("/api/v1/pages/{about}"), json!({ "name": "About us" })).await;
    let release =
        app.post("/api/v1/releases", json!({ "name": "Launch" })).await.body["id"].as_str().unwrap().to_string();
    app.post(&format!("/api/v1/releases/{release}/items"), json!({ "entity": "page", "id": about })).await;
    assert_eq!(app.post(&format!("/api/v1/releases/{release}/publish"), json!({})).await.status, 200);

    // A schedule run.
    let soon = (chrono::Utc::now() + chrono::Duration::milliseconds(200)).to_rfc3339();
    let off = app
        .post("/api/v1/schedules", json!({ "entity": "page", "id": "team", "action": "unpublish", "at": soon }))
        .await;
    assert_eq!(off.status, 201, "{}", off.body);
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(Scheduler::new(app.store.clone()).run_due().await.unwrap(), 1);

    // An approval waiting, then the turn finished once it is answered.
    app.script_archive_contact(&fake, "").await;
    fake.push(openai_stream("Archived contact.", &[]));
    let started = app.chat(&app.editor, json!({ "message": "delete contact" })).await;
    let session = started.body["sessionId"].as_str().unwrap().to_string();
    let events = app.sse(&format!("/api/v1/sessions/{session}/events"), &app.editor, None, "RUN_FINISHED").await;
    let (last, _, paused) = events.last().unwrap().clone();
    let approval = paused["outcome"]["interrupts"][0]["id"].as_str().unwrap().to_string();
    let ok = app.send("POST", &format!("/api/v1/approvals/{approval}/approve"), Some(&app.editor), None).await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    app.sse(&format!("/api/v1/sessions/{session}/events"), &app.editor, Some(&last), "RUN_FINISHED").await;

    let sender = sender(&app);
    while sender.run_due().await.unwrap() > 0 {}
    let mut taken: Vec<Value> =
        seen.lock().unwrap().taken.iter().map(|(_, body)| serde_json::from_str(body).unwrap()).collect();
    // Different subjects are sent at once: their order is the receiver's.
    let order = ["release.published", "schedule.ran", "approval.waiting", "turn.finished"];
    taken.sort_by_key(|p| order.iter().position(|t| p["type"] == *t));
    let types: Vec<&str> = taken.iter().map(|p| p["type"].as_str().unwrap()).collect();
    assert_eq!(types, order, "each once, and no record's change");
    let data = |i: usize| &taken[i]["data"];
    assert_eq!((data(0)["id"].as_str(), data(0)["name"].as_str()), (Some(release.as_str()), Some("Launch")));
    assert_eq!(data(0)["documents"][0]["id"], about.as_str());
    assert_eq!((data(1)["id"].as_str(), data(1)["outcome"].as_str()), (off.body["id"].as_str(), Some("done")));
    assert_eq!((data(2)["id"].as_str(), data(2)["tool"].as_str()), (Some(approval.as_str()), Some("deletePage")));
    assert_eq!((data(3)["sessionId"].as_str(), data(3)["status"].as_str()), (Some(session.as_str()), Some("idle")));
    assert!(data(3)["steps"].as_i64().unwrap() >= 2, "{}", data(3));
}

#[tokio::test]
async fn a_backlog_beyond_the_outbox_window_waits_in_the_change_log_and_none_is_lost() {
    let app = TestApp::new().await;
    let (url, seen) = receiver(0).await;
    let new = NewWebhook {
        env: None,
        url,
        events: vec!["updated".into()],
        kinds: vec!["page".into()],
        description: String::new(),
        secret: new_secret().unwrap(),
    };
    let hook = app.store.create_webhook(&admin(), &app.scope, new).await.unwrap();
    let pages = [app.page_id("about").await, app.page_id("team").await, app.page_id("pricing").await];
    for round in 0..400 {
        for page in &pages {
            let patch = quire_core::input::PagePatch { name: Some(format!("Take {round}")), ..Default::default() };
            app.store.update_page(&admin(), &app.scope, page, patch).await.unwrap();
        }
    }
    let waiting = app.store.webhook_deliveries(&app.scope, &hook.id, 2_000).await.unwrap();
    if std::env::var("QUIRE_TEST_DATABASE_URL").is_err() {
        // SQLite: the outbox holds its window; the rest wait behind the cursor.
        assert_eq!(waiting.len(), 1_000, "the outbox's window");
    } else {
        assert_eq!(waiting.len(), 1_200, "each change enqueued with it");
    }
    let sender = sender(&app);
    while sender.run_due().await.unwrap() > 0 {}
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.taken.len(), 1_200, "every change delivered once");
    let mut last: HashMap<String, i64> = HashMap::new();
    for (_, body) in &seen.taken {
        let payload: Value = serde_json::from_str(body).unwrap();
        let (record, seq) =
            (payload["data"]["id"].as_str().unwrap().to_string(), payload["data"]["changeId"].as_i64().unwrap());
        assert!(last.insert(record, seq).is_none_or(|prior| prior < seq), "each page's events in order");
    }
    assert_eq!(app.store.webhook_deliveries(&app.scope, &hook.id, 2_000).await.unwrap().len(), 1_200);
}
