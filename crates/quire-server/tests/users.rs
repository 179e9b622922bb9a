//! The people of a site over REST: an admin invites someone (a one-time
//! link that sets their password), changes their group and environments,
//! disables and enables them; a site keeps an enabled administrator, nobody
//! changes their own account, and someone who works on other sites too is
//! the instance administrator's to change. Other sites' people are not
//! found; other groups are refused.

mod common;

use common::TestApp;
use quire_core::access::Group;
use quire_store::{NewToken, NewUser, UserInfo, WebSession};
use serde_json::{Value, json};

/// Invites `email` as `group` over REST; answers the answer's body.
async fn invite(app: &TestApp, email: &str, group: &str) -> Value {
    let made = app.post("/api/v1/users", json!({ "email": email, "group": group })).await;
    assert_status!(made, 201);
    made.body
}

/// A person with a password straight in the store, on `sites`.
async fn person(app: &TestApp, email: &str, group: Group, sites: &[&str]) -> UserInfo {
    app.store
        .create_user(NewUser {
            email: email.into(),
            display_name: None,
            group,
            sites: sites.iter().map(|s| (s.to_string(), None)).collect(),
            password: Some("a good long password".into()),
        })
        .await
        .unwrap()
}

/// The secret of a link `…/sign-in/link/<secret>`.
fn secret_of(link: &str) -> &str {
    link.rsplit('/').next().unwrap()
}

/// Signs `user` in; answers the session and the cookie to send.
async fn signed_in(app: &TestApp, user: &UserInfo) -> (WebSession, String) {
    let (session, secret) = app.store.start_web_session(user).await.unwrap();
    (session, format!("quire_session={secret}"))
}

#[tokio::test]
async fn an_admin_invites_someone_whose_link_sets_a_password_and_whose_first_sign_in_is_shown() {
    let app = TestApp::new().await;
    let made = invite(&app, "Vera@Example.org", "viewer").await;
    assert_eq!(made["user"]["email"], "vera@example.org");
    assert_eq!(made["user"]["group"], "viewer");
    assert_eq!(made["user"]["hasPassword"], false);
    assert_eq!(made["user"]["lastSignInAt"], Value::Null);
    assert_eq!(made["existing"], false);
    assert_eq!(made["user"]["sites"][0]["environments"], json!(["production", "staging"]));
    let link = made["signInLink"].as_str().unwrap();
    assert!(link.starts_with("http://") && link.contains("/sign-in/link/ql_"), "{link}");
    let id = made["user"]["id"].as_str().unwrap().to_string();

    // Listed, never with a password or a link.
    let list = app.get("/api/v1/users").await;
    assert_status!(list, 200);
    assert!(list.body["items"].as_array().unwrap().iter().any(|u| u["id"] == id.as_str()), "{}", list.body);
    assert!(!list.body.to_string().contains(secret_of(link)));
    assert!(!list.body.to_string().contains("argon2"));

    // The invitation again, while no password is set: a new link.
    let again = app.post(&format!("/api/v1/users/{id}/sign-in-link"), json!({})).await;
    assert_status!(again, 201);
    let link2 = again.body["signInLink"].as_str().unwrap().to_string();
    assert_ne!(link2, link);

    // The link sets the password and signs in; the first sign-in is recorded.
    let started = quire_app::people::sign_in_with_link(&app.store, secret_of(&link2), "a good long password", None)
        .await
        .unwrap()
        .expect("the link works once");
    assert_eq!(started.session.user.id, id);
    let read = app.get(&format!("/api/v1/users/{id}")).await;
    assert_status!(read, 200);
    assert_eq!(read.body["hasPassword"], true);
    let at: chrono::DateTime<chrono::Utc> = serde_json::from_value(read.body["lastSignInAt"].clone()).unwrap();
    assert!((chrono::Utc::now() - at).num_seconds() < 60, "{at}");

    // With a password set, no link is made for them any more.
    let refused = app.post(&format!("/api/v1/users/{id}/sign-in-link"), json!({})).await;
    assert_status!(refused, 409);
    assert!(refused.error().contains("has set a password"), "{}", refused.error());

    // The same email again is refused; a wrong group is named.
    let twice = app.post("/api/v1/users", json!({ "email": "vera@example.org", "group": "viewer" })).await;
    assert_status!(twice, 409);
    assert!(twice.error().contains("already works on this site"), "{}", twice.error());
    let bad = app.post("/api/v1/users", json!({ "email": "x@example.org", "group": "root" })).await;
    assert_status!(bad, 400);
    assert!(bad.error().contains("group"), "{}", bad.error());
    let bad = app.post("/api/v1/users", json!({ "email": "not an email", "group": "viewer" })).await;
    assert_status!(bad, 422);
    assert!(bad.error().contains("email"), "{}", bad.error());
    let bad =
        app.post("/api/v1/users", json!({ "email": "y@example.org", "group": "viewer", "environments": ["qa"] })).await;
    assert_status!(bad, 422);
    assert!(bad.error().contains("\"qa\""), "{}", bad.error());
    assert!(app.store.user("y@example.org").await.is_err(), "a refused invitation makes nobody");
}

#[tokio::test]
async fn an_admin_changes_group_and_environments_and_disabling_ends_sessions_and_tokens() {
    let app = TestApp::new().await;
    let ed = person(&app, "ed@example.org", Group::Editor, &["demo"]).await;
    let (_, cookie) = signed_in(&app, &ed).await;
    assert_status!(app.send_raw("GET", "/api/v1/me", None, None, &[("cookie", &cookie)]).await, 200);
    let token =
        app.token(NewToken { user_id: Some(ed.id.clone()), ..NewToken::new("ed's", Group::Editor, "demo") }).await;

    let changed =
        app.patch(&format!("/api/v1/users/{}", ed.id), json!({ "group": "author", "environments": ["staging"] })).await;
    assert_status!(changed, 200);
    assert_eq!(changed.body["group"], "author");
    assert_eq!(changed.body["sites"][0]["environments"], json!(["staging"]));
    // `null` gives every environment back; an absent field changes nothing.
    let all = app.patch(&format!("/api/v1/users/{}", ed.id), json!({ "environments": null })).await;
    assert_status!(all, 200);
    assert_eq!(all.body["sites"][0]["environments"], json!(["production", "staging"]));
    assert_eq!(all.body["group"], "author");
    let none = app.patch(&format!("/api/v1/users/{}", ed.id), json!({ "environments": [] })).await;
    assert_status!(none, 422);

    let disabled = app.patch(&format!("/api/v1/users/{}", ed.id), json!({ "disabled": true })).await;
    assert_status!(disabled, 200);
    assert!(disabled.body["disabledAt"].is_string());
    assert_status!(app.send_raw("GET", "/api/v1/me", None, None, &[("cookie", &cookie)]).await, 401);
    assert_status!(app.send("GET", "/api/v1/me", Some(&token), None).await, 401);
    let enabled = app.patch(&format!("/api/v1/users/{}", ed.id), json!({ "disabled": false })).await;
    assert_status!(enabled, 200);
    assert_eq!(enabled.body["disabledAt"], Value::Null);
    assert_status!(app.send("GET", "/api/v1/me", Some(&token), None).await, 401);
}

#[tokio::test]
async fn a_site_keeps_an_administrator_and_nobody_changes_their_own_account() {
    let app = TestApp::new().await;
    let ada = person(&app, "ada@example.org", Group::Admin, &["demo"]).await;
    // Ada is the site's only person who administers it: she stays one.
    for body in [json!({ "group": "editor" }), json!({ "disabled": true })] {
        let refused = app.patch(&format!("/api/v1/users/{}", ada.id), body).await;
        assert_status!(refused, 409);
        assert!(refused.error().contains("only enabled administrator"), "{}", refused.error());
    }
    let bea = person(&app, "bea@example.org", Group::Admin, &["demo"]).await;
    // Signed in, Ada cannot change herself, but may change Bea.
    let (session, cookie) = signed_in(&app, &ada).await;
    let headers = [("cookie", cookie.as_str()), ("x-csrf-token", session.csrf.as_str())];
    let own = json!({ "group": "viewer" }).to_string();
    let refused = app.send_raw("PATCH", &format!("/api/v1/users/{}", ada.id), None, Some(own.clone()), &headers).await;
    assert_status!(refused, 409);
    assert!(refused.error().contains("your own"), "{}", refused.error());
    let done = app.send_raw("PATCH", &format!("/api/v1/users/{}", bea.id), None, Some(own), &headers).await;
    assert_status!(done, 200);
    assert_eq!(app.store.user(&ada.id).await.unwrap().group, Group::Admin);
    assert_eq!(app.store.user(&bea.id).await.unwrap().group, Group::Viewer);
}

#[tokio::test]
async fn someone_on_other_sites_too_is_the_instance_administrators_to_change_and_only_loses_this_site() {
    let app = TestApp::new().await;
    let both = person(&app, "both@example.org", Group::Editor, &["demo", "other"]).await;
    let refused = app.patch(&format!("/api/v1/users/{}", both.id), json!({ "group": "viewer" })).await;
    assert_status!(refused, 403);
    assert!(refused.error().contains("instance's administrator"), "{}", refused.error());
    // Their environments here are the site's to choose.
    let envs = app.patch(&format!("/api/v1/users/{}", both.id), json!({ "environments": ["production"] })).await;
    assert_status!(envs, 200);
    let operator =
        app.token(NewToken { instance_admin: true, ..NewToken::new("operator", Group::Admin, "demo") }).await;
    let by_operator = app
        .send("PATCH", &format!("/api/v1/users/{}", both.id), Some(&operator), Some(json!({ "group": "viewer" })))
        .await;
    assert_status!(by_operator, 200);

    // Taking the site leaves their account and other site; their token for it is revoked.
    let token =
        app.token(NewToken { user_id: Some(both.id.clone()), ..NewToken::new("both's", Group::Viewer, "demo") }).await;
    let removed = app.delete(&format!("/api/v1/users/{}", both.id)).await;
    assert_status!(removed, 200);
    assert_eq!(removed.body["sites"].as_array().unwrap().len(), 1);
    assert_eq!(removed.body["sites"][0]["slug"], "other");
    assert_status!(app.send("GET", "/api/v1/me", Some(&token), None).await, 401);
    assert_status!(app.get(&format!("/api/v1/users/{}", both.id)).await, 404);
    // Someone on this site alone is disabled, not removed.
    let solo = person(&app, "solo@example.org", Group::Viewer, &["demo"]).await;
    let refused = app.delete(&format!("/api/v1/users/{}", solo.id)).await;
    assert_status!(refused, 409);
    assert!(refused.error().contains("disable them instead"), "{}", refused.error());
    // Inviting them again gives the site back, with their group as it is.
    let wrong = app.post("/api/v1/users", json!({ "email": "both@example.org", "group": "admin" })).await;
    assert_status!(wrong, 422);
    assert!(wrong.error().contains("already has an account as viewer"), "{}", wrong.error());
    let back = app.post("/api/v1/users", json!({ "email": "both@example.org", "group": "viewer" })).await;
    assert_status!(back, 201);
    assert_eq!(back.body["existing"], true);
    assert_eq!(back.body["signInLink"], Value::Null);
}

#[tokio::test]
async fn other_sites_people_are_not_found_and_other_groups_are_refused() {
    let app = TestApp::new().await;
    let stranger = person(&app, "stranger@example.org", Group::Editor, &["other"]).await;
    assert_status!(app.get(&format!("/api/v1/users/{}", stranger.id)).await, 404);
    let patched = app.patch(&format!("/api/v1/users/{}", stranger.id), json!({ "disabled": true })).await;
    assert_status!(patched, 404);
    assert!(app.store.user(&stranger.id).await.unwrap().disabled_at.is_none());
    let theirs = app.send("GET", "/api/v1/users", Some(&app.other_admin), None).await;
    assert_status!(theirs, 200);
    assert!(theirs.body["items"].as_array().unwrap().iter().all(|u| u["email"] == "stranger@example.org"));
    for token in [&app.editor, &app.author, &app.viewer] {
        let refused = app.send("GET", "/api/v1/users", Some(token), None).await;
        assert_status!(refused, 403);
        let refused = app
            .send("POST", "/api/v1/users", Some(token), Some(json!({ "email": "z@example.org", "group": "admin" })))
            .await;
        assert_status!(refused, 403);
    }
}
