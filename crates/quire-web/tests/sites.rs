//! The Sites screen: the instance's administrator (the first person made
//! on it) makes, renames, archives after a confirmation and restores sites;
//! a site's other administrators are neither offered nor allowed it.

mod common;

use axum::http::StatusCode;
use common::site;
use quire_core::access::Group;

#[tokio::test]
async fn the_instances_administrator_makes_renames_archives_and_restores_sites() {
    let site = site().await;
    let first = site.browser("owner@example.org", Group::Admin).await;
    let (_, home) = site.get(&first, "/").await;
    assert!(home.contains(r#"<a href="/sites">Sites</a>"#), "{home}");
    let (status, list) = site.get(&first, "/sites").await;
    assert_eq!(status, StatusCode::OK);
    assert!(list.contains("<code>demo</code> <span class=\"badge\">yours</span>"), "{list}");
    assert!(!list.contains("Archive Quire"), "the site one works in is not offered for archiving: {list}");

    let ((status, refused), _) = site.post(&first, "/sites", &[("slug", "Not a slug"), ("name", "Shop")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert!(refused.contains(r#"value="Not a slug""#), "{refused}");
    assert!(refused.contains(r#"class="error""#), "{refused}");

    let ((status, _), to) =
        site.post(&first, "/sites", &[("slug", "shop"), ("name", "The shop"), ("start", "empty")]).await;
    assert_eq!((status, to.as_str()), (StatusCode::SEE_OTHER, "/sites?done=created"));
    let shop = site.store.site("shop").await.unwrap();
    assert_eq!(shop.environments, ["production", "staging"]);
    let (_, list) = site.get(&first, &to).await;
    assert!(list.contains(r#"value="The shop""#), "{list}");

    site.post(&first, &format!("/sites/{}", shop.id), &[("name", "Shop")]).await;
    assert_eq!(site.store.site("shop").await.unwrap().name, "Shop");

    let (status, question) = site.get(&first, &format!("/sites/{}/archive", shop.id)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(question.contains("Archive the site Shop?"), "{question}");
    assert!(site.store.site("shop").await.unwrap().archived_at.is_none(), "asking changed nothing");
    let ((status, _), _) = site.post(&first, &format!("/sites/{}/archive", shop.id), &[]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert!(site.store.any_site("shop").await.unwrap().archived_at.is_some());
    let (_, list) = site.get(&first, "/sites").await;
    assert!(list.contains(r#"aria-label="Restore Shop""#), "{list}");
    site.post(&first, &format!("/sites/{}/restore", shop.id), &[]).await;
    assert!(site.store.site("shop").await.unwrap().archived_at.is_none());

    // A copy of the demo: offered in the form, made with its pages.
    assert!(list.contains(r#"<option value="copy:demo">as a copy of"#), "{list}");
    let ((status, _), _) =
        site.post(&first, "/sites", &[("slug", "twin"), ("name", "Twin"), ("start", "copy:demo")]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let twin = site.store.site("twin").await.unwrap();
    let pages = |scope: quire_store::Scope| {
        let store = site.store.clone();
        async move { store.pages(&scope, &Default::default(), 500, None).await.unwrap().items.len() }
    };
    let copied = pages(quire_store::Scope::new(&twin.id, "production")).await;
    assert!(copied > 0);
    assert_eq!(copied, pages(site.scope.clone()).await);

    // The site one works in is refused, with the reason.
    let ((status, body), _) = site.post(&first, &format!("/sites/{}/archive", site.scope.site_id), &[]).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body.contains("is the one this credential acts in"), "{body}");
}

#[tokio::test]
async fn a_sites_other_administrators_and_editors_are_neither_offered_nor_allowed_sites() {
    let site = site().await;
    // The first person is an editor: not the instance's administrator, nor is anyone after.
    let editor = site.browser("ed@example.org", Group::Editor).await;
    let admin = site.browser("admin@example.org", Group::Admin).await;
    for who in [&editor, &admin] {
        let (_, home) = site.get(who, "/").await;
        assert!(!home.contains(r#"href="/sites""#), "{home}");
        let (status, _) = site.get(who, "/sites").await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let ((status, _), _) = site.post(who, "/sites", &[("slug", "shop"), ("name", "Shop")]).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }
    assert!(site.store.site("shop").await.is_err(), "nothing was made");
}
