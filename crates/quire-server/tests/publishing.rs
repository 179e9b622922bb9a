//! Drafts and publishing against a model: seeded random sequences of draft
//! edits (over REST and through the tools), new sections, publishes (by
//! the publishing route, by status, and through an approved tool call),
//! unpublishes and discards. After every step the delivery API shows what
//! the model says was last published, and a preview shows the drafts.

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

async fn walk(seed: u64, steps: usize) {
    let app = TestApp::new().await;
    let (slug, id) = ("about", app.page_id("about").await);
    let delivered = app.send("GET", "/api/v1/delivery/pages/about", None, None).await.body;
    let sections = delivered["sections"].as_array().unwrap().len();
    let mut model =
        Model { draft: "About".into(), draft_sections: sections, published: Some(("About".into(), sections)) };
    check(&app, slug, &id, &model, 0).await;
    let mut walk = Walk(seed);
    for step in 1..=steps {
        let name = format!("About {step}");
        match walk.next(8) {
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
}

#[tokio::test]
async fn delivery_follows_the_last_publication_and_the_preview_the_drafts() {
    for seed in [0x9e37_79b9_7f4a_7c15, 0xd1b5_4a32_d192_ed03, 0x2545_f491_4f6c_dd1d] {
        walk(seed, 40).await;
    }
}
