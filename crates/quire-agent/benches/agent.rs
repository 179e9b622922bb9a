//! What the runtime adds to a step besides the model.
//!
//! 1. Preparing a request (tool selection, schemas, system prompt with
//!    memory and guidance) and its OpenAI body.
//! 2. The 10-step turn: nine real tool calls on the demo site (reads, a
//!    search that activates tools, one page update), then a final text,
//!    against a zero-latency model: in process (an injected provider) and
//!    through the real OpenAI client against a fake server on loopback,
//!    alternating rounds. Per-step figures are a turn's time divided by ten.
//! 3. Where a step's time goes, from the runtime's own tracing spans.
//! 4. Resident memory over 5,000 in-process turns.
//! 5. Prompt tokens (tiktoken o200k_base) of the step after searchTools
//!    activated five tools, against every tool as published and as a step
//!    sends it (`tests/prompt_tokens.rs` holds the budget).
//!
//! Run: `cargo bench -p quire-agent --bench agent` (prints medians and p99).
//! `AGENT_BENCH_TURNS` (default 200 per round) and `AGENT_BENCH_RSS_TURNS`
//! (default 5000) shorten a run; `AGENT_BENCH_SYNCHRONOUS=normal` opens
//! the store syncing at checkpoints only (default `full`, as the binary);
//! `AGENT_BENCH_PROFILE=<turns>` runs only that many in-process turns, for
//! a profiler.

use quire_agent::prompt::{StepInput, prepare_step};
use quire_agent::testing::{Fake, Scripted, Step, editor_token, fake_profiles, openai_stream, response, serve};
use quire_agent::{ChatRequest, Message, Person, Profile, Profiles, ProviderKind, Runtime};
use quire_core::access::Group;
use quire_store::seed::seed_demo;
use quire_store::{Location, Scope, Store, StoreOptions, Synchronous};
use quire_tools::{Registry, Services};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The allocator of the `quire` binary, so figures match the server's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn summary(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (percentile(&samples, 0.5), percentile(&samples, 0.99))
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The nine tool calls of the turn; the tenth step answers in text.
fn calls(about_id: &str, i: usize) -> Vec<(String, &'static str, String)> {
    let name = if i.is_multiple_of(2) { "About us" } else { "About" };
    [
        ("acknowledgeRequest", json!({ "message": "You want the About page checked and renamed." })),
        ("searchTools", json!({ "query": "update page", "limit": 5 })),
        ("getPage", json!({ "slug": "about" })),
        ("getSectionTemplate", json!({ "key": "hero" })),
        ("getPost", json!({ "all": true, "limit": 5 })),
        ("getNavItem", json!({ "all": true })),
        ("getImage", json!({ "all": true, "limit": 5 })),
        ("updatePage", json!({ "id": about_id, "name": name })),
        ("getPage", json!({ "id": about_id })),
    ]
    .into_iter()
    .enumerate()
    .map(|(n, (tool, args))| (format!("call_{n}"), tool, args.to_string()))
    .collect()
}

const FINAL: &str = "The About page is renamed and published.";

fn script_in_process(model: &Scripted, about_id: &str, i: usize) {
    for (id, tool, args) in calls(about_id, i) {
        model.push(Step::Answer(response("", &[(&id, tool, &args)])));
    }
    model.push(Step::Answer(response(FINAL, &[])));
}

fn script_http(fake: &Fake, about_id: &str, i: usize) {
    for (id, tool, args) in calls(about_id, i) {
        fake.push(openai_stream("", &[(&id, tool, &args)]));
    }
    fake.push(openai_stream(FINAL, &[]));
}

/// Resident set size of this process, in MB.
fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

/// Sums the wall time of the runtime's spans by name.
#[derive(Clone, Default)]
struct SpanTimes(Arc<Mutex<HashMap<&'static str, (f64, u64)>>>);

struct Opened(Instant);

impl<S> tracing_subscriber::Layer<S> for SpanTimes
where
    S: tracing::Subscriber + for<'l> tracing_subscriber::registry::LookupSpan<'l>,
{
    fn on_new_span(
        &self,
        _: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Opened(Instant::now()));
        }
    }

    fn on_close(&self, id: tracing::span::Id, ctx: tracing_subscriber::layer::Context<'_, S>) {
        if let Some(span) = ctx.span(&id)
            && let Some(opened) = span.extensions().get::<Opened>()
        {
            let mut times = self.0.lock().unwrap();
            let entry = times.entry(span.name()).or_default();
            entry.0 += opened.0.elapsed().as_secs_f64() * 1e3;
            entry.1 += 1;
        }
    }
}

struct Bench {
    store: Store,
    scope: Scope,
    registry: Arc<Registry>,
    person: Person,
    about_id: String,
    _dir: tempfile::TempDir,
}

/// How the bench's store syncs its commits: `AGENT_BENCH_SYNCHRONOUS`
/// (`full`, the default as in the binary, or `normal`).
fn synchronous() -> Synchronous {
    std::env::var("AGENT_BENCH_SYNCHRONOUS").ok().map(|s| s.parse().unwrap()).unwrap_or_default()
}

/// The time one `fsync` of a freshly written 4 KB block takes in `dir`
/// (p50, p99 in µs): under `synchronous = full` a step's write costs at
/// least one, so a step's figure cannot be read without it.
fn fsync_us(dir: &std::path::Path) -> (f64, f64) {
    use std::io::Write;
    let path = dir.join("fsync.probe");
    let mut file = std::fs::File::create(&path).unwrap();
    let mut samples = Vec::new();
    for _ in 0..200 {
        file.write_all(&[7u8; 4096]).unwrap();
        let start = Instant::now();
        file.sync_data().unwrap();
        samples.push(start.elapsed().as_secs_f64() * 1e6);
    }
    std::fs::remove_file(&path).unwrap();
    summary(samples)
}

async fn setup() -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let options = StoreOptions { synchronous: synchronous() };
    let store = Store::open_with(Location::File(dir.path().join("bench.db")), options).await.unwrap();
    let scope = seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let registry = Arc::new(Registry::new(Services::new(store.clone(), dir.path())));
    let actor = format!("token:{}", editor_token(&store).await);
    let person = Person { actor, group: Group::Editor, scope: scope.clone() };
    let about_id = store.page_by_slug(&scope, "about").await.unwrap().id;
    Bench { store, scope, registry, person, about_id, _dir: dir }
}

fn in_process_runtime(b: &Bench) -> (Arc<Runtime>, Scripted) {
    let runtime = Runtime::new(Arc::clone(&b.registry), Profiles::default());
    let model = Scripted::default();
    let mut profile = Profile::new(ProviderKind::Openai);
    profile.model = Some("scripted".into());
    runtime.set_provider("default", profile, Arc::new(model.clone()));
    (runtime, model)
}

async fn http_runtime(b: &Bench) -> (Arc<Runtime>, Fake) {
    let (fake, base) = serve().await;
    (Runtime::new(Arc::clone(&b.registry), fake_profiles(&base)), fake)
}

/// Runs one turn to its end; answers its time in ms.
async fn turn(runtime: &Arc<Runtime>, person: &Person) -> f64 {
    let start = Instant::now();
    let started = runtime.start(person, "editor", "Rename the About page", None, None, None).await.unwrap();
    started.handle.await.unwrap();
    start.elapsed().as_secs_f64() * 1e3
}

async fn check_turn(b: &Bench, runtime: &Runtime, session: &str) {
    let history = runtime.events().history(session);
    let end = history.last().expect("the turn left events");
    assert_eq!(end.data["result"]["text"], FINAL, "the turn ended with its final text: {}", end.data);
    let s = b.store.session(&b.scope, session).await.unwrap();
    assert_eq!(s.steps, 10, "ten steps");
    let messages = b.store.session_messages(&b.scope, session).await.unwrap();
    assert_eq!(messages.len(), 1 + 9 * 2 + 1, "user, nine calls and results, the answer");
    let failed: Vec<&Value> = messages.iter().map(|m| &m.body).filter(|m| m["isError"] == true).collect();
    assert!(failed.is_empty(), "every tool call succeeded: {failed:?}");
}

fn prepare_bench(b: &Bench, agent: &quire_core::model::Agent) {
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
        agent,
        profile: &profile,
        who: quire_core::access::Principal {
            actor: "user:bench",
            group: Group::Editor,
            surface: quire_core::model::Surface::Agent,
        },
        activated: &activated,
        memory: &memory,
        context: None,
        contexts: &[],
    };
    let mut samples = Vec::new();
    for i in 0..5_500 {
        let start = Instant::now();
        let request: ChatRequest = prepare_step(&b.registry, &input, &messages);
        let body = quire_agent::provider::openai_body(&request, quire_agent::provider::TokenLimit::MaxTokens);
        let bytes = serde_json::to_vec(&body).unwrap();
        if i >= 500 {
            samples.push(start.elapsed().as_secs_f64() * 1e6);
        }
        assert!(bytes.len() > 1000);
    }
    let (p50, p99) = summary(samples);
    println!("prepare_step + OpenAI body (11 tools, 20 messages): p50 {p50:.1} µs, p99 {p99:.1} µs");
}

/// Prompt tokens of the step after `searchTools` found five tools, for a
/// few searches, against sending every tool.
async fn prompt_tokens(b: &Bench) {
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let tokens = |text: &str| bpe.encode_with_special_tokens(text).len();
    for query in ["update page", "page section", "menu link", "blog post", "image alt text"] {
        let (runtime, model) = in_process_runtime(b);
        let args = json!({ "query": query, "limit": 5 }).to_string();
        let ack = r#"{"message":"On it."}"#;
        model.push(Step::Answer(response("", &[("c1", "acknowledgeRequest", ack), ("c2", "searchTools", &args)])));
        let seen: Arc<Mutex<Option<ChatRequest>>> = Arc::default();
        let keep = Arc::clone(&seen);
        model.push(Step::Dynamic(Box::new(move |r| {
            *keep.lock().unwrap() = Some(r.clone());
            response("Done.", &[])
        })));
        turn(&runtime, &b.person).await;
        let request = seen.lock().unwrap().take().expect("the step after the search ran");
        let step = tokens(&quire_agent::testing::request_text(&request));
        let published = tokens(&quire_agent::testing::everything_text(&b.registry, &request, true));
        let leaned = tokens(&quire_agent::testing::everything_text(&b.registry, &request, false));
        println!(
            "prompt tokens after searchTools {query:?}: step {step} ({} tools); every tool as published {published} ({:.1} % fewer), as a step sends them {leaned} ({:.1} % fewer)",
            request.tools.len(),
            (1.0 - step as f64 / published as f64) * 100.0,
            (1.0 - step as f64 / leaned as f64) * 100.0
        );
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let turns = env_usize("AGENT_BENCH_TURNS", 200);
    let rss_turns = env_usize("AGENT_BENCH_RSS_TURNS", 5_000);
    let spans = SpanTimes::default();
    let b = rt.block_on(setup());
    let (f50, f99) = fsync_us(b._dir.path());
    println!("synchronous = {}; one fsync of 4 KB here: p50 {f50:.1} µs, p99 {f99:.1} µs", synchronous());
    let agent = rt.block_on(b.store.agent(&b.scope, "editor")).unwrap();
    // Only in-process turns, for a profiler (`perf record`): nothing else
    // of the bench in the samples.
    if let Some(n) = std::env::var("AGENT_BENCH_PROFILE").ok().and_then(|v| v.parse::<usize>().ok()) {
        let (local, model) = rt.block_on(async { in_process_runtime(&b) });
        let steps: Vec<f64> = rt.block_on(async {
            let mut steps = Vec::new();
            for i in 0..n {
                script_in_process(&model, &b.about_id, i);
                steps.push(turn(&local, &b.person).await / 10.0);
            }
            steps
        });
        let (p50, p99) = summary(steps);
        println!("{n} in-process turns, per step: p50 {p50:.3} ms, p99 {p99:.3} ms");
        return;
    }
    prepare_bench(&b, &agent);
    rt.block_on(prompt_tokens(&b));

    // A step's write alone: two messages and the small state update.
    rt.block_on(async {
        let session = b
            .store
            .start_session(
                &b.scope,
                quire_store::NewSession {
                    id: None,
                    agent_id: agent.id.clone(),
                    actor: b.person.actor.clone(),
                    group: Group::Editor,
                    title: "bench".into(),
                    context: None,
                    contexts: Vec::new(),
                },
                &json!({ "role": "user", "content": "hello" }),
            )
            .await
            .unwrap();
        let call = json!({ "role": "assistant", "content": "", "toolCalls": [{ "id": "c", "name": "getPage", "arguments": "{\"slug\":\"about\"}" }] });
        let result = json!({ "role": "tool", "toolCallId": "c", "name": "getPage", "content": "x".repeat(600) });
        let mut samples = Vec::new();
        for i in 0..2_200 {
            let update = quire_store::SessionUpdate { steps: Some(i), usage: Some((i, i)), ..Default::default() };
            let start = Instant::now();
            b.store.queue_step(&b.scope, &session.id, &update, 1, &[call.clone(), result.clone()]).await.unwrap().done().await.unwrap();
            if i >= 200 {
                samples.push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
        let (p50, p99) = summary(samples);
        println!("a step's write (state update + two messages, group commit): p50 {p50:.1} µs, p99 {p99:.1} µs");
    });

    // The 10-step turn, in process and over loopback HTTP, in alternating rounds.
    let (local, model) = rt.block_on(async { in_process_runtime(&b) });

    // Memory over many turns, each in a new session.
    rt.block_on(async {
        let start_rss = rss_mb();
        let mut marks = Vec::new();
        for i in 0..rss_turns {
            script_in_process(&model, &b.about_id, i);
            turn(&local, &b.person).await;
            if (i + 1).is_multiple_of(1000) || i + 1 == 220 {
                marks.push((i + 1, rss_mb()));
            }
        }
        let marks: Vec<String> = marks.iter().map(|(n, mb)| format!("{n}: {mb:.1} MB")).collect();
        println!(
            "RSS before {start_rss:.1} MB; after turns {}; sessions with events in memory: {}",
            marks.join(", "),
            local.events().sessions()
        );
    });
    let (remote, fake) = rt.block_on(http_runtime(&b));
    let mut local_steps = Vec::new();
    let mut remote_steps = Vec::new();
    rt.block_on(async {
        for i in 0..20 {
            script_in_process(&model, &b.about_id, i);
            turn(&local, &b.person).await;
            script_http(&fake, &b.about_id, i);
            turn(&remote, &b.person).await;
        }
    });
    rt.block_on(async {
        // One checked turn of each kind.
        script_in_process(&model, &b.about_id, 0);
        let s = local.start(&b.person, "editor", "check", None, None, None).await.unwrap();
        s.handle.await.unwrap();
        check_turn(&b, &local, &s.session_id).await;
        script_http(&fake, &b.about_id, 1);
        let s = remote.start(&b.person, "editor", "check", None, None, None).await.unwrap();
        s.handle.await.unwrap();
        check_turn(&b, &remote, &s.session_id).await;
    });
    for round in 0..5 {
        rt.block_on(async {
            for i in 0..turns {
                script_in_process(&model, &b.about_id, i);
                local_steps.push(turn(&local, &b.person).await / 10.0);
            }
            for i in 0..turns {
                script_http(&fake, &b.about_id, i);
                remote_steps.push(turn(&remote, &b.person).await / 10.0);
            }
        });
        let (l50, _) = summary(local_steps[round * turns..].to_vec());
        let (r50, _) = summary(remote_steps[round * turns..].to_vec());
        println!("round {}: per step p50 in process {l50:.3} ms, loopback HTTP {r50:.3} ms", round + 1);
    }
    let (l50, l99) = summary(local_steps);
    let (r50, r99) = summary(remote_steps);
    println!("10-step turn, per step, in process: p50 {l50:.3} ms, p99 {l99:.3} ms ({} turns)", turns * 5);
    println!("10-step turn, per step, loopback HTTP: p50 {r50:.3} ms, p99 {r99:.3} ms ({} turns)", turns * 5);
    let (f50, f99) = fsync_us(b._dir.path());
    println!("one fsync of 4 KB after the rounds: p50 {f50:.1} µs, p99 {f99:.1} µs");

    // Where the time goes: the runtime's spans, over in-process turns.
    {
        use tracing_subscriber::layer::SubscriberExt;
        let subscriber = tracing_subscriber::registry().with(spans.clone());
        tracing::subscriber::set_global_default(subscriber).unwrap();
        let start = Instant::now();
        let n = turns;
        rt.block_on(async {
            for i in 0..n {
                script_in_process(&model, &b.about_id, i);
                turn(&local, &b.person).await;
            }
        });
        let total = start.elapsed().as_secs_f64() * 1e3;
        let steps = (n * 10) as f64;
        let times = spans.0.lock().unwrap().clone();
        println!("breakdown over {n} in-process turns ({:.3} ms per step in all):", total / steps);
        let mut names: Vec<_> = times.into_iter().collect();
        names.sort_by(|a, b| b.1.0.partial_cmp(&a.1.0).unwrap());
        for (name, (ms, count)) in names {
            println!("  {name:<16} {:.3} ms per step ({count} spans)", ms / steps);
        }
    }
}
