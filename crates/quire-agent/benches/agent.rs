//! What the runtime adds to a step besides the model: preparing the request
//! (tool selection, schemas, system prompt with memory and guidance) and a
//! whole scripted turn against a fake provider on loopback.
//!
//! Run: `cargo bench -p quire-agent --bench agent` (prints medians and p99).

use quire_agent::prompt::{StepInput, prepare_step};
use quire_agent::testing::{Fake, openai_stream, serve};
use quire_agent::{Message, Person, Profile, Profiles, ProviderKind, Runtime};
use quire_core::access::Group;
use quire_store::Store;
use quire_store::seed::seed_demo;
use quire_tools::{Registry, Services};
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn summary(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (percentile(&samples, 0.5), percentile(&samples, 0.99))
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("bench.db")).await.unwrap();
        let scope = seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
        let registry = Arc::new(Registry::new(Services::new(store.clone(), dir.path())));
        let agent = store.agent(&scope, "editor").await.unwrap();
        let profile = Profile::new(ProviderKind::Openai);
        let activated: Vec<String> =
            ["getPage", "createPage", "updatePage", "getSection", "createSection", "updateSection", "getImage", "getPost"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let mut memory = json!({});
        for i in 0..5 {
            quire_agent::memory::remember(
                &mut memory,
                "page",
                &json!({ "success": true, "item": { "id": format!("p{i}"), "slug": format!("page-{i}"), "name": "A page" } }),
            );
        }
        let messages: Vec<Message> = (0..20)
            .map(|i| Message::User { content: format!("message {i} with some words in it to make it realistic") })
            .collect();
        let input = StepInput {
            agent: &agent,
            profile: &profile,
            group: Group::Editor,
            activated: &activated,
            memory: &memory,
            context: None,
        };
        let mut samples = Vec::new();
        for i in 0..5_500 {
            let start = Instant::now();
            let request = prepare_step(&registry, &input, &messages);
            let body = quire_agent::provider::openai_body(&request);
            let bytes = serde_json::to_vec(&body).unwrap();
            if i >= 500 {
                samples.push(start.elapsed().as_secs_f64() * 1e6);
            }
            assert!(bytes.len() > 1000);
        }
        let (p50, p99) = summary(samples);
        println!("prepare_step + OpenAI body (11 tools, 20 messages): p50 {p50:.1} µs, p99 {p99:.1} µs");

        // A whole turn: acknowledge + getPage, then a final answer, against a
        // fake provider on loopback (the model's own time is zero here).
        let fake = Fake::default();
        let base = serve(fake.clone()).await;
        let mut p = Profile::new(ProviderKind::Openai);
        p.base_url = Some(format!("{base}/v1"));
        p.model = Some("fake".into());
        let mut profiles = Profiles::default();
        profiles.insert("default", p);
        let runtime = Runtime::new(Arc::clone(&registry), profiles);
        let (token, _) = store
            .create_token(quire_store::NewToken {
                name: "bench".into(),
                group: Group::Editor,
                site: "demo".into(),
                environments: None,
                expires_at: None,
                secret: None,
                approval_policy: None,
                user_id: None,
            })
            .await
            .unwrap();
        let person = Person { actor: format!("token:{}", token.id), group: Group::Editor, scope: scope.clone() };
        let mut turns = Vec::new();
        for i in 0..220 {
            fake.push(openai_stream(
                "",
                &[("a", "acknowledgeRequest", r#"{"message":"Looking."}"#), ("b", "getPage", r#"{"slug":"about"}"#)],
            ));
            fake.push(openai_stream("About is published.", &[]));
            let start = Instant::now();
            let started = runtime.start(&person, "editor", "is about published?", None, None).await.unwrap();
            started.handle.await.unwrap();
            if i >= 20 {
                turns.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        let (p50, p99) = summary(turns);
        println!("a two-step turn with two tool calls, fake provider on loopback: p50 {p50:.2} ms, p99 {p99:.2} ms");
    });
}
