//! Entry lists written as JSON straight from their rows
//! (`entry_views_json`, `delivered_entry_views_json`) hold to the bytes
//! an `EntryView` serializes to, page after page, under every filter,
//! on the working copies and on the published ones.

use quire_core::input::{NewCollection, NewEntry};
use quire_core::model::{ChangeContext, EntryStatus};
use quire_store::{EntryFilter, Listing, Scope, Store, StoreError, Version};
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

/// A collection of entries with every field filled in some and left out
/// in others, text that needs escaping, and drafts among them.
async fn notes(store: &Store, scope: &Scope) -> String {
    let ctx = ChangeContext::system();
    let collection: NewCollection = input(json!({"slug": "notes", "name": "Notes", "kind": "posts"}));
    let collection = store.create_collection(&ctx, scope, collection).await.unwrap();
    for i in 0..7 {
        let full = i % 2 == 0;
        let entry: NewEntry = input(json!({
            "slug": format!("note-{i}"),
            "title": format!("Note {i}: \"quoted\" \\ back / slash, é, 日本, 🎉"),
            "content": {"body": format!("# Note {i}\n\nLine \"two\"\r\n\\ and </script>\t é 🎉 \u{2028}")},
            "status": if i % 3 == 2 { "draft" } else { "published" },
            "author": full.then_some("Ana \"A\" Lima"),
            "category": full.then_some(if i % 4 == 0 { "Guides" } else { "News" }),
            "tags": if full { json!(["mcp", "with \"quotes\"", "ü"]) } else { json!([]) },
            "excerpt": full.then_some("A short\nsummary \\ \"said\""),
            "featuredImage": full.then_some(format!("/uploads/note-{i}.png")),
        }));
        store.create_entry(&ctx, scope, &collection.id, entry).await.unwrap();
    }
    collection.slug
}

/// The items of a typed page as serde_json writes them.
fn serialized(listing: &Listing<quire_store::EntryView>) -> Vec<String> {
    listing.items.iter().map(|e| serde_json::to_string(e).unwrap()).collect()
}

/// Every page of both lists under `filter`, `limit` at a time, compared.
async fn same_pages(store: &Store, scope: &Scope, collection: &str, filter: &EntryFilter, limit: u32) -> usize {
    let (mut cursor, mut seen) = (None::<String>, 0);
    loop {
        let typed = store.entry_views(scope, collection, filter, limit, cursor.as_deref()).await.unwrap();
        let json = store.entry_views_json(scope, collection, filter, limit, cursor.as_deref()).await.unwrap();
        assert_eq!(json.items, serialized(&typed), "{filter:?} limit {limit}");
        assert_eq!(json.next_cursor, typed.next_cursor, "{filter:?} limit {limit}");
        seen += json.items.len();
        cursor = json.next_cursor;
        if cursor.is_none() {
            return seen;
        }
    }
}

#[tokio::test]
async fn json_lists_are_the_bytes_entry_views_serialize_to() {
    let (_dir, store, scope) = open().await;
    let notes = notes(&store, &scope).await;
    let by = |f: fn(&mut EntryFilter)| {
        let mut filter = EntryFilter::default();
        f(&mut filter);
        filter
    };
    let filters = [
        EntryFilter::default(),
        by(|f| f.status = Some(EntryStatus::Published)),
        by(|f| f.status = Some(EntryStatus::Draft)),
        by(|f| f.category = Some("Guides".into())),
        by(|f| f.tag = Some("with \"quotes\"".into())),
        by(|f| f.slug = Some("note-4".into())),
        by(|f| f.missing_locale = Some("de".into())),
    ];
    for filter in &filters {
        for limit in [1, 2, 3, 100] {
            same_pages(&store, &scope, &notes, filter, limit).await;
            same_pages(&store, &scope, "blog", filter, limit).await;
        }
    }
    assert_eq!(same_pages(&store, &scope, &notes, &EntryFilter::default(), 2).await, 7);
    assert_eq!(same_pages(&store, &scope, &notes, &filters[2], 1).await, 2);
    assert_eq!(same_pages(&store, &scope, &notes, &filters[5], 1).await, 1);
}

#[tokio::test]
async fn delivered_json_lists_hold_the_published_copies_only() {
    let (_dir, store, scope) = open().await;
    let notes = notes(&store, &scope).await;
    let published = EntryFilter { status: Some(EntryStatus::Published), ..EntryFilter::default() };
    let working = store.entry_views(&scope, &notes, &published, 100, None).await.unwrap();
    let delivered = |filter: EntryFilter, limit: u32, cursor: Option<String>, version: Version| {
        let (store, scope, notes) = (&store, &scope, &notes);
        async move {
            store.delivered_entry_views_json(scope, notes, &filter, limit, cursor.as_deref(), version).await.unwrap()
        }
    };
    // Published as they were written: the same entries, the same bytes.
    let all = delivered(EntryFilter::default(), 100, None, Version::Published).await;
    assert_eq!(all.items, serialized(&working));
    assert_eq!(all.items.len(), 5);
    assert!(all.next_cursor.is_none());
    // Page by page, the same again.
    let (mut cursor, mut paged) = (None, Vec::new());
    loop {
        let page = delivered(EntryFilter::default(), 2, cursor, Version::Published).await;
        paged.extend(page.items);
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(paged, all.items);
    // A category and a tag narrow the published copies.
    let guides =
        delivered(EntryFilter { category: Some("Guides".into()), ..Default::default() }, 100, None, Version::Published);
    let guides: Vec<Value> = guides.await.items.iter().map(|i| serde_json::from_str(i).unwrap()).collect();
    assert!(!guides.is_empty() && guides.iter().all(|g| g["category"] == "Guides" && g["status"] == "published"));
    // A preview reads the working copies, drafts among them.
    let preview = delivered(EntryFilter::default(), 100, None, Version::Working).await;
    let everything = store.entry_views(&scope, &notes, &EntryFilter::default(), 100, None).await.unwrap();
    assert_eq!(preview.items, serialized(&everything));
    assert_eq!(preview.items.len(), 7);
}

#[tokio::test]
async fn json_lists_of_an_unknown_collection_are_not_found_and_of_an_empty_one_empty() {
    let (_dir, store, scope) = open().await;
    let missing = store.entry_views_json(&scope, "nowhere", &EntryFilter::default(), 20, None).await.unwrap_err();
    assert!(matches!(missing, StoreError::NotFound { .. }), "{missing:?}");
    let missing = store
        .delivered_entry_views_json(&scope, "nowhere", &EntryFilter::default(), 20, None, Version::Published)
        .await
        .unwrap_err();
    assert!(matches!(missing, StoreError::NotFound { .. }), "{missing:?}");
    let ctx = ChangeContext::system();
    let empty: NewCollection = input(json!({"slug": "empty", "name": "Empty", "kind": "entries"}));
    store.create_collection(&ctx, &scope, empty).await.unwrap();
    let none = store.entry_views_json(&scope, "empty", &EntryFilter::default(), 20, None).await.unwrap();
    assert!(none.items.is_empty() && none.next_cursor.is_none());
    let bad = store.entry_views_json(&scope, "blog", &EntryFilter::default(), 20, Some("not a cursor")).await;
    assert!(matches!(bad, Err(StoreError::Validation(_))), "{bad:?}");
}
