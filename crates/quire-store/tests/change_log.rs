//! The change log stores what changed (the patch and the changed fields'
//! previous values), and every revision is still whole when read: history's
//! before and after, restoring a revision, undoing a turn, archive and
//! restore; and a publication reads back the document it published.

use quire_core::input::{EntryPatch, NewEntry, NewPage, NewSection, PagePatch, SectionPatch};
use quire_core::model::{ChangeAction, ChangeContext, EntityKind, Entry, SiteLocale, Surface};
use quire_store::seed::seed_demo;
use quire_store::{ChangeFilter, PublishAction, Scope, Store};
use serde_json::json;

async fn open() -> (tempfile::TempDir, Store, Scope) {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    (dir, store, scope)
}

/// On SQLite whatever the tests run on: these read the database's file.
async fn open_sqlite() -> (tempfile::TempDir, Store, Scope) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("q.db")).await.unwrap();
    let scope = seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    (dir, store, scope)
}

/// A blog post with a body of about 2 KB.
async fn post(store: &Store, scope: &Scope, slug: &str) -> Entry {
    let body = "Quire keeps a log of every change so nothing is lost. ".repeat(38);
    assert!((2000..2200).contains(&body.len()));
    let input = NewEntry {
        slug: slug.into(),
        title: "A post of two kilobytes".into(),
        content: Some(json!({ "body": body })),
        ..serde_json::from_value(json!({"slug": slug, "title": "t"})).unwrap()
    };
    store.create_entry(&ChangeContext::system(), scope, "blog", input).await.unwrap()
}

fn retitle(title: String) -> EntryPatch {
    EntryPatch { title: Some(title), ..Default::default() }
}

async fn history(store: &Store, scope: &Scope, id: &str) -> Vec<quire_core::model::Change> {
    let filter = ChangeFilter { entity_id: Some(id.into()), ..Default::default() };
    let mut items = store.changes(scope, &filter, 500, None).await.unwrap().items;
    items.reverse();
    items
}

#[tokio::test]
async fn a_title_change_of_a_2kb_post_adds_well_under_1kb() {
    let (_dir, store, scope) = open_sqlite().await;
    let entry = post(&store, &scope, "weighed").await;
    let ctx = ChangeContext::system();
    // warm up: the first writes may allocate index pages of their own
    for i in 0..20 {
        store.update_entry(&ctx, &scope, &entry.id, retitle(format!("Warm-up {i}"))).await.unwrap();
    }
    let (before, _) = store.disk_usage().await.unwrap();
    const CHANGES: u64 = 400;
    for i in 0..CHANGES {
        store.update_entry(&ctx, &scope, &entry.id, retitle(format!("Weighed title number {i}"))).await.unwrap();
    }
    let (after, _) = store.disk_usage().await.unwrap();
    let per_change = (after - before) / CHANGES;
    eprintln!("a title change of a 2 KB post adds {per_change} bytes to the database");
    // about 550 bytes: the row (ids, actor, time, the patch and the prior
    // values of title, version and updatedAt) and its three index entries,
    // plus a whole before and after once every 32 versions (~140 bytes a change)
    assert!(per_change < 800, "a title change added {per_change} bytes (whole snapshots took ~5,000)");
}

#[tokio::test]
async fn every_revision_is_whole_when_read_back() {
    let (_dir, store, scope) = open().await;
    let ctx = ChangeContext::system();
    let created = post(&store, &scope, "revised").await;
    let v2 = store.update_entry(&ctx, &scope, &created.id, retitle("Second title".into())).await.unwrap();
    let body = EntryPatch { content: Some(json!({"body": "Short now."})), ..Default::default() };
    let v3 = store.update_entry(&ctx, &scope, &created.id, body).await.unwrap();
    let changes = history(&store, &scope, &created.id).await;
    let actions: Vec<&str> = changes.iter().map(|c| c.action.as_str()).collect();
    assert_eq!(actions, ["create", "update", "update"]);
    let whole = |e: &Entry| serde_json::to_value(e).unwrap();
    assert_eq!(changes[0].before, None);
    assert_eq!(changes[0].after, Some(whole(&created)));
    assert_eq!(changes[1].before, Some(whole(&created)));
    assert_eq!(changes[1].after, Some(whole(&v2)));
    assert_eq!(changes[2].before, Some(whole(&v2)));
    assert_eq!(changes[2].after, Some(whole(&v3)));
    // one change read alone is as whole as in the listing
    assert_eq!(store.change(&scope, changes[1].id).await.unwrap(), changes[1]);

    // back to the second title's revision: the body of then, the title of then
    store.restore_revision(&ctx, &scope, changes[1].id).await.unwrap();
    let back = store.entry(&scope, &created.id).await.unwrap();
    assert_eq!((back.title.as_str(), &back.content), (v2.title.as_str(), &v2.content));
    assert_eq!(back.version, v3.version + 1);
    let revert = history(&store, &scope, &created.id).await.pop().unwrap();
    assert_eq!((revert.action.as_str(), revert.before, revert.after), ("revert", Some(whole(&v3)), Some(whole(&back))));

    // archive and restore: the archive shows the record it took, the restore the record it brought back
    let archived = store.archive(&ctx, &scope, EntityKind::Entry, std::slice::from_ref(&created.id)).await.unwrap();
    store.restore(&ctx, &scope, &[archived[0].id.clone()]).await.unwrap();
    let restored = store.entry(&scope, &created.id).await.unwrap();
    let changes = history(&store, &scope, &created.id).await;
    let n = changes.len();
    assert_eq!((changes[n - 2].action.as_str(), &changes[n - 2].before), ("archive", &Some(whole(&back))));
    assert_eq!(changes[n - 2].after, None);
    assert_eq!((changes[n - 1].action.as_str(), &changes[n - 1].after), ("restore", &Some(whole(&restored))));
    // and a change after the restore is rebuilt from it
    let v9 = store.update_entry(&ctx, &scope, &created.id, retitle("After restore".into())).await.unwrap();
    let last = history(&store, &scope, &created.id).await.pop().unwrap();
    assert_eq!((last.before, last.after), (Some(whole(&restored)), Some(whole(&v9))));
}

#[tokio::test]
async fn an_agent_turn_made_of_patches_is_undone() {
    let (_dir, store, scope) = open().await;
    let created = post(&store, &scope, "undone").await;
    let turn = ChangeContext {
        actor: "token:agent".into(),
        surface: Surface::Agent,
        session_id: Some("session-1".into()),
        turn_id: Some("turn-1".into()),
        ..ChangeContext::system()
    };
    store.update_entry(&turn, &scope, &created.id, retitle("Agent title".into())).await.unwrap();
    let body = EntryPatch { content: Some(json!({"body": "The agent's body."})), ..Default::default() };
    store.update_entry(&turn, &scope, &created.id, body).await.unwrap();
    let report = store.undo_turn(&ChangeContext::system(), &scope, "session-1", "turn-1").await.unwrap();
    assert_eq!(report.reverted.len(), 2);
    let now = store.entry(&scope, &created.id).await.unwrap();
    assert_eq!((now.title.as_str(), &now.content), (created.title.as_str(), &created.content));
    // the undo's own records are whole too
    assert_eq!(report.reverted[1].after, Some(serde_json::to_value(&now).unwrap()));
}

#[tokio::test]
async fn every_32nd_version_is_stored_whole_and_the_revisions_between_read_back_whole() {
    let (dir, store, scope) = open_sqlite().await;
    let ctx = ChangeContext::system();
    let created = post(&store, &scope, "often").await;
    let mut versions = vec![serde_json::to_value(&created).unwrap()];
    for i in 0..70 {
        let v = store.update_entry(&ctx, &scope, &created.id, retitle(format!("Title {i}"))).await.unwrap();
        versions.push(serde_json::to_value(&v).unwrap());
    }
    let changes = history(&store, &scope, &created.id).await;
    assert_eq!(changes.len(), 71);
    for (i, change) in changes.iter().enumerate().skip(1) {
        assert_eq!(change.before.as_ref(), Some(&versions[i - 1]), "before of version {}", i + 1);
        assert_eq!(change.after.as_ref(), Some(&versions[i]), "after of version {}", i + 1);
    }
    // read alone, a change past an anchor is rebuilt from that anchor
    assert_eq!(store.change(&scope, changes[69].id).await.unwrap(), changes[69]);
    // a list of summaries names the changed fields of every update, whole or patched
    let filter = ChangeFilter { entity_id: Some(created.id.clone()), ..Default::default() };
    let summaries = store.change_summaries(&scope, &filter, 100, None).await.unwrap().items;
    assert_eq!(summaries.len(), 71);
    for (summary, change) in summaries.iter().rev().zip(&changes) {
        assert_eq!((summary.change.id, &summary.change.action), (change.id, &change.action));
        let expected: &[&str] =
            if change.action == ChangeAction::Create { &[] } else { &["title", "version", "updatedAt"] };
        assert_eq!(summary.fields, expected, "fields of change {} ({})", change.id, change.action);
    }
    store.close().await;
    let db = rusqlite::Connection::open(dir.path().join("q.db")).unwrap();
    let anchors: Vec<i64> = db
        .prepare(
            "SELECT json_extract(after, '$.version') FROM changes WHERE entity_id = ?1 AND patch IS NULL ORDER BY id",
        )
        .unwrap()
        .query_map([&created.id], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(anchors, [1, 32, 64], "the create and every 32nd version are whole");
}

/// A publication keeps what it published as patches over the revisions
/// it copied (whole only what was published before): read back, each
/// publish's document is what the next publication found on the site, for
/// a page with its sections and for its translation, written and
/// republished, then taken off the site.
#[tokio::test]
async fn a_publication_reads_back_the_document_it_published() {
    let (_dir, store, scope) = open().await;
    let ctx = ChangeContext::system();
    let locales = vec![
        SiteLocale { tag: "en".into(), fallback: None, is_default: true },
        SiteLocale { tag: "de".into(), fallback: None, is_default: false },
    ];
    store.set_site_locales(&scope.site_id, locales).await.unwrap();
    let input = NewPage { name: "Garden".into(), slug: "garden".into(), ..Default::default() };
    let page = store.create_page(&ctx, &scope, input).await.unwrap();
    let mut sections = Vec::new();
    for n in 0..2 {
        let content = json!({ "heading": format!("Spring {n}"), "body": "The garden blooms." });
        let input = NewSection { template_key: "text".into(), content: Some(content), ..Default::default() };
        sections.push(store.create_section(&ctx, &scope, &page.id, input).await.unwrap().id);
    }
    let ids = [page.id.clone()];
    store.publishing(&ctx, &scope, PublishAction::Publish, EntityKind::Page, &ids, None).await.unwrap();
    let patch = SectionPatch { content: Some(json!({ "body": "The garden blooms again." })), ..Default::default() };
    store.update_section(&ctx, &scope, &sections[1], patch).await.unwrap();
    let patch = PagePatch { name: Some("The garden".into()), ..Default::default() };
    store.update_page(&ctx, &scope, &page.id, patch).await.unwrap();
    let fields = |body: &str| {
        let translated: serde_json::Map<String, serde_json::Value> =
            sections.iter().map(|s| (s.clone(), json!({ "heading": "Frühling", "body": body }))).collect();
        json!({ "name": "Garten", "slug": "garten", "sections": translated })
    };
    let de = store.put_translation(&ctx, &scope, EntityKind::Page, &page.id, "de", fields("Er blüht."), true);
    let de = de.await.unwrap();
    store
        .put_translation(&ctx, &scope, EntityKind::Page, &page.id, "de", fields("Er blüht wieder."), true)
        .await
        .unwrap();
    let translation = [de.id.clone()];
    store
        .publishing(&ctx, &scope, PublishAction::Unpublish, EntityKind::Translation, &translation, None)
        .await
        .unwrap();
    store.publishing(&ctx, &scope, PublishAction::Unpublish, EntityKind::Page, &ids, None).await.unwrap();
    for (id, parts) in [(&page.id, 2), (&de.id, 0)] {
        let publications = history(&store, &scope, id)
            .await
            .into_iter()
            .filter(|c| matches!(c.action, ChangeAction::Publish | ChangeAction::Unpublish))
            .collect::<Vec<_>>();
        assert!(publications.len() >= 3, "{id}: {} publications", publications.len());
        assert_eq!(publications[0].before, None, "{id} was not published before");
        for pair in publications.windows(2) {
            assert_eq!(pair[1].before, pair[0].after, "what change {} published", pair[0].id);
        }
        for change in &publications[..publications.len() - 1] {
            let after = change.after.as_ref().expect("a publish has what it published");
            assert_eq!(after["record"]["id"], json!(id));
            assert_eq!(
                after["parts"].as_array().map(Vec::len),
                Some(parts),
                "the parts change {} published",
                change.id
            );
        }
        // read alone, as a list reads it
        let last = &publications[publications.len() - 2];
        assert_eq!(&store.change(&scope, last.id).await.unwrap(), last);
    }
}

/// Every change of the scope, oldest first, read by the scope's own list
/// (not by any record's chain).
async fn whole_log(store: &Store, scope: &Scope) -> Vec<quire_core::model::Change> {
    let (mut all, mut cursor) = (Vec::new(), None);
    loop {
        let page = store.changes(scope, &ChangeFilter::default(), 200, cursor.as_deref()).await.unwrap();
        all.extend(page.items);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    all.reverse();
    all
}

/// Record `id`'s history read a few changes a page, oldest first.
async fn paged_history(store: &Store, scope: &Scope, filter: &ChangeFilter) -> Vec<quire_core::model::Change> {
    let (mut all, mut cursor) = (Vec::new(), None);
    loop {
        let page = store.changes(scope, filter, 7, cursor.as_deref()).await.unwrap();
        all.extend(page.items);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    all.reverse();
    all
}

/// A record's history is its chain of changes (each pointing at the one
/// before it, the newest named by the record's row): for two posts written
/// in turns past two anchors, published, archived and restored, it is
/// exactly the scope's log narrowed to the record, read whole or a page at
/// a time, by id alone or with its kind, and each revision reads back as
/// the record was.
#[tokio::test]
async fn a_record_history_is_the_log_narrowed_to_it() {
    let (_dir, store, scope) = open().await;
    let ctx = ChangeContext::system();
    let posts = [post(&store, &scope, "chained-a").await, post(&store, &scope, "chained-b").await];
    let mut versions: Vec<Vec<serde_json::Value>> =
        posts.iter().map(|p| vec![serde_json::to_value(p).unwrap()]).collect();
    for i in 0..70 {
        let which = i % 2;
        let v = store.update_entry(&ctx, &scope, &posts[which].id, retitle(format!("Turn {i}"))).await.unwrap();
        versions[which].push(serde_json::to_value(&v).unwrap());
        if i % 9 == 0 {
            let ids = [posts[which].id.clone()];
            store.publishing(&ctx, &scope, PublishAction::Publish, EntityKind::Entry, &ids, None).await.unwrap();
        }
    }
    let ids = [posts[0].id.clone()];
    let archived = store.archive(&ctx, &scope, EntityKind::Entry, &ids).await.unwrap();
    store.restore(&ctx, &scope, &[archived[0].id.clone()]).await.unwrap();
    let v = store.update_entry(&ctx, &scope, &posts[0].id, retitle("After the restore".into())).await.unwrap();
    let log = whole_log(&store, &scope).await;
    for (which, post) in posts.iter().enumerate() {
        let expected: Vec<_> = log.iter().filter(|c| c.entity_id == post.id).cloned().collect();
        assert!(expected.len() > 40, "{} changes of post {which}", expected.len());
        assert_eq!(history(&store, &scope, &post.id).await, expected, "post {which}, read whole");
        let by_id = ChangeFilter { entity_id: Some(post.id.clone()), ..Default::default() };
        assert_eq!(paged_history(&store, &scope, &by_id).await, expected, "post {which}, a page at a time");
        let with_kind = ChangeFilter { entity: Some(EntityKind::Entry), ..by_id.clone() };
        assert_eq!(paged_history(&store, &scope, &with_kind).await, expected, "post {which}, with its kind");
        let by_actor = ChangeFilter { actor: Some(ctx.actor.clone()), ..by_id.clone() };
        assert_eq!(paged_history(&store, &scope, &by_actor).await, expected, "post {which}, with its actor");
        let other = ChangeFilter { entity: Some(EntityKind::Page), ..by_id };
        assert!(store.changes(&scope, &other, 10, None).await.unwrap().items.is_empty(), "no page has its id");
        // Each revision reads back as written (a publish's change of status
        // comes between them), and each starts where the one before ended.
        let revisions: Vec<_> =
            expected.iter().filter(|c| c.after.is_some() && c.entity == EntityKind::Entry).collect();
        let revisions: Vec<_> = revisions
            .into_iter()
            .filter(|c| !matches!(c.action, ChangeAction::Publish | ChangeAction::Unpublish))
            .collect();
        let mut written = versions[which].clone();
        if which == 0 {
            written.push(serde_json::to_value(&v).unwrap());
        }
        let mut left = written.iter();
        let mut next = left.next();
        for change in &revisions {
            if next == change.after.as_ref() {
                next = left.next();
            }
        }
        assert_eq!(next, None, "every revision of post {which} as it was written, in order");
        for pair in revisions.windows(2).filter(|p| p[1].action == ChangeAction::Update) {
            assert_eq!(pair[1].before, pair[0].after, "change {} starts where {} ended", pair[1].id, pair[0].id);
        }
    }
}

/// A database made before the chains gets them from its log: every
/// record's history (a post past its anchors and published, a note) reads
/// back the same after the migration, and goes on from there.
#[tokio::test]
async fn the_migration_to_chains_keeps_every_history() {
    let (dir, store, scope) = open_sqlite().await;
    let ctx = ChangeContext::system();
    let created = post(&store, &scope, "migrated").await;
    for i in 0..40 {
        store.update_entry(&ctx, &scope, &created.id, retitle(format!("Title {i}"))).await.unwrap();
        if i % 15 == 0 {
            let ids = [created.id.clone()];
            store.publishing(&ctx, &scope, PublishAction::Publish, EntityKind::Entry, &ids, None).await.unwrap();
        }
    }
    for i in 0..3 {
        let (before, after) = (json!(format!("note {i}")), json!(format!("note {}", i + 1)));
        store
            .log_note_change(&ctx, &scope, "notes/a.md", ChangeAction::Update, Some(before), Some(after))
            .await
            .unwrap();
    }
    let before = whole_log(&store, &scope).await;
    let ids: Vec<String> =
        before.iter().map(|c| c.entity_id.clone()).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let mut histories = Vec::new();
    for id in &ids {
        histories.push(history(&store, &scope, id).await);
    }
    store.close().await;
    // The schema as it was before the chains, the log as it was written.
    let db = rusqlite::Connection::open(dir.path().join("q.db")).unwrap();
    let mut undo = String::from(
        "DROP TABLE change_heads; ALTER TABLE changes DROP COLUMN prev; ALTER TABLE changes DROP COLUMN prev_revision;
         CREATE INDEX changes_entity ON changes (site_id, env, entity, entity_id, id);
         DELETE FROM _sqlx_migrations WHERE description = 'change chains';",
    );
    for table in [
        "pages",
        "page_sections",
        "section_templates",
        "collections",
        "entries",
        "images",
        "navigations",
        "nav_items",
        "agents",
        "translations",
        "contexts",
        "workspaces",
    ] {
        undo.push_str(&format!("ALTER TABLE {table} DROP COLUMN last_change;"));
    }
    db.execute_batch(&undo).unwrap();
    drop(db);
    let store = Store::open(&dir.path().join("q.db")).await.unwrap();
    assert_eq!(whole_log(&store, &scope).await, before);
    for (id, expected) in ids.iter().zip(&histories) {
        assert_eq!(&history(&store, &scope, id).await, expected, "the history of {id}");
    }
    let v = store.update_entry(&ctx, &scope, &created.id, retitle("After".into())).await.unwrap();
    let after = history(&store, &scope, &created.id).await;
    let old = &histories[ids.iter().position(|id| *id == created.id).unwrap()];
    assert_eq!(&after[..old.len()], &old[..], "the history goes on from where it was");
    let update = after[old.len()..].iter().find(|c| c.action == ChangeAction::Update).expect("the update is logged");
    assert_eq!(update.after, Some(serde_json::to_value(&v).unwrap()));
    let last_revision = old.iter().rev().find(|c| c.action == ChangeAction::Update).unwrap();
    assert_eq!(update.before, last_revision.after, "the update starts from the revision before the migration");
}
