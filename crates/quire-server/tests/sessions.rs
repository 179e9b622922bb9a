//! Back-office browser sessions on the REST API: the cookie alone reads,
//! anything else needs the session's CSRF token; the scope is the
//! session's (never another site's, whatever the headers say); writes are
//! logged as the person on the `web` surface; sign-out, expiry and
//! disabling the user end the session at once.

mod common;

use common::TestApp;
use quire_core::access::Group;
use quire_store::{NewUser, WebSession};
use serde_json::json;

async fn person(app: &TestApp, email: &str, group: Group) -> (WebSession, String) {
    let user = app
        .store
        .create_user(NewUser {
            email: email.into(),
            display_name: None,
            group,
            sites: vec![("demo".into(), None)],
            password: Some("a good long password".into()),
        })
        .await
        .unwrap();
    let checked = app.store.check_sign_in(email, "a good long password").await.unwrap();
    assert_eq!(checked.map(|u| u.id), Some(user.id.clone()));
    app.store.start_web_session(&user).await.unwrap()
}

fn cookie(secret: &str) -> String {
    format!("theme=dark; quire_session={secret}")
}

#[tokio::test]
async fn the_https_cookie_name_is_read_first_and_an_empty_one_is_ignored() {
    let app = TestApp::new().await;
    let (session, secret) = person(&app, "tls@example.org", Group::Editor).await;
    let secure = format!("__Host-quire_session={secret}");
    let me = app.send_raw("GET", "/api/v1/me", None, None, &[("cookie", &secure)]).await;
    assert_status!(me, 200);
    assert_eq!(me.body["userId"], session.user.id.as_str());
    // A cleared plain cookie beside it does not hide the session.
    let both = format!("quire_session=; {secure}");
    assert_status!(app.send_raw("GET", "/api/v1/me", None, None, &[("cookie", &both)]).await, 200);
    // The prefix is part of the name: a look-alike is no session.
    let other = format!("__Secure-quire_session={secret}");
    assert_status!(app.send_raw("GET", "/api/v1/me", None, None, &[("cookie", &other)]).await, 401);
}

#[tokio::test]
async fn a_session_reads_with_its_cookie_and_writes_only_with_its_csrf_token() {
    let app = TestApp::new().await;
    let (session, secret) = person(&app, "Ed@Example.org", Group::Editor).await;
    let c = cookie(&secret);

    let me = app.send_raw("GET", "/api/v1/me", None, None, &[("cookie", &c)]).await;
    assert_status!(me, 200);
    assert_eq!(me.body["userId"], session.user.id.as_str());
    assert_eq!(me.body["group"], "editor");
    assert_eq!(me.body["siteId"], app.scope.site_id.as_str());
    assert!(me.body.get("tokenId").is_none());

    let body = json!({ "name": "From the browser", "slug": "from-the-browser" }).to_string();
    let refused = app.send_raw("POST", "/api/v1/pages", None, Some(body.clone()), &[("cookie", &c)]).await;
    assert_status!(refused, 403);
    assert!(refused.error().contains("x-csrf-token"), "{}", refused.error());
    let wrong = app
        .send_raw("POST", "/api/v1/pages", None, Some(body.clone()), &[("cookie", &c), ("x-csrf-token", "0000")])
        .await;
    assert_status!(wrong, 403);
    assert_eq!(app.get("/api/v1/pages?limit=100").await.body.to_string().matches("from-the-browser").count(), 0);

    let made = app
        .send_raw("POST", "/api/v1/pages", None, Some(body), &[("cookie", &c), ("x-csrf-token", &session.csrf)])
        .await;
    assert_status!(made, 201);
    let changes = app.get("/api/v1/changes?entity=page&limit=5").await;
    let change = &changes.body["items"][0];
    assert_eq!(change["actor"], format!("user:{}", session.user.id));
    assert_eq!(change["surface"], "web");
}

#[tokio::test]
async fn a_session_works_only_in_its_own_site_and_environment() {
    let app = TestApp::new().await;
    let (session, secret) = person(&app, "viv@example.org", Group::Admin).await;
    let c = cookie(&secret);
    // The environment header of tokens does not move a session.
    let me = app.send_raw("GET", "/api/v1/me", None, None, &[("cookie", &c), ("x-quire-env", "staging")]).await;
    assert_eq!(me.body["environment"], "production");
    // Another site's records are not found through the session.
    let other_page = app
        .store
        .create_page(
            &quire_core::model::ChangeContext::system(),
            &app.other_scope,
            serde_json::from_value(json!({ "name": "Theirs", "slug": "theirs" })).unwrap(),
        )
        .await
        .unwrap();
    let read = app.send_raw("GET", &format!("/api/v1/pages/{}", other_page.id), None, None, &[("cookie", &c)]).await;
    assert_status!(read, 404);
    // Switching is limited to the user's sites and environments.
    let err = app.store.switch_web_session(&session, "other", "production").await.unwrap_err().to_string();
    assert!(err.contains("no access to site \"other\""), "{err}");
    let err = app.store.switch_web_session(&session, "demo", "nowhere").await.unwrap_err().to_string();
    assert!(err.contains("nowhere"), "{err}");
    app.store.switch_web_session(&session, "demo", "staging").await.unwrap();
    let me = app.send_raw("GET", "/api/v1/me", None, None, &[("cookie", &c)]).await;
    assert_eq!(me.body["environment"], "staging");
}

#[tokio::test]
async fn signing_out_and_disabling_the_user_end_sessions_at_once() {
    let app = TestApp::new().await;
    let (first, first_secret) = person(&app, "ann@example.org", Group::Author).await;
    let user = app.store.user("ann@example.org").await.unwrap();
    let (_, second_secret) = app.store.start_web_session(&user).await.unwrap();

    app.store.end_web_session(&first.id).await.unwrap();
    let gone = app.send_raw("GET", "/api/v1/me", None, None, &[("cookie", &cookie(&first_secret))]).await;
    assert_status!(gone, 401);
    let still = app.send_raw("GET", "/api/v1/me", None, None, &[("cookie", &cookie(&second_secret))]).await;
    assert_status!(still, 200);

    let disabled = app.store.set_user_disabled("ann@example.org", true).await.unwrap();
    assert!(disabled.disabled_at.is_some());
    let gone = app.send_raw("GET", "/api/v1/me", None, None, &[("cookie", &cookie(&second_secret))]).await;
    assert_status!(gone, 401);
    assert!(app.store.check_sign_in("ann@example.org", "a good long password").await.unwrap().is_none());
    // Enabling again does not bring old sessions back.
    app.store.set_user_disabled("ann@example.org", false).await.unwrap();
    let gone = app.send_raw("GET", "/api/v1/me", None, None, &[("cookie", &cookie(&second_secret))]).await;
    assert_status!(gone, 401);
}

#[tokio::test]
async fn users_are_checked_and_unique_and_links_work_once() {
    let app = TestApp::new().await;
    let new = |email: &str, sites: Vec<(String, Option<Vec<String>>)>| NewUser {
        email: email.into(),
        display_name: None,
        group: Group::Viewer,
        sites,
        password: None,
    };
    let demo = || vec![("demo".to_string(), None)];
    let err = app.store.create_user(new("not an email", demo())).await.unwrap_err().to_string();
    assert!(err.starts_with("email:"), "{err}");
    let err = app.store.create_user(new("a@example.org", vec![])).await.unwrap_err().to_string();
    assert!(err.contains("at least one site"), "{err}");
    let err = app
        .store
        .create_user(new("a@example.org", vec![("demo".into(), Some(vec!["qa".into()]))]))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("no environment \"qa\""), "{err}");
    let user = app.store.create_user(new("A@example.org", demo())).await.unwrap();
    assert_eq!(user.email, "a@example.org");
    assert_eq!(user.display_name, "a");
    assert!(!user.has_password);
    let err = app.store.create_user(new("a@EXAMPLE.org", demo())).await.unwrap_err().to_string();
    assert!(err.contains("already exists"), "{err}");
    // Without a password, nothing signs in.
    assert!(app.store.check_sign_in("a@example.org", "").await.unwrap().is_none());

    let link = app.store.create_sign_in_link(&user.id).await.unwrap();
    assert_eq!(app.store.use_sign_in_link(&link).await.unwrap().map(|u| u.id), Some(user.id.clone()));
    assert!(app.store.use_sign_in_link(&link).await.unwrap().is_none(), "a link works once");
    assert!(app.store.use_sign_in_link("ql_unknown").await.unwrap().is_none());
}

#[tokio::test]
async fn disabling_a_person_revokes_their_tokens_stops_their_agent_and_a_new_password_ends_sessions() {
    let app = TestApp::new().await;
    let (session, secret) = person(&app, "tom@example.org", Group::Admin).await;
    let c = cookie(&secret);
    // A token made by the person through the API...
    let made = app
        .send_raw(
            "POST",
            "/api/v1/tokens",
            None,
            Some(json!({ "name": "tom's script", "group": "admin" }).to_string()),
            &[("cookie", &c), ("x-csrf-token", &session.csrf)],
        )
        .await;
    assert_status!(made, 201);
    let token = made.body["secret"].as_str().unwrap().to_string();
    assert_status!(app.send("GET", "/api/v1/me", Some(&token), None).await, 200);
    let actor = format!("user:{}", session.user.id);
    assert_eq!(app.store.live_actor_group(&actor, Group::Viewer).await.unwrap(), Some(Group::Admin));

    // ... is revoked with them, and a paused turn of theirs would not resume.
    app.store.set_user_disabled("tom@example.org", true).await.unwrap();
    // (A serving process notices within a second, as for any revocation.)
    assert!(app.store.authenticate(&token).await.unwrap().is_none(), "the token is revoked");
    assert_eq!(app.store.live_actor_group(&actor, Group::Admin).await.unwrap(), None);

    // A new password ends the sessions of whoever knew the old one.
    let (other, other_secret) = person(&app, "una@example.org", Group::Editor).await;
    app.store.set_password(&other.user.id, "a brand new password").await.unwrap();
    let gone = app.send_raw("GET", "/api/v1/me", None, None, &[("cookie", &cookie(&other_secret))]).await;
    assert_status!(gone, 401);
    assert!(app.store.check_sign_in("una@example.org", "a brand new password").await.unwrap().is_some());
}
