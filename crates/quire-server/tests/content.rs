//! CRUD of every entity through HTTP, with validation errors.

mod common;
use common::TestApp;
use serde_json::json;

#[tokio::test]
async fn pages_crud_with_merge_and_pagination() {
    let app = TestApp::new().await;
    let about = app.page_id("about").await;

    let created = app
        .post("/api/v1/pages", json!({"name": "Careers", "slug": "careers", "parentId": about, "meta": {"title": "Jobs", "description": "Work here"}}))
        .await;
    assert_status!(created, 201);
    let id = created.body["id"].as_str().unwrap().to_string();
    assert_eq!(created.body["status"], "draft");
    assert_eq!(created.body["parentId"], about.as_str());
    assert_eq!(created.body["version"], 1);

    let read = app.get(&format!("/api/v1/pages/{id}")).await;
    assert_status!(read, 200);
    assert_eq!(read.body["slug"], "careers");

    // meta merges: title changes, description is removed by null, parentId null moves to root.
    let updated = app
        .patch(
            &format!("/api/v1/pages/{id}"),
            json!({"meta": {"title": "Open roles", "description": null}, "parentId": null, "status": "published"}),
        )
        .await;
    assert_status!(updated, 200);
    assert_eq!(updated.body["meta"], json!({"title": "Open roles"}));
    assert_eq!(updated.body["parentId"], serde_json::Value::Null);
    assert_eq!(updated.body["version"], 2);

    // children filter
    let children = app.get(&format!("/api/v1/pages?parentId={about}")).await;
    assert_status!(children, 200);
    let slugs: Vec<&str> =
        children.body["items"].as_array().unwrap().iter().map(|p| p["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs, ["team"]);

    // pagination walks every page exactly once
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/api/v1/pages?limit=2&cursor={c}"),
            None => "/api/v1/pages?limit=2".to_string(),
        };
        let page = app.get(&path).await;
        assert_status!(page, 200);
        assert!(page.body["count"].as_u64().unwrap() <= 2);
        for p in page.body["items"].as_array().unwrap() {
            seen.push(p["slug"].as_str().unwrap().to_string());
        }
        match page.body["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    seen.sort();
    assert_eq!(seen, ["about", "blog", "careers", "contact", "home", "pricing", "team"]);

    let deleted = app.delete(&format!("/api/v1/pages/{id}")).await;
    assert_status!(deleted, 200);
    assert_eq!(deleted.body["entity"], "page");
    assert_status!(app.get(&format!("/api/v1/pages/{id}")).await, 404);
}

#[tokio::test]
async fn page_rules_are_enforced() {
    let app = TestApp::new().await;
    let dup = app.post("/api/v1/pages", json!({"name": "Again", "slug": "about"})).await;
    assert_status!(dup, 409);
    assert_eq!(dup.body["field"], "slug");
    assert!(dup.error().contains("\"about\" is already used"), "{}", dup.error());

    let bad = app.post("/api/v1/pages", json!({"name": "", "slug": "ok-slug"})).await;
    assert_status!(bad, 422);
    assert_eq!(bad.body["error"], "name: required");

    let missing_parent =
        app.post("/api/v1/pages", json!({"name": "Orphan", "slug": "orphan", "parentId": "nope"})).await;
    assert_status!(missing_parent, 422);
    assert_eq!(missing_parent.body["field"], "parentId");

    // a page cannot become its own grandchild
    let about = app.page_id("about").await;
    let team = app.page_id("team").await;
    let cycle = app.patch(&format!("/api/v1/pages/{about}"), json!({"parentId": team})).await;
    assert_status!(cycle, 422);
    assert!(cycle.error().contains("cycle"), "{}", cycle.error());

    let status = app.patch(&format!("/api/v1/pages/{about}"), json!({"status": "live"})).await;
    assert_status!(status, 400);
    assert_eq!(status.body["field"], "status");
    assert!(status.error().contains("draft"), "{}", status.error());

    // nothing changed
    assert_eq!(app.get(&format!("/api/v1/pages/{about}")).await.body["version"], 1);
}

#[tokio::test]
async fn sections_validate_against_templates() {
    let app = TestApp::new().await;
    let home = app.page_id("home").await;

    let missing_href = app
        .post(
            &format!("/api/v1/pages/{home}/sections"),
            json!({"templateKey": "hero", "content": {"heading": "Hi", "cta": {"label": "Go"}}}),
        )
        .await;
    assert_status!(missing_href, 422);
    assert_eq!(missing_href.body["error"], "content.cta.href: required");
    assert_eq!(missing_href.body["field"], "content.cta.href");

    let too_long = app
        .post(
            &format!("/api/v1/pages/{home}/sections"),
            json!({"templateKey": "hero", "content": {"heading": "x".repeat(121)}}),
        )
        .await;
    assert_status!(too_long, 422);
    assert_eq!(too_long.body["error"], "content.heading: at most 120 characters");

    let unknown_template =
        app.post(&format!("/api/v1/pages/{home}/sections"), json!({"templateKey": "carousel"})).await;
    assert_status!(unknown_template, 422);
    assert!(
        unknown_template.error().starts_with("templateKey: \"carousel\" is not one of contact, cta, faq"),
        "{}",
        unknown_template.error()
    );

    let created = app
        .post(&format!("/api/v1/pages/{home}/sections"), json!({"templateKey": "cta", "content": {"heading": "Buy", "button": {"label": "Now", "href": "/pricing"}}, "status": "published"}))
        .await;
    assert_status!(created, 201);
    let id = created.body["id"].as_str().unwrap().to_string();
    assert_eq!(created.body["sortOrder"], 4, "placed after the four seeded sections");

    // content merges; null removes a key; the result is validated again
    let merged = app.patch(&format!("/api/v1/sections/{id}"), json!({"content": {"body": "Today only"}})).await;
    assert_status!(merged, 200);
    assert_eq!(merged.body["content"]["heading"], "Buy");
    assert_eq!(merged.body["content"]["body"], "Today only");
    let removed = app.patch(&format!("/api/v1/sections/{id}"), json!({"content": {"body": null}})).await;
    assert!(removed.body["content"].get("body").is_none());
    let broken = app.patch(&format!("/api/v1/sections/{id}"), json!({"content": {"button": null}})).await;
    assert_status!(broken, 422);
    assert_eq!(broken.body["error"], "content.button: required");
    assert_eq!(app.get(&format!("/api/v1/sections/{id}")).await.body["version"], 3, "the failed write changed nothing");

    let list = app.get(&format!("/api/v1/pages/{home}/sections")).await;
    assert_status!(list, 200);
    assert_eq!(list.body["count"], 5);
    assert_eq!(list.body["items"][0]["templateKey"], "hero");

    assert_status!(app.delete(&format!("/api/v1/sections/{id}")).await, 200);
    assert_eq!(app.get(&format!("/api/v1/pages/{home}/sections")).await.body["count"], 4);
}

#[tokio::test]
async fn templates_crud() {
    let app = TestApp::new().await;
    let list = app.get("/api/v1/section-templates?limit=100").await;
    assert_eq!(list.body["count"], 10);
    let hero = app.get("/api/v1/section-templates/hero").await;
    let names: Vec<&str> =
        hero.body["fields"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["heading", "subheading", "backgroundImage", "cta"]);

    let bad = app
        .post(
            "/api/v1/section-templates",
            json!({"key": "quote", "name": "Quote", "fields": [{"name": "items", "kind": "list"}]}),
        )
        .await;
    assert_status!(bad, 422);
    assert_eq!(bad.body["error"], "fields.0.item: a list field needs an item definition");

    let created = app
        .post("/api/v1/section-templates", json!({"key": "quote", "name": "Quote", "fields": [{"name": "text", "kind": "text", "required": true, "maxLength": 200}]}))
        .await;
    assert_status!(created, 201);
    let updated = app.patch("/api/v1/section-templates/quote", json!({"description": "A pull quote"})).await;
    assert_eq!(updated.body["description"], "A pull quote");

    let in_use = app.delete("/api/v1/section-templates/hero").await;
    assert_status!(in_use, 409);
    assert!(in_use.error().contains("used by"), "{}", in_use.error());
    assert_status!(app.delete("/api/v1/section-templates/quote").await, 200);
    assert_status!(app.get("/api/v1/section-templates/quote").await, 404);
}

#[tokio::test]
async fn collections_and_entries_crud() {
    let app = TestApp::new().await;
    let blog = app.get("/api/v1/collections/blog").await;
    assert_eq!(blog.body["kind"], "posts");

    let published = app.get("/api/v1/collections/blog/entries?status=published").await;
    assert_eq!(published.body["count"], 3);
    let drafts = app.get("/api/v1/collections/blog/entries?status=draft").await;
    assert_eq!(drafts.body["count"], 1);
    let guides = app.get("/api/v1/collections/blog/entries?category=Guides").await;
    assert_eq!(guides.body["count"], 2);
    let tagged = app.get("/api/v1/collections/blog/entries?tag=mcp").await;
    assert_eq!(tagged.body["items"][0]["slug"], "mcp-in-five-minutes");

    let created = app
        .post(
            "/api/v1/collections/blog/entries",
            json!({"slug": "new-post", "title": "New", "content": {"body": "Hello"}, "tags": ["a"]}),
        )
        .await;
    assert_status!(created, 201);
    assert_eq!(created.body["status"], "draft");
    assert!(created.body["publishedAt"].is_null());
    let id = created.body["id"].as_str().unwrap().to_string();

    let no_body = app.post("/api/v1/collections/blog/entries", json!({"slug": "empty", "title": "Empty"})).await;
    assert_status!(no_body, 422);
    assert_eq!(no_body.body["error"], "content.body: required");

    let dup = app
        .post(
            "/api/v1/collections/blog/entries",
            json!({"slug": "new-post", "title": "Again", "content": {"body": "x"}}),
        )
        .await;
    assert_status!(dup, 409);

    let publish = app
        .patch(
            &format!("/api/v1/entries/{id}"),
            json!({"status": "published", "content": {"cover": "/uploads/demo/hero-dawn.png"}}),
        )
        .await;
    assert_status!(publish, 200);
    assert!(publish.body["publishedAt"].is_string());
    assert_eq!(publish.body["content"]["body"], "Hello");

    let bad_cover =
        app.patch(&format!("/api/v1/entries/{id}"), json!({"featuredImage": "http://x.example/a.png"})).await;
    assert_status!(bad_cover, 422);
    assert_eq!(bad_cover.body["field"], "featuredImage");

    let coll = app
        .post("/api/v1/collections", json!({"slug": "faqs", "name": "FAQs", "kind": "entries", "fields": [{"name": "answer", "kind": "markdown", "required": true}]}))
        .await;
    assert_status!(coll, 201);
    let entry = app
        .post(
            "/api/v1/collections/faqs/entries",
            json!({"slug": "q1", "title": "Why?", "content": {"answer": "Because"}}),
        )
        .await;
    assert_status!(entry, 201);
    let renamed = app.patch("/api/v1/collections/faqs", json!({"name": "Questions"})).await;
    assert_eq!(renamed.body["name"], "Questions");
    let archived = app.delete("/api/v1/collections/faqs").await;
    assert_status!(archived, 200);
    assert_eq!(archived.body["items"].as_array().unwrap().len(), 2, "the collection took its entry along");
    assert_status!(app.get(&format!("/api/v1/entries/{}", entry.body["id"].as_str().unwrap())).await, 404);

    assert_status!(app.delete(&format!("/api/v1/entries/{id}")).await, 200);
    assert_status!(app.get(&format!("/api/v1/entries/{id}")).await, 404);
}

#[tokio::test]
async fn images_crud() {
    let app = TestApp::new().await;
    let list = app.get("/api/v1/images").await;
    assert_eq!(list.body["count"], 4);
    assert!(list.body["items"][0]["contentHash"].as_str().unwrap().len() == 64);

    let remote = app.post("/api/v1/images", json!({"url": "https://example.com/a.png"})).await;
    assert_status!(remote, 422);
    assert_eq!(
        remote.body["error"],
        "url: \"https://example.com/a.png\" is not the relative /uploads/... URL of an upload"
    );

    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(quire_media::samples::png(5, 4));
    let created = app.post("/api/v1/images", json!({"data": data, "filename": "copy.png", "alt": "Copy"})).await;
    assert_status!(created, 202);
    assert_eq!(created.body["mime"], "image/png");
    assert_eq!(created.body["status"], "processing");
    let id = created.body["id"].as_str().unwrap().to_string();
    let updated = app.patch(&format!("/api/v1/images/{id}"), json!({"alt": null, "tags": ["sky"]})).await;
    assert!(updated.body["alt"].is_null());
    assert_eq!(updated.body["tags"], json!(["sky"]));
    assert_status!(app.delete(&format!("/api/v1/images/{id}")).await, 200);
    assert_status!(app.get(&format!("/api/v1/images/{id}")).await, 404);

    // the seeded files are served
    let file = app.send_raw("GET", &format!("/uploads/{}/hero-dawn.png", app.scope.site_id), None, None, &[]).await;
    assert_status!(file, 200);
}

#[tokio::test]
async fn navigation_crud_and_target_checks() {
    let app = TestApp::new().await;
    let navs = app.get("/api/v1/navigations").await;
    let keys: Vec<&str> = navs.body["items"].as_array().unwrap().iter().map(|n| n["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["footer", "header"]);

    let missing = app
        .post(
            "/api/v1/navigations/header/items",
            json!({"label": "Ghost", "targetType": "page", "targetId": "no-such-page"}),
        )
        .await;
    assert_status!(missing, 422);
    assert_eq!(missing.body["error"], "targetId: page no-such-page does not exist");

    let no_url = app.post("/api/v1/navigations/header/items", json!({"label": "Docs", "targetType": "url"})).await;
    assert_status!(no_url, 422);
    assert_eq!(no_url.body["error"], "url: required when targetType is url");

    let js = app
        .post(
            "/api/v1/navigations/header/items",
            json!({"label": "x", "targetType": "url", "url": "javascript:alert(1)"}),
        )
        .await;
    assert_status!(js, 422);

    let bad_type = app.post("/api/v1/navigations/header/items", json!({"label": "x", "targetType": "link"})).await;
    assert_status!(bad_type, 400);
    assert_eq!(bad_type.body["field"], "targetType");

    let nav = app.post("/api/v1/navigations", json!({"key": "sidebar", "name": "Sidebar", "maxItems": 1})).await;
    assert_status!(nav, 201);
    let item = app
        .post(
            "/api/v1/navigations/sidebar/items",
            json!({"label": "Docs", "targetType": "url", "url": "https://docs.example"}),
        )
        .await;
    assert_status!(item, 201);
    let full =
        app.post("/api/v1/navigations/sidebar/items", json!({"label": "More", "targetType": "placeholder"})).await;
    assert_status!(full, 409);
    let item_id = item.body["id"].as_str().unwrap().to_string();
    let child = app
        .post(
            "/api/v1/navigations/sidebar/items",
            json!({"label": "API", "targetType": "url", "url": "/api/docs", "parentId": item_id}),
        )
        .await;
    assert_status!(child, 201);
    let promote = app
        .patch(&format!("/api/v1/nav-items/{}", child.body["id"].as_str().unwrap()), json!({"parentId": null}))
        .await;
    assert_status!(promote, 409);
    assert!(promote.error().contains("at most 1 top-level items"), "{}", promote.error());

    let hidden = app.patch(&format!("/api/v1/nav-items/{item_id}"), json!({"visible": false})).await;
    assert_eq!(hidden.body["visible"], false);
    let items = app.get("/api/v1/navigations/sidebar/items").await;
    assert_eq!(items.body["count"], 2);
    let draft = app.send("GET", "/api/v1/delivery/navigations/sidebar", None, None).await;
    assert_status!(draft, 404);
    let published = app.post("/api/v1/navigations/sidebar/publish", json!({})).await;
    assert_status!(published, 200);
    assert_eq!(published.body, json!({"published": true, "changed": false}));
    let delivered = app.send("GET", "/api/v1/delivery/navigations/sidebar", None, None).await;
    assert_eq!(delivered.body["items"], json!([]), "an invisible item hides its children too");

    let renamed = app.patch("/api/v1/navigations/sidebar", json!({"name": "Side"})).await;
    assert_eq!(renamed.body["name"], "Side");
    let archived = app.delete(&format!("/api/v1/nav-items/{item_id}")).await;
    assert_eq!(archived.body["items"].as_array().unwrap().len(), 2);
    assert_status!(app.delete("/api/v1/navigations/sidebar").await, 200);
    assert_status!(app.get("/api/v1/navigations/sidebar").await, 404);
}

#[tokio::test]
async fn a_section_moves_to_a_place_in_one_call_and_a_place_beside_what_is_not_a_sibling_is_refused() {
    let app = TestApp::new().await;
    let home = app.page_id("home").await;
    let pricing = app.page_id("pricing").await;
    let before = sections_of(&app, home.clone()).await;
    let names: Vec<&str> = before.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(names, ["hero", "feature-grid", "testimonials", "cta"]);

    let (cta, hero) = (&before[3].0, &before[0].0);
    let moved = app.post(&format!("/api/v1/sections/{cta}/move"), json!({ "before": hero })).await;
    assert_status!(moved, 200);
    assert_eq!(moved.body["id"], cta.as_str());
    let moved = app.post(&format!("/api/v1/sections/{cta}/move"), json!({ "position": 2 })).await;
    assert_status!(moved, 200);
    let after: Vec<String> = sections_of(&app, home.clone()).await.into_iter().map(|(_, k)| k).collect();
    assert_eq!(after, ["hero", "feature-grid", "cta", "testimonials"]);

    // A section of another page, an unknown id, a place past the end: 422 naming the field; nothing moves.
    let foreign = sections_of(&app, pricing).await.remove(0).0;
    let refusals = [
        (json!({ "before": foreign }), "before"),
        (json!({ "after": "01900000-0000-7000-8000-000000000000" }), "after"),
        (json!({ "position": 4 }), "position"),
    ];
    for (body, field) in refusals {
        let refused = app.post(&format!("/api/v1/sections/{cta}/move"), body.clone()).await;
        assert_status!(refused, 422);
        assert_eq!(refused.body["field"], field, "{body}: {}", refused.body);
        assert!(!refused.error().is_empty() && !refused.code().is_empty(), "{}", refused.body);
    }
    let gone = app.post("/api/v1/sections/01900000-0000-7000-8000-000000000000/move", json!({ "position": 0 })).await;
    assert_status!(gone, 404);
    assert!(!gone.error().is_empty() && !gone.code().is_empty(), "{}", gone.body);
    let both = app.post(&format!("/api/v1/sections/{cta}/move"), json!({ "after": hero, "before": hero })).await;
    assert_status!(both, 422);
    assert!(both.error().contains("exactly one of position, before and after"), "{}", both.error());
    let typo = app.post(&format!("/api/v1/sections/{cta}/move"), json!({ "positon": 1 })).await;
    assert_status!(typo, 400);
    let unchanged: Vec<String> = sections_of(&app, home).await.into_iter().map(|(_, k)| k).collect();
    assert_eq!(unchanged, after);
}

/// A page's sections as (id, template key), in order.
async fn sections_of(app: &TestApp, page: String) -> Vec<(String, String)> {
    let items = app.get(&format!("/api/v1/pages/{page}/sections")).await.body["items"].as_array().unwrap().clone();
    items
        .iter()
        .map(|s| (s["id"].as_str().unwrap().to_string(), s["templateKey"].as_str().unwrap().to_string()))
        .collect()
}

#[tokio::test]
async fn lists_filter_by_each_kinds_unique_key() {
    let app = TestApp::new().await;
    for (list, key, found) in [
        ("/api/v1/pages?slug=about", "slug", "about"),
        ("/api/v1/collections?slug=blog", "slug", "blog"),
        ("/api/v1/collections/blog/entries?slug=hello-quire", "slug", "hello-quire"),
        ("/api/v1/section-templates?key=hero", "key", "hero"),
        ("/api/v1/navigations?key=header", "key", "header"),
    ] {
        let r = app.get(list).await;
        assert_eq!(r.status, 200, "{list}: {}", r.body);
        let items = r.body["items"].as_array().unwrap();
        assert_eq!(items.len(), 1, "{list}: {}", r.body);
        assert_eq!(items[0][key], found, "{list}");
        assert!(r.body["nextCursor"].is_null(), "{list}");
        // A key no record has: an empty list, not an error.
        let none = app.get(&list.replace(found, "no-such-key")).await;
        assert_eq!((none.status.as_u16(), none.body["items"].as_array().map(Vec::len)), (200, Some(0)), "{list}");
    }
    // A template's id is not its key: the filter matches keys alone.
    let hero = app.get("/api/v1/section-templates/hero").await.body["id"].as_str().unwrap().to_string();
    let by_id = app.get(&format!("/api/v1/section-templates?key={hero}")).await;
    assert_eq!(by_id.body["items"], json!([]), "{}", by_id.body);
    // The filter combines with the others.
    let draft = app.get("/api/v1/pages?slug=about&status=draft").await;
    assert_eq!(draft.body["items"], json!([]), "{}", draft.body);
}
