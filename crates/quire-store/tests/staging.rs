//! Release mode at the store: writes through a staged handle land in the
//! release, the drafts and the public site stay, reads through the handle
//! see the release, the release publishes what was staged (made records
//! included), and a turn's staging can be undone.

use quire_core::input::{NewPage, NewSection, PagePatch};
use quire_core::model::{ChangeContext, EntityKind, Publishing, ReleaseAction, ReleaseState, Surface};
use quire_store::{Scope, Stage, Staging, Store, StoreError};

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
    let refused =
        store.undo_turn(&quire_store::testing::person(), &scope, "s1", "1").await.map(|r| r.staged).unwrap_err();
    assert!(matches!(refused, StoreError::Conflict { .. }), "{refused}");
    assert_eq!(store.undo_turn(&quire_store::testing::person(), &scope, "s1", "2").await.map(|r| r.staged).unwrap(), 2);
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

#[tokio::test]
async fn undoing_a_turn_leaves_a_persons_later_staging_of_the_same_document() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let about = store.page_by_slug(&scope, "about").await.unwrap();
    let patch = PagePatch { name: Some("About, by the agent".into()), ..Default::default() };
    store.staged(staging(&scope, "1")).update_page(&agent(), &scope, &about.id, patch).await.unwrap();
    // A person reviewing the turn's release stages the page again: the
    // release now holds their copy of it (the draft), not the agent's.
    let again = Stage {
        entity: EntityKind::Page,
        name: about.id.clone(),
        action: ReleaseAction::Publish,
        keep: false,
        locale: None,
    };
    store.stage(&quire_store::testing::person(), &scope, "s1.1", again).await.unwrap();

    let undone = store.undo_turn(&quire_store::testing::person(), &scope, "s1", "1").await.map(|r| r.staged);
    assert!(matches!(undone, Err(StoreError::Conflict { .. })), "the person's staging is not the turn's: {undone:?}");
    let held = store.release(&scope, "s1.1").await.unwrap();
    assert_eq!(held.items.len(), 1, "the person's staging stays");
}

#[tokio::test]
async fn an_undo_that_changes_a_document_of_the_release_stops_an_approval_of_its_publish() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let ctx = agent();
    let about = store.page_by_slug(&scope, "about").await.unwrap();
    let rename = |name: &str| PagePatch { name: Some(name.into()), ..Default::default() };
    store.staged(staging(&scope, "1")).update_page(&ctx, &scope, &about.id, rename("Turn one")).await.unwrap();
    let second = Staging { release: "s1.1".into(), ..staging(&scope, "2") };
    store.staged(second).update_page(&ctx, &scope, &about.id, rename("Turn two")).await.unwrap();
    // A person previews the publish: the page as turn two left it.
    let (review, fingerprint) = store.release_review(&scope, "s1.1").await.unwrap();
    assert!(review.items[0].differences.iter().any(|d| d.fields.iter().any(|f| f.after == "Turn two")));

    assert_eq!(store.undo_turn(&quire_store::testing::person(), &scope, "s1", "2").await.map(|r| r.staged).unwrap(), 1);
    // The release no longer holds what was approved.
    let stale = store.publish_release(&quire_store::testing::person(), &scope, "s1.1", Some(&fingerprint)).await;
    assert!(
        matches!(&stale, Err(StoreError::Conflict { message, .. }) if message.contains("since the preview")),
        "published under an approval of \"Turn two\": {:?}",
        stale.map(|r| r.state)
    );
}

#[tokio::test]
async fn a_key_a_person_took_since_the_release_made_its_page_does_not_break_the_staged_handle() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let staged = store.staged(staging(&scope, "1"));
    let launch: NewPage = serde_json::from_value(serde_json::json!({"name": "Launch", "slug": "launch"})).unwrap();
    let launch = staged.create_page(&agent(), &scope, launch).await.unwrap();
    // The release's page is in no draft, so a person may take its slug.
    let theirs: NewPage = serde_json::from_value(serde_json::json!({"name": "Theirs", "slug": "launch"})).unwrap();
    store.create_page(&quire_store::testing::person(), &scope, theirs).await.unwrap();

    // The agent can still read and write the rest of the site through its handle.
    let about = staged.page_by_slug(&scope, "about").await;
    assert!(about.is_ok(), "every read of the handle fails: {:?}", about.err());
    let patch = PagePatch { name: Some("About, staged".into()), ..Default::default() };
    staged.update_page(&agent(), &scope, &about.unwrap().id, patch).await.unwrap();
    // A write of the clashing page is refused, and the release keeps its copy.
    let patch = PagePatch { name: Some("Launch, renamed".into()), ..Default::default() };
    let refused = staged.update_page(&agent(), &scope, &launch.id, patch).await.unwrap_err();
    assert!(matches!(refused, StoreError::Conflict { .. } | StoreError::NotFound { .. }), "{refused}");
    assert_eq!(store.release(&scope, "s1.1").await.unwrap().items.len(), 2);
    // Publishing the release meets the clash and changes nothing.
    let refused = store.publish_release(&quire_store::testing::person(), &scope, "s1.1", None).await.unwrap_err();
    assert!(refused.to_string().contains("launch"), "{refused}");
    assert_eq!(store.page_by_slug(&scope, "about").await.unwrap().name, "About");
}

/// Two processes on one PostgreSQL database (replicas): an agent stages
/// changes of a page through one while a person edits the page's draft
/// through the other. Each write waits for the other; none fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_staged_write_and_a_draft_write_of_one_page_on_two_replicas_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, scope) = quire_store::testing::replicas(dir.path()).await.unwrap();
    let about = a.page_by_slug(&scope, "about").await.unwrap().id;
    let staged = a.staged(staging(&scope, "1"));
    let patch = |name: String| PagePatch { name: Some(name), ..Default::default() };
    // In the release first: every staged write then lays the page over its draft.
    staged.update_page(&agent(), &scope, &about, patch("Staged 0".into())).await.unwrap();
    let agent_writes = {
        let (staged, scope, about) = (staged.clone(), scope.clone(), about.clone());
        tokio::spawn(async move {
            for i in 1..40 {
                staged.update_page(&agent(), &scope, &about, patch(format!("Staged {i}"))).await.unwrap();
            }
        })
    };
    for i in 0..40 {
        b.update_page(&quire_store::testing::person(), &scope, &about, patch(format!("Draft {i}"))).await.unwrap();
    }
    agent_writes.await.unwrap();
    assert_eq!(a.page(&scope, &about).await.unwrap().name, "Draft 39");
    assert_eq!(staged.page(&scope, &about).await.unwrap().name, "Staged 39");
}

#[tokio::test]
async fn a_page_that_takes_the_slug_of_a_page_the_release_archives_publishes_whatever_the_order() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let staged = store.staged(staging(&scope, "1"));
    let ctx = agent();
    let person = quire_store::testing::person();
    let team = store.page_by_slug(&scope, "team").await.unwrap();
    let public = store.delivery_page(&scope, "team").await.unwrap().page.name;
    let old: NewPage = serde_json::from_value(serde_json::json!({"name": "Old plans", "slug": "plans"})).unwrap();
    let old = store.create_page(&person, &scope, old).await.unwrap();
    // The team page is staged first, then the old draft is archived and the
    // team page takes its slug.
    let rename = PagePatch { name: Some("Plans".into()), ..Default::default() };
    staged.update_page(&ctx, &scope, &team.id, rename).await.unwrap();
    staged.archive(&ctx, &scope, EntityKind::Page, std::slice::from_ref(&old.id)).await.unwrap();
    let moved = PagePatch { slug: Some("plans".into()), ..Default::default() };
    staged.update_page(&ctx, &scope, &team.id, moved).await.unwrap();

    store.publish_release(&person, &scope, "s1.1", None).await.unwrap();
    assert_eq!(store.delivery_page(&scope, "plans").await.unwrap().page.name, "Plans");
    assert!(store.page(&scope, &old.id).await.is_err(), "archived by the release");
    store.revert_release(&person, &scope, "s1.1", None).await.unwrap();
    assert_eq!(store.delivery_page(&scope, "team").await.unwrap().page.name, public);
    assert_eq!(store.page_by_slug(&scope, "plans").await.unwrap().id, old.id, "restored");
}
