//! Two stores on one database, as two `quire serve` replicas on one
//! PostgreSQL have (or two processes on one SQLite file): a queued job is
//! claimed by exactly one of them, and writes made through both at once are
//! all kept, each logged once.

use quire_core::input::{EntryPatch, NewEntry, NewPage};
use quire_core::model::{ChangeAction, ChangeContext, EntityKind, JobKind};
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

/// A store of its own schema on the test PostgreSQL server, seeded, with
/// the server's URL and the schema's name (which also names the store's
/// connections); none on SQLite.
async fn postgres_store() -> Option<(tempfile::TempDir, Store, quire_store::Scope, String, String)> {
    let server = quire_store::testing::postgres_url()?;
    let dir = tempfile::tempdir().unwrap();
    let at = quire_store::testing::location(dir.path()).await.unwrap();
    let quire_store::Location::Postgres(own) = &at else { unreachable!("a PostgreSQL test store") };
    let schema = own.split("application_name=").nth(1).unwrap().split('&').next().unwrap().to_string();
    let store = Store::open_at(at.clone()).await.unwrap();
    let scope = seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    Some((dir, store, scope, server, schema))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_job_is_claimed_by_exactly_one_store() {
    let (dir, a, b) = two_stores().await;
    let scope = seed_demo(&a, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    for i in 0..40 {
        a.enqueue_job(JobKind::DescribeImage, &scope, &format!("subject-{i}"), json!({})).await.unwrap();
    }
    let claim_all = |store: Store| {
        tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(job) = store.claim_job(JobKind::MEDIA, Duration::from_secs(60)).await.unwrap() {
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
        assert_eq!(logged.iter().filter(|c| c.change.action == ChangeAction::Update).count(), 1, "post {i}");
        a.page_by_slug(&scope, &format!("page-{i}")).await.unwrap();
    }
    let filter = ChangeFilter { entity: Some(EntityKind::Page), ..Default::default() };
    let creates = b.change_summaries(&scope, &filter, 1000, None).await.unwrap().items;
    let made: Vec<_> = creates.iter().map(|c| &c.change).filter(|c| c.action == ChangeAction::Create).collect();
    let ids: HashSet<&String> = made.iter().map(|c| &c.entity_id).collect();
    assert_eq!(made.len(), ids.len(), "no page's creation is logged twice");
}

/// A PostgreSQL server that drops the store's connections (a restart, a
/// failover): the writes and reads after it go on over new ones.
#[tokio::test]
async fn a_store_connects_again_after_the_server_dropped_its_connections() {
    let Some((_dir, store, scope, server, name)) = postgres_store().await else {
        eprintln!("no QUIRE_TEST_DATABASE_URL: SQLite has no server to drop connections");
        return;
    };
    let ctx = ChangeContext::system();
    let page =
        |i: usize| -> NewPage { serde_json::from_value(json!({"name": "P", "slug": format!("p-{i}")})).unwrap() };
    store.create_page(&ctx, &scope, page(0)).await.unwrap();
    store.heartbeat().await.unwrap();

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
    let mut beat = false;
    for _ in 0..3 {
        if store.heartbeat().await.is_ok() {
            beat = true;
            break;
        }
    }
    assert!(beat, "the heartbeat went on on a new connection");
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
    assert_eq!(logged.iter().filter(|c| c.change.action == ChangeAction::Update).count(), 24);
}

/// A turn running in one store's process is taken over by the other once
/// the first stopped beating: by exactly one taker, and the first can write
/// no step of it after that.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_running_turn_is_taken_over_once_its_runner_is_silent() {
    let (dir, a, b) = two_stores().await;
    let scope = seed_demo(&a, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let agent = a.agent(&scope, "editor").await.unwrap();
    let new = quire_store::NewSession {
        id: None,
        agent_id: agent.id.clone(),
        actor: "token:t".into(),
        group: quire_core::access::Group::Editor,
        title: "t".into(),
        context: None,
        contexts: Vec::new(),
    };
    let session = a.start_session(&scope, new, &json!({"role": "user", "content": "hi"})).await.unwrap();
    a.heartbeat().await.unwrap();
    b.heartbeat().await.unwrap();
    let silent = Duration::from_millis(300);
    assert!(b.orphaned_sessions(silent).await.unwrap().is_empty(), "its runner beats");
    assert!(!b.take_over_session(&scope, &session.id, a.replica(), silent).await.unwrap(), "not while it beats");
    tokio::time::sleep(Duration::from_millis(400)).await;
    b.heartbeat().await.unwrap();
    let orphans = b.orphaned_sessions(silent).await.unwrap();
    assert_eq!(orphans.len(), 1, "{orphans:?}");
    assert_eq!(orphans[0].1.id, session.id);
    assert_eq!(orphans[0].2, a.replica());
    // Both try at once; one wins.
    let (x, y) = tokio::join!(
        b.take_over_session(&scope, &session.id, a.replica(), silent),
        b.take_over_session(&scope, &session.id, a.replica(), silent)
    );
    assert!(x.unwrap() ^ y.unwrap(), "exactly one take-over succeeds");
    assert!(!a.take_over_session(&scope, &session.id, a.replica(), silent).await.unwrap(), "the runner changed");
    // The stopped runner's late step is refused and changes nothing.
    let update = quire_store::SessionUpdate { steps: Some(5), ..Default::default() };
    let late = json!({"role": "assistant", "content": "late"});
    let refused =
        async { a.queue_step(&scope, &session.id, &update, 1, &[late]).await?.done().await }.await.unwrap_err();
    assert!(refused.to_string().contains("another took its turn over"), "{refused}");
    assert_eq!(a.session_messages(&scope, &session.id).await.unwrap().len(), 1);
    // The taker writes its steps.
    let next = json!({"role": "assistant", "content": "on it"});
    b.queue_step(&scope, &session.id, &update, 1, &[next]).await.unwrap().done().await.unwrap();
    assert_eq!(a.session(&scope, &session.id).await.unwrap().steps, 5);
    assert!(b.orphaned_sessions(silent).await.unwrap().is_empty(), "its new runner beats");
}

/// Events stored by one store are read by the other: from the latest run's
/// start, after a given id, for several sessions at once; each is stored
/// once, and old ones are forgotten.
#[tokio::test]
async fn stored_events_are_read_from_any_store() {
    let (_dir, a, b) = two_stores().await;
    // Ids are when the events were emitted, in microseconds.
    let t = chrono::Utc::now().timestamp_micros() as u64;
    let event = |s: &str, id: u64, kind: &str| {
        (s.to_string(), t + id, kind.to_string(), json!({"type": kind, "n": id}).to_string())
    };
    a.append_events(vec![
        event("s1", 10, "RUN_STARTED"),
        event("s1", 11, "TEXT_MESSAGE_CONTENT"),
        event("s1", 12, "RUN_FINISHED"),
        event("s2", 13, "RUN_STARTED"),
        event("s1", 20, "RUN_STARTED"),
        event("s1", 21, "TEXT_MESSAGE_CONTENT"),
    ])
    .await
    .unwrap();
    // Stored again (a retried write): kept once, as first stored.
    let mut again = event("s1", 21, "TEXT_MESSAGE_CONTENT");
    again.3 = "{}".into();
    b.append_events(vec![again]).await.unwrap();
    let ids = |v: Vec<(u64, String)>| v.into_iter().map(|(id, _)| id - t).collect::<Vec<_>>();
    assert_eq!(ids(b.events_after("s1", None).await.unwrap()), [20, 21], "from the latest run");
    assert_eq!(ids(b.events_after("s1", Some(t + 11)).await.unwrap()), [12, 20, 21]);
    assert_eq!(ids(b.events_after("s1", Some(t + 21)).await.unwrap()), Vec::<u64>::new());
    assert_eq!(ids(b.events_after("s1", Some(u64::MAX)).await.unwrap()), Vec::<u64>::new());
    assert_eq!(ids(b.events_after("nobody", None).await.unwrap()), Vec::<u64>::new());
    let (_, data) = b.events_after("s1", Some(t + 20)).await.unwrap().remove(0);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&data).unwrap()["n"], 21);
    // Each session from its own cursor, at most `limit` of each.
    let since = b.events_since(&[("s1".into(), t + 12), ("s2".into(), 0)], 10).await.unwrap();
    let got: Vec<(&str, u64)> = since.iter().map(|(s, id, _)| (s.as_str(), id - t)).collect();
    assert_eq!(got, [("s1", 20), ("s1", 21), ("s2", 13)]);
    assert_eq!(b.events_since(&[("s1".into(), 0)], 2).await.unwrap().len(), 2);
    assert_eq!(b.prune_events(Duration::from_secs(3600)).await.unwrap(), 0, "all are recent");
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert_eq!(b.prune_events(Duration::ZERO).await.unwrap(), 6);
    assert!(a.events_after("s1", None).await.unwrap().is_empty());
}

/// Two moves through both stores at once that would together make a loop
/// (each page under the other): at most one is applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn crossing_moves_through_both_stores_never_make_a_loop() {
    let (dir, a, b) = two_stores().await;
    let scope = seed_demo(&a, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let ctx = ChangeContext::system();
    let page = |slug: String| -> NewPage { serde_json::from_value(json!({"name": "P", "slug": slug})).unwrap() };
    let mut both = 0;
    for i in 0..20 {
        let x = a.create_page(&ctx, &scope, page(format!("x-{i}"))).await.unwrap();
        let y = a.create_page(&ctx, &scope, page(format!("y-{i}"))).await.unwrap();
        let under = |parent: &str| quire_core::input::PagePatch {
            parent_id: Some(Some(parent.to_string())),
            ..Default::default()
        };
        let (moved_x, moved_y) = tokio::join!(
            a.update_page(&ctx, &scope, &x.id, under(&y.id)),
            b.update_page(&ctx, &scope, &y.id, under(&x.id))
        );
        if let (Err(e), _) | (_, Err(e)) = (&moved_x, &moved_y) {
            assert!(e.to_string().contains("cycle"), "{e}");
        }
        both += (moved_x.is_ok() && moved_y.is_ok()) as usize;
    }
    assert_eq!(both, 0, "moves that together loop were both applied {both} times");
}

/// Items added through both stores at once to a navigation with room for
/// one more: one is added, the other refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_navigation_takes_no_more_items_through_either_store() {
    let (dir, a, b) = two_stores().await;
    let scope = seed_demo(&a, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let ctx = ChangeContext::system();
    for i in 0..10 {
        let nav: quire_core::input::NewNavigation =
            serde_json::from_value(json!({"key": format!("n{i}"), "name": "N", "maxItems": 1})).unwrap();
        let nav = a.create_navigation(&ctx, &scope, nav).await.unwrap();
        let item = |label: &str| -> quire_core::input::NewNavItem {
            serde_json::from_value(json!({"label": label, "targetType": "url", "url": "https://example.com/"})).unwrap()
        };
        let (one, two) = tokio::join!(
            a.create_nav_item(&ctx, &scope, &nav.id, item("one")),
            b.create_nav_item(&ctx, &scope, &nav.id, item("two"))
        );
        assert!(one.is_ok() ^ two.is_ok(), "one of the two is added: {one:?} {two:?}");
        let refused = one.err().or(two.err()).unwrap();
        assert!(refused.to_string().contains("full"), "{refused}");
    }
}

/// On PostgreSQL a process's heartbeat does not wait behind its own writes:
/// a write waiting on a row another replica holds (here a session of
/// `psql` holding it for a few seconds) does not keep the beat from
/// landing, so a live runner is not taken for silent.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_heartbeat_lands_while_a_write_waits_on_another_replicas_lock() {
    let Some((_dir, store, scope, server, schema)) = postgres_store().await else {
        eprintln!("no QUIRE_TEST_DATABASE_URL: on SQLite one process writes");
        return;
    };
    let ctx = ChangeContext::system();
    let input: NewEntry =
        serde_json::from_value(json!({"slug": "held", "title": "T", "content": {"body": "B"}})).unwrap();
    let post = store.create_entry(&ctx, &scope, "blog", input).await.unwrap();
    store.heartbeat().await.unwrap();

    // Another session holds the post's row for three seconds.
    let sql = format!(
        "SET search_path TO {schema}, public; BEGIN; SELECT id FROM entries WHERE id = '{}' FOR UPDATE; SELECT pg_sleep(3); COMMIT;",
        post.id
    );
    let holder = tokio::task::spawn_blocking(move || {
        std::process::Command::new("psql").arg(server).args(["-Atc", &sql]).output()
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (s2, c2, id) = (store.clone(), ctx.clone(), post.id.clone());
    let waiting = tokio::spawn(async move {
        let patch = EntryPatch { title: Some("Waited".into()), ..Default::default() };
        s2.update_entry(&c2, &scope, &id, patch).await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "the write waits on the held row");
    let beat = tokio::time::timeout(Duration::from_secs(1), store.heartbeat()).await;
    assert!(matches!(beat, Ok(Ok(()))), "the beat landed while the write waited: {beat:?}");
    let out = holder.await.unwrap().unwrap();
    assert!(out.status.success(), "psql held the row: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(waiting.await.unwrap().unwrap().title, "Waited");
}
