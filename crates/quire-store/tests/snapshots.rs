//! Delivery reads one snapshot: readers polling a page and a menu while a
//! writer takes them off the site and puts them back (each a transaction
//! of several rows) see all of a write or none of it, never a page from
//! before it with sections from after it.

use quire_core::model::{ChangeContext, EntityKind};
use quire_store::{Scope, Store, StoreError};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

const READERS: usize = 8;
const FLIPS: usize = 60;

/// What readers saw: (whole answers, absences).
#[derive(Default, Debug)]
struct Seen {
    whole: usize,
    absent: usize,
}

/// Archives and restores the record `id` of `kind` `FLIPS` times, while
/// `READERS` tasks run `read` in a loop; `read` answers `None` when the
/// record is off the site and panics on a mix.
async fn flip_while_reading<F, Fut>(store: &Store, scope: &Scope, kind: EntityKind, id: &str, read: F) -> Seen
where
    F: Fn(Store, Scope) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Option<()>> + Send,
{
    let stop = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for _ in 0..READERS {
        let (store, scope, stop, read) = (store.clone(), scope.clone(), Arc::clone(&stop), read.clone());
        readers.push(tokio::spawn(async move {
            let mut seen = Seen::default();
            while !stop.load(Ordering::Relaxed) {
                match read(store.clone(), scope.clone()).await {
                    Some(()) => seen.whole += 1,
                    None => seen.absent += 1,
                }
                tokio::task::yield_now().await;
            }
            seen
        }));
    }
    let ctx = ChangeContext::system();
    for _ in 0..FLIPS {
        let archives = store.archive(&ctx, scope, kind, &[id.to_string()]).await.unwrap();
        let ids: Vec<String> = archives.iter().map(|a| a.id.clone()).collect();
        tokio::task::yield_now().await;
        store.restore(&ctx, scope, &ids).await.unwrap();
        tokio::task::yield_now().await;
    }
    stop.store(true, Ordering::Relaxed);
    let mut total = Seen::default();
    for r in readers {
        let seen = r.await.expect("a reader saw a mix of two writes");
        total.whole += seen.whole;
        total.absent += seen.absent;
    }
    total
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_delivered_page_is_never_a_mix_of_two_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let home = store.delivery_page(&scope, "home").await.unwrap();
    let sections = home.sections.len();
    assert!(sections >= 3, "the demo home page has several published sections, has {sections}");
    let seen = flip_while_reading(&store, &scope, EntityKind::Page, &home.page.id, move |store, scope| async move {
        match store.delivery_page(&scope, "home").await {
            Ok(page) => {
                assert_eq!(page.sections.len(), sections, "a page read with the sections of another write");
                Some(())
            }
            Err(StoreError::NotFound { .. }) => None,
            Err(e) => panic!("delivery failed: {e}"),
        }
    })
    .await;
    assert!(seen.whole > 0, "readers saw the page: {seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_delivered_menu_is_never_a_mix_of_two_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let (header, items) = store.delivery_navigation(&scope, "header").await.unwrap();
    let count = items.len();
    assert!(count >= 2, "the demo header menu has several visible items, has {count}");
    let seen = flip_while_reading(&store, &scope, EntityKind::Navigation, &header.id, move |store, scope| async move {
        match store.delivery_navigation(&scope, "header").await {
            Ok((_, items)) => {
                assert_eq!(items.len(), count, "a menu read with the items of another write");
                Some(())
            }
            Err(StoreError::NotFound { .. }) => None,
            Err(e) => panic!("delivery failed: {e}"),
        }
    })
    .await;
    assert!(seen.whole > 0, "readers saw the menu: {seen:?}");
}

/// Publishing 500 pages in one call is one transaction: readers polling
/// delivery never see one of them published and, after that, another
/// still in its old version.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn five_hundred_pages_go_public_at_once() {
    go_public_at_once(false).await;
}

/// So is publishing a release of 500 pages.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_of_five_hundred_pages_goes_public_at_once() {
    go_public_at_once(true).await;
}

/// Publishes 500 pages, in one call or as one release, while readers poll.
async fn go_public_at_once(as_release: bool) {
    use quire_core::input::{NewPage, PagePatch};
    use quire_core::model::PublishStatus;
    use quire_core::model::ReleaseAction;
    use quire_store::PublishAction;
    use quire_store::Stage;
    const PAGES: usize = 500;
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let person = quire_store::testing::person();
    let mut ids = Vec::new();
    for i in 0..PAGES {
        let input = NewPage {
            name: "old".into(),
            slug: format!("launch-{i}"),
            status: Some(PublishStatus::Published),
            ..serde_json::from_value(serde_json::json!({"name": "old", "slug": "x"})).unwrap()
        };
        let page = store.create_page(&person, &scope, input).await.unwrap();
        let patch = PagePatch { name: Some("new".into()), ..Default::default() };
        store.update_page(&person, &scope, &page.id, patch).await.unwrap();
        ids.push(page.id);
    }
    let mut release = None;
    if as_release {
        let made = store.create_release(&person, &scope, "Launch", None).await.unwrap();
        for id in &ids {
            let stage = Stage {
                entity: EntityKind::Page,
                name: id.clone(),
                action: ReleaseAction::Publish,
                keep: false,
                locale: None,
            };
            store.stage(&person, &scope, &made.id, stage).await.unwrap();
        }
        release = Some(made.id);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for r in 0..READERS {
        let (store, scope, stop) = (store.clone(), scope.clone(), Arc::clone(&stop));
        readers.push(tokio::spawn(async move {
            let (mut seen_new, mut reads) = (false, 0);
            let mut i = r * 61;
            while !stop.load(Ordering::Relaxed) {
                let name = store.delivery_page(&scope, &format!("launch-{}", i % PAGES)).await.unwrap().page.name;
                assert!(!(seen_new && name == "old"), "a page read after another went public was still old");
                seen_new |= name == "new";
                reads += 1;
                i += 7;
                tokio::task::yield_now().await;
            }
            reads
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let started = std::time::Instant::now();
    match &release {
        Some(release) => drop(store.publish_release(&person, &scope, release, None).await.unwrap()),
        None => {
            drop(store.publishing(&person, &scope, PublishAction::Publish, EntityKind::Page, &ids, None).await.unwrap())
        }
    }
    let took = started.elapsed();
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    stop.store(true, Ordering::Relaxed);
    let mut reads = 0;
    for r in readers {
        reads += r.await.expect("a reader saw the publication half done");
    }
    assert!(reads > 0);
    for i in [0, PAGES / 2, PAGES - 1] {
        assert_eq!(store.delivery_page(&scope, &format!("launch-{i}")).await.unwrap().page.name, "new");
    }
    let how = if as_release { "a release of" } else { "one call publishing" };
    eprintln!("{how} {PAGES} pages in one transaction took {took:?} while {READERS} readers made {reads} reads");
}
