//! A fake OpenAI-compatible embeddings server with deterministic vectors:
//! words that mean the same fold onto one axis, so tests can tell a match
//! by meaning from one by words.

use axum::Json;
use axum::routing::post;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Concepts of the fake model: words that mean the same land on one axis.
const CONCEPTS: &[&[&str]] = &[
    &["sunset", "dusk", "evening", "twilight", "sundown"],
    &["mountain", "mountains", "peak", "peaks", "alps", "summit"],
    &["beach", "sea", "ocean", "coast", "shore"],
    &["team", "people", "staff", "colleagues", "crew"],
    &["office", "desk", "workplace", "studio"],
];

/// A deterministic vector: one axis per concept, plus 8 hashed axes for
/// other words (so unrelated texts are nearly orthogonal).
pub fn vector(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; CONCEPTS.len() + 8];
    for word in text.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2) {
        match CONCEPTS.iter().position(|c| c.contains(&word)) {
            Some(i) => v[i] += 1.0,
            None => {
                let h = word.bytes().fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
                v[CONCEPTS.len() + (h % 8) as usize] += 0.3;
            }
        }
    }
    v
}

/// What the fake server saw, and whether it answers.
#[derive(Default)]
pub struct Fake {
    /// Requests received.
    pub calls: AtomicUsize,
    /// Texts embedded.
    pub texts: AtomicUsize,
    /// Answer 503 to everything.
    pub down: AtomicBool,
}

/// Serves the fake model at `http://127.0.0.1:port/v1/embeddings`; answers the base URL.
pub async fn fake_server(fake: Arc<Fake>) -> String {
    let app = axum::Router::new().route(
        "/v1/embeddings",
        post(move |Json(body): Json<Value>| {
            let fake = Arc::clone(&fake);
            async move {
                fake.calls.fetch_add(1, Ordering::SeqCst);
                if fake.down.load(Ordering::SeqCst) {
                    return (axum::http::StatusCode::SERVICE_UNAVAILABLE, Json(json!({"error": "down"})));
                }
                assert_eq!(body["model"], "fake-embed");
                let inputs = body["input"].as_array().unwrap();
                fake.texts.fetch_add(inputs.len(), Ordering::SeqCst);
                let data: Vec<Value> = inputs
                    .iter()
                    .enumerate()
                    .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": vector(t.as_str().unwrap())}))
                    .collect();
                (axum::http::StatusCode::OK, Json(json!({"object": "list", "data": data, "model": "fake-embed"})))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}
