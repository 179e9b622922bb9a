//! Every decision is `authorize`'s, generated: every route of the OpenAPI
//! document and every tool of the registry, called by a token of each
//! group, with bodies and arguments made from their own schemas. Each
//! request that needs credentials is decided by
//! `quire_core::access::authorize` (its decisions are `tracing` events,
//! caught here), and every 403 answers the refusal `authorize` gave.

mod common;

use common::TestApp;
use quire_core::access::DECISIONS;
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// One decision as the event reports it.
#[derive(Debug, Default, Clone)]
struct Decision {
    actor: String,
    permission: String,
    allowed: bool,
    refused: String,
}

impl Visit for Decision {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "actor" => self.actor = value.to_string(),
            "refused" => self.refused = value.to_string(),
            _ => {}
        }
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        if field.name() == "allowed" {
            self.allowed = value;
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "permission" {
            self.permission = format!("{value:?}");
        }
    }
}

/// The decisions made since the last [`Decisions::take`].
#[derive(Clone, Default)]
struct Decisions(Arc<Mutex<Vec<Decision>>>);

impl Decisions {
    fn take(&self) -> Vec<Decision> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Decisions {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() == DECISIONS {
            let mut decision = Decision::default();
            event.record(&mut decision);
            self.0.lock().unwrap().push(decision);
        }
    }
}

/// The schema `schema` points at, following a `$ref` into the document.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(r) => {
            let name = r.rsplit('/').next().unwrap();
            resolve(doc, &doc["components"]["schemas"][name])
        }
        None => schema,
    }
}

/// The smallest value `schema` accepts that a parser lets through: its
/// required properties, the first of an enum, a word for a string.
fn minimal(doc: &Value, schema: &Value) -> Value {
    let schema = resolve(doc, schema);
    for key in ["allOf", "oneOf", "anyOf"] {
        if let Some(first) = schema[key].as_array().and_then(|a| a.iter().find(|s| s["type"] != "null")) {
            return minimal(doc, first);
        }
    }
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let kind = match &schema["type"] {
        Value::Array(types) => types.iter().find(|t| *t != "null").cloned().unwrap_or(Value::Null),
        other => other.clone(),
    };
    match kind.as_str() {
        Some("object") => {
            let mut out = Map::new();
            for name in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                out.insert(name.to_string(), minimal(doc, &schema["properties"][name]));
            }
            Value::Object(out)
        }
        Some("array") => match schema["minItems"].as_u64() {
            Some(n) if n > 0 => json!([minimal(doc, &schema["items"])]),
            _ => json!([]),
        },
        Some("integer") | Some("number") => json!(schema["minimum"].as_i64().unwrap_or(1).max(1)),
        Some("boolean") => json!(false),
        // A time to come: a schedule's (or a token's expiry) must lie ahead.
        Some("string") if schema["format"] == "date-time" => {
            json!((chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339())
        }
        Some("string") => json!("probe"),
        _ => json!({}),
    }
}

/// The body of an operation, made from its request schema.
fn body_of(doc: &Value, operation: &Value) -> Option<Value> {
    let schema = &operation["requestBody"]["content"]["application/json"]["schema"];
    (!schema.is_null()).then(|| minimal(doc, schema))
}

/// Checks one answer against the decisions made while giving it; answers
/// what is wrong, if anything.
fn judge(what: &str, actor: &str, status: u16, body: &Value, decisions: &[Decision]) -> Option<String> {
    let mine: Vec<&Decision> = decisions.iter().filter(|d| d.actor == actor).collect();
    if mine.is_empty() {
        return Some(format!("{what}: {status} with no decision of authorize: {body}"));
    }
    if status == 403 {
        // `/v1` answers OpenAI's shape: `{ error: { message, … } }`.
        let error = body["error"].as_str().or(body["error"]["message"].as_str()).unwrap_or_default();
        if !mine.iter().any(|d| !d.allowed && error.contains(&d.refused)) {
            return Some(format!("{what}: 403 \"{error}\" is not a refusal of authorize: {mine:?}"));
        }
    }
    None
}

#[tokio::test]
async fn every_route_and_tool_is_decided_by_authorize() {
    let decisions = Decisions::default();
    tracing_subscriber::registry().with(decisions.clone()).init();
    let app = TestApp::new().await;
    let note = json!({ "path": "private/plan.md", "content": "# Plan\n" });
    assert_eq!(app.post("/api/v1/tools/writeNote/invoke", note).await.status, 200);
    let mut values = app.records().await;
    // a token of its own for the route that revokes one
    let spare = app.post("/api/v1/tokens", json!({ "name": "spare", "group": "viewer" })).await;
    values.insert("token", spare.body["id"].as_str().expect("a token made").to_string());
    let mut actors = std::collections::HashMap::new();
    for secret in [&app.viewer, &app.author, &app.editor, &app.admin] {
        let grant = app.store.authenticate(secret).await.unwrap().expect("a live token");
        actors.insert(secret.clone(), format!("token:{}", grant.token.id));
    }
    let actor_of = |secret: &str| actors[secret].clone();
    let callers = [app.viewer.clone(), app.author.clone(), app.editor.clone(), app.admin.clone()];
    let doc = app.get("/api/openapi.json").await.body;
    let mut problems = Vec::new();
    let (mut routes, mut refused) = (0, 0);

    // Every route; the ones that archive or revoke last, so what they take
    // away is there for the others.
    let mut operations: Vec<(String, String, Value)> = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().unwrap() {
            if ["get", "post", "patch", "put", "delete"].contains(&method.as_str()) {
                operations.push((method.clone(), path.clone(), operation.clone()));
            }
        }
    }
    operations.sort_by_key(|(method, _, _)| method == "delete");
    assert!(operations.len() >= 70, "the document lists the routes: {}", operations.len());
    for (method, path, operation) in &operations {
        let public = operation["security"].as_array().is_some_and(|s| s.is_empty())
            || operation.get("security").is_none() && path.starts_with("/api/v1/delivery");
        // Published content; streams (their 404 is tenancy's); and who the
        // caller is, which any valid credentials may ask.
        if public || path.ends_with("/events") || operation["operationId"] == "getMe" {
            continue;
        }
        let uri = common::concrete(path, &values);
        let mut body = body_of(&doc, operation);
        // The agent a completion runs is named in its body, as path
        // parameters name the others' records.
        if path == "/v1/chat/completions" {
            body = Some(json!({ "model": "editor", "messages": [{ "role": "user", "content": "probe" }] }));
        }
        for caller in &callers {
            decisions.take();
            let reply = if path == "/api/v1/uploads" {
                let form = String::from_utf8(common::form(&[("file", Some("probe.txt"), b"probe")])).unwrap();
                let kind = format!("multipart/form-data; boundary={}", common::BOUNDARY);
                app.send_raw(&method.to_uppercase(), &uri, Some(caller), Some(form), &[("content-type", &kind)]).await
            } else {
                app.send(&method.to_uppercase(), &uri, Some(caller), body.clone()).await
            };
            routes += 1;
            let status = reply.status.as_u16();
            refused += usize::from(status == 403);
            let what = format!("{} {uri} as {}", method.to_uppercase(), actor_of(caller));
            problems.extend(judge(&what, &actor_of(caller), status, &reply.body, &decisions.take()));
        }
    }

    // Every tool, with the arguments its schema requires.
    let tools = app.get("/api/v1/tools").await.body;
    let tools = tools["items"].as_array().unwrap();
    assert!(tools.len() >= 40, "{}", tools.len());
    let mut calls = 0;
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        let args = minimal(&doc, &tool["inputSchema"]);
        for caller in &callers {
            decisions.take();
            let reply =
                app.send("POST", &format!("/api/v1/tools/{name}/invoke"), Some(caller), Some(args.clone())).await;
            calls += 1;
            let status = reply.status.as_u16();
            let actor = actor_of(caller);
            let seen = decisions.take();
            let what = format!("tool {name} as {actor}");
            let decided = seen.iter().find(|d| d.actor == actor && d.permission == format!("use tool {name}"));
            match decided {
                None => problems.push(format!("{what}: no decision to use it: {seen:?}")),
                Some(d) if !d.allowed && status != 403 => problems.push(format!("{what}: refused, yet {status}")),
                Some(d) if d.allowed && status == 403 => {
                    problems.extend(judge(&what, &actor, status, &reply.body, &seen));
                }
                Some(_) => {}
            }
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
    assert!(refused > 50, "the walk met refusals: {refused} of {routes}");
    eprintln!("authorize: {routes} route calls ({refused} refused) and {calls} tool calls, each decided by authorize");
}
