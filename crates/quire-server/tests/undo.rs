//! Undoing an agent turn: the safety net for what an agent did, cascading
//! archives included, and the end of whatever the turn still waits for.

mod common;

use common::TestApp;
use quire_agent::testing::{Fake, openai_stream, serve};
use serde_json::{Value, json};

async fn app() -> (TestApp, Fake) {
    let (fake, base) = serve().await;
    (TestApp::with_llm(&base).await, fake)
}

/// Starts a turn and waits for its end (or pause); answers the session id.
async fn turn(app: &TestApp, message: &str, session: Option<&str>) -> String {
    let mut body = json!({ "message": message });
    if let Some(s) = session {
        body["sessionId"] = json!(s);
    }
    let started = app.chat(&app.editor, body).await;
    assert_eq!(started.status, 202, "{}", started.body);
    let id = started.body["sessionId"].as_str().unwrap().to_string();
    app.sse(&format!("/api/v1/sessions/{id}/events"), &app.editor, None, "RUN_FINISHED").await;
    id
}

async fn live_sections(app: &TestApp, page: &str) -> usize {
    app.store.sections(&app.scope, page, 100, None).await.map(|l| l.items.len()).unwrap_or(0)
}

#[tokio::test]
async fn a_turn_that_archived_a_page_with_its_cascade_is_undone_whole() {
    let (app, fake) = app().await;
    let about = app.page_id("about").await;
    let team = app.page_id("team").await;
    let (about_sections, team_sections) = (live_sections(&app, &about).await, live_sections(&app, &team).await);
    assert!(about_sections >= 2 && team_sections >= 2, "the demo's about page has sections and a child with sections");
    let rename = json!({ "id": about, "name": "About us" }).to_string();
    let delete = json!({ "ids": [about] }).to_string();
    fake.push(openai_stream("", &[("u1", "updatePage", &rename), ("d1", "deletePage", &delete)]));
    let session = turn(&app, "rename About, then delete it", None).await;
    // a person approves; the turn resumes and archives the whole cascade
    let pending = app.get("/api/v1/approvals").await;
    let id = pending.body["items"][0]["id"].as_str().unwrap().to_string();
    fake.push(openai_stream("Deleted.", &[]));
    let approved = app.send("POST", &format!("/api/v1/approvals/{id}/approve"), Some(&app.editor), None).await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    app.sse(&format!("/api/v1/sessions/{session}/events"), &app.editor, None, "RUN_FINISHED").await;
    for _ in 0..100 {
        if app.store.page(&app.scope, &about).await.is_err() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(app.store.page(&app.scope, &about).await.is_err(), "archived");
    assert!(app.store.page(&app.scope, &team).await.is_err(), "its child went with it");

    let undo = app.send("POST", &format!("/api/v1/sessions/{session}/turns/1/undo"), Some(&app.editor), None).await;
    assert_eq!(undo.status, 200, "{}", undo.body);
    let page = app.store.page(&app.scope, &about).await.expect("about is back");
    assert_eq!(page.name, "About", "and its rename undone");
    assert!(app.store.page(&app.scope, &team).await.is_ok(), "the child is back");
    assert_eq!(live_sections(&app, &about).await, about_sections);
    assert_eq!(live_sections(&app, &team).await, team_sections);
    // the undo is itself logged and can be seen by session
    let actions: Vec<String> =
        undo.body["reverted"].as_array().unwrap().iter().map(|c| c["action"].as_str().unwrap().to_string()).collect();
    assert!(actions.contains(&"restore".to_string()) && actions.contains(&"undo".to_string()), "{actions:?}");
    // undoing it twice is a conflict that changes nothing
    let twice = app.send("POST", &format!("/api/v1/sessions/{session}/turns/1/undo"), Some(&app.editor), None).await;
    assert_eq!(twice.status, 409, "{}", twice.body);
    assert!(app.store.page(&app.scope, &about).await.is_ok());
}

#[tokio::test]
async fn undoing_a_paused_turn_ends_its_approvals() {
    let (app, fake) = app().await;
    let pricing = app.page_id("pricing").await;
    let contact = app.page_id("contact").await;
    let rename = json!({ "id": contact, "name": "Write to us" }).to_string();
    let delete = json!({ "ids": [pricing] }).to_string();
    fake.push(openai_stream("", &[("u1", "updatePage", &rename), ("d1", "deletePage", &delete)]));
    let session = turn(&app, "rename contact and delete pricing", None).await;
    let state = app.get(&format!("/api/v1/sessions/{session}")).await;
    assert_eq!(state.body["session"]["status"], "paused", "{}", state.body);
    let approval = state.body["session"]["pending"][0]["approvalId"].as_str().unwrap().to_string();

    let undo = app.send("POST", &format!("/api/v1/sessions/{session}/turns/1/undo"), Some(&app.editor), None).await;
    assert_eq!(undo.status, 200, "{}", undo.body);
    assert_eq!(undo.body["cancelled"], 1, "{}", undo.body);
    assert_eq!(app.store.page(&app.scope, &contact).await.unwrap().name, "Contact", "the rename is undone");
    // the approval ended with the turn: approving it now changes nothing
    let late = app.send("POST", &format!("/api/v1/approvals/{approval}/approve"), Some(&app.editor), None).await;
    assert_eq!(late.status, 409, "{}", late.body);
    assert!(app.store.page(&app.scope, &pricing).await.is_ok(), "the delete never runs");
    let after = app.get(&format!("/api/v1/sessions/{session}")).await;
    assert_eq!(after.body["session"]["status"], "idle", "{}", after.body);
    assert_eq!(after.body["session"]["pending"], json!([]));
    // the waiting call got a result saying so, and the session goes on
    let messages = after.body["messages"].as_array().unwrap();
    let last: &Value = &messages.last().unwrap()["body"];
    assert_eq!(last["role"], "tool", "{last}");
    assert!(last["content"].as_str().unwrap().contains("turn was undone"), "{last}");
    fake.push(openai_stream("Fine.", &[]));
    turn(&app, "ok, never mind", Some(&session)).await;
    assert_eq!(app.get(&format!("/api/v1/sessions/{session}")).await.body["session"]["status"], "idle");
}

#[tokio::test]
async fn a_turn_still_running_is_not_undone() {
    let (app, fake) = app().await;
    fake.push(openai_stream("Hello.", &[]));
    let session = turn(&app, "hi", None).await;
    assert!(
        app.store
            .claim_session(
                &app.scope,
                &session,
                &[quire_core::model::SessionStatus::Idle],
                quire_core::model::SessionStatus::Running
            )
            .await
            .unwrap()
    );
    let undo = app.send("POST", &format!("/api/v1/sessions/{session}/turns/1/undo"), Some(&app.editor), None).await;
    assert_eq!(undo.status, 409, "{}", undo.body);
    assert!(undo.body["error"].as_str().unwrap().contains("still running"), "{}", undo.body);
    let missing = app.send("POST", &format!("/api/v1/sessions/{session}/turns/7/undo"), Some(&app.editor), None).await;
    assert_eq!(missing.status, 404, "{}", missing.body);
}

#[tokio::test]
async fn an_agent_writes_drafts_unless_its_admin_lets_it_publish_and_undo_puts_back_what_it_published() {
    let (app, fake) = app().await;
    let about = app.page_id("about").await;
    let delivered = || async { app.send("GET", "/api/v1/delivery/pages/about", None, None).await.body["name"].clone() };

    // In draft mode, the seeded agents' own, a rename waits for publishing.
    let agent = app.get("/api/v1/agents/editor").await;
    assert_eq!(agent.body["writeMode"], "draft");
    let rename = json!({ "id": about, "name": "Drafted by the agent" }).to_string();
    fake.push(openai_stream("", &[("u1", "updatePage", &rename)]));
    fake.push(openai_stream("Renamed.", &[]));
    turn(&app, "rename About", None).await;
    assert_eq!(app.store.page(&app.scope, &about).await.unwrap().name, "Drafted by the agent");
    assert_eq!(delivered().await, "About");

    // Its admin lets it publish directly: each write goes public as it is made.
    let direct =
        app.send("PATCH", "/api/v1/agents/editor", Some(&app.admin), Some(json!({"writeMode": "direct"}))).await;
    assert_eq!(direct.status, 200, "{}", direct.body);
    let rename = json!({ "id": about, "name": "Published by the agent" }).to_string();
    fake.push(openai_stream("", &[("u1", "updatePage", &rename)]));
    fake.push(openai_stream("Renamed.", &[]));
    let session = turn(&app, "rename About again", None).await;
    assert_eq!(delivered().await, "Published by the agent");

    // Undoing that turn puts back what was public before it, and the draft.
    let undo = app.send("POST", &format!("/api/v1/sessions/{session}/turns/1/undo"), Some(&app.editor), None).await;
    assert_eq!(undo.status, 200, "{}", undo.body);
    assert_eq!(delivered().await, "About");
    assert_eq!(app.store.page(&app.scope, &about).await.unwrap().name, "Drafted by the agent");
}

#[tokio::test]
async fn an_agent_in_release_mode_stages_its_turn_for_a_person_to_publish_and_revert() {
    let (app, fake) = app().await;
    let staged =
        app.send("PATCH", "/api/v1/agents/editor", Some(&app.admin), Some(json!({"writeMode": "release"}))).await;
    assert_eq!(staged.status, 200, "{}", staged.body);
    let public = |slug: &'static str| {
        let app = &app;
        async move { app.send("GET", &format!("/api/v1/delivery/pages/{slug}"), None, None).await }
    };
    let (about, team, pricing, contact) = (
        app.page_id("about").await,
        app.page_id("team").await,
        app.page_id("pricing").await,
        app.page_id("contact").await,
    );
    let rename = |id: &str, name: &str| json!({ "id": id, "name": name }).to_string();
    fake.push(openai_stream(
        "",
        &[
            ("u1", "updatePage", &rename(&about, "About, staged")),
            ("u2", "updatePage", &rename(&team, "Team, staged")),
            ("u3", "updatePage", &rename(&pricing, "Pricing, staged")),
            ("d1", "deletePage", &json!({ "ids": [contact] }).to_string()),
        ],
    ));
    let session = turn(&app, "rename three pages and delete the contact page", None).await;
    let pending = app.get("/api/v1/approvals").await;
    let approval = pending.body["items"][0]["id"].as_str().unwrap().to_string();
    fake.push(openai_stream("Staged four changes.", &[]));
    let approved = app.send("POST", &format!("/api/v1/approvals/{approval}/approve"), Some(&app.editor), None).await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    app.sse(&format!("/api/v1/sessions/{session}/events"), &app.editor, None, "RUN_FINISHED").await;

    // Neither the drafts nor the public site moved.
    assert_eq!(app.store.page(&app.scope, &about).await.unwrap().name, "About");
    assert!(app.store.page(&app.scope, &contact).await.is_ok(), "the contact page is still a live draft");
    assert_eq!(public("about").await.body["name"], "About");
    assert_eq!(public("contact").await.status, 200);

    // The turn's release holds four differences.
    let release = format!("{session}.1");
    let review = app.get(&format!("/api/v1/releases/{release}")).await;
    assert_eq!(review.status, 200, "{}", review.body);
    let items = review.body["items"].as_array().unwrap();
    assert_eq!(items.len(), 4, "{}", review.body);
    assert!(items.iter().all(|i| !i["differences"].as_array().unwrap().is_empty() && i["conflict"].is_null()));
    let archived: Vec<&Value> = items.iter().filter(|i| i["action"] == "archive").collect();
    assert_eq!(archived.len(), 1);
    assert_eq!(archived[0]["id"], contact);

    // A person publishes it: the public site changes at once; reverting puts it back.
    let published = app.send("POST", &format!("/api/v1/releases/{release}/publish"), Some(&app.editor), None).await;
    assert_eq!(published.status, 200, "{}", published.body);
    assert_eq!(public("about").await.body["name"], "About, staged");
    assert_eq!(public("pricing").await.body["name"], "Pricing, staged");
    assert_eq!(public("contact").await.status, 404);
    let reverted = app.send("POST", &format!("/api/v1/releases/{release}/revert"), Some(&app.editor), None).await;
    assert_eq!(reverted.status, 200, "{}", reverted.body);
    assert_eq!(public("about").await.body["name"], "About");
    assert_eq!(public("team").await.body["name"], app.store.page(&app.scope, &team).await.unwrap().name);
    assert_eq!(public("contact").await.status, 200);

    // Another turn staged and undone: its documents leave its release.
    fake.push(openai_stream("", &[("u4", "updatePage", &rename(&about, "About, again"))]));
    fake.push(openai_stream("Staged.", &[]));
    let second = turn(&app, "rename About again", None).await;
    let release = format!("{second}.1");
    assert_eq!(app.get(&format!("/api/v1/releases/{release}")).await.body["items"].as_array().unwrap().len(), 1);
    let undo = app.send("POST", &format!("/api/v1/sessions/{second}/turns/1/undo"), Some(&app.editor), None).await;
    assert_eq!(undo.status, 200, "{}", undo.body);
    assert_eq!(app.get(&format!("/api/v1/releases/{release}")).await.body["items"].as_array().unwrap().len(), 0);
    assert_eq!(public("about").await.body["name"], "About");
}

#[tokio::test]
async fn an_agent_in_release_mode_stages_in_the_release_a_person_chose_and_keeps_it_after_a_pause() {
    let (app, fake) = app().await;
    let chat = |body: Value| app.chat(&app.editor, body);
    // A release chosen for an agent that writes drafts is refused, naming the field.
    let made = app.send("POST", "/api/v1/releases", Some(&app.editor), Some(json!({"name": "Spring launch"}))).await;
    assert_eq!(made.status, 201, "{}", made.body);
    let launch = made.body["id"].as_str().unwrap().to_string();
    let refused = chat(json!({"message": "rename about", "releaseId": launch})).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(refused.body["field"], "releaseId", "{}", refused.body);
    assert!(app.get("/api/v1/sessions").await.body["items"].as_array().unwrap().is_empty(), "no session was started");

    let staged =
        app.send("PATCH", "/api/v1/agents/editor", Some(&app.admin), Some(json!({"writeMode": "release"}))).await;
    assert_eq!(staged.status, 200, "{}", staged.body);
    // An unknown release, and one no longer open, are refused the same way.
    let refused = chat(json!({"message": "rename about", "releaseId": "no-such-release"})).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.body["error"].as_str().unwrap().contains("no release"), "{}", refused.body);
    let other = app.send("POST", "/api/v1/releases", Some(&app.editor), Some(json!({"name": "Old"}))).await;
    let old = other.body["id"].as_str().unwrap().to_string();
    let discarded = app.send("POST", &format!("/api/v1/releases/{old}/discard"), Some(&app.editor), None).await;
    assert_eq!(discarded.status, 200, "{}", discarded.body);
    let refused = chat(json!({"message": "rename about", "releaseId": old})).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.body["error"].as_str().unwrap().contains("discarded"), "{}", refused.body);

    // The turn pauses on an archive, is approved, and everything lands in the chosen release.
    let (about, contact) = (app.page_id("about").await, app.page_id("contact").await);
    fake.push(openai_stream(
        "",
        &[
            ("u1", "updatePage", &json!({ "id": about, "name": "About, for spring" }).to_string()),
            ("d1", "deletePage", &json!({ "ids": [contact] }).to_string()),
        ],
    ));
    let started = chat(json!({"message": "rename about and delete contact", "releaseId": launch})).await;
    assert_eq!(started.status, 202, "{}", started.body);
    let session = started.body["sessionId"].as_str().unwrap().to_string();
    app.sse(&format!("/api/v1/sessions/{session}/events"), &app.editor, None, "RUN_FINISHED").await;
    let approval = app.get("/api/v1/approvals").await.body["items"][0]["id"].as_str().unwrap().to_string();
    fake.push(openai_stream("Staged in Spring launch.", &[]));
    let approved = app.send("POST", &format!("/api/v1/approvals/{approval}/approve"), Some(&app.editor), None).await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    app.sse(&format!("/api/v1/sessions/{session}/events"), &app.editor, None, "RUN_FINISHED").await;

    let review = app.get(&format!("/api/v1/releases/{launch}")).await;
    let items = review.body["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{}", review.body);
    assert!(app.get(&format!("/api/v1/releases/{session}.1")).await.status == 404, "no release of the turn's own");
    assert_eq!(app.store.page(&app.scope, &about).await.unwrap().name, "About");

    // The next message without a choice stages in a release of its own turn.
    fake.push(openai_stream("", &[("u2", "updatePage", &json!({ "id": about, "name": "About, later" }).to_string())]));
    fake.push(openai_stream("Staged.", &[]));
    turn(&app, "rename about again", Some(&session)).await;
    let own = app.get(&format!("/api/v1/releases/{session}.2")).await;
    assert_eq!(own.body["items"].as_array().unwrap().len(), 1, "{}", own.body);
    assert_eq!(app.get(&format!("/api/v1/releases/{launch}")).await.body["items"].as_array().unwrap().len(), 2);

    // Undoing the first turn takes its documents out of the chosen release.
    let undo = app.send("POST", &format!("/api/v1/sessions/{session}/turns/1/undo"), Some(&app.editor), None).await;
    assert_eq!(undo.status, 200, "{}", undo.body);
    assert!(app.get(&format!("/api/v1/releases/{launch}")).await.body["items"].as_array().unwrap().is_empty());
}
