//! The write-ahead log stays bounded while the store runs: once it passes
//! `WAL_LIMIT`, the background checkpoint folds it back, without waiting for
//! the process to stop: once the writer paused, a TRUNCATE empties the file
//! (also when the log was rewound while the writes went on, which leaves the
//! file its size).

use quire_core::input::NewEntry;
use quire_core::model::ChangeContext;
use quire_store::seed::seed_demo;
use quire_store::{Store, WAL_LIMIT};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_past_the_limit_is_emptied_while_the_store_runs() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("q.db")).await.unwrap();
    let scope = seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let ctx = ChangeContext::system();
    // ~100 KB a post: enough posts to write past the limit
    let body = "Every change goes through the write-ahead log first. ".repeat(2000);
    let posts = (WAL_LIMIT as usize * 3 / 2) / body.len();
    let mut peak = 0;
    for i in 0..posts {
        let input: NewEntry =
            serde_json::from_value(json!({"slug": format!("big-{i}"), "title": "Big", "content": {"body": body}}))
                .unwrap();
        store.create_entry(&ctx, &scope, "blog", input).await.unwrap();
        peak = peak.max(store.disk_usage().await.unwrap().1);
    }
    assert!(peak > WAL_LIMIT as u64 / 2, "the writes reached the log ({peak} bytes)");
    // the first tick with no commit empties it; a busy machine slows the copy
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, wal) = store.disk_usage().await.unwrap();
        if wal <= WAL_LIMIT as u64 {
            break;
        }
        assert!(Instant::now() < deadline, "the log is still {wal} bytes, past the limit of {WAL_LIMIT}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!("peak log: {peak} bytes");
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_after_the_benchmark_seed_leaves_no_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.db");
    let store = Store::open(&path).await.unwrap();
    let scope = seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    quire_store::seed::seed_bench(&store, &scope, 10, 500).await.unwrap();
    let (_, wal) = store.disk_usage().await.unwrap();
    eprintln!("log before close: {wal}");
    store.close().await;
    let left = std::fs::metadata(format!("{}-wal", path.display())).map(|m| m.len()).unwrap_or(0);
    assert_eq!(left, 0, "close left a {left} byte log");
}

/// Once no commit has changed anything for a while, the store gives its
/// caches back and says so, for the process to do the same; a write
/// afterwards starts the count again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_store_says_so_once_its_caches_are_given_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("q.db")).await.unwrap();
    let scope = seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let mut quiet = store.quiet_periods();
    let started = Instant::now();
    tokio::time::timeout(Duration::from_secs(90), quiet.changed()).await.expect("no quiet period").unwrap();
    assert!(started.elapsed() >= Duration::from_secs(9), "quiet after {:?}", started.elapsed());
    assert_eq!(*quiet.borrow_and_update(), 1);
    // Still serving after its caches were given back.
    let input: NewEntry =
        serde_json::from_value(json!({"slug": "after-quiet", "title": "After", "content": {"body": "Still here."}}))
            .unwrap();
    let entry = store.create_entry(&ChangeContext::system(), &scope, "blog", input).await.unwrap();
    assert_eq!(entry.slug, "after-quiet");
    store.close().await;
}
