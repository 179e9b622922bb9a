//! The REST entry list and the delivery list answer, byte for byte, the
//! document a `ListResponse` of `EntryView`s serializes to, page after
//! page, with the headers of every JSON answer; who may read them, and
//! what they refuse, are unchanged.

mod common;

use axum::body::Body;
use axum::http::Request;
use common::TestApp;
use quire_core::model::EntryStatus;
use quire_server::routes::ListResponse;
use quire_store::{EntryFilter, Version};
use serde_json::json;

/// A GET as the holder of `token` (none: public), answered as bytes.
async fn get(app: &TestApp, path: &str, token: Option<&str>) -> common::Raw {
    let mut req = Request::builder().uri(path);
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    app.raw(req.body(Body::empty()).unwrap()).await
}

/// Posts with every field filled in some and left out in others, text
/// that needs escaping, and drafts among them.
async fn posts(app: &TestApp) {
    for i in 0..5 {
        let full = i % 2 == 0;
        let post = app
            .post(
                "/api/v1/collections/blog/entries",
                json!({
                    "slug": format!("list-post-{i}"),
                    "title": format!("List post {i}: \"quoted\" \\ é 🎉"),
                    "content": {"body": format!("# Post {i}\n\nLine \"two\"\r\n</script>\t 日本")},
                    "status": if i == 3 { "draft" } else { "published" },
                    "author": full.then_some("Ana"),
                    "category": full.then_some("Guides"),
                    "tags": if full { json!(["mcp", "a \"b\""]) } else { json!([]) },
                    "excerpt": full.then_some("Short\nsummary"),
                    "featuredImage": full.then_some(format!("/uploads/post-{i}.png")),
                }),
            )
            .await;
        assert_eq!(post.status, 201, "{}", post.body);
    }
}

#[tokio::test]
async fn the_rest_list_answers_what_its_entry_views_serialize_to() {
    let app = TestApp::new().await;
    posts(&app).await;
    for (query, filter) in [
        ("", EntryFilter::default()),
        ("status=published&", EntryFilter { status: Some(EntryStatus::Published), ..Default::default() }),
        ("status=draft&", EntryFilter { status: Some(EntryStatus::Draft), ..Default::default() }),
        ("category=Guides&", EntryFilter { category: Some("Guides".into()), ..Default::default() }),
        ("tag=mcp&", EntryFilter { tag: Some("mcp".into()), ..Default::default() }),
        ("slug=list-post-2&", EntryFilter { slug: Some("list-post-2".into()), ..Default::default() }),
    ] {
        let (mut cursor, mut pages) = (None::<String>, 0);
        loop {
            let after = cursor.as_deref().map(|c| format!("&cursor={c}")).unwrap_or_default();
            let answer =
                get(&app, &format!("/api/v1/collections/blog/entries?{query}limit=2{after}"), Some(&app.admin)).await;
            assert_eq!(answer.status, 200, "{query}");
            assert_eq!(answer.header("content-type"), "application/json");
            let typed = app.store.entry_views(&app.scope, "blog", &filter, 2, cursor.as_deref()).await.unwrap();
            let expected = serde_json::to_vec(&ListResponse::from(typed)).unwrap();
            assert_eq!(String::from_utf8(answer.bytes.clone()).unwrap(), String::from_utf8(expected).unwrap());
            pages += 1;
            cursor = answer.json()["nextCursor"].as_str().map(str::to_string);
            if cursor.is_none() {
                break;
            }
        }
        assert!(pages >= 1);
    }
    // Each item holds what the entry itself reads as.
    let list = app.get("/api/v1/collections/blog/entries?limit=100").await;
    for item in list.body["items"].as_array().unwrap() {
        let entry = app.get(&format!("/api/v1/entries/{}", item["id"].as_str().unwrap())).await;
        for (field, value) in item.as_object().unwrap() {
            assert_eq!(&entry.body[field], value, "{field}");
        }
        assert_eq!(item.as_object().unwrap().len(), 15);
    }
}

#[tokio::test]
async fn the_delivery_list_answers_the_published_copies_as_they_serialize() {
    let app = TestApp::new().await;
    posts(&app).await;
    let (mut cursor, mut seen) = (None::<String>, 0);
    loop {
        let after = cursor.as_deref().map(|c| format!("&cursor={c}")).unwrap_or_default();
        let answer = get(&app, &format!("/api/v1/delivery/collections/blog/entries?limit=3{after}"), None).await;
        assert_eq!(answer.status, 200);
        assert_eq!(answer.header("content-type"), "application/json");
        assert_eq!(answer.header("vary"), "Accept-Language");
        let body = answer.json();
        let items = body["items"].as_array().unwrap();
        assert!(items.iter().all(|p| p["status"] == "published" && p["slug"] != "list-post-3"), "{body}");
        // The same bytes as the published copies' entry views.
        let published = EntryFilter { status: Some(EntryStatus::Published), ..Default::default() };
        let typed = app.store.entry_views(&app.scope, "blog", &published, 3, cursor.as_deref()).await.unwrap();
        let expected = serde_json::to_vec(&ListResponse::from(typed)).unwrap();
        assert_eq!(String::from_utf8(answer.bytes.clone()).unwrap(), String::from_utf8(expected).unwrap());
        seen += items.len();
        cursor = body["nextCursor"].as_str().map(str::to_string);
        if cursor.is_none() {
            break;
        }
    }
    // The demo's three published posts and four of the five new ones.
    assert_eq!(seen, 7);
    // A category narrows it; a preview shows the draft too.
    let guides = get(&app, "/api/v1/delivery/collections/blog/entries?category=Guides", None).await.json();
    assert!(guides["items"].as_array().unwrap().iter().all(|p| p["category"] == "Guides"));
    let preview = get(&app, "/api/v1/delivery/collections/blog/entries?preview=true&limit=100", Some(&app.admin)).await;
    let working = EntryFilter::default();
    let all = app.store.delivered_entry_views_json(&app.scope, "blog", &working, 100, None, Version::Working).await;
    assert_eq!(preview.json()["count"], all.unwrap().items.len());
    assert!(preview.json()["items"].as_array().unwrap().iter().any(|p| p["slug"] == "list-post-3"));
}

#[tokio::test]
async fn lists_refuse_as_before() {
    let app = TestApp::new().await;
    // No credential, an unknown collection, a bad limit or cursor: the one error shape.
    let anonymous = get(&app, "/api/v1/collections/blog/entries", None).await;
    assert_eq!(anonymous.status, 401);
    for (path, status) in [
        ("/api/v1/collections/nowhere/entries", 404),
        ("/api/v1/collections/blog/entries?limit=0", 400),
        ("/api/v1/collections/blog/entries?cursor=xyz", 400),
        ("/api/v1/delivery/collections/nowhere/entries", 404),
        ("/api/v1/delivery/collections/blog/entries?limit=101", 400),
    ] {
        let token = (!path.contains("/delivery/")).then_some(app.admin.as_str());
        let answer = get(&app, path, token).await;
        assert_eq!(answer.status, status, "{path}");
        assert!(answer.json()["error"].is_string(), "{path}: {}", String::from_utf8_lossy(&answer.bytes));
    }
    // A token of another site reads its own site's lists only.
    let other = get(&app, "/api/v1/collections/blog/entries", Some(&app.other_admin)).await;
    let ours = get(&app, "/api/v1/collections/blog/entries", Some(&app.admin)).await;
    assert_ne!(other.json()["items"], ours.json()["items"]);
}
