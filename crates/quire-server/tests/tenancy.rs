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
    let note = json!({ "path": "private/plan.md", "content": format!("# Plan\n{MARKER}\n") });
    assert_eq!(app.post("/api/v1/tools/writeNote/invoke", note).await.status, 200);
    let values = app.records().await;
    let listings = snapshot(app).await;
    let tokens = app.store.tokens("demo").await.unwrap();
    let mut ids = BTreeSet::new();
    for (_, body) in &listings {
        ids_in(body, &mut ids);
    }
    ids.extend(tokens.into_iter().map(|t| t.id));
    ids.insert(values["session"].clone());
    ids.insert(values["job"].clone());
    // ids of a handful of characters would match by accident; ours are UUIDs
    ids.retain(|id| id.len() >= 20);
    SiteA { values, ids, listings }
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
    let b = app.other_admin.clone();
    walk(&app, b).await;
}

/// A site the instance's administrator made over REST, with the demo's
/// content, is kept apart from site A as the first is.
#[tokio::test]
async fn a_site_made_through_the_api_reads_and_changes_nothing_of_site_a() {
    let app = TestApp::new().await;
    let operator = quire_store::NewToken {
        instance_admin: true,
        ..quire_store::NewToken::new("operator", quire_core::access::Group::Admin, "other")
    };
    let operator = app.token(operator).await;
    let made = app
        .send(
            "POST",
            "/api/v1/sites",
            Some(&operator),
            Some(json!({ "slug": "shop", "name": "Shop", "start": "demo" })),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let shop = app.token(quire_store::NewToken::new("shop admin", quire_core::access::Group::Admin, "shop")).await;
    let pages = app.send("GET", "/api/v1/pages?limit=100", Some(&shop), None).await;
    assert!(pages.body["count"].as_u64().unwrap() >= 6, "the demo's pages: {}", pages.body);
    walk(&app, shop).await;
}

/// Calls every route and tool with token `b` (another site's admin) on
/// site A's records, and checks nothing leaked and nothing changed.
async fn walk(app: &TestApp, b: String) {
    let a = site_a(app).await;
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
        let uri = common::concrete(path, &a.values);
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
    assert_eq!(snapshot(app).await, a.listings, "site A's records are as they were");
    let tokens = app.store.tokens("demo").await.unwrap();
    assert!(tokens.iter().any(|t| t.id == a.values["token"]), "site A's token was not revoked");
    assert_eq!(tokens.len(), 5, "no token was added to site A");
    let note = app.post("/api/v1/tools/readNote/invoke", json!({ "path": "private/plan.md", "startLine": 1 })).await;
    assert!(note.body.to_string().contains(MARKER), "site A's note is intact");
    eprintln!("tenancy: {attempts} attempts, 0 leaks");
}
