//! Image search that understands meaning: a fake OpenAI-compatible
//! embeddings server with deterministic vectors (words fold onto a few
//! concepts), images embedded in the background, `getImage {query}` ranked
//! by full text fused with vector similarity — and full text alone when the
//! embedder is missing or down, saying so.

mod common;

use base64::Engine as _;
use common::TestApp;
use common::embeddings::{Fake, fake_server};
use quire_tools::embed::{OpenAiEmbedder, embed_pending};
use quire_tools::media::MediaWorker;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;

fn png(seed: u8) -> String {
    let mut bytes = quire_media::samples::png(16, 9);
    // A different file each time (dedupe is by content).
    let img = image::load_from_memory(&bytes).unwrap().to_rgb8();
    let mut img = img;
    img.put_pixel(0, 0, image::Rgb([seed, seed, seed]));
    bytes.clear();
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
        .unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

async fn search(app: &TestApp, query: &str) -> Value {
    let r = app.post("/api/v1/tools/getImage/invoke", json!({"query": query})).await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.body);
    r.body
}

fn alts(found: &Value) -> Vec<String> {
    found["items"].as_array().unwrap().iter().map(|i| i["alt"].as_str().unwrap_or_default().to_string()).collect()
}

#[tokio::test]
async fn meaning_finds_what_words_do_not_and_full_text_answers_when_the_model_cannot() {
    let fake = Arc::new(Fake::default());
    let base = fake_server(Arc::clone(&fake)).await;
    let embedder: quire_tools::embed::SharedEmbedder =
        Arc::new(OpenAiEmbedder::new(&base, None, "fake-embed").unwrap());
    let app = TestApp::build_with(|s| s.embedder = Some(Arc::clone(&embedder)), |s| s).await;
    for (i, alt) in ["Sunset over the Alps", "Our crew at the big table", "A quiet beach at noon"].iter().enumerate() {
        let made = app
            .post("/api/v1/images", json!({"data": png(i as u8), "filename": format!("img-{i}.png"), "alt": alt}))
            .await;
        assert_eq!(made.status.as_u16(), 202, "{}", made.body);
    }
    MediaWorker::new(app.services.clone()).drain().await.unwrap();
    // Every live image of every site is embedded, the seeded ones included.
    let embedded = embed_pending(&app.store, embedder.as_ref(), 100).await.unwrap();
    assert!(embedded >= 7, "{embedded}");
    assert_eq!(embed_pending(&app.store, embedder.as_ref(), 100).await.unwrap(), 0, "nothing left to embed");

    // No word of the query is in any image: only the meaning matches.
    assert!(app.store.search_images(&app.scope, "dusk on the peaks", 10).await.unwrap().is_empty());
    let found = search(&app, "dusk on the peaks").await;
    assert_eq!(found["ranking"], "hybrid");
    assert_eq!(alts(&found), ["Sunset over the Alps"]);
    // Both pictures of people, the seeded one ("The team around a table")
    // and ours, neither saying "staff".
    let found = search(&app, "photo of the staff").await;
    let people = alts(&found);
    assert!(people[..2].contains(&"Our crew at the big table".to_string()), "{people:?}");
    assert!(people[..2].iter().any(|a| a.starts_with("The team around a table")), "{people:?}");
    // Words and meaning agree: first.
    let found = search(&app, "sunset in the mountains").await;
    assert_eq!(alts(&found)[0], "Sunset over the Alps");

    // A changed alt text is embedded again; an unchanged one is not.
    let beach = app.store.search_images(&app.scope, "beach", 1).await.unwrap().remove(0);
    let texts = fake.texts.load(Ordering::SeqCst);
    let r = app.patch(&format!("/api/v1/images/{}", beach.id), json!({"alt": "The shore at dusk"})).await;
    assert_eq!(r.status.as_u16(), 200);
    assert_eq!(embed_pending(&app.store, embedder.as_ref(), 100).await.unwrap(), 1);
    assert_eq!(fake.texts.load(Ordering::SeqCst), texts + 1);
    let r = app.patch(&format!("/api/v1/images/{}", beach.id), json!({"categories": ["travel"]})).await;
    assert_eq!(r.status.as_u16(), 200);
    assert_eq!(embed_pending(&app.store, embedder.as_ref(), 100).await.unwrap(), 1, "categories are in the text");

    // Another site's images are never among the answers.
    let other = app
        .send(
            "POST",
            "/api/v1/tools/getImage/invoke",
            Some(&app.other_admin),
            Some(json!({"query": "dusk on the peaks"})),
        )
        .await;
    assert_eq!(other.body["count"], 0, "{}", other.body);

    // The model is down: full text answers, and says so.
    fake.down.store(true, Ordering::SeqCst);
    let found = search(&app, "sunset").await;
    assert_eq!(found["ranking"], "fulltext");
    assert_eq!(alts(&found), ["Sunset over the Alps"]);
}
