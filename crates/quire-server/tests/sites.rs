//! The instance's sites over REST: only its administrator lists, makes,
//! renames, archives and restores them (a site's admins are refused); a new
//! site starts empty (with the starter templates, agents and English),
//! with the demo content or as a copy of another site; an archived site's tokens stop and nothing of it
//! is delivered, and restoring brings both back; bad input changes nothing.

mod common;

use common::TestApp;
use quire_core::access::Group;
use quire_store::NewToken;
use serde_json::json;

async fn operator(app: &TestApp) -> String {
    app.token(NewToken { instance_admin: true, ..NewToken::new("operator", Group::Admin, "demo") }).await
}

#[tokio::test]
async fn only_the_instances_administrator_manages_sites() {
    let app = TestApp::new().await;
    let site_admin = app.send("GET", "/api/v1/sites", Some(&app.admin), None).await;
    assert_status!(site_admin, 403);
    assert!(site_admin.error().contains("instance's administrator"), "{}", site_admin.body);
    let made = app.send("POST", "/api/v1/sites", Some(&app.admin), Some(json!({ "slug": "x", "name": "X" }))).await;
    assert_status!(made, 403);
    let other = app.send("DELETE", "/api/v1/sites/demo", Some(&app.other_admin), None).await;
    assert_status!(other, 403);

    let op = operator(&app).await;
    let listed = app.send("GET", "/api/v1/sites", Some(&op), None).await;
    assert_status!(listed, 200);
    let slugs: Vec<&str> =
        listed.body["items"].as_array().unwrap().iter().map(|s| s["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs, ["demo", "other"]);
}

#[tokio::test]
async fn a_site_is_made_empty_or_from_the_demo_renamed_archived_and_restored() {
    let app = TestApp::new().await;
    let op = operator(&app).await;
    let send = |method: &'static str, path: String, body: Option<serde_json::Value>| {
        let (app, op) = (&app, op.clone());
        async move { app.send(method, &path, Some(&op), body).await }
    };

    // Bad input names its field and makes nothing.
    let bad = send("POST", "/api/v1/sites".into(), Some(json!({ "slug": "Not A Slug", "name": "Shop" }))).await;
    assert_eq!((bad.status.as_u16(), bad.body["field"].as_str()), (422, Some("slug")), "{}", bad.body);
    let taken = send("POST", "/api/v1/sites".into(), Some(json!({ "slug": "demo", "name": "Again" }))).await;
    assert_eq!((taken.status.as_u16(), taken.body["field"].as_str()), (409, Some("slug")), "{}", taken.body);
    let unknown =
        send("POST", "/api/v1/sites".into(), Some(json!({ "slug": "x", "name": "X", "start": "elsewhere" }))).await;
    assert_status!(unknown, 400);
    let no_source =
        send("POST", "/api/v1/sites".into(), Some(json!({ "slug": "x", "name": "X", "start": "copy" }))).await;
    assert_eq!(
        (no_source.status.as_u16(), no_source.body["field"].as_str()),
        (422, Some("from")),
        "{}",
        no_source.body
    );
    let body = json!({ "slug": "x", "name": "X", "start": "copy", "from": "nowhere" });
    let missing = send("POST", "/api/v1/sites".into(), Some(body)).await;
    assert_eq!((missing.status.as_u16(), missing.body["field"].as_str()), (422, Some("from")), "{}", missing.body);
    assert!(missing.error().contains("no site \"nowhere\""), "{}", missing.error());
    assert_eq!(send("GET", "/api/v1/sites".into(), None).await.body["count"], 2, "nothing was made");

    // Empty: the starter templates and agents, English, no pages.
    let shop = send("POST", "/api/v1/sites".into(), Some(json!({ "slug": "shop", "name": "Shop" }))).await;
    assert_status!(shop, 201);
    assert_eq!(shop.body["environments"], json!(["production", "staging"]));
    let shop_admin = app.token(NewToken::new("shop", Group::Admin, "shop")).await;
    let as_shop = |path: &'static str| {
        let (app, token) = (&app, shop_admin.clone());
        async move { app.send("GET", path, Some(&token), None).await }
    };
    assert_eq!(as_shop("/api/v1/pages").await.body["count"], 0);
    assert_eq!(as_shop("/api/v1/section-templates?limit=100").await.body["count"], 10);
    assert_eq!(
        as_shop("/api/v1/locales").await.body["items"],
        json!([{ "tag": "en", "fallback": null, "isDefault": true }])
    );
    assert_eq!(as_shop("/api/v1/agents").await.body["items"].as_array().unwrap().len(), 3);

    // From the demo: its pages, published.
    let copy =
        send("POST", "/api/v1/sites".into(), Some(json!({ "slug": "launch", "name": "Launch", "start": "demo" })))
            .await;
    assert_status!(copy, 201);
    let delivered = app.send("GET", "/api/v1/delivery/pages/about?site=launch", None, None).await;
    assert_status!(delivered, 200);

    // Renamed; archived: its token stops, nothing is delivered; restored: both back.
    let renamed = send("PATCH", "/api/v1/sites/shop".into(), Some(json!({ "name": "The Shop" }))).await;
    assert_eq!((renamed.status.as_u16(), renamed.body["name"].as_str()), (200, Some("The Shop")));
    let archived = send("DELETE", "/api/v1/sites/launch".into(), None).await;
    assert_status!(archived, 200);
    assert!(archived.body["archivedAt"].is_string(), "{}", archived.body);
    assert_status!(app.send("GET", "/api/v1/delivery/pages/about?site=launch", None, None).await, 404);
    assert_status!(send("DELETE", "/api/v1/sites/launch".into(), None).await, 404);
    let listed = send("GET", "/api/v1/sites".into(), None).await;
    assert_eq!(listed.body["count"], 4, "an archived site is listed: {}", listed.body);
    let restored = send("POST", "/api/v1/sites/launch/restore".into(), None).await;
    assert_status!(restored, 200);
    assert_status!(app.send("GET", "/api/v1/delivery/pages/about?site=launch", None, None).await, 200);
    assert_status!(send("POST", "/api/v1/sites/launch/restore".into(), None).await, 409);

    // A site's tokens stop while it is archived.
    assert_status!(send("DELETE", "/api/v1/sites/shop".into(), None).await, 200);
    assert_status!(as_shop("/api/v1/pages").await, 401);
    assert_status!(send("POST", "/api/v1/sites/shop/restore".into(), None).await, 200);
    assert_status!(as_shop("/api/v1/pages").await, 200);

    // The site the operator acts in stays.
    let own = send("DELETE", "/api/v1/sites/demo".into(), None).await;
    assert_status!(own, 409);
}

#[tokio::test]
async fn a_site_made_as_a_copy_of_another_has_its_content_locales_and_agents_and_goes_its_own_way() {
    let app = TestApp::new().await;
    let op = operator(&app).await;
    let made = app
        .send(
            "POST",
            "/api/v1/sites",
            Some(&op),
            Some(json!({ "slug": "copied", "name": "Copied", "start": "copy", "from": "demo" })),
        )
        .await;
    assert_status!(made, 201);
    assert_eq!(made.body["environments"], json!(["production", "staging"]));
    let theirs = app.token(NewToken::new("copied", Group::Admin, "copied")).await;
    let get = |path: &'static str, token: String| {
        let app = &app;
        async move { app.send("GET", path, Some(&token), None).await }
    };
    let (mine, copy) =
        (get("/api/v1/pages?limit=100", app.admin.clone()).await, get("/api/v1/pages?limit=100", theirs.clone()).await);
    assert_eq!(copy.body["count"], mine.body["count"], "every page");
    assert_eq!(get("/api/v1/locales", theirs.clone()).await.body, get("/api/v1/locales", app.admin.clone()).await.body);
    assert_eq!(
        get("/api/v1/agents", theirs.clone()).await.body["count"],
        get("/api/v1/agents", app.admin.clone()).await.body["count"]
    );
    let delivered = app.send("GET", "/api/v1/delivery/pages/about?site=copied", None, None).await;
    assert_status!(delivered, 200);
    let german = app.send("GET", "/api/v1/delivery/pages/home?site=copied&locale=de", None, None).await;
    assert_eq!(german.body["locale"], "de", "its German home page came along: {}", german.body);
    // Its staging is a copy of its production.
    let compared = get("/api/v1/environments/production/compare?from=staging", theirs.clone()).await;
    assert_eq!(compared.body["count"], 0, "{}", compared.body);
    // It goes its own way: a change in the demo leaves it as it was.
    let about = app.page_id("about").await;
    let renamed = app.patch(&format!("/api/v1/pages/{about}"), json!({ "name": "About the demo" })).await;
    assert_status!(renamed, 200);
    assert_status!(app.post(&format!("/api/v1/pages/{about}/publish"), json!({})).await, 200);
    assert_eq!(app.get("/api/v1/delivery/pages/about").await.body["name"], "About the demo");
    let still = app.send("GET", "/api/v1/delivery/pages/about?site=copied", None, None).await;
    assert_eq!(still.body["name"], delivered.body["name"]);
}
