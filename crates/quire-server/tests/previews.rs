//! Previews outside the back-office: a site's preview URL (its own front
//! end), short-lived preview links, and delivery showing drafts to a link
//! and to nobody else.

mod common;

use common::TestApp;
use serde_json::json;

#[tokio::test]
async fn a_preview_link_shows_the_draft_on_the_sites_front_end_or_through_delivery() {
    let app = TestApp::new().await;
    let about = app.page_id("about").await;
    app.patch(&format!("/api/v1/pages/{about}"), json!({"name": "About, drafted"})).await;

    // The delivery API is the fallback.
    let link = app.post("/api/v1/preview-links", json!({"entity": "page", "id": "about"})).await;
    assert_eq!(link.status, 201, "{}", link.body);
    let (url, token) = (link.body["url"].as_str().unwrap(), link.body["token"].as_str().unwrap());
    assert_eq!(url, format!("/api/v1/delivery/pages/about?previewToken={token}"));
    assert!(link.body["expiresAt"].is_string());
    let draft = app.send("GET", url, None, None).await;
    assert_eq!((draft.status.as_u16(), draft.body["name"].as_str()), (200, Some("About, drafted")), "{}", draft.body);
    let public = app.send("GET", "/api/v1/delivery/pages/about", None, None).await;
    assert_eq!(public.body["name"], "About", "without the link, what is published");
    let forged = app.send("GET", "/api/v1/delivery/pages/about?previewToken=qp_nope", None, None).await;
    assert_eq!(forged.status, 401, "{}", forged.body);
    let menu = app.send("GET", &format!("/api/v1/delivery/navigations/header?previewToken={token}"), None, None).await;
    assert_eq!(menu.status, 200, "the link reads the site's other drafts too: {}", menu.body);

    // The site's own front end, set by an admin.
    let template = "https://www.example.com/{kind}/{slug}?preview={token}";
    let denied = app.send("PATCH", "/api/v1/site", Some(&app.editor), Some(json!({"previewUrl": template}))).await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    let bad = app.send("PATCH", "/api/v1/site", Some(&app.admin), Some(json!({"previewUrl": "ftp://x/{slug}"}))).await;
    assert_eq!((bad.status.as_u16(), bad.body["field"].as_str()), (422, Some("previewUrl")), "{}", bad.body);
    let set = app.send("PATCH", "/api/v1/site", Some(&app.admin), Some(json!({"previewUrl": template}))).await;
    assert_eq!(set.status, 200, "{}", set.body);
    assert_eq!(app.get("/api/v1/site").await.body["previewUrl"], template);
    let link = app.post("/api/v1/preview-links", json!({"entity": "page", "id": about})).await;
    let token = link.body["token"].as_str().unwrap();
    assert_eq!(link.body["url"], format!("https://www.example.com/page/about?preview={token}"));

    // A post's link names its collection.
    let post = app.store.entry_by_slug(&app.scope, "blog", "hello-quire").await.unwrap();
    let set = app
        .send(
            "PATCH",
            "/api/v1/site",
            Some(&app.admin),
            Some(json!({"previewUrl": "https://www.example.com/{collection}/{slug}?t={token}"})),
        )
        .await;
    assert_eq!(set.status, 200, "{}", set.body);
    let link = app.post("/api/v1/preview-links", json!({"entity": "entry", "id": post.id})).await;
    let token = link.body["token"].as_str().unwrap();
    assert_eq!(link.body["url"], format!("https://www.example.com/blog/hello-quire?t={token}"));
    let cleared = app.send("PATCH", "/api/v1/site", Some(&app.admin), Some(json!({"previewUrl": null}))).await;
    assert!(cleared.body["previewUrl"].is_null(), "{}", cleared.body);
    let missing = app.post("/api/v1/preview-links", json!({"entity": "page", "id": "nope"})).await;
    assert_eq!(missing.status, 404, "{}", missing.body);
}

/// A preview link ends with the access of whoever made it: a token revoked
/// since makes its links answer 401, as an expired one does.
#[tokio::test]
async fn a_preview_link_ends_when_its_makers_token_is_revoked() {
    let app = TestApp::new().await;
    let made = app.post("/api/v1/tokens", json!({"name": "previewer", "group": "editor"})).await;
    assert_eq!(made.status, 201, "{}", made.body);
    let (token_id, secret) = (made.body["id"].as_str().unwrap(), made.body["secret"].as_str().unwrap());
    let body = json!({"entity": "page", "id": "about"});
    let link = app.send("POST", "/api/v1/preview-links", Some(secret), Some(body)).await;
    assert_eq!(link.status, 201, "{}", link.body);
    let url = link.body["url"].as_str().unwrap().to_string();
    assert_eq!(app.send("GET", &url, None, None).await.status, 200, "the link works");
    assert_eq!(app.delete(&format!("/api/v1/tokens/{token_id}")).await.status, 200);
    let ended = app.send("GET", &url, None, None).await;
    assert_eq!(ended.status, 401, "{}", ended.body);
    assert!(ended.body["error"].as_str().unwrap().contains("access ended"), "{}", ended.body);
}
