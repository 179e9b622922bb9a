//! The rules every kind's description drives, kind by kind: a unique key
//! among live records (scope-wide, or within a parent), references that
//! must be live, trees that must not loop, what a restore checks, and the
//! agent written through the same pipeline as content. A refused write
//! changes nothing.

use quire_core::input::{AgentPatch, NewAgent, NewCollection, NewEntry, NewNavItem, NewNavigation, NewPage, PagePatch};
use quire_core::model::{ChangeAction, ChangeContext, EntityKind};
use quire_store::{ChangeFilter, Scope, Store, StoreError};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn input<T: DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

async fn open() -> (tempfile::TempDir, Store, Scope) {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    (dir, store, scope)
}

fn conflict(e: StoreError) -> String {
    match e {
        StoreError::Conflict { .. } => e.to_string(),
        other => panic!("expected a conflict, got {other:?}"),
    }
}

fn invalid(e: StoreError) -> String {
    match e {
        StoreError::Validation(_) => e.to_string(),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

async fn change_count(store: &Store, scope: &Scope) -> usize {
    store.change_summaries(scope, &ChangeFilter::default(), 10_000, None).await.unwrap().items.len()
}

#[tokio::test]
async fn unique_keys_hold_among_live_records_of_each_kind() {
    let (_dir, store, scope) = open().await;
    let ctx = ChangeContext::system();
    let logged = change_count(&store, &scope).await;

    let page = store.create_page(&ctx, &scope, input(json!({"name": "Harbour", "slug": "harbour"}))).await.unwrap();
    let dup: NewPage = input(json!({"name": "Other", "slug": "harbour"}));
    let refused = conflict(store.create_page(&ctx, &scope, dup).await.unwrap_err());
    assert!(refused.contains("slug \"harbour\" is already used by another page"), "{refused}");

    let news: NewCollection = input(json!({"slug": "news", "name": "News", "kind": "entries"}));
    let news = store.create_collection(&ctx, &scope, news).await.unwrap();
    let again: NewCollection = input(json!({"slug": "news", "name": "News 2", "kind": "entries"}));
    let refused = conflict(store.create_collection(&ctx, &scope, again).await.unwrap_err());
    assert!(refused.contains("slug \"news\" is already used by another collection"), "{refused}");

    // An entry's slug is unique within its collection only.
    let events: NewCollection = input(json!({"slug": "events", "name": "Events", "kind": "entries"}));
    let events = store.create_collection(&ctx, &scope, events).await.unwrap();
    let entry = |title: &str| -> NewEntry { input(json!({"slug": "opening", "title": title})) };
    store.create_entry(&ctx, &scope, &news.id, entry("Opening")).await.unwrap();
    store.create_entry(&ctx, &scope, &events.slug, entry("Opening night")).await.unwrap();
    let refused = conflict(store.create_entry(&ctx, &scope, "news", entry("Twice")).await.unwrap_err());
    assert!(refused.contains("slug \"opening\" is already used by another entry of the same collection"), "{refused}");

    let menu: NewNavigation = input(json!({"key": "side", "name": "Side"}));
    store.create_navigation(&ctx, &scope, menu.clone()).await.unwrap();
    let refused = conflict(store.create_navigation(&ctx, &scope, menu).await.unwrap_err());
    assert!(refused.contains("key \"side\" is already used by another navigation"), "{refused}");

    let agent: NewAgent = input(json!({"alias": "helper", "name": "Helper"}));
    store.create_agent(&ctx, &scope, agent.clone()).await.unwrap();
    let refused = conflict(store.create_agent(&ctx, &scope, agent).await.unwrap_err());
    assert!(refused.contains("alias \"helper\" is already used by another agent"), "{refused}");

    // An update to a key held by another is refused the same way; one to its own key is not.
    let patch = PagePatch { slug: Some("about".into()), ..Default::default() };
    let refused = conflict(store.update_page(&ctx, &scope, &page.id, patch).await.unwrap_err());
    assert!(refused.contains("slug \"about\" is already used by another page"), "{refused}");
    let patch = PagePatch { slug: Some("harbour".into()), name: Some("Harbour side".into()), ..Default::default() };
    store.update_page(&ctx, &scope, &page.id, patch).await.unwrap();

    // A key set free by an archive can be taken again.
    store.archive(&ctx, &scope, EntityKind::Page, std::slice::from_ref(&page.id)).await.unwrap();
    store.create_page(&ctx, &scope, input(json!({"name": "New", "slug": "harbour"}))).await.unwrap();

    // Seven creates (the system publishes as it writes, so the new menu
    // was published too), one update, one archive, one create: no refused
    // write was logged.
    assert_eq!(change_count(&store, &scope).await, logged + 11);
}

#[tokio::test]
async fn references_must_be_live_and_trees_must_not_loop() {
    let (_dir, store, scope) = open().await;
    let ctx = ChangeContext::system();
    let ghost: NewPage = input(json!({"name": "Ghost", "slug": "ghost", "parentId": "no-such-page"}));
    let refused = invalid(store.create_page(&ctx, &scope, ghost).await.unwrap_err());
    assert_eq!(refused, "parentId: page no-such-page does not exist");

    let top = store.create_page(&ctx, &scope, input(json!({"name": "Top", "slug": "top"}))).await.unwrap();
    let mid: NewPage = input(json!({"name": "Mid", "slug": "mid", "parentId": top.id}));
    let mid = store.create_page(&ctx, &scope, mid).await.unwrap();
    let loop_back = PagePatch { parent_id: Some(Some(mid.id.clone())), ..Default::default() };
    let refused = invalid(store.update_page(&ctx, &scope, &top.id, loop_back).await.unwrap_err());
    assert_eq!(refused, "parentId: moving the page there would make a cycle");
    let itself = PagePatch { parent_id: Some(Some(top.id.clone())), ..Default::default() };
    let refused = invalid(store.update_page(&ctx, &scope, &top.id, itself).await.unwrap_err());
    assert_eq!(refused, "parentId: a page cannot be its own parent");
    assert_eq!(store.page(&scope, &top.id).await.unwrap().version, top.version, "nothing was written");

    // A section on an archived page: the page is not live any more.
    store.archive(&ctx, &scope, EntityKind::Page, std::slice::from_ref(&mid.id)).await.unwrap();
    let section = input(json!({"templateKey": "text", "content": {"body": "Hi"}}));
    let refused = invalid(store.create_section(&ctx, &scope, &mid.id, section).await.unwrap_err());
    assert_eq!(refused, format!("pageId: page {} does not exist", mid.id));

    // Nav items: the parent must be of the same navigation; a full navigation takes no more at the top.
    let one: NewNavigation = input(json!({"key": "one", "name": "One", "maxItems": 1}));
    let one = store.create_navigation(&ctx, &scope, one).await.unwrap();
    let two: NewNavigation = input(json!({"key": "two", "name": "Two"}));
    let two = store.create_navigation(&ctx, &scope, two).await.unwrap();
    let link = |label: &str, parent: Option<&str>| -> NewNavItem {
        input(json!({"label": label, "targetType": "url", "url": "/x", "parentId": parent}))
    };
    let first = store.create_nav_item(&ctx, &scope, "one", link("First", None)).await.unwrap();
    let refused = conflict(store.create_nav_item(&ctx, &scope, &one.id, link("Second", None)).await.unwrap_err());
    assert!(refused.contains("navigation one is full"), "{refused}");
    let refused =
        invalid(store.create_nav_item(&ctx, &scope, &two.id, link("Child", Some(&first.id))).await.unwrap_err());
    assert_eq!(refused, "parentId: the parent item belongs to another navigation");
    store.create_nav_item(&ctx, &scope, "one", link("Child", Some(&first.id))).await.unwrap();
}

#[tokio::test]
async fn a_restore_is_refused_while_its_key_is_taken_or_its_parent_archived() {
    let (_dir, store, scope) = open().await;
    let ctx = ChangeContext::system();
    let news: NewCollection = input(json!({"slug": "news", "name": "News", "kind": "entries"}));
    let news = store.create_collection(&ctx, &scope, news).await.unwrap();
    let post: NewEntry = input(json!({"slug": "hello", "title": "Hello"}));
    let post = store.create_entry(&ctx, &scope, &news.id, post).await.unwrap();

    // The entry alone is archived, then its collection: restoring the entry first is refused.
    let entry_archive = store.archive(&ctx, &scope, EntityKind::Entry, std::slice::from_ref(&post.id)).await.unwrap();
    let collection_archive =
        store.archive(&ctx, &scope, EntityKind::Collection, std::slice::from_ref(&news.id)).await.unwrap();
    let refused = conflict(store.restore(&ctx, &scope, &[entry_archive[0].id.clone()]).await.unwrap_err());
    assert!(refused.contains(&format!("its collection {} is archived", news.id)), "{refused}");

    // Meanwhile another collection took the slug: the collection cannot come back either.
    let taken: NewCollection = input(json!({"slug": "news", "name": "Newer", "kind": "entries"}));
    let taken = store.create_collection(&ctx, &scope, taken).await.unwrap();
    let refused = conflict(store.restore(&ctx, &scope, &[collection_archive[0].id.clone()]).await.unwrap_err());
    assert!(
        refused.contains("slug \"news\" is now used by another collection; rename that collection first"),
        "{refused}"
    );

    // Once the slug is free again both come back, in order.
    store.archive(&ctx, &scope, EntityKind::Collection, std::slice::from_ref(&taken.id)).await.unwrap();
    store.restore(&ctx, &scope, &[collection_archive[0].id.clone()]).await.unwrap();
    store.restore(&ctx, &scope, &[entry_archive[0].id.clone()]).await.unwrap();
    assert_eq!(store.entry_by_slug(&scope, "news", "hello").await.unwrap().id, post.id);
}

#[tokio::test]
async fn agents_are_written_checked_logged_and_reverted_like_content() {
    let (_dir, store, scope) = open().await;
    let ctx = ChangeContext::system();
    let agent: NewAgent = input(json!({"alias": "helper", "name": "Helper"}));
    let agent = store.create_agent(&ctx, &scope, agent).await.unwrap();

    let bad = AgentPatch { name: Some("\u{202e}evil".into()), ..Default::default() };
    let refused = invalid(store.update_agent(&ctx, &scope, "helper", &bad, None).await.unwrap_err());
    assert!(refused.starts_with("name:"), "{refused}");

    let rename = AgentPatch { name: Some("Assistant".into()), ..Default::default() };
    let stale = store.update_agent(&ctx, &scope, "helper", &rename, Some(agent.version + 1)).await.unwrap_err();
    assert!(conflict(stale).contains("read it again"));
    let renamed = store.update_agent(&ctx, &scope, &agent.id, &rename, Some(agent.version)).await.unwrap();
    assert_eq!((renamed.name.as_str(), renamed.version), ("Assistant", agent.version + 1));

    let filter = ChangeFilter { entity_id: Some(agent.id.clone()), ..Default::default() };
    let changes = store.changes(&scope, &filter, 10, None).await.unwrap().items;
    let actions: Vec<&str> = changes.iter().map(|c| c.action.as_str()).collect();
    assert_eq!(actions, ["update", "create"]);
    let create = changes.iter().find(|c| c.action == ChangeAction::Create).unwrap();
    store.restore_revision(&ctx, &scope, create.id).await.unwrap();
    let back = store.agent(&scope, "helper").await.unwrap();
    assert_eq!((back.name.as_str(), back.version), ("Helper", agent.version + 2));
}

#[tokio::test]
async fn names_of_sites_tokens_and_images_refuse_characters_that_show_nothing() {
    let (_dir, store, scope) = open().await;
    let refused = invalid(store.create_site("pricing", "Pricing\u{200b}", &["production"]).await.unwrap_err());
    assert!(refused.starts_with("name: contains an invisible character (U+200B)"), "{refused}");
    let token = quire_store::NewToken::new("ci\u{2060}", quire_core::access::Group::Editor, scope.site_id.clone());
    let refused = invalid(store.create_token(token).await.unwrap_err());
    assert!(refused.starts_with("name: contains an invisible character (U+2060)"), "{refused}");

    let ctx = ChangeContext::system();
    let image = |filename: &str, tags: Vec<&str>, attribution: Value| quire_core::input::NewImage {
        url: format!("/uploads/{}/a.png", scope.site_id),
        filename: filename.into(),
        mime: Some("image/png".into()),
        tags: Some(tags.into_iter().map(String::from).collect()),
        attribution: Some(attribution),
        ..Default::default()
    };
    for (input, expected) in [
        (image("a\u{feff}.png", vec![], json!({})), "filename: contains an invisible character (U+FEFF)"),
        (image("a.png", vec!["sea\u{ad}"], json!({})), "tags.0: contains an invisible character (U+00AD)"),
        // A credit set by a person: its links follow the one rule of links.
        (
            image("a.png", vec![], json!({"photographer": "Ana", "photographerUrl": "javascript:alert(1)"})),
            "attribution.photographerUrl: \"javascript:alert(1)\" must be a relative path",
        ),
        (image("a.png", vec![], json!({"photoUrl": "//evil.example/p"})), "attribution.photoUrl: "),
        (image("a.png", vec![], json!({"url": 3})), "attribution.url: must be a link or null"),
    ] {
        let refused = invalid(store.create_image(&ctx, &scope, input).await.unwrap_err());
        assert!(refused.starts_with(expected), "{refused}");
    }
    let credit = json!({"photographer": "Ana", "photographerUrl": "https://example.com/@ana", "photoUrl": null});
    store.create_image(&ctx, &scope, image("a.png", vec!["sea"], credit)).await.unwrap();
}
