//! What the benchmarks share.

use quire_core::access::Group;
use quire_core::model::Surface;
use quire_store::seed::{seed_bench, seed_demo};
use quire_store::{Scope, Store};
use quire_tools::embed::{EmbedFuture, Embedder, embed_pending};
use quire_tools::{CallContext, Registry, Services};
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

/// The demo site in a fresh folder.
pub struct Demo {
    /// The folder of the database and the files; removed when dropped.
    pub dir: tempfile::TempDir,
    /// The store, seeded with the demo site.
    pub store: Store,
    /// The demo's scope.
    pub scope: Scope,
    /// Services over the store and the folder.
    pub services: Services,
    /// The local admin calling from the command line, in the demo's scope.
    pub ctx: CallContext,
}

/// The demo site seeded in a fresh folder.
pub async fn demo() -> Demo {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("bench.db")).await.unwrap();
    let scope = seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let services = Services::new(store.clone(), dir.path());
    let ctx = CallContext::new("bench", Group::Admin, scope.clone(), Surface::Cli);
    Demo { dir, store, scope, services, ctx }
}

/// The value at `p` (0 to 1) of sorted samples.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// The median and the 99th percentile of `samples`.
#[allow(dead_code)] // the external benchmark reports medians alone
pub fn p50_p99(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(|a, b| a.total_cmp(b));
    (percentile(&samples, 0.5), percentile(&samples, 0.99))
}

/// Seeds the benchmark dataset into `scope`: 1,000 pages and 10,000 posts.
#[allow(dead_code)] // not every benchmark needs it
pub async fn seed_dataset(store: &Store, scope: &Scope) {
    let started = Instant::now();
    seed_bench(store, scope, 1_000, 10_000).await.unwrap();
    eprintln!("seeded 1,000 pages and 10,000 posts in {:.1} s", started.elapsed().as_secs_f64());
}

/// p50 and p99 in ms of `n` calls of the search `tool` with the queries
/// `query(i)`, each of which must find something, and the ranking that
/// answered.
#[allow(dead_code)] // only the search benchmarks search
pub async fn search_latency(
    registry: &Registry,
    ctx: &CallContext,
    tool: &str,
    n: usize,
    query: impl Fn(usize) -> String,
) -> (f64, f64, String) {
    let mut samples = Vec::with_capacity(n);
    let mut ranking = String::new();
    for i in 0..n {
        let q = query(i);
        let start = Instant::now();
        let out = registry.call(ctx, tool, json!({"query": q, "limit": 20})).await;
        samples.push(start.elapsed().as_secs_f64() * 1e3);
        assert_eq!(out["success"], true, "{out}");
        assert!(out["count"].as_u64().unwrap_or(0) > 0, "{tool} {q}: nothing found");
        ranking = out["ranking"].as_str().unwrap_or_default().to_string();
    }
    let (p50, p99) = p50_p99(samples);
    (p50, p99, ranking)
}

/// A registry over `services` with [`HashedWords`] as its embedding
/// model, once everything (`what`, for the log) is embedded.
#[allow(dead_code)] // the notes benchmark embeds notes its own way
pub async fn with_vectors(services: &Services, what: &str) -> Registry {
    let embedder: Arc<dyn Embedder> = Arc::new(HashedWords);
    let started = Instant::now();
    while embed_pending(&services.store, embedder.as_ref(), 256).await.unwrap() > 0 {}
    eprintln!("embedded {what} in {:.1} s", started.elapsed().as_secs_f64());
    let mut services = services.clone();
    services.embedder = Some(embedder);
    Registry::new(services)
}

/// An in-process embedder: a hashed bag of words in 384 dimensions, so the
/// figures are Quire's own work (a real model adds its time per query).
#[derive(Debug)]
pub struct HashedWords;

impl Embedder for HashedWords {
    fn model(&self) -> &str {
        "hashed-words-384"
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        Box::pin(async move {
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v = vec![0f32; 384];
                    for w in t.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
                        let h = w.bytes().fold(2166136261u32, |h, b| (h ^ u32::from(b)).wrapping_mul(16777619));
                        v[(h % 384) as usize] += 1.0;
                        v[((h >> 9) % 384) as usize] += 0.5;
                    }
                    v
                })
                .collect())
        })
    }
}
