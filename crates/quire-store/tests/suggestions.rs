//! The light lists pickers offer: ids with names, archived records left
//! out, another site's never offered, limits kept.

use quire_core::model::{ChangeContext, EntityKind};
use quire_store::{EntryFilter, PageFilter};

#[tokio::test]
async fn suggestions_name_live_records_of_the_scope_only() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let ctx = ChangeContext::system();

    let pages = store.pages(&scope, &PageFilter::default(), 100, None).await.unwrap().items;
    let offered = store.page_suggestions(&scope, 100).await.unwrap();
    assert_eq!(offered.len(), pages.len());
    let about = pages.iter().find(|p| p.slug == "about").unwrap();
    let s = offered.iter().find(|s| s.id == about.id).unwrap();
    assert_eq!((s.label.as_str(), s.place.as_str()), (about.name.as_str(), "about"));
    assert_eq!(store.page_suggestions(&scope, 2).await.unwrap().len(), 2);

    let blog = store.collection(&scope, "blog").await.unwrap();
    let posts = store.entries(&scope, &blog.id, &EntryFilter::default(), 100, None).await.unwrap().items;
    let entries = store.entry_suggestions(&scope, 20, 100).await.unwrap();
    let from_blog: Vec<_> = entries.iter().filter(|e| e.place == blog.name).collect();
    assert_eq!(from_blog.len(), posts.len());
    assert_eq!(from_blog[0].id, posts[0].id, "newest first, as the entry list");
    assert_eq!(from_blog[0].label, posts[0].title);
    assert_eq!(
        store.entry_suggestions(&scope, 20, 1).await.unwrap().iter().filter(|e| e.place == blog.name).count(),
        1
    );

    let images = store.image_suggestions(&scope, 100).await.unwrap();
    assert!(!images.is_empty());
    let image = store.image(&scope, &images[0].id).await.unwrap();
    assert_eq!(images[0].place, image.url);
    assert_eq!(images[0].label, image.alt.clone().filter(|a| !a.is_empty()).unwrap_or(image.filename.clone()));

    // Archived: no longer offered.
    store.archive(&ctx, &scope, EntityKind::Page, std::slice::from_ref(&about.id)).await.unwrap();
    store.archive(&ctx, &scope, EntityKind::Entry, &[posts[0].id.clone()]).await.unwrap();
    store.archive(&ctx, &scope, EntityKind::Image, std::slice::from_ref(&image.id)).await.unwrap();
    assert!(!store.page_suggestions(&scope, 100).await.unwrap().iter().any(|s| s.id == about.id));
    assert!(!store.entry_suggestions(&scope, 20, 100).await.unwrap().iter().any(|s| s.id == posts[0].id));
    assert!(!store.image_suggestions(&scope, 100).await.unwrap().iter().any(|s| s.id == image.id));

    // Another site's records are never offered here, nor these there.
    store.create_site("other", "Other", &["production"]).await.unwrap();
    let other = store.scope_of("other", "production").await.unwrap();
    assert!(store.page_suggestions(&other, 100).await.unwrap().is_empty());
    assert!(store.entry_suggestions(&other, 20, 100).await.unwrap().is_empty());
    assert!(store.image_suggestions(&other, 100).await.unwrap().is_empty());
}
