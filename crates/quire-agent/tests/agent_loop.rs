//! The agent loop against fake providers: real HTTP clients, scripted answers.

mod support;

use quire_agent::ProviderKind;
use quire_agent::provider::TokenLimit;
use quire_core::model::SessionStatus;
use serde_json::{Value, json};
use support::*;

fn hero_call(body: &Value) -> Reply {
    let page = last_tool_result(body);
    let page_id = page["item"]["id"].as_str().expect("createPage answered the page").to_string();
    let args = json!({
        "pageId": page_id,
        "templateKey": "hero",
        "content": { "heading": "Our services", "subheading": "What we do", "cta": { "label": "Talk to us", "href": "/contact" } },
    })
    .to_string();
    openai_stream("", &[("call_3", "createSection", &args)])
}

/// A summary of a request for snapshots: system prompt, tool names, and the
/// conversation's roles and tool calls.
fn summary(body: &Value) -> Value {
    let messages: Vec<Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|m| {
            let mut s = json!({ "role": m["role"] });
            if let Some(calls) = m["tool_calls"].as_array() {
                s["calls"] = calls.iter().map(|c| c["function"]["name"].clone()).collect();
            }
            if m["role"] == "tool" {
                let v = quire_agent::testing::tool_result_json(m["content"].as_str().unwrap());
                s["success"] = v["success"].clone();
            }
            if m["role"] == "user" {
                s["content"] = m["content"].clone();
            }
            s
        })
        .collect();
    json!({
        "system": redact_ids(&system_of(body)),
        "tools": tool_names(body),
        "messages": messages,
    })
}

#[tokio::test]
async fn creates_a_page_with_a_hero_section_and_shows_every_step() {
    let env = Env::openai().await;
    env.fake.push(openai_stream(
        "On it.",
        &[
            ("call_1", "acknowledgeRequest", r#"{"message":"You want a Services page with a hero."}"#),
            ("call_2", "searchTools", r#"{"query":"create page section"}"#),
        ],
    ));
    env.fake.push(openai_stream("", &[("call_2b", "createPage", r#"{"name":"Services","slug":"services"}"#)]));
    env.fake.push(Reply::Dynamic(Box::new(hero_call)));
    env.fake.push(openai_stream("", &[("call_4", "finalAnswer", r#"{"message":"Created /services with a hero."}"#)]));

    let session = env.turn("Add a Services page with a hero", None).await;
    assert_eq!(env.fake.remaining(), 0, "every scripted answer was used");

    let page = env.store.page_by_slug(&env.scope, "services").await.unwrap();
    let sections = env.store.sections(&env.scope, &page.id, 10, None).await.unwrap().items;
    assert_eq!(sections.len(), 1);
    assert_eq!(sections[0].content["heading"], "Our services");

    let s = env.store.session(&env.scope, &session).await.unwrap();
    assert_eq!(s.status, SessionStatus::Idle);
    assert_eq!((s.turns, s.steps), (1, 4));
    assert_eq!((s.input_tokens, s.output_tokens), (400, 40));
    assert_eq!(s.memory["page"][0]["key"], "services", "working memory holds the new page: {}", s.memory);

    // Changes carry the session and turn.
    let changes = env
        .store
        .changes(
            &env.scope,
            &quire_store::ChangeFilter { session_id: Some(session.clone()), ..Default::default() },
            10,
            None,
        )
        .await
        .unwrap();
    assert_eq!(changes.items.len(), 2, "page and section");
    assert!(changes.items.iter().all(|c| c.turn_id.as_deref() == Some("1") && c.surface.as_str() == "agent"));

    let types = env.event_types(&session);
    assert_eq!(types.first().map(String::as_str), Some("RUN_STARTED"));
    assert_eq!(types.last().map(String::as_str), Some("RUN_FINISHED"));
    for t in [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "CUSTOM",
    ] {
        assert!(types.iter().any(|x| x == t), "{t} missing from {types:?}");
    }
    let history = env.runtime.events().history(&session);
    let finished = history.last().unwrap();
    assert_eq!(finished.data["outcome"]["type"], "success");
    assert_eq!(finished.data["result"]["text"], "Created /services with a hero.");
    assert!(history.iter().any(|e| e.data["name"] == "entity_changed" && e.data["value"]["entity"] == "section"));

    // Every step's request, as assembled.
    let requests: Vec<Value> = env.fake.requests().iter().map(summary).collect();
    insta::assert_json_snapshot!("create_page_steps", requests);
}

#[tokio::test]
async fn search_tools_changes_the_next_requests_tools_and_guidance() {
    let env = Env::openai().await;
    env.fake.push(openai_stream("", &[("c1", "searchTools", r#"{"query":"add or delete menu link"}"#)]));
    env.fake.push(openai_stream("Done looking.", &[]));
    env.turn("What can you do with menus?", None).await;
    let requests = env.fake.requests();
    let before = tool_names(&requests[0]);
    let after = tool_names(&requests[1]);
    assert_eq!(before, ["searchTools", "acknowledgeRequest", "finalAnswer"]);
    assert!(after.contains(&"createNavItem".to_string()), "{after:?}");
    assert!(after.len() > before.len());
    // a tool's guidance rides with its definition, so it comes and goes
    // with the tool and is said once
    let tools = requests[1]["tools"].as_array().unwrap();
    let create = tools.iter().find(|t| t["function"]["name"] == "createNavItem").unwrap();
    let guidance = "Resolve targetId with getPage/getPost first";
    assert!(create["function"]["description"].as_str().unwrap().contains(guidance), "{create}");
    let (s0, s1) = (system_of(&requests[0]), system_of(&requests[1]));
    assert!(!s0.contains(guidance) && !s1.contains(guidance), "{s1}");
    // the schema sent is the registry's, without approval fields
    let delete = tools.iter().find(|t| t["function"]["name"] == "deleteNavItem").unwrap();
    assert!(delete["function"]["parameters"]["properties"].get("confirmationId").is_none());
    assert!(delete["function"]["parameters"]["properties"].get("confirmed").is_none());
}

/// acknowledgeRequest is said once per turn: the turn's steps after it
/// answered leave it out (one that failed leaves it offered), and the next
/// turn offers it again.
#[tokio::test]
async fn acknowledge_request_is_offered_until_it_was_said_in_the_turn() {
    let env = Env::openai().await;
    env.fake.push(openai_stream("", &[("c1", "acknowledgeRequest", r#"{"text":"Looking."}"#)]));
    env.fake.push(openai_stream("", &[("c2", "acknowledgeRequest", r#"{"message":"Looking."}"#)]));
    env.fake.push(openai_stream("", &[("c3", "finalAnswer", r#"{"message":"Nothing to do."}"#)]));
    let session = env.turn("Anything to fix?", None).await;
    env.fake.push(openai_stream("Still nothing.", &[]));
    env.turn("And now?", Some(&session)).await;
    let names: Vec<Vec<String>> = env.fake.requests().iter().map(tool_names).collect();
    let all = ["searchTools", "acknowledgeRequest", "finalAnswer"];
    assert_eq!(names[0], all);
    assert_eq!(names[1], all, "the first acknowledgement failed");
    assert_eq!(names[2], ["searchTools", "finalAnswer"]);
    assert_eq!(names[3], all, "a new turn");
}

#[tokio::test]
async fn an_enabled_tool_called_before_discovery_runs_and_activates() {
    let env = Env::openai().await;
    env.fake.push(openai_stream("", &[("c1", "getPage", r#"{"slug":"about"}"#)]));
    env.fake.push(openai_stream("The about page exists.", &[]));
    let session = env.turn("Is there an about page?", None).await;
    let requests = env.fake.requests();
    assert_eq!(last_tool_result(&requests[1])["success"], true);
    assert!(tool_names(&requests[1]).contains(&"getPage".to_string()));
    let s = env.store.session(&env.scope, &session).await.unwrap();
    assert_eq!(s.active_tools, ["getPage"]);
}

#[tokio::test]
async fn tools_the_agent_or_user_may_not_use_are_errors_the_model_reads() {
    let env = Env::openai().await;
    // The researcher agent: read tools only.
    env.fake.push(openai_stream("", &[("c1", "createPage", r#"{"name":"X","slug":"x"}"#)]));
    env.fake.push(openai_stream("I cannot.", &[]));
    let started = env.runtime.start(&env.person(), "researcher", "make a page", None, None, None).await.unwrap();
    started.handle.await.unwrap();
    let result = last_tool_result(&env.fake.requests()[1]);
    assert_eq!(result["errorCode"], "FORBIDDEN");
    assert!(result["error"].as_str().unwrap().contains("not enabled for agent researcher"), "{result}");
    assert!(env.store.page_by_slug(&env.scope, "x").await.is_err());
    assert!(!tool_names(&env.fake.requests()[0]).contains(&"createPage".to_string()));
}

#[tokio::test]
async fn malformed_arguments_go_back_to_the_model_and_the_turn_continues() {
    let env = Env::openai().await;
    env.fake.push(openai_stream("", &[("c1", "createPage", r#"{"name": "Broken", "slug": "#)]));
    env.fake.push(openai_stream("", &[("c2", "createPage", r#"{"name":"Fixed","slug":"fixed","colour":"red"}"#)]));
    env.fake.push(openai_stream("", &[("c3", "createPage", r#"{"name":"Fixed","slug":"fixed"}"#)]));
    env.fake.push(openai_stream("Created.", &[]));
    let session = env.turn("make a page", None).await;
    let requests = env.fake.requests();
    let first = last_tool_result(&requests[1]);
    assert_eq!(first["errorCode"], "VALIDATION");
    assert!(first["error"].as_str().unwrap().contains("not valid JSON"), "{first}");
    let second = last_tool_result(&requests[2]);
    assert!(second["error"].as_str().unwrap().contains("colour"), "the validation error names the field: {second}");
    assert!(env.store.page_by_slug(&env.scope, "fixed").await.is_ok());
    assert_eq!(env.store.session(&env.scope, &session).await.unwrap().status, SessionStatus::Idle);
}

#[tokio::test]
async fn a_429_is_retried_then_succeeds() {
    let env = Env::openai().await;
    env.fake.push(Reply::Status(429, Some(0)));
    env.fake.push(Reply::Status(503, None));
    env.fake.push(openai_stream("Hello!", &[]));
    let session = env.turn("hi", None).await;
    assert_eq!(env.fake.requests().len(), 3);
    let history = env.runtime.events().history(&session);
    assert_eq!(history.last().unwrap().data["result"]["text"], "Hello!");
    assert_eq!(env.fake.keys.lock().unwrap()[0], "Bearer test-key");
}

#[tokio::test]
async fn persistent_errors_end_the_run_with_run_error() {
    let env = Env::openai_with(|p| p.retries = 1).await;
    env.fake.push(Reply::Status(500, None));
    env.fake.push(Reply::Status(500, None));
    let session = env.turn("hi", None).await;
    let history = env.runtime.events().history(&session);
    let last = history.last().unwrap();
    assert_eq!(last.kind(), "RUN_ERROR");
    assert!(last.data["message"].as_str().unwrap().contains("500"), "{}", last.data);
    assert_eq!(env.store.session(&env.scope, &session).await.unwrap().status, SessionStatus::Failed);
    // a failed session takes the next message
    env.fake.push(openai_stream("Better now.", &[]));
    env.turn("again", Some(&session)).await;
    assert_eq!(env.store.session(&env.scope, &session).await.unwrap().status, SessionStatus::Idle);
}

#[tokio::test]
async fn the_step_limit_ends_the_turn_with_a_clear_message() {
    let env = Env::openai_with(|p| p.max_steps = 2).await;
    env.fake.push(openai_stream("", &[("c1", "getPage", r#"{"slug":"about"}"#)]));
    env.fake.push(openai_stream("", &[("c2", "getPage", r#"{"slug":"home"}"#)]));
    let session = env.turn("look around", None).await;
    let history = env.runtime.events().history(&session);
    let text = history.last().unwrap().data["result"]["text"].as_str().unwrap().to_string();
    assert!(text.contains("stopped after 2 steps"), "{text}");
    assert_eq!(env.fake.requests().len(), 2);
}

#[tokio::test]
async fn non_streaming_answers_work_too() {
    let env = Env::openai_with(|p| p.stream = false).await;
    env.fake.push(openai_json("", &[("c1", "getPage", r#"{"slug":"about"}"#)]));
    env.fake.push(openai_json("About exists.", &[]));
    let session = env.turn("about?", None).await;
    assert_eq!(env.fake.requests()[0]["stream"], false);
    let history = env.runtime.events().history(&session);
    assert_eq!(history.last().unwrap().data["result"]["text"], "About exists.");
}

/// The token cap of the request a turn on a profile changed by `change` sends.
async fn token_cap(change: impl FnOnce(&mut quire_agent::Profile)) -> Value {
    let env = Env::openai_with(change).await;
    env.fake.push(openai_stream("Hi.", &[]));
    env.turn("hello", None).await;
    let body = &env.fake.requests()[0];
    let caps = ["max_tokens", "max_completion_tokens"].map(|k| body.get(k).map(|v| (k, v.clone())));
    let caps: Vec<_> = caps.into_iter().flatten().collect();
    assert_eq!(caps.len(), 1, "one cap: {body}");
    json!({ caps[0].0: caps[0].1 })
}

#[tokio::test]
async fn reasoning_models_get_max_completion_tokens_and_other_servers_max_tokens() {
    // Another OpenAI-compatible server (the fake): max_tokens.
    assert_eq!(token_cap(|_| {}).await, json!({ "max_tokens": 4096 }));
    // OpenAI's reasoning models refuse max_tokens, on any server.
    for model in ["o3-mini", "o1", "gpt-5", "gpt-5-mini", "openai/o4-mini"] {
        let cap = token_cap(|p| (p.model, p.max_tokens) = (Some(model.into()), 800)).await;
        assert_eq!(cap, json!({ "max_completion_tokens": 800 }), "{model}");
    }
    for model in ["gpt-4.1-mini", "omni-local", "llama3.2", "gpt-50b-local"] {
        assert_eq!(token_cap(|p| p.model = Some(model.into())).await, json!({ "max_tokens": 4096 }), "{model}");
    }
    // The profile may name the field either way.
    let named = |field: &str| {
        serde_json::from_value::<quire_agent::Profile>(
            json!({ "provider": "openai", "model": "m", "max_tokens_field": field }),
        )
    };
    let completion = named("max_completion_tokens").unwrap().max_tokens_field;
    assert_eq!(token_cap(|p| p.max_tokens_field = completion).await, json!({ "max_completion_tokens": 4096 }));
    let plain = named("max_tokens").unwrap().max_tokens_field;
    assert_eq!(
        token_cap(|p| (p.model, p.max_tokens_field) = (Some("o3".into()), plain)).await,
        json!({ "max_tokens": 4096 })
    );
    assert!(named("tokens").is_err());
    // OpenAI's own API: every model takes max_completion_tokens.
    let mut openai = quire_agent::Profile::new(ProviderKind::Openai);
    openai.model = Some("gpt-4.1-mini".into());
    assert_eq!(TokenLimit::for_profile(&openai), TokenLimit::MaxCompletionTokens);
    openai.base_url = Some("https://api.openai.com/v1".into());
    assert_eq!(TokenLimit::for_profile(&openai), TokenLimit::MaxCompletionTokens);
    openai.base_url = Some("http://localhost:11434/v1".into());
    assert_eq!(TokenLimit::for_profile(&openai), TokenLimit::MaxTokens);
}

#[tokio::test]
async fn anthropic_streamed_and_whole_answers_drive_the_same_loop() {
    let env = Env::new(ProviderKind::Anthropic, |p| p, |r| r).await;
    env.fake.push(anthropic_stream("Looking.", &[("tu_1", "getPage", r#"{"slug":"about"}"#)]));
    env.fake.push(anthropic_json("", &[("tu_2", "createPage", r#"{"name":"Careers","slug":"careers"}"#)]));
    env.fake.push(anthropic_stream("Made careers.", &[]));
    let session = env.turn("add careers", None).await;
    assert!(env.store.page_by_slug(&env.scope, "careers").await.is_ok());
    let requests = env.fake.requests();
    // tool results travel as user blocks answering the tool_use ids
    let second = &requests[1];
    assert!(second["system"].as_str().unwrap().contains("<rules>"));
    let last = second["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"][0]["type"], "tool_result");
    assert_eq!(last["content"][0]["tool_use_id"], "tu_1");
    assert_eq!(env.fake.keys.lock().unwrap()[0], "test-key");
    let s = env.store.session(&env.scope, &session).await.unwrap();
    assert_eq!(s.input_tokens, 240);
    assert_eq!(s.output_tokens, 36);
}

#[tokio::test]
async fn no_provider_answers_at_once_with_how_to_configure_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = quire_store::testing::open(dir.path()).await.unwrap();
    let scope = quire_store::seed::seed_demo(&store, &dir.path().join("u")).await.unwrap().scope.unwrap();
    let registry =
        std::sync::Arc::new(quire_tools::Registry::new(quire_tools::Services::new(store.clone(), dir.path())));
    let runtime = quire_agent::Runtime::new(registry, quire_agent::Profiles::default());
    let actor = format!("token:{}", editor_token(&store).await);
    let person = quire_agent::Person { actor, group: quire_core::access::Group::Editor, scope };
    let started = runtime.start(&person, "editor", "hello", None, None, None).await.unwrap();
    started.handle.await.unwrap();
    let history = runtime.events().history(&started.session_id);
    let text = history.last().unwrap().data["result"]["text"].as_str().unwrap().to_string();
    assert!(text.contains("QUIRE_LLM_PROVIDER"), "{text}");
}

#[tokio::test]
async fn a_revoked_token_stops_its_sessions() {
    let env = Env::openai().await;
    env.fake.push(openai_stream("Hello.", &[]));
    let session = env.turn("hi", None).await;
    env.store.revoke_token(&env.scope.site_id, env.actor.trim_start_matches("token:")).await.unwrap();
    let started = env.runtime.start(&env.person(), "editor", "again", Some(&session), None, None).await.unwrap();
    started.handle.await.unwrap();
    let last = env.runtime.events().history(&session).last().unwrap().clone();
    assert_eq!(last.kind(), "RUN_ERROR");
    assert!(last.data["message"].as_str().unwrap().contains("revoked"), "{}", last.data);
    assert_eq!(env.fake.requests().len(), 1, "the model was not asked again");
}

#[test]
fn profiles_come_from_the_environment() {
    use quire_agent::{Profiles, ProviderKind};
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    };
    assert!(Profiles::from_env(&env(&[])).unwrap().is_none());
    let p = Profiles::from_env(&env(&[("ANTHROPIC_API_KEY", "a"), ("QUIRE_LLM_MODEL", "claude-x")])).unwrap().unwrap();
    assert_eq!((p.provider, p.api_key.as_deref()), (ProviderKind::Anthropic, Some("a")));
    let p = Profiles::from_env(&env(&[
        ("QUIRE_LLM_BASE_URL", "http://localhost:11434/v1"),
        ("QUIRE_LLM_MODEL", "llama3.2"),
    ]))
    .unwrap()
    .unwrap();
    assert_eq!(p.provider, ProviderKind::Openai);
    assert_eq!(p.model_name(), "llama3.2");
    let p = Profiles::from_env(&env(&[
        ("QUIRE_LLM_PROVIDER", "anthropic"),
        ("QUIRE_LLM_API_KEY", "k"),
        ("OPENAI_API_KEY", "o"),
        ("QUIRE_LLM_MODEL", "claude-x"),
    ]))
    .unwrap()
    .unwrap();
    assert_eq!((p.provider, p.api_key.as_deref()), (ProviderKind::Anthropic, Some("k")));
    // An unknown provider is an error naming the accepted ones, not silence.
    let err = Profiles::from_env(&env(&[("QUIRE_LLM_PROVIDER", "llama"), ("QUIRE_LLM_MODEL", "m")])).unwrap_err();
    assert_eq!(err, "QUIRE_LLM_PROVIDER: \"llama\" is not one of openai, anthropic");
    // A provider without a model is refused before any call, saying what to set.
    let err = Profiles::from_env(&env(&[("QUIRE_LLM_BASE_URL", "http://localhost:11434/v1")])).unwrap_err();
    assert!(err.starts_with("QUIRE_LLM_MODEL is not set: QUIRE_LLM_BASE_URL selects the openai provider"), "{err}");
    // A bare key left in the shell for other programs starts without agents.
    assert!(Profiles::from_env(&env(&[("ANTHROPIC_API_KEY", "a")])).unwrap().is_none());
    assert!(Profiles::from_env(&env(&[("OPENAI_API_KEY", "o")])).unwrap().is_none());
    // So is a configured profile without one.
    let configured = [("local".to_string(), quire_agent::Profile::new(ProviderKind::Openai))].into_iter().collect();
    let err = Profiles::new(configured, &env(&[])).unwrap_err();
    assert!(err.starts_with("model profile \"local\" names no model"), "{err}");
}

#[tokio::test]
async fn the_notes_agent_writes_a_note_and_asks_the_screen_to_open_it() {
    let env = Env::openai().await;
    env.fake.push(openai_stream("", &[("s1", "searchTools", r#"{"query":"write note open note"}"#)]));
    env.fake.push(openai_stream(
        "",
        &[
            ("w1", "writeNote", r##"{"path":"inbox/call.md","content":"# Call with Ana\n- send the deck\n"}"##),
            ("o1", "openNote", r#"{"path":"inbox/call.md"}"#),
        ],
    ));
    env.fake.push(openai_stream("Saved and opened inbox/call.md.", &[]));
    let started = env.runtime.start(&env.person(), "notes", "note my call with Ana", None, None, None).await.unwrap();
    started.handle.await.unwrap();
    let session = started.session_id;
    let requests = env.fake.requests();
    // the notes agent sees vault tools, never CMS ones
    let names = tool_names(&requests[1]);
    assert!(names.contains(&"writeNote".to_string()) && names.contains(&"openNote".to_string()), "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with("Page")), "{names:?}");
    let history = env.runtime.events().history(&session);
    let open = history.iter().find(|e| e.data["name"] == "open").expect("an open request");
    assert_eq!(open.data["value"]["path"], "inbox/call.md");
    let s = env.store.session(&env.scope, &session).await.unwrap();
    assert_eq!(s.memory["note"][0]["id"], "inbox/call.md", "{}", s.memory);
    let filter = quire_store::ChangeFilter { session_id: Some(session.clone()), ..Default::default() };
    let changes = env.store.changes(&env.scope, &filter, 10, None).await.unwrap().items;
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].after.as_ref().unwrap()["content"], "# Call with Ana\n- send the deck\n");
    // and the editor agent does not get vault tools
    env.fake.push(openai_stream("", &[("x", "readNote", r#"{"path":"inbox/call.md","startLine":1}"#)]));
    env.fake.push(openai_stream("I cannot read notes.", &[]));
    env.turn("read my note", None).await;
    let refused = last_tool_result(&env.fake.requests()[4]);
    assert!(refused["error"].as_str().unwrap().contains("not enabled for agent editor"), "{refused}");
}
