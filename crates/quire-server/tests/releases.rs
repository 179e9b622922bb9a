//! Releases and schedules over REST: made, reviewed, published, refused
//! with a 409 naming the conflict, reverted; scheduled, listed, cancelled,
//! run; who may do which; bad input answered in the one error shape.

mod common;

use common::TestApp;
use quire_app::schedules::Scheduler;
use serde_json::json;

#[tokio::test]
async fn a_release_over_rest_from_staging_to_revert() {
    let app = TestApp::new().await;
    let about = app.page_id("about").await;
    let r = app.patch(&format!("/api/v1/pages/{about}"), json!({"name": "About us"})).await;
    assert_eq!(r.status, 200, "{}", r.body);

    let made = app.post("/api/v1/releases", json!({"name": "Launch", "description": "About"})).await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(made.body["state"], "open");
    let id = made.body["id"].as_str().unwrap().to_string();
    let staged = app.post(&format!("/api/v1/releases/{id}/items"), json!({"entity": "page", "id": "about"})).await;
    assert_eq!(staged.status, 200, "{}", staged.body);
    let staged =
        app.post(&format!("/api/v1/releases/{id}/items"), json!({"entity": "navigation", "id": "footer"})).await;
    assert_eq!(staged.body["items"].as_array().unwrap().len(), 2, "{}", staged.body);
    let removed = app
        .delete(&format!("/api/v1/releases/{id}/items/navigation/{}", staged.body["items"][1]["id"].as_str().unwrap()))
        .await;
    assert_eq!(removed.status, 200, "{}", removed.body);
    assert_eq!(removed.body["items"].as_array().unwrap().len(), 1);

    let review = app.get(&format!("/api/v1/releases/{id}")).await;
    assert_eq!(review.status, 200, "{}", review.body);
    let fields = &review.body["items"][0]["differences"][0]["fields"];
    assert!(fields.as_array().unwrap().iter().any(|f| f["field"] == "name" && f["after"] == "About us"), "{fields}");
    assert!(review.body["items"][0]["conflict"].is_null());

    // The draft moves on: publishing is refused, naming the page, and nothing changes.
    app.patch(&format!("/api/v1/pages/{about}"), json!({"name": "About everyone"})).await;
    let refused = app.post(&format!("/api/v1/releases/{id}/publish"), json!({})).await;
    assert_eq!(refused.status, 409, "{}", refused.body);
    assert!(refused.error().contains(&about) && refused.error().contains("draft changes"), "{}", refused.body);
    let public = app.send("GET", "/api/v1/delivery/pages/about", None, None).await;
    assert_eq!(public.body["name"], "About");

    let kept =
        app.post(&format!("/api/v1/releases/{id}/items"), json!({"entity": "page", "id": about, "keep": true})).await;
    assert_eq!(kept.status, 200, "{}", kept.body);
    let published = app.post(&format!("/api/v1/releases/{id}/publish"), json!({})).await;
    assert_eq!(published.status, 200, "{}", published.body);
    assert_eq!(published.body["state"], "published");
    let public = app.send("GET", "/api/v1/delivery/pages/about", None, None).await;
    assert_eq!(public.body["name"], "About us", "the release's copy, kept");

    let reverted = app.post(&format!("/api/v1/releases/{id}/revert"), json!({})).await;
    assert_eq!(reverted.status, 200, "{}", reverted.body);
    let public = app.send("GET", "/api/v1/delivery/pages/about", None, None).await;
    assert_eq!(public.body["name"], "About");
    let listed = app.get("/api/v1/releases?state=reverted").await;
    assert_eq!(listed.body["count"], 1, "{}", listed.body);
}

#[tokio::test]
async fn releases_refuse_bad_input_and_people_without_the_right() {
    let app = TestApp::new().await;
    let blank = app.post("/api/v1/releases", json!({"name": "   "})).await;
    assert_eq!((blank.status.as_u16(), blank.code()), (422, "VALIDATION"), "{}", blank.body);
    let unknown = app.post("/api/v1/releases", json!({"name": "x", "when": "now"})).await;
    assert_eq!((unknown.status.as_u16(), unknown.body["field"].as_str()), (400, Some("when")), "{}", unknown.body);
    assert_eq!(app.get("/api/v1/releases/nope").await.status, 404);
    let made = app.post("/api/v1/releases", json!({"name": "Mine"})).await;
    let id = made.body["id"].as_str().unwrap().to_string();
    let section = app.post(&format!("/api/v1/releases/{id}/items"), json!({"entity": "section", "id": "x"})).await;
    assert_eq!((section.status.as_u16(), section.body["field"].as_str()), (400, Some("entity")), "{}", section.body);
    let missing = app.post(&format!("/api/v1/releases/{id}/items"), json!({"entity": "page", "id": "nope"})).await;
    assert_eq!(missing.status, 404, "{}", missing.body);
    let wrong = app.send("GET", "/api/v1/releases?state=later", Some(&app.admin), None).await;
    assert_eq!(wrong.status, 400, "{}", wrong.body);

    // A viewer reads releases but makes none and publishes none.
    let viewer = |method: &'static str, path: String, body| {
        let app = &app;
        async move { app.send(method, &path, Some(&app.viewer), body).await }
    };
    assert_eq!(viewer("GET", "/api/v1/releases".into(), None).await.status, 200);
    let denied = viewer("POST", "/api/v1/releases".into(), Some(json!({"name": "No"}))).await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    let denied = viewer("POST", format!("/api/v1/releases/{id}/publish"), Some(json!({}))).await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    // An author may publish nothing: the release of an archive needs the right to archive.
    let archive = app
        .post(&format!("/api/v1/releases/{id}/items"), json!({"entity": "page", "id": "pricing", "action": "archive"}))
        .await;
    assert_eq!(archive.status, 200, "{}", archive.body);
    let denied = app.send("POST", &format!("/api/v1/releases/{id}/publish"), Some(&app.author), Some(json!({}))).await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    let public = app.send("GET", "/api/v1/delivery/pages/pricing", None, None).await;
    assert_eq!(public.status, 200, "nothing was archived");
}

#[tokio::test]
async fn schedules_over_rest_are_listed_cancelled_and_run() {
    let app = TestApp::new().await;
    let past =
        app.post("/api/v1/schedules", json!({"entity": "page", "id": "about", "at": "2020-01-01T00:00:00Z"})).await;
    assert_eq!((past.status.as_u16(), past.code()), (422, "VALIDATION"), "{}", past.body);
    assert_eq!(past.body["field"], "at", "{}", past.body);

    let soon = (chrono::Utc::now() + chrono::Duration::milliseconds(300)).to_rfc3339();
    let later = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
    let off =
        app.post("/api/v1/schedules", json!({"entity": "page", "id": "team", "action": "unpublish", "at": soon})).await;
    assert_eq!(off.status, 201, "{}", off.body);
    assert_eq!((off.body["target"].as_str(), off.body["status"].as_str()), (Some("page"), Some("queued")));
    let made = app.post("/api/v1/releases", json!({"name": "Tonight"})).await;
    let release = made.body["id"].as_str().unwrap().to_string();
    app.post(
        &format!("/api/v1/releases/{release}/items"),
        json!({"entity": "page", "id": "pricing", "action": "unpublish"}),
    )
    .await;
    let tonight = app.post("/api/v1/schedules", json!({"entity": "release", "id": release, "at": later})).await;
    assert_eq!(tonight.status, 201, "{}", tonight.body);
    assert_eq!(app.get(&format!("/api/v1/releases/{release}")).await.body["release"]["state"], "scheduled");
    let listed = app.get("/api/v1/schedules").await;
    assert_eq!(listed.body["count"], 2, "{}", listed.body);
    assert_eq!(listed.body["items"][0]["id"], off.body["id"], "soonest first");

    let id = tonight.body["id"].as_str().unwrap();
    let cancelled = app.post(&format!("/api/v1/schedules/{id}/cancel"), json!({})).await;
    assert_eq!((cancelled.status.as_u16(), cancelled.body["status"].as_str()), (200, Some("cancelled")));
    assert_eq!(app.get(&format!("/api/v1/releases/{release}")).await.body["release"]["state"], "open");
    assert_eq!(app.post(&format!("/api/v1/schedules/{id}/cancel"), json!({})).await.status, 409);

    tokio::time::sleep(std::time::Duration::from_millis(350)).await;
    assert_eq!(Scheduler::new(app.store.clone()).run_due().await.unwrap(), 1);
    let ran = app.get(&format!("/api/v1/schedules/{}", off.body["id"].as_str().unwrap())).await;
    assert_eq!(ran.body["status"], "done", "{}", ran.body);
    assert!(ran.body["lateMs"].is_i64(), "{}", ran.body);
    assert_eq!(app.send("GET", "/api/v1/delivery/pages/team", None, None).await.status, 404);
    assert_eq!(app.send("GET", "/api/v1/delivery/pages/pricing", None, None).await.status, 200);
    let viewer = app
        .send(
            "POST",
            "/api/v1/schedules",
            Some(&app.viewer),
            Some(json!({"entity": "page", "id": "about", "at": later})),
        )
        .await;
    assert_eq!(viewer.status, 403, "{}", viewer.body);
}

/// A schedule runs with the rights of the person who made it as they are
/// when it falls due: one whose token was revoked since fails, naming why,
/// and publishes nothing; one whose token still holds runs.
#[tokio::test]
async fn a_schedule_whose_maker_was_revoked_since_fails_and_publishes_nothing() {
    let app = TestApp::new().await;
    let made = app.post("/api/v1/tokens", json!({"name": "night shift", "group": "editor"})).await;
    assert_eq!(made.status, 201, "{}", made.body);
    let (token_id, secret) = (made.body["id"].as_str().unwrap(), made.body["secret"].as_str().unwrap().to_string());
    let soon = (chrono::Utc::now() + chrono::Duration::milliseconds(200)).to_rfc3339();
    let schedule = |id: &'static str| {
        let (app, secret, soon) = (&app, secret.clone(), soon.clone());
        async move {
            let body = json!({"entity": "page", "id": id, "action": "unpublish", "at": soon});
            app.send("POST", "/api/v1/schedules", Some(&secret), Some(body)).await
        }
    };
    let revoked = schedule("team").await;
    assert_eq!(revoked.status, 201, "{}", revoked.body);
    let kept = app
        .post("/api/v1/schedules", json!({"entity": "page", "id": "pricing", "action": "unpublish", "at": soon}))
        .await;
    assert_eq!(kept.status, 201, "{}", kept.body);
    assert_eq!(app.delete(&format!("/api/v1/tokens/{token_id}")).await.status, 200);

    tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    assert_eq!(Scheduler::new(app.store.clone()).run_due().await.unwrap(), 2);
    let failed = app.get(&format!("/api/v1/schedules/{}", revoked.body["id"].as_str().unwrap())).await;
    assert_eq!(failed.body["status"], "failed", "{}", failed.body);
    assert!(failed.body["error"].as_str().unwrap().contains("may no longer act"), "{}", failed.body);
    assert_eq!(app.send("GET", "/api/v1/delivery/pages/team", None, None).await.status, 200, "still on the site");
    let done = app.get(&format!("/api/v1/schedules/{}", kept.body["id"].as_str().unwrap())).await;
    assert_eq!(done.body["status"], "done", "{}", done.body);
    assert_eq!(app.send("GET", "/api/v1/delivery/pages/pricing", None, None).await.status, 404);
}
