//! The approvals inbox answers a refusal with the status REST gives the
//! same refusal: a viewer, who may not approve, gets 403, not 409.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use quire_core::access::Group;
use quire_store::{NewToken, NewUser};
use tower::ServiceExt;

#[tokio::test]
async fn a_viewer_refused_an_approval_gets_403_and_the_call_stays_pending() {
    let dir = tempfile::tempdir().unwrap();
    let store = quire_store::testing::open(dir.path()).await.unwrap();
    let scope = quire_store::seed::seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let state = quire_server::AppState::new(quire_tools::Services::new(store.clone(), dir.path()), "demo");
    let app = quire_server::router_with(state.clone(), quire_web::router(state));

    let (_, admin) = store.create_token(NewToken::new("admin", Group::Admin, "demo")).await.unwrap();
    let pricing = store.page_by_slug(&scope, "pricing").await.unwrap().id;
    let preview = app
        .clone()
        .oneshot(
            Request::post("/api/v1/tools/deletePage/invoke")
                .header("authorization", format!("Bearer {admin}"))
                .header("content-type", "application/json")
                .body(Body::from(serde_json::json!({ "ids": [pricing] }).to_string()))
                .unwrap(),
        )
        .await
        .unwrap();
    let preview: serde_json::Value =
        serde_json::from_slice(&preview.into_body().collect().await.unwrap().to_bytes()).unwrap();
    let id = preview["confirmationId"].as_str().unwrap_or_else(|| panic!("no preview: {preview}")).to_string();

    let user = store
        .create_user(NewUser {
            email: "viewer@example.org".into(),
            display_name: None,
            group: Group::Viewer,
            sites: vec![("demo".into(), None)],
            password: Some("a good long password".into()),
        })
        .await
        .unwrap();
    let (session, secret) = store.start_web_session(&user).await.unwrap();
    let answer = app
        .clone()
        .oneshot(
            Request::post(format!("/approvals/{id}"))
                .header("cookie", format!("quire_session={secret}"))
                .header("content-type", "application/x-www-form-urlencoded")
                .body(Body::from(format!("_csrf={}&verdict=approve", session.csrf)))
                .unwrap(),
        )
        .await
        .unwrap();
    let status = answer.status();
    let page = String::from_utf8_lossy(&answer.into_body().collect().await.unwrap().to_bytes()).into_owned();
    assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    assert!(page.contains("<html"), "the inbox again, with the reason: {page}");
    assert!(store.page_by_slug(&scope, "pricing").await.is_ok(), "the page was archived");
}
