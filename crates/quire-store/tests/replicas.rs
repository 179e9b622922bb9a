//! Two stores on one database, as two `quire serve` replicas on one
//! PostgreSQL have (or two processes on one SQLite file): a queued job is
//! claimed by exactly one of them, and writes made through both at once are
//! all kept, each logged once.

use quire_core::input::{EntryPatch, NewEntry, NewPage};
use quire_core::model::{ChangeContext, EntityKind};
use quire_store::seed::seed_demo;
use quire_store::{ChangeFilter, Store};
use serde_json::json;
use std::collections::HashSet;
use std::time::Duration;

async fn two_stores() -> (tempfile::TempDir, Store, Store) {
    let dir = tempfile::tempdir().unwrap();
    let at = quire_store::testing::location(dir.path()).await.unwrap();
    let a = Store::open_at(at.clone()).await.unwrap();
    let b = Store::open_at(at).await.unwrap();
    (dir, a, b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_job_is_claimed_by_exactly_one_store() {
    let (dir, a, b) = two_stores().await;
    let scope = seed_demo(&a, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    for i in 0..40 {
        a.enqueue_job("test", &scope, &format!("subject-{i}"), json!({})).await.unwrap();
    }
    let claim_all = |store: Store| {
        tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(job) = store.claim_job(Duration::from_secs(60)).await.unwrap() {
                mine.push(job.id);
            }
            mine
        })
    };
    let (ta, tb, tc, td) = (claim_all(a.clone()), claim_all(b.clone()), claim_all(a.clone()), claim_all(b.clone()));
    let mut all = Vec::new();
    for t in [ta, tb, tc, td] {
        all.extend(t.await.unwrap());
    }
    let unique: HashSet<&String> = all.iter().collect();
    assert_eq!(all.len(), 40, "every job claimed once, none twice: {} claims of {} jobs", all.len(), unique.len());
    assert_eq!(unique.len(), 40);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writes_through_both_stores_at_once_are_all_kept_and_logged_once() {
    let (dir, a, b) = two_stores().await;
    let scope = seed_demo(&a, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let ctx = ChangeContext::system();
    let mut posts = Vec::new();
    for i in 0..40 {
        let input: NewEntry =
            serde_json::from_value(json!({"slug": format!("p{i}"), "title": "T", "content": {"body": "B"}})).unwrap();
        posts.push(a.create_entry(&ctx, &scope, "blog", input).await.unwrap());
    }
    // Each post retitled through one store and a new page made through the
    // other, all at once.
    let mut tasks = Vec::new();
    for (i, post) in posts.iter().enumerate() {
        let (first, second) = if i % 2 == 0 { (a.clone(), b.clone()) } else { (b.clone(), a.clone()) };
        let (scope1, ctx1, id) = (scope.clone(), ctx.clone(), post.id.clone());
        tasks.push(tokio::spawn(async move {
            let (scope, ctx) = (scope1, ctx1);
            let patch = EntryPatch { title: Some(format!("Retitled {i}")), ..Default::default() };
            first.update_entry(&ctx, &scope, &id, patch).await.map(drop)
        }));
        let (scope, ctx) = (scope.clone(), ctx.clone());
        tasks.push(tokio::spawn(async move {
            let page: NewPage =
                serde_json::from_value(json!({"name": format!("Page {i}"), "slug": format!("page-{i}")})).unwrap();
            second.create_page(&ctx, &scope, page).await.map(drop)
        }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    for (i, post) in posts.iter().enumerate() {
        let read = b.entry(&scope, &post.id).await.unwrap();
        assert_eq!(read.title, format!("Retitled {i}"));
        let filter = ChangeFilter { entity_id: Some(post.id.clone()), ..Default::default() };
        let logged = a.change_summaries(&scope, &filter, 10, None).await.unwrap().items;
        assert_eq!(logged.iter().filter(|c| c.action == "update").count(), 1, "post {i}");
        a.page_by_slug(&scope, &format!("page-{i}")).await.unwrap();
    }
    let filter = ChangeFilter { entity: Some(EntityKind::Page), ..Default::default() };
    let creates = b.change_summaries(&scope, &filter, 1000, None).await.unwrap().items;
    let made: Vec<_> = creates.iter().filter(|c| c.action == "create").collect();
    let ids: HashSet<&String> = made.iter().map(|c| &c.entity_id).collect();
    assert_eq!(made.len(), ids.len(), "no page's creation is logged twice");
}

/// A PostgreSQL server that drops the store's connections (a restart, a
/// failover): the writes and reads after it go on over new ones.
#[tokio::test]
async fn a_store_connects_again_after_the_server_dropped_its_connections() {
    let Some(server) = quire_store::testing::postgres_url() else {
        eprintln!("no QUIRE_TEST_DATABASE_URL: SQLite has no server to drop connections");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let at = quire_store::testing::location(dir.path()).await.unwrap();
    let quire_store::Location::Postgres(own) = &at else { unreachable!("a PostgreSQL test store") };
    let name = own.split("application_name=").nth(1).unwrap().split('&').next().unwrap().to_string();
    let store = Store::open_at(at.clone()).await.unwrap();
    let scope = seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let ctx = ChangeContext::system();
    let page =
        |i: usize| -> NewPage { serde_json::from_value(json!({"name": "P", "slug": format!("p-{i}")})).unwrap() };
    store.create_page(&ctx, &scope, page(0)).await.unwrap();

    // Every connection of this store is ended by the server (psql comes
    // with Debian's PostgreSQL).
    let ended = tokio::task::spawn_blocking(move || {
        let sql =
            format!("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '{name}'");
        std::process::Command::new("psql").arg(server).args(["-Atc", &sql]).output()
    })
    .await
    .unwrap()
    .unwrap();
    let count: i64 = String::from_utf8_lossy(&ended.stdout).trim().parse().unwrap_or(0);
    assert!(count >= 1, "the store's connections were found: {}", String::from_utf8_lossy(&ended.stderr));

    // The first write and read may fail with the dropped connection; the next ones succeed.
    let mut wrote = false;
    for i in 1..4 {
        if store.create_page(&ctx, &scope, page(i)).await.is_ok() {
            wrote = true;
            break;
        }
    }
    assert!(wrote, "a write went through on a new connection");
    let mut read = false;
    for _ in 0..6 {
        if store.page_by_slug(&scope, "p-0").await.is_ok() {
            read = true;
            break;
        }
    }
    assert!(read, "reads went on on new connections");
}

/// Edits of the same record through both stores at once apply one after
/// the other: none is refused for losing a race, each is logged.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_edits_of_one_record_through_both_stores_all_apply() {
    let (dir, a, b) = two_stores().await;
    let scope = seed_demo(&a, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let ctx = ChangeContext::system();
    let input: NewEntry =
        serde_json::from_value(json!({"slug": "busy", "title": "T", "content": {"body": "B"}})).unwrap();
    let post = a.create_entry(&ctx, &scope, "blog", input).await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..24 {
        let store = if i % 2 == 0 { a.clone() } else { b.clone() };
        let (scope, ctx, id) = (scope.clone(), ctx.clone(), post.id.clone());
        tasks.push(tokio::spawn(async move {
            let patch = EntryPatch { title: Some(format!("Title {i}")), ..Default::default() };
            store.update_entry(&ctx, &scope, &id, patch).await.map(|e| e.version)
        }));
    }
    let mut versions = Vec::new();
    for t in tasks {
        versions.push(t.await.unwrap().expect("no edit is refused"));
    }
    versions.sort();
    assert_eq!(versions, (post.version + 1..=post.version + 24).collect::<Vec<_>>(), "each edit made its own version");
    let filter = ChangeFilter { entity_id: Some(post.id.clone()), ..Default::default() };
    let logged = b.change_summaries(&scope, &filter, 100, None).await.unwrap().items;
    assert_eq!(logged.iter().filter(|c| c.action == "update").count(), 24);
}
