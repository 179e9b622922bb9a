//! Release mode at the store: writes through a staged handle land in the
//! release, the drafts and the public site stay, reads through the handle
//! see the release, the release publishes what was staged (made records
//! included), and a turn's staging can be undone.

use quire_core::input::{NewPage, NewSection, PagePatch};
use quire_core::model::{ChangeContext, EntityKind, Publishing, ReleaseAction, ReleaseState, Surface};
use quire_store::{Scope, Staging, Store, StoreError};

fn agent() -> ChangeContext {
    ChangeContext {
        actor: "user:ana".into(),
        surface: Surface::Agent,
        session_id: Some("s1".into()),
        turn_id: Some("1".into()),
        publishing: Publishing::Separately,
    }
}

fn staging(scope: &Scope, turn: &str) -> Staging {
    Staging {
        release: format!("s1.{turn}"),
        name: format!("Editor, turn {turn}"),
        scope: scope.clone(),
        actor: "user:ana".into(),
        session_id: "s1".into(),
        turn_id: turn.into(),
    }
}

async fn names(store: &Store, scope: &Scope) -> (Option<String>, Option<String>, Option<String>) {
    let name = |r: Result<quire_store::DeliveredPage, StoreError>| match r {
        Ok(p) => Some(p.page.name),
        Err(StoreError::NotFound { .. }) => None,
        Err(e) => panic!("{e}"),
    };
    (
        name(store.delivery_page(scope, "about").await),
        name(store.delivery_page(scope, "pricing").await),
        name(store.delivery_page(scope, "launch").await),
    )
}

#[tokio::test]
async fn staged_writes_land_in_the_release_and_publish_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let staged = store.staged(staging(&scope, "1"));
    let ctx = agent();
    let about = store.page_by_slug(&scope, "about").await.unwrap();
    let sections = store.delivery_page(&scope, "about").await.unwrap().sections.len();
    let public = names(&store, &scope).await;

    let patch = PagePatch { name: Some("About, staged".into()), ..Default::default() };
    staged.update_page(&ctx, &scope, &about.id, patch).await.unwrap();
    // A second write sees the first: the section goes on the staged page.
    let section: NewSection = serde_json::from_value(
        serde_json::json!({"templateKey": "text", "content": {"body": "New"}, "status": "published"}),
    )
    .unwrap();
    staged.create_section(&ctx, &scope, &about.id, section).await.unwrap();
    let launch: NewPage = serde_json::from_value(serde_json::json!({"name": "Launch", "slug": "launch"})).unwrap();
    let launch = staged.create_page(&ctx, &scope, launch).await.unwrap();
    let pricing = store.page_by_slug(&scope, "pricing").await.unwrap();
    staged.archive(&ctx, &scope, EntityKind::Page, std::slice::from_ref(&pricing.id)).await.unwrap();

    // Nothing moved: not the drafts, not the public site.
    assert_eq!(store.page(&scope, &about.id).await.unwrap().name, "About");
    assert!(store.page_by_slug(&scope, "launch").await.is_err());
    assert!(store.page_by_slug(&scope, "pricing").await.is_ok());
    assert_eq!(names(&store, &scope).await, public);
    // The handle sees its release.
    assert_eq!(staged.page(&scope, &about.id).await.unwrap().name, "About, staged");
    assert_eq!(staged.page_by_slug(&scope, "launch").await.unwrap().id, launch.id);
    assert!(staged.page_by_slug(&scope, "pricing").await.is_err(), "archived in the release");

    let (review, _) = store.release_review(&scope, "s1.1").await.unwrap();
    let actions: Vec<(String, ReleaseAction)> = review.items.iter().map(|i| (i.label.clone(), i.action)).collect();
    assert_eq!(actions.len(), 3, "{actions:?}");
    assert!(actions.contains(&("pricing".into(), ReleaseAction::Archive)), "{actions:?}");
    assert!(review.items.iter().all(|i| i.conflict.is_none()), "{:?}", review.items);

    let published = store.publish_release(&ChangeContext::system(), &scope, "s1.1", None).await.unwrap();
    assert_eq!(published.state, ReleaseState::Published);
    assert_eq!(names(&store, &scope).await, (Some("About, staged".into()), None, Some("Launch".into())));
    assert_eq!(store.delivery_page(&scope, "about").await.unwrap().sections.len(), sections + 1);
    assert_eq!(store.page(&scope, &about.id).await.unwrap().name, "About, staged", "the draft is the release's");
}

#[tokio::test]
async fn what_a_turn_staged_can_be_undone_and_other_records_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let ctx = agent();
    let about = store.page_by_slug(&scope, "about").await.unwrap();
    let rename = |name: &str| PagePatch { name: Some(name.into()), ..Default::default() };
    store.staged(staging(&scope, "1")).update_page(&ctx, &scope, &about.id, rename("Turn one")).await.unwrap();
    let second = Staging { release: "s1.1".into(), ..staging(&scope, "2") };
    store.staged(second.clone()).update_page(&ctx, &scope, &about.id, rename("Turn two")).await.unwrap();
    let team = store.page_by_slug(&scope, "team").await.unwrap();
    store.staged(second.clone()).update_page(&ctx, &scope, &team.id, rename("Team, turn two")).await.unwrap();
    assert_eq!(store.release(&scope, "s1.1").await.unwrap().items.len(), 2);

    // Turn one cannot be undone over turn two's change of the same page.
    let refused = store.undo_staged_turn(&scope, "s1", "1").await.unwrap_err();
    assert!(matches!(refused, StoreError::Conflict { .. }), "{refused}");
    assert_eq!(store.undo_staged_turn(&scope, "s1", "2").await.unwrap(), 2);
    let view = store.staged(second.clone());
    assert_eq!(view.page(&scope, &about.id).await.unwrap().name, "Turn one");
    assert_eq!(view.page(&scope, &team.id).await.unwrap().name, team.name, "no longer in the release");
    assert_eq!(store.release(&scope, "s1.1").await.unwrap().items.len(), 1);

    // An image is no document: refused, and nothing is kept.
    let image = store.images(&scope, None, 1, None).await.unwrap().items.remove(0);
    let patch = quire_core::input::ImagePatch { alt: Some(Some("Staged alt".into())), ..Default::default() };
    let refused = view.update_image(&ctx, &scope, &image.id, patch).await.unwrap_err();
    assert!(matches!(&refused, StoreError::Conflict { message, .. } if message.contains("not staged")), "{refused}");
    assert_ne!(store.image(&scope, &image.id).await.unwrap().alt.as_deref(), Some("Staged alt"));
}
