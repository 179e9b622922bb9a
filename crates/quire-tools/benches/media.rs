//! Media: uploads per second of small images (received, typed, recorded,
//! queued), processed per second by the worker, and `getImage {query}` over
//! 10,000 images with full text alone and with vectors (384 dimensions,
//! exact cosine, fused by reciprocal rank): the vectors held in memory (as
//! served) side by side with the earlier path that read them all from the
//! database for every query, and the vector step alone both ways.
//!
//! Run: `cargo bench -p quire-tools --bench media`. The vectors come from an
//! in-process embedder (a hashed bag of words), so the figures are Quire's
//! own work; a real model adds its own time per query embedding.

use base64::Engine as _;
use quire_core::input::NewImage;
use quire_core::model::ChangeContext;
use quire_store::Store;
use quire_tools::embed::{Embedder, MIN_SIMILARITY, fuse, query_vector, similar_images_scan};
use quire_tools::media::MediaWorker;
use quire_tools::{CallContext, Registry};
use serde_json::json;
use std::time::Instant;

mod common;
use common::{Demo, HashedWords, demo, p50_p99, with_vectors};

const WORDS: &[&str] = &[
    "sunset", "mountain", "beach", "team", "office", "desk", "city", "night", "forest", "river", "snow", "coffee",
    "laptop", "meeting", "portrait", "garden", "bridge", "street", "market", "dog", "cat", "child", "bicycle", "train",
    "harbour", "boat", "lake", "sky", "cloud", "rain", "autumn", "spring", "flower", "kitchen", "book",
];

fn tiny_png(i: u32) -> Vec<u8> {
    let mut img = image::RgbImage::from_fn(64, 48, |x, y| image::Rgb([(x * 4) as u8, (y * 5) as u8, 90]));
    // A different file each time: dedupe is by content.
    img.put_pixel(0, 0, image::Rgb([(i >> 8) as u8, i as u8, 7]));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

async fn query_latency(registry: &Registry, ctx: &CallContext, n: usize) -> (f64, f64, String) {
    let mut samples = Vec::with_capacity(n);
    let mut ranking = String::new();
    for i in 0..n {
        let start = Instant::now();
        let out = registry.call(ctx, "getImage", json!({"query": query(i), "limit": 20})).await;
        samples.push(start.elapsed().as_secs_f64() * 1e3);
        assert_eq!(out["success"], true, "{out}");
        ranking = out["ranking"].as_str().unwrap_or_default().to_string();
    }
    let (p50, p99) = p50_p99(samples);
    (p50, p99, ranking)
}

fn query(i: usize) -> String {
    format!(
        "{} {} in the {}",
        WORDS[i % WORDS.len()],
        WORDS[(i * 7 + 3) % WORDS.len()],
        WORDS[(i * 13 + 5) % WORDS.len()]
    )
}

/// getImage {query}'s hybrid ranking on the earlier vector path (every
/// vector read from the database per query), as `images::search` did it.
async fn hybrid_scan_latency(
    store: &Store,
    embedder: &dyn Embedder,
    scope: &quire_store::Scope,
    n: usize,
) -> (f64, f64) {
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let start = Instant::now();
        let fulltext = store.search_images(scope, &query(i), 50).await.unwrap();
        let q = query_vector(embedder, &query(i)).await.unwrap();
        let similar = similar_images_scan(store, &q, scope, embedder.model(), 50).await;
        let ids: Vec<String> = fulltext.iter().map(|i| i.id.clone()).collect();
        let mut found = Vec::new();
        for id in fuse(&[ids, similar], 20) {
            match fulltext.iter().find(|i| i.id == id) {
                Some(i) => found.push(i.clone()),
                None => found.push(store.image(scope, &id).await.unwrap()),
            }
        }
        assert!(!found.is_empty());
        samples.push(start.elapsed().as_secs_f64() * 1e3);
    }
    p50_p99(samples)
}

/// The vector step alone: the earlier scan, and the set in memory.
async fn vector_step_latency(
    store: &Store,
    embedder: &dyn Embedder,
    scope: &quire_store::Scope,
    n: usize,
) -> ((f64, f64), (f64, f64)) {
    let (mut scan, mut memory) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        let q = query_vector(embedder, &query(i)).await.unwrap();
        let start = Instant::now();
        let a = similar_images_scan(store, &q, scope, embedder.model(), 50).await;
        scan.push(start.elapsed().as_secs_f64() * 1e3);
        let start = Instant::now();
        let b = store.similar(scope, "image", embedder.model(), &q, 50, MIN_SIMILARITY).await.unwrap();
        memory.push(start.elapsed().as_secs_f64() * 1e3);
        assert_eq!(a.len(), b.len(), "both ways find as many");
    }
    (p50_p99(scan), p50_p99(memory))
}

#[tokio::main]
async fn main() {
    let Demo { dir: _dir, store, scope, services, ctx } = demo().await;

    // Uploads of small images, then their processing.
    let registry = Registry::new(services.clone());
    let n = 300u32;
    let files: Vec<String> = (0..n).map(|i| base64::engine::general_purpose::STANDARD.encode(tiny_png(i))).collect();
    let start = Instant::now();
    for (i, data) in files.iter().enumerate() {
        let out = registry.call(&ctx, "createImage", json!({"data": data, "filename": format!("u{i}.png")})).await;
        assert_eq!(out["success"], true, "{out}");
    }
    let uploads = f64::from(n) / start.elapsed().as_secs_f64();
    let start = Instant::now();
    let processed = MediaWorker::new(services.clone()).drain().await.unwrap();
    let processing = processed as f64 / start.elapsed().as_secs_f64();
    println!(
        "small images (64×48 PNG, ~{} bytes): {uploads:.0} uploads/s (createImage with data: received, typed, recorded, queued); {processing:.1} processed/s ({processed} jobs: 7 files each)",
        tiny_png(0).len()
    );

    // 10,000 images with alt texts, descriptions and tags.
    let started = Instant::now();
    let ctx_sys = ChangeContext::system();
    for i in 0..10_000usize {
        let w = |k: usize| WORDS[(i * k + k * k) % WORDS.len()];
        let input = NewImage {
            url: format!("/uploads/{}/bench-{i}.png", scope.site_id),
            filename: format!("bench-{i}.png"),
            mime: Some("image/png".into()),
            width: Some(640),
            height: Some(480),
            alt: Some(format!("{} {} near the {}", w(3), w(5), w(7))),
            description: Some(format!("A photo of a {} and a {} on a {} day.", w(11), w(13), w(17))),
            tags: Some(vec![w(19).into(), w(23).into()]),
            ..Default::default()
        };
        store.create_image(&ctx_sys, &scope, input).await.unwrap();
    }
    eprintln!("recorded 10,000 images in {:.1} s", started.elapsed().as_secs_f64());

    let (p50, p99, ranking) = query_latency(&registry, &ctx, 500).await;
    println!("| getImage {{query}} over 10,000 images | {ranking} | {p50:.2} ms | {p99:.2} ms |");

    let registry = with_vectors(&services, "every image").await;
    let started = Instant::now();
    let first = registry.call(&ctx, "getImage", json!({"query": "sunset", "limit": 20})).await;
    assert_eq!(first["ranking"], "hybrid");
    eprintln!("first hybrid query (reads the vectors into memory): {:.1} ms", started.elapsed().as_secs_f64() * 1e3);
    let (p50, p99, ranking) = query_latency(&registry, &ctx, 500).await;
    println!("| getImage {{query}} over 10,000 images, vectors in memory | {ranking} | {p50:.2} ms | {p99:.2} ms |");
    let embedder = HashedWords;
    let (p50, p99) = hybrid_scan_latency(&store, &embedder, &scope, 500).await;
    println!(
        "| getImage {{query}} over 10,000 images, vectors read per query (earlier path) | hybrid | {p50:.2} ms | {p99:.2} ms |"
    );
    let ((s50, s99), (m50, m99)) = vector_step_latency(&store, &embedder, &scope, 500).await;
    println!(
        "| vector step alone (top 50 of 10,000 × 384) | read per query: p50 {s50:.2} ms, p99 {s99:.2} ms | in memory: p50 {m50:.2} ms, p99 {m99:.2} ms | ratio of medians {:.0}× |",
        s50 / m50
    );
}
