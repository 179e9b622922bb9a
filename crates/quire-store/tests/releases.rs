//! Releases: documents staged together publish together, in one
//! transaction, and revert together; a document that moved since it was
//! staged (or since the release published) stops the whole release, named,
//! and nothing changes.

use quire_core::input::{EntryPatch, NavItemPatch, PagePatch};
use quire_core::model::{EntityKind, ReleaseAction, ReleaseState};
use quire_store::{PublishAction, Scope, Stage, Store, StoreError};
use std::time::Duration;

async fn open() -> (tempfile::TempDir, Store, Scope) {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    (dir, store, scope)
}

use quire_store::testing::person;

/// What the public site shows of the documents these tests touch.
#[derive(Debug, PartialEq)]
struct Site {
    about: Option<String>,
    pricing: Option<String>,
    post: Option<String>,
    roadmap: Option<String>,
    header: Vec<String>,
}

async fn site(store: &Store, scope: &Scope) -> Site {
    let page = |slug: &'static str| async move {
        match store.delivery_page(scope, slug).await {
            Ok(p) => Some(p.page.name),
            Err(StoreError::NotFound { .. }) => None,
            Err(e) => panic!("{e}"),
        }
    };
    let blog = store.collection(scope, "blog").await.unwrap().id;
    let blog = &blog;
    let post = |slug: &'static str| async move {
        match store.delivery_entry(scope, blog, slug).await {
            Ok(e) => Some(e.title),
            Err(StoreError::NotFound { .. }) => None,
            Err(e) => panic!("{e}"),
        }
    };
    let (_, items) = store.delivery_navigation(scope, "header").await.unwrap();
    Site {
        about: page("about").await,
        pricing: page("pricing").await,
        post: post("hello-quire").await,
        roadmap: post("roadmap-draft").await,
        header: items.iter().map(|i| i.label.clone()).collect(),
    }
}

/// Stages a document by name, as a person.
async fn stage(store: &Store, scope: &Scope, release: &str, kind: EntityKind, name: &str, action: ReleaseAction) {
    store
        .stage(
            &person(),
            scope,
            release,
            Stage { entity: kind, name: name.to_string(), action, keep: false, locale: None },
        )
        .await
        .unwrap();
}

fn item(entity: EntityKind, name: &str, action: ReleaseAction, keep: bool) -> Stage {
    Stage { entity, name: name.to_string(), action, keep, locale: None }
}

fn conflict_message(e: StoreError) -> String {
    match e {
        StoreError::Conflict { message, .. } => message,
        other => panic!("expected a conflict, got {other}"),
    }
}

#[tokio::test]
async fn a_release_publishes_its_documents_together_and_reverts_them_together() {
    let (_dir, store, scope) = open().await;
    let ctx = person();
    let before = site(&store, &scope).await;
    assert_eq!(before.about.as_deref(), Some("About"));
    assert_eq!(before.post.as_deref(), Some("Hello, Quire"));
    assert!(before.roadmap.is_none(), "the roadmap is a draft");

    let about = store.page_by_slug(&scope, "about").await.unwrap();
    store
        .update_page(&ctx, &scope, &about.id, PagePatch { name: Some("About us".into()), ..Default::default() })
        .await
        .unwrap();
    let blog = store.collection(&scope, "blog").await.unwrap();
    let post = store.entry_by_slug(&scope, &blog.id, "hello-quire").await.unwrap();
    let retitle = EntryPatch { title: Some("Hello again".into()), ..Default::default() };
    store.update_entry(&ctx, &scope, &post.id, retitle).await.unwrap();
    let roadmap = store.entry_by_slug(&scope, &blog.id, "roadmap-draft").await.unwrap();
    let first = store.delivery_navigation(&scope, "header").await.unwrap().1.remove(0);
    let relabel = NavItemPatch { label: Some("Start".into()), ..Default::default() };
    store.update_nav_item(&ctx, &scope, &first.id, relabel).await.unwrap();
    assert_eq!(site(&store, &scope).await, before, "drafts stay off the site");

    let release = store.create_release(&ctx, &scope, "Spring launch", Some("About, a post, the menu")).await.unwrap();
    assert_eq!(release.state, ReleaseState::Open);
    stage(&store, &scope, &release.id, EntityKind::Page, "about", ReleaseAction::Publish).await;
    stage(&store, &scope, &release.id, EntityKind::Entry, &post.id, ReleaseAction::Publish).await;
    stage(&store, &scope, &release.id, EntityKind::Entry, &roadmap.id, ReleaseAction::Publish).await;
    stage(&store, &scope, &release.id, EntityKind::Navigation, "header", ReleaseAction::Publish).await;
    stage(&store, &scope, &release.id, EntityKind::Page, "pricing", ReleaseAction::Archive).await;
    assert_eq!(site(&store, &scope).await, before, "staging changes nothing public");

    let (review, fingerprint) = store.release_review(&scope, &release.id).await.unwrap();
    assert_eq!(review.items.len(), 5);
    assert!(review.items.iter().all(|i| i.conflict.is_none()), "{:?}", review.items);
    let about_item = review.items.iter().find(|i| i.id == about.id).unwrap();
    assert!(about_item.differences.iter().any(|d| d.fields.iter().any(|f| f.field == "name" && f.after == "About us")));
    let roadmap_item = review.items.iter().find(|i| i.id == roadmap.id).unwrap();
    assert!(!roadmap_item.differences.is_empty(), "a document never published differs whole");

    let published = store.publish_release(&ctx, &scope, &release.id, Some(&fingerprint)).await.unwrap();
    assert_eq!(published.state, ReleaseState::Published);
    assert_eq!(published.published_by.as_deref(), Some("user:ana"));
    let after = site(&store, &scope).await;
    assert_eq!(after.about.as_deref(), Some("About us"));
    assert_eq!(after.post.as_deref(), Some("Hello again"));
    assert_eq!(after.roadmap.as_deref(), Some("Roadmap (draft)"));
    assert_eq!(after.header.first().map(String::as_str), Some("Start"));
    assert_eq!(after.pricing, None, "archived by the release");

    let again = store.publish_release(&ctx, &scope, &release.id, None).await.unwrap_err();
    assert!(conflict_message(again).contains("is published"));
    let staged = store.stage(&ctx, &scope, &release.id, item(EntityKind::Page, "about", ReleaseAction::Publish, false));
    assert!(matches!(staged.await, Err(StoreError::Conflict { .. })), "a published release is closed");

    let reverted = store.revert_release(&ctx, &scope, &release.id, None).await.unwrap();
    assert_eq!(reverted.state, ReleaseState::Reverted);
    assert_eq!(site(&store, &scope).await, before, "the revert puts back what was public");
    let roadmap_now = store.entry_by_slug(&scope, &blog.id, "roadmap-draft").await.unwrap();
    assert_eq!(roadmap_now.status.as_str(), "draft", "what was never public is taken off again, kept as a draft");
}

#[tokio::test]
async fn a_document_that_moved_since_it_was_staged_stops_the_release_and_nothing_changes() {
    let (_dir, store, scope) = open().await;
    let ctx = person();
    let about = store.page_by_slug(&scope, "about").await.unwrap();
    let team = store.page_by_slug(&scope, "team").await.unwrap();
    let rename = |name: &str| PagePatch { name: Some(name.into()), ..Default::default() };
    store.update_page(&ctx, &scope, &about.id, rename("About one")).await.unwrap();
    store.update_page(&ctx, &scope, &team.id, rename("Team one")).await.unwrap();
    let release = store.create_release(&ctx, &scope, "Two pages", None).await.unwrap();
    stage(&store, &scope, &release.id, EntityKind::Page, &about.id, ReleaseAction::Publish).await;
    stage(&store, &scope, &release.id, EntityKind::Page, &team.id, ReleaseAction::Publish).await;

    // The draft changes after staging; the other page is published directly.
    store.update_page(&ctx, &scope, &about.id, rename("About two")).await.unwrap();
    store.publishing_one(&ctx, &scope, PublishAction::Publish, EntityKind::Page, &team.id).await.unwrap();
    let before = site(&store, &scope).await;
    let (review, _) = store.release_review(&scope, &release.id).await.unwrap();
    assert!(review.items.iter().all(|i| i.conflict.is_some()), "{:?}", review.items);

    let refused = conflict_message(store.publish_release(&ctx, &scope, &release.id, None).await.unwrap_err());
    assert!(refused.contains(&format!("{}) has draft changes", about.id)), "{refused}");
    assert!(refused.contains(&format!("{}) was published", team.id)), "{refused}");
    assert_eq!(site(&store, &scope).await, before);
    assert_eq!(store.release(&scope, &release.id).await.unwrap().state, ReleaseState::Open);

    // Settled: the new draft is taken for one, the release's copy kept for the other.
    stage(&store, &scope, &release.id, EntityKind::Page, &about.id, ReleaseAction::Publish).await;
    store
        .stage(&ctx, &scope, &release.id, item(EntityKind::Page, &team.id, ReleaseAction::Publish, true))
        .await
        .unwrap();
    store.publish_release(&ctx, &scope, &release.id, None).await.unwrap();
    assert_eq!(site(&store, &scope).await.about.as_deref(), Some("About two"));
    assert_eq!(store.delivery_page(&scope, "team").await.unwrap().page.name, "Team one");

    // A draft changed after the release stops its revert.
    store.update_page(&ctx, &scope, &about.id, rename("About three")).await.unwrap();
    let refused = conflict_message(store.revert_release(&ctx, &scope, &release.id, None).await.unwrap_err());
    assert!(refused.contains(&format!("{}) has draft changes", about.id)), "{refused}");
    assert_eq!(store.delivery_page(&scope, "about").await.unwrap().page.name, "About two");
}

#[tokio::test]
async fn releases_refuse_what_they_cannot_do_and_keep_what_they_held() {
    let (_dir, store, scope) = open().await;
    let ctx = person();
    assert!(matches!(store.create_release(&ctx, &scope, "  ", None).await, Err(StoreError::Validation(_))));
    let release = store.create_release(&ctx, &scope, "Odds and ends", None).await.unwrap();
    let empty = conflict_message(store.publish_release(&ctx, &scope, &release.id, None).await.unwrap_err());
    assert!(empty.contains("no documents"), "{empty}");

    let section = store.delivery_page(&scope, "about").await.unwrap().sections.remove(0);
    let refused =
        store.stage(&ctx, &scope, &release.id, item(EntityKind::Section, &section.id, ReleaseAction::Publish, false));
    match refused.await {
        Err(StoreError::Validation(e)) => assert!(e.to_string().contains("publish its page"), "{e}"),
        other => panic!("a section is no document of its own: {other:?}"),
    }
    let blog = store.collection(&scope, "blog").await.unwrap();
    let roadmap = store.entry_by_slug(&scope, &blog.id, "roadmap-draft").await.unwrap();
    let unpublish =
        store.stage(&ctx, &scope, &release.id, item(EntityKind::Entry, &roadmap.id, ReleaseAction::Unpublish, false));
    assert!(matches!(unpublish.await, Err(StoreError::Conflict { .. })), "a draft is not on the site");
    let keep = store.stage(&ctx, &scope, &release.id, item(EntityKind::Page, "about", ReleaseAction::Publish, true));
    assert!(matches!(keep.await, Err(StoreError::Conflict { .. })), "nothing to keep yet");

    stage(&store, &scope, &release.id, EntityKind::Page, "about", ReleaseAction::Publish).await;
    let (_, fingerprint) = store.release_review(&scope, &release.id).await.unwrap();
    stage(&store, &scope, &release.id, EntityKind::Page, "team", ReleaseAction::Unpublish).await;
    let stale = store.publish_release(&ctx, &scope, &release.id, Some(&fingerprint)).await.unwrap_err();
    assert!(conflict_message(stale).contains("since the preview"));

    let about = store.page_by_slug(&scope, "about").await.unwrap();
    let held = store.unstage(&ctx, &scope, &release.id, EntityKind::Page, &about.id, None).await.unwrap();
    assert_eq!(held.items.len(), 1);
    assert!(matches!(
        store.unstage(&ctx, &scope, &release.id, EntityKind::Page, &about.id, None).await,
        Err(StoreError::NotFound { .. })
    ));
    let discarded = store.discard_release(&ctx, &scope, &release.id).await.unwrap();
    assert_eq!(discarded.state, ReleaseState::Discarded);
    assert_eq!(discarded.items.len(), 1, "a discarded release keeps its documents");
    assert!(store.delivery_page(&scope, "team").await.is_ok(), "discarding publishes nothing");
    let listed = store.releases(&scope, Some(ReleaseState::Discarded)).await.unwrap();
    assert_eq!(listed.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), [release.id.as_str()]);
    assert!(store.releases(&scope, Some(ReleaseState::Open)).await.unwrap().is_empty());
}

/// A release that took a page and a post off the site, reverted: what
/// was public comes back, and the drafts the release never touched (a
/// person's work in progress) stay as they are.
#[tokio::test]
async fn reverting_a_release_that_took_documents_off_the_site_keeps_the_drafts_they_had() {
    let (_dir, store, scope) = open().await;
    let ctx = person();
    let team = store.page_by_slug(&scope, "team").await.unwrap();
    let blog = store.collection(&scope, "blog").await.unwrap();
    let post = store.entry_by_slug(&scope, &blog.id, "hello-quire").await.unwrap();
    let public = store.delivery_page(&scope, "team").await.unwrap().page.name;
    let public_post = store.delivery_entry(&scope, &blog.id, "hello-quire").await.unwrap().title;
    // Work in progress on published documents: the drafts differ from what is public.
    let patch = PagePatch { name: Some("Team, work in progress".into()), ..Default::default() };
    store.update_page(&ctx, &scope, &team.id, patch).await.unwrap();
    let patch = EntryPatch { title: Some("Hello, work in progress".into()), ..Default::default() };
    store.update_entry(&ctx, &scope, &post.id, patch).await.unwrap();
    let release = store.create_release(&ctx, &scope, "Take them off", None).await.unwrap();
    stage(&store, &scope, &release.id, EntityKind::Page, "team", ReleaseAction::Unpublish).await;
    stage(&store, &scope, &release.id, EntityKind::Entry, &post.id, ReleaseAction::Unpublish).await;
    store.publish_release(&ctx, &scope, &release.id, None).await.unwrap();
    assert!(store.delivery_page(&scope, "team").await.is_err(), "off the site");
    assert!(store.delivery_entry(&scope, &blog.id, "hello-quire").await.is_err(), "off the site");
    assert_eq!(store.page(&scope, &team.id).await.unwrap().name, "Team, work in progress", "the draft stays");

    store.revert_release(&ctx, &scope, &release.id, None).await.unwrap();
    assert_eq!(store.delivery_page(&scope, "team").await.unwrap().page.name, public, "public again, as it was");
    assert_eq!(store.delivery_entry(&scope, &blog.id, "hello-quire").await.unwrap().title, public_post);
    let (page, entry) = (store.page(&scope, &team.id).await.unwrap(), store.entry(&scope, &post.id).await.unwrap());
    assert_eq!(page.name, "Team, work in progress", "the page's draft is the person's");
    assert_eq!(entry.title, "Hello, work in progress", "the post's draft is the person's");
    assert_eq!((page.status.as_str(), entry.status.as_str()), (team.status.as_str(), post.status.as_str()));
    // Publishing the drafts now puts the work in progress on the site.
    store.publishing_one(&ctx, &scope, PublishAction::Publish, EntityKind::Page, &team.id).await.unwrap();
    assert_eq!(store.delivery_page(&scope, "team").await.unwrap().page.name, "Team, work in progress");
}

/// Two processes on one PostgreSQL database (replicas): one stages pages
/// into a release while the other publishes it. A page staged is either
/// published with the release or refused, never listed in a published
/// release without having been published by it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_document_staged_on_one_replica_while_another_publishes_is_in_the_release_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, scope) = quire_store::testing::replicas(dir.path()).await.unwrap();
    let ctx = person();
    for round in 0..8 {
        let mut slugs = Vec::new();
        for i in 0..12 {
            let slug = format!("race-{round}-{i}");
            let page = serde_json::json!({ "name": format!("Race {round} {i}"), "slug": slug, "status": "draft" });
            a.create_page(&ctx, &scope, serde_json::from_value(page).unwrap()).await.unwrap();
            slugs.push(slug);
        }
        let release = a.create_release(&ctx, &scope, &format!("Race {round}"), None).await.unwrap();
        stage(&a, &scope, &release.id, EntityKind::Page, &slugs[0], ReleaseAction::Publish).await;
        let stager = {
            let (a, scope, id, slugs) = (a.clone(), scope.clone(), release.id.clone(), slugs.clone());
            tokio::spawn(async move {
                for slug in &slugs[1..] {
                    let s = Stage {
                        entity: EntityKind::Page,
                        name: slug.clone(),
                        action: ReleaseAction::Publish,
                        keep: false,
                        locale: None,
                    };
                    if a.stage(&person(), &scope, &id, s).await.is_err() {
                        break;
                    }
                }
            })
        };
        tokio::time::sleep(Duration::from_millis(round * 3)).await;
        b.publish_release(&ctx, &scope, &release.id, None).await.unwrap();
        stager.await.unwrap();
        let published = a.release(&scope, &release.id).await.unwrap();
        assert_eq!(published.state, ReleaseState::Published);
        for item in &published.items {
            let page = a.page(&scope, &item.id).await.unwrap();
            assert!(
                a.delivery_page(&scope, &page.slug).await.is_ok(),
                "round {round}: {} is listed in the published release but was never published",
                page.slug
            );
        }
    }
}

/// Two processes on one PostgreSQL database (replicas): releases of a page
/// publish through one while a person edits the page's draft through the
/// other. A publish either goes through or names the draft's change; the
/// two never wait each for the other (a deadlock the database breaks by
/// failing one of them).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_publishing_on_one_replica_while_a_draft_changes_on_another_fails_only_by_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, scope) = quire_store::testing::replicas(dir.path()).await.unwrap();
    let about = a.page_by_slug(&scope, "about").await.unwrap().id;
    let editing = {
        let (b, scope, about) = (b.clone(), scope.clone(), about.clone());
        tokio::spawn(async move {
            for i in 0..60 {
                let patch = PagePatch { name: Some(format!("Draft {i}")), ..Default::default() };
                b.update_page(&person(), &scope, &about, patch).await.unwrap();
            }
        })
    };
    for round in 0..30 {
        let release = a.create_release(&person(), &scope, &format!("Round {round}"), None).await.unwrap();
        let s = Stage {
            entity: EntityKind::Page,
            name: about.clone(),
            action: ReleaseAction::Publish,
            keep: false,
            locale: None,
        };
        match a.stage(&person(), &scope, &release.id, s).await {
            Ok(_) | Err(StoreError::Conflict { .. }) => {}
            Err(e) => panic!("round {round}: staging failed: {e}"),
        }
        match a.publish_release(&person(), &scope, &release.id, None).await {
            Ok(_) | Err(StoreError::Conflict { .. }) => {}
            Err(e) => panic!("round {round}: {e}"),
        }
    }
    editing.await.unwrap();
}

/// As above, for a post: an entry is in no tree, and a write of its draft
/// takes its row before its document's lock, so a release does too.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_of_a_post_publishing_while_its_draft_changes_on_another_replica_fails_only_by_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, scope) = quire_store::testing::replicas(dir.path()).await.unwrap();
    let blog = a.collection(&scope, "blog").await.unwrap().id;
    let post = a.entry_by_slug(&scope, &blog, "hello-quire").await.unwrap().id;
    let editing = {
        let (b, scope, post) = (b.clone(), scope.clone(), post.clone());
        tokio::spawn(async move {
            for i in 0..60 {
                let patch = EntryPatch { title: Some(format!("Draft {i}")), ..Default::default() };
                b.update_entry(&person(), &scope, &post, patch).await.unwrap();
            }
        })
    };
    for round in 0..30 {
        let release = a.create_release(&person(), &scope, &format!("Round {round}"), None).await.unwrap();
        let s = Stage {
            entity: EntityKind::Entry,
            name: post.clone(),
            action: ReleaseAction::Publish,
            keep: false,
            locale: None,
        };
        match a.stage(&person(), &scope, &release.id, s).await {
            Ok(_) | Err(StoreError::Conflict { .. }) => {}
            Err(e) => panic!("round {round}: staging failed: {e}"),
        }
        match a.publish_release(&person(), &scope, &release.id, None).await {
            Ok(_) | Err(StoreError::Conflict { .. }) => {}
            Err(e) => panic!("round {round}: {e}"),
        }
    }
    editing.await.unwrap();
}

/// The same wait in a circle outside releases: publishing.rs's
/// `Store::publishing` takes the document's lock before its rows, a write
/// of the draft after them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_post_published_and_taken_off_on_one_replica_while_its_draft_changes_on_another_never_deadlocks() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, scope) = quire_store::testing::replicas(dir.path()).await.unwrap();
    let blog = a.collection(&scope, "blog").await.unwrap().id;
    let post = a.entry_by_slug(&scope, &blog, "hello-quire").await.unwrap().id;
    let editing = {
        let (b, scope, post) = (b.clone(), scope.clone(), post.clone());
        tokio::spawn(async move {
            for i in 0..60 {
                let patch = EntryPatch { title: Some(format!("Draft {i}")), ..Default::default() };
                b.update_entry(&person(), &scope, &post, patch).await.unwrap();
            }
        })
    };
    for round in 0..30 {
        let action = if round % 2 == 0 { PublishAction::Unpublish } else { PublishAction::Publish };
        a.publishing_one(&person(), &scope, action, EntityKind::Entry, &post).await.unwrap();
    }
    editing.await.unwrap();
}
