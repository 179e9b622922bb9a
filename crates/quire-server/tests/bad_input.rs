//! Bad input, generated: arbitrary JSON (strings with control characters,
//! huge and fractional numbers, deep nesting, wrong types) as the arguments
//! of every tool, and malformed bodies for every route that takes one.
//! Never a 500 or a panic, always the one JSON error shape, and a refused
//! request changes nothing.

mod common;

use common::{Reply, TestApp};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Map, Value, json};

/// Cases per tool.
const CASES: usize = 24;

fn nasty_string() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,12}",
        "[\\x00-\\x1f\\x7f\u{202e}\u{2066}<>&%_'\"\\\\]{1,8}",
        Just(String::new()),
        Just("a".repeat(5000)),
        Just("../../etc/passwd".to_string()),
        Just("\u{1b}[31mred\u{1b}[0m".to_string()),
        Just("home".to_string()),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        Just(json!(u64::MAX)),
        Just(json!(-1)),
        Just(json!(1e300)),
        nasty_string().prop_map(Value::String),
    ]
}

fn any_json() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(nasty_string(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

/// Arguments shaped like a tool's schema (its own parameter names with
/// arbitrary values), or arbitrary JSON altogether.
fn args_for(schema: &Value) -> BoxedStrategy<Value> {
    let names: Vec<String> = schema["properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default();
    if names.is_empty() {
        return any_json().boxed();
    }
    let shaped = prop::collection::vec((prop::sample::select(names), any_json()), 0..5)
        .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<String, Value>>()));
    prop_oneof![3 => shaped, 1 => any_json()].boxed()
}

/// The one error shape: `{ error, code }` (tools: `{ success: false, error, errorCode, hint }`).
#[track_caller]
fn assert_error_shape(what: &str, reply: &Reply) {
    let status = reply.status.as_u16();
    assert!(status != 500 && status < 600, "{what}: {status} {}", reply.body);
    if status >= 400 {
        let b = &reply.body;
        let rest = b["error"].is_string() && b["code"].is_string();
        let tool = b["success"] == false && b["error"].is_string() && b["errorCode"].is_string();
        // `/v1` answers OpenAI's error shape, which its clients read.
        let openai = b["error"]["message"].is_string() && b["error"]["type"].is_string();
        assert!(rest || tool || openai, "{what}: {status} is not the JSON error shape: {b}");
    }
}

async fn last_change(app: &TestApp) -> i64 {
    app.store.changes(&app.scope, &Default::default(), 1, None).await.unwrap().items.first().map(|c| c.id).unwrap_or(0)
}

#[tokio::test]
async fn arbitrary_arguments_for_every_tool_never_break_the_server() {
    let app = TestApp::new().await;
    let tools = app.get("/api/v1/tools").await.body;
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]));
    let mut attempts = 0;
    for tool in tools["items"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        let strategy = args_for(&tool["inputSchema"]);
        for _ in 0..CASES {
            let args = strategy.new_tree(&mut runner).unwrap().current();
            let before = last_change(&app).await;
            let reply =
                app.send("POST", &format!("/api/v1/tools/{name}/invoke"), Some(&app.editor), Some(args.clone())).await;
            attempts += 1;
            let what = format!("{name} {args}");
            assert_error_shape(&what, &reply);
            if reply.status.as_u16() >= 400 {
                assert_eq!(last_change(&app).await, before, "{what}: refused, yet the change log moved");
            }
        }
    }
    eprintln!("bad input: {attempts} tool calls, 0 failures");
}

#[tokio::test]
async fn malformed_bodies_for_every_route_are_json_errors() {
    let app = TestApp::new().await;
    let doc = app.get("/api/openapi.json").await.body;
    let home = app.page_id("home").await;
    let bodies: &[&str] = &[
        "",
        "{",
        "null",
        "[]",
        "\"text\"",
        "42",
        "{\"name\": \"x\"} trailing",
        "{\"name\": \"a\", \"name\": \"b\"}",
        "{\"name\": \"\\u0000\"}",
        "{\"limit\": 1e400}",
        &"[".repeat(4000),
    ];
    let mut attempts = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        let uri = path
            .split('/')
            .map(|s| {
                if s.starts_with('{') {
                    if s == "{turn}" { "1".to_string() } else { home.clone() }
                } else {
                    s.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        // Operations that take no body (publish, restore, undo) have none to get wrong.
        let takes_body = |m: &String| item[m].get("requestBody").is_some();
        for method in
            item.as_object().unwrap().keys().filter(|m| ["post", "patch", "put"].contains(&m.as_str()) && takes_body(m))
        {
            for body in bodies {
                let before = last_change(&app).await;
                let reply =
                    app.send_raw(&method.to_uppercase(), &uri, Some(&app.admin), Some(body.to_string()), &[]).await;
                attempts += 1;
                let what =
                    format!("{} {uri} with {:?}", method.to_uppercase(), body.chars().take(40).collect::<String>());
                assert_error_shape(&what, &reply);
                assert!(reply.status.as_u16() >= 400, "{what}: accepted: {}", reply.body);
                assert_eq!(last_change(&app).await, before, "{what}: the change log moved");
            }
            // the right JSON under a wrong Content-Type
            let reply = app
                .send_raw(&method.to_uppercase(), &uri, Some(&app.admin), None, &[("content-type", "text/plain")])
                .await;
            attempts += 1;
            assert_error_shape(&format!("{} {uri} as text/plain", method.to_uppercase()), &reply);
        }
    }
    // routes and methods that do not exist, and a body over the limit
    for (method, uri) in [("GET", "/api/v1/nowhere"), ("DELETE", "/api/v1/tools"), ("PUT", "/api/v1/pages")] {
        let reply = app.send(method, uri, Some(&app.admin), None).await;
        attempts += 1;
        assert_error_shape(&format!("{method} {uri}"), &reply);
        assert!(matches!(reply.status.as_u16(), 404 | 405), "{method} {uri}: {}", reply.status);
    }
    let huge = format!("{{\"name\": \"{}\"}}", "x".repeat(3 * 1024 * 1024));
    let reply = app.send_raw("POST", "/api/v1/pages", Some(&app.admin), Some(huge), &[]).await;
    attempts += 1;
    assert_eq!(reply.status.as_u16(), 413);
    assert_error_shape("a 3 MB body", &reply);
    eprintln!("bad input: {attempts} malformed requests, 0 failures");
}
