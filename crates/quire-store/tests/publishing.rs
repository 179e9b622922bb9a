//! Drafts and published versions: a person's writes change the draft, the
//! public site (delivery) shows the published version until the document
//! is published, parts and all; unpublish and discard; status as the
//! people's way to publish and a tool's refusal; keys given up in a draft;
//! archive and restore; undo of a turn that published directly.

use quire_core::input::{NavItemPatch, NewPage, NewSection, PagePatch, SectionPatch};
use quire_core::model::{ChangeAction, ChangeContext, EntityKind, PublishStatus, Publishing, Surface};
use quire_store::{ChangeFilter, Publication, PublishAction, Scope, Store, StoreError};
use serde_json::json;

/// Does `action` to the document `id` of `kind`, as a person.
async fn act(
    store: &Store,
    scope: &Scope,
    action: PublishAction,
    kind: EntityKind,
    id: &str,
) -> Result<Publication, StoreError> {
    store.publishing_one(&person(), scope, action, kind, id).await
}

async fn open() -> (tempfile::TempDir, Store, Scope) {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    (dir, store, scope)
}

use quire_store::testing::person;

/// A tool call: publishing is a call of its own.
fn tool() -> ChangeContext {
    ChangeContext { actor: "token:tool".into(), surface: Surface::Mcp, publishing: Publishing::Separately, ..person() }
}

fn input<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).unwrap()
}

async fn delivered_name(store: &Store, scope: &Scope, slug: &str) -> Option<String> {
    match store.delivery_page(scope, slug).await {
        Ok(page) => Some(page.page.name),
        Err(StoreError::NotFound { .. }) => None,
        Err(e) => panic!("delivery failed: {e}"),
    }
}

#[tokio::test]
async fn a_draft_change_stays_off_the_site_until_its_document_is_published() {
    let (_dir, store, scope) = open().await;
    let about = store.page_by_slug(&scope, "about").await.unwrap();
    let sections = store.delivery_page(&scope, "about").await.unwrap().sections.len();
    assert!(!store.publication(&scope, EntityKind::Page, &about.id).await.unwrap().changed);

    let patch = PagePatch { name: Some("About the harbour".into()), ..Default::default() };
    store.update_page(&person(), &scope, &about.id, patch).await.unwrap();
    let section: NewSection =
        input(json!({"templateKey": "text", "content": {"body": "Added"}, "status": "published"}));
    let added = store.create_section(&person(), &scope, &about.id, section).await.unwrap();
    assert_eq!(delivered_name(&store, &scope, "about").await.as_deref(), Some("About"));
    assert_eq!(store.delivery_page(&scope, "about").await.unwrap().sections.len(), sections);
    let state = store.publication(&scope, EntityKind::Page, &about.id).await.unwrap();
    assert!(state.published && state.changed, "{state:?}");

    let state = act(&store, &scope, PublishAction::Publish, EntityKind::Page, &about.id).await.unwrap();
    assert!(state.published && !state.changed, "{state:?}");
    let page = store.delivery_page(&scope, "about").await.unwrap();
    assert_eq!(page.page.name, "About the harbour");
    assert_eq!(page.sections.len(), sections + 1);
    assert!(page.sections.iter().any(|s| s.id == added.id));

    // One publish change, holding what was public before and after.
    let logged = publishes(&store, &scope, &about.id).await;
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0].before.as_ref().unwrap()["record"]["name"], "About");
    assert_eq!(logged[0].after.as_ref().unwrap()["record"]["name"], "About the harbour");
    let parts = logged[0].after.as_ref().unwrap()["parts"].as_array().unwrap().len();
    assert_eq!(parts, sections_of(&store, &scope, &about.id).await);
    // Publishing what is public already changes and logs nothing.
    act(&store, &scope, PublishAction::Publish, EntityKind::Page, &about.id).await.unwrap();
    assert_eq!(publishes(&store, &scope, &about.id).await.len(), 1);
}

/// The `publish` changes of record `id` by the person.
async fn publishes(store: &Store, scope: &Scope, id: &str) -> Vec<quire_core::model::Change> {
    let filter = ChangeFilter { entity_id: Some(id.to_string()), actor: Some(person().actor), ..Default::default() };
    let items = store.changes(scope, &filter, 100, None).await.unwrap().items;
    items.into_iter().filter(|c| c.action == ChangeAction::Publish).collect()
}

async fn sections_of(store: &Store, scope: &Scope, page: &str) -> usize {
    store.sections(scope, page, 100, None).await.unwrap().items.len()
}

#[tokio::test]
async fn status_publishes_for_people_and_is_refused_to_tools() {
    let (_dir, store, scope) = open().await;
    // A tool may write a draft, not publish by status.
    let draft: NewPage = input(json!({"name": "Pier", "slug": "pier"}));
    let pier = store.create_page(&tool(), &scope, draft).await.unwrap();
    let patch = PagePatch { status: Some(PublishStatus::Published), ..Default::default() };
    let refused = store.update_page(&tool(), &scope, &pier.id, patch.clone()).await.unwrap_err();
    assert!(matches!(&refused, StoreError::Validation(e) if e.to_string().contains("status")), "{refused}");
    assert_eq!(store.page(&scope, &pier.id).await.unwrap().status, PublishStatus::Draft);
    let published: NewPage = input(json!({"name": "Quay", "slug": "quay", "status": "published"}));
    assert!(store.create_page(&tool(), &scope, published).await.is_err());
    assert!(store.page_by_slug(&scope, "quay").await.is_err(), "a refused create writes nothing");

    // A person publishes by status, and unpublishes by setting it away.
    store.update_page(&person(), &scope, &pier.id, patch).await.unwrap();
    assert_eq!(delivered_name(&store, &scope, "pier").await.as_deref(), Some("Pier"));
    // Setting published again publishes the draft changes made since.
    let rename = PagePatch { name: Some("Pier 9".into()), ..Default::default() };
    store.update_page(&person(), &scope, &pier.id, rename).await.unwrap();
    assert_eq!(delivered_name(&store, &scope, "pier").await.as_deref(), Some("Pier"));
    let again = PagePatch { status: Some(PublishStatus::Published), ..Default::default() };
    store.update_page(&person(), &scope, &pier.id, again).await.unwrap();
    assert_eq!(delivered_name(&store, &scope, "pier").await.as_deref(), Some("Pier 9"));
    let away = PagePatch { status: Some(PublishStatus::Draft), ..Default::default() };
    store.update_page(&person(), &scope, &pier.id, away).await.unwrap();
    assert_eq!(delivered_name(&store, &scope, "pier").await, None);
}

#[tokio::test]
async fn unpublish_takes_a_document_off_and_discard_returns_its_draft_to_what_is_public() {
    let (_dir, store, scope) = open().await;
    let about = store.page_by_slug(&scope, "about").await.unwrap();
    let before = store.delivery_page(&scope, "about").await.unwrap();

    // Draft changes of every kind: the page, a section changed, one added, one archived.
    let patch = PagePatch { name: Some("Draft name".into()), ..Default::default() };
    store.update_page(&person(), &scope, &about.id, patch).await.unwrap();
    let first = &before.sections[0];
    let edit = SectionPatch { content: Some(json!({"heading": "Draft heading"})), ..Default::default() };
    store.update_section(&person(), &scope, &first.id, edit).await.unwrap();
    let section: NewSection = input(json!({"templateKey": "text", "content": {"body": "New"}, "status": "published"}));
    let added = store.create_section(&person(), &scope, &about.id, section).await.unwrap();
    let gone = before.sections.last().unwrap();
    store.archive(&person(), &scope, EntityKind::Section, std::slice::from_ref(&gone.id)).await.unwrap();
    assert_eq!(store.delivery_page(&scope, "about").await.unwrap().sections.len(), before.sections.len());

    let state = act(&store, &scope, PublishAction::Discard, EntityKind::Page, &about.id).await.unwrap();
    assert!(state.published && !state.changed, "{state:?}");
    assert_eq!(store.page(&scope, &about.id).await.unwrap().name, before.page.name);
    assert_eq!(store.section(&scope, &first.id).await.unwrap().content, first.content);
    assert!(store.section(&scope, &added.id).await.is_err(), "a section added in the draft is archived");
    assert_eq!(store.section(&scope, &gone.id).await.unwrap().content, gone.content, "an archived one is back");

    let state = act(&store, &scope, PublishAction::Unpublish, EntityKind::Page, &about.id).await.unwrap();
    assert!(!state.published, "{state:?}");
    assert_eq!(delivered_name(&store, &scope, "about").await, None);
    assert_eq!(store.page(&scope, &about.id).await.unwrap().status, PublishStatus::Unpublished);
    let twice = act(&store, &scope, PublishAction::Unpublish, EntityKind::Page, &about.id).await.unwrap_err();
    assert!(matches!(twice, StoreError::Conflict { .. }), "{twice}");
    let never = act(&store, &scope, PublishAction::Discard, EntityKind::Page, &about.id).await.unwrap_err();
    assert!(matches!(never, StoreError::Conflict { .. }), "{never}");
    let part = act(&store, &scope, PublishAction::Publish, EntityKind::Section, &first.id).await.unwrap_err();
    assert!(matches!(part, StoreError::Validation(_)), "{part}");
}

#[tokio::test]
async fn a_menu_is_a_draft_until_published_and_a_slug_given_up_in_a_draft_stays_taken() {
    let (_dir, store, scope) = open().await;
    let (header, items) = store.delivery_navigation(&scope, "header").await.unwrap();
    let first = &items[0];
    let patch = NavItemPatch { label: Some("Draft label".into()), ..Default::default() };
    store.update_nav_item(&person(), &scope, &first.id, patch).await.unwrap();
    assert_eq!(store.delivery_navigation(&scope, "header").await.unwrap().1[0].label, first.label);
    act(&store, &scope, PublishAction::Publish, EntityKind::Navigation, &header.id).await.unwrap();
    assert_eq!(store.delivery_navigation(&scope, "header").await.unwrap().1[0].label, "Draft label");

    // "about" renamed in a draft: the published page still holds its slug.
    let about = store.page_by_slug(&scope, "about").await.unwrap();
    let rename = PagePatch { slug: Some("about-us".into()), ..Default::default() };
    store.update_page(&person(), &scope, &about.id, rename).await.unwrap();
    let taken: NewPage = input(json!({"name": "Other", "slug": "about"}));
    let refused = store.create_page(&person(), &scope, taken.clone()).await.unwrap_err();
    assert!(matches!(&refused, StoreError::Conflict { .. }), "{refused}");
    act(&store, &scope, PublishAction::Publish, EntityKind::Page, &about.id).await.unwrap();
    store.create_page(&person(), &scope, taken).await.unwrap();
}

#[tokio::test]
async fn an_archived_document_leaves_the_site_and_comes_back_as_it_was_published() {
    let (_dir, store, scope) = open().await;
    let about = store.page_by_slug(&scope, "about").await.unwrap();
    let patch = PagePatch { name: Some("Draft name".into()), ..Default::default() };
    store.update_page(&person(), &scope, &about.id, patch).await.unwrap();
    let archives = store.archive(&person(), &scope, EntityKind::Page, std::slice::from_ref(&about.id)).await.unwrap();
    assert_eq!(delivered_name(&store, &scope, "about").await, None);
    let ids: Vec<String> = archives.iter().map(|a| a.id.clone()).collect();
    store.restore(&person(), &scope, &ids).await.unwrap();
    assert_eq!(delivered_name(&store, &scope, "about").await.as_deref(), Some("About"));
    assert!(store.publication(&scope, EntityKind::Page, &about.id).await.unwrap().changed);
}

#[tokio::test]
async fn undoing_a_turn_that_published_directly_puts_back_what_was_public() {
    let (_dir, store, scope) = open().await;
    let about = store.page_by_slug(&scope, "about").await.unwrap();
    let direct = ChangeContext {
        actor: "token:agent".into(),
        surface: Surface::Agent,
        session_id: Some("session-1".into()),
        turn_id: Some("turn-1".into()),
        publishing: Publishing::Direct,
    };
    let patch = PagePatch { name: Some("Written by the agent".into()), ..Default::default() };
    store.update_page(&direct, &scope, &about.id, patch).await.unwrap();
    let page: NewPage = input(json!({"name": "Agent page", "slug": "agent-page", "status": "published"}));
    store.create_page(&direct, &scope, page).await.unwrap();
    assert_eq!(delivered_name(&store, &scope, "about").await.as_deref(), Some("Written by the agent"));
    assert_eq!(delivered_name(&store, &scope, "agent-page").await.as_deref(), Some("Agent page"));

    store.undo_turn(&person(), &scope, "session-1", "turn-1").await.unwrap();
    assert_eq!(delivered_name(&store, &scope, "about").await.as_deref(), Some("About"));
    assert_eq!(delivered_name(&store, &scope, "agent-page").await, None);
    assert_eq!(store.page(&scope, &about.id).await.unwrap().name, "About");
}

/// An agent's turn, drafting: publishing is its own approved call.
fn agent_turn() -> ChangeContext {
    ChangeContext {
        actor: "token:agent".into(),
        surface: Surface::Agent,
        session_id: Some("session-2".into()),
        turn_id: Some("turn-1".into()),
        publishing: Publishing::Separately,
    }
}

#[tokio::test]
async fn undoing_a_turn_that_unpublished_puts_back_what_was_public_and_publishes_no_draft() {
    let (_dir, store, scope) = open().await;
    let about = store.page_by_slug(&scope, "about").await.unwrap();
    let patch = PagePatch { name: Some("Unfinished draft".into()), ..Default::default() };
    store.update_page(&person(), &scope, &about.id, patch).await.unwrap();
    // The agent's approved unpublish: a status change, then the unpublish.
    store.publishing_one(&agent_turn(), &scope, PublishAction::Unpublish, EntityKind::Page, &about.id).await.unwrap();
    assert_eq!(delivered_name(&store, &scope, "about").await, None);

    store.undo_turn(&person(), &scope, "session-2", "turn-1").await.unwrap();
    assert_eq!(
        delivered_name(&store, &scope, "about").await.as_deref(),
        Some("About"),
        "what was public, not the draft"
    );
    let page = store.page(&scope, &about.id).await.unwrap();
    assert_eq!((page.name.as_str(), page.status), ("Unfinished draft", PublishStatus::Published));
}

#[tokio::test]
async fn undoing_an_unpublish_of_a_document_archived_since_is_a_conflict() {
    let (_dir, store, scope) = open().await;
    let footer = store.navigation(&scope, "footer").await.unwrap();
    store
        .publishing_one(&agent_turn(), &scope, PublishAction::Unpublish, EntityKind::Navigation, &footer.id)
        .await
        .unwrap();
    store.archive(&person(), &scope, EntityKind::Navigation, std::slice::from_ref(&footer.id)).await.unwrap();
    let refused = store.undo_turn(&person(), &scope, "session-2", "turn-1").await.unwrap_err();
    assert!(
        matches!(&refused, StoreError::Conflict { message, .. } if message.contains("archived since")),
        "{refused}"
    );
    assert!(store.delivery_navigation(&scope, "footer").await.is_err(), "still off the site");
}

#[tokio::test]
async fn a_restore_whose_published_slug_is_taken_since_is_a_conflict() {
    let (_dir, store, scope) = open().await;
    let about = store.page_by_slug(&scope, "about").await.unwrap();
    let rename = PagePatch { slug: Some("about-us".into()), ..Default::default() };
    store.update_page(&person(), &scope, &about.id, rename).await.unwrap();
    let archives = store.archive(&person(), &scope, EntityKind::Page, std::slice::from_ref(&about.id)).await.unwrap();
    let taken: NewPage = input(json!({"name": "Other", "slug": "about", "status": "published"}));
    store.create_page(&person(), &scope, taken).await.unwrap();
    let ids: Vec<String> = archives.iter().map(|a| a.id.clone()).collect();
    let refused = store.restore(&person(), &scope, &ids).await.unwrap_err();
    assert!(matches!(&refused, StoreError::Conflict { .. }), "{refused}");
    assert!(store.page(&scope, &about.id).await.is_err(), "nothing restored");
}
