//! Agents, contexts and workspaces as tools: the same registry, access
//! rules and approvals as content. Changing an agent is an admin's call a
//! person approves, previewed with what it would become and refused before
//! anyone is asked when it cannot succeed; contexts and workspaces are
//! records whose every change is logged and undone, and whose delete
//! archives.

mod common;
use common::{Env, fails, ok};
use quire_core::access::Group;
use quire_core::model::{ChangeContext, EntityKind, Surface};
use quire_store::ChangeFilter;
use quire_tools::{ApprovalPolicy, CallContext};
use serde_json::{Value, json};

fn confirmation(preview: &Value) -> String {
    assert_eq!(preview["requiresConfirmation"], true, "{preview}");
    preview["confirmationId"].as_str().unwrap().to_string()
}

/// Calls a destructive tool as an admin, approves its preview as another
/// admin, and runs it: answers the preview and the result.
async fn approved(env: &Env, name: &str, args: Value) -> (Value, Value) {
    let admin = env.ctx(Group::Admin);
    let preview = ok(env.call_as(&admin, name, args.clone()).await);
    let id = confirmation(&preview);
    env.registry.approve(&env.ctx(Group::Admin), &id).await.unwrap();
    let mut args = args;
    args["confirmationId"] = json!(id);
    (preview, env.call_as(&admin, name, args).await)
}

#[tokio::test]
async fn contexts_are_created_read_changed_undone_and_archived() {
    let env = Env::new().await;
    // The demo site keeps its brand voice.
    let listed = ok(env.call("getContext", json!({"all": true})).await);
    let voice = listed["items"].as_array().unwrap().iter().find(|c| c["key"] == "brand-voice").unwrap().clone();
    assert!(voice.get("body").is_none(), "a list leaves the texts out: {listed}");
    let read = ok(env.call("getContext", json!({"id": "brand-voice"})).await);
    assert!(read["items"][0]["body"].as_str().unwrap().contains("No superlatives"), "{read}");

    // Authors read them; only editors and admins write them.
    let author = env.ctx(Group::Author);
    ok(env.call_as(&author, "getContext", json!({"id": "brand-voice"})).await);
    let body = json!({"key": "style-guide", "name": "Style guide", "body": "Dates as 3 March 2026."});
    fails(&env.call_as(&author, "createContext", body.clone()).await, "FORBIDDEN");
    let editor = env.ctx(Group::Editor);
    let made = ok(env.call_as(&editor, "createContext", body.clone()).await);
    assert_eq!(made["item"]["key"], "style-guide");
    let id = made["item"]["id"].as_str().unwrap().to_string();

    // Bad input names what is wrong and changes nothing.
    let taken = fails(&env.call_as(&editor, "createContext", body).await, "CONFLICT");
    assert!(taken.contains("key"), "{taken}");
    let empty = json!({"key": "Bad Key", "name": "x", "body": " "});
    let wrong = fails(&env.call_as(&editor, "createContext", empty).await, "VALIDATION");
    assert!(wrong.contains("key") && wrong.contains("body"), "{wrong}");
    let long = json!({"id": "style-guide", "body": "x".repeat(8_001)});
    assert!(fails(&env.call_as(&editor, "updateContext", long).await, "VALIDATION").contains("body"));

    // A change with a stale version is refused; a fresh one is logged.
    let stale = json!({"id": "style-guide", "version": 7, "body": "Dates as 2026-03-03."});
    fails(&env.call_as(&editor, "updateContext", stale).await, "CONFLICT");
    let changed = ok(env
        .call_as(&editor, "updateContext", json!({"id": id, "version": 1, "body": "Dates as 2026-03-03."}))
        .await);
    assert_eq!(changed["item"]["version"], 2);
    let filter = ChangeFilter { entity: Some(EntityKind::Context), entity_id: Some(id.clone()), ..Default::default() };
    let log = env.store.changes(&env.scope, &filter, 10, None).await.unwrap().items;
    assert_eq!(log.len(), 2, "the create and the update are logged");
    // Restoring the first revision undoes the update.
    let first = log.iter().find(|c| c.action.as_str() == "create").unwrap();
    env.store.restore_revision(&ChangeContext::system(), &env.scope, first.id).await.unwrap();
    let back = ok(env.call("getContext", json!({"id": "style-guide"})).await);
    assert_eq!(back["items"][0]["body"], "Dates as 3 March 2026.");

    // A delete archives, after a person's approval; restoreArchive brings it back.
    fails(&env.call_as(&author, "deleteContext", json!({"ids": [id]})).await, "FORBIDDEN");
    let (preview, done) = approved(&env, "deleteContext", json!({"ids": [id]})).await;
    assert!(preview["message"].as_str().unwrap().contains("style-guide"), "{preview}");
    let archive = ok(done)["items"][0]["id"].as_str().unwrap().to_string();
    fails(&env.call("getContext", json!({"id": "style-guide"})).await, "NOT_FOUND");
    let (_, restored) = approved(&env, "restoreArchive", json!({"ids": [archive]})).await;
    ok(restored);
    ok(env.call("getContext", json!({"id": "style-guide"})).await);
}

#[tokio::test]
async fn changing_an_agent_is_an_admins_call_a_person_approves() {
    let env = Env::new().await;
    let editor = env.ctx(Group::Editor);
    // Everyone lists the agents they may use; disabled ones only admins see.
    let seen = ok(env.call_as(&editor, "getAgent", json!({"all": true})).await);
    assert!(seen["items"].as_array().unwrap().iter().any(|a| a["alias"] == "editor"), "{seen}");

    let new = json!({
        "alias": "translator", "name": "Translator", "systemPrompt": "Translate pages into German.",
        "tools": ["tag:page", "!deletePage"], "contexts": ["brand-voice"], "allowedGroups": ["editor", "admin"],
    });
    fails(&env.call_as(&editor, "createAgent", new.clone()).await, "FORBIDDEN");

    // Refused before anyone is asked: an unknown context, a taken alias, a bad alias.
    let admin = env.ctx(Group::Admin);
    let mut unknown = new.clone();
    unknown["contexts"] = json!(["brand-voice", "no-such-context"]);
    let said = fails(&env.call_as(&admin, "createAgent", unknown).await, "VALIDATION");
    assert!(said.contains("contexts[1]") && said.contains("no-such-context"), "{said}");
    let mut taken = new.clone();
    taken["alias"] = json!("editor");
    assert!(fails(&env.call_as(&admin, "createAgent", taken).await, "CONFLICT").contains("alias"));
    let mut bad = new.clone();
    bad["alias"] = json!("Not An Alias");
    assert!(fails(&env.call_as(&admin, "createAgent", bad).await, "VALIDATION").contains("alias"));
    assert!(env.store.agent(&env.scope, "translator").await.is_err(), "nothing was created");

    // The preview says what the agent would be; it runs once approved.
    let (preview, done) = approved(&env, "createAgent", new).await;
    let message = preview["message"].as_str().unwrap();
    assert!(message.contains("translator") && message.contains("brand-voice"), "{message}");
    let created = ok(done);
    assert_eq!(created["item"]["contexts"], json!(["brand-voice"]));
    let agent = env.store.agent(&env.scope, "translator").await.unwrap();
    assert_eq!(agent.system_prompt, "Translate pages into German.");

    // An update previews before and after; a change made meanwhile voids the approval.
    let change = json!({"id": "translator", "approvalPolicy": "conversational"});
    let preview = ok(env.call_as(&admin, "updateAgent", change.clone()).await);
    assert_eq!(preview["items"][0]["before"]["approvalPolicy"], "user", "{preview}");
    assert_eq!(preview["items"][0]["after"]["approvalPolicy"], "conversational", "{preview}");
    let id = confirmation(&preview);
    env.registry.approve(&admin, &id).await.unwrap();
    let meanwhile = quire_core::input::AgentPatch { name: Some("Übersetzer".into()), ..Default::default() };
    env.store.update_agent(&ChangeContext::system(), &env.scope, "translator", &meanwhile, None).await.unwrap();
    let mut run = change.clone();
    run["confirmationId"] = json!(id);
    fails(&env.call_as(&admin, "updateAgent", run).await, "CONFLICT");
    assert_eq!(env.store.agent(&env.scope, "translator").await.unwrap().approval_policy.as_str(), "user");
    let (_, done) = approved(&env, "updateAgent", change).await;
    assert_eq!(ok(done)["item"]["approvalPolicy"], "conversational");

    // Archiving disables it: an editor no longer sees it, an admin does.
    let (_, done) = approved(&env, "archiveAgent", json!({"id": "translator"})).await;
    assert_eq!(ok(done)["item"]["enabled"], false);
    let seen = ok(env.call_as(&editor, "getAgent", json!({"all": true})).await);
    assert!(!seen["items"].as_array().unwrap().iter().any(|a| a["alias"] == "translator"), "{seen}");
    fails(&env.call_as(&editor, "getAgent", json!({"id": "translator"})).await, "NOT_FOUND");
    ok(env.call_as(&admin, "getAgent", json!({"id": "translator"})).await);

    // Every change was logged, and the log undoes them.
    let filter =
        ChangeFilter { entity: Some(EntityKind::Agent), entity_id: Some(agent.id.clone()), ..Default::default() };
    let log = env.store.changes(&env.scope, &filter, 10, None).await.unwrap().items;
    assert_eq!(log.len(), 4, "create, the rename, the policy and the archive");
    let created = log.iter().find(|c| c.action.as_str() == "create").unwrap();
    env.store.restore_revision(&ChangeContext::system(), &env.scope, created.id).await.unwrap();
    let back = env.store.agent(&env.scope, "translator").await.unwrap();
    assert!(back.enabled && back.name == "Translator" && back.approval_policy.as_str() == "user", "{back:?}");
}

#[tokio::test]
async fn an_agent_session_saves_its_work_and_a_later_one_picks_it_up() {
    let env = Env::new().await;
    let about = env.page_id("about").await;
    let pricing = env.page_id("pricing").await;
    let first = env.agent("session-1", ApprovalPolicy::User);
    let saved = ok(env
        .call_as(
            &first,
            "saveWorkspace",
            json!({
                "name": "Pricing refresh", "goal": "New prices on the pricing page",
                "summary": "Drafted the table; the FAQ is next.",
                "records": [{"kind": "page", "id": pricing}, {"kind": "page", "id": about}],
                "notes": ["campaigns/pricing.md"],
            }),
        )
        .await);
    assert_eq!(saved["item"]["sessionId"], "session-1");
    assert_eq!(saved["item"]["savedBy"], "agent:editor");

    // The same name saves again: a new version, what was left out kept.
    let again =
        ok(env.call_as(&first, "saveWorkspace", json!({"name": "Pricing refresh", "summary": "FAQ done."})).await);
    assert_eq!(again["item"]["version"], 2);
    assert_eq!(again["item"]["goal"], "New prices on the pricing page");
    assert!(again["message"].as_str().unwrap().contains("Updated"), "{again}");
    let bad = json!({"name": "x", "records": [{"kind": "note", "id": "a.md"}]});
    assert!(fails(&env.call_as(&first, "saveWorkspace", bad).await, "VALIDATION").contains("records[0].kind"));

    // A record archived since is said to be gone.
    let (_, archived) = approved(&env, "deletePage", json!({"ids": [about]})).await;
    ok(archived);
    let later = env.agent("session-2", ApprovalPolicy::User);
    let listed = ok(env.call_as(&later, "getWorkspace", json!({"all": true})).await);
    assert_eq!(listed["items"][0]["name"], "Pricing refresh", "the latest saved first: {listed}");
    let loaded = ok(env.call_as(&later, "loadWorkspace", json!({"id": "Pricing refresh"})).await);
    let records = loaded["item"]["records"].as_array().unwrap();
    assert_eq!(records[0], json!({"kind": "page", "id": pricing, "label": "pricing", "live": true}));
    assert_eq!(records[1]["live"], false, "{loaded}");
    assert_eq!(loaded["item"]["summary"], "FAQ done.");
    assert!(loaded["message"].as_str().unwrap().contains("1 of its records"), "{loaded}");

    // The session's saves are undone with its turn.
    let ctx = ChangeContext { surface: Surface::Rest, ..ChangeContext::system() };
    let report = env.store.undo_turn(&ctx, &env.scope, "session-1", "1").await.unwrap();
    assert_eq!(report.reverted.len(), 2, "the update and the create: {report:?}");
    fails(&env.call_as(&later, "loadWorkspace", json!({"id": "Pricing refresh"})).await, "NOT_FOUND");
}

#[tokio::test]
async fn a_viewer_reads_the_memory_and_changes_none_of_it() {
    let env = Env::new().await;
    let viewer = CallContext::new("user:viewer", Group::Viewer, env.scope.clone(), Surface::Mcp);
    ok(env.call_as(&viewer, "getContext", json!({"all": true})).await);
    ok(env.call_as(&viewer, "getWorkspace", json!({"all": true})).await);
    ok(env.call_as(&viewer, "loadWorkspace", json!({"id": "About pages rework"})).await);
    fails(&env.call_as(&viewer, "saveWorkspace", json!({"name": "mine"})).await, "FORBIDDEN");
    fails(&env.call_as(&viewer, "updateContext", json!({"id": "brand-voice", "name": "x"})).await, "FORBIDDEN");
    fails(&env.call_as(&viewer, "archiveAgent", json!({"id": "editor"})).await, "FORBIDDEN");
}
