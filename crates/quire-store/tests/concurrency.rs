//! Concurrent updates of one record: none is lost, every success is logged
//! once, and versions count the successes exactly.

use quire_core::input::EntryPatch;
use quire_core::model::{ChangeAction, ChangeContext};
use quire_store::ChangeFilter;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_updates_are_serialised_by_version() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let entry = store.entry_by_slug(&scope, "blog", "hello-quire").await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..40 {
        let (store, scope, id) = (store.clone(), scope.clone(), entry.id.clone());
        tasks.push(tokio::spawn(async move {
            let patch = EntryPatch { title: Some(format!("Title {i}")), ..Default::default() };
            store.update_entry(&ChangeContext::system(), &scope, &id, patch).await
        }));
    }
    let mut ok = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => ok += 1,
            Err(e) => panic!("a concurrent update failed: {e}"),
        }
    }
    assert_eq!(ok, 40, "every concurrent update is applied in turn");
    let after = store.entry(&scope, &entry.id).await.unwrap();
    assert_eq!(after.version, entry.version + ok);
    let filter = ChangeFilter { entity_id: Some(entry.id.clone()), ..Default::default() };
    let updates = store
        .changes(&scope, &filter, 100, None)
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|c| c.action == ChangeAction::Update)
        .count();
    assert_eq!(updates as i64, ok);
    // each logged update starts from the version the previous one produced
    let changes = store.changes(&scope, &filter, 100, None).await.unwrap().items;
    for c in changes.iter().filter(|c| c.action == ChangeAction::Update) {
        assert_eq!(
            c.after.as_ref().unwrap()["version"].as_i64().unwrap(),
            c.before.as_ref().unwrap()["version"].as_i64().unwrap() + 1
        );
    }
}
