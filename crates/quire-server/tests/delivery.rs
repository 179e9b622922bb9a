//! The public delivery API and the OpenAPI document.

mod common;
use common::TestApp;
use serde_json::json;

#[tokio::test]
async fn delivery_serves_published_visible_sections_in_order() {
    let app = TestApp::new().await;
    let home = app.send("GET", "/api/v1/delivery/pages/home", None, None).await;
    assert_status!(home, 200);
    assert_eq!(home.body["path"], "/");
    let keys: Vec<&str> =
        home.body["sections"].as_array().unwrap().iter().map(|s| s["templateKey"].as_str().unwrap()).collect();
    assert_eq!(keys, ["hero", "feature-grid", "testimonials", "cta"]);

    // hide one, unpublish another, reorder a third
    let ids: Vec<String> =
        home.body["sections"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_string()).collect();
    app.patch(&format!("/api/v1/sections/{}", ids[1]), json!({"hidden": true})).await;
    app.patch(&format!("/api/v1/sections/{}", ids[2]), json!({"status": "unpublished"})).await;
    app.patch(&format!("/api/v1/sections/{}", ids[3]), json!({"sortOrder": -1})).await;
    let keys = |home: &serde_json::Value| -> Vec<String> {
        home["sections"].as_array().unwrap().iter().map(|s| s["templateKey"].as_str().unwrap().to_string()).collect()
    };
    // The draft changed; the public page has not, until the page is published.
    let draft = app.send("GET", "/api/v1/delivery/pages/home", None, None).await;
    assert_eq!(keys(&draft.body), ["hero", "feature-grid", "testimonials", "cta"]);
    let home_id = home.body["id"].as_str().unwrap();
    let state = app.get(&format!("/api/v1/pages/{home_id}/publication")).await;
    assert_eq!(state.body, json!({"published": true, "changed": true}));
    assert_status!(app.post(&format!("/api/v1/pages/{home_id}/publish"), json!({})).await, 200);
    let home = app.send("GET", "/api/v1/delivery/pages/home", None, None).await;
    assert_eq!(keys(&home.body), ["cta", "hero"]);

    let team = app.send("GET", "/api/v1/delivery/pages/team", None, None).await;
    assert_eq!(team.body["path"], "/about/team");

    // drafts are not delivered
    app.post("/api/v1/pages", json!({"name": "Secret", "slug": "secret"})).await;
    assert_status!(app.send("GET", "/api/v1/delivery/pages/secret", None, None).await, 404);
    assert_status!(app.send("GET", "/api/v1/delivery/pages/nope", None, None).await, 404);
    assert_status!(app.send("GET", "/api/v1/delivery/pages/home?site=missing", None, None).await, 404);
    assert_status!(app.send("GET", "/api/v1/delivery/pages/home?site=other", None, None).await, 404);
}

#[tokio::test]
async fn delivery_navigation_is_nested_with_resolved_hrefs() {
    let app = TestApp::new().await;
    let footer = app.send("GET", "/api/v1/delivery/navigations/footer", None, None).await;
    assert_status!(footer, 200);
    insta::assert_json_snapshot!("footer", footer.body, { ".items[].id" => "[id]" });
    let header = app.send("GET", "/api/v1/delivery/navigations/header", None, None).await;
    insta::assert_json_snapshot!("header", header.body, { ".items[].id" => "[id]", ".items[].children[].id" => "[id]" });

    // an item whose page is archived disappears from delivery
    let pricing = app.page_id("pricing").await;
    app.delete(&format!("/api/v1/pages/{pricing}")).await;
    let header = app.send("GET", "/api/v1/delivery/navigations/header", None, None).await;
    let labels: Vec<&str> =
        header.body["items"].as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["Home", "About", "Blog", "Contact"]);
}

#[tokio::test]
async fn delivery_navigation_resolves_images_and_leaves_out_unpublished_entries() {
    let app = TestApp::new().await;
    let images = app.get("/api/v1/images").await;
    let image = &images.body["items"][0];
    let (image_id, image_url) = (image["id"].as_str().unwrap().to_string(), image["url"].as_str().unwrap().to_string());
    let posts = app.get("/api/v1/collections/blog/entries?status=published").await;
    let post_id = posts.body["items"][0]["id"].as_str().unwrap().to_string();
    let post_slug = posts.body["items"][0]["slug"].as_str().unwrap().to_string();
    for (label, kind, target) in [("Picture", "media", &image_id), ("Story", "entry", &post_id)] {
        let item = app
            .post("/api/v1/navigations/footer/items", json!({"label": label, "targetType": kind, "targetId": target}))
            .await;
        assert_status!(item, 201);
    }
    assert_status!(app.post("/api/v1/navigations/footer/publish", json!({})).await, 200);
    let href = |body: &serde_json::Value, label: &str| {
        body["items"].as_array().unwrap().iter().find(|i| i["label"] == label).map(|i| i["href"].clone())
    };
    let footer = app.send("GET", "/api/v1/delivery/navigations/footer", None, None).await;
    assert_eq!(href(&footer.body, "Picture"), Some(json!(image_url)));
    assert_eq!(href(&footer.body, "Story"), Some(json!(format!("/blog/{post_slug}"))));

    // a post back to draft and an archived image leave the menu
    assert_status!(app.patch(&format!("/api/v1/entries/{post_id}"), json!({"status": "draft"})).await, 200);
    assert_status!(app.delete(&format!("/api/v1/images/{image_id}")).await, 200);
    let footer = app.send("GET", "/api/v1/delivery/navigations/footer", None, None).await;
    assert_eq!(href(&footer.body, "Picture"), None);
    assert_eq!(href(&footer.body, "Story"), None);
}

#[tokio::test]
async fn delivery_lists_published_posts_only() {
    let app = TestApp::new().await;
    let posts = app.send("GET", "/api/v1/delivery/collections/blog/entries", None, None).await;
    assert_status!(posts, 200);
    assert_eq!(posts.body["count"], 3);
    assert!(posts.body["items"].as_array().unwrap().iter().all(|p| p["status"] == "published"));
}

#[tokio::test]
async fn openapi_document_and_docs_ui() {
    let app = TestApp::new().await;
    let doc = app.send("GET", "/api/openapi.json", None, None).await;
    assert_status!(doc, 200);
    assert_eq!(doc.body["openapi"], "3.1.0");
    let paths = doc.body["paths"].as_object().unwrap();
    for p in [
        "/api/v1/pages",
        "/api/v1/pages/{id}",
        "/api/v1/pages/{id}/sections",
        "/api/v1/sections/{id}",
        "/api/v1/section-templates",
        "/api/v1/collections",
        "/api/v1/collections/{slug}/entries",
        "/api/v1/entries/{id}",
        "/api/v1/navigations",
        "/api/v1/navigations/{key}/items",
        "/api/v1/nav-items/{id}",
        "/api/v1/images",
        "/api/v1/archive",
        "/api/v1/archive/{id}/restore",
        "/api/v1/changes",
        "/api/v1/changes/{id}/restore",
        "/api/v1/revisions/{entity}/{id}",
        "/api/v1/delivery/pages/{slug}",
        "/api/v1/delivery/navigations/{key}",
    ] {
        assert!(paths.contains_key(p), "{p} missing from OpenAPI");
    }
    assert!(doc.body["components"]["securitySchemes"]["bearer"].is_object());
    assert!(doc.body["components"]["schemas"]["FieldDef"].is_object());
    let ui = app.send("GET", "/api/docs/", None, None).await;
    assert_status!(ui, 200);
    assert!(ui.body.as_str().unwrap().contains("swagger"), "docs UI is served from the binary");
}

#[tokio::test]
async fn a_preview_shows_the_drafts_to_a_caller_who_may_read_them() {
    let app = TestApp::new().await;
    let about = app.page_id("about").await;
    app.patch(&format!("/api/v1/pages/{about}"), json!({"name": "About, drafted"})).await;
    let secret = app.post("/api/v1/pages", json!({"name": "Secret", "slug": "secret"})).await;
    assert_status!(secret, 201);
    app.post(
        "/api/v1/navigations/footer/items",
        json!({"label": "Secret", "targetType": "page", "targetId": secret.body["id"]}),
    )
    .await;

    // The public site: what is published, whoever asks.
    let public = app.send("GET", "/api/v1/delivery/pages/about", None, None).await;
    assert_eq!(public.body["name"], "About");
    let with_token = app.send("GET", "/api/v1/delivery/pages/about", Some(&app.admin), None).await;
    assert_eq!(with_token.body["name"], "About", "a token alone does not preview");
    assert_status!(app.send("GET", "/api/v1/delivery/pages/secret", None, None).await, 404);

    // A preview: the drafts, a page never published included, with the menu linking to it.
    let preview = app.send("GET", "/api/v1/delivery/pages/about?preview=true", Some(&app.admin), None).await;
    assert_status!(preview, 200);
    assert_eq!(preview.body["name"], "About, drafted");
    assert_status!(app.send("GET", "/api/v1/delivery/pages/secret?preview=true", Some(&app.admin), None).await, 200);
    let footer = app.send("GET", "/api/v1/delivery/navigations/footer?preview=true", Some(&app.admin), None).await;
    let labels: Vec<&str> =
        footer.body["items"].as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert!(labels.contains(&"Secret"), "{labels:?}");
    let public_footer = app.send("GET", "/api/v1/delivery/navigations/footer", None, None).await;
    assert!(!public_footer.body["items"].as_array().unwrap().iter().any(|i| i["label"] == "Secret"));
    let draft_posts =
        app.send("GET", "/api/v1/delivery/collections/blog/entries?preview=true", Some(&app.admin), None).await;
    let public_posts = app.send("GET", "/api/v1/delivery/collections/blog/entries", None, None).await;
    assert!(draft_posts.body["count"].as_u64() > public_posts.body["count"].as_u64(), "the draft post is previewed");

    // No credential, or a bad one: no preview.
    assert_status!(app.send("GET", "/api/v1/delivery/pages/about?preview=true", None, None).await, 401);
    assert_status!(app.send("GET", "/api/v1/delivery/pages/about?preview=true", Some("nope"), None).await, 401);
    let elsewhere =
        app.send("GET", "/api/v1/delivery/pages/about?preview=true&site=other", Some(&app.admin), None).await;
    assert_status!(elsewhere, 403);
    assert!(elsewhere.error().starts_with("site: "), "{}", elsewhere.error());
    // Its own site named, and an environment of it: the same preview.
    let own = app
        .send("GET", "/api/v1/delivery/pages/about?preview=true&site=demo&env=production", Some(&app.admin), None)
        .await;
    assert_eq!(own.body["name"], "About, drafted", "{}", own.body);
}

#[tokio::test]
async fn the_home_pages_children_are_addressed_from_the_root_in_pages_and_menus() {
    let app = TestApp::new().await;
    let home = app.page_id("home").await;
    let made = app.post("/api/v1/pages", json!({"name": "Services", "slug": "services", "parentId": home})).await;
    assert_status!(made, 201);
    let services = made.body["id"].as_str().unwrap().to_string();
    let made = app.post("/api/v1/pages", json!({"name": "Web", "slug": "web", "parentId": services})).await;
    let web = made.body["id"].as_str().unwrap().to_string();
    for id in [&services, &web] {
        assert_status!(app.post(&format!("/api/v1/pages/{id}/publish"), json!({})).await, 200);
    }
    let item = json!({"label": "Services", "targetType": "page", "targetId": services});
    assert_status!(app.post("/api/v1/navigations/header/items", item).await, 201);
    let item = json!({"label": "Web", "targetType": "page", "targetId": web});
    assert_status!(app.post("/api/v1/navigations/header/items", item).await, 201);
    app.post("/api/v1/navigations/header/publish", json!({})).await;

    let page = app.send("GET", "/api/v1/delivery/pages/services", None, None).await;
    assert_status!(page, 200);
    assert_eq!(page.body["path"], "/services");
    let page = app.send("GET", "/api/v1/delivery/pages/web", None, None).await;
    assert_eq!(page.body["path"], "/services/web");
    let home = app.send("GET", "/api/v1/delivery/pages/home", None, None).await;
    assert_eq!(home.body["path"], "/");
    let header = app.send("GET", "/api/v1/delivery/navigations/header", None, None).await;
    let href = |label: &str| {
        header.body["items"].as_array().unwrap().iter().find(|i| i["label"] == label).map(|i| i["href"].clone())
    };
    assert_eq!(href("Services"), Some(json!("/services")), "{}", header.body);
    assert_eq!(href("Web"), Some(json!("/services/web")), "{}", header.body);
    // Pages under any other root page keep it in their path.
    let team = app.send("GET", "/api/v1/delivery/pages/team", None, None).await;
    assert_eq!(team.body["path"], "/about/team");
}
