//! Full-text search in a locale: a translation is found by the words of
//! its own language, stemmed as that language stems them ("Haus" finds
//! "Häuser" in German, "cheval" finds "chevaux" in French), the records'
//! own English text by English stems, along a reader's chain of locales;
//! a translation's changed words are searched at once, its old ones no
//! longer; the same on SQLite and PostgreSQL.

use quire_core::input::{NewEntry, NewPage, NewSection};
use quire_core::model::{ChangeContext, EntityKind, SiteLocale};
use quire_store::{SearchFilter, Searched};
use serde_json::json;

fn locale(tag: &str, fallback: Option<&str>) -> SiteLocale {
    SiteLocale { tag: tag.into(), fallback: fallback.map(str::to_string), is_default: tag == "en" }
}

fn chain(tags: &[&str]) -> Vec<String> {
    tags.iter().map(|t| t.to_string()).collect()
}

#[tokio::test]
async fn a_translation_is_found_by_the_stems_of_its_own_language() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let ctx = ChangeContext::system();
    let all = SearchFilter::default();
    let mut locales = vec![locale("en", None)];
    for tag in ["de", "fr", "es", "it", "nl", "pt"] {
        locales.push(locale(tag, None));
    }
    locales.push(locale("de-AT", Some("de")));
    store.set_site_locales(&scope.site_id, locales).await.unwrap();

    // A page in English, translated into German.
    let page: NewPage = serde_json::from_value(json!({"name": "Homes", "slug": "homes"})).unwrap();
    let page = store.create_page(&ctx, &scope, page).await.unwrap();
    let section: NewSection =
        serde_json::from_value(json!({"templateKey": "text", "content": {"body": "Our houses stand by the sea."}}))
            .unwrap();
    let section = store.create_section(&ctx, &scope, &page.id, section).await.unwrap();
    let german =
        |body: &str| json!({"name": "Wohnen", "slug": "wohnen", "sections": { section.id.clone(): { "body": body } }});
    store
        .put_translation(&ctx, &scope, EntityKind::Page, &page.id, "de", german("Unsere Häuser stehen am Meer."), false)
        .await
        .unwrap();

    let pages = |query: &'static str, tags: &'static [&'static str]| {
        let (store, scope, all) = (&store, &scope, &all);
        async move { store.search_ids_in(scope, Searched::Page, query, all, 10, &chain(tags)).await.unwrap() }
    };
    assert!(pages("Haus", &["de", "en"]).await.contains(&page.id), "German stems: Haus finds Häuser");
    assert!(pages("Haus", &["de-AT", "de", "en"]).await.contains(&page.id), "through the fallback");
    assert!(!pages("Haus", &["en"]).await.contains(&page.id), "English stems do not make Häuser a Haus");
    assert!(!pages("Haus", &["fr", "en"]).await.contains(&page.id), "nor does a French reader's search");
    assert!(pages("house", &["en"]).await.contains(&page.id), "English stems: house finds houses");
    assert!(pages("house", &["de", "en"]).await.contains(&page.id), "the record's own text, after its German");
    let by_default = store.search_ids(&scope, Searched::Page, "Haus", &all, 10).await.unwrap();
    assert!(!by_default.contains(&page.id), "without a locale, the default's text alone");
    let first = pages("Meer", &["de", "en"]).await;
    assert_eq!(first.first(), Some(&page.id), "{first:?}");

    // Its words changed: the new ones are searched, the old ones no longer.
    store
        .put_translation(&ctx, &scope, EntityKind::Page, &page.id, "de", german("Unsere Wohnungen am See."), false)
        .await
        .unwrap();
    assert!(!pages("Haus", &["de", "en"]).await.contains(&page.id));
    assert!(pages("Wohnung", &["de", "en"]).await.contains(&page.id));

    // Entries, each in a language of its own.
    let texts = [
        ("fr", "Les chevaux galopent dans les prés.", "cheval"),
        ("es", "Las casas blancas del pueblo.", "casa"),
        ("it", "I libri della biblioteca antica.", "libro"),
        ("nl", "De boeken liggen op tafel.", "boek"),
        ("pt", "Os livros estão na estante.", "livro"),
        ("de", "Die Bäume blühen im Frühling.", "Baum"),
    ];
    for (n, (tag, body, word)) in texts.iter().enumerate() {
        let entry: NewEntry = serde_json::from_value(
            json!({"slug": format!("note-{n}"), "title": format!("Note {n}"), "content": {"body": "Nothing here."}}),
        )
        .unwrap();
        let entry = store.create_entry(&ctx, &scope, "blog", entry).await.unwrap();
        let fields = json!({"title": format!("Note {n}"), "content": {"body": body}});
        store.put_translation(&ctx, &scope, EntityKind::Entry, &entry.id, tag, fields, false).await.unwrap();
        let found = store.search_ids_in(&scope, Searched::Entry, word, &all, 10, &chain(&[tag, "en"])).await.unwrap();
        assert!(found.contains(&entry.id), "{tag}: {word} finds \"{body}\": {found:?}");
        let english = store.search_ids_in(&scope, Searched::Entry, word, &all, 10, &chain(&["en"])).await.unwrap();
        assert!(!english.contains(&entry.id), "{tag}: not in English");
        let other = if *tag == "de" { "fr" } else { "de" };
        let elsewhere =
            store.search_ids_in(&scope, Searched::Entry, word, &all, 10, &chain(&[other, "en"])).await.unwrap();
        assert!(!elsewhere.contains(&entry.id), "{tag}: not in {other}");
    }
}
