//! Previews from the back-office, without the browser's script: the
//! editors' “Preview the draft” goes through a route that makes a fresh
//! preview link and sends the browser on to it (the site's own front end
//! when it has a preview address, else the delivery API); administrators
//! set that address on the Site screen, a refusal beside the field; no one
//! else may.

mod common;

use axum::http::StatusCode;
use common::site;
use quire_core::access::Group;

#[tokio::test]
async fn the_preview_link_goes_to_the_sites_front_end_once_an_administrator_sets_it() {
    let site = site().await;
    let admin = site.browser("ada@example.org", Group::Admin).await;
    let about = site.page_id("about").await;
    let preview_url = || async { site.store.site(&site.scope.site_id).await.unwrap().preview_url };

    let (status, editor) = site.get(&admin, &format!("/pages/{about}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(editor.contains(&format!(r#"<a href="/pages/{about}/preview" target="_blank" rel="noopener">Preview the draft</a> (as the delivery API would serve it"#)), "{editor}");

    // Without a front end: delivery, with a preview token.
    let ((status, _), to) = site.send(site.request_get(&admin, &format!("/pages/{about}/preview"))).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let token = to.strip_prefix("/api/v1/delivery/pages/about?previewToken=").unwrap_or_else(|| panic!("{to}"));
    assert!(token.starts_with("qp_"), "{to}");

    let (status, screen) = site.get(&admin, "/site").await;
    assert_eq!(status, StatusCode::OK);
    for placeholder in ["{slug}", "{collection}", "{kind}", "{id}", "{token}"] {
        assert!(screen.contains(&format!("<dt><code>{placeholder}</code></dt>")), "{placeholder} is explained");
    }

    let ((status, body), _) = site.post(&admin, "/site", &[("preview_url", "/preview/{slug}")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.contains(r#"<p class="error" id="e-preview-url">"#), "the refusal is beside the field: {body}");
    assert!(body.contains(r#"value="/preview/{slug}""#), "what was typed is kept");
    assert_eq!(preview_url().await, None, "nothing was saved");

    let template = "https://www.example.com/{kind}/{slug}?preview={token}";
    let ((status, _), to) = site.post(&admin, "/site", &[("preview_url", template)]).await;
    assert_eq!((status, to.as_str()), (StatusCode::SEE_OTHER, "/site?saved=1"));
    assert_eq!(preview_url().await.as_deref(), Some(template));
    let (_, editor) = site.get(&admin, &format!("/pages/{about}")).await;
    assert!(editor.contains("(on the site's own front end, as it would be once published)"), "{editor}");
    let ((_, _), first) = site.send(site.request_get(&admin, &format!("/pages/{about}/preview"))).await;
    let ((_, _), second) = site.send(site.request_get(&admin, &format!("/pages/{about}/preview"))).await;
    assert!(first.starts_with("https://www.example.com/page/about?preview=qp_"), "{first}");
    assert_ne!(first, second, "each preview makes a link of its own");

    // An entry's preview names its collection; cleared, it is delivery's.
    let post = site.store.entry_by_slug(&site.scope, "blog", "hello-quire").await.unwrap();
    let ((_, _), to) = site.send(site.request_get(&admin, &format!("/entries/{}/preview", post.id))).await;
    assert!(to.starts_with("https://www.example.com/entry/hello-quire?preview=qp_"), "{to}");
    let ((status, _), _) = site.post(&admin, "/site", &[("preview_url", "")]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(preview_url().await, None);
    let ((_, _), to) = site.send(site.request_get(&admin, &format!("/entries/{}/preview", post.id))).await;
    assert!(to.starts_with("/api/v1/delivery/collections/blog/entries?previewToken=qp_"), "{to}");
}

#[tokio::test]
async fn only_administrators_open_the_site_screen_or_change_where_previews_go() {
    let site = site().await;
    let editor = site.browser("ed@example.org", Group::Editor).await;
    let (status, page) = site.get(&editor, "/pages").await;
    assert_eq!(status, StatusCode::OK);
    assert!(!page.contains(r#"<a href="/site""#), "the screen is not offered");
    assert_eq!(site.get(&editor, "/site").await.0, StatusCode::FORBIDDEN);
    let ((status, _), _) = site.post(&editor, "/site", &[("preview_url", "https://evil.example/{token}")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(site.store.site(&site.scope.site_id).await.unwrap().preview_url, None);
    // Their preview still works.
    let about = site.page_id("about").await;
    let ((status, _), to) = site.send(site.request_get(&editor, &format!("/pages/{about}/preview"))).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert!(to.starts_with("/api/v1/delivery/pages/about?previewToken=qp_"), "{to}");
}
