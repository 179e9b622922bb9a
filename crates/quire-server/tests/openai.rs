//! The OpenAI-compatible routes: `GET /v1/models` lists the agents a token
//! may use; `POST /v1/chat/completions` runs a turn of one, whole or
//! streamed, its session carried by the conversation; a paused turn says
//! what waits and where to approve it; errors have OpenAI's shape. The
//! official clients' suites are `tests/openai`.

mod common;

use common::TestApp;
use quire_agent::testing::{Fake, Reply, openai_stream, serve};
use serde_json::{Value, json};

async fn app() -> (TestApp, Fake) {
    let (fake, base) = serve().await;
    (TestApp::with_llm(&base).await, fake)
}

/// A completion request to the editor agent: `messages` as (role, content).
fn request(messages: &[(&str, &str)]) -> Value {
    let messages: Vec<Value> =
        messages.iter().map(|(role, content)| json!({ "role": role, "content": content })).collect();
    json!({ "model": "editor", "messages": messages })
}

async fn complete(app: &TestApp, token: &str, body: Value) -> common::Reply {
    app.send("POST", "/v1/chat/completions", Some(token), Some(body)).await
}

/// The session an answer names on its last line.
fn session_of(content: &str) -> String {
    let last = content.lines().last().unwrap();
    last.strip_prefix("[quire-session]: ").unwrap_or_else(|| panic!("no session line: {content}")).to_string()
}

/// The `data:` payloads of a streamed answer, `[DONE]` as a string.
fn chunks(body: &Value) -> Vec<Value> {
    let text = body.as_str().unwrap_or_else(|| panic!("not a stream: {body}"));
    text.split("\n\n")
        .filter_map(|block| block.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|data| serde_json::from_str(data).unwrap_or_else(|_| json!(data)))
        .collect()
}

/// The text a stream's chunks carry.
fn streamed_text(chunks: &[Value]) -> String {
    chunks.iter().filter_map(|c| c.pointer("/choices/0/delta/content").and_then(Value::as_str)).collect()
}

/// An error in OpenAI's shape: answers its (type, param, code).
fn openai_error(reply: &common::Reply) -> (String, Option<String>, String) {
    let error = &reply.body["error"];
    assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{}", reply.body);
    let mut keys: Vec<&String> = error.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["code", "message", "param", "type"], "{}", reply.body);
    let param = error["param"].as_str().map(str::to_string);
    (error["type"].as_str().unwrap().into(), param, error["code"].as_str().unwrap().into())
}

#[tokio::test]
async fn models_are_the_agents_the_token_may_use() {
    let (app, _) = app().await;
    let list = app.send("GET", "/v1/models", Some(&app.editor), None).await;
    assert_eq!(list.status, 200);
    assert_eq!(list.body["object"], "list");
    let editor = list.body["data"].as_array().unwrap().iter().find(|m| m["id"] == "editor").expect("the editor agent");
    assert_eq!(editor["object"], "model");
    assert_eq!(editor["owned_by"], "quire");
    assert!(editor["created"].as_i64().unwrap() > 1_600_000_000);
    let one = app.send("GET", "/v1/models/editor", Some(&app.editor), None).await;
    assert_eq!((one.status.as_u16(), &one.body), (200, editor));
    // A disabled agent is no model.
    assert_eq!(app.patch("/api/v1/agents/editor", json!({ "enabled": false })).await.status, 200);
    let list = app.send("GET", "/v1/models", Some(&app.admin), None).await;
    assert!(!list.body["data"].as_array().unwrap().iter().any(|m| m["id"] == "editor"), "{}", list.body);
    let gone = app.send("GET", "/v1/models/editor", Some(&app.admin), None).await;
    assert_eq!(gone.status, 404);
    assert_eq!(openai_error(&gone), ("not_found_error".into(), Some("model".into()), "model_not_found".into()));
}

#[tokio::test]
async fn a_completion_is_a_turn_and_the_conversation_carries_its_session() {
    let (app, fake) = app().await;
    fake.push(openai_stream("", &[("g1", "getPage", r#"{"slug":"contact"}"#)]));
    fake.push(openai_stream("Contact is there.", &[]));
    let reply =
        complete(&app, &app.editor, request(&[("system", "be brief"), ("user", "is there a contact page?")])).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let body = &reply.body;
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["model"], "editor");
    assert!(body["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert_eq!(body["choices"][0]["message"]["role"], "assistant");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    let content = body["choices"][0]["message"]["content"].as_str().unwrap().to_string();
    assert!(content.starts_with("Contact is there.\n\n[quire-session]: "), "{content}");
    assert!(body["usage"]["total_tokens"].as_u64().is_some(), "{body}");
    // What the model read: the agent's own prompt and the person's message.
    let first = fake.requests()[0].to_string();
    assert!(first.contains("is there a contact page?") && !first.contains("be brief"), "{first}");
    let session = session_of(&content);

    // The conversation sent back names the session: its next turn.
    fake.push(openai_stream("Still there.", &[]));
    let next = request(&[("user", "is there a contact page?"), ("assistant", &content), ("user", "and now?")]);
    let reply = complete(&app, &app.editor, next).await;
    let again = reply.body["choices"][0]["message"]["content"].as_str().unwrap();
    assert_eq!(session_of(again), session);
    let stored = app.send("GET", &format!("/api/v1/sessions/{session}"), Some(&app.editor), None).await;
    assert_eq!(stored.body["session"]["turns"], 2);
    // Without it, a new session; someone else's session is none of theirs
    // (an admin, who may read it, may not speak in it).
    fake.push(openai_stream("Hello.", &[]));
    let fresh = complete(&app, &app.editor, request(&[("user", "hello")])).await;
    assert_ne!(session_of(fresh.body["choices"][0]["message"]["content"].as_str().unwrap()), session);
    fake.push(openai_stream("Hello.", &[]));
    let theirs = request(&[("user", "hi"), ("assistant", &content), ("user", "and now?")]);
    let other = complete(&app, &app.author, theirs.clone()).await;
    assert_eq!(other.status, 200, "{}", other.body);
    assert_ne!(session_of(other.body["choices"][0]["message"]["content"].as_str().unwrap()), session);
    let admin = complete(&app, &app.admin, theirs).await;
    assert_eq!((admin.status.as_u16(), admin.body["error"]["type"].as_str()), (403, Some("permission_error")));
}

#[tokio::test]
async fn a_streamed_completion_sends_chunks_then_done() {
    let (app, fake) = app().await;
    fake.push(openai_stream("Hello there.", &[]));
    let mut body = request(&[("user", "hello")]);
    body["stream"] = json!(true);
    body["stream_options"] = json!({ "include_usage": true });
    let reply = complete(&app, &app.editor, body).await;
    assert_eq!(reply.status, 200);
    let sent = chunks(&reply.body);
    assert_eq!(sent.last().unwrap(), "[DONE]");
    let objects = &sent[..sent.len() - 1];
    for chunk in objects {
        assert_eq!(chunk["object"], "chat.completion.chunk", "{chunk}");
        assert_eq!(chunk["id"], objects[0]["id"]);
        assert_eq!(chunk["model"], "editor");
    }
    assert_eq!(objects[0]["choices"][0]["delta"]["role"], "assistant");
    let text = streamed_text(objects);
    assert!(text.starts_with("Hello there.\n\n[quire-session]: "), "{text}");
    let finished: Vec<&Value> = objects.iter().filter(|c| !c["choices"][0]["finish_reason"].is_null()).collect();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["choices"][0]["finish_reason"], "stop");
    let usage = objects.last().unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert!(usage["usage"]["completion_tokens"].as_u64().is_some(), "{usage}");
    // Without include_usage, no usage chunk.
    fake.push(openai_stream("Hi.", &[]));
    let mut body = request(&[("user", "hello")]);
    body["stream"] = json!(true);
    let chunks = chunks(&complete(&app, &app.editor, body).await.body);
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
}

#[tokio::test]
async fn a_paused_turn_says_what_waits_and_the_next_message_continues() {
    let (app, fake) = app().await;
    app.script_archive_contact(&fake, "I'll archive it.").await;
    let reply = complete(&app, &app.editor, request(&[("user", "archive contact")])).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let content = reply.body["choices"][0]["message"]["content"].as_str().unwrap().to_string();
    let session = session_of(&content);
    let pending = app.send("GET", &format!("/api/v1/sessions/{session}"), Some(&app.editor), None).await;
    let approval = pending.body["session"]["pending"][0]["approvalId"].as_str().unwrap().to_string();
    assert!(content.starts_with("I'll archive it.\n\nThis turn waits for a person's approval"), "{content}");
    assert!(content.contains("- deletePage: "), "{content}");
    assert!(content.contains(&format!("approval `{approval}`")), "{content}");
    assert!(content.contains("anyone of this site whose group may use deletePage"), "{content}");
    assert!(content.contains("http://localhost/approvals"), "the back-office's approvals: {content}");
    assert!(content.contains(&format!("POST http://localhost/api/v1/approvals/{approval}/approve")), "{content}");

    // A message while it waits: the same answer, no new turn.
    let asked = fake.requests().len();
    let waiting = request(&[("user", "archive contact"), ("assistant", &content), ("user", "well?")]);
    let mut streamed = waiting.clone();
    let again = complete(&app, &app.editor, waiting).await;
    assert_eq!(again.status, 200, "{}", again.body);
    let again = again.body["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(again.starts_with("This turn waits for a person's approval"), "{again}");
    assert_eq!(session_of(again), session);
    streamed["stream"] = json!(true);
    let text = streamed_text(&chunks(&complete(&app, &app.editor, streamed).await.body));
    assert!(text.contains(&format!("approval `{approval}`")), "{text}");
    assert_eq!(fake.requests().len(), asked, "the model was not asked again");

    // Approved over REST, the turn goes on; the next message continues the session.
    fake.push(openai_stream("Archived contact.", &[]));
    let approved = app.send("POST", &format!("/api/v1/approvals/{approval}/approve"), Some(&app.editor), None).await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    for _ in 0..100 {
        let s = app.send("GET", &format!("/api/v1/sessions/{session}"), Some(&app.editor), None).await;
        if s.body["session"]["status"] == "idle" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(app.store.page_by_slug(&app.scope, "contact").await.is_err(), "archived");
    fake.push(openai_stream("You're welcome.", &[]));
    let mut next = request(&[("user", "archive contact"), ("assistant", &content), ("user", "thanks")]);
    next["stream"] = json!(true);
    let text = streamed_text(&chunks(&complete(&app, &app.editor, next).await.body));
    assert!(text.starts_with("You're welcome."), "{text}");
    assert_eq!(session_of(&text), session);
    let told = fake.requests().last().unwrap().to_string();
    assert!(told.contains("Archived contact."), "the model reads the session so far: {told}");
}

#[tokio::test]
async fn behind_a_proxy_a_pause_points_at_the_public_url() {
    let (fake, base) = serve().await;
    let app = TestApp::build(move |s| {
        s.with_profiles(quire_agent::testing::fake_profiles(&base))
            .with_public_url(Some("https://cms.example.com/".into()))
    })
    .await;
    fake.push(openai_stream("", &[("d1", "deletePage", &json!({ "ids": [app.page_id("about").await] }).to_string())]));
    let proxied = complete(&app, &app.editor, request(&[("user", "archive about")])).await;
    let proxied = proxied.body["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(proxied.contains("in the back-office at https://cms.example.com/approvals,"), "{proxied}");
}

#[tokio::test]
async fn a_streamed_pause_says_what_waits() {
    let (app, fake) = app().await;
    let contact = app.page_id("contact").await;
    fake.push(openai_stream("", &[("d1", "deletePage", &json!({ "ids": [contact] }).to_string())]));
    let mut body = request(&[("user", "archive contact")]);
    body["stream"] = json!(true);
    let chunks = chunks(&complete(&app, &app.editor, body).await.body);
    assert_eq!(chunks.last().unwrap(), "[DONE]");
    let text = streamed_text(&chunks);
    assert!(text.starts_with("This turn waits for a person's approval"), "{text}");
    assert!(text.contains("/approvals"), "{text}");
}

#[tokio::test]
async fn a_model_error_is_an_openai_error_whole_or_streamed() {
    let (app, fake) = app().await;
    fake.push(Reply::Status(400, None));
    let reply = complete(&app, &app.editor, request(&[("user", "hello")])).await;
    assert_eq!(reply.status, 502);
    assert_eq!(openai_error(&reply), ("server_error".into(), None, "model_error".into()));
    assert!(reply.body["error"]["message"].as_str().unwrap().contains("400"), "{}", reply.body);
    fake.push(Reply::Status(400, None));
    let mut body = request(&[("user", "hello")]);
    body["stream"] = json!(true);
    let reply = complete(&app, &app.editor, body).await;
    assert_eq!(reply.status, 200);
    let chunks = chunks(&reply.body);
    let last = chunks.last().unwrap();
    assert_eq!(last["error"]["type"], "server_error", "{last}");
    assert_eq!(last["error"]["code"], "model_error", "{last}");
}

#[tokio::test]
async fn refusals_have_openai_s_error_shape() {
    let (app, _) = app().await;
    let check = |reply: common::Reply, status: u16, expected: (&str, Option<&str>, &str)| {
        assert_eq!(reply.status.as_u16(), status, "{}", reply.body);
        let (kind, param, code) = openai_error(&reply);
        assert_eq!((kind.as_str(), param.as_deref(), code.as_str()), expected, "{}", reply.body);
    };
    let none = app.send("GET", "/v1/models", None, None).await;
    check(none, 401, ("authentication_error", None, "invalid_api_key"));
    let wrong = app.send("GET", "/v1/models", Some("qk_not-a-token"), None).await;
    check(wrong, 401, ("authentication_error", None, "invalid_api_key"));
    let nobody = json!({ "model": "nobody", "messages": [{ "role": "user", "content": "hi" }] });
    check(complete(&app, &app.editor, nobody).await, 404, ("not_found_error", Some("model"), "model_not_found"));
    let last = request(&[("user", "hi"), ("assistant", "hello")]);
    check(
        complete(&app, &app.editor, last).await,
        422,
        ("invalid_request_error", Some("messages.1.role"), "validation"),
    );
    let blank = request(&[("user", "  ")]);
    check(
        complete(&app, &app.editor, blank).await,
        422,
        ("invalid_request_error", Some("messages.0.content"), "validation"),
    );
    let empty = json!({ "model": "editor", "messages": [] });
    check(complete(&app, &app.editor, empty).await, 422, ("invalid_request_error", Some("messages"), "validation"));
    let mut two = request(&[("user", "hi")]);
    two["n"] = json!(2);
    check(complete(&app, &app.editor, two).await, 400, ("invalid_request_error", Some("n"), "bad_request"));
    let typed = json!({ "model": "editor", "messages": [{ "role": "user", "content": 7 }] });
    let reply = complete(&app, &app.editor, typed).await;
    assert_eq!(reply.status, 400);
    openai_error(&reply);
    let missing = app.send("GET", "/v1/nothing", Some(&app.editor), None).await;
    check(missing, 404, ("not_found_error", None, "not_found"));
    let method = app.send("GET", "/v1/chat/completions", Some(&app.editor), None).await;
    check(method, 405, ("invalid_request_error", None, "method_not_allowed"));
    // Parts: the text ones are read; OpenAI's other parameters are accepted.
    let (fake, base) = serve().await;
    let app = TestApp::with_llm(&base).await;
    fake.push(openai_stream("Hi.", &[]));
    let parts = json!({ "model": "editor", "temperature": 0.2, "max_tokens": 50, "user": "u-1", "metadata": { "a": "b" },
        "messages": [{ "role": "user", "content": [{ "type": "text", "text": "hello" }, { "type": "text", "text": "there" }] }] });
    assert_eq!(complete(&app, &app.author, parts).await.status, 200);
    assert!(fake.requests()[0].to_string().contains("hello\\nthere"));
    // The rest of the API keeps its own shape.
    let rest = app.send("GET", "/api/v1/agents/nobody", Some(&app.editor), None).await;
    assert_eq!(rest.body["code"], "NOT_FOUND");
}
