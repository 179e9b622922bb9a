//! Search of pages and posts: `getPage {query}` over the seeded 1,000
//! pages (each with a text section) and `getPost {query}` over the seeded
//! 10,000 posts (about 2 KB of markdown each), with full text alone and
//! with vectors (384 dimensions, exact cosine in memory, fused by
//! reciprocal rank). Two kinds of query: words every record holds (the
//! full-text ranking sorts all of them) and a word only one record holds.
//!
//! Run: `cargo bench -p quire-tools --bench content_search`. The vectors
//! come from an in-process embedder (a hashed bag of words), so the
//! figures are Quire's own work; a real model adds its own time per query.

use quire_tools::{CallContext, Registry};
use serde_json::json;
use std::time::Instant;

mod common;
use common::{Demo, demo, search_latency, seed_dataset, with_vectors};

/// Words of the seeded paragraph: every page and post holds them.
const BROAD: &[&str] = &["change log", "archives instead of deleting", "keeps every change", "quire deleting log"];

/// A row of the table: tool, what it searches, the kind of query, the queries.
type Row = (&'static str, &'static str, &'static str, Box<dyn Fn(usize) -> String>);

async fn table(registry: &Registry, ctx: &CallContext, label: &str) {
    let n = 300;
    let rows: [Row; 6] = [
        ("getPage", "1,000 pages", "words every page holds", Box::new(|i| BROAD[i % BROAD.len()].to_string())),
        (
            "getPage",
            "1,000 pages",
            "a word every page holds and one only one holds",
            Box::new(|i| format!("page {}", i * 3 % 1000)),
        ),
        ("getPage", "1,000 pages", "a word one page holds", Box::new(|i| format!("{}", i * 3 % 1000))),
        ("getPost", "10,000 posts", "words every post holds", Box::new(|i| BROAD[i % BROAD.len()].to_string())),
        (
            "getPost",
            "10,000 posts",
            "a word every post holds and one only one holds",
            Box::new(|i| format!("post {}", i * 31 % 10_000)),
        ),
        ("getPost", "10,000 posts", "a word one post holds", Box::new(|i| format!("{}", i * 31 % 10_000))),
    ];
    for (tool, over, kind, query) in rows {
        let (p50, p99, ranking) = search_latency(registry, ctx, tool, n, query).await;
        println!("| `{tool} {{query}}` over {over}, {kind} | {label} | {ranking} | {p50:.2} ms | {p99:.2} ms |");
    }
}

#[tokio::main]
async fn main() {
    let Demo { dir: _dir, store, scope, services, ctx } = demo().await;
    seed_dataset(&store, &scope).await;
    println!("| query | ranking | answered by | p50 | p99 |");
    println!("| --- | --- | --- | --- | --- |");
    table(&Registry::new(services.clone()), &ctx, "full text").await;

    let registry = with_vectors(&services, "every page and post").await;
    // The first queries read the vector sets into memory.
    for tool in ["getPage", "getPost"] {
        let started = Instant::now();
        let first = registry.call(&ctx, tool, json!({"query": "change log"})).await;
        assert_eq!(first["ranking"], "hybrid", "{first}");
        eprintln!("first hybrid {tool} (reads the vectors): {:.1} ms", started.elapsed().as_secs_f64() * 1e3);
    }
    table(&registry, &ctx, "full text + vectors in memory").await;
}
