//! `Store::export` and `Store::import`: a whole database out as JSON lines
//! and back into an empty one, row for row (the derived full-text indexes
//! rebuilt as the rows come in); a file that is wrong anywhere, cut short,
//! of another schema, or meant for a database that holds data changes
//! nothing and says why.

use quire_core::input::{EntryPatch, NewEntry};
use quire_core::model::ChangeContext;
use quire_store::seed::{seed_bench, seed_demo};
use quire_store::{NoteVectorStamp, SearchFilter, Searched, Store, StoreError};
use serde_json::json;

async fn export(store: &Store) -> String {
    let mut out = Vec::new();
    store.export(&mut out).await.unwrap();
    String::from_utf8(out).unwrap()
}

async fn empty() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = quire_store::testing::open(dir.path()).await.unwrap();
    (dir, store)
}

async fn import(store: &Store, text: &str) -> Result<quire_store::TransferReport, StoreError> {
    store.import(&mut text.as_bytes()).await
}

/// Every line of an export but the counts of its rows.
fn rows(text: &str) -> usize {
    text.lines().filter(|l| l.starts_with('[')).count()
}

#[tokio::test]
async fn a_database_moves_row_for_row_and_is_searched_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let source = Store::open(&dir.path().join("source.db")).await.unwrap();
    let scope = seed_demo(&source, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    seed_bench(&source, &scope, 30, 60).await.unwrap();
    let ctx = ChangeContext::system();
    let input: NewEntry =
        serde_json::from_value(json!({"slug": "glacier", "title": "Glacier walks", "content": {"body": "Ice."}}))
            .unwrap();
    let post = source.create_entry(&ctx, &scope, "blog", input).await.unwrap();
    let patch = EntryPatch { title: Some("Glacier walks at dawn".into()), ..Default::default() };
    source.update_entry(&ctx, &scope, &post.id, patch).await.unwrap();
    // Blobs and reals travel too.
    source.put_embedding(&scope, "entry", &post.id, "m", "h", post.version, &[0.6, 0.8]).await.unwrap();
    let seen = NoteVectorStamp { stamp: "1:2".into(), text_hash: "h".into() };
    source.put_note_vector(&scope.site_id, "ideas.md", "m", &seen, &[1.0, 0.0]).await.unwrap();

    let first = export(&source).await;
    assert!(first.starts_with("{\"quireExport\":1,"), "{}", &first[..80]);
    assert!(rows(&first) > 200, "{} rows", rows(&first));
    assert!(!first.contains("\"table\":\"pages_fts"), "derived full-text tables are left out");
    assert!(!first.contains("\"table\":\"_sqlx_migrations\""));

    let (_d, target) = empty().await;
    let report = import(&target, &first).await.unwrap();
    assert_eq!(report.rows as usize, rows(&first));
    // The same rows, in the same order, with the same values.
    let again = export(&target).await;
    for (n, (a, b)) in again.lines().zip(first.lines()).enumerate() {
        assert_eq!(a, b, "line {} of the export of the import", n + 1);
    }
    assert_eq!(again, first, "exporting the import gives the same file");

    // The full-text indexes were rebuilt from the rows: pages (with their
    // sections) and posts are found by their words.
    let filter = SearchFilter::default();
    let found = target.search_ids(&scope, Searched::Entry, "glacier dawn", &filter, 5).await.unwrap();
    assert_eq!(found.first(), Some(&post.id));
    assert_eq!(found, source.search_ids(&scope, Searched::Entry, "glacier dawn", &filter, 5).await.unwrap());
    let before = source.search_ids(&scope, Searched::Page, "about", &filter, 5).await.unwrap();
    assert!(!before.is_empty());
    assert_eq!(target.search_ids(&scope, Searched::Page, "about", &filter, 5).await.unwrap(), before);
    // The vectors are there, in memory at the first search.
    let near = target.similar(&scope, "entry", "m", &[0.6, 0.8], 5, 0.5).await.unwrap();
    assert_eq!(near.len(), 1);
    assert_eq!(near[0].0, post.id);
    let among: std::collections::HashSet<String> = ["ideas.md".to_string()].into();
    let notes = target.similar_notes(&scope.site_id, "m", &[1.0, 0.0], 5, 0.5, &among).await.unwrap();
    assert_eq!(notes.len(), 1, "the note's vector came along (and its pgvector copy, there): {notes:?}");
    // History and revisions came along.
    let history = target.change_summaries(&scope, &Default::default(), 500, None).await.unwrap();
    assert!(history.items.iter().any(|c| c.change.entity_id == post.id), "the post's changes are in the log");
    let read = target.entry(&scope, &post.id).await.unwrap();
    assert_eq!(read.title, "Glacier walks at dawn");
    assert_eq!(read.version, source.entry(&scope, &post.id).await.unwrap().version);

    // The database now holds data: a second import is refused, and changes nothing.
    let err = import(&target, &first).await.unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err}");
    assert!(err.to_string().contains("already holds data"), "{err}");
    assert_eq!(export(&target).await, first);
    source.close().await;
    target.close().await;
}

#[tokio::test]
async fn a_wrong_file_imports_nothing_and_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let source = Store::open(&dir.path().join("source.db")).await.unwrap();
    seed_demo(&source, &dir.path().join("uploads")).await.unwrap();
    let good = export(&source).await;
    let lines: Vec<&str> = good.lines().collect();
    let row = lines.iter().rposition(|l| l.starts_with('[')).unwrap();

    let cut = lines[..lines.len() - 1].join("\n");
    let mut short_row = lines.clone();
    let shortened = format!("[{}]", lines[row].trim_start_matches('[').split(',').next().unwrap());
    short_row[row] = &shortened;
    let other_schema = good.replacen("\"schema\":", "\"schema\":1", 1);
    let mut no_such_table = lines.clone();
    let table = lines.iter().position(|l| l.starts_with("{\"table\":")).unwrap();
    let renamed = lines[table].replacen("{\"table\":\"", "{\"table\":\"nothing_", 1);
    no_such_table[table] = &renamed;
    let mut bad_value = lines.clone();
    let mut values: Vec<serde_json::Value> = serde_json::from_str(lines[row]).unwrap();
    values[0] = json!({"x": 1});
    let broken = serde_json::to_string(&values).unwrap();
    bad_value[row] = &broken;

    let cases: Vec<(String, String)> = vec![
        (String::new(), "empty".into()),
        ("{\"hello\":1}".into(), "not a Quire export".into()),
        (cut, "cut short".into()),
        (short_row.join("\n"), format!("line {}: 1 values for", row + 1)),
        (other_schema, "import with the Quire version that exported it".into()),
        (no_such_table.join("\n"), format!("line {}: this database has no table nothing_", table + 1)),
        (bad_value.join("\n"), "is neither a number, text, null nor".into()),
        (format!("{good}\n[1]"), "more after the end line".into()),
    ];
    for (text, message) in cases {
        let (_d, target) = empty().await;
        let err = import(&target, &text).await.unwrap_err();
        assert!(matches!(err, StoreError::Validation(_)), "{message}: {err}");
        assert!(err.to_string().contains(&message), "expected {message:?} in: {err}");
        assert!(err.to_string().contains("nothing was imported"), "{err}");
        assert_eq!(rows(&export(&target).await), 0, "{message}: nothing was imported");
        target.close().await;
    }
    // The good file still imports.
    let (_d, target) = empty().await;
    import(&target, &good).await.unwrap();
    assert_eq!(export(&target).await, good);
    source.close().await;
    target.close().await;
}
