//! Drafts and publishing against a model: seeded random sequences of draft
//! edits (over REST and through the tools), new sections, publishes (by
//! the publishing route, by status, and through an approved tool call),
//! unpublishes, discards, releases published and reverted (over REST and
//! through approved tool calls). After every step the delivery API shows
//! what the model says was last published, and a preview shows the drafts.

mod common;

use common::TestApp;
use quire_store::testing::Walk;
use serde_json::{Value, json};

/// What a page should be: its draft, and what was last published.
#[derive(Debug, Clone, PartialEq)]
struct Model {
    draft: String,
    draft_sections: usize,
    /// Name and section count published, if it is published.
    published: Option<(String, usize)>,
}

/// Runs a destructive tool call through its preview and a person's approval.
async fn approved_tool(app: &TestApp, tool: &str, args: Value) -> Value {
    let preview = app.post(&format!("/api/v1/tools/{tool}/invoke"), args.clone()).await;
    assert_eq!(preview.body["requiresConfirmation"], true, "{}", preview.body);
    let id = preview.body["confirmationId"].as_str().unwrap().to_string();
    let approved = app.send("POST", &format!("/api/v1/approvals/{id}/approve"), Some(&app.editor), None).await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    let mut args = args;
    args["confirmationId"] = json!(id);
    let done = app.post(&format!("/api/v1/tools/{tool}/invoke"), args).await;
    assert_eq!(done.status, 200, "{}", done.body);
    done.body
}

/// Checks delivery, the preview and the publication state against `model`.
async fn check(app: &TestApp, slug: &str, id: &str, model: &Model, step: usize) {
    let public = app.send("GET", &format!("/api/v1/delivery/pages/{slug}"), None, None).await;
    match &model.published {
        Some((name, sections)) => {
            assert_eq!(public.status, 200, "step {step}: {}", public.body);
            assert_eq!(&public.body["name"], name, "step {step}: delivery shows what was published");
            assert_eq!(public.body["sections"].as_array().unwrap().len(), *sections, "step {step}: published sections");
        }
        None => assert_eq!(public.status, 404, "step {step}: not published: {}", public.body),
    }
    let preview = app.send("GET", &format!("/api/v1/delivery/pages/{slug}?preview=true"), Some(&app.admin), None).await;
    assert_eq!(preview.body["name"], model.draft, "step {step}: the preview shows the draft");
    assert_eq!(preview.body["sections"].as_array().unwrap().len(), model.draft_sections, "step {step}: draft sections");
    let state = app.get(&format!("/api/v1/pages/{id}/publication")).await;
    let changed = model.published.as_ref().is_some_and(|(n, s)| *n != model.draft || *s != model.draft_sections);
    assert_eq!(
        state.body,
        json!({"published": model.published.is_some(), "changed": changed}),
        "step {step}: where the page stands"
    );
}

/// The last release published: what was public before it, and the model
/// right after it; whether anything touched the page since.
struct Released {
    id: String,
    before: Option<(String, usize)>,
    touched: bool,
}

/// Publishes a release holding the page, over REST or through the tools.
async fn release(app: &TestApp, id: &str, step: usize, by_tools: bool) -> String {
    let name = format!("Release {step}");
    if by_tools {
        let made = app.post("/api/v1/tools/createRelease/invoke", json!({"name": name})).await;
        assert_eq!(made.status, 200, "{}", made.body);
        let release = made.body["release"]["id"].as_str().unwrap().to_string();
        let add = json!({"id": release, "add": [{"entity": "page", "id": id}]});
        let added = app.post("/api/v1/tools/updateRelease/invoke", add).await;
        assert_eq!(added.status, 200, "{}", added.body);
        let done = approved_tool(app, "publishRelease", json!({"id": release})).await;
        assert_eq!(done["release"]["state"], "published", "{done}");
        return release;
    }
    let made = app.post("/api/v1/releases", json!({"name": name})).await;
    assert_eq!(made.status, 201, "{}", made.body);
    let release = made.body["id"].as_str().unwrap().to_string();
    let staged = app.post(&format!("/api/v1/releases/{release}/items"), json!({"entity": "page", "id": id})).await;
    assert_eq!(staged.status, 200, "{}", staged.body);
    let done = app.post(&format!("/api/v1/releases/{release}/publish"), json!({})).await;
    assert_eq!(done.status, 200, "{}", done.body);
    release
}

/// Answers how many releases it published and reverted.
async fn walk(seed: u64, steps: usize) -> (usize, usize) {
    let app = TestApp::new().await;
    let (slug, id) = ("about", app.page_id("about").await);
    let delivered = app.send("GET", "/api/v1/delivery/pages/about", None, None).await.body;
    let sections = delivered["sections"].as_array().unwrap().len();
    let mut model =
        Model { draft: "About".into(), draft_sections: sections, published: Some(("About".into(), sections)) };
    check(&app, slug, &id, &model, 0).await;
    let mut walk = Walk(seed);
    let mut released: Option<Released> = None;
    let (mut published, mut reverts) = (0, 0);
    for step in 1..=steps {
        let name = format!("About {step}");
        let pick = walk.next(11);
        if let Some(last) = released.as_mut()
            && pick < 10
        {
            last.touched = true;
        }
        match pick {
            0 => {
                let r = app.patch(&format!("/api/v1/pages/{id}"), json!({"name": name})).await;
                assert_eq!(r.status, 200, "{}", r.body);
                model.draft = name;
            }
            1 => {
                let r = app.post("/api/v1/tools/updatePage/invoke", json!({"id": id, "name": name})).await;
                assert_eq!(r.status, 200, "{}", r.body);
                model.draft = name;
            }
            2 => {
                let body = json!({"templateKey": "text", "content": {"body": name}, "status": "published"});
                let r = app.post(&format!("/api/v1/pages/{id}/sections"), body).await;
                assert_eq!(r.status, 201, "{}", r.body);
                model.draft_sections += 1;
            }
            3 => {
                let r = app.post(&format!("/api/v1/pages/{id}/publish"), json!({})).await;
                assert_eq!(r.status, 200, "{}", r.body);
                model.published = Some((model.draft.clone(), model.draft_sections));
            }
            4 => {
                let r = app.patch(&format!("/api/v1/pages/{id}"), json!({"status": "published"})).await;
                assert_eq!(r.status, 200, "{}", r.body);
                model.published = Some((model.draft.clone(), model.draft_sections));
            }
            5 => {
                approved_tool(&app, "publishContent", json!({"entity": "page", "ids": [id]})).await;
                model.published = Some((model.draft.clone(), model.draft_sections));
            }
            6 => {
                let r = app.post(&format!("/api/v1/pages/{id}/unpublish"), json!({})).await;
                if model.published.take().is_some() {
                    assert_eq!(r.status, 200, "{}", r.body);
                } else {
                    assert_eq!(r.status, 409, "{}", r.body);
                }
            }
            8 | 9 => {
                let before = model.published.clone();
                let release = release(&app, &id, step, pick == 9).await;
                model.published = Some((model.draft.clone(), model.draft_sections));
                released = Some(Released { id: release, before, touched: false });
                published += 1;
            }
            10 => {
                let Some(last) = released.take() else { continue };
                let reverted = if walk.next(2) == 0 {
                    let r = app.post(&format!("/api/v1/releases/{}/revert", last.id), json!({})).await;
                    assert!(r.status == 200 || (r.status == 409 && last.touched), "{}", r.body);
                    r.status == 200
                } else if last.touched {
                    // Touched since: the preview names a conflict or there is none.
                    let preview = app.post("/api/v1/tools/revertRelease/invoke", json!({"id": last.id})).await;
                    let conflicted = preview.body["items"][0]["conflict"].is_string();
                    if !conflicted {
                        approved_tool(&app, "revertRelease", json!({"id": last.id})).await;
                    }
                    !conflicted
                } else {
                    approved_tool(&app, "revertRelease", json!({"id": last.id})).await;
                    true
                };
                if reverted {
                    reverts += 1;
                    if let Some((name, sections)) = &last.before {
                        model.draft = name.clone();
                        model.draft_sections = *sections;
                    }
                    model.published = last.before;
                }
            }
            _ => {
                let r = app.post(&format!("/api/v1/pages/{id}/discard"), json!({})).await;
                match &model.published {
                    Some((name, sections)) => {
                        assert_eq!(r.status, 200, "{}", r.body);
                        model.draft = name.clone();
                        model.draft_sections = *sections;
                    }
                    None => assert_eq!(r.status, 409, "{}", r.body),
                }
            }
        }
        check(&app, slug, &id, &model, step).await;
    }
    (published, reverts)
}

#[tokio::test]
async fn delivery_follows_the_last_publication_and_the_preview_the_drafts() {
    let (mut published, mut reverts) = (0, 0);
    for seed in [0x9e37_79b9_7f4a_7c15, 0xd1b5_4a32_d192_ed03, 0x2545_f491_4f6c_dd1d] {
        let (p, r) = walk(seed, 40).await;
        (published, reverts) = (published + p, reverts + r);
    }
    assert!(published >= 3 && reverts >= 1, "releases published: {published}, reverted: {reverts}");
}
