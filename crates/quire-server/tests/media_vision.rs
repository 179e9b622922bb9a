//! Alt text by a vision model: a fake OpenAI-compatible chat completions
//! server that checks it was sent the picture; the texts it writes fill only
//! what a person left empty, marked as generated, and a person's later edit
//! takes the mark away.

mod common;

use axum::Json;
use axum::routing::post;
use base64::Engine as _;
use common::TestApp;
use quire_tools::describe::OpenAiVision;
use quire_tools::media::MediaWorker;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

async fn fake_vision(calls: Arc<AtomicUsize>) -> String {
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |Json(body): Json<Value>| {
            let calls = Arc::clone(&calls);
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                assert_eq!(body["model"], "fake-vision");
                let url = body["messages"][0]["content"][1]["image_url"]["url"].as_str().unwrap();
                let (head, data) = url.split_once(";base64,").unwrap();
                assert!(head.starts_with("data:image/"), "{head}");
                let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
                let picture = image::load_from_memory(&bytes).unwrap();
                let content = json!({
                    "alt": format!("Red and blue halves under a green bar, {} wide", picture.width()),
                    "description": "A test card of three colours.",
                    "tags": ["Test", "colours"],
                })
                .to_string();
                Json(json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": format!("```json\n{content}\n```")}}]}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

fn data(width: u32) -> String {
    base64::engine::general_purpose::STANDARD.encode(quire_media::samples::png(width, 40))
}

#[tokio::test]
async fn a_vision_model_writes_what_a_person_left_empty() {
    let calls = Arc::new(AtomicUsize::new(0));
    let base = fake_vision(Arc::clone(&calls)).await;
    let describer: quire_tools::describe::SharedDescriber =
        Arc::new(OpenAiVision::new(&base, None, "fake-vision").unwrap());
    let app = TestApp::build_with(|s| s.describer = Some(describer), |s| s).await;
    let bare = app.post("/api/v1/images", json!({"data": data(60), "filename": "card.png"})).await.body;
    let written =
        app.post("/api/v1/images", json!({"data": data(70), "filename": "mine.png", "alt": "My own words"})).await.body;
    // Processing, then the describe jobs it queued.
    assert_eq!(MediaWorker::new(app.services.clone()).drain().await.unwrap(), 4);
    assert_eq!(calls.load(Ordering::SeqCst), 2);

    let bare = app.get(&format!("/api/v1/images/{}", bare["id"].as_str().unwrap())).await.body;
    assert_eq!(bare["alt"], "Red and blue halves under a green bar, 60 wide");
    assert_eq!(bare["description"], "A test card of three colours.");
    assert_eq!(bare["tags"], json!(["test", "colours"]));
    assert_eq!(bare["generated"], json!(["alt", "description", "tags"]));
    let written = app.get(&format!("/api/v1/images/{}", written["id"].as_str().unwrap())).await.body;
    assert_eq!(written["alt"], "My own words", "a person's text is never overwritten");
    assert_eq!(written["generated"], json!(["description", "tags"]));

    // The change log says who wrote it.
    let changes = app.get(&format!("/api/v1/changes?entityId={}", bare["id"].as_str().unwrap())).await.body;
    assert!(changes["items"].as_array().unwrap().iter().any(|c| c["actor"] == "system:vision"), "{changes}");

    // A person's edit takes the mark away.
    let edited =
        app.patch(&format!("/api/v1/images/{}", bare["id"].as_str().unwrap()), json!({"alt": "A test card"})).await;
    assert_eq!(edited.body["generated"], json!(["description", "tags"]));
}
