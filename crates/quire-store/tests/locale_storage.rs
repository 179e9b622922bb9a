//! What a page costs on disk in three locales against one: 100 pages of
//! three text sections each (a heading and ~600 characters of markdown),
//! published, then translated into German and French and published there
//! too. Everything counts: the working and published copies, the search
//! indexes and the change log, measured as the SQLite database's pages in
//! use after a checkpoint (`Store::disk_usage`). The target is less than
//! twice what it takes in one (docs/benchmarks.md, "A page in three
//! locales"): a translation's fields are stored once, in its create's
//! change-log record, which its working and published rows name, and its
//! publication logs a patch over that revision. With
//! `QUIRE_STORAGE_TABLES=1` it prints the bytes of each table and index.
//!
//! A database whose translations keep their fields in their rows (made
//! before) reads them as it did, and goes on from there.

use quire_core::input::{NewPage, NewSection};
use quire_core::model::{ChangeContext, EntityKind, PublishStatus, SiteLocale};
use quire_store::{Location, PublishAction, SearchFilter, Searched, Store, Version};
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
    assert!(ratio < 2.0, "three locales take {ratio:.2}× the storage of one");
    // Each translation's fields are in its create's record alone.
    let inline: i64 = c
        .query_row("SELECT COUNT(*) FROM translations WHERE fields <> '' OR fields_from IS NULL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(inline, 0, "translations keeping their fields in their rows");
}

/// What a reader gets of a page's translations: each locale's listing,
/// its published page in that locale, and what a search in it finds.
async fn read_all(store: &Store, scope: &quire_store::Scope, id: &str) -> Vec<serde_json::Value> {
    let mut seen = Vec::new();
    let states = store.translations(scope, EntityKind::Page, id).await.unwrap();
    seen.push(serde_json::to_value(&states).unwrap());
    for chain in [vec!["de".to_string(), "en".to_string()], vec!["fr".into(), "de".into(), "en".into()]] {
        let page = store.delivered_page_in(scope, "garden", Version::Published, &chain).await.unwrap();
        seen.push(serde_json::to_value(&page).unwrap());
        let draft = store.delivered_page_in(scope, "garden", Version::Working, &chain).await.unwrap();
        seen.push(serde_json::to_value(&draft).unwrap());
        let found =
            store.search_ids_in(scope, Searched::Page, "Gärten", &SearchFilter::default(), 10, &chain).await.unwrap();
        seen.push(json!(found));
    }
    seen
}

/// Takes the database at `at` back to the schema before translations'
/// fields were stored once: every translation's fields in its rows.
async fn as_before(at: &Location) {
    let mut undo = String::new();
    let from_change = match at {
        Location::File(_) => "json_extract(c.after, '$.fields')",
        Location::Postgres(_) => "(c.after::json -> 'fields')::text",
    };
    for table in ["translations", "published_translations"] {
        undo.push_str(&format!(
            "UPDATE {table} SET fields = (SELECT {from_change} FROM changes c WHERE c.id = {table}.fields_from)
               WHERE fields = '';"
        ));
    }
    undo.push_str("DELETE FROM _sqlx_migrations WHERE description = 'translation fields once';");
    match at {
        Location::File(path) => {
            let db = rusqlite::Connection::open(path).unwrap();
            for table in ["translations", "published_translations"] {
                undo.push_str(&format!("ALTER TABLE {table} DROP COLUMN fields_from;"));
            }
            db.execute_batch(&undo).unwrap();
        }
        Location::Postgres(url) => {
            // The search trigger and its function as they were.
            undo.push_str(
                "DROP TRIGGER translations_search_update ON translations;
                 ALTER TABLE translations DROP COLUMN fields_from;
                 ALTER TABLE published_translations DROP COLUMN fields_from;
                 CREATE OR REPLACE FUNCTION index_translation() RETURNS trigger LANGUAGE plpgsql AS $$
                 BEGIN
                     IF TG_OP = 'DELETE' THEN
                         DELETE FROM translations_fts WHERE id = OLD.id;
                         RETURN OLD;
                     END IF;
                     IF NEW.record_kind NOT IN ('page', 'entry') THEN
                         DELETE FROM translations_fts WHERE id = NEW.id;
                         RETURN NEW;
                     END IF;
                     INSERT INTO translations_fts (id, words)
                     VALUES (NEW.id, translation_words(NEW.record_kind, NEW.locale, NEW.fields))
                     ON CONFLICT (id) DO UPDATE SET words = excluded.words;
                     RETURN NEW;
                 END $$;
                 CREATE TRIGGER translations_search_update AFTER UPDATE OF fields, slug, locale, record_kind
                     ON translations FOR EACH ROW
                     WHEN (old.fields IS DISTINCT FROM new.fields OR old.slug IS DISTINCT FROM new.slug
                         OR old.locale IS DISTINCT FROM new.locale OR old.record_kind IS DISTINCT FROM new.record_kind)
                     EXECUTE FUNCTION index_translation();",
            );
            let url = url.clone();
            tokio::task::spawn_blocking(move || {
                let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                client.batch_execute(&undo).unwrap();
            })
            .await
            .unwrap();
        }
    }
}

/// The rows of `translations`: document, fields and `fields_from` (none
/// before the migration).
async fn stored_rows(at: &Location, migrated: bool) -> Vec<(String, String, Option<i64>)> {
    let from = if migrated { "fields_from" } else { "CAST(NULL AS BIGINT)" };
    let sql = format!("SELECT record_id, fields, {from} FROM translations ORDER BY record_id, locale");
    match at {
        Location::File(path) => {
            let db = rusqlite::Connection::open(path).unwrap();
            let mut q = db.prepare(&sql).unwrap();
            q.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
        }
        Location::Postgres(url) => {
            let url = url.clone();
            tokio::task::spawn_blocking(move || {
                let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                client.query(&sql, &[]).unwrap().iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect()
            })
            .await
            .unwrap()
        }
    }
}

/// On either database.
#[tokio::test]
async fn the_migration_keeps_every_translation_written_before() {
    let dir = tempfile::tempdir().unwrap();
    let at = quire_store::testing::location(dir.path()).await.unwrap();
    let store = Store::open_at(at.clone()).await.unwrap();
    let scope = quire_store::seed::seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let locales = vec![
        SiteLocale { tag: "en".into(), fallback: None, is_default: true },
        SiteLocale { tag: "de".into(), fallback: None, is_default: false },
        SiteLocale { tag: "fr".into(), fallback: Some("de".into()), is_default: false },
    ];
    store.set_site_locales(&scope.site_id, locales).await.unwrap();
    let ctx = ChangeContext::system();
    let page = NewPage { name: "Garden".into(), slug: "garden".into(), ..Default::default() };
    let page = store.create_page(&ctx, &scope, page).await.unwrap();
    let content = json!({ "heading": "Spring", "body": body("en", 0) });
    let status = Some(PublishStatus::Published);
    let input = NewSection { template_key: "text".into(), content: Some(content), status, ..Default::default() };
    let section = store.create_section(&ctx, &scope, &page.id, input).await.unwrap().id;
    let ids = [page.id.clone()];
    store.publishing(&ctx, &scope, PublishAction::Publish, EntityKind::Page, &ids, None).await.unwrap();
    // German published, then drafted again over it; French published as written.
    let fields = |lang: &str, heading: &str| {
        json!({
            "name": format!("{lang} garden"),
            "slug": format!("{lang}-garden"),
            "sections": { section.clone(): { "heading": heading, "body": format!("Die Gärten {}", body(lang, 0)) } },
        })
    };
    store
        .put_translation(&ctx, &scope, EntityKind::Page, &page.id, "de", fields("de", "Frühling"), true)
        .await
        .unwrap();
    store
        .put_translation(&ctx, &scope, EntityKind::Page, &page.id, "de", fields("de", "Entwurf"), false)
        .await
        .unwrap();
    store
        .put_translation(&ctx, &scope, EntityKind::Page, &page.id, "fr", fields("fr", "Printemps"), true)
        .await
        .unwrap();
    let before = read_all(&store, &scope, &page.id).await;
    let text = serde_json::to_string(&before).unwrap();
    assert!(["Entwurf", "Frühling", "Printemps", "Gärten"].iter().all(|w| text.contains(w)), "{text}");
    store.close().await;

    as_before(&at).await;
    let kept = stored_rows(&at, false).await;
    assert!(
        kept.iter().filter(|(_, fields, _)| fields.contains("Gärten")).count() == 2,
        "the old rows hold their fields"
    );

    let store = Store::open_at(at.clone()).await.unwrap();
    assert_eq!(read_all(&store, &scope, &page.id).await, before, "every translation reads as it did");
    // They go on from there: published, changed, and a new one stored once.
    store.put_translation(&ctx, &scope, EntityKind::Page, &page.id, "de", fields("de", "Sommer"), true).await.unwrap();
    let chain = ["de".to_string(), "en".to_string()];
    let german = store.delivered_page_in(&scope, "de-garden", Version::Published, &chain).await.unwrap();
    assert!(serde_json::to_string(&german).unwrap().contains("Sommer"), "{}", serde_json::to_string(&german).unwrap());
    let other = NewPage { name: "Pond".into(), slug: "pond".into(), ..Default::default() };
    let other = store.create_page(&ctx, &scope, other).await.unwrap();
    let pond = json!({ "name": "Teich", "slug": "teich" });
    store.put_translation(&ctx, &scope, EntityKind::Page, &other.id, "de", pond, false).await.unwrap();
    store.close().await;
    let rows = stored_rows(&at, true).await;
    for (record, fields, from) in rows {
        if record == other.id {
            assert_eq!((fields.as_str(), from.is_some()), ("", true), "a new translation's fields are in its create");
        } else {
            assert!(fields.starts_with('{') && from.is_none(), "a translation made before keeps its own: {fields}");
        }
    }
}
