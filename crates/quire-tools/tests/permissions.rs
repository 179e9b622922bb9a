//! Group permissions, enforced in the registry for every surface.

mod common;
use common::{Env, fails, ok};
use quire_core::access::Group;
use serde_json::json;

#[tokio::test]
async fn viewers_read_only() {
    let env = Env::new().await;
    let viewer = env.ctx(Group::Viewer);
    ok(env.call_as(&viewer, "getPage", json!({"all": true})).await);
    let err = fails(&env.call_as(&viewer, "createPage", json!({"name": "X", "slug": "x"})).await, "FORBIDDEN");
    assert_eq!(err, "group viewer may not use createPage");
    let found = ok(env.call_as(&viewer, "searchTools", json!({"query": "create page", "limit": 20})).await);
    for t in found["tools"].as_array().unwrap() {
        let tool = env.registry.get(t["name"].as_str().unwrap()).unwrap();
        assert!(tool.read_only, "{} offered to a viewer", tool.name);
    }
    assert!(env.registry.permitted(&who(Group::Viewer)).all(|t| t.read_only));
    // Reaching the internet is not reading the site.
    assert!(env.registry.permitted(&who(Group::Viewer)).all(|t| t.category.as_str() != "external"));
}

#[tokio::test]
async fn authors_write_but_neither_delete_nor_touch_navigation() {
    let env = Env::new().await;
    let author = env.ctx(Group::Author);
    ok(env.call_as(&author, "createPage", json!({"name": "X", "slug": "x"})).await);
    let home = env.page_id("home").await;
    fails(&env.call_as(&author, "deletePage", json!({"ids": [home]})).await, "FORBIDDEN");
    fails(
        &env.call_as(
            &author,
            "createNavItem",
            json!({"navigationId": "header", "label": "x", "targetType": "placeholder"}),
        )
        .await,
        "FORBIDDEN",
    );
    fails(&env.call_as(&author, "updateNavItem", json!({"id": "x", "label": "y"})).await, "FORBIDDEN");
    ok(env.call_as(&author, "getNavItem", json!({"navigationId": "header"})).await);
    let names: Vec<&str> = env.registry.permitted(&who(Group::Author)).map(|t| t.name).collect();
    assert!(!names.iter().any(|n| n.starts_with("delete") || n == &"restoreArchive"));
    assert!(names.contains(&"createPost"));
}

#[tokio::test]
async fn editors_and_admins_use_every_internal_tool() {
    let env = Env::new().await;
    let editor: Vec<&str> = env.registry.permitted(&who(Group::Editor)).map(|t| t.name).collect();
    // Everything but sending data out (httpPost) and changing agents, which
    // are the admins'.
    let admins_only = ["httpPost", "createAgent", "updateAgent", "archiveAgent"];
    assert_eq!(editor.len(), env.registry.tools().len() - admins_only.len());
    assert!(!admins_only.iter().any(|n| editor.contains(n)));
    assert!(editor.contains(&"importImage") && editor.contains(&"searchWeb") && editor.contains(&"getAgent"));
    let admin = env.registry.permitted(&who(Group::Admin)).count();
    assert_eq!(admin, env.registry.tools().len());
    let home = env.page_id("contact").await;
    ok(env.call_as(&env.ctx(Group::Editor), "deletePage", json!({"ids": [home]})).await);
}

#[tokio::test]
async fn tenancy_holds_in_the_registry() {
    let env = Env::new().await;
    let other = env.store.create_site("other", "Other", &["production"]).await.unwrap();
    let mut ctx = env.ctx(Group::Admin);
    ctx.scope = quire_store::Scope::new(other.id, "production");
    let home = env.page_id("home").await;
    fails(&env.call_as(&ctx, "getPage", json!({"id": home})).await, "NOT_FOUND");
    fails(&env.call_as(&ctx, "updatePage", json!({"id": home, "name": "x"})).await, "NOT_FOUND");
    fails(&env.call_as(&ctx, "deletePage", json!({"ids": [home]})).await, "NOT_FOUND");
    assert_eq!(ok(env.call_as(&ctx, "getPage", json!({"all": true})).await)["count"], 0);
    assert_eq!(ok(env.call_as(&ctx, "getImage", json!({"query": "team"})).await)["count"], 0);
}

/// Someone of `group`, as the access rules see them.
fn who(group: Group) -> quire_core::access::Principal<'static> {
    quire_core::access::Principal { actor: "user:someone", group, surface: quire_core::model::Surface::Rest }
}
