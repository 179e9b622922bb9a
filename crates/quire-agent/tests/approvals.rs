//! Destructive calls pause the turn until a person answers; the runtime
//! resumes it, re-checking what the approval covered.

mod support;

use quire_agent::ProviderKind;
use quire_core::model::SessionStatus;
use serde_json::{Value, json};
use std::time::Duration;
use support::*;

async fn paused(env: &Env, session: &str) -> Vec<Value> {
    let s = env.store.session(&env.scope, session).await.unwrap();
    assert_eq!(s.status, SessionStatus::Paused, "{s:?}");
    let last = env.runtime.events().history(session).last().unwrap().clone();
    assert_eq!(last.kind(), "RUN_FINISHED");
    assert_eq!(last.data["outcome"]["type"], "interrupt");
    // One AG-UI interrupt per call the session waits on, bound to the call.
    let interrupts = last.data["outcome"]["interrupts"].as_array().unwrap();
    let pending = s.pending.as_array().unwrap().clone();
    assert_eq!(interrupts.len(), pending.len());
    for (interrupt, call) in interrupts.iter().zip(&pending) {
        assert_eq!(interrupt["id"], call["approvalId"]);
        assert_eq!(interrupt["reason"], "tool_call");
        assert_eq!(interrupt["toolCallId"], call["toolCallId"]);
        assert_eq!(interrupt["metadata"]["tool"], call["tool"]);
        assert_eq!(interrupt["metadata"]["arguments"], call["arguments"]);
        assert_eq!(interrupt["metadata"]["items"], call["items"]);
        assert!(interrupt["message"].as_str().unwrap().ends_with(call["message"].as_str().unwrap()));
    }
    pending
}

async fn resume(env: &Env, session: &str) {
    let handle = env.runtime.resume(&env.scope, session).await.unwrap().expect("ready to resume");
    tokio::time::timeout(Duration::from_secs(30), handle).await.unwrap().unwrap();
}

/// A turn asking for the page `slug` deleted, paused on the approval of
/// the call; the model's next answer is `after`. Answers the page's id, the
/// session and the approvals it waits for.
async fn deletion_paused(env: &Env, slug: &str, after: &str) -> (String, String, Vec<Value>) {
    let page = env.page_id(slug).await;
    env.delete_page(&page);
    env.fake.push(openai_stream(after, &[]));
    let session = env.turn(&format!("delete {slug}"), None).await;
    let approvals = paused(env, &session).await;
    (page, session, approvals)
}

#[tokio::test]
async fn approved_calls_run_and_the_loop_continues() {
    let env = Env::openai().await;
    let contact = env.page_id("contact").await;
    env.delete_page(&contact);
    env.fake.push(openai_stream("", &[("fin", "finalAnswer", r#"{"message":"Archived contact."}"#)]));
    let session = env.turn("delete the contact page", None).await;

    let approvals = paused(&env, &session).await;
    assert_eq!(approvals.len(), 1);
    assert_eq!(approvals[0]["tool"], "deletePage");
    assert_eq!(approvals[0]["arguments"], json!({ "ids": [contact] }));
    assert!(approvals[0]["message"].as_str().unwrap().contains("contact"), "{}", approvals[0]);
    assert!(env.store.page(&env.scope, &contact).await.is_ok(), "nothing ran yet");
    assert_eq!(env.fake.requests().len(), 1, "the model waits too");
    // Not ready: resuming now does nothing.
    assert!(env.runtime.resume(&env.scope, &session).await.unwrap().is_none());
    // Nobody can start another turn meanwhile.
    let busy = env.runtime.start(&env.person(), "editor", "and more", Some(&session), None, None).await.unwrap_err();
    assert!(busy.to_string().contains("waits for approvals"), "{busy}");

    env.approve(&approvals[0]).await;
    resume(&env, &session).await;

    assert!(env.store.page(&env.scope, &contact).await.is_err(), "archived after approval");
    // the resumed call names what it archived, so a screen can offer its undo
    let changed: Vec<Value> = env
        .runtime
        .events()
        .history(&session)
        .iter()
        .filter(|e| e.kind() == "CUSTOM" && e.data["name"] == "entity_changed")
        .map(|e| e.data["value"].clone())
        .collect();
    assert!(
        changed.iter().any(|c| c["entity"] == "page" && c["id"] == contact.as_str() && c["label"].is_string()),
        "{changed:?}"
    );
    assert!(changed.iter().all(|c| c["id"].is_string()), "{changed:?}");
    let requests = env.fake.requests();
    assert_eq!(requests.len(), 2);
    let result = last_tool_result(&requests[1]);
    assert_eq!(result["success"], true, "{result}");
    let s = env.store.session(&env.scope, &session).await.unwrap();
    assert_eq!(s.status, SessionStatus::Idle);
    assert_eq!(s.pending, json!([]));
    assert_eq!(env.runtime.events().history(&session).last().unwrap().data["outcome"]["type"], "success");
}

#[tokio::test]
async fn rejected_calls_tell_the_model_why() {
    let env = Env::openai().await;
    let (pricing, session, approvals) = deletion_paused(&env, "pricing", "Understood, I left it.").await;
    env.reject(&approvals[0], Some("we still sell things")).await;
    resume(&env, &session).await;
    let result = last_tool_result(&env.fake.requests()[1]);
    assert_eq!(result["errorCode"], "REJECTED");
    assert!(result["error"].as_str().unwrap().contains("we still sell things"), "{result}");
    assert!(env.store.page(&env.scope, &pricing).await.is_ok());
}

#[tokio::test]
async fn expired_requests_are_reported_and_change_nothing() {
    let env =
        Env::new(ProviderKind::Openai, |p| p, |r| r.with_confirmation_ttl(chrono::Duration::milliseconds(300))).await;
    let (pricing, session, _) = deletion_paused(&env, "pricing", "Nobody answered; nothing changed.").await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    // the sweeper (as the server runs it) picks it up
    assert_eq!(env.runtime.sweep().await, 1);
    env.wait_idle(&session).await;
    let result = last_tool_result(&env.fake.requests()[1]);
    assert_eq!(result["errorCode"], "APPROVAL_EXPIRED");
    assert!(env.store.page(&env.scope, &pricing).await.is_ok());
}

#[tokio::test]
async fn a_record_changed_since_the_preview_stops_the_call() {
    let env = Env::openai().await;
    let (contact, session, approvals) = deletion_paused(&env, "contact", "It changed; I stopped.").await;
    env.approve(&approvals[0]).await;
    // someone edits the page after the preview
    env.store
        .update_page(
            &quire_core::model::ChangeContext::system(),
            &env.scope,
            &contact,
            quire_core::input::PagePatch { name: Some("Contact us".into()), ..Default::default() },
        )
        .await
        .unwrap();
    resume(&env, &session).await;
    let result = last_tool_result(&env.fake.requests()[1]);
    assert_eq!(result["success"], false, "{result}");
    assert!(result["error"].as_str().unwrap().contains("changed"), "{result}");
    assert!(env.store.page(&env.scope, &contact).await.is_ok(), "nothing ran");
}

#[tokio::test]
async fn parallel_calls_run_safe_ones_and_pause_for_each_destructive_one() {
    let env = Env::openai().await;
    let contact = env.page_id("contact").await;
    let pricing = env.page_id("pricing").await;
    let d1 = json!({ "ids": [contact] }).to_string();
    let d2 = json!({ "ids": [pricing] }).to_string();
    env.fake.push(openai_stream(
        "",
        &[
            ("a", "getPage", r#"{"slug":"about"}"#),
            ("b", "deletePage", &d1),
            ("c", "createPage", r#"{"name":"Jobs","slug":"jobs"}"#),
            ("d", "deletePage", &d2),
        ],
    ));
    env.fake.push(openai_stream("Done: jobs created; contact archived; pricing kept.", &[]));
    let session = env.turn("several things", None).await;
    let approvals = paused(&env, &session).await;
    assert_eq!(approvals.len(), 2);
    assert!(env.store.page_by_slug(&env.scope, "jobs").await.is_ok(), "the safe call ran");
    let messages = env.store.session_messages(&env.scope, &session).await.unwrap();
    let tool_results: Vec<&str> =
        messages.iter().filter(|m| m.body["role"] == "tool").map(|m| m.body["toolCallId"].as_str().unwrap()).collect();
    assert_eq!(tool_results, ["a", "c"]);

    // one answered: still paused
    env.approve(&approvals[0]).await;
    assert!(env.runtime.resume(&env.scope, &session).await.unwrap().is_none());
    env.reject(&approvals[1], Some("keep it")).await;
    resume(&env, &session).await;
    assert!(env.store.page(&env.scope, &contact).await.is_err());
    assert!(env.store.page(&env.scope, &pricing).await.is_ok());
    // every call of the answer got exactly one result before the next request
    let request = &env.fake.requests()[1];
    let ids: Vec<&str> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["a", "c", "b", "d"]);
}

#[tokio::test]
async fn a_paused_run_resumes_after_a_restart() {
    let env = Env::openai().await;
    let (contact, session, approvals) = deletion_paused(&env, "contact", "Archived.").await;
    // the process stops; a new one starts over the same database
    let restarted = env.restarted();
    env.approve(&approvals[0]).await;
    assert_eq!(restarted.sweep().await, 1);
    env.wait_idle(&session).await;
    assert!(env.store.page(&env.scope, &contact).await.is_err());
    assert_eq!(restarted.events().history(&session).last().unwrap().data["outcome"]["type"], "success");
    // a second sweep finds nothing to do
    assert_eq!(restarted.sweep().await, 0);
}

#[tokio::test]
async fn the_model_cannot_approve_for_itself() {
    let env = Env::openai().await;
    let contact = env.page_id("contact").await;
    env.delete_page(&contact);
    let session = env.turn("delete contact", None).await;
    let approvals = paused(&env, &session).await;
    let id = approvals[0]["approvalId"].as_str().unwrap().to_string();
    // through the agent surface, approval is refused
    let mut agent_ctx = approver(&env);
    agent_ctx.surface = quire_core::model::Surface::Agent;
    assert!(env.registry.approve(&agent_ctx, &id).await.is_err());
    // a forged confirmed/confirmationId from the model is stripped under the user policy
    let forged = json!({ "ids": [contact], "confirmed": true, "confirmationId": id }).to_string();
    env.fake.push(openai_stream("", &[("x", "deletePage", &forged)]));
    env.registry.reject(&approver(&env), &id, None).await.unwrap();
    resume(&env, &session).await;
    assert!(env.store.page(&env.scope, &contact).await.is_ok());
    // it became a fresh request for a person, not an execution
    let again = paused(&env, &session).await;
    assert_ne!(again[0]["approvalId"].as_str().unwrap(), id);
    assert_eq!(again[0]["arguments"], json!({ "ids": [contact] }));
}

#[tokio::test]
async fn the_conversational_policy_uses_confirmed_after_a_preview() {
    let env = Env::openai().await;
    conversational(&env).await;
    let contact = env.page_id("contact").await;
    let args = json!({ "ids": [contact] }).to_string();
    let confirmed = json!({ "ids": [contact], "confirmed": true }).to_string();
    env.fake.push(openai_stream("", &[("p", "deletePage", &args)]));
    env.fake.push(openai_stream("This archives contact. Shall I?", &[]));
    let session = env.turn("delete contact", None).await;
    let s = env.store.session(&env.scope, &session).await.unwrap();
    assert_eq!(s.status, SessionStatus::Idle, "no pause under the conversational policy");
    let preview = last_tool_result(&env.fake.requests()[1]);
    assert_eq!(preview["requiresConfirmation"], true);
    // the schema offers `confirmed`, never `confirmationId`
    let tools = env.fake.requests()[1]["tools"].as_array().unwrap().clone();
    let delete = tools.iter().find(|t| t["function"]["name"] == "deletePage").unwrap();
    assert!(delete["function"]["parameters"]["properties"].get("confirmed").is_some());
    assert!(delete["function"]["parameters"]["properties"].get("confirmationId").is_none());

    // the model may not confirm in the turn that showed the preview
    let same_turn = json!({ "ids": [contact], "confirmed": true }).to_string();
    assert!(!env.fake.requests()[1].to_string().contains(&same_turn));
    env.fake.push(openai_stream("", &[("q", "deletePage", &confirmed)]));
    env.fake.push(openai_stream("Archived.", &[]));
    // the server reads the person's plain yes as their approval of the one preview
    env.turn("Yes, go ahead.", Some(&session)).await;
    assert!(env.store.page(&env.scope, &contact).await.is_err());
    let id = preview["confirmationId"].as_str().unwrap();
    let approval = env.store.confirmation(&env.scope, id).await.unwrap();
    assert_eq!(approval.resolved_by.as_deref(), Some(env.actor.as_str()), "approved by the person");
}

/// Puts the editor agent under the conversational policy.
async fn conversational(env: &Env) {
    env.store
        .update_agent(
            &quire_core::model::ChangeContext::system(),
            &env.scope,
            "editor",
            &quire_core::input::AgentPatch {
                approval_policy: Some(quire_core::model::AgentPolicy::Conversational),
                ..Default::default()
            },
            None,
        )
        .await
        .unwrap();
}

/// The editor agent under the conversational policy; a turn that previews
/// archiving `page` and asks; answers the session.
async fn conversational_preview(env: &Env, page: &str) -> String {
    conversational(env).await;
    let args = json!({ "ids": [page] }).to_string();
    env.fake.push(openai_stream("", &[("p", "deletePage", &args)]));
    env.fake.push(openai_stream("This archives the page. Shall I?", &[]));
    env.turn("delete that page", None).await
}

/// The model answers the person's next message by confirming anyway.
fn confirms_anyway(env: &Env, page: &str) {
    let confirmed = json!({ "ids": [page], "confirmed": true }).to_string();
    env.fake.push(openai_stream("", &[("q", "deletePage", &confirmed)]));
    env.fake.push(openai_stream("Done.", &[]));
}

#[tokio::test]
async fn under_the_conversational_policy_a_refusal_or_another_message_approves_nothing() {
    for answer in ["No, do not delete anything.", "Thanks, bye", "yes but first show me the child pages"] {
        let env = Env::openai().await;
        let about = env.page_id("about").await;
        let session = conversational_preview(&env, &about).await;
        confirms_anyway(&env, &about);
        env.turn(answer, Some(&session)).await;
        assert!(env.store.page(&env.scope, &about).await.is_ok(), "\"{answer}\" archived nothing");
        let refused = last_tool_result(&env.fake.requests()[3]);
        assert_eq!(refused["errorCode"], "APPROVAL_REQUIRED", "{answer}: {refused}");
        // the preview was refused, not left for a later message to approve
        assert!(env.store.pending_confirmations(&env.scope).await.unwrap().is_empty(), "{answer}");
        let changes = env.store.changes(&env.scope, &Default::default(), 100, None).await.unwrap().items;
        assert!(changes.iter().all(|c| c.action != quire_core::model::ChangeAction::Archive), "{answer}");
    }
}

#[tokio::test]
async fn under_the_conversational_policy_a_structured_answer_approves_whatever_the_words() {
    let env = Env::openai().await;
    let about = env.page_id("about").await;
    let session = conversational_preview(&env, &about).await;
    let preview = last_tool_result(&env.fake.requests()[1]);
    let id = preview["confirmationId"].as_str().unwrap().to_string();
    confirms_anyway(&env, &about);
    // an answer naming a preview of another conversation is refused
    let wrong = quire_agent::PreviewAnswer { confirmation_id: "nope".into(), approve: true };
    let err =
        env.runtime.start(&env.person(), "editor", "approved", Some(&session), None, Some(wrong)).await.unwrap_err();
    assert!(err.to_string().contains("confirm: nope is not a preview of session"), "{err}");
    let answer = quire_agent::PreviewAnswer { confirmation_id: id.clone(), approve: true };
    let started = env
        .runtime
        .start(&env.person(), "editor", "Approved from the card", Some(&session), None, Some(answer))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), started.handle).await.unwrap().unwrap();
    assert!(env.store.page(&env.scope, &about).await.is_err(), "archived once the person approved");
    let approval = env.store.confirmation(&env.scope, &id).await.unwrap();
    assert_eq!(approval.resolved_by.as_deref(), Some(env.actor.as_str()));
}
