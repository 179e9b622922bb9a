//! Nothing is lost: archive with cascade, restore, conflicts, the change log,
//! revisions and reverting to one.

mod common;
use common::TestApp;
use serde_json::json;

#[tokio::test]
async fn archive_cascades_and_restore_brings_everything_back() {
    let app = TestApp::new().await;
    let about = app.page_id("about").await;
    let team = app.page_id("team").await;

    let archive = app.delete(&format!("/api/v1/pages/{about}")).await;
    assert_status!(archive, 200);
    let items = archive.body["items"].as_array().unwrap();
    let kinds: Vec<(&str, &str)> =
        items.iter().map(|i| (i["entity"].as_str().unwrap(), i["label"].as_str().unwrap())).collect();
    // about, its two sections, team, team's two sections
    assert_eq!(kinds.len(), 6, "{kinds:?}");
    assert_eq!(kinds[0], ("page", "about"));
    assert!(kinds.contains(&("page", "team")));
    assert_eq!(kinds.iter().filter(|(k, _)| *k == "section").count(), 4);
    assert_eq!(archive.body["archivedBy"].as_str().unwrap().split(':').next(), Some("token"));

    assert_status!(app.get(&format!("/api/v1/pages/{team}")).await, 404);
    assert_status!(app.send("GET", "/api/v1/delivery/pages/team", None, None).await, 404);
    let listed = app.get("/api/v1/archive").await;
    assert_eq!(listed.body["items"][0]["id"], archive.body["id"]);

    let id = archive.body["id"].as_str().unwrap();
    let restored = app.post(&format!("/api/v1/archive/{id}/restore"), json!({})).await;
    assert_status!(restored, 200);
    assert!(restored.body["restoredAt"].is_string());
    assert_eq!(app.get(&format!("/api/v1/pages/{team}")).await.body["parentId"], about.as_str());
    assert_eq!(app.get(&format!("/api/v1/pages/{team}/sections")).await.body["count"], 2);
    assert_eq!(app.get(&format!("/api/v1/pages/{about}/sections")).await.body["count"], 2);

    let again = app.post(&format!("/api/v1/archive/{id}/restore"), json!({})).await;
    assert_status!(again, 409);
    assert!(again.error().contains("already restored"));
}

#[tokio::test]
async fn restore_refuses_a_reused_slug() {
    let app = TestApp::new().await;
    let pricing = app.page_id("pricing").await;
    let archive = app.delete(&format!("/api/v1/pages/{pricing}")).await;
    let archive_id = archive.body["id"].as_str().unwrap().to_string();

    let reuse = app.post("/api/v1/pages", json!({"name": "New pricing", "slug": "pricing"})).await;
    assert_status!(reuse, 201);

    let refused = app.post(&format!("/api/v1/archive/{archive_id}/restore"), json!({})).await;
    assert_status!(refused, 409);
    assert_eq!(refused.code(), "CONFLICT");
    assert!(refused.error().contains("slug \"pricing\" is now used by another page"), "{}", refused.error());
    // nothing came back, not even the sections
    assert_status!(app.get(&format!("/api/v1/pages/{pricing}")).await, 404);
    assert_eq!(app.get(&format!("/api/v1/archive/{archive_id}")).await.body["restoredAt"], serde_json::Value::Null);

    // after renaming the new page, restore works
    let new_id = reuse.body["id"].as_str().unwrap();
    app.patch(&format!("/api/v1/pages/{new_id}"), json!({"slug": "pricing-2027"})).await;
    assert_status!(app.post("/api/v1/archive/restore", json!({"ids": [archive_id]})).await, 200);
    assert_eq!(app.get(&format!("/api/v1/pages/{pricing}/sections")).await.body["count"], 2);
}

#[tokio::test]
async fn restoring_a_child_whose_parent_is_archived_is_refused() {
    let app = TestApp::new().await;
    let team = app.page_id("team").await;
    let about = app.page_id("about").await;
    let child = app.delete(&format!("/api/v1/pages/{team}")).await;
    app.delete(&format!("/api/v1/pages/{about}")).await;
    let refused = app.post(&format!("/api/v1/archive/{}/restore", child.body["id"].as_str().unwrap()), json!({})).await;
    assert_status!(refused, 409);
    assert!(refused.error().contains("parent page"), "{}", refused.error());
}

#[tokio::test]
async fn every_mutation_is_logged_and_revisions_restore() {
    let app = TestApp::new().await;
    let contact = app.page_id("contact").await;
    app.patch(&format!("/api/v1/pages/{contact}"), json!({"name": "Contact us"})).await;
    app.patch(&format!("/api/v1/pages/{contact}"), json!({"name": "Reach us"})).await;

    let revisions = app.get(&format!("/api/v1/revisions/page/{contact}")).await;
    assert_status!(revisions, 200);
    let all = revisions.body["items"].as_array().unwrap();
    let actions: Vec<&str> = all.iter().map(|c| c["action"].as_str().unwrap()).collect();
    // The seed published the page as it made it and its sections; the
    // person's updates are drafts, not published.
    assert_eq!(actions, ["update", "update", "publish", "publish", "create"]);
    let items: Vec<&serde_json::Value> = all.iter().filter(|c| c["action"] != "publish").collect();
    assert_eq!(items[0]["before"]["name"], "Contact us");
    assert_eq!(items[0]["after"]["name"], "Reach us");
    assert_eq!(items[0]["surface"], "rest");
    assert!(items[0]["actor"].as_str().unwrap().starts_with("token:"));
    assert_eq!(items[2]["actor"], "system");

    // back to the state after the first update
    let first_update = items[1]["id"].as_i64().unwrap();
    let revert = app.post(&format!("/api/v1/changes/{first_update}/restore"), json!({})).await;
    assert_status!(revert, 200);
    assert_eq!(revert.body["action"], "revert");
    assert_eq!(revert.body["before"]["name"], "Reach us");
    let page = app.get(&format!("/api/v1/pages/{contact}")).await;
    assert_eq!(page.body["name"], "Contact us");
    assert_eq!(page.body["version"], 4);

    let same = app.post(&format!("/api/v1/changes/{first_update}/restore"), json!({})).await;
    assert_status!(same, 409);

    // archive and restore are logged too, per record
    let archive = app.delete(&format!("/api/v1/pages/{contact}")).await;
    let changes = app.get("/api/v1/changes?entity=section&limit=100").await;
    assert!(changes.body["items"].as_array().unwrap().iter().any(|c| c["action"] == "archive"));
    let archived_change = app.get(&format!("/api/v1/revisions/page/{contact}?limit=1")).await;
    assert_eq!(archived_change.body["items"][0]["action"], "archive");
    assert!(archived_change.body["nextCursor"].is_string());
    let reverting_archived = app.post(&format!("/api/v1/changes/{first_update}/restore"), json!({})).await;
    assert_status!(reverting_archived, 409);
    assert!(reverting_archived.error().contains("restore it from the archive first"));
    app.post(&format!("/api/v1/archive/{}/restore", archive.body["id"].as_str().unwrap()), json!({})).await;
    let after = app.get(&format!("/api/v1/revisions/page/{contact}?limit=1")).await;
    assert_eq!(after.body["items"][0]["action"], "restore");

    let unknown = app.post("/api/v1/changes/999999/restore", json!({})).await;
    assert_status!(unknown, 404);
}

#[tokio::test]
async fn a_failed_write_is_not_logged() {
    let app = TestApp::new().await;
    let before = app.get("/api/v1/changes?limit=1").await.body["items"][0]["id"].clone();
    let home = app.page_id("home").await;
    assert_status!(app.patch(&format!("/api/v1/pages/{home}"), json!({"slug": "about"})).await, 409);
    assert_status!(
        app.post(&format!("/api/v1/pages/{home}/sections"), json!({"templateKey": "hero", "content": {}})).await,
        422
    );
    let after = app.get("/api/v1/changes?limit=1").await.body["items"][0]["id"].clone();
    assert_eq!(before, after);
}
