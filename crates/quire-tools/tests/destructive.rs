//! Destructive tools: preview first, then execution only with an approval
//! bound to the exact arguments and the versions of the previewed records.

mod common;
use common::{Env, fails, ok};
use quire_core::access::Group;
use quire_tools::ApprovalPolicy;
use serde_json::{Value, json};

fn confirmation_id(preview: &Value) -> String {
    assert_eq!(preview["requiresConfirmation"], true, "{preview}");
    preview["confirmationId"].as_str().unwrap().to_string()
}

/// Restores the newest archive of a page, which must be refused as a
/// conflict; answers the reason.
async fn refused_page_restore(env: &Env) -> String {
    let archive =
        ok(env.call("getArchive", json!({"entity": "page"})).await)["items"][0]["id"].as_str().unwrap().to_string();
    fails(&env.call("restoreArchive", json!({"ids": [archive]})).await, "CONFLICT")
}

#[tokio::test]
async fn preview_then_approval_then_execution() {
    let env = Env::new().await;
    let about = env.page_id("about").await;
    let preview = ok(env.call("deletePage", json!({"ids": [about]})).await);
    let id = confirmation_id(&preview);
    let items = preview["items"].as_array().unwrap();
    assert_eq!(items.len(), 6, "about, its 2 sections, team and its 2 sections: {preview}");
    assert!(preview["message"].as_str().unwrap().contains("Nothing has changed yet"));
    assert!(env.store.page(&env.scope, &about).await.is_ok(), "the preview changed nothing");

    let waiting =
        fails(&env.call("deletePage", json!({"ids": [about], "confirmationId": id})).await, "APPROVAL_REQUIRED");
    assert!(waiting.contains("waiting for a person's approval"), "{waiting}");

    let human = env.ctx(Group::Editor);
    let approved = env.registry.approve(&human, &id).await.unwrap();
    assert_eq!(approved.resolved_by.as_deref(), Some("user:editor"));

    let done = ok(env.call("deletePage", json!({"ids": [about], "confirmationId": id})).await);
    assert_eq!(done["items"][0]["items"].as_array().unwrap().len(), 6);
    assert!(env.store.page(&env.scope, &about).await.is_err());

    let reused =
        fails(&env.call("deletePage", json!({"ids": [about], "confirmationId": id})).await, "APPROVAL_REQUIRED");
    assert!(reused.contains("already used"), "{reused}");
}

#[tokio::test]
async fn changed_arguments_are_refused() {
    let env = Env::new().await;
    let pricing = env.page_id("pricing").await;
    let contact = env.page_id("contact").await;
    let id = confirmation_id(&ok(env.call("deletePage", json!({"ids": [pricing]})).await));
    env.registry.approve(&env.ctx(Group::Admin), &id).await.unwrap();
    let other =
        fails(&env.call("deletePage", json!({"ids": [contact], "confirmationId": id})).await, "APPROVAL_REQUIRED");
    assert!(other.contains("other arguments"), "{other}");
    let other_tool =
        fails(&env.call("deleteSection", json!({"ids": [pricing], "confirmationId": id})).await, "APPROVAL_REQUIRED");
    assert!(other_tool.contains("other arguments"));
    assert!(env.store.page(&env.scope, &contact).await.is_ok());
    // the approval still works for the exact call
    ok(env.call("deletePage", json!({"ids": [pricing], "confirmationId": id})).await);
}

#[tokio::test]
async fn a_record_changed_since_the_preview_is_a_conflict() {
    let env = Env::new().await;
    let home = env.page_id("home").await;
    let section = env.store.sections(&env.scope, &home, 1, None).await.unwrap().items.remove(0);
    let id = confirmation_id(&ok(env.call("deleteSection", json!({"ids": [section.id]})).await));
    env.registry.approve(&env.ctx(Group::Admin), &id).await.unwrap();
    ok(env.call("updateSection", json!({"pageSectionId": section.id, "hidden": true})).await);
    let conflict =
        fails(&env.call("deleteSection", json!({"ids": [section.id], "confirmationId": id})).await, "CONFLICT");
    assert!(conflict.contains("changed since the preview"), "{conflict}");
    assert!(env.store.section(&env.scope, &section.id).await.is_ok());
}

#[tokio::test]
async fn a_grown_cascade_is_a_conflict() {
    let env = Env::new().await;
    let about = env.page_id("about").await;
    let team = env.page_id("team").await;
    let id = confirmation_id(&ok(env.call("deletePage", json!({"ids": [about]})).await));
    env.registry.approve(&env.ctx(Group::Admin), &id).await.unwrap();
    ok(env.call("createSection", json!({"pageId": team, "templateKey": "text", "content": {"body": "new"}})).await);
    fails(&env.call("deletePage", json!({"ids": [about], "confirmationId": id})).await, "CONFLICT");
    assert!(env.store.page(&env.scope, &about).await.is_ok());
}

#[tokio::test]
async fn expired_confirmations_are_refused() {
    let env = Env::with(|r| r.with_confirmation_ttl(chrono::Duration::milliseconds(1))).await;
    let contact = env.page_id("contact").await;
    let id = confirmation_id(&ok(env.call("deletePage", json!({"ids": [contact]})).await));
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let err = env.registry.approve(&env.ctx(Group::Admin), &id).await.unwrap_err();
    assert!(err.message.contains("expired"), "{}", err.message);
    let refused =
        fails(&env.call("deletePage", json!({"ids": [contact], "confirmationId": id})).await, "APPROVAL_REQUIRED");
    assert!(refused.contains("expired"));
}

#[tokio::test]
async fn only_permitted_people_approve_and_rejection_reaches_the_model() {
    let env = Env::new().await;
    let contact = env.page_id("contact").await;
    let agent = env.agent("s1", ApprovalPolicy::User);
    let id = confirmation_id(&ok(env.call_as(&agent, "deletePage", json!({"ids": [contact]})).await));
    let err = env.registry.approve(&agent, &id).await.unwrap_err();
    assert_eq!(err.code, quire_tools::ErrorCode::Forbidden);
    let err = env.registry.approve(&env.ctx(Group::Author), &id).await.unwrap_err();
    assert!(err.message.contains("may not use deletePage"), "{}", err.message);
    env.registry.reject(&env.ctx(Group::Editor), &id, Some("keep the contact page")).await.unwrap();
    let rejected = fails(
        &env.call_as(&agent, "deletePage", json!({"ids": [contact], "confirmationId": id})).await,
        "APPROVAL_REQUIRED",
    );
    assert_eq!(rejected, "the request was rejected: keep the contact page");
    assert!(env.registry.approve(&env.ctx(Group::Admin), &id).await.is_err(), "a rejection is final");
    let pending = env.registry.pending(&env.scope).await.unwrap();
    assert!(pending.is_empty());
}

#[tokio::test]
async fn confirmed_true_works_only_under_the_conversational_policy() {
    let env = Env::new().await;
    let contact = env.page_id("contact").await;
    let strict = env.agent("s1", ApprovalPolicy::User);
    ok(env.call_as(&strict, "deletePage", json!({"ids": [contact]})).await);
    let refused = fails(
        &env.call_as(&strict, "deletePage", json!({"ids": [contact], "confirmed": true})).await,
        "APPROVAL_REQUIRED",
    );
    assert!(refused.contains("not accepted"), "{refused}");

    let chat = env.agent("s2", ApprovalPolicy::Conversational);
    let no_preview = fails(
        &env.call_as(&chat, "deletePage", json!({"ids": [contact], "confirmed": true})).await,
        "APPROVAL_REQUIRED",
    );
    assert!(no_preview.contains("no preview"));
    let preview = ok(env.call_as(&chat, "deletePage", json!({"ids": [contact]})).await);
    assert!(preview["message"].as_str().unwrap().contains("confirmed: true"));
    let other_session = env.agent("s3", ApprovalPolicy::Conversational);
    fails(
        &env.call_as(&other_session, "deletePage", json!({"ids": [contact], "confirmed": true})).await,
        "APPROVAL_REQUIRED",
    );
    let pricing = env.page_id("pricing").await;
    fails(&env.call_as(&chat, "deletePage", json!({"ids": [pricing], "confirmed": true})).await, "APPROVAL_REQUIRED");
    // the model may not confirm its own preview, in this turn or a later one:
    // only a person's answer approves it
    let same_turn = fails(
        &env.call_as(&chat, "deletePage", json!({"ids": [contact], "confirmed": true})).await,
        "APPROVAL_REQUIRED",
    );
    assert!(same_turn.contains("once the user approved"), "{same_turn}");
    let next_turn = quire_tools::CallContext { turn_id: Some("2".into()), ..chat.clone() };
    fails(
        &env.call_as(&next_turn, "deletePage", json!({"ids": [contact], "confirmed": true})).await,
        "APPROVAL_REQUIRED",
    );
    assert!(env.store.page(&env.scope, &contact).await.is_ok());
    // the person approves (the Approve button, or a plain yes the runtime read)
    let id = preview["confirmationId"].as_str().unwrap();
    env.registry.approve(&env.ctx(Group::Editor), id).await.unwrap();
    ok(env.call_as(&next_turn, "deletePage", json!({"ids": [contact], "confirmed": true})).await);
    assert!(env.store.page(&env.scope, &contact).await.is_err());
    fails(
        &env.call_as(&next_turn, "deletePage", json!({"ids": [contact], "confirmed": true})).await,
        "APPROVAL_REQUIRED",
    );
}

#[tokio::test]
async fn what_sends_data_out_waits_for_a_person_whatever_the_policy() {
    let env = Env::new().await;
    let admin_chat =
        quire_tools::CallContext { group: Group::Admin, ..env.agent("s1", ApprovalPolicy::Conversational) };
    let args = json!({ "url": "https://example.com/hook", "body": { "leak": "secrets" } });
    let preview = ok(env.call_as(&admin_chat, "httpPost", args.clone()).await);
    assert!(preview["message"].as_str().unwrap().contains("A person must approve it"), "{preview}");
    let mut confirmed = args.clone();
    confirmed["confirmed"] = json!(true);
    let refused = fails(&env.call_as(&admin_chat, "httpPost", confirmed.clone()).await, "APPROVAL_REQUIRED");
    assert!(refused.contains("sends data out"), "{refused}");
    // an MCP client declared interactive may not answer it in its own UI either
    let mcp = quire_tools::CallContext {
        surface: quire_core::model::Surface::Mcp,
        session_id: Some("mcp-1".into()),
        ..env.ctx(Group::Admin)
    };
    let interactive = quire_tools::CallContext { policy: ApprovalPolicy::Conversational, ..mcp.clone() };
    let asked = ok(env.call_as(&interactive, "httpPost", args.clone()).await);
    let id = asked["confirmationId"].as_str().unwrap();
    let own = env.registry.resolve_in_client(&interactive, id, true).await.unwrap_err();
    assert!(own.message.contains("sends data out"), "{own:?}");
    // the schema does not offer `confirmed` on it
    assert!(env.registry.schema("httpPost").unwrap()["properties"].get("confirmed").is_none());
    assert!(env.registry.schema("deletePage").unwrap()["properties"].get("confirmed").is_some());
}

#[tokio::test]
async fn only_an_mcp_client_declared_interactive_answers_in_its_own_ui() {
    let env = Env::new().await;
    let contact = env.page_id("contact").await;
    let mcp = quire_tools::CallContext {
        surface: quire_core::model::Surface::Mcp,
        session_id: Some("mcp-1".into()),
        ..env.ctx(Group::Editor)
    };
    let preview = ok(env.call_as(&mcp, "deletePage", json!({"ids": [contact]})).await);
    let id = preview["confirmationId"].as_str().unwrap();
    let program = env.registry.resolve_in_client(&mcp, id, true).await.unwrap_err();
    assert!(program.message.contains("declared interactive"), "{program:?}");
    fails(&env.call_as(&mcp, "deletePage", json!({"ids": [contact], "confirmationId": id})).await, "APPROVAL_REQUIRED");
    assert!(env.store.page(&env.scope, &contact).await.is_ok());

    let interactive = quire_tools::CallContext { policy: ApprovalPolicy::Conversational, ..mcp.clone() };
    env.registry.resolve_in_client(&interactive, id, true).await.unwrap();
    ok(env.call_as(&interactive, "deletePage", json!({"ids": [contact], "confirmationId": id})).await);
    assert!(env.store.page(&env.scope, &contact).await.is_err());
}

#[tokio::test]
async fn protected_pages_are_closed_to_the_agent() {
    let env = Env::new().await;
    let home = env.page_id("home").await;
    let agent = env.agent("s1", ApprovalPolicy::User);
    let err = fails(&env.call_as(&agent, "deletePage", json!({"ids": [home]})).await, "FORBIDDEN");
    assert!(err.contains("protected"));
    fails(&env.call_as(&agent, "updatePage", json!({"id": home, "slug": "start"})).await, "FORBIDDEN");
    ok(env.call_as(&agent, "updatePage", json!({"id": home, "name": "Start"})).await);
}

async fn approve_and_run(env: &Env, tool: &str, args: Value) -> Value {
    let preview = ok(env.call(tool, args.clone()).await);
    let id = confirmation_id(&preview);
    env.registry.approve(&env.ctx(Group::Admin), &id).await.unwrap();
    let mut args = args;
    args["confirmationId"] = Value::String(id);
    ok(env.call(tool, args).await)
}

#[tokio::test]
async fn every_delete_tool_and_restore() {
    let env = Env::new().await;
    fails(&env.call("deletePage", json!({"ids": []})).await, "VALIDATION");
    fails(&env.call("deletePage", json!({"ids": ["nope"]})).await, "NOT_FOUND");
    fails(&env.call("deletePage", json!({"id": "x"})).await, "VALIDATION");

    let post = approve_and_run(&env, "deletePost", json!({"slugs": ["roadmap-draft"]})).await;
    assert_eq!(post["count"], 1);
    fails(&env.call("deletePost", json!({"slugs": ["roadmap-draft"]})).await, "NOT_FOUND");

    let image = env.store.images(&env.scope, None, 1, None).await.unwrap().items.remove(0);
    approve_and_run(&env, "deleteImage", json!({"ids": [image.id]})).await;
    fails(&env.call("deleteImage", json!({"ids": [image.id]})).await, "NOT_FOUND");

    let about_item = env.store.search_nav_items(&env.scope, Some("header"), "about", 1).await.unwrap().remove(0);
    let nav = approve_and_run(&env, "deleteNavItem", json!({"ids": [about_item.id]})).await;
    assert_eq!(nav["items"][0]["items"].as_array().unwrap().len(), 2, "the Team sub-item went along");
    fails(&env.call("deleteNavItem", json!({"ids": ["nope"]})).await, "NOT_FOUND");

    let maya = env.store.entry_by_slug(&env.scope, "testimonials", "maya").await.unwrap();
    approve_and_run(&env, "deleteEntry", json!({"ids": [maya.id]})).await;
    fails(&env.call("deleteEntry", json!({"ids": [maya.id]})).await, "NOT_FOUND");

    let archives = ok(env.call("getArchive", json!({"all": true})).await);
    assert_eq!(archives["count"], 4);
    assert_eq!(ok(env.call("getArchive", json!({"entity": "navItem"})).await)["count"], 1);
    fails(&env.call("getArchive", json!({})).await, "VALIDATION");
    let archive_id = ok(env.call("getArchive", json!({"entity": "entry", "limit": 1})).await)["items"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();

    // restore: preview (a dry run), approval, execution
    let restore_preview = ok(env.call("restoreArchive", json!({"ids": [archive_id]})).await);
    assert!(restore_preview["message"].as_str().unwrap().starts_with("Would restore"));
    assert!(env.store.entry(&env.scope, &maya.id).await.is_err(), "the dry run rolled back");
    let id = confirmation_id(&restore_preview);
    env.registry.approve(&env.ctx(Group::Admin), &id).await.unwrap();
    ok(env.call("restoreArchive", json!({"ids": [archive_id], "confirmationId": id})).await);
    assert!(env.store.entry(&env.scope, &maya.id).await.is_ok());
    fails(&env.call("restoreArchive", json!({"ids": [archive_id]})).await, "CONFLICT");
}

#[tokio::test]
async fn restore_preview_reports_a_reused_slug() {
    let env = Env::new().await;
    let pricing = env.page_id("pricing").await;
    approve_and_run(&env, "deletePage", json!({"ids": [pricing]})).await;
    ok(env.call("createPage", json!({"name": "Pricing 2", "slug": "pricing"})).await);
    let conflict = refused_page_restore(&env).await;
    assert!(conflict.contains("slug \"pricing\" is now used by another page"), "{conflict}");
}

#[tokio::test]
async fn mcp_requests_need_other_credentials_and_agent_requests_a_person() {
    let env = Env::new().await;
    let contact = env.page_id("contact").await;
    let mut mcp_caller = env.ctx(Group::Editor);
    mcp_caller.surface = quire_core::model::Surface::Mcp;
    mcp_caller.session_id = Some("m1".into());
    let id = confirmation_id(&ok(env.call_as(&mcp_caller, "deletePage", json!({"ids": [contact]})).await));
    // the same credentials through a human surface: an MCP client holding
    // the token could do that itself
    let mut same = mcp_caller.clone();
    same.surface = quire_core::model::Surface::Rest;
    let err = env.registry.approve(&same, &id).await.unwrap_err();
    assert!(err.message.contains("same credentials"), "{}", err.message);
    assert_eq!(env.registry.approve(&mcp_caller, &id).await.unwrap_err().code, quire_tools::ErrorCode::Forbidden);
    let mut other = env.ctx(Group::Admin);
    other.actor = "user:someone-else".into();
    env.registry.approve(&other, &id).await.unwrap();
    ok(env.call_as(&mcp_caller, "deletePage", json!({"ids": [contact], "confirmationId": id})).await);

    // The agent runtime holds no credentials the model could use: the person
    // chatting approves their own agent's request, but never through the
    // agent or MCP surfaces.
    let pricing = env.page_id("pricing").await;
    let agent = env.agent("s1", ApprovalPolicy::User);
    let id = confirmation_id(&ok(env.call_as(&agent, "deletePage", json!({"ids": [pricing]})).await));
    assert_eq!(env.registry.approve(&agent, &id).await.unwrap_err().code, quire_tools::ErrorCode::Forbidden);
    let mut person = agent.clone();
    person.surface = quire_core::model::Surface::Rest;
    env.registry.approve(&person, &id).await.unwrap();
    ok(env.call_as(&agent, "deletePage", json!({"ids": [pricing], "confirmationId": id})).await);
}

#[tokio::test]
async fn protection_covers_the_flag_and_the_cascade() {
    let env = Env::new().await;
    let agent = env.agent("s1", ApprovalPolicy::User);
    let home = env.page_id("home").await;
    let err = fails(&env.call_as(&agent, "updatePage", json!({"id": home, "isProtected": false})).await, "FORBIDDEN");
    assert_eq!(err, "isProtected can only be changed by a person");
    let team = env.page_id("team").await;
    ok(env.call("updatePage", json!({"id": team, "isProtected": true})).await);
    let about = env.page_id("about").await;
    let err = fails(&env.call_as(&agent, "deletePage", json!({"ids": [about]})).await, "FORBIDDEN");
    assert!(err.contains("page team is protected"), "{err}");
}

#[tokio::test]
async fn overlapping_ids_archive_once() {
    let env = Env::new().await;
    let about = env.page_id("about").await;
    let team = env.page_id("team").await;
    let preview = ok(env.call("deletePage", json!({"ids": [about, team, about]})).await);
    assert_eq!(preview["items"].as_array().unwrap().len(), 6);
    let done = approve_and_run(&env, "deletePage", json!({"ids": [about, team, about]})).await;
    assert_eq!(done["count"], 1, "one archive: team went along with about");
}

#[tokio::test]
async fn restore_refuses_sections_whose_template_is_archived() {
    let env = Env::new().await;
    let pricing = env.page_id("pricing").await;
    approve_and_run(&env, "deletePage", json!({"ids": [pricing]})).await;
    let faq = env.store.template(&env.scope, "faq").await.unwrap();
    env.store
        .archive(
            &quire_core::model::ChangeContext::system(),
            &env.scope,
            quire_core::model::EntityKind::SectionTemplate,
            &[faq.id],
        )
        .await
        .unwrap();
    let err = refused_page_restore(&env).await;
    assert!(err.contains("template faq, which is archived"), "{err}");
}

#[tokio::test]
async fn delete_section_archives_after_approval() {
    let env = Env::new().await;
    let contact = env.page_id("contact").await;
    let section = env.store.sections(&env.scope, &contact, 1, None).await.unwrap().items.remove(0);
    let done = approve_and_run(&env, "deleteSection", json!({"ids": [section.id]})).await;
    assert_eq!(done["items"][0]["entity"], "section");
    assert!(env.store.section(&env.scope, &section.id).await.is_err());
    fails(&env.call("deleteSection", json!({"ids": [section.id]})).await, "NOT_FOUND");
    fails(&env.call("deleteSection", json!({"ids": []})).await, "VALIDATION");
}

#[tokio::test]
async fn publishing_is_previewed_as_differences_and_runs_once_a_person_approves() {
    let env = Env::new().await;
    let about = env.page_id("about").await;
    ok(env.call("updatePage", json!({"id": about, "name": "About the harbour"})).await);
    let delivered = || async { env.store.delivery_page(&env.scope, "about").await.unwrap().page.name };
    assert_eq!(delivered().await, "About", "a tool's write changes the draft only");

    let args = json!({"entity": "page", "ids": ["about"]});
    let preview = ok(env.call("publishContent", args.clone()).await);
    let id = confirmation_id(&preview);
    let document = &preview["items"][0];
    assert_eq!(document["publication"], json!({"published": true, "changed": true}));
    assert_eq!(document["differences"][0]["fields"][0]["field"], "name");
    assert_eq!(document["differences"][0]["fields"][0]["after"], "About the harbour");
    assert!(preview["message"].as_str().unwrap().contains("Would publish page about"), "{preview}");
    assert_eq!(delivered().await, "About", "the preview changed nothing");

    env.registry.approve(&env.ctx(Group::Editor), &id).await.unwrap();
    let mut approved = args.clone();
    approved["confirmationId"] = json!(id);
    let done = ok(env.call("publishContent", approved).await);
    assert_eq!(done["items"][0]["publication"], json!({"published": true, "changed": false}));
    assert_eq!(delivered().await, "About the harbour");

    // A draft changed after its preview is not published by that approval.
    let preview = ok(env.call("publishContent", args.clone()).await);
    let id = confirmation_id(&preview);
    env.registry.approve(&env.ctx(Group::Editor), &id).await.unwrap();
    ok(env.call("updatePage", json!({"id": about, "name": "Changed after the preview"})).await);
    let mut approved = args.clone();
    approved["confirmationId"] = json!(id);
    fails(&env.call("publishContent", approved).await, "CONFLICT");
    assert_eq!(delivered().await, "About the harbour");

    // Discard gives the draft up; unpublish takes the page off the site.
    ok(approve_and_run(&env, "discardDraft", args.clone()).await);
    assert_eq!(env.store.page(&env.scope, &about).await.unwrap().name, "About the harbour");
    ok(approve_and_run(&env, "unpublishContent", args.clone()).await);
    assert!(env.store.delivery_page(&env.scope, "about").await.is_err());
    let post = ok(approve_and_run(
        &env,
        "publishContent",
        json!({"entity": "post", "ids": [
            env.store.entry_by_slug(&env.scope, "blog", "roadmap-draft").await.unwrap().id
        ]}),
    )
    .await);
    assert_eq!(post["items"][0]["publication"]["published"], true);
    assert!(env.store.entry_by_slug(&env.scope, "blog", "roadmap-draft").await.unwrap().published_at.is_some());
}
