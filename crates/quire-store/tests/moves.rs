//! Moving a record among its siblings: the two swap positions in one
//! transaction, each change is logged, the ends of a list change nothing,
//! and equal positions are spread out so a move always shows.

use quire_core::input::SectionPatch;
use quire_core::model::{ChangeAction, ChangeContext, Page, PageSection};
use quire_store::{ChangeFilter, PageFilter, Scope, Store};

/// A demo store, its scope, and the first page at the top of its tree.
async fn demo_page() -> (tempfile::TempDir, Store, Scope, Page) {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let root = PageFilter { root_only: true, ..Default::default() };
    let page = store.pages(&scope, &root, 1, None).await.unwrap().items.remove(0);
    (dir, store, scope, page)
}

async fn order(store: &Store, scope: &Scope, page: &str) -> Vec<String> {
    store.sections(scope, page, 100, None).await.unwrap().items.into_iter().map(|s: PageSection| s.id).collect()
}

#[tokio::test]
async fn a_move_swaps_neighbours_logs_both_and_stops_at_the_ends() {
    let (_dir, store, scope, home) = demo_page().await;
    let ctx = ChangeContext::system();
    let before = order(&store, &scope, &home.id).await;
    assert!(before.len() >= 3);

    store.shift_section(&ctx, &scope, &before[1], -1).await.unwrap();
    let after = order(&store, &scope, &home.id).await;
    assert_eq!(after[..2], [before[1].clone(), before[0].clone()]);
    assert_eq!(after[2..], before[2..]);
    let filter = ChangeFilter { entity_id: Some(before[1].clone()), ..Default::default() };
    let logged = store.changes(&scope, &filter, 10, None).await.unwrap().items;
    assert_eq!(logged.iter().filter(|c| c.action == ChangeAction::Update).count(), 1);

    // At the top (and at the bottom) nothing moves and nothing is logged.
    let versions: Vec<i64> =
        store.sections(&scope, &home.id, 100, None).await.unwrap().items.iter().map(|s| s.version).collect();
    store.shift_section(&ctx, &scope, &after[0], -1).await.unwrap();
    store.shift_section(&ctx, &scope, after.last().unwrap(), 1).await.unwrap();
    let again: Vec<i64> =
        store.sections(&scope, &home.id, 100, None).await.unwrap().items.iter().map(|s| s.version).collect();
    assert_eq!(versions, again);
    assert!(store.shift_section(&ctx, &scope, &after[0], 2).await.is_err(), "only one place at a time");
}

#[tokio::test]
async fn equal_positions_are_spread_out_so_the_move_shows() {
    let (_dir, store, scope, page) = demo_page().await;
    let ctx = ChangeContext::system();
    let first = order(&store, &scope, &page.id).await;
    // Every section at position 7: the list falls back to id order.
    for id in order(&store, &scope, &page.id).await {
        store
            .update_section(&ctx, &scope, &id, SectionPatch { sort_order: Some(7), ..Default::default() })
            .await
            .unwrap();
    }
    let tied = order(&store, &scope, &page.id).await;
    assert!(tied.len() >= first.len());
    store.shift_section(&ctx, &scope, &tied[0], 1).await.unwrap();
    let moved = order(&store, &scope, &page.id).await;
    assert_eq!(moved[..2], [tied[1].clone(), tied[0].clone()]);
    assert_eq!(moved[2..], tied[2..]);
    let positions: Vec<i64> =
        store.sections(&scope, &page.id, 100, None).await.unwrap().items.iter().map(|s| s.sort_order).collect();
    let mut distinct = positions.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), positions.len(), "no two sections share a position after the move");
}
