//! The Webhooks screen as plain forms: a subscription made with its
//! events and kinds, its secret shown once and never again; a refused
//! address beside its input; the delivery log with its "send again"; a
//! confirmation before archiving; and nothing for anyone but the site's
//! administrators.

mod common;

use axum::http::StatusCode;
use common::site;
use quire_core::access::Group;
use quire_core::input::PagePatch;
use quire_core::model::ChangeContext;

#[tokio::test]
async fn a_subscription_shows_its_secret_once_logs_its_deliveries_and_sends_one_again() {
    let site = site().await;
    let admin = site.browser("admin@example.org", Group::Admin).await;

    let (_, empty) = site.get(&admin, "/webhooks").await;
    assert!(empty.contains("No subscriptions yet."), "{empty}");
    assert!(empty.contains(r#"value="published""#) && empty.contains(r#"value="release""#), "{empty}");

    let form = [
        ("url", "https://hooks.example.com/build"),
        ("env", "production"),
        ("events", "updated"),
        ("events", "published"),
        ("kinds", "page"),
        ("description", "Rebuild the site"),
    ];
    let ((status, made), _) = site.post(&admin, "/webhooks", &form).await;
    assert_eq!(status, StatusCode::OK, "{made}");
    let hooks = site.store.webhooks(&site.scope).await.unwrap();
    assert_eq!(hooks.len(), 1);
    let hook = &hooks[0];
    assert_eq!(
        (hook.events.clone(), hook.kinds.clone()),
        (vec!["updated".into(), "published".into()], vec!["page".into()])
    );
    assert_eq!(hook.env.as_deref(), Some("production"));
    let opening = r#"<code class="secret" id="new-secret">"#;
    let start = made.find(opening).expect("the secret is shown") + opening.len();
    let secret = &made[start..start + made[start..].find('<').unwrap()];
    assert!(secret.starts_with("whsec_"), "{secret}");
    assert!(made.contains("Rebuild the site"), "{made}");

    let (_, again) = site.get(&admin, "/webhooks").await;
    assert!(!again.contains(secret), "the secret is not shown again: {again}");
    let (_, one) = site.get(&admin, &format!("/webhooks/{}", hook.id)).await;
    assert!(!one.contains(secret));
    assert!(one.contains("Nothing sent yet."), "{one}");

    // A page changed: its delivery is in the log, and can be sent again.
    let about = site.page_id("about").await;
    let patch = PagePatch { name: Some("About the team".into()), ..Default::default() };
    site.store.update_page(&ChangeContext::system(), &site.scope, &about, patch).await.unwrap();
    let (_, log) = site.get(&admin, &format!("/webhooks/{}", hook.id)).await;
    assert!(log.contains("<td>page.updated</td>"), "{log}");
    assert!(log.contains("status-pending"), "{log}");
    let delivery = site.store.webhook_deliveries(&site.scope, &hook.id, 10).await.unwrap().remove(0);
    let ((status, _), to) =
        site.post(&admin, &format!("/webhooks/{}/deliveries/{}/again", hook.id, delivery.id), &[]).await;
    assert_eq!((status, to), (StatusCode::SEE_OTHER, format!("/webhooks/{}?done=sent", hook.id)));

    // A new secret is shown once too.
    let ((status, rotated), _) =
        site.post(&admin, &format!("/webhooks/{}/secrets", hook.id), &[("action", "rotate")]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(rotated.contains(r#"id="new-secret">whsec_"#) && !rotated.contains(secret), "{rotated}");
    assert!(rotated.contains("Retire the older secrets"), "{rotated}");

    // Archiving asks first.
    let (status, question) = site.get(&admin, &format!("/webhooks/{}/archive", hook.id)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(question.contains("Stop sending to https://hooks.example.com/build?"), "{question}");
    assert_eq!(site.store.webhooks(&site.scope).await.unwrap().len(), 1);
    let ((status, _), to) = site.post(&admin, &format!("/webhooks/{}/archive", hook.id), &[]).await;
    assert_eq!((status, to.as_str()), (StatusCode::SEE_OTHER, "/webhooks?done=archived"));
    assert!(site.store.webhooks(&site.scope).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_refused_subscription_says_why_beside_its_input_and_keeps_what_was_typed() {
    let site = site().await;
    let admin = site.browser("admin@example.org", Group::Admin).await;
    let ((status, body), _) =
        site.post(&admin, "/webhooks", &[("url", "ftp://files.example.com/x"), ("events", "published")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.contains(r#"<p class="error" id="e-hook-url">"#), "{body}");
    assert!(body.contains(r#"value="ftp://files.example.com/x""#), "{body}");
    assert!(body.contains(r#"value="published" checked"#), "{body}");
    assert!(!body.contains("new-secret"), "{body}");
    assert!(site.store.webhooks(&site.scope).await.unwrap().is_empty());
}

#[tokio::test]
async fn only_the_sites_administrators_are_offered_or_allowed_webhooks() {
    let site = site().await;
    let admin = site.browser("admin@example.org", Group::Admin).await;
    let (_, home) = site.get(&admin, "/").await;
    assert!(home.contains(r#"<a href="/webhooks">Webhooks</a>"#), "{home}");
    for (email, group) in [("ed@example.org", Group::Editor), ("vi@example.org", Group::Viewer)] {
        let who = site.browser(email, group).await;
        let (_, home) = site.get(&who, "/").await;
        assert!(!home.contains(r#"href="/webhooks""#), "{group:?}: {home}");
        assert!(home.contains(r#"href="/environments""#), "{group:?} may read the environments: {home}");
        let (status, _) = site.get(&who, "/webhooks").await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let ((status, _), _) = site.post(&who, "/webhooks", &[("url", "https://hooks.example.com/x")]).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }
    assert!(site.store.webhooks(&site.scope).await.unwrap().is_empty());
}
