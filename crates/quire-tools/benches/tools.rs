//! Tool-call overhead: validate + execute + serialize, through
//! `Registry::call`, on the benchmark dataset (1,000 pages, 10,000 posts).
//!
//! Run: `cargo bench -p quire-tools --bench tools` (prints medians and p99).

use quire_tools::{CallContext, Registry};
use serde_json::{Value, json};
use std::time::Instant;

mod common;
use common::{Demo, demo, p50_p99, seed_dataset};

async fn measure(
    registry: &Registry,
    ctx: &CallContext,
    name: &str,
    args: impl Fn(usize) -> Value,
    n: usize,
) -> (f64, f64) {
    for i in 0..n / 10 {
        registry.call(ctx, name, args(i)).await;
    }
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let a = args(i);
        let start = Instant::now();
        let out = registry.call(ctx, name, a).await;
        let _ = serde_json::to_vec(&out);
        samples.push(start.elapsed().as_secs_f64() * 1e6);
        assert_eq!(out["success"], true, "{name}: {out}");
    }
    p50_p99(samples)
}

#[tokio::main]
async fn main() {
    let Demo { dir: _dir, store, scope, services, ctx } = demo().await;
    seed_dataset(&store, &scope).await;
    let registry = Registry::new(services);
    let ctx = CallContext { session_id: Some("bench".into()), ..ctx };
    let page = store.page_by_slug(&scope, "bench-page-500").await.unwrap();
    let section = store.sections(&scope, &page.id, 1, None).await.unwrap().items.remove(0);

    println!("| call | p50 (µs) | p99 (µs) |\n| --- | --- | --- |");
    let (p50, p99) =
        measure(&registry, &ctx, "getPage", |i| json!({"slug": format!("bench-page-{}", i % 1000)}), 5_000).await;
    println!("| getPage by slug | {p50:.0} | {p99:.0} |");
    let (p50, p99) = measure(
        &registry,
        &ctx,
        "updateSection",
        |i| json!({"pageSectionId": section.id, "content": {"heading": format!("Heading {i}")}}),
        2_000,
    )
    .await;
    println!("| updateSection (content merge) | {p50:.0} | {p99:.0} |");
    let (p50, p99) = measure(&registry, &ctx, "getPost", |_| json!({"all": true, "limit": 20}), 2_000).await;
    println!("| getPost all, limit 20 | {p50:.0} | {p99:.0} |");
    let queries =
        ["update page section", "add a menu link", "Bring back the page I deleted", "find photo", "write a blog post"];
    let (p50, p99) =
        measure(&registry, &ctx, "searchTools", |i| json!({"query": queries[i % queries.len()]}), 20_000).await;
    println!("| searchTools (registry call) | {p50:.1} | {p99:.1} |");
    // the ranking alone, without argument parsing and JSON
    let mut samples = Vec::new();
    for i in 0..20_000 {
        let start = Instant::now();
        let ranked = registry.search(queries[i % queries.len()]);
        std::hint::black_box(ranked.len());
        samples.push(start.elapsed().as_secs_f64() * 1e6);
    }
    let (p50, p99) = p50_p99(samples);
    println!("| search ranking only | {p50:.1} | {p99:.1} |");
    // longer requests, as people say them
    let natural = [
        "Take the discontinued product out of the catalogue collection",
        "What did I write in my launch note?",
        "Add 'buy milk' to my to-do list",
        "Summarise the article at https://example.com/news/launch",
        "can you make the FAQ page a child of Help?",
    ];
    let mut samples = Vec::new();
    for i in 0..20_000 {
        let start = Instant::now();
        let ranked = registry.search(natural[i % natural.len()]);
        std::hint::black_box(ranked.len());
        samples.push(start.elapsed().as_secs_f64() * 1e6);
    }
    let (p50, p99) = p50_p99(samples);
    println!("| search ranking only, natural requests | {p50:.1} | {p99:.1} |");
}
