//! The full-text rows and vectors of a page follow its text, and nothing
//! else: hiding or moving a section, or a status change, leaves them be;
//! editing a section's text marks the page for the embedding sweep.

use quire_core::input::{EntryPatch, NewEntry, NewPage, NewSection, SectionPatch};
use quire_core::model::{ChangeContext, EntryStatus};
use quire_store::{SearchFilter, Searched};
use serde_json::json;

const MODEL: &str = "test-embedder";

#[tokio::test]
async fn only_a_change_of_text_makes_a_page_stale_or_re_indexes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let ctx = ChangeContext::system();
    let all = SearchFilter::default();
    let page: NewPage = serde_json::from_value(json!({"name": "Harbour", "slug": "harbour"})).unwrap();
    let page = store.create_page(&ctx, &scope, page).await.unwrap();
    let text = |body: &str| -> NewSection {
        serde_json::from_value(json!({"templateKey": "text", "content": {"body": body}})).unwrap()
    };
    let first = store.create_section(&ctx, &scope, &page.id, text("Gondolas leave at sunup.")).await.unwrap();
    store.create_section(&ctx, &scope, &page.id, text("Fish market on Fridays.")).await.unwrap();
    // every page has a vector now, as the sweep would leave them
    for doc in store.documents_to_embed(Searched::Page, MODEL, 10_000).await.unwrap() {
        store.put_embedding(&doc.scope, "page", &doc.id, MODEL, "hash", doc.version, &[1.0, 0.0]).await.unwrap();
    }
    let stale = || async {
        let docs = store.documents_to_embed(Searched::Page, MODEL, 10_000).await.unwrap();
        docs.iter().any(|d| d.id == page.id)
    };
    assert!(!stale().await);

    let hide = SectionPatch { hidden: Some(true), ..Default::default() };
    store.update_section(&ctx, &scope, &first.id, hide).await.unwrap();
    store.shift_section(&ctx, &scope, &first.id, 1).await.unwrap();
    assert!(!stale().await, "hiding or moving a section changes no text");
    let found = store.search_ids(&scope, Searched::Page, "gondolas", &all, 10).await.unwrap();
    assert_eq!(found, std::slice::from_ref(&page.id));

    let edit = SectionPatch { content: Some(json!({"body": "Ferries leave at noon."})), ..Default::default() };
    store.update_section(&ctx, &scope, &first.id, edit).await.unwrap();
    assert!(stale().await, "new text needs a new vector");
    let by = |word: &'static str| store.search_ids(&scope, Searched::Page, word, &all, 10);
    assert_eq!(by("ferries").await.unwrap(), std::slice::from_ref(&page.id));
    assert!(by("gondolas").await.unwrap().is_empty());

    // a section edited while its page's text is being embedded: the vector
    // written afterwards is of the text read before, so the page stays stale
    let read = store.documents_to_embed(Searched::Page, MODEL, 10_000).await.unwrap();
    let doc = read.iter().find(|d| d.id == page.id).unwrap();
    let edit = SectionPatch { content: Some(json!({"body": "Ferries leave at dusk."})), ..Default::default() };
    store.update_section(&ctx, &scope, &first.id, edit).await.unwrap();
    store.put_embedding(&doc.scope, "page", &doc.id, MODEL, "hash2", doc.version, &[0.0, 1.0]).await.unwrap();
    assert!(stale().await, "the edit made during the embedding is embedded next");
    // the same for a page embedded for the first time: a new page with a
    // section added while it is embedded
    let fresh: NewPage = serde_json::from_value(json!({"name": "Quay", "slug": "quay"})).unwrap();
    let fresh = store.create_page(&ctx, &scope, fresh).await.unwrap();
    let read = store.documents_to_embed(Searched::Page, MODEL, 10_000).await.unwrap();
    let doc = read.iter().find(|d| d.id == fresh.id).unwrap();
    store.create_section(&ctx, &scope, &fresh.id, text("Cranes unload at night.")).await.unwrap();
    store.put_embedding(&doc.scope, "page", &doc.id, MODEL, "hash3", doc.version, &[0.0, 1.0]).await.unwrap();
    let docs = store.documents_to_embed(Searched::Page, MODEL, 10_000).await.unwrap();
    assert!(docs.iter().any(|d| d.id == fresh.id), "a first embedding misses no section added meanwhile");

    // a post: publishing keeps it found by its words, a new title by the new one
    let post: NewEntry =
        serde_json::from_value(json!({"slug": "tides", "title": "Tides", "content": {"body": "Low water at six."}}))
            .unwrap();
    let post = store.create_entry(&ctx, &scope, "blog", post).await.unwrap();
    let publish = EntryPatch { status: Some(EntryStatus::Published), ..Default::default() };
    store.update_entry(&ctx, &scope, &post.id, publish).await.unwrap();
    let posts = |word: &'static str| store.search_ids(&scope, Searched::Entry, word, &all, 10);
    assert_eq!(posts("water").await.unwrap(), std::slice::from_ref(&post.id));
    let retitle = EntryPatch { title: Some("Currents".into()), ..Default::default() };
    store.update_entry(&ctx, &scope, &post.id, retitle).await.unwrap();
    assert_eq!(posts("currents").await.unwrap(), std::slice::from_ref(&post.id));
    assert!(posts("tides").await.unwrap().is_empty());
}

/// Writes batched in one group commit are indexed once, at its end: each
/// post is found by its new title and not by its old one, and a write that
/// failed in the same batch leaves the index as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writes_of_one_group_commit_are_indexed_at_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let ctx = ChangeContext::system();
    let all = SearchFilter::default();
    let mut posts = Vec::new();
    for i in 0..20 {
        let new: NewEntry = serde_json::from_value(json!({
            "slug": format!("buoy-{i}"), "title": format!("Buoy{i}"), "content": {"body": "Moored."}
        }))
        .unwrap();
        posts.push(store.create_entry(&ctx, &scope, "blog", new).await.unwrap());
    }
    let mut tasks = Vec::new();
    for (i, post) in posts.iter().enumerate() {
        let (store, scope, ctx, id) = (store.clone(), scope.clone(), ctx.clone(), post.id.clone());
        tasks.push(tokio::spawn(async move {
            // every fifth one also takes a slug in use: refused, changes nothing
            let slug = (i % 5 == 0).then(|| "buoy-1".to_string());
            let patch = EntryPatch { title: Some(format!("Anchor{i}")), slug, ..Default::default() };
            store.update_entry(&ctx, &scope, &id, patch).await
        }));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        assert_eq!(task.await.unwrap().is_ok(), i % 5 != 0, "post {i}");
    }
    let find = |word: String| {
        let (store, scope, all) = (store.clone(), scope.clone(), all.clone());
        async move { store.search_ids(&scope, Searched::Entry, &word, &all, 10).await.unwrap() }
    };
    for (i, post) in posts.iter().enumerate() {
        let (new, old) = (find(format!("anchor{i}")).await, find(format!("buoy{i}")).await);
        if i % 5 == 0 {
            assert!(new.is_empty(), "post {i}: its refused title is not indexed");
            assert_eq!(old, std::slice::from_ref(&post.id), "post {i} keeps its old title");
        } else {
            assert_eq!(new, std::slice::from_ref(&post.id), "post {i} is found by its new title");
            assert!(old.is_empty(), "post {i}: its old title is gone from the index");
        }
    }
}
