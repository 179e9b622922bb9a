//! The AG-UI route: a `RunAgentInput` runs the agent and answers the run's
//! AG-UI 1.0 events (outcome objects, one interrupt per approval, no null
//! optional field), and `resume` answers the interrupts and goes on with
//! the same turn. The client's `threadId` is the session's id. The
//! official client's suite is `tests/agui`.

mod common;

use common::TestApp;
use quire_agent::testing::{Fake, Reply, openai_stream, serve, take_sse_events};
use serde_json::{Value, json};

async fn app() -> (TestApp, Fake) {
    let (fake, base) = serve().await;
    (TestApp::with_llm(&base).await, fake)
}

static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A thread id no run used yet.
fn fresh() -> String {
    format!("thread-{}", RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

/// A `RunAgentInput` on `thread` saying `text` (none: no message), with a run id of its own.
fn input(thread: &str, text: Option<&str>) -> Value {
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let messages: Vec<Value> = text.map(|t| json!({ "id": "m1", "role": "user", "content": t })).into_iter().collect();
    json!({ "threadId": thread, "runId": format!("run-{run}"), "messages": messages,
            "tools": [], "context": [], "state": {}, "forwardedProps": {} })
}

/// Runs `body` as the editor's holder; answers the status and the events
/// (or the error body).
async fn run(app: &TestApp, token: &str, body: Value) -> (u16, Vec<Value>, Value) {
    let reply = app.send("POST", "/api/v1/agents/editor/agui", Some(token), Some(body)).await;
    let status = reply.status.as_u16();
    let Value::String(mut text) = reply.body.clone() else { return (status, Vec::new(), reply.body) };
    let events = take_sse_events(&mut text).into_iter().map(|(_, _, data)| data).collect();
    (status, events, Value::Null)
}

/// No optional field is null: AG-UI leaves it out.
fn no_nulls(events: &[Value]) {
    for e in events {
        for (key, value) in e.as_object().unwrap() {
            assert!(!value.is_null(), "{}.{key} is null: {e}", e["type"]);
        }
    }
}

#[tokio::test]
async fn a_run_answers_agui_events_and_its_thread_goes_on() {
    let (app, fake) = app().await;
    fake.push(openai_stream("", &[("g1", "getPage", r#"{"slug":"contact"}"#)]));
    fake.push(openai_stream("Contact is there.", &[]));
    let first = input("a-thread-of-the-client", Some("is there a contact page?"));
    let run_id = first["runId"].clone();
    let (status, events, _) = run(&app, &app.editor, first).await;
    assert_eq!(status, 200);
    no_nulls(&events);
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"RUN_STARTED"));
    assert_eq!(kinds.last(), Some(&"RUN_FINISHED"));
    assert_eq!(events[0]["runId"], run_id, "the run takes the client's id");
    let thread = events[0]["threadId"].as_str().unwrap().to_string();
    assert_eq!(thread, "a-thread-of-the-client", "the new session takes the client's thread id");
    let start = events.iter().find(|e| e["type"] == "TOOL_CALL_START").unwrap();
    assert_eq!(start["toolCallName"], "getPage");
    assert!(start.get("parentMessageId").is_none(), "no text before the call: absent");
    let finished = events.last().unwrap();
    assert_eq!(finished["outcome"], json!({ "type": "success" }));
    assert_eq!(finished["threadId"], thread);
    assert_eq!(finished["result"]["text"], "Contact is there.");

    // The thread is the session: the next run is its next turn.
    fake.push(openai_stream("Still there.", &[]));
    let (status, events, _) = run(&app, &app.editor, input(&thread, Some("and now?"))).await;
    assert_eq!(status, 200);
    assert_eq!(events[0]["threadId"], thread);
    let session = app.send("GET", &format!("/api/v1/sessions/{thread}"), Some(&app.editor), None).await;
    assert_eq!(session.body["session"]["turns"], 2);
    // Context is what the person's screen shows.
    let with_context = json!({ "description": "page being edited", "value": "contact" });
    fake.push(openai_stream("Yes.", &[]));
    let mut third = input(&thread, Some("this one?"));
    third["context"] = json!([with_context]);
    assert_eq!(run(&app, &app.editor, third).await.0, 200);
    let session = app.send("GET", &format!("/api/v1/sessions/{thread}"), Some(&app.editor), None).await;
    assert_eq!(session.body["session"]["context"], json!({ "page being edited": "contact" }));
}

/// Asks to archive the contact page; answers the thread and its one interrupt.
async fn paused(app: &TestApp, fake: &Fake, after: &str) -> (String, Value) {
    let contact = app.page_id("contact").await;
    let args = json!({ "ids": [contact] }).to_string();
    fake.push(openai_stream("", &[("d1", "deletePage", &args)]));
    fake.push(openai_stream(after, &[]));
    let (status, events, _) = run(app, &app.editor, input(&fresh(), Some("archive contact"))).await;
    assert_eq!(status, 200);
    no_nulls(&events);
    let finished = events.last().unwrap();
    assert_eq!(finished["type"], "RUN_FINISHED");
    assert_eq!(finished["outcome"]["type"], "interrupt");
    let interrupts = finished["outcome"]["interrupts"].as_array().unwrap();
    assert_eq!(interrupts.len(), 1);
    let interrupt = interrupts[0].clone();
    assert_eq!(interrupt["reason"], "tool_call");
    assert_eq!(interrupt["toolCallId"], "d1");
    assert!(interrupt["message"].as_str().unwrap().starts_with("Approve deletePage? "), "{interrupt}");
    assert!(chrono::DateTime::parse_from_rfc3339(interrupt["expiresAt"].as_str().unwrap()).is_ok());
    assert_eq!(interrupt["metadata"]["approvalId"], interrupt["id"]);
    assert_eq!(interrupt["metadata"]["tool"], "deletePage");
    assert_eq!(interrupt["metadata"]["arguments"], json!({ "ids": [contact] }));
    assert!(interrupt["metadata"]["items"].as_array().unwrap().iter().any(|i| i["id"] == contact.as_str()));
    assert_eq!(interrupt["responseSchema"]["required"], json!(["approved"]));
    (finished["threadId"].as_str().unwrap().to_string(), interrupt)
}

/// A resume run on `thread` answering `interrupt` with `entry`'s status and payload.
fn resume(thread: &str, entries: Value) -> Value {
    let mut body = input(thread, None);
    body["resume"] = entries;
    body
}

#[tokio::test]
async fn resume_with_approve_goes_on_with_the_same_turn() {
    let (app, fake) = app().await;
    let (thread, interrupt) = paused(&app, &fake, "Archived contact.").await;
    let id = interrupt["id"].as_str().unwrap();
    // A new message cannot skip the interrupts.
    let (status, _, error) = run(&app, &app.editor, input(&thread, Some("never mind"))).await;
    assert_eq!(status, 409, "{error}");
    // Every interrupt is answered, or none is.
    let (status, _, error) = run(&app, &app.editor, resume(&thread, json!([]))).await;
    assert_eq!((status, error["field"].as_str()), (422, Some("messages")), "{error}");
    let wrong = json!([{ "interruptId": "cf_other", "status": "resolved", "payload": { "approved": true } }]);
    let (status, _, error) = run(&app, &app.editor, resume(&thread, wrong)).await;
    assert_eq!((status, error["field"].as_str()), (422, Some("resume")), "{error}");
    let shapeless = json!([{ "interruptId": id, "status": "resolved", "payload": { "ok": true } }]);
    let (status, _, error) = run(&app, &app.editor, resume(&thread, shapeless)).await;
    assert_eq!((status, error["field"].as_str()), (422, Some("resume.0.payload")), "{error}");
    // Someone who may not use deletePage may not answer it.
    let approve = json!([{ "interruptId": id, "status": "resolved", "payload": { "approved": true } }]);
    let (status, _, _) = run(&app, &app.author, resume(&thread, approve.clone())).await;
    assert_ne!(status, 200);

    let body = resume(&thread, approve.clone());
    let run_id = body["runId"].clone();
    let (status, events, _) = run(&app, &app.editor, body).await;
    assert_eq!(status, 200);
    no_nulls(&events);
    assert_eq!(events[0]["type"], "RUN_STARTED");
    assert_eq!(events[0]["threadId"], thread.as_str());
    assert_eq!(events[0]["runId"], run_id);
    assert!(!events.iter().any(|e| e["type"] == "TOOL_CALL_START"), "the call is not proposed again");
    let result = events.iter().find(|e| e["type"] == "TOOL_CALL_RESULT").unwrap();
    assert_eq!(result["toolCallId"], "d1");
    let finished = events.last().unwrap();
    assert_eq!(finished["outcome"], json!({ "type": "success" }));
    assert_eq!(finished["result"]["text"], "Archived contact.");
    assert!(app.store.page_by_slug(&app.scope, "contact").await.is_err());
    // Answered once: a replay changes nothing.
    let (status, _, error) = run(&app, &app.editor, resume(&thread, approve)).await;
    assert_eq!(status, 409, "{error}");
}

#[tokio::test]
async fn resume_with_reject_tells_the_model_why() {
    let (app, fake) = app().await;
    let (thread, interrupt) = paused(&app, &fake, "Left it.").await;
    let reject = json!([{ "interruptId": interrupt["id"], "status": "resolved",
                         "payload": { "approved": false, "reason": "keep it for the launch" } }]);
    let (status, events, _) = run(&app, &app.editor, resume(&thread, reject)).await;
    assert_eq!(status, 200);
    let result = events.iter().find(|e| e["type"] == "TOOL_CALL_RESULT").unwrap();
    let content: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["errorCode"], "REJECTED");
    assert!(content["error"].as_str().unwrap().contains("keep it for the launch"), "{content}");
    assert_eq!(events.last().unwrap()["outcome"]["type"], "success");
    assert!(app.store.page_by_slug(&app.scope, "contact").await.is_ok());
    // What the model read says so too.
    let told = fake.requests().last().unwrap().to_string();
    assert!(told.contains("keep it for the launch"));
}

#[tokio::test]
async fn a_provider_error_ends_the_run_with_run_error() {
    let (app, fake) = app().await;
    fake.push(Reply::Status(400, None));
    let (status, events, _) = run(&app, &app.editor, input(&fresh(), Some("hello"))).await;
    assert_eq!(status, 200);
    no_nulls(&events);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "RUN_ERROR");
    assert_eq!(last["code"], "MODEL_ERROR");
    assert!(last["message"].as_str().unwrap().contains("400"), "{last}");
    let keys: Vec<&String> = last.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 4, "type, timestamp, message and code only: {keys:?}");
}

#[tokio::test]
async fn refusals_answer_the_error_shape_before_any_event() {
    let (app, _) = app().await;
    let (status, _, error) = run(&app, &app.editor, input(&fresh(), None)).await;
    assert_eq!((status, error["field"].as_str()), (422, Some("messages")), "{error}");
    let mut image = input(&fresh(), None);
    image["messages"] = json!([{ "id": "m1", "role": "user", "content": [
        { "type": "image", "source": { "type": "url", "value": "https://example.com/a.png" } }] }]);
    let (status, _, error) = run(&app, &app.editor, image).await;
    assert_eq!((status, error["field"].as_str()), (422, Some("messages.0.content")), "{error}");
    let missing = json!({ "runId": "r", "messages": [] });
    assert_eq!(run(&app, &app.editor, missing).await.0, 400);
    // The contexts the run names are the site's: a key none has, or not a
    // list of keys, is refused naming where it was sent.
    let mut unknown = input(&fresh(), Some("hi"));
    unknown["forwardedProps"] = json!({ "contexts": ["no-such-context"] });
    let (status, _, error) = run(&app, &app.editor, unknown).await;
    assert_eq!((status, error["field"].as_str()), (422, Some("contexts")), "{error}");
    assert!(error["error"].as_str().unwrap().contains("no context no-such-context"), "{error}");
    let mut shape = input(&fresh(), Some("hi"));
    shape["forwardedProps"] = json!({ "contexts": "brand-voice" });
    let (status, _, error) = run(&app, &app.editor, shape).await;
    assert_eq!((status, error["field"].as_str()), (422, Some("forwardedProps.contexts")), "{error}");
    let reply =
        app.send("POST", "/api/v1/agents/nobody/agui", Some(&app.editor), Some(input(&fresh(), Some("hi")))).await;
    assert_eq!(reply.status.as_u16(), 404);
    // Keys AG-UI may add are accepted; text parts are read.
    let mut parts = input(&fresh(), None);
    parts["messages"] = json!([{ "id": "m1", "role": "user", "content": [{ "type": "text", "text": "hello" }] }]);
    parts["protocolVersion"] = json!("1.0.0");
    parts["somethingNew"] = json!(true);
    assert_eq!(run(&app, &app.author, parts).await.0, 200);
}

#[tokio::test]
async fn a_thread_id_is_checked_and_never_shared() {
    let (app, fake) = app().await;
    // Its rule, refused before anything runs, and shown in the OpenAPI document.
    for bad in ["", "has space", "../up", "-leading", &"x".repeat(129), "é"] {
        let (status, _, error) = run(&app, &app.editor, input(bad, Some("hi"))).await;
        assert_eq!((status, error["field"].as_str()), (422, Some("threadId")), "{bad:?}: {error}");
    }
    let doc = app.get("/api/openapi.json").await.body;
    let schema = &doc["components"]["schemas"]["RunAgentInput"]["properties"]["threadId"];
    assert_eq!(schema["pattern"], quire_core::text::CLIENT_ID_PATTERN, "{schema}");
    assert_eq!(schema["maxLength"], quire_core::text::MAX_CLIENT_ID);

    fake.push(openai_stream("Hi.", &[]));
    let thread = "3f1c2a4e-9d7b-4c1a-8e2f-0a1b2c3d4e5f";
    assert_eq!(run(&app, &app.editor, input(thread, Some("hi"))).await.0, 200);
    // Another person of the site, and its admin: taken, nothing of it shown.
    for token in [&app.author, &app.admin] {
        let (status, events, error) = run(&app, token, input(thread, Some("mine now"))).await;
        assert_eq!((status, error["field"].as_str()), (409, Some("threadId")), "{error}");
        assert!(events.is_empty());
        assert!(!error.to_string().contains("hi"), "{error}");
    }
    // Another site, with an agent of the same alias.
    let agent = json!({ "alias": "editor", "name": "Editor" });
    assert_eq!(app.send("POST", "/api/v1/agents", Some(&app.other_admin), Some(agent)).await.status.as_u16(), 201);
    let reply =
        app.send("POST", "/api/v1/agents/editor/agui", Some(&app.other_admin), Some(input(thread, Some("x")))).await;
    assert_eq!(reply.status.as_u16(), 409, "{}", reply.body);
    assert_eq!(reply.body["field"], "threadId");
    let message = reply.body["error"].as_str().unwrap();
    assert_eq!(message, format!("threadId: {thread} is taken; choose another threadId"));
    let session = app.send("GET", &format!("/api/v1/sessions/{thread}"), Some(&app.other_admin), None).await;
    assert_eq!(session.status.as_u16(), 404);
    // The holder goes on.
    fake.push(openai_stream("Again.", &[]));
    assert_eq!(run(&app, &app.editor, input(thread, Some("again"))).await.0, 200);
}

#[tokio::test]
async fn the_contexts_a_run_names_are_in_its_prompt_alone() {
    let (app, fake) = app().await;
    fake.push(openai_stream("Written in the voice.", &[]));
    fake.push(openai_stream("Plain.", &[]));
    let thread = fresh();
    let mut first = input(&thread, Some("write a tagline"));
    first["forwardedProps"] = json!({ "contexts": ["brand-voice"] });
    assert_eq!(run(&app, &app.editor, first).await.0, 200);
    assert_eq!(run(&app, &app.editor, input(&thread, Some("another one"))).await.0, 200);
    let requests = fake.requests();
    let systems: Vec<String> = requests.iter().map(quire_agent::testing::system_of).collect();
    assert!(systems[0].contains("<untrusted source=\"context:brand-voice\""), "{}", systems[0]);
    assert!(!systems[1].contains("<contexts>"), "the next run named none: {}", systems[1]);
}
