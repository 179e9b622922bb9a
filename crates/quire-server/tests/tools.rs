//! The tool registry over HTTP: list, describe, invoke, approvals.

mod common;
use common::TestApp;
use serde_json::json;

#[tokio::test]
async fn list_and_describe_tools() {
    let app = TestApp::new().await;
    let all = app.get("/api/v1/tools").await;
    assert_status!(all, 200);
    assert_eq!(all.body["count"], 68);
    let internal = app.get("/api/v1/tools?category=default").await;
    assert_eq!(internal.body["count"], 3);
    let external = app.get("/api/v1/tools?category=external").await;
    assert_eq!(external.body["count"], 6);
    assert_status!(app.get("/api/v1/tools?category=magic").await, 400);

    let viewer = app.send("GET", "/api/v1/tools", Some(&app.viewer), None).await;
    assert!(viewer.body["items"].as_array().unwrap().iter().all(|t| t["readOnly"] == true));

    let get_page = app.get("/api/v1/tools/getPage").await;
    assert_status!(get_page, 200);
    assert_eq!(get_page.body["inputSchema"]["type"], "object");
    assert!(get_page.body["guidance"].is_string());
    assert_status!(app.get("/api/v1/tools/nope").await, 404);
    assert_status!(app.send("GET", "/api/v1/tools/deletePage", Some(&app.author), None).await, 404);
    assert_status!(app.send("GET", "/api/v1/tools", None, None).await, 401);
}

#[tokio::test]
async fn invoke_returns_the_tool_json_with_a_matching_status() {
    let app = TestApp::new().await;
    let ok = app.post("/api/v1/tools/getPage/invoke", json!({"slug": "home"})).await;
    assert_status!(ok, 200);
    assert_eq!(ok.body["success"], true);
    assert_eq!(ok.body["items"][0]["slug"], "home");

    let invalid = app.post("/api/v1/tools/createPage/invoke", json!({"name": "X"})).await;
    assert_status!(invalid, 422);
    assert_eq!(
        invalid.body,
        json!({"success": false, "error": "slug: required", "errorCode": "VALIDATION", "hint": "Fix the named parameter and call again; nothing was changed."})
    );
    assert_status!(app.post("/api/v1/tools/getPage/invoke", json!({"slug": "nope"})).await, 404);
    assert_status!(app.post("/api/v1/tools/nope/invoke", json!({})).await, 404);
    let forbidden = app
        .send("POST", "/api/v1/tools/createPage/invoke", Some(&app.viewer), Some(json!({"name": "X", "slug": "x"})))
        .await;
    assert_status!(forbidden, 403);
    assert_eq!(forbidden.body["errorCode"], "FORBIDDEN");

    // the change is logged against the token, through the REST surface
    let created = app.post("/api/v1/tools/createPage/invoke", json!({"name": "Via tool", "slug": "via-tool"})).await;
    let id = created.body["item"]["id"].as_str().unwrap();
    let revisions = app.get(&format!("/api/v1/revisions/page/{id}")).await;
    assert_eq!(revisions.body["items"][0]["surface"], "rest");
    assert!(revisions.body["items"][0]["actor"].as_str().unwrap().starts_with("token:"));
}

#[tokio::test]
async fn destructive_invocations_need_an_approval_from_a_permitted_person() {
    let app = TestApp::new().await;
    let contact = app.page_id("contact").await;
    let preview = app.post("/api/v1/tools/deletePage/invoke", json!({"ids": [contact]})).await;
    assert_status!(preview, 200);
    assert_eq!(preview.body["requiresConfirmation"], true);
    let id = preview.body["confirmationId"].as_str().unwrap().to_string();

    let pending = app.get("/api/v1/approvals").await;
    assert_eq!(pending.body["count"], 1);
    assert_eq!(pending.body["items"][0]["tool"], "deletePage");
    assert_eq!(pending.body["items"][0]["args"], json!({"ids": [contact]}));

    let early = app.post("/api/v1/tools/deletePage/invoke", json!({"ids": [contact], "confirmationId": id})).await;
    assert_status!(early, 428);
    assert_status!(app.send("POST", &format!("/api/v1/approvals/{id}/approve"), Some(&app.author), None).await, 403);
    assert_status!(
        app.send("POST", &format!("/api/v1/approvals/{id}/approve"), Some(&app.other_admin), None).await,
        404
    );
    let approved = app.send("POST", &format!("/api/v1/approvals/{id}/approve"), Some(&app.editor), None).await;
    assert_status!(approved, 200);
    assert_eq!(approved.body["status"], "approved");
    assert_status!(app.send("POST", &format!("/api/v1/approvals/{id}/approve"), Some(&app.editor), None).await, 409);

    let done = app.post("/api/v1/tools/deletePage/invoke", json!({"ids": [contact], "confirmationId": id})).await;
    assert_status!(done, 200);
    assert_status!(app.get(&format!("/api/v1/pages/{contact}")).await, 404);
    let again = app.post("/api/v1/tools/deletePage/invoke", json!({"ids": [contact], "confirmationId": id})).await;
    assert_status!(again, 428);

    // rejection
    let pricing = app.page_id("pricing").await;
    let preview = app.post("/api/v1/tools/deletePage/invoke", json!({"ids": [pricing]})).await;
    let id = preview.body["confirmationId"].as_str().unwrap().to_string();
    let rejected = app.post(&format!("/api/v1/approvals/{id}/reject"), json!({"reason": "still selling"})).await;
    assert_eq!(rejected.body["status"], "rejected");
    let refused = app.post("/api/v1/tools/deletePage/invoke", json!({"ids": [pricing], "confirmationId": id})).await;
    assert_eq!(refused.body["error"], "the request was rejected: still selling");
    assert_status!(app.get(&format!("/api/v1/pages/{pricing}")).await, 200);
}

#[tokio::test]
async fn a_conversational_token_confirms_in_the_same_session() {
    let app = TestApp::new().await;
    let token = app
        .token(quire_store::NewToken {
            approval_policy: Some(quire_core::model::ApprovalPolicy::Conversational),
            ..quire_store::NewToken::new("trusted", quire_core::access::Group::Editor, "demo")
        })
        .await;
    let contact = app.page_id("contact").await;
    let body = json!({"ids": [contact]}).to_string();
    let session = [("x-quire-session", "chat-7")];
    let preview = app.send_raw("POST", "/api/v1/tools/deletePage/invoke", Some(&token), Some(body), &session).await;
    assert_eq!(preview.body["requiresConfirmation"], true);
    let confirm = json!({"ids": [contact], "confirmed": true}).to_string();
    let other = app
        .send_raw(
            "POST",
            "/api/v1/tools/deletePage/invoke",
            Some(&token),
            Some(confirm.clone()),
            &[("x-quire-session", "chat-8")],
        )
        .await;
    assert_status!(other, 428);
    let done = app.send_raw("POST", "/api/v1/tools/deletePage/invoke", Some(&token), Some(confirm), &session).await;
    assert_status!(done, 200);
    assert_status!(app.get(&format!("/api/v1/pages/{contact}")).await, 404);
}

#[tokio::test]
async fn mcp_needs_a_token_and_an_allowed_host() {
    let app = TestApp::new().await;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let accept = ("accept", "application/json, text/event-stream");
    let none = app.send_raw("POST", "/mcp", None, Some(init.into()), &[accept, ("host", "127.0.0.1")]).await;
    assert_status!(none, 401);
    let bad = app.send_raw("POST", "/mcp", Some("qk_nope"), Some(init.into()), &[accept, ("host", "127.0.0.1")]).await;
    assert_status!(bad, 401);
    let foreign =
        app.send_raw("POST", "/mcp", Some(&app.admin), Some(init.into()), &[accept, ("host", "evil.example")]).await;
    assert_status!(foreign, 403);
    let ok = app.send_raw("POST", "/mcp", Some(&app.admin), Some(init.into()), &[accept, ("host", "127.0.0.1")]).await;
    assert_status!(ok, 200);
}

#[tokio::test]
async fn mcp_refuses_pages_of_other_origins() {
    let app = TestApp::new().await;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let accept = ("accept", "application/json, text/event-stream");
    let host = ("host", "127.0.0.1:8080");
    for origin in ["https://evil.example", "http://127.0.0.1:9999", "null"] {
        let foreign = app
            .send_raw("POST", "/mcp", Some(&app.admin), Some(init.into()), &[accept, host, ("origin", origin)])
            .await;
        assert_status!(foreign, 403);
        assert!(foreign.body.to_string().contains("mcp_allowed_origins"), "{origin}: {:?}", foreign.body);
        // refused before the token is even looked at
        let anonymous =
            app.send_raw("POST", "/mcp", None, Some(init.into()), &[accept, host, ("origin", origin)]).await;
        assert_status!(anonymous, 403);
    }
    let own = app
        .send_raw(
            "POST",
            "/mcp",
            Some(&app.admin),
            Some(init.into()),
            &[accept, host, ("origin", "http://127.0.0.1:8080")],
        )
        .await;
    assert_status!(own, 200);
    let program = app.send_raw("POST", "/mcp", Some(&app.admin), Some(init.into()), &[accept, host]).await;
    assert_status!(program, 200);
}

#[tokio::test]
async fn reject_needs_no_body_as_approve_needs_none() {
    let app = TestApp::new().await;
    let pricing = app.page_id("pricing").await;
    let preview = app.post("/api/v1/tools/deletePage/invoke", json!({"ids": [pricing]})).await;
    let id = preview.body["confirmationId"].as_str().unwrap().to_string();
    let path = format!("/api/v1/approvals/{id}/reject");
    let bad = app.send_raw("POST", &path, Some(&app.admin), Some("{".into()), &[]).await;
    assert_status!(bad, 400);
    let unknown = app.post(&path, json!({"why": "no"})).await;
    assert_status!(unknown, 400);
    assert!(unknown.error().contains("why"), "{}", unknown.body);
    let rejected = app.send("POST", &path, Some(&app.admin), None).await;
    assert_status!(rejected, 200);
    assert_eq!(rejected.body["status"], "rejected");
    assert!(rejected.body["reason"].is_null(), "{}", rejected.body);
}
