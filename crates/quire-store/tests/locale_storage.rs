//! What a page costs on disk in three locales against one: 100 pages of
//! three text sections each (a heading and ~600 characters of markdown),
//! published, then translated into German and French and published there
//! too. Everything counts: the working and published copies, the search
//! indexes and the change log, measured as the SQLite database's pages in
//! use after a checkpoint (`Store::disk_usage`). The target is less than
//! twice what it takes in one; measured 2.99× (docs/benchmarks.md, "A page
//! in three locales"): the translations' publications now log patches
//! over the revisions they copy, and what is left is three whole copies
//! of each translation (its working and published rows, its create in the
//! log), rows just over half a 4 KB page that take a page each. So the
//! test holds that level (below 3.05×, where logging each publication
//! whole measured 3.09×) and bounds the publications' share of the log,
//! until the rows are stored compactly. With `QUIRE_STORAGE_TABLES=1` it
//! prints the bytes of each table and index.

use quire_core::input::{NewPage, NewSection};
use quire_core::model::{ChangeContext, EntityKind, SiteLocale};
use quire_store::{PublishAction, Store};
use serde_json::json;

const PAGES: usize = 100;

fn body(lang: &str, n: usize) -> String {
    let words = match lang {
        "de" => "Der Garten hinter dem Haus blüht jeden Frühling wieder auf und lädt zum Verweilen ein. ",
        "fr" => "Le jardin derrière la maison refleurit chaque printemps et invite à la flânerie. ",
        _ => "The garden behind the house blooms again every spring and invites a long stay. ",
    };
    format!("## Part {n}\n\n{}", words.repeat(7))
}

/// Bytes in use after the write-ahead log is folded in (close, reopen).
async fn used(path: &std::path::Path, store: Store) -> (Store, u64) {
    store.close().await;
    let store = Store::open(path).await.unwrap();
    let (bytes, _) = store.disk_usage().await.unwrap();
    (store, bytes)
}

#[tokio::test]
async fn a_page_in_three_locales_is_measured_against_one_and_holds_its_level() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("quire.db");
    let store = Store::open(&path).await.unwrap();
    let scope = quire_store::seed::seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let locales = vec![
        SiteLocale { tag: "en".into(), fallback: None, is_default: true },
        SiteLocale { tag: "de".into(), fallback: None, is_default: false },
        SiteLocale { tag: "fr".into(), fallback: Some("de".into()), is_default: false },
    ];
    store.set_site_locales(&scope.site_id, locales).await.unwrap();
    let ctx = ChangeContext::system();
    let (store, before) = used(&path, store).await;

    let mut pages = Vec::new();
    for i in 0..PAGES {
        let page = store
            .create_page(
                &ctx,
                &scope,
                NewPage {
                    name: format!("Garden {i}"),
                    slug: format!("garden-{i}"),
                    meta: Some(json!({ "title": format!("The garden {i}"), "description": "Our garden in spring" })),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        let mut sections = Vec::new();
        for n in 0..3 {
            let content = json!({ "heading": format!("Spring {n}"), "body": body("en", n) });
            let input = NewSection { template_key: "text".into(), content: Some(content), ..Default::default() };
            sections.push(store.create_section(&ctx, &scope, &page.id, input).await.unwrap().id);
        }
        pages.push((page.id, sections));
    }
    let ids: Vec<String> = pages.iter().map(|(id, _)| id.clone()).collect();
    store.publishing(&ctx, &scope, PublishAction::Publish, EntityKind::Page, &ids, None).await.unwrap();
    let (store, one) = used(&path, store).await;

    for (i, (id, sections)) in pages.iter().enumerate() {
        for lang in ["de", "fr"] {
            let translated: serde_json::Map<String, serde_json::Value> = sections
                .iter()
                .enumerate()
                .map(|(n, s)| (s.clone(), json!({ "heading": format!("{lang} {n}"), "body": body(lang, n) })))
                .collect();
            let fields = json!({
                "name": format!("{lang} {i}"),
                "slug": format!("{lang}-garden-{i}"),
                "meta": { "title": format!("{lang} garden {i}"), "description": "Spring" },
                "sections": translated,
            });
            store.put_translation(&ctx, &scope, EntityKind::Page, id, lang, fields, true).await.unwrap();
        }
    }
    let (store, three) = used(&path, store).await;
    let (one, three) = (one - before, three - before);
    let ratio = three as f64 / one as f64;
    println!(
        "{PAGES} pages, 3 sections each: one locale {one} B ({} B a page), three locales {three} B ({} B a page): {ratio:.2}×",
        one / PAGES as u64,
        three / PAGES as u64
    );
    store.close().await;
    if std::env::var("QUIRE_STORAGE_TABLES").is_ok() {
        let c = rusqlite::Connection::open(&path).unwrap();
        let mut q = c.prepare("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 20").unwrap();
        let rows = q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))).unwrap();
        for row in rows {
            println!("{:?}", row.unwrap());
        }
        let mut q = c
            .prepare(
                "SELECT entity, action, COUNT(*), SUM(COALESCE(LENGTH(before), 0) + COALESCE(LENGTH(after), 0)
                 + COALESCE(LENGTH(patch), 0) + COALESCE(LENGTH(prior), 0)) FROM changes GROUP BY 1, 2 ORDER BY 4 DESC",
            )
            .unwrap();
        let rows = q
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?, r.get::<_, i64>(3)?))
            })
            .unwrap();
        for row in rows {
            println!("log {:?}", row.unwrap());
        }
    }
    // A translation's publication logs its patch over the revision it
    // copied (nothing, here), not the translation again.
    let c = rusqlite::Connection::open(&path).unwrap();
    let (creates, publications): (i64, i64) = c
        .query_row(
            "SELECT SUM(CASE WHEN action = 'create' THEN bytes ELSE 0 END), SUM(CASE WHEN action = 'publish' THEN bytes ELSE 0 END)
             FROM (SELECT action, COALESCE(LENGTH(before), 0) + COALESCE(LENGTH(after), 0) + COALESCE(LENGTH(patch), 0)
                   + COALESCE(LENGTH(prior), 0) AS bytes FROM changes WHERE entity = 'translation')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(
        publications * 10 < creates,
        "the translations' publications log {publications} B, their creates {creates} B"
    );
    assert!(ratio < 3.05, "three locales take {ratio:.2}× the storage of one");
}
