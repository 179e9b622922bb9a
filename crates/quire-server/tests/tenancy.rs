//! Tenancy, generated: every route of the OpenAPI document and every tool of
//! the registry, called with site `other`'s admin token on the records of
//! site `demo`. Nothing of `demo` may be read (no response carries one of
//! its ids or the marker of its notes) and nothing may change (its change
//! log and its listings are the same afterwards).

mod common;

use common::TestApp;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// A note only site `demo` has.
const MARKER: &str = "tenancy-marker-7f3a";

/// Every string under an `id` key (or in an `ids`-like list) of a value.
fn ids_in(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(o) => {
            for (k, v) in o {
                if (k == "id" || k.ends_with("Id")) && v.is_string() {
                    out.insert(v.as_str().unwrap().to_string());
                } else {
                    ids_in(v, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| ids_in(v, out)),
        _ => {}
    }
}

/// Site `demo` as its admin sees it: one record of each kind, the ids of
/// everything, and the listings to compare afterwards.
struct SiteA {
    values: BTreeMap<&'static str, String>,
    ids: BTreeSet<String>,
    listings: Vec<(String, Value)>,
}

const LISTINGS: &[&str] = &[
    "/api/v1/pages?limit=100",
    "/api/v1/section-templates?limit=100",
    "/api/v1/collections?limit=100",
    "/api/v1/collections/blog/entries?limit=100",
    "/api/v1/images?limit=100",
    "/api/v1/navigations?limit=100",
    "/api/v1/navigations/header/items?limit=100",
    "/api/v1/archive?limit=100",
    "/api/v1/changes?limit=100",
    "/api/v1/agents",
    "/api/v1/approvals",
];

async fn snapshot(app: &TestApp) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for path in LISTINGS {
        let reply = app.get(path).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        out.push((path.to_string(), reply.body));
    }
    out
}

async fn site_a(app: &TestApp) -> SiteA {
    // records of every kind, some made for the purpose
    let contact = app.page_id("contact").await;
    let archived = app.delete(&format!("/api/v1/pages/{contact}")).await;
    assert_eq!(archived.status, 200, "{}", archived.body);
    let note = json!({ "path": "private/plan.md", "content": format!("# Plan\n{MARKER}\n") });
    assert_eq!(app.post("/api/v1/tools/writeNote/invoke", note).await.status, 200);
    let pricing = app.page_id("pricing").await;
    let preview = app.post("/api/v1/tools/deletePage/invoke", json!({ "ids": [pricing] })).await;
    let agent_id = app.get("/api/v1/agents/editor").await.body["id"].as_str().unwrap().to_string();
    let session =
        app.store.create_session(&app.scope, &agent_id, "token:someone", "editor", "private chat", None).await.unwrap();

    let listings = snapshot(app).await;
    let first = |path: &str| -> String {
        let body = &listings.iter().find(|(p, _)| p == path).unwrap().1;
        let item = &body["items"][0]["id"];
        item.as_str().map(str::to_string).unwrap_or_else(|| item.to_string())
    };
    let home = app.page_id("home").await;
    let section = app.store.sections(&app.scope, &home, 1, None).await.unwrap().items.remove(0).id;
    let mut values = BTreeMap::new();
    values.insert("page", home.clone());
    values.insert("section", section);
    values.insert("template", first("/api/v1/section-templates?limit=100"));
    values.insert("collection", first("/api/v1/collections?limit=100"));
    values.insert("entry", first("/api/v1/collections/blog/entries?limit=100"));
    values.insert("image", first("/api/v1/images?limit=100"));
    values.insert("navigation", first("/api/v1/navigations?limit=100"));
    values.insert("navItem", first("/api/v1/navigations/header/items?limit=100"));
    values.insert("archive", first("/api/v1/archive?limit=100"));
    values.insert("change", first("/api/v1/changes?limit=100"));
    values.insert("agent", agent_id);
    values.insert("session", session.id.clone());
    values.insert("confirmation", preview.body["confirmationId"].as_str().unwrap().to_string());
    values.insert("note", "private/plan.md".to_string());
    // a job of site A's (alt text for one of its images), queued, unworked
    let image = values["image"].clone();
    app.store.enqueue_job(quire_store::DESCRIBE_IMAGE, &app.scope, &image, json!({})).await.unwrap();
    let job = app.store.jobs_of(&app.scope, &image).await.unwrap().remove(0).id;
    values.insert("job", job);
    let tokens = app.store.tokens("demo").await.unwrap();
    values.insert("token", tokens.iter().find(|t| t.group.as_str() == "editor").unwrap().id.clone());
    let mut ids = BTreeSet::new();
    for (_, body) in &listings {
        ids_in(body, &mut ids);
    }
    ids.extend(tokens.into_iter().map(|t| t.id));
    ids.insert(session.id);
    ids.insert(values["job"].clone());
    // ids of a handful of characters would match by accident; ours are UUIDs
    ids.retain(|id| id.len() >= 20);
    SiteA { values, ids, listings }
}

/// Site `demo`'s record for a path parameter, by the segment before it.
fn path_value(a: &SiteA, segments: &[&str], index: usize) -> String {
    let before = if index > 0 { segments[index - 1] } else { "" };
    let param = segments[index];
    let key = match (before, param) {
        ("pages", _) => "page",
        ("sections", _) => "section",
        ("section-templates", _) => "template",
        ("collections", _) => "collection",
        ("entries", _) => "entry",
        ("images", _) => "image",
        ("jobs", _) => "job",
        ("navigations", _) => "navigation",
        ("nav-items", _) => "navItem",
        ("archive", _) => "archive",
        ("changes", _) => "change",
        ("agents", _) => "agent",
        ("sessions", _) => "session",
        ("approvals", _) => "confirmation",
        ("tokens", _) => "token",
        ("turns", _) => return "1".into(),
        ("tools", _) => return "getPage".into(),
        ("revisions", "{entity}") => return "page".into(),
        (_, "{id}") if segments.get(index - 2) == Some(&"revisions") => "page",
        _ => panic!("no site-A value for {param} after {before} in /{}", segments.join("/")),
    };
    a.values[key].clone()
}

/// A body for a write: the fields most resources accept.
fn body_for(method: &str) -> Option<Value> {
    match method {
        "post" => Some(json!({ "name": "Probe", "message": "probe", "ids": [] })),
        "patch" | "put" => Some(json!({ "name": "Probe" })),
        _ => None,
    }
}

#[tokio::test]
async fn site_b_reads_and_changes_nothing_of_site_a_through_any_route_or_tool() {
    let app = TestApp::new().await;
    let a = site_a(&app).await;
    let b = app.other_admin.clone();
    let changes_before = app.store.changes(&app.scope, &Default::default(), 1, None).await.unwrap().items[0].id;
    let mut attempts = 0;
    let mut leaks: Vec<String> = Vec::new();
    let mut check = |what: String, status: u16, body: &Value| {
        attempts += 1;
        let text = body.to_string();
        if status == 500 {
            leaks.push(format!("{what}: 500 {text}"));
        }
        // a request naming one of site A's records must fail (or, for a
        // filter such as revisions of a record, find nothing)
        let empty_listing = body["count"] == 0 && body["items"].as_array().is_some_and(|i| i.is_empty());
        if (200..300).contains(&status) && !empty_listing && a.ids.iter().any(|id| what.contains(id.as_str())) {
            leaks.push(format!("{what}: {status} on site A's record: {text}"));
        }
        // an id the request itself named may be echoed ("page … not found")
        if let Some(id) = a.ids.iter().find(|id| text.contains(id.as_str()) && !what.contains(id.as_str())) {
            leaks.push(format!("{what}: answered site A's {id}: {text}"));
        }
        if text.contains(MARKER) {
            leaks.push(format!("{what}: answered site A's note: {text}"));
        }
    };

    // every route of the document, with site A's records in its path
    let doc = app.get("/api/openapi.json").await.body;
    let paths = doc["paths"].as_object().expect("paths");
    assert!(paths.len() >= 30, "the document lists the routes: {}", paths.len());
    for (path, item) in paths {
        if path.starts_with("/api/v1/delivery") {
            continue; // public by design: published content, by ?site=
        }
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let concrete: Vec<String> = segments
            .iter()
            .enumerate()
            .map(|(i, s)| if s.starts_with('{') { path_value(&a, &segments, i) } else { s.to_string() })
            .collect();
        let uri = format!("/{}", concrete.join("/"));
        for method in
            item.as_object().unwrap().keys().filter(|m| ["get", "post", "patch", "put", "delete"].contains(&m.as_str()))
        {
            if uri.ends_with("/events") {
                // a stream: only its status is read
                let reply = app.send("GET", &uri, Some(&b), None).await;
                check(format!("GET {uri}"), reply.status.as_u16(), &reply.body);
                assert_eq!(reply.status, 404, "GET {uri}: {}", reply.body);
                continue;
            }
            let reply = app.send(&method.to_uppercase(), &uri, Some(&b), body_for(method)).await;
            check(format!("{} {uri}", method.to_uppercase()), reply.status.as_u16(), &reply.body);
        }
    }

    // every tool, with site A's records wherever a parameter names one
    let tools = app.get("/api/v1/tools").await.body;
    let tools = tools["items"].as_array().unwrap();
    assert!(tools.len() >= 40, "{}", tools.len());
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        let props = tool["inputSchema"]["properties"].as_object().cloned().unwrap_or_default();
        let mut args = serde_json::Map::new();
        for (param, _) in &props {
            let value = match param.as_str() {
                "id" | "ids" => {
                    let entity = tool["entity"].as_str().unwrap_or("page");
                    let v = a.values.get(entity).or_else(|| a.values.get("page")).unwrap().clone();
                    if param == "ids" { json!([v]) } else { json!(v) }
                }
                "pageId" => json!(a.values["page"]),
                "pageSectionId" => json!(a.values["section"]),
                "navigationId" => json!(a.values["navigation"]),
                "parentId" => json!(a.values["navItem"]),
                "collectionSlug" | "collectionId" => json!(a.values["collection"]),
                "imageId" => json!(a.values["image"]),
                "targetId" => json!(a.values["page"]),
                "path" | "from" | "to" => json!(a.values["note"]),
                "query" => json!(MARKER),
                "confirmationId" => json!(a.values["confirmation"]),
                _ => continue,
            };
            args.insert(param.clone(), value);
        }
        let reply = app
            .send("POST", &format!("/api/v1/tools/{name}/invoke"), Some(&b), Some(Value::Object(args.clone())))
            .await;
        check(format!("tool {name} {}", Value::Object(args)), reply.status.as_u16(), &reply.body);
    }

    assert!(leaks.is_empty(), "{} of {attempts} attempts leaked:\n{}", leaks.len(), leaks.join("\n"));
    let changes_after = app.store.changes(&app.scope, &Default::default(), 1, None).await.unwrap().items[0].id;
    assert_eq!(changes_before, changes_after, "site A's change log did not move");
    assert_eq!(snapshot(&app).await, a.listings, "site A's records are as they were");
    let tokens = app.store.tokens("demo").await.unwrap();
    assert!(tokens.iter().any(|t| t.id == a.values["token"]), "site A's token was not revoked");
    assert_eq!(tokens.len(), 5, "no token was added to site A");
    let note = app.post("/api/v1/tools/readNote/invoke", json!({ "path": "private/plan.md", "startLine": 1 })).await;
    assert!(note.body.to_string().contains(MARKER), "site A's note is intact");
    eprintln!("tenancy: {attempts} attempts, 0 leaks");
}
