//! Vectors kept in memory for semantic search: a process's own writes
//! update its copy, another process's writes are noticed at the next
//! search, archived records are left out and come back when restored, and
//! other scopes are never answered.

use quire_core::input::NewImage;
use quire_core::model::{ChangeContext, EntityKind};
use quire_store::seed::seed_demo;
use quire_store::{Scope, Store};

fn unit(v: &[f32]) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

async fn image(store: &Store, scope: &Scope, name: &str) -> String {
    let input = NewImage {
        url: format!("/uploads/{}/{name}", scope.site_id),
        filename: name.into(),
        mime: Some("image/png".into()),
        ..Default::default()
    };
    store.create_image(&ChangeContext::system(), scope, input).await.unwrap().id
}

async fn ids(store: &Store, scope: &Scope, q: &[f32]) -> Vec<String> {
    store.similar(scope, "image", "m", &unit(q), 10, 0.3).await.unwrap().into_iter().map(|(id, _)| id).collect()
}

#[tokio::test]
async fn vectors_in_memory_follow_every_write_of_any_process() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.db");
    let one = Store::open(&path).await.unwrap();
    let scope = seed_demo(&one, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    // A second process on the same database.
    let two = Store::open(&path).await.unwrap();

    let (a, b, c) =
        (image(&one, &scope, "a.png").await, image(&one, &scope, "b.png").await, image(&one, &scope, "c.png").await);
    one.put_embedding(&scope, "image", &a, "m", "h", 1, &unit(&[1.0, 0.0, 0.0])).await.unwrap();
    one.put_embedding(&scope, "image", &b, "m", "h", 1, &unit(&[0.8, 0.6, 0.0])).await.unwrap();
    assert_eq!(ids(&one, &scope, &[1.0, 0.0, 0.0]).await, [a.clone(), b.clone()], "best first");
    assert_eq!(ids(&two, &scope, &[1.0, 0.0, 0.0]).await, [a.clone(), b.clone()]);
    // Below the least similarity: not found.
    assert!(ids(&one, &scope, &[0.0, 0.0, 1.0]).await.is_empty());

    // A write of this process updates its set in place ...
    one.put_embedding(&scope, "image", &c, "m", "h", 1, &unit(&[1.0, 0.05, 0.0])).await.unwrap();
    assert_eq!(ids(&one, &scope, &[1.0, 0.0, 0.0]).await, [a.clone(), c.clone(), b.clone()]);
    // ... and another process notices it at its next search.
    assert_eq!(ids(&two, &scope, &[1.0, 0.0, 0.0]).await, [a.clone(), c.clone(), b.clone()]);
    // A changed vector moves its record, in both.
    two.put_embedding(&scope, "image", &a, "m", "h2", 1, &unit(&[0.0, 0.0, 1.0])).await.unwrap();
    assert_eq!(ids(&one, &scope, &[1.0, 0.0, 0.0]).await, [c.clone(), b.clone()]);
    assert_eq!(ids(&two, &scope, &[0.0, 0.0, 1.0]).await, [a]);

    // Archived records are left out; restored, they are found again.
    let archived =
        one.archive(&ChangeContext::system(), &scope, EntityKind::Image, std::slice::from_ref(&c)).await.unwrap();
    assert_eq!(ids(&one, &scope, &[1.0, 0.0, 0.0]).await, std::slice::from_ref(&b));
    assert_eq!(ids(&two, &scope, &[1.0, 0.0, 0.0]).await, std::slice::from_ref(&b));
    one.restore(&ChangeContext::system(), &scope, &[archived[0].id.clone()]).await.unwrap();
    assert_eq!(ids(&two, &scope, &[1.0, 0.0, 0.0]).await, [c, b]);

    // Another site, another environment or another model: nothing.
    let other = one.create_site("other", "Other", &["production"]).await.unwrap();
    let other = Scope::new(other.id, "production");
    assert!(ids(&one, &other, &[1.0, 0.0, 0.0]).await.is_empty());
    let staging = Scope::new(scope.site_id.clone(), "staging");
    assert!(ids(&one, &staging, &[1.0, 0.0, 0.0]).await.is_empty());
    assert!(one.similar(&scope, "image", "other-model", &unit(&[1.0, 0.0, 0.0]), 10, 0.3).await.unwrap().is_empty());
    // A query of another size than the set's vectors finds nothing.
    assert!(one.similar(&scope, "image", "m", &unit(&[1.0, 0.0]), 10, 0.3).await.unwrap().is_empty());
}

#[tokio::test]
async fn at_most_the_limit_and_only_live_records_however_many_are_archived() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let mut made = Vec::new();
    for i in 0..60 {
        let id = image(&store, &scope, &format!("i{i}.png")).await;
        // Closer to the query the lower i is.
        store.put_embedding(&scope, "image", &id, "m", "h", 1, &unit(&[1.0, i as f32 * 0.01, 0.0])).await.unwrap();
        made.push(id);
    }
    // The 40 best are archived: the search reads past them.
    store.archive(&ChangeContext::system(), &scope, EntityKind::Image, &made[..40]).await.unwrap();
    let found = store.similar(&scope, "image", "m", &unit(&[1.0, 0.0, 0.0]), 10, 0.3).await.unwrap();
    let found: Vec<&String> = found.iter().map(|(id, _)| id).collect();
    assert_eq!(found, made[40..50].iter().collect::<Vec<_>>());
}

/// On PostgreSQL with pgvector the records' vectors are searched in the
/// database, with the same answers; elsewhere in memory. The test script
/// builds the extension and says so (`QUIRE_TEST_PGVECTOR=required`).
#[tokio::test]
async fn records_are_searched_by_pgvector_where_it_is_installed() {
    let dir = tempfile::tempdir().unwrap();
    let store = quire_store::testing::open(dir.path()).await.unwrap();
    let expected = match (quire_store::testing::postgres_url(), std::env::var("QUIRE_TEST_PGVECTOR").as_deref()) {
        (Some(_), Ok("required")) => "pgvector",
        (Some(_), _) => store.vector_search(),
        (None, _) => "memory",
    };
    assert_eq!(store.vector_search(), expected);
    let scope = seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let (a, b, c) = (
        image(&store, &scope, "a.png").await,
        image(&store, &scope, "b.png").await,
        image(&store, &scope, "c.png").await,
    );
    store.put_embedding(&scope, "image", &a, "m", "h", 1, &unit(&[1.0, 0.0, 0.0])).await.unwrap();
    store.put_embedding(&scope, "image", &b, "m", "h", 1, &unit(&[0.8, 0.6, 0.0])).await.unwrap();
    store.put_embedding(&scope, "image", &c, "m", "h", 1, &unit(&[0.0, 0.0, 1.0])).await.unwrap();
    // Another model's vectors and another size are never compared.
    store.put_embedding(&scope, "image", &c, "other", "h", 1, &unit(&[1.0, 0.0, 0.0])).await.unwrap();
    let found = store.similar(&scope, "image", "m", &unit(&[1.0, 0.1, 0.0]), 10, 0.3).await.unwrap();
    let names: Vec<&str> = found
        .iter()
        .map(|(id, _)| {
            if id == &a {
                "a"
            } else if id == &b {
                "b"
            } else {
                "c"
            }
        })
        .collect();
    assert_eq!(names, ["a", "b"], "{found:?}");
    assert!((found[0].1 - 0.995).abs() < 0.01, "cosine similarity as the score: {found:?}");
    // A vector written again replaces the old one.
    store.put_embedding(&scope, "image", &c, "m", "h", 2, &unit(&[1.0, 0.05, 0.0])).await.unwrap();
    let found = store.similar(&scope, "image", "m", &unit(&[1.0, 0.05, 0.0]), 1, 0.3).await.unwrap();
    assert_eq!(found[0].0, c);
}

/// Notes' vectors are searched the same way: by pgvector where it is
/// installed, else in memory, among the paths the caller may see, of the
/// model asked only, a vector written again replacing the old one.
#[tokio::test]
async fn notes_are_searched_among_the_paths_in_view() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let site = scope.site_id.as_str();
    let seen = quire_store::NoteVectorStamp { stamp: "1".into(), text_hash: "h".into() };
    for (path, v) in
        [("a.md", [1.0, 0.0, 0.0]), ("b.md", [0.8, 0.6, 0.0]), ("c.md", [0.0, 0.0, 1.0]), ("d.md", [0.9, 0.1, 0.0])]
    {
        store.put_note_vector(site, path, "m", &seen, &unit(&v)).await.unwrap();
    }
    store.put_note_vector(site, "c.md", "other", &seen, &unit(&[1.0, 0.0, 0.0])).await.unwrap();
    let among: std::collections::HashSet<String> = ["a.md", "b.md", "c.md"].map(String::from).into();
    let found = store.similar_notes(site, "m", &unit(&[1.0, 0.1, 0.0]), 10, 0.3, &among).await.unwrap();
    let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["a.md", "b.md"], "d.md is not in view, c.md too far: {found:?}");
    assert!((found[0].1 - 0.995).abs() < 0.01, "cosine similarity as the score: {found:?}");
    store.put_note_vector(site, "c.md", "m", &seen, &unit(&[1.0, 0.1, 0.0])).await.unwrap();
    let found = store.similar_notes(site, "m", &unit(&[1.0, 0.1, 0.0]), 1, 0.3, &among).await.unwrap();
    assert_eq!(found[0].0, "c.md");
    store.forget_note_vectors(site, "m", &["c.md".to_string()]).await.unwrap();
    let found = store.similar_notes(site, "m", &unit(&[1.0, 0.1, 0.0]), 1, 0.3, &among).await.unwrap();
    assert_eq!(found[0].0, "a.md");
}
