//! Authentication, group permissions and tenant isolation.

mod common;
use common::TestApp;
use serde_json::json;

#[tokio::test]
async fn tokens_are_required_and_checked() {
    let app = TestApp::new().await;
    let none = app.send("GET", "/api/v1/pages", None, None).await;
    assert_status!(none, 401);
    assert_eq!(none.code(), "UNAUTHORIZED");
    let wrong = app.send("GET", "/api/v1/pages", Some("qk_not-a-real-token"), None).await;
    assert_status!(wrong, 401);
    assert_eq!(wrong.error(), "the token is not valid");
    let expired = app.send("GET", "/api/v1/pages", Some(&app.expired), None).await;
    assert_status!(expired, 401);
    assert_eq!(expired.error(), "the token has expired");
    let write = app.send("POST", "/api/v1/pages", None, Some(json!({"name": "X", "slug": "x"}))).await;
    assert_status!(write, 401);
    // delivery is public
    assert_status!(app.send("GET", "/api/v1/delivery/pages/home", None, None).await, 200);
}

#[tokio::test]
async fn groups_limit_what_tokens_may_do() {
    let app = TestApp::new().await;
    let home = app.page_id("home").await;
    let page = json!({"name": "X", "slug": "x-page"});

    assert_status!(app.send("GET", "/api/v1/pages", Some(&app.viewer), None).await, 200);
    let viewer_write = app.send("POST", "/api/v1/pages", Some(&app.viewer), Some(page.clone())).await;
    assert_status!(viewer_write, 403);
    assert_eq!(viewer_write.error(), "group viewer may not create or change page records");

    assert_status!(app.send("POST", "/api/v1/pages", Some(&app.author), Some(page)).await, 201);
    // What an author may not do: delete a page, change a menu, add a template.
    let home_path = format!("/api/v1/pages/{home}");
    for (method, path, body) in [
        ("DELETE", home_path.as_str(), None),
        ("POST", "/api/v1/navigations/header/items", Some(json!({"label": "x", "targetType": "placeholder"}))),
        (
            "POST",
            "/api/v1/section-templates",
            Some(json!({"key": "k", "name": "K", "fields": [{"name": "a", "kind": "text"}]})),
        ),
    ] {
        let refused = app.send(method, path, Some(&app.author), body).await;
        assert_eq!(refused.status, 403, "{method} {path}: {}", refused.body);
    }

    let editor_delete = app.send("DELETE", &home_path, Some(&app.editor), None).await;
    assert_status!(editor_delete, 200);
    // nothing was archived by the refused calls
    assert_eq!(app.get("/api/v1/archive").await.body["count"], 1);
}

#[tokio::test]
async fn environment_header_is_confined_to_the_token() {
    let app = TestApp::new().await;
    let staging_only = app
        .token(quire_store::NewToken {
            environments: Some(vec!["staging".into()]),
            ..quire_store::NewToken::new("staging", quire_core::access::Group::Editor, "demo")
        })
        .await;
    let refused =
        app.send_raw("GET", "/api/v1/pages", Some(&staging_only), None, &[("x-quire-env", "production")]).await;
    assert_status!(refused, 403);
    let staging = app.send("GET", "/api/v1/pages", Some(&staging_only), None).await;
    assert_status!(staging, 200);
    // staging is a copy of production: the same pages, each a record of its own
    let production = app.get("/api/v1/pages").await;
    assert_eq!(staging.body["count"], production.body["count"]);
    let ids = |r: &common::Reply| -> Vec<String> {
        r.body["items"].as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap().to_string()).collect()
    };
    let (theirs, ours) = (ids(&staging), ids(&production));
    assert!(theirs.iter().all(|id| !ours.contains(id)), "no id is shared between environments");
    for id in ours.iter().take(3) {
        let other = app.send("GET", &format!("/api/v1/pages/{id}"), Some(&staging_only), None).await;
        assert_status!(other, 404);
    }
    let me = app.send("GET", "/api/v1/me", Some(&staging_only), None).await;
    assert_eq!(me.body["environment"], "staging");
    // the admin token sees production by default and staging on request
    let admin_staging =
        app.send_raw("GET", "/api/v1/section-templates", Some(&app.admin), None, &[("x-quire-env", "staging")]).await;
    assert_eq!(admin_staging.body["count"], 10);
}

/// A token for site `other` can neither read nor write site `demo` through
/// any endpoint, even knowing every id.
#[tokio::test]
async fn site_b_token_cannot_touch_site_a() {
    let app = TestApp::new().await;
    let t = Some(app.other_admin.as_str());
    let home = app.page_id("home").await;
    let section =
        app.get(&format!("/api/v1/pages/{home}/sections")).await.body["items"][0]["id"].as_str().unwrap().to_string();
    let post = app.get("/api/v1/collections/blog/entries").await.body["items"][0]["id"].as_str().unwrap().to_string();
    let image = app.get("/api/v1/images").await.body["items"][0]["id"].as_str().unwrap().to_string();
    let nav_item =
        app.get("/api/v1/navigations/header/items").await.body["items"][0]["id"].as_str().unwrap().to_string();
    let change = app.get("/api/v1/changes?limit=1").await.body["items"][0]["id"].as_i64().unwrap();
    let blog_collection_id = app.get("/api/v1/collections/blog").await.body["id"].as_str().unwrap().to_string();
    let about = app.page_id("about").await;
    let archive = app.delete(&format!("/api/v1/pages/{about}")).await.body["id"].as_str().unwrap().to_string();

    // reads by id
    for path in [
        format!("/api/v1/pages/{home}"),
        format!("/api/v1/pages/{home}/sections"),
        format!("/api/v1/sections/{section}"),
        format!("/api/v1/entries/{post}"),
        format!("/api/v1/images/{image}"),
        format!("/api/v1/nav-items/{nav_item}"),
        "/api/v1/navigations/header".to_string(),
        "/api/v1/navigations/header/items".to_string(),
        "/api/v1/collections/blog".to_string(),
        format!("/api/v1/collections/{blog_collection_id}/entries"),
        format!("/api/v1/changes/{change}"),
        format!("/api/v1/archive/{archive}"),
    ] {
        let r = app.send("GET", &path, t, None).await;
        assert_eq!(r.status.as_u16(), 404, "{path} leaked: {}", r.body);
    }
    // lists show only site B's own records
    for path in [
        "/api/v1/pages",
        "/api/v1/images",
        "/api/v1/collections",
        "/api/v1/navigations",
        "/api/v1/archive",
        "/api/v1/changes?entity=page",
    ] {
        let r = app.send("GET", path, t, None).await;
        assert_status!(r, 200);
        assert_eq!(r.body["count"], 0, "{path} leaked: {}", r.body);
    }
    let revisions = app.send("GET", &format!("/api/v1/revisions/page/{home}"), t, None).await;
    assert_eq!(revisions.body["count"], 0);

    // writes
    let writes = [
        ("PATCH", format!("/api/v1/pages/{home}"), Some(json!({"name": "pwned"}))),
        ("DELETE", format!("/api/v1/pages/{home}"), None),
        (
            "POST",
            format!("/api/v1/pages/{home}/sections"),
            Some(json!({"templateKey": "text", "content": {"body": "x"}})),
        ),
        ("PATCH", format!("/api/v1/sections/{section}"), Some(json!({"hidden": true}))),
        ("DELETE", format!("/api/v1/sections/{section}"), None),
        ("PATCH", format!("/api/v1/entries/{post}"), Some(json!({"title": "pwned"}))),
        ("DELETE", format!("/api/v1/entries/{post}"), None),
        (
            "POST",
            "/api/v1/collections/blog/entries".to_string(),
            Some(json!({"slug": "x", "title": "x", "content": {"body": "x"}})),
        ),
        ("PATCH", format!("/api/v1/images/{image}"), Some(json!({"alt": "pwned"}))),
        ("DELETE", format!("/api/v1/images/{image}"), None),
        ("PATCH", format!("/api/v1/nav-items/{nav_item}"), Some(json!({"label": "pwned"}))),
        ("DELETE", format!("/api/v1/nav-items/{nav_item}"), None),
        (
            "POST",
            "/api/v1/navigations/header/items".to_string(),
            Some(json!({"label": "x", "targetType": "placeholder"})),
        ),
        ("PATCH", "/api/v1/navigations/header".to_string(), Some(json!({"name": "pwned"}))),
        ("PATCH", "/api/v1/collections/blog".to_string(), Some(json!({"name": "pwned"}))),
        ("POST", format!("/api/v1/archive/{archive}/restore"), Some(json!({}))),
        ("POST", format!("/api/v1/changes/{change}/restore"), Some(json!({}))),
    ];
    for (method, path, body) in writes {
        let r = app.send(method, &path, t, body).await;
        assert_eq!(r.status.as_u16(), 404, "{method} {path} was not refused: {}", r.body);
    }
    // a nav item in site B cannot point at site A's page
    app.send("POST", "/api/v1/navigations", t, Some(json!({"key": "header", "name": "Header"}))).await;
    let cross = app
        .send(
            "POST",
            "/api/v1/navigations/header/items",
            t,
            Some(json!({"label": "x", "targetType": "page", "targetId": home})),
        )
        .await;
    assert_status!(cross, 422);

    // site A is untouched
    assert_eq!(app.get(&format!("/api/v1/pages/{home}")).await.body["version"], 1);
    assert_eq!(app.get(&format!("/api/v1/entries/{post}")).await.body["version"], 1);
    assert_eq!(app.get(&format!("/api/v1/archive/{archive}")).await.body["restoredAt"], serde_json::Value::Null);
    assert_eq!(app.get("/api/v1/navigations/header/items").await.body["count"], 6);
}

#[tokio::test]
async fn malformed_requests_are_400() {
    let app = TestApp::new().await;
    let bad_json = app.send_raw("POST", "/api/v1/pages", Some(&app.admin), Some("{not json".into()), &[]).await;
    assert_status!(bad_json, 400);
    assert!(bad_json.error().starts_with("the body is not valid JSON"), "{}", bad_json.error());
    let unknown = app.post("/api/v1/pages", json!({"name": "X", "slug": "x", "colour": "red"})).await;
    assert_status!(unknown, 400);
    assert_eq!(unknown.body["field"], "colour");
    let wrong_type = app.post("/api/v1/pages", json!({"name": "X", "slug": 3})).await;
    assert_status!(wrong_type, 400);
    assert_eq!(wrong_type.body["field"], "slug");
    let limit = app.get("/api/v1/pages?limit=0").await;
    assert_status!(limit, 400);
    assert_eq!(limit.body["error"], "limit: 0 is not between 1 and 100");
    let cursor = app.get("/api/v1/pages?cursor=garbage").await;
    assert_status!(cursor, 400);
    assert_eq!(cursor.body["field"], "cursor");
    let filter = app.get("/api/v1/collections/blog/entries?status=live").await;
    assert_status!(filter, 400);
    let unknown_param = app.get("/api/v1/pages?colour=red").await;
    assert_status!(unknown_param, 400);
}

#[tokio::test]
async fn unknown_or_unreadable_environments_are_refused() {
    let app = TestApp::new().await;
    let unknown = app.send_raw("GET", "/api/v1/pages", Some(&app.admin), None, &[("x-quire-env", "qa")]).await;
    assert_status!(unknown, 403);
    assert!(unknown.error().contains("does not exist"), "{}", unknown.error());
    let req = axum::http::Request::builder()
        .uri("/api/v1/pages")
        .header("authorization", format!("Bearer {}", app.admin))
        .header("x-quire-env", axum::http::HeaderValue::from_bytes(&[0xff, 0xfe]).unwrap())
        .body(axum::body::Body::empty())
        .unwrap();
    let res = tower::ServiceExt::oneshot(app.router.clone(), req).await.unwrap();
    assert_eq!(res.status().as_u16(), 400);
}

#[tokio::test]
async fn the_server_does_not_trust_a_client_type_size_or_hash() {
    let app = TestApp::new().await;
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(quire_media::samples::png(6, 6));
    for field in ["contentHash", "mime", "width", "bytes"] {
        let mut body = json!({"data": data, "filename": "x.png"});
        body[field] = json!("0");
        let refused = app.post("/api/v1/images", body).await;
        assert_status!(refused, 400);
        assert!(refused.error().contains(field), "{}", refused.error());
    }
    let escaped = app.post("/api/v1/images", json!({"url": "/uploads/%2e%2e/quire.db"})).await;
    assert_status!(escaped, 404);
}
