//! What a step costs in prompt tokens (tiktoken o200k_base, system prompt
//! plus tool definitions as the model receives them), against sending every
//! tool and every guidance line for the same step: the editor agent's step
//! after searchTools activated five tools, for five searches. The test fails
//! when a step costs more than its budget. Run with --nocapture to see the
//! figures.
//!
//! "Every tool" is the catalogue as published (what MCP's tools/list sends
//! any client, and what an agent wrapping those tools would send), with
//! every rule and every guidance line. Against every tool in the leaner form
//! a step uses, the share cannot fall far below 5/46 whatever the wording,
//! since shorter definitions shrink both sides: that share is bounded too,
//! so the step's own parts (base prompt, rules, default tools) stay short.

mod support;

use quire_agent::ChatRequest;
use quire_agent::testing::{everything_text, request_text, tool_text};
use std::sync::{Arc, Mutex};
use support::*;

fn tokens(text: &str) -> usize {
    static BPE: std::sync::OnceLock<tiktoken_rs::CoreBPE> = std::sync::OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().unwrap()).encode_with_special_tokens(text).len()
}

/// Most a step may cost, as a share of sending every tool as published.
const BUDGET: f64 = 0.15;
/// Most a step may cost, as a share of sending every tool as a step would.
const LEANED_BUDGET: f64 = 0.18;
/// Most a step may cost, in tokens.
const MOST_TOKENS: usize = 1_160;

/// The request of the step after `searchTools` found tools for `query`.
async fn step_after_search(query: &str) -> (ChatRequest, Env) {
    let env = Env::in_process().await;
    let seen: Arc<Mutex<Option<ChatRequest>>> = Arc::default();
    let args = serde_json::json!({ "query": query, "limit": 5 }).to_string();
    env.model.answer("", &[("c1", "acknowledgeRequest", r#"{"message":"On it."}"#), ("c2", "searchTools", &args)]);
    let keep = Arc::clone(&seen);
    env.model.push(Step::Dynamic(Box::new(move |r| {
        *keep.lock().unwrap() = Some(r.clone());
        response("Done.", &[])
    })));
    env.turn("Please help with the site", None).await;
    let request = seen.lock().unwrap().take().expect("the second step ran");
    (request, env)
}

#[tokio::test]
async fn a_step_costs_at_most_its_budget_of_everything() {
    let mut worst: f64 = 0.0;
    let mut worst_leaned: f64 = 0.0;
    let mut most = 0;
    for query in ["update page", "page section", "menu link", "blog post", "image alt text"] {
        let (request, env) = step_after_search(query).await;
        let names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names.len(),
            7,
            "two default tools (acknowledgeRequest said) and five found for {query:?}: {names:?}"
        );
        let step = tokens(&request_text(&request));
        let all = tokens(&everything_text(&env.registry, &request, true));
        let leaned = tokens(&everything_text(&env.registry, &request, false));
        let saved = 1.0 - step as f64 / all as f64;
        println!(
            "{query:<16} step {step} tokens (system {}), everything {all} tokens ({} tools): {:.1} % fewer; leaned {leaned}: {:.1} % fewer — {names:?}",
            tokens(&request.system),
            env.registry.tools().len(),
            saved * 100.0,
            (1.0 - step as f64 / leaned as f64) * 100.0
        );
        if std::env::var("SHOW_PROMPT").is_ok() {
            println!("{}", request.system);
            for t in &request.tools {
                println!("  {:>4} {}", tokens(&tool_text(t)), tool_text(t));
            }
        }
        worst = worst.max(step as f64 / all as f64);
        worst_leaned = worst_leaned.max(step as f64 / leaned as f64);
        most = most.max(step);
    }
    assert!(
        worst <= BUDGET,
        "a step costs {:.1} % of everything; the budget is {:.0} %",
        worst * 100.0,
        BUDGET * 100.0
    );
    assert!(
        worst_leaned <= LEANED_BUDGET,
        "a step costs {:.1} % of every tool in a step's form; the budget is {:.0} %",
        worst_leaned * 100.0,
        LEANED_BUDGET * 100.0
    );
    assert!(most <= MOST_TOKENS, "a step costs {most} tokens; the budget is {MOST_TOKENS}");
}
