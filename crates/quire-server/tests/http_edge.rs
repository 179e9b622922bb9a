//! The HTTP edge: what a request must look like (one JSON value, no repeated
//! key, a JSON Content-Type, a body within the limit, path values of the
//! right type), that every error comes in the one JSON shape, and the
//! OpenAPI document that describes it.

mod common;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use common::TestApp;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

/// Status, headers and body (JSON when it parses, text otherwise).
async fn call(app: &TestApp, req: Request<Body>) -> (StatusCode, HeaderMap, Value) {
    let res = app.router.clone().oneshot(req).await.unwrap();
    let (status, headers) = (res.status(), res.headers().clone());
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
    (status, headers, body)
}

fn request(
    app: &TestApp,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: impl Into<Body>,
) -> Request<Body> {
    let mut req = Request::builder().method(method).uri(path).header("authorization", format!("Bearer {}", app.admin));
    if let Some(ct) = content_type {
        req = req.header("content-type", ct);
    }
    req.body(body.into()).unwrap()
}

/// Asserts the one error shape: `{ error, code, field? }` as JSON.
fn assert_error(status: StatusCode, headers: &HeaderMap, body: &Value, expected: u16, code: &str) {
    assert_eq!(status.as_u16(), expected, "body: {body}");
    assert!(
        headers["content-type"].to_str().unwrap().starts_with("application/json"),
        "content-type {:?}",
        headers["content-type"]
    );
    assert_eq!(body["code"], code, "body: {body}");
    assert!(body["error"].as_str().is_some_and(|e| !e.is_empty()), "body: {body}");
}

async fn page_count(app: &TestApp) -> u64 {
    app.get("/api/v1/pages?limit=100").await.body["count"].as_u64().unwrap()
}

#[tokio::test]
async fn trailing_bytes_after_the_body_are_refused() {
    let app = TestApp::new().await;
    let before = page_count(&app).await;
    for body in [r#"{"name": "T", "slug": "trailing"} {}"#, r#"{"name": "T", "slug": "trailing"}x"#] {
        let r = app.send_raw("POST", "/api/v1/pages", Some(&app.admin), Some(body.into()), &[]).await;
        assert_status!(r, 400);
        assert_eq!(r.code(), "BAD_REQUEST");
        assert!(r.error().contains("not valid JSON"), "{}", r.error());
    }
    // Whitespace after the value is still one value.
    let ok = app.send_raw(
        "POST",
        "/api/v1/pages",
        Some(&app.admin),
        Some("{\"name\": \"T\", \"slug\": \"t\"}\n ".into()),
        &[],
    );
    assert_status!(ok.await, 201);
    assert_eq!(page_count(&app).await, before + 1);
}

#[tokio::test]
async fn repeated_keys_are_refused_in_bodies_and_tool_arguments() {
    let app = TestApp::new().await;
    let before = page_count(&app).await;
    let body = r#"{"name": "A", "slug": "dup-a", "name": "B"}"#;
    let r = app.send_raw("POST", "/api/v1/pages", Some(&app.admin), Some(body.into()), &[]).await;
    assert_status!(r, 400);
    assert_eq!(r.body["field"], "name");
    assert_eq!(r.error(), "name: the key appears more than once");

    let nested = r#"{"name": "A", "slug": "dup-b", "meta": {"title": "x", "title": "y"}}"#;
    let r = app.send_raw("POST", "/api/v1/pages", Some(&app.admin), Some(nested.into()), &[]).await;
    assert_status!(r, 400);
    assert_eq!(r.body["field"], "meta.title");

    let args = r#"{"name": "Tool", "slug": "dup-c", "slug": "dup-d"}"#;
    let r = app.send_raw("POST", "/api/v1/tools/createPage/invoke", Some(&app.admin), Some(args.into()), &[]).await;
    assert_status!(r, 400);
    assert_eq!(r.code(), "BAD_REQUEST");
    assert_eq!(r.body["field"], "slug");
    assert_eq!(page_count(&app).await, before, "nothing was created");
}

#[tokio::test]
async fn bodies_must_be_sent_as_json() {
    let app = TestApp::new().await;
    let before = page_count(&app).await;
    let body = r#"{"name": "Typed", "slug": "typed"}"#;
    for content_type in [Some("text/plain"), Some("application/x-www-form-urlencoded"), None] {
        let (status, headers, reply) = call(&app, request(&app, "POST", "/api/v1/pages", content_type, body)).await;
        assert_error(status, &headers, &reply, 415, "UNSUPPORTED_MEDIA_TYPE");
        assert!(reply["error"].as_str().unwrap().contains("application/json"), "{reply}");
    }
    assert_eq!(page_count(&app).await, before);
    for content_type in ["application/json; charset=utf-8", "APPLICATION/JSON", "application/merge-patch+json"] {
        let slug = format!("typed-{}", page_count(&app).await);
        let body = json!({"name": "Typed", "slug": slug}).to_string();
        let (status, _, reply) = call(&app, request(&app, "POST", "/api/v1/pages", Some(content_type), body)).await;
        assert_eq!(status, StatusCode::CREATED, "{content_type}: {reply}");
    }
}

#[tokio::test]
async fn a_body_over_the_limit_is_a_json_413() {
    let app = TestApp::new().await;
    let big = format!(r#"{{"name": "Big", "slug": "big", "meta": {{"x": "{}"}}}}"#, "a".repeat(3 * 1024 * 1024));
    // Declared up front: refused by the limit layer before anything reads it.
    let mut req = request(&app, "POST", "/api/v1/pages", Some("application/json"), big.clone());
    req.headers_mut().insert("content-length", big.len().into());
    let (status, headers, reply) = call(&app, req).await;
    assert_error(status, &headers, &reply, 413, "PAYLOAD_TOO_LARGE");
    // Streamed without a length: refused while it is read.
    let stream = Body::from_stream(futures_util::stream::iter(
        big.into_bytes().chunks(64 * 1024).map(|c| Ok::<_, std::io::Error>(c.to_vec())).collect::<Vec<_>>(),
    ));
    let (status, headers, reply) =
        call(&app, request(&app, "POST", "/api/v1/pages", Some("application/json"), stream)).await;
    assert_error(status, &headers, &reply, 413, "PAYLOAD_TOO_LARGE");
    assert!(app.store.page_by_slug(&app.scope, "big").await.is_err());
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_in_the_json_shape() {
    let app = TestApp::new().await;
    let (status, headers, reply) = call(&app, request(&app, "GET", "/api/v1/nothing-here", None, Body::empty())).await;
    assert_error(status, &headers, &reply, 404, "NOT_FOUND");
    assert_eq!(reply["error"], "nothing is at /api/v1/nothing-here");

    let (status, headers, reply) = call(&app, request(&app, "DELETE", "/api/v1/me", None, Body::empty())).await;
    assert_error(status, &headers, &reply, 405, "METHOD_NOT_ALLOWED");
    assert!(headers["allow"].to_str().unwrap().contains("GET"), "{headers:?}");
    assert!(reply["error"].as_str().unwrap().starts_with("DELETE is not allowed on /api/v1/me"), "{reply}");

    let (status, headers, reply) = call(&app, request(&app, "GET", "/uploads/missing.png", None, Body::empty())).await;
    assert_error(status, &headers, &reply, 404, "NOT_FOUND");
}

#[tokio::test]
async fn every_405_names_the_methods_its_allow_header_lists() {
    let app = TestApp::new().await;
    let doc = app.send("GET", "/api/openapi.json", None, None).await.body;
    let mut refused = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        let documented: Vec<&str> = item.as_object().unwrap().keys().map(String::as_str).collect();
        let Some(method) = ["put", "patch", "delete", "post", "get"].into_iter().find(|m| !documented.contains(m))
        else {
            continue;
        };
        let concrete =
            path.split('/').map(|part| if part.starts_with('{') { "x" } else { part }).collect::<Vec<_>>().join("/");
        let method = method.to_ascii_uppercase();
        let (status, headers, reply) = call(&app, request(&app, &method, &concrete, None, Body::empty())).await;
        if status != StatusCode::METHOD_NOT_ALLOWED {
            continue;
        }
        refused += 1;
        let allow = headers.get("allow").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
        assert!(!allow.is_empty(), "{method} {path}: a 405 without methods in Allow");
        for m in &documented {
            assert!(allow.contains(&m.to_ascii_uppercase()), "{method} {path}: Allow {allow} lacks {m}");
        }
        // `/v1` answers OpenAI's shape: `{ error: { message, … } }`.
        let error = reply["error"].as_str().or(reply["error"]["message"].as_str()).unwrap();
        assert!(error.ends_with(&format!("allowed: {allow}")), "{method} {path}: {error} (Allow: {allow})");
    }
    assert!(refused > 30, "only {refused} paths answered 405");

    // A token is read as any other record, never with its secret.
    let made = app.post("/api/v1/tokens", json!({"name": "reader", "group": "viewer"})).await;
    assert_status!(made, 201);
    let id = made.body["id"].as_str().unwrap();
    let read = app.get(&format!("/api/v1/tokens/{id}")).await;
    assert_status!(read, 200);
    assert_eq!(read.body["name"], "reader");
    assert!(read.body.get("secret").is_none(), "{}", read.body);
    assert_status!(app.send("GET", &format!("/api/v1/tokens/{id}"), Some(&app.editor), None).await, 403);
    assert_status!(app.send("GET", &format!("/api/v1/tokens/{id}"), Some(&app.other_admin), None).await, 404);
    assert_status!(app.delete(&format!("/api/v1/tokens/{id}")).await, 200);
    assert_status!(app.get(&format!("/api/v1/tokens/{id}")).await, 404);
}

/// A POST to `/mcp` as an MCP client sends it.
fn mcp_post(app: &TestApp, content_type: &str, body: impl Into<Body>) -> Request<Body> {
    let mut req = request(app, "POST", "/mcp", Some(content_type), body);
    req.headers_mut().insert("accept", "application/json, text/event-stream".parse().unwrap());
    req.headers_mut().insert("host", "127.0.0.1".parse().unwrap());
    req
}

/// Asserts a JSON-RPC error response with no id whose `data` is the one
/// error shape: `/mcp`'s answer to what REST answers with that shape.
fn assert_jsonrpc_error(status: StatusCode, headers: &HeaderMap, body: &Value, expected: u16, rpc: i64, code: &str) {
    assert_eq!(status.as_u16(), expected, "body: {body}");
    assert!(headers["content-type"].to_str().unwrap().starts_with("application/json"), "{headers:?}");
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["id"], Value::Null, "{body}");
    assert_eq!(body["error"]["code"], rpc, "{body}");
    assert_eq!(body["error"]["data"]["code"], code, "{body}");
    assert_eq!(body["error"]["message"], body["error"]["data"]["error"], "{body}");
}

#[tokio::test]
async fn mcp_refuses_what_rest_refuses_with_the_same_status_as_jsonrpc_errors() {
    let app = TestApp::new().await;
    // 10,000 levels deep: REST and MCP both answer 400, in the same words.
    let deep = "[".repeat(10_000) + &"]".repeat(10_000);
    let (status, headers, rest) =
        call(&app, request(&app, "POST", "/api/v1/pages", Some("application/json"), deep.clone())).await;
    assert_error(status, &headers, &rest, 400, "BAD_REQUEST");
    let (status, headers, mcp) = call(&app, mcp_post(&app, "application/json", deep)).await;
    assert_jsonrpc_error(status, &headers, &mcp, 400, -32700, "BAD_REQUEST");
    assert_eq!(mcp["error"]["data"]["error"], rest["error"], "{mcp}");

    // JSON that is no JSON-RPC message; a repeated key, as REST refuses it.
    let (status, headers, reply) = call(&app, mcp_post(&app, "application/json", "{}")).await;
    assert_jsonrpc_error(status, &headers, &reply, 400, -32600, "BAD_REQUEST");
    let twice = r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}"#;
    let (status, headers, reply) = call(&app, mcp_post(&app, "application/json", twice)).await;
    assert_jsonrpc_error(status, &headers, &reply, 400, -32600, "BAD_REQUEST");
    assert_eq!(reply["error"]["data"]["field"], "id", "{reply}");
    // A batch, which MCP has not taken since 2025-06-18: refused whole, saying so.
    let batch = r#" [{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    let (status, headers, reply) = call(&app, mcp_post(&app, "application/json", batch)).await;
    assert_jsonrpc_error(status, &headers, &reply, 400, -32600, "BAD_REQUEST");
    assert!(reply["error"]["message"].as_str().unwrap().contains("JSON-RPC batch"), "{reply}");

    // A body not declared as JSON is still refused, and says so.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let (status, headers, reply) = call(&app, mcp_post(&app, "text/plain", body)).await;
    assert_jsonrpc_error(status, &headers, &reply, 415, -32000, "UNSUPPORTED_MEDIA_TYPE");
    assert!(reply["error"]["message"].as_str().unwrap().contains("application/json"), "{reply}");

    // The transport's own refusals (no Accept naming both JSON and SSE) and
    // the body limit's get the same shape.
    let mut no_accept = mcp_post(&app, "application/json", body);
    no_accept.headers_mut().remove("accept");
    let (status, headers, reply) = call(&app, no_accept).await;
    assert_jsonrpc_error(status, &headers, &reply, 406, -32000, "NOT_ACCEPTABLE");
    let large = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"p":"{}"}}}}"#, "a".repeat(3 << 20));
    let (status, headers, reply) = call(&app, mcp_post(&app, "application/json", large)).await;
    assert_jsonrpc_error(status, &headers, &reply, 413, -32000, "PAYLOAD_TOO_LARGE");

    // No token: 401 with its challenge (naming where an OAuth client
    // learns to get one), in the same shape.
    let mut anonymous = mcp_post(&app, "application/json", body);
    anonymous.headers_mut().remove("authorization");
    let (status, headers, reply) = call(&app, anonymous).await;
    assert_jsonrpc_error(status, &headers, &reply, 401, -32000, "UNAUTHORIZED");
    assert_eq!(
        headers["www-authenticate"],
        "Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource/mcp\""
    );
}

#[tokio::test]
async fn bad_path_values_are_json_400s_naming_the_parameter() {
    let app = TestApp::new().await;
    let (status, headers, reply) = call(&app, request(&app, "GET", "/api/v1/changes/abc", None, Body::empty())).await;
    assert_error(status, &headers, &reply, 400, "BAD_REQUEST");
    assert_eq!(reply["field"], "id");
    assert_eq!(reply["error"], "id: \"abc\" is not an integer");

    let (status, headers, reply) =
        call(&app, request(&app, "POST", "/api/v1/sessions/s1/turns/first/undo", None, Body::empty())).await;
    assert_error(status, &headers, &reply, 400, "BAD_REQUEST");
    assert_eq!(reply["field"], "turn");

    let r = app.get("/api/v1/revisions/widget/x").await;
    assert_status!(r, 400);
    assert_eq!(r.body["field"], "entity");
    assert!(r.error().contains("is not one of page, section"), "{}", r.error());
}

#[tokio::test]
async fn found_by_the_conformance_suite() {
    let app = TestApp::new().await;
    // A page after a sibling at the largest order: no overflow, it stays last.
    let top = app.post("/api/v1/pages", json!({"name": "Top", "slug": "top", "sortOrder": i64::MAX})).await;
    assert_status!(top, 201);
    let next = app.post("/api/v1/pages", json!({"name": "Next", "slug": "next"})).await;
    assert_status!(next, 201);
    assert_eq!(next.body["sortOrder"], i64::MAX);

    // An optional body may be `null`, as the document allows.
    let r = app.send_raw("POST", "/api/v1/approvals/cf_none/reject", Some(&app.admin), Some("null".into()), &[]).await;
    assert_status!(r, 404);

    // A message continuing a session that is not the caller's names sessionId.
    let r = app.post("/api/v1/agents/editor/chat", json!({"message": "hi", "sessionId": "nope"})).await;
    assert_status!(r, 422);
    assert_eq!(r.body["field"], "sessionId");

    // A body that is an array is no object, whatever serde would make of it.
    let home = app.page_id("home").await;
    let r = app.patch(&format!("/api/v1/pages/{home}"), json!([null, null])).await;
    assert_status!(r, 400);
    assert_eq!(r.error(), "the body must be a JSON object");
}

#[tokio::test]
async fn bad_query_values_name_the_parameter() {
    let app = TestApp::new().await;
    let r = app.get("/api/v1/tools?category=magic").await;
    assert_status!(r, 400);
    assert_eq!(r.body["field"], "category");
    assert_eq!(r.error(), "category: \"magic\" is not one of default, internal, external");
    for query in ["limit=abc", "limit=0", "limit=101"] {
        let r = app.get(&format!("/api/v1/pages?{query}")).await;
        assert_status!(r, 400);
        assert_eq!(r.body["field"], "limit", "{query}: {}", r.body);
    }
}

#[tokio::test]
async fn whole_number_floats_are_integers_and_fractions_are_refused() {
    let app = TestApp::new().await;
    let created = app.post("/api/v1/pages", json!({"name": "Float", "slug": "float", "sortOrder": 375.0})).await;
    assert_status!(created, 201);
    assert_eq!(created.body["sortOrder"], 375);

    let refused = app.post("/api/v1/pages", json!({"name": "Half", "slug": "half", "sortOrder": 375.5})).await;
    assert_status!(refused, 400);
    assert_eq!(refused.body["field"], "sortOrder");
    assert_eq!(refused.error(), "sortOrder: expected a whole number, got 375.5");
    assert!(app.store.page_by_slug(&app.scope, "half").await.is_err());

    // Tool arguments: the same rule through the registry.
    let listed = app.post("/api/v1/tools/getPage/invoke", json!({"all": true, "limit": 2.0})).await;
    assert_status!(listed, 200);
    assert_eq!(listed.body["items"].as_array().unwrap().len(), 2);
    let refused = app.post("/api/v1/tools/getPage/invoke", json!({"all": true, "limit": 2.5})).await;
    assert_status!(refused, 422);
    assert_eq!(refused.body["error"], "limit: expected a whole number, got 2.5");
}

#[tokio::test]
async fn the_openapi_document_is_complete() {
    let app = TestApp::new().await;
    let doc = app.send("GET", "/api/openapi.json", None, None).await.body;
    assert_eq!(doc["openapi"], "3.1.0");

    let mut ids = std::collections::HashSet::new();
    let mut operations = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            operations += 1;
            let id = op["operationId"].as_str().unwrap_or_else(|| panic!("{method} {path}: no operationId"));
            assert!(ids.insert(id.to_string()), "operationId {id} is used twice");
            let responses = op["responses"].as_object().unwrap();
            for (status, response) in responses {
                let description = response["description"].as_str().unwrap_or_default();
                assert!(!description.is_empty(), "{method} {path} {status}: no description");
            }
            assert!(responses.contains_key("400"), "{method} {path}: 400 undocumented");
            if op.get("security").is_some() {
                for status in ["401", "403"] {
                    assert!(responses.contains_key(status), "{method} {path}: {status} undocumented");
                }
            }
            if path.contains('{') && method == "get" && !path.starts_with("/api/v1/revisions") {
                assert!(responses.contains_key("404"), "{method} {path}: 404 undocumented");
            }
            if matches!(method.as_str(), "post" | "patch") && op.get("requestBody").is_some() {
                assert!(responses.contains_key("415"), "{method} {path}: 415 undocumented");
            }
            for param in op["parameters"].as_array().into_iter().flatten() {
                if param["name"] == "limit" {
                    assert_eq!(param["schema"]["minimum"], 1, "{method} {path}");
                    assert_eq!(param["schema"]["maximum"], 100, "{method} {path}");
                }
            }
        }
    }
    assert_eq!(operations, ids.len());

    // Every link leads to an operation that exists and names its parameters.
    let mut links = 0;
    for item in doc["paths"].as_object().unwrap().values() {
        for op in item.as_object().unwrap().values() {
            for response in op["responses"].as_object().unwrap().values() {
                for link in response["links"].as_object().into_iter().flat_map(|l| l.values()) {
                    links += 1;
                    let target = link["operationId"].as_str().unwrap();
                    let target_op = doc["paths"]
                        .as_object()
                        .unwrap()
                        .values()
                        .flat_map(|i| i.as_object().unwrap().values())
                        .find(|o| o["operationId"] == target)
                        .unwrap_or_else(|| panic!("link to unknown operation {target}"));
                    let names: Vec<&str> = target_op["parameters"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|p| p["name"].as_str().unwrap())
                        .collect();
                    for param in link["parameters"].as_object().unwrap().keys() {
                        assert!(names.contains(&param.as_str()), "{target} has no parameter {param}");
                    }
                }
            }
        }
    }
    assert!(links > 40, "{links} links");
    assert!(ids.contains("listPages") && ids.contains("invokeTool"), "{ids:?}");

    // Every pattern is one of the constants the rules are written beside.
    let known = [
        quire_core::slug::SLUG_PATTERN,
        quire_core::slug::NON_BLANK_PATTERN,
        quire_core::text::LINE_PATTERN,
        quire_core::text::OPTIONAL_LINE_PATTERN,
        quire_core::text::TEXT_PATTERN,
        quire_core::text::MIME_PATTERN,
        quire_core::fields::UPLOAD_URL_PATTERN,
        quire_core::input::TOOL_SELECTOR_PATTERN,
        quire_core::text::CLIENT_ID_PATTERN,
    ];
    fn patterns<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(p)) = map.get("pattern") {
                    out.push(p);
                }
                map.values().for_each(|v| patterns(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| patterns(v, out)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    patterns(&doc, &mut found);
    assert!(found.len() > 20, "{} patterns", found.len());
    for p in found {
        assert!(known.contains(&p), "pattern {p} is not one of the rules' constants");
    }

    let schemas = &doc["components"]["schemas"];
    assert_eq!(schemas["PublishStatus"]["enum"], json!(["draft", "published", "unpublished"]));
    assert_eq!(schemas["EntityKind"]["enum"][2], "sectionTemplate");
    let slug = &schemas["NewPage"]["properties"]["slug"];
    assert_eq!(slug["pattern"], quire_core::slug::SLUG_PATTERN);
    assert_eq!(slug["maxLength"], 100);
    // A rule of plain text is one component per length, described once.
    let name = &schemas["NewPage"]["properties"]["name"];
    assert_eq!(name["$ref"], "#/components/schemas/Line200", "{name}");
    assert_eq!(name["description"], "Display name.");
    let line = &schemas["Line200"];
    assert_eq!((line["minLength"].as_u64(), line["maxLength"].as_u64()), (Some(1), Some(200)));
    assert_eq!(line["pattern"], quire_core::text::LINE_PATTERN);
    let tags = &schemas["NewEntry"]["properties"]["tags"];
    assert!(tags.to_string().contains("#/components/schemas/Line60"), "{tags}");
}
