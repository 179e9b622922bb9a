//! Schedules: a release or a document published at a time, once; one that
//! cannot publish fails with the reason and changes nothing; cancelled ones
//! never run; one due while the store was closed runs at the next open and
//! says how late it was.

use chrono::Utc;
use quire_core::input::PagePatch;
use quire_core::model::{EntityKind, JobStatus, ReleaseAction, ReleaseState};
use quire_store::{ChangeFilter, PublishAction, ScheduleTarget, Scope, Stage, Store, StoreError};
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(30);

use quire_store::testing::person;

/// Lets every schedule run (the back-office's scheduler asks the rights of
/// the person who made it).
async fn anyone(_: &Scope, _: &quire_store::Schedule) -> quire_store::Result<Option<String>> {
    Ok(None)
}

fn soon(ms: i64) -> chrono::DateTime<Utc> {
    Utc::now() + chrono::Duration::milliseconds(ms)
}

async fn delivered_name(store: &Store, scope: &Scope, slug: &str) -> Option<String> {
    match store.delivery_page(scope, slug).await {
        Ok(page) => Some(page.page.name),
        Err(StoreError::NotFound { .. }) => None,
        Err(e) => panic!("{e}"),
    }
}

async fn rename(store: &Store, scope: &Scope, slug: &str, name: &str) -> String {
    let page = store.page_by_slug(scope, slug).await.unwrap();
    let patch = PagePatch { name: Some(name.into()), ..Default::default() };
    store.update_page(&person(), scope, &page.id, patch).await.unwrap();
    page.id
}

#[tokio::test]
async fn a_scheduled_release_publishes_at_its_time_once() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let ctx = person();
    rename(&store, &scope, "about", "About, scheduled").await;
    let release = store.create_release(&ctx, &scope, "Friday", None).await.unwrap();
    let stage = Stage {
        entity: EntityKind::Page,
        name: "about".into(),
        action: ReleaseAction::Publish,
        keep: false,
        locale: None,
    };
    store.stage(&ctx, &scope, &release.id, stage).await.unwrap();
    let schedule = store.schedule(&ctx, &scope, ScheduleTarget::Release(release.id.clone()), soon(300)).await.unwrap();
    assert_eq!((schedule.target.as_str(), schedule.status), ("release", JobStatus::Queued));
    assert_eq!(store.release(&scope, &release.id).await.unwrap().state, ReleaseState::Scheduled);
    let stage = Stage {
        entity: EntityKind::Page,
        name: "team".into(),
        action: ReleaseAction::Publish,
        keep: false,
        locale: None,
    };
    let locked = store.stage(&ctx, &scope, &release.id, stage).await.unwrap_err();
    assert!(matches!(locked, StoreError::Conflict { ref message, .. } if message.contains("unschedule")), "{locked}");

    assert!(store.run_due_schedule(LEASE, anyone).await.unwrap().is_none(), "not due yet");
    assert_eq!(delivered_name(&store, &scope, "about").await.as_deref(), Some("About"));
    tokio::time::sleep(Duration::from_millis(350)).await;
    let ran = store.run_due_schedule(LEASE, anyone).await.unwrap().expect("due now");
    assert_eq!(ran.status, JobStatus::Done, "{ran:?}");
    assert!(ran.late_ms.is_some_and(|ms| (0..5_000).contains(&ms)), "{ran:?}");
    assert_eq!(delivered_name(&store, &scope, "about").await.as_deref(), Some("About, scheduled"));
    let published = store.release(&scope, &release.id).await.unwrap();
    assert_eq!((published.state, published.published_by.as_deref()), (ReleaseState::Published, Some("user:ana")));
    assert!(store.run_due_schedule(LEASE, anyone).await.unwrap().is_none(), "it ran once");
    assert!(store.schedules(&scope, false).await.unwrap().is_empty());
    assert_eq!(store.schedules(&scope, true).await.unwrap().len(), 1);
}

/// How many publish changes the log holds for record `id`.
async fn publishes_of(store: &Store, scope: &Scope, id: &str) -> usize {
    let filter = ChangeFilter { entity_id: Some(id.to_string()), ..Default::default() };
    let changes = store.changes(scope, &filter, 100, None).await.unwrap().items;
    changes.into_iter().filter(|c| c.action.as_str() == "publish").count()
}

#[tokio::test]
async fn documents_are_published_and_taken_off_at_their_times_and_a_conflict_fails_the_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let ctx = person();
    let about = rename(&store, &scope, "about", "About, at ten").await;
    let seeded = publishes_of(&store, &scope, &about).await;
    let publish =
        ScheduleTarget::Document { entity: EntityKind::Page, name: about.clone(), action: PublishAction::Publish };
    store.schedule(&ctx, &scope, publish, soon(100)).await.unwrap();
    let unpublish =
        ScheduleTarget::Document { entity: EntityKind::Page, name: "team".into(), action: PublishAction::Unpublish };
    store.schedule(&ctx, &scope, unpublish, soon(150)).await.unwrap();
    // A release whose draft moves after staging cannot publish.
    let release = store.create_release(&ctx, &scope, "Moved", None).await.unwrap();
    let stage = Stage {
        entity: EntityKind::Page,
        name: "pricing".into(),
        action: ReleaseAction::Publish,
        keep: false,
        locale: None,
    };
    store.stage(&ctx, &scope, &release.id, stage).await.unwrap();
    store.schedule(&ctx, &scope, ScheduleTarget::Release(release.id.clone()), soon(200)).await.unwrap();
    rename(&store, &scope, "pricing", "Pricing, moved").await;
    // And a cancelled one never runs.
    let cancelled =
        ScheduleTarget::Document { entity: EntityKind::Page, name: "contact".into(), action: PublishAction::Unpublish };
    let cancelled = store.schedule(&ctx, &scope, cancelled, soon(100)).await.unwrap();
    assert_eq!(store.cancel_schedule(&scope, &cancelled.id).await.unwrap().status, JobStatus::Cancelled);
    assert!(matches!(store.cancel_schedule(&scope, &cancelled.id).await, Err(StoreError::Conflict { .. })));
    assert_eq!(store.schedules(&scope, false).await.unwrap().len(), 3);

    tokio::time::sleep(Duration::from_millis(250)).await;
    let mut ran = Vec::new();
    while let Some(done) = store.run_due_schedule(LEASE, anyone).await.unwrap() {
        ran.push(done);
    }
    assert_eq!(ran.len(), 3, "{ran:?}");
    assert_eq!(delivered_name(&store, &scope, "about").await.as_deref(), Some("About, at ten"));
    assert_eq!(delivered_name(&store, &scope, "team").await, None);
    assert_eq!(delivered_name(&store, &scope, "contact").await.as_deref(), Some("Contact"));
    let failed = ran.iter().find(|s| s.target == "release").unwrap();
    assert_eq!(failed.status, JobStatus::Failed);
    assert!(failed.error.as_deref().is_some_and(|e| e.contains("draft changes")), "{failed:?}");
    assert_eq!(store.release(&scope, &release.id).await.unwrap().state, ReleaseState::Open, "open again");
    assert_eq!(delivered_name(&store, &scope, "pricing").await.as_deref(), Some("Pricing"));
    let publishes = publishes_of(&store, &scope, &about).await - seeded;
    assert_eq!(publishes, 1, "published once");
}

#[tokio::test]
async fn a_schedule_due_while_the_store_was_closed_runs_at_the_next_open_and_says_how_late() {
    let dir = tempfile::tempdir().unwrap();
    let location = quire_store::testing::location(dir.path()).await.unwrap();
    let id = {
        let store = Store::open_at(location.clone()).await.unwrap();
        let seeded = quire_store::seed::seed_demo(&store, &dir.path().join("uploads")).await.unwrap();
        let scope = seeded.scope.unwrap();
        rename(&store, &scope, "about", "About, while away").await;
        let target =
            ScheduleTarget::Document { entity: EntityKind::Page, name: "about".into(), action: PublishAction::Publish };
        let schedule = store.schedule(&person(), &scope, target, soon(100)).await.unwrap();
        store.close().await;
        schedule.id
    };
    tokio::time::sleep(Duration::from_millis(600)).await;
    let store = Store::open_at(location).await.unwrap();
    let scope = quire_store::seed::seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let ran = store.run_due_schedule(LEASE, anyone).await.unwrap().expect("due while closed");
    assert_eq!((ran.id.as_str(), ran.status), (id.as_str(), JobStatus::Done));
    assert!(ran.late_ms.is_some_and(|ms| ms >= 450), "it says it was late: {ran:?}");
    assert_eq!(delivered_name(&store, &scope, "about").await.as_deref(), Some("About, while away"));
}

/// Two processes on one database (replicas on PostgreSQL): one runs the
/// schedules as they fall due while the other cancels them. A cancel that
/// answers is one the schedule heard: cancelled, it never ran; a schedule
/// that ran was not cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_schedule_cancelled_while_another_replica_claims_it_is_cancelled_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, scope) = quire_store::testing::replicas(dir.path()).await.unwrap();
    let ctx = person();
    let mut made = Vec::new();
    for i in 0..40 {
        let slug = format!("due-{i}");
        let page = serde_json::json!({ "name": format!("Due {i}"), "slug": slug, "status": "draft" });
        let page = a.create_page(&ctx, &scope, serde_json::from_value(page).unwrap()).await.unwrap();
        let target =
            ScheduleTarget::Document { entity: EntityKind::Page, name: page.id, action: PublishAction::Publish };
        made.push((slug, a.schedule(&ctx, &scope, target, soon(200)).await.unwrap().id));
    }
    tokio::time::sleep(Duration::from_millis(250)).await;
    let runner = tokio::spawn(async move { while b.run_due_schedule(LEASE, anyone).await.unwrap().is_some() {} });
    let mut answers = Vec::new();
    for (slug, id) in &made {
        answers.push((slug.clone(), a.cancel_schedule(&scope, id).await));
    }
    runner.await.unwrap();
    for (slug, answer) in answers {
        let public = delivered_name(&a, &scope, &slug).await.is_some();
        match answer {
            Ok(s) => {
                assert_eq!(s.status, JobStatus::Cancelled, "{slug}: a cancel answered {s:?}");
                assert!(!public, "{slug}: cancelled, yet published");
            }
            Err(StoreError::Conflict { .. }) => assert!(public, "{slug}: refused, yet not run"),
            Err(e) => panic!("{slug}: {e}"),
        }
    }
}

/// Two processes on one PostgreSQL database (replicas): scheduled publishes
/// of a post (and its unpublishes) run through one while a person edits the post's draft through
/// the other. Each schedule is done; none fails for a wait on the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_scheduled_publish_while_the_draft_changes_on_another_replica_is_done() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, scope) = quire_store::testing::replicas(dir.path()).await.unwrap();
    let blog = a.collection(&scope, "blog").await.unwrap().id;
    let post = a.entry_by_slug(&scope, &blog, "hello-quire").await.unwrap().id;
    // Taken off and published again in turn: each run writes the post's status.
    for i in 0..30 {
        let action = if i % 2 == 0 { PublishAction::Unpublish } else { PublishAction::Publish };
        let target = ScheduleTarget::Document { entity: EntityKind::Entry, name: post.clone(), action };
        a.schedule(&person(), &scope, target, soon(100 + i)).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(150)).await;
    let editing = {
        let (b, scope, post) = (b.clone(), scope.clone(), post.clone());
        tokio::spawn(async move {
            for i in 0..60 {
                let patch = quire_core::input::EntryPatch { title: Some(format!("Draft {i}")), ..Default::default() };
                b.update_entry(&person(), &scope, &post, patch).await.unwrap();
            }
        })
    };
    let mut ran = Vec::new();
    while let Some(done) = a.run_due_schedule(LEASE, anyone).await.unwrap() {
        ran.push(done);
    }
    editing.await.unwrap();
    assert_eq!(ran.len(), 30);
    assert!(ran.iter().all(|s| s.status == JobStatus::Done), "{:?}", ran.iter().find(|s| s.status != JobStatus::Done));
}

/// A schedule whose person may no longer publish fails with the reason:
/// nothing is published and its release is open again.
#[tokio::test]
async fn a_schedule_refused_when_it_falls_due_fails_naming_why_and_publishes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let ctx = person();
    rename(&store, &scope, "about", "About, refused").await;
    let release = store.create_release(&ctx, &scope, "Refused", None).await.unwrap();
    let stage = Stage {
        entity: EntityKind::Page,
        name: "about".into(),
        action: ReleaseAction::Publish,
        keep: false,
        locale: None,
    };
    store.stage(&ctx, &scope, &release.id, stage).await.unwrap();
    store.schedule(&ctx, &scope, ScheduleTarget::Release(release.id.clone()), soon(50)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(80)).await;
    let refuse = async |_: &Scope, s: &quire_store::Schedule| Ok(Some(format!("{} was disabled", s.created_by)));
    let ran = store.run_due_schedule(LEASE, refuse).await.unwrap().expect("due");
    assert_eq!(ran.status, JobStatus::Failed, "{ran:?}");
    assert_eq!(ran.error.as_deref(), Some("user:ana was disabled"));
    assert_eq!(delivered_name(&store, &scope, "about").await.as_deref(), Some("About"));
    assert_eq!(store.release(&scope, &release.id).await.unwrap().state, ReleaseState::Open);
    assert!(store.run_due_schedule(LEASE, anyone).await.unwrap().is_none(), "it is not tried again");
}
