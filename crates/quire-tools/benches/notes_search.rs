//! Search of the notes vault: `searchNotes {query}` over 2,000 notes (about
//! 1 KB each, in 20 folders) with full text alone and with vectors (exact
//! cosine in memory, fused by reciprocal rank), and the cost of the
//! worker's sweep that keeps the vectors current: a sweep with nothing
//! changed (a walk of the vault's stamps against the stored ones) and one
//! after 20 notes changed.
//!
//! Run: `cargo bench -p quire-tools --bench notes_search`. The vectors come
//! from an in-process embedder (a hashed bag of words), so the figures are
//! Quire's own work; a real model adds its own time.

use quire_tools::embed::{Embedder, embed_notes};
use quire_tools::{CallContext, Registry};
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

mod common;
use common::{Demo, HashedWords, demo, percentile, search_latency};

const NOTES: usize = 2_000;
const TOPICS: &[&str] = &["garden", "invoice", "travel", "recipe", "meeting", "reading", "training", "budget"];

fn note(i: usize) -> String {
    let topic = TOPICS[i % TOPICS.len()];
    let mut text = format!("# {topic} note {i}\n\n");
    while text.len() < 1000 {
        text.push_str(&format!("Thoughts about the {topic} and what to do next, item {i}. "));
    }
    text
}

/// The queries of a row, by round.
type Query = Box<dyn Fn(usize) -> String>;

async fn table(registry: &Registry, ctx: &CallContext, label: &str) {
    let rows: [(&str, Query); 2] = [
        ("a word 250 notes hold", Box::new(|i| TOPICS[i % TOPICS.len()].to_string())),
        ("a word one note holds", Box::new(|i| format!("{}", i * 7 % NOTES))),
    ];
    for (kind, query) in rows {
        let (p50, p99, ranking) = search_latency(registry, ctx, "searchNotes", 300, query).await;
        println!(
            "| `searchNotes {{query}}` over {NOTES} notes, {kind} | {label} | {ranking} | {p50:.2} ms | {p99:.2} ms |"
        );
    }
}

#[tokio::main]
async fn main() {
    let Demo { dir: _dir, store, scope, services, ctx } = demo().await;
    let site = store.site(&scope.site_id).await.unwrap();
    let folder = services.vaults.folder(&site.slug);
    for i in 0..NOTES {
        let dir = folder.join(format!("folder-{}", i % 20));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("note-{i}.md")), note(i)).unwrap();
    }
    println!("| query | ranking | answered by | p50 | p99 |");
    println!("| --- | --- | --- | --- | --- |");
    table(&Registry::new(services.clone()), &ctx, "full text").await;

    let embedder: Arc<dyn Embedder> = Arc::new(HashedWords);
    let started = Instant::now();
    while embed_notes(&store, &services.vaults, embedder.as_ref(), 256).await.unwrap() > 0 {}
    eprintln!("embedded {NOTES} notes in {:.2} s", started.elapsed().as_secs_f64());
    let mut sweeps = Vec::new();
    for _ in 0..50 {
        let started = Instant::now();
        assert_eq!(embed_notes(&store, &services.vaults, embedder.as_ref(), 256).await.unwrap(), 0);
        sweeps.push(started.elapsed().as_secs_f64() * 1e3);
    }
    sweeps.sort_by(|a, b| a.total_cmp(b));
    let mut changed = Vec::new();
    for round in 0..10 {
        for i in 0..20 {
            let n = round * 20 + i;
            let path = folder.join(format!("folder-{}", n % 20)).join(format!("note-{n}.md"));
            std::fs::write(path, format!("{}\nEdited in round {round}.", note(n))).unwrap();
        }
        let started = Instant::now();
        assert_eq!(embed_notes(&store, &services.vaults, embedder.as_ref(), 256).await.unwrap(), 20);
        changed.push(started.elapsed().as_secs_f64() * 1e3);
    }
    changed.sort_by(|a, b| a.total_cmp(b));
    println!();
    println!("| sweep over {NOTES} notes | p50 | max |");
    println!("| --- | --- | --- |");
    println!(
        "| nothing changed (50 sweeps) | {:.2} ms | {:.2} ms |",
        percentile(&sweeps, 0.5),
        sweeps[sweeps.len() - 1]
    );
    println!(
        "| 20 notes changed (10 sweeps) | {:.2} ms | {:.2} ms |",
        percentile(&changed, 0.5),
        changed[changed.len() - 1]
    );
    println!();

    let mut with_vectors = services.clone();
    with_vectors.embedder = Some(embedder);
    let registry = Registry::new(with_vectors);
    let started = Instant::now();
    let first = registry.call(&ctx, "searchNotes", json!({"query": "garden"})).await;
    assert_eq!(first["ranking"], "hybrid", "{first}");
    eprintln!("first hybrid searchNotes (reads the vectors): {:.1} ms", started.elapsed().as_secs_f64() * 1e3);
    println!("| query | ranking | answered by | p50 | p99 |");
    println!("| --- | --- | --- | --- | --- |");
    table(&registry, &ctx, "full text + vectors in memory").await;
}
