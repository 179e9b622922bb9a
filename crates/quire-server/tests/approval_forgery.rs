//! Approval forgery: every way a destructive call could run without the
//! person's approval of exactly that call, by exactly that caller, tried
//! through the real router (REST, MCP over streamable HTTP, the agent).
//! Each attempt must fail and change nothing; the legitimate path must work.

mod common;

use axum::body::Body;
use axum::http::Request;
use common::{Reply, TestApp};
use http_body_util::BodyExt;
use quire_agent::testing::{openai_stream, serve};
use quire_core::access::Group;
use quire_core::model::ApprovalPolicy;
use quire_store::NewToken;
use serde_json::{Value, json};
use tower::ServiceExt;

fn confirmation_id(reply: &Reply) -> String {
    assert_eq!(reply.body["requiresConfirmation"], true, "{}", reply.body);
    reply.body["confirmationId"].as_str().unwrap().to_string()
}

/// Asserts an attempt was refused as needing approval, naming why.
#[track_caller]
fn refused(reply: &Reply, why: &str) {
    assert_eq!(reply.status.as_u16(), 428, "{}", reply.body);
    assert_eq!(reply.body["errorCode"], "APPROVAL_REQUIRED", "{}", reply.body);
    let error = reply.body["error"].as_str().unwrap_or_default();
    assert!(error.contains(why), "expected \"{why}\" in: {error}");
}

async fn invoke(app: &TestApp, token: &str, tool: &str, args: Value, session: Option<&str>) -> Reply {
    let headers: Vec<(&str, &str)> = session.map(|s| vec![("x-quire-session", s)]).unwrap_or_default();
    app.send_raw("POST", &format!("/api/v1/tools/{tool}/invoke"), Some(token), Some(args.to_string()), &headers).await
}

async fn new_token(app: &TestApp, group: Group, policy: Option<ApprovalPolicy>) -> String {
    app.token(NewToken { approval_policy: policy, ..NewToken::new("forgery", group, "demo") }).await
}

/// A minimal MCP client over the router: initialize, then calls.
struct Mcp<'a> {
    app: &'a TestApp,
    token: String,
    session: String,
}

impl<'a> Mcp<'a> {
    async fn connect(app: &'a TestApp, token: &str) -> Mcp<'a> {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "forgery", "version": "1"}}});
        let (headers, _) = post_mcp(app, token, None, init).await;
        let session = headers.get("mcp-session-id").expect("a session id").to_str().unwrap().to_string();
        let mut mcp = Mcp { app, token: token.to_string(), session };
        mcp.notify().await;
        mcp
    }

    async fn notify(&mut self) {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        post_mcp(self.app, &self.token, Some(&self.session), note).await;
    }

    /// `tools/call`; answers the tool's structured result.
    async fn call(&self, tool: &str, args: Value) -> Value {
        let req =
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": args}});
        let (_, body) = post_mcp(self.app, &self.token, Some(&self.session), req).await;
        let result = &body["result"];
        result.get("structuredContent").cloned().unwrap_or_else(|| {
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap_or("null")).unwrap_or(Value::Null)
        })
    }
}

/// One JSON-RPC message to `/mcp`; answers the headers and the JSON-RPC
/// answer (read from the SSE stream or the JSON body).
async fn post_mcp(app: &TestApp, token: &str, session: Option<&str>, msg: Value) -> (axum::http::HeaderMap, Value) {
    let mut req = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("authorization", format!("Bearer {token}"))
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18");
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    let res = app.router.clone().oneshot(req.body(Body::from(msg.to_string())).unwrap()).await.unwrap();
    let headers = res.headers().clone();
    if msg.get("id").is_none() {
        return (headers, Value::Null);
    }
    let mut body = res.into_body();
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while let Ok(Some(Ok(frame))) = tokio::time::timeout_at(deadline, body.frame()).await {
        if let Some(data) = frame.data_ref() {
            text.push_str(&String::from_utf8_lossy(data));
        }
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            return (headers, v);
        }
        for line in text.lines() {
            if let Some(v) = line.strip_prefix("data:").and_then(|d| serde_json::from_str::<Value>(d.trim()).ok())
                && v.get("id").is_some()
            {
                return (headers, v);
            }
        }
    }
    panic!("no JSON-RPC answer in {text}");
}

async fn token_actor(app: &TestApp, secret: &str) -> String {
    format!("token:{}", app.store.authenticate(secret).await.unwrap().unwrap().token.id)
}

#[tokio::test]
async fn an_approval_runs_only_for_its_requester_on_its_surface() {
    let app = TestApp::new().await;
    let pricing = app.page_id("pricing").await;
    let args = json!({ "ids": [pricing] });
    let requester = new_token(&app, Group::Editor, None).await;
    let id = confirmation_id(&invoke(&app, &requester, "deletePage", args.clone(), None).await);
    assert_eq!(app.send("POST", &format!("/api/v1/approvals/{id}/approve"), Some(&app.admin), None).await.status, 200);
    let with_id = json!({ "ids": [pricing], "confirmationId": id });

    // another token that learns the id, even an admin's
    refused(&invoke(&app, &app.admin, "deletePage", with_id.clone(), None).await, "another caller");
    refused(&invoke(&app, &app.editor, "deletePage", with_id.clone(), None).await, "another caller");
    // the same token, through MCP: the MCP rule (other credentials approve)
    // must hold however the preview was made
    let mcp = Mcp::connect(&app, &requester).await;
    let over_mcp = mcp.call("deletePage", with_id.clone()).await;
    assert_eq!(over_mcp["errorCode"], "APPROVAL_REQUIRED", "{over_mcp}");
    assert!(over_mcp["error"].as_str().unwrap().contains("another surface"), "{over_mcp}");
    // the same token and id as the agent surface (the runtime's context)
    let agent_ctx = quire_tools::CallContext {
        session_id: Some("s".into()),
        turn_id: Some("1".into()),
        ..quire_tools::CallContext::new(
            token_actor(&app, &requester).await,
            Group::Editor,
            app.scope.clone(),
            quire_core::model::Surface::Agent,
        )
    };
    let registry = quire_tools::Registry::new(quire_tools::Services::new(app.store.clone(), &std::env::temp_dir()));
    let as_agent = registry.call(&agent_ctx, "deletePage", with_id.clone()).await;
    assert_eq!(as_agent["errorCode"], "APPROVAL_REQUIRED", "{as_agent}");
    assert!(app.store.page(&app.scope, &pricing).await.is_ok(), "nothing ran");

    // the requester, where it asked: runs once
    let done = invoke(&app, &requester, "deletePage", with_id.clone(), None).await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert!(app.store.page(&app.scope, &pricing).await.is_err());
    refused(&invoke(&app, &requester, "deletePage", with_id, None).await, "already used");
}

#[tokio::test]
async fn an_mcp_request_needs_other_credentials_and_no_confirmed_flag() {
    let app = TestApp::new().await;
    let contact = app.page_id("contact").await;
    let client = new_token(&app, Group::Editor, Some(ApprovalPolicy::Conversational)).await;
    let mcp = Mcp::connect(&app, &client).await;
    let preview = mcp.call("deletePage", json!({ "ids": [contact] })).await;
    let id = preview["confirmationId"].as_str().expect("a preview").to_string();
    // a conversational token's "confirmed: true" is no approval over MCP
    let confirmed = mcp.call("deletePage", json!({ "ids": [contact], "confirmed": true })).await;
    assert_eq!(confirmed["errorCode"], "APPROVAL_REQUIRED", "{confirmed}");
    // the client's own token may not approve what it asked for
    let own = app.send("POST", &format!("/api/v1/approvals/{id}/approve"), Some(&client), None).await;
    assert_eq!(own.status, 403, "{}", own.body);
    // approvals never come through MCP: there is no tool for it, and the
    // pending request does not run on its own
    let early = mcp.call("deletePage", json!({ "ids": [contact], "confirmationId": id })).await;
    assert_eq!(early["errorCode"], "APPROVAL_REQUIRED", "{early}");
    assert!(app.store.page(&app.scope, &contact).await.is_ok());
    // a person with other credentials approves; then the client runs it
    assert_eq!(app.send("POST", &format!("/api/v1/approvals/{id}/approve"), Some(&app.admin), None).await.status, 200);
    let done = mcp.call("deletePage", json!({ "ids": [contact], "confirmationId": id })).await;
    assert_eq!(done["success"], true, "{done}");
    assert!(app.store.page(&app.scope, &contact).await.is_err());
}

#[tokio::test]
async fn a_conversational_caller_confirms_only_its_own_preview() {
    let app = TestApp::new().await;
    let contact = app.page_id("contact").await;
    let args = json!({ "ids": [contact] });
    let first = new_token(&app, Group::Editor, Some(ApprovalPolicy::Conversational)).await;
    let second = new_token(&app, Group::Editor, Some(ApprovalPolicy::Conversational)).await;
    confirmation_id(&invoke(&app, &first, "deletePage", args.clone(), Some("shared")).await);
    let confirm = json!({ "ids": [contact], "confirmed": true });
    // another caller in the same X-Quire-Session
    refused(&invoke(&app, &second, "deletePage", confirm.clone(), Some("shared")).await, "no preview");
    // the same caller in another session, or with none
    refused(&invoke(&app, &first, "deletePage", confirm.clone(), Some("other")).await, "no preview");
    refused(&invoke(&app, &first, "deletePage", confirm.clone(), None).await, "not accepted");
    // a user-policy token never confirms by flag
    refused(&invoke(&app, &app.editor, "deletePage", confirm.clone(), Some("shared")).await, "not accepted");
    // different arguments
    let pricing = app.page_id("pricing").await;
    refused(
        &invoke(&app, &first, "deletePage", json!({"ids": [pricing], "confirmed": true}), Some("shared")).await,
        "no preview",
    );
    assert!(app.store.page(&app.scope, &contact).await.is_ok(), "nothing ran");
    let done = invoke(&app, &first, "deletePage", confirm.clone(), Some("shared")).await;
    assert_eq!(done.status, 200, "{}", done.body);
    refused(&invoke(&app, &first, "deletePage", confirm, Some("shared")).await, "no preview");
}

#[tokio::test]
async fn changed_arguments_records_reuse_and_rejection_are_refused() {
    let app = TestApp::new().await;
    let about = app.page_id("about").await;
    let pricing = app.page_id("pricing").await;
    let id = confirmation_id(&invoke(&app, &app.editor, "deletePage", json!({ "ids": [about] }), None).await);
    assert_eq!(app.send("POST", &format!("/api/v1/approvals/{id}/approve"), Some(&app.admin), None).await.status, 200);
    // other arguments under the same id
    for args in [
        json!({ "ids": [pricing], "confirmationId": id }),
        json!({ "ids": [about, pricing], "confirmationId": id }),
        json!({ "ids": [about], "confirmationId": id, "extra": 1 }),
    ] {
        let reply = invoke(&app, &app.editor, "deletePage", args, None).await;
        assert_ne!(reply.status, 200, "{}", reply.body);
    }
    refused(
        &invoke(&app, &app.editor, "deleteSection", json!({ "ids": [about], "confirmationId": id }), None).await,
        "other arguments",
    );
    // a record of the cascade changed after the approval
    let team = app.page_id("team").await;
    let patched = app.patch(&format!("/api/v1/pages/{team}"), json!({ "name": "Team (new)" })).await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    let stale = invoke(&app, &app.editor, "deletePage", json!({ "ids": [about], "confirmationId": id }), None).await;
    assert_eq!(stale.status, 409, "{}", stale.body);
    assert!(app.store.page(&app.scope, &about).await.is_ok());

    // rejected requests never run
    let id = confirmation_id(&invoke(&app, &app.editor, "deletePage", json!({ "ids": [pricing] }), None).await);
    let rejected = app
        .send("POST", &format!("/api/v1/approvals/{id}/reject"), Some(&app.admin), Some(json!({ "reason": "no" })))
        .await;
    assert_eq!(rejected.status, 200);
    let after = invoke(&app, &app.editor, "deletePage", json!({ "ids": [pricing], "confirmationId": id }), None).await;
    assert_eq!(after.status, 428, "{}", after.body);
    assert!(after.body["error"].as_str().unwrap().contains("rejected"));
    // and cannot be approved afterwards
    assert_eq!(app.send("POST", &format!("/api/v1/approvals/{id}/approve"), Some(&app.admin), None).await.status, 409);
    // unknown and made-up ids
    refused(
        &invoke(&app, &app.editor, "deletePage", json!({ "ids": [pricing], "confirmationId": "cf_forged" }), None)
            .await,
        "unknown",
    );
    assert!(app.store.page(&app.scope, &pricing).await.is_ok());
}

#[tokio::test]
async fn concurrent_executions_of_one_approval_run_once() {
    let app = TestApp::new().await;
    let pricing = app.page_id("pricing").await;
    let id = confirmation_id(&invoke(&app, &app.editor, "deletePage", json!({ "ids": [pricing] }), None).await);
    assert_eq!(app.send("POST", &format!("/api/v1/approvals/{id}/approve"), Some(&app.admin), None).await.status, 200);
    let args = json!({ "ids": [pricing], "confirmationId": id });
    let attempts = (0..16).map(|_| invoke(&app, &app.editor, "deletePage", args.clone(), None));
    let replies = futures_util::future::join_all(attempts).await;
    let ran = replies.iter().filter(|r| r.status == 200).count();
    assert_eq!(ran, 1, "{:?}", replies.iter().map(|r| r.status).collect::<Vec<_>>());
    let archives = app.get("/api/v1/archive?entity=page").await;
    let of_pricing =
        archives.body["items"].as_array().unwrap().iter().filter(|a| a["entityId"] == pricing.as_str()).count();
    assert_eq!(of_pricing, 1, "one archive record");
}

#[tokio::test]
async fn approvers_need_the_right_to_the_call_and_to_the_agent() {
    let app = TestApp::new().await;
    let pricing = app.page_id("pricing").await;
    let id = confirmation_id(&invoke(&app, &app.editor, "deletePage", json!({ "ids": [pricing] }), None).await);
    for token in [&app.viewer, &app.author, &app.other_admin] {
        let reply = app.send("POST", &format!("/api/v1/approvals/{id}/approve"), Some(token), None).await;
        assert!(matches!(reply.status.as_u16(), 403 | 404), "{}", reply.body);
    }
    assert_eq!(app.store.confirmation(&app.scope, &id).await.unwrap().status, quire_store::ConfirmationStatus::Pending);
}

#[tokio::test]
async fn restoring_a_revision_needs_the_right_to_make_that_change() {
    let app = TestApp::new().await;
    // an admin hardens an agent: user policy, fewer tools
    let before = app.get("/api/v1/agents/editor").await;
    assert_eq!(before.body["approvalPolicy"], "user");
    let opened = app.patch("/api/v1/agents/editor", json!({ "approvalPolicy": "conversational" })).await;
    assert_eq!(opened.status, 200, "{}", opened.body);
    let hardened = app.patch("/api/v1/agents/editor", json!({ "approvalPolicy": "user", "enabled": false })).await;
    assert_eq!(hardened.status, 200, "{}", hardened.body);
    let changes = app.get("/api/v1/changes?entity=agent").await;
    let items = changes.body["items"].as_array().unwrap();
    // every agent revision: an editor may restore none of them
    for change in items {
        let id = change["id"].as_i64().unwrap();
        let reply = app.send("POST", &format!("/api/v1/changes/{id}/restore"), Some(&app.editor), None).await;
        assert_eq!(reply.status, 403, "change {id}: {}", reply.body);
    }
    let agent = app.get("/api/v1/agents/editor").await;
    assert_eq!(agent.body["approvalPolicy"], "user");
    assert_eq!(agent.body["enabled"], false);
    // an author may not restore a page revision (it can bring back content)
    let about = app.page_id("about").await;
    app.patch(&format!("/api/v1/pages/{about}"), json!({ "name": "About (2)" })).await;
    let page_changes = app.get(&format!("/api/v1/changes?entityId={about}")).await;
    let id = page_changes.body["items"][0]["id"].as_i64().unwrap();
    let reply = app.send("POST", &format!("/api/v1/changes/{id}/restore"), Some(&app.author), None).await;
    assert_eq!(reply.status, 403, "{}", reply.body);
    // an admin may
    let first = items.last().unwrap()["id"].as_i64().unwrap();
    let ok = app.send("POST", &format!("/api/v1/changes/{first}/restore"), Some(&app.admin), None).await;
    assert_eq!(ok.status, 200, "{}", ok.body);
}

/// The agent surface: a conversational agent cannot confirm its own
/// preview; the user's plain yes in their next message approves it.
#[tokio::test]
async fn a_conversational_agent_cannot_confirm_its_own_preview() {
    let (fake, base) = serve().await;
    let app = TestApp::with_llm(&base).await;
    let patched = app.patch("/api/v1/agents/editor", json!({ "approvalPolicy": "conversational" })).await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    let contact = app.page_id("contact").await;
    let delete = json!({ "ids": [contact] }).to_string();
    let confirm = json!({ "ids": [contact], "confirmed": true }).to_string();
    // step 1 previews; step 2 confirms at once, with no person in between
    fake.push(openai_stream("", &[("d1", "deletePage", &delete)]));
    fake.push(openai_stream("", &[("d2", "deletePage", &confirm)]));
    fake.push(openai_stream("Shall I delete Contact?", &[]));
    let started = app.post("/api/v1/agents/editor/chat", json!({ "message": "delete the contact page" })).await;
    assert_eq!(started.status, 202, "{}", started.body);
    let session = started.body["sessionId"].as_str().unwrap().to_string();
    app.sse(&format!("/api/v1/sessions/{session}/events"), &app.admin, None, "RUN_FINISHED").await;
    assert!(app.store.page(&app.scope, &contact).await.is_ok(), "the model confirmed itself; nothing may run");
    let requests = fake.requests();
    let result = quire_agent::testing::last_tool_result(&requests[2]);
    assert_eq!(result["errorCode"], "APPROVAL_REQUIRED", "{result}");
    assert!(result["error"].as_str().unwrap().contains("once the user approved"), "{result}");

    // the user answers yes (the server reads it as their approval): the next turn may confirm
    fake.push(openai_stream("", &[("d3", "deletePage", &confirm)]));
    fake.push(openai_stream("Deleted.", &[]));
    let again = app.post("/api/v1/agents/editor/chat", json!({ "message": "yes", "sessionId": session })).await;
    assert_eq!(again.status, 202, "{}", again.body);
    app.sse(&format!("/api/v1/sessions/{session}/events"), &app.admin, None, "RUN_FINISHED").await;
    assert!(app.store.page(&app.scope, &contact).await.is_err(), "confirmed after the user's answer");
}
