//! Environments over REST: staging, made as a copy of production, changed
//! by a scripted agent turn and by a person, compared field by field, promoted
//! into production (which then equals it, the public site included) and
//! the promotion undone; conflicts refused whole until resolved; a locked
//! environment that takes content only by promotion; and the environments'
//! own management (rename, archive, who may).

mod common;

use common::{Reply, TestApp};
use quire_agent::testing::{Fake, openai_stream, serve};
use serde_json::{Value, json};

async fn app() -> (TestApp, Fake) {
    let (fake, base) = serve().await;
    (TestApp::with_llm(&base).await, fake)
}

/// A request as the demo's admin in environment `env`.
async fn in_env(app: &TestApp, env: &str, method: &str, path: &str, body: Option<Value>) -> Reply {
    app.send_raw(method, path, Some(&app.admin), body.map(|b| b.to_string()), &[("x-quire-env", env)]).await
}

/// Makes environment `key` as a copy of production.
async fn copy_of_production(app: &TestApp, key: &str) -> Value {
    let made =
        app.post("/api/v1/environments", json!({ "key": key, "name": "Next release", "from": "production" })).await;
    assert_status!(made, 201);
    made.body
}

async fn differences(app: &TestApp, from: &str, to: &str) -> Vec<Value> {
    let compared = app.get(&format!("/api/v1/environments/{to}/compare?from={from}")).await;
    assert_status!(compared, 200);
    compared.body["items"].as_array().unwrap().clone()
}

/// The id of the page `slug` in `env`.
async fn page_in(app: &TestApp, env: &str, slug: &str) -> String {
    let scope = quire_store::Scope::new(&app.scope.site_id, env);
    app.store.page_by_slug(&scope, slug).await.unwrap_or_else(|e| panic!("no page {slug} in {env}: {e}")).id
}

async fn page_name(app: &TestApp, env: &str, id: &str) -> Value {
    in_env(app, env, "GET", &format!("/api/v1/pages/{id}"), None).await.body["name"].clone()
}

#[tokio::test]
async fn staging_copied_from_production_changed_by_an_agent_turn_is_compared_promoted_and_undone() {
    let (app, fake) = app().await;
    // The demo's staging is made as a copy of production.
    let envs = app.get("/api/v1/environments").await;
    assert_eq!(envs.body["items"][1]["key"], "staging");
    assert_eq!(envs.body["items"][1]["copiedFrom"], "production");
    let pages = |env: &'static str| {
        let app = &app;
        async move { in_env(app, env, "GET", "/api/v1/pages?limit=100", None).await.body["count"].clone() }
    };
    assert_eq!(pages("staging").await, pages("production").await, "every page came along");
    assert!(differences(&app, "staging", "production").await.is_empty(), "a fresh copy differs in nothing");
    let agents = in_env(&app, "staging", "GET", "/api/v1/agents", None).await;
    assert!(agents.body["count"].as_u64().unwrap() >= 1, "its agents came along: {}", agents.body);

    // An agent turn in the copy renames About (a draft, as its write mode says) ...
    let about_staging = page_in(&app, "staging", "about").await;
    let about_prod = page_in(&app, "production", "about").await;
    assert_ne!(about_staging, about_prod, "the same page has an id of its own in each environment");
    let rename = json!({ "id": about_staging, "name": "About the studio" }).to_string();
    fake.push(openai_stream("", &[("u1", "updatePage", &rename)]));
    fake.push(openai_stream("Renamed.", &[]));
    let started = app
        .send_raw(
            "POST",
            "/api/v1/agents/editor/chat",
            Some(&app.admin),
            Some(json!({ "message": "rename About" }).to_string()),
            &[("x-quire-env", "staging")],
        )
        .await;
    assert_status!(started, 202);
    for _ in 0..200 {
        if page_name(&app, "staging", &about_staging).await == "About the studio" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(page_name(&app, "staging", &about_staging).await, "About the studio");
    // ... and a person adds a published page under it.
    let added = in_env(
        &app,
        "staging",
        "POST",
        "/api/v1/pages",
        Some(json!({ "name": "Careers", "slug": "careers", "parentId": about_staging, "status": "published" })),
    )
    .await;
    assert_status!(added, 201);
    assert_status!(app.get("/api/v1/delivery/pages/careers").await, 404);

    let found = differences(&app, "staging", "production").await;
    let summary: Vec<(String, String, String)> = found
        .iter()
        .map(|d| {
            (
                d["label"].as_str().unwrap().into(),
                d["change"].as_str().unwrap().into(),
                d["changedIn"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [("about".into(), "changed".into(), "source".into()), ("careers".into(), "added".into(), "source".into())],
        "{found:#?}"
    );
    let about = &found[0];
    assert_eq!(about["lineage"], about_prod, "production made it first: its id is the lineage");
    assert_eq!(about["conflict"], false);
    let fields: Vec<&str> =
        about["differences"][0]["fields"].as_array().unwrap().iter().map(|f| f["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["name"], "field by field: {}", about["differences"]);
    assert_eq!(found[1]["publishedInSource"], true);
    assert_eq!(found[1]["publishedInTarget"], false);

    let promoted = app.post("/api/v1/environments/production/promote", json!({ "from": "staging" })).await;
    assert_status!(promoted, 201);
    assert_eq!(promoted.body["items"].as_array().unwrap().len(), 2, "{}", promoted.body);
    let promotion = promoted.body["id"].as_str().unwrap().to_string();
    assert!(differences(&app, "staging", "production").await.is_empty(), "production now equals the copy");
    assert_eq!(page_name(&app, "production", &about_prod).await, "About the studio");
    let delivered = app.get("/api/v1/delivery/pages/careers").await;
    assert_status!(delivered, 200);
    assert_eq!(delivered.body["path"], "/about/careers", "under production's own About: {}", delivered.body);
    let delivered_about = app.get("/api/v1/delivery/pages/about").await;
    assert_eq!(delivered_about.body["name"], "About", "the rename is a draft there as it was here");

    // The promotion is one change set in production's log ...
    let logged = app.get(&format!("/api/v1/changes?sessionId=promotion:{promotion}")).await;
    assert_status!(logged, 200);
    assert!(logged.body["count"].as_u64().unwrap() >= 3, "{}", logged.body);
    let listed = app.get("/api/v1/environments/production/promotions").await;
    assert_eq!(listed.body["items"][0]["id"], promotion.as_str());

    // ... and undone as one.
    let undone = app.post(&format!("/api/v1/promotions/{promotion}/undo"), json!({})).await;
    assert_status!(undone, 200);
    assert!(undone.body["undoneAt"].is_string());
    assert_eq!(page_name(&app, "production", &about_prod).await, "About");
    assert_status!(app.get("/api/v1/delivery/pages/careers").await, 404);
    assert_eq!(differences(&app, "staging", "production").await.len(), 2, "the copy's changes wait again");
    let twice = app.post(&format!("/api/v1/promotions/{promotion}/undo"), json!({})).await;
    assert_status!(twice, 409);
    // promoted again, it equals the copy again
    assert_status!(app.post("/api/v1/environments/production/promote", json!({ "from": "staging" })).await, 201);
    assert!(differences(&app, "staging", "production").await.is_empty());
    assert_status!(app.get("/api/v1/delivery/pages/careers").await, 200);
}

#[tokio::test]
async fn a_record_changed_on_both_sides_is_a_conflict_that_refuses_the_whole_promotion_until_resolved() {
    let app = TestApp::new().await;
    copy_of_production(&app, "next").await;
    let (about_next, about_prod) = (page_in(&app, "next", "about").await, page_in(&app, "production", "about").await);
    let pricing_next = page_in(&app, "next", "pricing").await;
    let patch = |env: &'static str, id: String, name: &'static str| {
        let app = &app;
        async move { in_env(app, env, "PATCH", &format!("/api/v1/pages/{id}"), Some(json!({ "name": name }))).await }
    };
    assert_status!(patch("next", about_next.clone(), "About (next)").await, 200);
    assert_status!(patch("production", about_prod.clone(), "About (hotfix)").await, 200);
    assert_status!(patch("next", pricing_next.clone(), "Plans").await, 200);

    let found = differences(&app, "next", "production").await;
    let about = found.iter().find(|d| d["label"] == "about").unwrap();
    assert_eq!((about["changedIn"].as_str(), about["conflict"].as_bool()), (Some("both"), Some(true)));
    let refused = app.post("/api/v1/environments/production/promote", json!({ "from": "next" })).await;
    assert_status!(refused, 409);
    assert!(refused.error().contains("about") && refused.error().contains("changed in both"), "{}", refused.body);
    let pricing_prod = page_in(&app, "production", "pricing").await;
    assert_eq!(page_name(&app, "production", &pricing_prod).await, "Pricing", "nothing was applied");

    // A chosen set without the conflict goes through.
    let chosen =
        app.post("/api/v1/environments/production/promote", json!({ "from": "next", "items": [pricing_next] })).await;
    assert_status!(chosen, 201);
    assert_eq!(page_name(&app, "production", &pricing_prod).await, "Plans");
    // Unknown names are refused naming them.
    let unknown =
        app.post("/api/v1/environments/production/promote", json!({ "from": "next", "items": ["nope"] })).await;
    assert_status!(unknown, 422);
    assert!(unknown.error().contains("nope"), "{}", unknown.body);
    // Kept as the target has it: nothing promoted, the conflict stays.
    let kept = app
        .post(
            "/api/v1/environments/production/promote",
            json!({ "from": "next", "resolutions": { about_prod.clone(): "target" } }),
        )
        .await;
    assert_status!(kept, 201);
    assert_eq!(page_name(&app, "production", &about_prod).await, "About (hotfix)");
    // Settled for the source: the copy's name wins.
    let settled = app
        .post(
            "/api/v1/environments/production/promote",
            json!({ "from": "next", "resolutions": { about_next: "source" } }),
        )
        .await;
    assert_status!(settled, 201);
    assert_eq!(page_name(&app, "production", &about_prod).await, "About (next)");
    assert!(differences(&app, "next", "production").await.is_empty());
}

#[tokio::test]
async fn a_locked_environment_takes_content_only_by_promotion() {
    let app = TestApp::new().await;
    copy_of_production(&app, "next").await;
    let locked = app.patch("/api/v1/environments/production", json!({ "locked": true })).await;
    assert_status!(locked, 200);
    assert_eq!(locked.body["locked"], true);
    let about_prod = page_in(&app, "production", "about").await;
    let direct = app.patch(&format!("/api/v1/pages/{about_prod}"), json!({ "name": "Directly" })).await;
    assert_status!(direct, 409);
    assert!(direct.error().contains("locked"), "{}", direct.body);
    let by_tool = app.post("/api/v1/tools/updatePage/invoke", json!({ "id": about_prod, "name": "By a tool" })).await;
    assert!(by_tool.status.as_u16() >= 400, "{}", by_tool.body);
    assert_eq!(page_name(&app, "production", &about_prod).await, "About");

    let about_next = page_in(&app, "next", "about").await;
    let changed =
        in_env(&app, "next", "PATCH", &format!("/api/v1/pages/{about_next}"), Some(json!({ "name": "Promoted" })))
            .await;
    assert_status!(changed, 200);
    assert_status!(app.post("/api/v1/environments/production/promote", json!({ "from": "next" })).await, 201);
    assert_eq!(page_name(&app, "production", &about_prod).await, "Promoted");
    let unlocked = app.patch("/api/v1/environments/production", json!({ "locked": false })).await;
    assert_status!(unlocked, 200);
    assert_status!(app.patch(&format!("/api/v1/pages/{about_prod}"), json!({ "name": "Directly" })).await, 200);
}

#[tokio::test]
async fn environments_are_made_renamed_archived_and_restored_by_the_sites_admins_only() {
    let app = TestApp::new().await;
    let listed = app.get("/api/v1/environments").await;
    assert_status!(listed, 200);
    let keys: Vec<&str> = listed.body["items"].as_array().unwrap().iter().map(|e| e["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["production", "staging"]);

    let by_editor =
        app.send("POST", "/api/v1/environments", Some(&app.editor), Some(json!({ "key": "preview" }))).await;
    assert_status!(by_editor, 403);
    let bad = app.post("/api/v1/environments", json!({ "key": "Not A Key" })).await;
    assert_status!(bad, 422);
    assert_eq!(bad.body["field"], "key");
    let unknown = app.post("/api/v1/environments", json!({ "key": "preview", "from": "qa" })).await;
    assert_status!(unknown, 404);

    let made = copy_of_production(&app, "next").await;
    assert_eq!(made["environment"]["copiedFrom"], "production");
    assert_eq!(made["environment"]["name"], "Next release");
    let copied = made["promotion"]["items"].as_array().unwrap().len();
    assert!(copied > 20, "the demo's pages, posts, menus, templates and images: {copied}");
    assert!(differences(&app, "next", "production").await.is_empty());
    let empty = app.post("/api/v1/environments", json!({ "key": "preview" })).await;
    assert_status!(empty, 201);
    assert_eq!(empty.body["promotion"], Value::Null);
    let templates = in_env(&app, "preview", "GET", "/api/v1/section-templates", None).await;
    assert_status!(templates, 200);
    assert!(templates.body["count"].as_u64().unwrap() > 0, "an empty environment has the starter templates");
    assert_eq!(in_env(&app, "preview", "GET", "/api/v1/pages", None).await.body["count"], 0);
    let twice = app.post("/api/v1/environments", json!({ "key": "preview" })).await;
    assert_status!(twice, 409);

    let renamed = app.patch("/api/v1/environments/preview", json!({ "name": "Preview" })).await;
    assert_status!(renamed, 200);
    assert_eq!((renamed.body["key"].as_str(), renamed.body["name"].as_str()), (Some("preview"), Some("Preview")));

    let archived = app.delete("/api/v1/environments/preview").await;
    assert_status!(archived, 200);
    assert!(archived.body["archivedAt"].is_string());
    let gone = in_env(&app, "preview", "GET", "/api/v1/pages", None).await;
    assert_status!(gone, 403);
    let own = app.delete("/api/v1/environments/production").await;
    assert_status!(own, 409);
    let restored = app.post("/api/v1/environments/preview/restore", json!({})).await;
    assert_status!(restored, 200);
    assert_status!(in_env(&app, "preview", "GET", "/api/v1/pages", None).await, 200);

    // A credential limited to staging neither compares nor promotes production.
    let staging_only = app
        .token(quire_store::NewToken {
            environments: Some(vec!["staging".into()]),
            ..quire_store::NewToken::new("staging admin", quire_core::access::Group::Admin, "demo")
        })
        .await;
    let compared =
        app.send("GET", "/api/v1/environments/production/compare?from=staging", Some(&staging_only), None).await;
    assert_status!(compared, 403);
    let listed = app.send("GET", "/api/v1/environments", Some(&staging_only), None).await;
    assert_eq!(listed.body["count"], 1, "{}", listed.body);
    // another site's admin never sees this site's environments
    let other = app.send("GET", "/api/v1/environments", Some(&app.other_admin), None).await;
    let keys: Vec<&str> = other.body["items"].as_array().unwrap().iter().map(|e| e["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["production"]);
}
