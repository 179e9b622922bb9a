//! A person's approval preferences: above the server's floor, never below
//! it. `always` makes any tool that runs for them wait for their approval
//! through the same confirmations destructive calls use; the tool's own
//! entry beats its category's, which beats the default.

mod common;
use common::{Env, fails, ok};
use quire_core::access::Group;
use quire_core::model::{ApprovalMode, ApprovalPreferences, Surface};
use quire_store::NewToken;
use quire_store::NewUser;
use quire_tools::{ApprovalPolicy, CallContext};
use serde_json::{Value, json};

/// An administrator of the demo site: their user id.
async fn person(env: &Env, email: &str) -> String {
    let user = env
        .store
        .create_user(NewUser {
            email: email.into(),
            display_name: None,
            group: Group::Admin,
            sites: vec![(env.scope.site_id.clone(), None)],
            password: None,
        })
        .await
        .unwrap();
    user.id
}

async fn prefer(env: &Env, user: &str, preferences: ApprovalPreferences) {
    env.store.set_approval_preferences(user, &env.scope.site_id, &preferences, &format!("user:{user}")).await.unwrap();
}

fn as_person(env: &Env, user: &str, surface: Surface) -> CallContext {
    CallContext::new(format!("user:{user}"), Group::Admin, env.scope.clone(), surface)
}

fn confirmation_id(preview: &Value) -> String {
    assert_eq!(preview["requiresConfirmation"], true, "{preview}");
    preview["confirmationId"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn always_on_a_read_waits_and_runs_once_approved() {
    let env = Env::new().await;
    let user = person(&env, "reader@example.com").await;
    let mut preferences = ApprovalPreferences::default();
    preferences.tools.insert("getPage".into(), ApprovalMode::Always);
    prefer(&env, &user, preferences).await;
    let about = env.page_id("about").await;
    let me = as_person(&env, &user, Surface::Rest);

    let preview = ok(env.call_as(&me, "getPage", json!({"id": about})).await);
    let id = confirmation_id(&preview);
    let message = preview["message"].as_str().unwrap();
    assert!(message.contains("getPage with id") && message.contains("approval preferences"), "{message}");
    assert_eq!(preview["items"][0]["entity"], "page", "{preview}");
    assert!(preview.get("item").is_none(), "nothing was read yet: {preview}");

    // The call waits; `confirmed: true` is no approval of it.
    fails(&env.call_as(&me, "getPage", json!({"id": about, "confirmationId": id})).await, "APPROVAL_REQUIRED");
    fails(&env.call_as(&me, "getPage", json!({"id": about, "confirmed": true})).await, "APPROVAL_REQUIRED");

    env.registry.approve(&env.ctx(Group::Editor), &id).await.unwrap();
    let done = ok(env.call_as(&me, "getPage", json!({"id": about, "confirmationId": id})).await);
    assert_eq!(done["items"][0]["id"], about.as_str(), "{done}");
    let again =
        fails(&env.call_as(&me, "getPage", json!({"id": about, "confirmationId": id})).await, "APPROVAL_REQUIRED");
    assert!(again.contains("already used"), "{again}");

    // Other tools, and other people, are untouched.
    ok(env.call_as(&me, "getSection", json!({"pageId": about})).await);
    let other = person(&env, "other@example.com").await;
    ok(env.call_as(&as_person(&env, &other, Surface::Rest), "getPage", json!({"id": about})).await);
}

#[tokio::test]
async fn the_floor_is_never_lowered() {
    let env = Env::new().await;
    let user = person(&env, "bold@example.com").await;
    let mut preferences = ApprovalPreferences { default: ApprovalMode::Never, ..ApprovalPreferences::default() };
    for key in ["page", "internal", "external", "httpResponse"] {
        preferences.categories.insert(key.into(), ApprovalMode::Never);
    }
    preferences.tools.insert("deletePage".into(), ApprovalMode::Never);
    preferences.tools.insert("httpPost".into(), ApprovalMode::Never);
    prefer(&env, &user, preferences).await;
    let me = as_person(&env, &user, Surface::Rest);
    let about = env.page_id("about").await;
    confirmation_id(&ok(env.call_as(&me, "deletePage", json!({"ids": [about]})).await));
    assert!(env.store.page(&env.scope, &about).await.is_ok(), "nothing was archived");
    let send = env.call_as(&me, "httpPost", json!({"url": "https://example.com/hook", "body": "{}"})).await;
    confirmation_id(&ok(send));
    // Reads and reversible writes run at once, as without preferences.
    ok(env.call_as(&me, "updatePage", json!({"id": about, "name": "About us"})).await);
}

#[tokio::test]
async fn the_tool_beats_its_category_which_beats_the_default() {
    let env = Env::new().await;
    let user = person(&env, "careful@example.com").await;
    let mut preferences = ApprovalPreferences { default: ApprovalMode::Always, ..ApprovalPreferences::default() };
    preferences.categories.insert("page".into(), ApprovalMode::Never);
    preferences.categories.insert("internal".into(), ApprovalMode::Destructive);
    preferences.tools.insert("updatePage".into(), ApprovalMode::Always);
    prefer(&env, &user, preferences).await;
    let me = as_person(&env, &user, Surface::Mcp);
    let about = env.page_id("about").await;
    // The tool's own entry.
    confirmation_id(&ok(env.call_as(&me, "updatePage", json!({"id": about, "name": "Ours"})).await));
    assert_eq!(env.store.page(&env.scope, &about).await.unwrap().name, "About");
    // What it works on (page: never) before where it reaches (internal).
    ok(env.call_as(&me, "getPage", json!({"id": about})).await);
    // Where it reaches (internal: destructive) before the default (always).
    ok(env.call_as(&me, "getSection", json!({"pageId": about})).await);
    // The default, for what nothing names.
    confirmation_id(&ok(env.call_as(&me, "searchWeb", json!({"query": "quire", "mode": "quick"})).await));
    // The conversation's own tools never ask.
    ok(env.call_as(&me, "searchTools", json!({"query": "update page"})).await);
}

#[tokio::test]
async fn a_token_carries_its_persons_preferences_and_a_token_of_no_one_none() {
    let env = Env::new().await;
    let user = person(&env, "owner@example.com").await;
    let mut preferences = ApprovalPreferences::default();
    preferences.categories.insert("page".into(), ApprovalMode::Always);
    prefer(&env, &user, preferences).await;
    let about = env.page_id("about").await;
    let theirs = NewToken { user_id: Some(user.clone()), ..NewToken::new("theirs", Group::Editor, &env.scope.site_id) };
    let (theirs, _) = env.store.create_token(theirs).await.unwrap();
    let (nobodys, _) = env.store.create_token(NewToken::new("cli", Group::Editor, &env.scope.site_id)).await.unwrap();
    let via = |id: &str| CallContext::new(format!("token:{id}"), Group::Editor, env.scope.clone(), Surface::Mcp);
    confirmation_id(&ok(env.call_as(&via(&theirs.id), "getPage", json!({"id": about})).await));
    ok(env.call_as(&via(&nobodys.id), "getPage", json!({"id": about})).await);
    assert_eq!(env.store.person_of(&format!("token:{}", theirs.id)).await.unwrap(), Some(user.clone()));
    assert_eq!(env.store.person_of(&format!("token:{}", nobodys.id)).await.unwrap(), None);
}

#[tokio::test]
async fn an_agent_asks_its_person_under_either_policy() {
    let env = Env::new().await;
    let user = person(&env, "chatter@example.com").await;
    let mut preferences = ApprovalPreferences::default();
    preferences.categories.insert("page".into(), ApprovalMode::Always);
    prefer(&env, &user, preferences).await;
    let about = env.page_id("about").await;
    for policy in [ApprovalPolicy::User, ApprovalPolicy::Conversational] {
        let agent = CallContext {
            session_id: Some(format!("s-{policy}")),
            turn_id: Some("1".into()),
            policy,
            ..CallContext::new(format!("user:{user}"), Group::Editor, env.scope.clone(), Surface::Agent)
        };
        let preview = ok(env.call_as(&agent, "updatePage", json!({"id": about, "name": "Agent's"})).await);
        let id = confirmation_id(&preview);
        assert!(preview["message"].as_str().unwrap().contains("A person must approve it"), "{preview}");
        // The model cannot confirm it itself, in either policy.
        fails(
            &env.call_as(&agent, "updatePage", json!({"id": about, "name": "Agent's", "confirmed": true})).await,
            "APPROVAL_REQUIRED",
        );
        env.registry.approve(&as_person(&env, &user, Surface::Web), &id).await.unwrap();
        ok(env.call_as(&agent, "updatePage", json!({"id": about, "name": "Agent's", "confirmationId": id})).await);
    }
    assert_eq!(env.store.page(&env.scope, &about).await.unwrap().name, "Agent's");
}
