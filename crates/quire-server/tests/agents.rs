//! Agents over HTTP: CRUD, chat with a streamed turn, approvals answered
//! through REST resuming the turn, Last-Event-ID, sessions and undo.

mod common;

use common::TestApp;
use quire_agent::testing::{Fake, openai_stream, serve};
use serde_json::json;

async fn app() -> (TestApp, Fake) {
    let (fake, base) = serve().await;
    (TestApp::with_llm(&base).await, fake)
}

#[tokio::test]
async fn agents_are_records_with_crud_and_disable_as_archive() {
    let (app, _) = app().await;
    let list = app.get("/api/v1/agents").await;
    assert_status!(list, 200);
    let aliases: Vec<&str> =
        list.body["items"].as_array().unwrap().iter().map(|a| a["alias"].as_str().unwrap()).collect();
    assert_eq!(aliases, ["editor", "notes", "researcher"]);
    // the researcher's web tools exist: nothing to warn about
    let researcher = app.get("/api/v1/agents/researcher").await;
    assert!(researcher.body["warnings"].as_array().is_none_or(|w| w.is_empty()), "{}", researcher.body);
    // a selector that matches no tool is a warning, not an error
    let video = app.post("/api/v1/agents", json!({ "alias": "video", "name": "Video", "tools": ["tag:video"] })).await;
    assert_status!(video, 201);
    let warnings = video.body["warnings"].as_array().unwrap();
    assert!(warnings.iter().any(|w| w.as_str().unwrap().contains("\"tag:video\" matches no tool")), "{warnings:?}");

    let created = app
        .post(
            "/api/v1/agents",
            json!({ "alias": "seo", "name": "SEO", "tools": ["getPage", "updatePage"], "pinned": ["getPage"], "allowedGroups": ["editor", "admin"] }),
        )
        .await;
    assert_status!(created, 201);
    assert_eq!(created.body["approvalPolicy"], "user");
    let dup = app.post("/api/v1/agents", json!({ "alias": "seo", "name": "Again" })).await;
    assert_status!(dup, 409);
    assert_eq!(dup.body["field"], "alias");
    // A group is one of four names: another is a malformed body, named.
    let bad = app.post("/api/v1/agents", json!({ "alias": "x", "name": "x", "allowedGroups": ["root"] })).await;
    assert_status!(bad, 400);
    assert!(bad.error().contains("allowedGroups[0]") && bad.error().contains("\"root\""), "{}", bad.body);
    let bad = app.post("/api/v1/agents", json!({ "alias": "Bad Alias", "name": "x" })).await;
    assert_status!(bad, 422);
    assert_eq!(bad.body["field"], "alias");
    let unknown = app.post("/api/v1/agents", json!({ "alias": "x", "name": "x", "colour": 1 })).await;
    assert_status!(unknown, 400);
    assert_eq!(unknown.body["field"], "colour");

    let editor_try =
        app.send("POST", "/api/v1/agents", Some(&app.editor), Some(json!({ "alias": "e", "name": "E" }))).await;
    assert_status!(editor_try, 403);

    let patched = app.patch("/api/v1/agents/seo", json!({ "approvalPolicy": "conversational" })).await;
    assert_status!(patched, 200);
    assert_eq!(patched.body["version"], 2);
    // Disabling is a change, not a delete: the agent stays readable.
    assert_status!(app.delete("/api/v1/agents/seo").await, 405);
    let disabled = app.patch("/api/v1/agents/seo", json!({ "enabled": false })).await;
    assert_status!(disabled, 200);
    assert_eq!(app.get("/api/v1/agents/seo").await.body["enabled"], false);
    assert_eq!(disabled.body["enabled"], false);
    let chat = app.post("/api/v1/agents/seo/chat", json!({ "message": "hi" })).await;
    assert_status!(chat, 409);
    assert!(chat.error().contains("disabled"));
    // every change is in the change log
    let id = created.body["id"].as_str().unwrap();
    let changes = app.get(&format!("/api/v1/changes?entity=agent&entityId={id}")).await;
    assert_eq!(changes.body["count"], 3, "{}", changes.body);
}

#[tokio::test]
async fn chat_streams_a_turn_as_ag_ui_events() {
    let (app, fake) = app().await;
    fake.push(openai_stream("Sure.", &[("c1", "createPage", r#"{"name":"Blog two","slug":"blog-two"}"#)]));
    fake.push(openai_stream("Created /blog-two.", &[]));
    let started = app.chat(&app.editor, json!({ "message": "add a page" })).await;
    assert_status!(started, 202);
    assert_eq!(started.body["turn"], 1);
    let session = started.body["sessionId"].as_str().unwrap().to_string();

    let events = app.sse(&format!("/api/v1/sessions/{session}/events"), &app.editor, None, "RUN_FINISHED").await;
    let kinds: Vec<&str> = events.iter().map(|(_, k, _)| k.as_str()).collect();
    assert_eq!(kinds[0], "RUN_STARTED");
    for k in [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
    ] {
        assert!(kinds.contains(&k), "{k} in {kinds:?}");
    }
    let (_, _, finished) = events.last().unwrap();
    assert_eq!(finished["outcome"], json!({ "type": "success" }));
    assert!(events.iter().any(|(_, k, d)| k == "CUSTOM" && d["name"] == "entity_changed"));
    assert!(app.store.page_by_slug(&app.scope, "blog-two").await.is_ok());

    // resume after an event: only what follows
    let (third_id, _, _) = &events[2];
    let rest =
        app.sse(&format!("/api/v1/sessions/{session}/events"), &app.editor, Some(third_id), "RUN_FINISHED").await;
    assert_eq!(rest.len(), events.len() - 3);
    assert_eq!(rest[0].0, events[3].0);
    let bad = app
        .send_raw(
            "GET",
            &format!("/api/v1/sessions/{session}/events"),
            Some(&app.editor),
            None,
            &[("last-event-id", "x")],
        )
        .await;
    assert_status!(bad, 400);

    // the session and its messages
    let read = app.send("GET", &format!("/api/v1/sessions/{session}"), Some(&app.editor), None).await;
    assert_status!(read, 200);
    assert_eq!(read.body["session"]["status"], "idle");
    let roles: Vec<&str> =
        read.body["messages"].as_array().unwrap().iter().map(|m| m["body"]["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    let mine = app.send("GET", "/api/v1/sessions", Some(&app.editor), None).await;
    assert_eq!(mine.body["count"], 1);
    // another user's sessions are not visible
    let other = app.send("GET", &format!("/api/v1/sessions/{session}"), Some(&app.author), None).await;
    assert_status!(other, 404);
    let other_events =
        app.send_raw("GET", &format!("/api/v1/sessions/{session}/events"), Some(&app.author), None, &[]).await;
    assert_status!(other_events, 404);
    assert_eq!(app.send("GET", "/api/v1/sessions", Some(&app.author), None).await.body["count"], 0);
    // nor to another site
    let cross = app.send("GET", &format!("/api/v1/sessions/{session}"), Some(&app.other_admin), None).await;
    assert_status!(cross, 404);
}

#[tokio::test]
async fn approvals_over_rest_resume_the_turn() {
    let (app, fake) = app().await;
    let contact = app.script_archive_contact(&fake, "").await;
    fake.push(openai_stream("Archived contact.", &[]));
    let started = app.chat(&app.editor, json!({ "message": "delete contact" })).await;
    let session = started.body["sessionId"].as_str().unwrap().to_string();
    let events = app.sse(&format!("/api/v1/sessions/{session}/events"), &app.editor, None, "RUN_FINISHED").await;
    let (last_id, _, finished) = events.last().unwrap().clone();
    assert_eq!(finished["outcome"]["type"], "interrupt");
    let approval = finished["outcome"]["interrupts"][0]["id"].as_str().unwrap().to_string();
    assert!(events.iter().any(|(_, k, d)| k == "CUSTOM" && d["name"] == "approval_requested"));

    let pending = app.send("GET", "/api/v1/approvals", Some(&app.editor), None).await;
    assert_eq!(pending.body["items"][0]["id"], approval);
    assert_eq!(pending.body["items"][0]["sessionId"], session);
    // a new message waits for the answer
    let busy = app.chat(&app.editor, json!({ "message": "more", "sessionId": session })).await;
    assert_status!(busy, 409);
    // an author may not answer (cannot use deletePage)
    let author = app.send("POST", &format!("/api/v1/approvals/{approval}/approve"), Some(&app.author), None).await;
    assert_status!(author, 403);
    // the person who chats approves; the turn resumes and finishes
    let ok = app.send("POST", &format!("/api/v1/approvals/{approval}/approve"), Some(&app.editor), None).await;
    assert_status!(ok, 200);
    let after =
        app.sse(&format!("/api/v1/sessions/{session}/events"), &app.editor, Some(&last_id), "RUN_FINISHED").await;
    assert_eq!(after[0].1, "RUN_STARTED");
    assert_eq!(after.last().unwrap().2["outcome"]["type"], "success");
    assert!(app.store.page(&app.scope, &contact).await.is_err());
}

#[tokio::test]
async fn agents_limited_to_groups_refuse_others() {
    let (app, fake) = app().await;
    app.patch("/api/v1/agents/editor", json!({ "allowedGroups": ["admin"] })).await;
    let refused = app.chat(&app.editor, json!({ "message": "hi" })).await;
    assert_status!(refused, 403);
    assert!(refused.error().contains("may not use agent"), "{}", refused.body);
    fake.push(openai_stream("Hello admin.", &[]));
    let ok = app.post("/api/v1/agents/editor/chat", json!({ "message": "hi" })).await;
    assert_status!(ok, 202);
    let empty = app.post("/api/v1/agents/editor/chat", json!({ "message": "  " })).await;
    assert_status!(empty, 422);
    assert_eq!(empty.body["field"], "message");
    let missing = app.post("/api/v1/agents/nobody/chat", json!({ "message": "hi" })).await;
    assert_status!(missing, 404);
    let anonymous = app.send("POST", "/api/v1/agents/editor/chat", None, Some(json!({ "message": "hi" }))).await;
    assert_status!(anonymous, 401);
}

#[tokio::test]
async fn undo_a_turn_reverts_its_changes_or_refuses_when_changed_since() {
    let (app, fake) = app().await;
    let about = app.page_id("about").await;
    let rename = json!({ "id": about, "name": "About us" }).to_string();
    fake.push(openai_stream(
        "",
        &[("u1", "updatePage", &rename), ("c1", "createPage", r#"{"name":"Press","slug":"press"}"#)],
    ));
    fake.push(openai_stream("Done.", &[]));
    let started = app.chat(&app.editor, json!({ "message": "two edits" })).await;
    let session = started.body["sessionId"].as_str().unwrap().to_string();
    app.sse(&format!("/api/v1/sessions/{session}/events"), &app.editor, None, "RUN_FINISHED").await;
    assert_eq!(app.store.page(&app.scope, &about).await.unwrap().name, "About us");

    // a second turn, then someone edits what it touched: its undo is refused
    let rename2 = json!({ "id": about, "name": "About the team" }).to_string();
    fake.push(openai_stream("", &[("u2", "updatePage", &rename2)]));
    fake.push(openai_stream("Renamed again.", &[]));
    app.chat(&app.editor, json!({ "message": "again", "sessionId": session })).await;
    app.sse(&format!("/api/v1/sessions/{session}/events"), &app.editor, None, "RUN_FINISHED").await;
    let conflict = app.send("POST", &format!("/api/v1/sessions/{session}/turns/1/undo"), Some(&app.editor), None).await;
    assert_status!(conflict, 409);
    assert!(conflict.error().contains("changed since"), "{}", conflict.body);
    assert_eq!(app.store.page(&app.scope, &about).await.unwrap().name, "About the team", "nothing was undone");

    // undo the newer turn first, then the older one
    let undo2 = app.send("POST", &format!("/api/v1/sessions/{session}/turns/2/undo"), Some(&app.editor), None).await;
    assert_status!(undo2, 200);
    assert_eq!(app.store.page(&app.scope, &about).await.unwrap().name, "About us");
    let undo1 = app.send("POST", &format!("/api/v1/sessions/{session}/turns/1/undo"), Some(&app.editor), None).await;
    assert_status!(undo1, 200);
    assert_eq!(undo1.body["count"], 2);
    assert_eq!(app.store.page(&app.scope, &about).await.unwrap().name, "About");
    assert!(app.store.page_by_slug(&app.scope, "press").await.is_err(), "the created page is archived");
    let archived = app.get("/api/v1/archive?entity=page").await;
    assert_eq!(archived.body["items"][0]["label"], "press", "{}", archived.body);

    let none = app.send("POST", &format!("/api/v1/sessions/{session}/turns/9/undo"), Some(&app.editor), None).await;
    assert_status!(none, 404);
    let author = app.send("POST", &format!("/api/v1/sessions/{session}/turns/1/undo"), Some(&app.author), None).await;
    assert_status!(author, 404);
}

#[tokio::test]
async fn undo_covers_notes_and_note_revisions_restore_over_rest() {
    let (app, fake) = app().await;
    fake.push(openai_stream("", &[("w", "writeNote", r#"{"path":"todo.md","content":"- one\n"}"#)]));
    fake.push(openai_stream("", &[("u", "updateNote", r#"{"path":"todo.md","content":"- two","startLine":-1}"#)]));
    fake.push(openai_stream("Wrote todo.md.", &[]));
    let started = app.post("/api/v1/agents/notes/chat", json!({ "message": "make a todo" })).await;
    let session = started.body["sessionId"].as_str().unwrap().to_string();
    app.sse(&format!("/api/v1/sessions/{session}/events"), &app.admin, None, "RUN_FINISHED").await;
    let read = app.post("/api/v1/tools/readNote/invoke", json!({ "path": "todo.md", "startLine": 1 })).await;
    assert_eq!(read.body["content"], "1: - one\n2: - two");

    // restore the first revision through the change log
    let changes = app.get(&format!("/api/v1/changes?entity=note&sessionId={session}")).await;
    let write_change =
        changes.body["items"].as_array().unwrap().iter().find(|c| c["action"] == "write").unwrap().clone();
    let restored = app.post(&format!("/api/v1/changes/{}/restore", write_change["id"]), json!({})).await;
    assert_status!(restored, 200);
    assert_eq!(restored.body["action"], "restore");
    let read = app.post("/api/v1/tools/readNote/invoke", json!({ "path": "todo.md", "startLine": 1 })).await;
    assert_eq!(read.body["content"], "1: - one");

    // the turn's undo now sees a note changed since: refused, nothing changes
    let refused = app.post(&format!("/api/v1/sessions/{session}/turns/1/undo"), json!({})).await;
    assert_status!(refused, 409);
    assert!(refused.error().contains("changed since"), "{}", refused.body);
    // put it back as the turn left it, then undo the whole turn
    let update_change =
        changes.body["items"].as_array().unwrap().iter().find(|c| c["action"] == "update").unwrap().clone();
    app.post(&format!("/api/v1/changes/{}/restore", update_change["id"]), json!({})).await;
    let undone = app.post(&format!("/api/v1/sessions/{session}/turns/1/undo"), json!({})).await;
    assert_status!(undone, 200);
    assert_eq!(undone.body["count"], 2);
    let gone = app.post("/api/v1/tools/readNote/invoke", json!({ "path": "todo.md", "startLine": 1 })).await;
    assert_status!(gone, 404);
    let archived =
        app.post("/api/v1/tools/listFolder/invoke", json!({ "includeHidden": true, "filter": "**/todo.md" })).await;
    assert_eq!(archived.body["count"], 1, "the created note went to .archive: {}", archived.body);
}

#[tokio::test]
async fn chat_can_wait_for_the_answer_or_stream_the_turn() {
    let (app, fake) = app().await;
    fake.push(openai_stream("Hello there.", &[]));
    let waited = app.chat(&app.editor, json!({ "message": "hi", "wait": true })).await;
    assert_status!(waited, 200);
    assert_eq!(waited.body["text"], "Hello there.");
    assert_eq!(waited.body["isComplete"], true);
    assert_eq!(waited.body["pendingApprovals"], json!([]));
    assert_eq!(waited.body["toolCalls"], json!([]));
    let session = waited.body["sessionId"].as_str().unwrap().to_string();

    // the answer lists the tools the turn ran, and how each went
    fake.push(openai_stream(
        "",
        &[("g1", "getPage", r#"{"slug":"home"}"#), ("g2", "getPage", r#"{"slug":"nowhere-at-all"}"#)],
    ));
    fake.push(openai_stream("Read it.", &[]));
    let read = app.chat(&app.editor, json!({ "message": "read home", "sessionId": session, "wait": true })).await;
    assert_status!(read, 200);
    let calls = read.body["toolCalls"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{}", read.body);
    assert_eq!(calls[0]["name"], "getPage");
    assert_eq!(calls[0]["id"], "g1");
    assert!(calls.iter().all(|c| c["success"].is_boolean()), "{calls:?}");

    // a destructive call: the answer lists what waits for a person
    let pricing = app.page_id("pricing").await;
    let delete = json!({ "ids": [pricing] }).to_string();
    fake.push(openai_stream("", &[("d1", "deletePage", &delete)]));
    let paused =
        app.chat(&app.editor, json!({ "message": "delete pricing", "sessionId": session, "wait": true })).await;
    assert_status!(paused, 200);
    assert_eq!(paused.body["isComplete"], false);
    assert_eq!(paused.body["pendingApprovals"][0]["tool"], "deletePage", "{}", paused.body);
    let approval = paused.body["pendingApprovals"][0]["approvalId"].as_str().unwrap().to_string();
    fake.push(openai_stream("Not deleted.", &[]));
    app.send("POST", &format!("/api/v1/approvals/{approval}/reject"), Some(&app.editor), Some(json!({}))).await;
    for _ in 0..200 {
        if app.store.session(&app.scope, &session).await.unwrap().status == quire_core::model::SessionStatus::Idle {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }

    // chat/stream answers this turn's events and closes after its end
    fake.push(openai_stream("Streamed.", &[]));
    let req = axum::http::Request::builder()
        .method("POST")
        .uri("/api/v1/agents/editor/chat/stream")
        .header("authorization", format!("Bearer {}", app.editor))
        .header("content-type", "application/json")
        .body(axum::body::Body::from(json!({ "message": "stream it" }).to_string()))
        .unwrap();
    let res = tower::ServiceExt::oneshot(app.router.clone(), req).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    let mut body = res.into_body();
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        match tokio::time::timeout_at(deadline, http_body_util::BodyExt::frame(&mut body)).await {
            Ok(Some(Ok(frame))) => text.push_str(&String::from_utf8_lossy(frame.data_ref().unwrap())),
            Ok(None) => break,
            other => panic!("the stream ends with the turn: {:?}; got {text}", other.map(|_| ())),
        }
    }
    let kinds: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("event: ")).collect();
    assert_eq!(kinds.first(), Some(&"RUN_STARTED"), "{text}");
    assert_eq!(kinds.last(), Some(&"RUN_FINISHED"), "{text}");
    assert!(text.contains("Streamed."), "{text}");
}

#[tokio::test]
async fn people_see_the_agents_they_may_use() {
    let (app, _) = app().await;
    app.patch("/api/v1/agents/notes", json!({ "allowedGroups": ["admin"] })).await;
    app.patch("/api/v1/agents/researcher", json!({ "enabled": false })).await;
    let aliases = |reply: &common::Reply| -> Vec<String> {
        reply.body["items"].as_array().unwrap().iter().map(|a| a["alias"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(aliases(&app.send("GET", "/api/v1/agents", Some(&app.editor), None).await), ["editor"]);
    assert_eq!(aliases(&app.get("/api/v1/agents").await), ["editor", "notes", "researcher"], "admins see all");
    assert_status!(app.send("GET", "/api/v1/agents/notes", Some(&app.editor), None).await, 404);
    // The seeded editor is for the groups that write: a viewer is not offered it.
    assert_status!(app.send("GET", "/api/v1/agents/editor", Some(&app.viewer), None).await, 404);
    assert_eq!(aliases(&app.send("GET", "/api/v1/agents", Some(&app.viewer), None).await), Vec::<String>::new());
    assert_status!(app.send("GET", "/api/v1/agents/editor", Some(&app.author), None).await, 200);
}

#[tokio::test]
async fn tool_categories_count_what_the_caller_may_use() {
    let (app, _) = app().await;
    let admin = app.get("/api/v1/tools/categories").await;
    assert_status!(admin, 200);
    let count = |reply: &common::Reply, name: &str| -> u64 {
        reply.body["items"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap()["count"].as_u64().unwrap()
    };
    let listed = app.get("/api/v1/tools?category=internal").await;
    assert_eq!(count(&admin, "internal"), listed.body["count"].as_u64().unwrap());
    assert_eq!(count(&admin, "default"), 3);
    let viewer = app.send("GET", "/api/v1/tools/categories", Some(&app.viewer), None).await;
    assert!(count(&viewer, "internal") < count(&admin, "internal"), "viewers read only");
    assert_status!(app.send("GET", "/api/v1/tools/categories", None, None).await, 401);
}

#[tokio::test]
async fn undoing_a_turn_takes_back_every_note_it_wrote_past_a_page_of_changes() {
    let (app, fake) = app().await;
    let writes: Vec<(String, String, String)> = (0..130)
        .map(|i| {
            (
                format!("w{i}"),
                "writeNote".to_string(),
                json!({ "path": format!("bulk/n{i}.md"), "content": "x\n" }).to_string(),
            )
        })
        .collect();
    let refs: Vec<(&str, &str, &str)> = writes.iter().map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str())).collect();
    fake.push(openai_stream("", &refs));
    fake.push(openai_stream("Wrote 130 notes.", &[]));
    let started = app.post("/api/v1/agents/notes/chat", json!({ "message": "write the notes" })).await;
    let session = started.body["sessionId"].as_str().unwrap().to_string();
    app.sse(&format!("/api/v1/sessions/{session}/events"), &app.admin, None, "RUN_FINISHED").await;
    let listed = app.post("/api/v1/tools/listFolder/invoke", json!({ "path": "bulk" })).await;
    assert_eq!(listed.body["count"], 130, "{}", listed.body);
    let undone = app.post(&format!("/api/v1/sessions/{session}/turns/1/undo"), json!({})).await;
    assert_status!(undone, 200);
    assert_eq!(undone.body["count"], 130, "every note change, not the first page");
    let left = app.post("/api/v1/tools/listFolder/invoke", json!({ "path": "bulk" })).await;
    assert_eq!(left.body["count"].as_u64().unwrap_or(0), 0, "{}", left.body);
}

#[tokio::test]
async fn an_author_undoes_their_own_turn_but_not_anothers() {
    let (app, fake) = app().await;
    fake.push(openai_stream("", &[("c", "createPage", r#"{"name":"Draft idea","slug":"draft-idea"}"#)]));
    fake.push(openai_stream("Made it.", &[]));
    let session = app.start_chat(&app.author, "make a page").await;
    app.sse(&format!("/api/v1/sessions/{session}/events"), &app.author, None, "RUN_FINISHED").await;
    assert!(app.store.page_by_slug(&app.scope, "draft-idea").await.is_ok());
    let other = app.send("POST", &format!("/api/v1/sessions/{session}/turns/1/undo"), Some(&app.editor), None).await;
    assert_status!(other, 404);
    let viewer = app.send("POST", &format!("/api/v1/sessions/{session}/turns/1/undo"), Some(&app.viewer), None).await;
    assert_status!(viewer, 404);
    let own = app.send("POST", &format!("/api/v1/sessions/{session}/turns/1/undo"), Some(&app.author), None).await;
    assert_status!(own, 200);
    assert!(app.store.page_by_slug(&app.scope, "draft-idea").await.is_err(), "what the turn made is archived");
}
