//! A person's approval preferences over REST: read and replaced at
//! `/api/v1/me/approval-preferences` with their own token (or session),
//! refused with a 422 naming the field when a tool, a category or a mode is
//! unknown, and applied to the tools the person's token calls: `always`
//! makes a read wait for an approval, which then runs it once; nothing
//! lowers the floor. A token made by no one has no preferences.

mod common;

use common::TestApp;
use quire_core::access::Group;
use quire_store::{NewToken, NewUser};
use serde_json::{Value, json};

const PATH: &str = "/api/v1/me/approval-preferences";

/// A person of the demo site and a token they made: (user id, secret).
async fn person_with_token(app: &TestApp, email: &str) -> (String, String) {
    let user = app
        .store
        .create_user(NewUser {
            email: email.into(),
            display_name: None,
            group: Group::Editor,
            sites: vec![("demo".into(), None)],
            password: None,
        })
        .await
        .unwrap();
    let secret =
        app.token(NewToken { user_id: Some(user.id.clone()), ..NewToken::new("mine", Group::Editor, "demo") }).await;
    (user.id, secret)
}

async fn invoke(app: &TestApp, token: &str, tool: &str, args: Value) -> common::Reply {
    app.send("POST", &format!("/api/v1/tools/{tool}/invoke"), Some(token), Some(args)).await
}

#[tokio::test]
async fn a_person_reads_and_sets_their_preferences_and_bad_input_names_its_field() {
    let app = TestApp::new().await;
    let (_, mine) = person_with_token(&app, "prefs@example.com").await;

    let read = app.send("GET", PATH, Some(&mine), None).await;
    assert_status!(read, 200);
    assert_eq!(read.body, json!({ "default": "destructive", "categories": {}, "tools": {} }));

    let set = json!({ "default": "never", "categories": { "page": "always", "external": "always" }, "tools": { "getPage": "never" } });
    let changed = app.send("PUT", PATH, Some(&mine), Some(set)).await;
    assert_status!(changed, 200);
    assert_eq!(changed.body["categories"]["page"], "always");
    assert!(changed.body["updatedBy"].as_str().unwrap().starts_with("token:"), "{}", changed.body);
    let again = app.send("GET", PATH, Some(&mine), None).await;
    assert_eq!(again.body["tools"], json!({ "getPage": "never" }));
    assert_eq!(again.body["default"], "never");

    for (body, field) in [
        (json!({ "tools": { "updatePag": "always" } }), "tools.updatePag"),
        (json!({ "tools": { "finalAnswer": "always" } }), "tools.finalAnswer"),
        (json!({ "categories": { "pages": "always" } }), "categories.pages"),
        (json!({ "categories": { "page": "sometimes" } }), "categories.page"),
        (json!({ "default": "sometimes" }), "default"),
    ] {
        let refused = app.send("PUT", PATH, Some(&mine), Some(body.clone())).await;
        assert_status!(refused, 422);
        assert_eq!(refused.body["field"], field, "{body}: {}", refused.body);
        assert!(refused.body["code"].is_string() && refused.body["error"].is_string(), "{}", refused.body);
    }
    // A refusal changed nothing.
    assert_eq!(app.send("GET", PATH, Some(&mine), None).await.body, again.body);

    // A token made by no one has no preferences to read or set.
    assert_status!(app.send("GET", PATH, Some(&app.admin), None).await, 404);
    assert_status!(app.send("PUT", PATH, Some(&app.admin), Some(json!({}))).await, 404);
}

#[tokio::test]
async fn always_makes_the_persons_token_wait_and_the_floor_stays() {
    let app = TestApp::new().await;
    let (_, mine) = person_with_token(&app, "careful@example.com").await;
    let about = app.page_id("about").await;
    let set = json!({ "default": "never", "categories": { "page": "always" }, "tools": { "deletePage": "never" } });
    assert_status!(app.send("PUT", PATH, Some(&mine), Some(set)).await, 200);

    // A read of a page waits for an approval, and runs once approved.
    let preview = invoke(&app, &mine, "getPage", json!({ "id": about })).await;
    assert_eq!(preview.body["requiresConfirmation"], true, "{}", preview.body);
    let id = preview.body["confirmationId"].as_str().unwrap().to_string();
    let waiting = app.send("GET", "/api/v1/approvals", Some(&app.admin), None).await;
    assert!(waiting.body.to_string().contains(&id), "{}", waiting.body);
    assert_status!(app.send("POST", &format!("/api/v1/approvals/{id}/approve"), Some(&app.admin), None).await, 200);
    let done = invoke(&app, &mine, "getPage", json!({ "id": about, "confirmationId": id })).await;
    assert_eq!(done.body["items"][0]["id"], about.as_str(), "{}", done.body);
    let reused = invoke(&app, &mine, "getPage", json!({ "id": about, "confirmationId": id })).await;
    assert_eq!(reused.body["errorCode"], "APPROVAL_REQUIRED", "{}", reused.body);

    // Sections are not pages: they run at once (the default, never).
    let sections = invoke(&app, &mine, "getSection", json!({ "pageId": about })).await;
    assert_eq!(sections.body["success"], true, "{}", sections.body);
    // The floor: a delete asks whatever the preferences say.
    let delete = invoke(&app, &mine, "deletePage", json!({ "ids": [about] })).await;
    assert_eq!(delete.body["requiresConfirmation"], true, "{}", delete.body);
    // The admin's token belongs to no one: no preferences apply to it.
    let theirs = invoke(&app, &app.admin, "getPage", json!({ "id": about })).await;
    assert_eq!(theirs.body["success"], true, "{}", theirs.body);
    assert!(theirs.body.get("requiresConfirmation").is_none(), "{}", theirs.body);
}
