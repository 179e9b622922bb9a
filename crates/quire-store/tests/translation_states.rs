//! Where a document stands with the site's locales (`Store::translations`):
//! the locales it lacks, those it has and whether each went stale once
//! its default values changed; a document no longer live is not found
//! whether or not it has translations, and a kind without translations is
//! refused.

use quire_core::input::{NewPage, NewSection, PagePatch};
use quire_core::model::{ChangeContext, EntityKind, SiteLocale};
use quire_store::StoreError;
use serde_json::json;

fn locale(tag: &str) -> SiteLocale {
    SiteLocale { tag: tag.into(), fallback: None, is_default: tag == "en" }
}

#[tokio::test]
async fn a_documents_translations_say_what_is_missing_and_what_went_stale() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let ctx = ChangeContext::system();
    store.set_site_locales(&scope.site_id, vec![locale("en"), locale("de"), locale("fr")]).await.unwrap();

    let new =
        |name: &str, slug: &str| -> NewPage { serde_json::from_value(json!({"name": name, "slug": slug})).unwrap() };
    let page = store.create_page(&ctx, &scope, new("Homes", "homes")).await.unwrap();
    let section: NewSection =
        serde_json::from_value(json!({"templateKey": "text", "content": {"body": "Our houses."}})).unwrap();
    let section = store.create_section(&ctx, &scope, &page.id, section).await.unwrap();

    let states = store.translations(&scope, EntityKind::Page, &page.id).await.unwrap();
    assert_eq!(states.default_locale, "en");
    assert!(states.translations.is_empty());
    assert_eq!(states.missing, ["de", "fr"]);
    assert!(states.stale.is_empty());

    let german = json!({"name": "Wohnen", "slug": "wohnen", "sections": { section.id.clone(): { "body": "Häuser." } }});
    store.put_translation(&ctx, &scope, EntityKind::Page, &page.id, "de", german, false).await.unwrap();
    let states = store.translations(&scope, EntityKind::Page, &page.id).await.unwrap();
    assert_eq!(states.translations.len(), 1);
    assert_eq!(states.translations[0].translation.locale, "de");
    assert!(!states.translations[0].stale && !states.translations[0].published);
    assert_eq!(states.missing, ["fr"]);
    assert!(states.stale.is_empty(), "written from the values the page has");

    let renamed = PagePatch { name: Some("Our homes".into()), ..Default::default() };
    store.update_page(&ctx, &scope, &page.id, renamed).await.unwrap();
    let states = store.translations(&scope, EntityKind::Page, &page.id).await.unwrap();
    assert_eq!(states.stale, ["de"], "the default's name changed after the German was written");
    assert!(states.translations[0].stale);

    // Archived, with a translation and without one: not found either way.
    let bare = store.create_page(&ctx, &scope, new("Bare", "bare")).await.unwrap();
    store.archive(&ctx, &scope, EntityKind::Page, &[page.id.clone(), bare.id.clone()]).await.unwrap();
    for id in [&page.id, &bare.id] {
        let err = store.translations(&scope, EntityKind::Page, id).await.unwrap_err();
        assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");
    }
    let err = store.translations(&scope, EntityKind::Page, "no-such-page").await.unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");

    let err = store.translations(&scope, EntityKind::Image, &section.id).await.unwrap_err();
    assert!(err.to_string().contains("has no translations"), "{err}");
}
