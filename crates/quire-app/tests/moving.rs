//! Moving a record to a place among its siblings (`Content::move_section`,
//! `move_page`, `move_nav_item`): one transaction, the moved record alone
//! written where its neighbours leave room (one change-log record), the
//! siblings renumbered where they do not, a revision restored putting it
//! back, and a sibling that is not one refused with its field named,
//! changing nothing.

use quire_app::content::Content;
use quire_app::restore::restore_revision;
use quire_app::{Actor, Failure};
use quire_core::input::{NewNavItem, NewNavigation, NewPage, NewSection, Place};
use quire_core::model::{EntityKind, NavTargetType, Surface};
use quire_store::{ChangeFilter, PageFilter};
use quire_tools::Registry;
use serde_json::json;

struct Site {
    _dir: tempfile::TempDir,
    registry: Registry,
    actor: Actor,
    content: Content,
}

async fn site() -> Site {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let registry = Registry::new(quire_tools::Services::new(store.clone(), dir.path()));
    let actor = Actor { surface: Surface::Web, ..Actor::local_admin(scope) };
    let content = Content::new(store, actor.clone());
    Site { _dir: dir, registry, actor, content }
}

/// A new page with sections whose bodies are `names`, in that order.
async fn page_with(content: &Content, names: &[&str]) -> String {
    let page = content
        .create_page(NewPage { name: "Order".into(), slug: "order".into(), ..Default::default() })
        .await
        .unwrap();
    for name in names {
        let section = NewSection {
            template_key: "text".into(),
            content: Some(json!({ "body": name })),
            sort_order: None,
            status: None,
            hidden: None,
        };
        content.create_section(&page.id, section).await.unwrap();
    }
    page.id
}

/// The sections of `page` as (id, body, position), in order.
async fn sections(content: &Content, page: &str) -> Vec<(String, String, i64)> {
    let items = content.sections(page, 100, None).await.unwrap().items;
    items
        .into_iter()
        .map(|s| (s.id, s.content["body"].as_str().unwrap_or_default().to_string(), s.sort_order))
        .collect()
}

async fn bodies(content: &Content, page: &str) -> Vec<String> {
    sections(content, page).await.into_iter().map(|(_, body, _)| body).collect()
}

async fn id_of(content: &Content, page: &str, body: &str) -> String {
    sections(content, page).await.into_iter().find(|(_, b, _)| b == body).unwrap().0
}

/// How many changes the log holds.
async fn logged(content: &Content) -> usize {
    let mut cursor: Option<String> = None;
    let mut count = 0;
    loop {
        let page = content.changes(&ChangeFilter::default(), 500, cursor.as_deref()).await.unwrap();
        count += page.items.len();
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return count,
        }
    }
}

#[tokio::test]
async fn a_section_moves_first_last_and_between_with_one_change_each_once_renumbered() {
    let Site { content, .. } = site().await;
    let page = page_with(&content, &["a", "b", "c", "d", "e"]).await;
    let positions: Vec<i64> = sections(&content, &page).await.iter().map(|s| s.2).collect();
    assert_eq!(positions, [0, 1, 2, 3, 4], "new sections are numbered one apart");

    // No room between neighbours one apart: the siblings are renumbered, in one go.
    let before = logged(&content).await;
    content.move_section(&id_of(&content, &page, "e").await, Place::Position(1)).await.unwrap();
    assert_eq!(bodies(&content, &page).await, ["a", "e", "b", "c", "d"]);
    let positions: Vec<i64> = sections(&content, &page).await.iter().map(|s| s.2).collect();
    assert_eq!(positions, [0, 1024, 2048, 3072, 4096], "renumbered apart");
    assert_eq!(logged(&content).await - before, 4, "each renumbered section logged, the first kept its place");

    // From now on there is room: each move writes the moved section alone.
    let cases = [
        ("d", Place::Position(0), ["d", "a", "e", "b", "c"]),
        ("d", Place::Position(4), ["a", "e", "b", "c", "d"]),
        ("a", Place::Before(id_of(&content, &page, "c").await), ["e", "b", "a", "c", "d"]),
        ("e", Place::After(id_of(&content, &page, "d").await), ["b", "a", "c", "d", "e"]),
        ("c", Place::After(id_of(&content, &page, "b").await), ["b", "c", "a", "d", "e"]),
    ];
    for (body, place, want) in cases {
        let before = logged(&content).await;
        content.move_section(&id_of(&content, &page, body).await, place.clone()).await.unwrap();
        assert_eq!(bodies(&content, &page).await, want, "{body} to {place:?}");
        assert_eq!(logged(&content).await - before, 1, "one change for moving {body} to {place:?}");
        let positions: Vec<i64> = sections(&content, &page).await.iter().map(|s| s.2).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "no two share a place: {positions:?}");
    }

    // Where it already is: nothing written, nothing logged.
    let before = logged(&content).await;
    content.move_section(&id_of(&content, &page, "b").await, Place::Position(0)).await.unwrap();
    let a = id_of(&content, &page, "a").await;
    content.move_section(&id_of(&content, &page, "c").await, Place::Before(a)).await.unwrap();
    assert_eq!(logged(&content).await - before, 0);
}

#[tokio::test]
async fn restoring_the_revision_before_a_move_puts_the_order_back() {
    let Site { registry, actor, content, .. } = site().await;
    let page = page_with(&content, &["a", "b", "c", "d"]).await;
    // Renumbered once, so the moves below are the moved section's one change each.
    content.move_section(&id_of(&content, &page, "d").await, Place::Position(1)).await.unwrap();
    let moved = id_of(&content, &page, "a").await;
    content.move_section(&moved, Place::Position(0)).await.unwrap();
    assert_eq!(bodies(&content, &page).await, ["a", "d", "b", "c"], "a move to where it is is no move");
    content.move_section(&moved, Place::Position(3)).await.unwrap();
    assert_eq!(bodies(&content, &page).await, ["d", "b", "c", "a"]);
    content.move_section(&moved, Place::Before(id_of(&content, &page, "b").await)).await.unwrap();
    assert_eq!(bodies(&content, &page).await, ["d", "a", "b", "c"]);
    let revision = {
        let filter =
            ChangeFilter { entity: Some(EntityKind::Section), entity_id: Some(moved.clone()), ..Default::default() };
        // Newest first: the last move, then the move before it.
        content.changes(&filter, 10, None).await.unwrap().items[1].id
    };
    restore_revision(&registry, &actor, revision).await.unwrap();
    assert_eq!(bodies(&content, &page).await, ["d", "b", "c", "a"], "back where the move before left it");
}

#[tokio::test]
async fn a_place_next_to_what_is_not_a_sibling_is_refused_naming_its_field_and_changes_nothing() {
    let Site { content, .. } = site().await;
    let page = page_with(&content, &["a", "b", "c"]).await;
    let other = page_with_slug(&content, "elsewhere").await;
    let foreign = sections(&content, &other).await.remove(0).0;
    let a = id_of(&content, &page, "a").await;
    let was = sections(&content, &page).await;
    let before = logged(&content).await;

    let refusals = [
        (a.clone(), Place::Before(foreign.clone()), Some("before"), Failure::Invalid),
        (a.clone(), Place::After("01900000-0000-7000-8000-000000000000".into()), Some("after"), Failure::Invalid),
        (a.clone(), Place::Before(a.clone()), Some("before"), Failure::Invalid),
        (a.clone(), Place::Position(3), Some("position"), Failure::Invalid),
        ("01900000-0000-7000-8000-000000000000".into(), Place::Position(0), None, Failure::NotFound),
    ];
    for (id, place, field, failure) in refusals {
        let e = content.move_section(&id, place.clone()).await.unwrap_err();
        assert_eq!((e.failure, e.field.as_deref()), (failure, field), "{place:?}: {e:?}");
        assert!(!e.message.is_empty());
    }
    assert_eq!(sections(&content, &page).await, was, "nothing moved");
    assert_eq!(logged(&content).await, before, "nothing logged");

    // An archived sibling is no sibling any more.
    let b = id_of(&content, &page, "b").await;
    content.archive_one(EntityKind::Section, b.clone()).await.unwrap();
    let e = content.move_section(&a, Place::After(b)).await.unwrap_err();
    assert_eq!(e.field.as_deref(), Some("after"), "{e:?}");
}

async fn page_with_slug(content: &Content, slug: &str) -> String {
    let page =
        content.create_page(NewPage { name: slug.into(), slug: slug.into(), ..Default::default() }).await.unwrap();
    let section = NewSection {
        template_key: "text".into(),
        content: Some(json!({ "body": "there" })),
        sort_order: None,
        status: None,
        hidden: None,
    };
    content.create_section(&page.id, section).await.unwrap();
    page.id
}

#[tokio::test]
async fn pages_and_menu_items_move_among_their_own_siblings() {
    let Site { content, .. } = site().await;
    let roots = PageFilter { root_only: true, ..Default::default() };
    let names = |pages: Vec<quire_core::model::Page>| pages.into_iter().map(|p| p.name).collect::<Vec<_>>();
    let top = names(content.pages(&roots, 100, None).await.unwrap().items);
    assert!(top.len() >= 2, "{top:?}");
    let pages = content.pages(&roots, 100, None).await.unwrap().items;
    let last = pages.last().unwrap().id.clone();
    content.move_page(&last, Place::Position(0)).await.unwrap();
    let moved = names(content.pages(&roots, 100, None).await.unwrap().items);
    let mut want = top.clone();
    let name = want.pop().unwrap();
    want.insert(0, name);
    assert_eq!(moved, want);
    // A child page is no sibling of a top-level one.
    let child = content
        .create_page(NewPage {
            name: "Child".into(),
            slug: "child".into(),
            parent_id: Some(last.clone()),
            ..Default::default()
        })
        .await
        .unwrap();
    let e = content.move_page(&pages[0].id, Place::Before(child.id)).await.unwrap_err();
    assert_eq!(e.field.as_deref(), Some("before"), "{e:?}");

    let menu = content
        .create_navigation(NewNavigation { key: "order".into(), name: "Order".into(), max_items: None })
        .await
        .unwrap();
    let mut items = Vec::new();
    for label in ["One", "Two", "Three"] {
        let item = NewNavItem {
            label: label.into(),
            target_type: NavTargetType::Url,
            target_id: None,
            url: Some("https://example.com/".into()),
            parent_id: None,
            sort_order: None,
            visible: None,
        };
        items.push(content.create_nav_item(&menu.id, item).await.unwrap().id);
    }
    content.move_nav_item(&items[0], Place::After(items[2].clone())).await.unwrap();
    let labels: Vec<String> =
        content.nav_items(&menu.id, None, 10, None).await.unwrap().items.into_iter().map(|i| i.label).collect();
    assert_eq!(labels, ["Two", "Three", "One"]);
}
