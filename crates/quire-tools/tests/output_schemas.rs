//! Output schemas are true: one scenario calls every tool of the catalog
//! (destructive ones through preview, approval and execution), and every
//! answer, success or failure, must match the schema its tool declares.
//! The harness (`common::Env::call_as`) checks the answers of every other
//! test of this crate the same way.

mod common;
use common::{Env, fails, ok};
use quire_core::access::Group;
use quire_tools::{catalog, notes, output_schema};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Calls a tool, requires success, and records that the tool answered.
async fn call(env: &Env, seen: &mut BTreeSet<String>, name: &str, args: Value) -> Value {
    let result = ok(env.call(name, args).await);
    seen.insert(name.to_string());
    result
}

/// A destructive tool through its preview, a person's approval and the
/// approved call; answers both the preview and the result.
async fn destroy(env: &Env, seen: &mut BTreeSet<String>, name: &str, args: Value) -> (Value, Value) {
    let preview = call(env, seen, name, args.clone()).await;
    assert_eq!(preview["requiresConfirmation"], true, "{preview}");
    let id = preview["confirmationId"].as_str().unwrap().to_string();
    env.registry.approve(&env.ctx(Group::Admin), &id).await.unwrap();
    let mut approved = args;
    approved["confirmationId"] = json!(id);
    let done = call(env, seen, name, approved).await;
    assert!(done.get("requiresConfirmation").is_none(), "{done}");
    (preview, done)
}

#[tokio::test]
async fn every_tool_answers_within_its_schema() {
    let env = Env::new().await;
    notes::seed_demo_vault(&env.registry.services().clone(), &env.scope).await.unwrap();
    let mut seen = BTreeSet::new();
    let s = &mut seen;

    call(&env, s, "searchTools", json!({"query": "update a page"})).await;
    call(&env, s, "acknowledgeRequest", json!({"message": "On it."})).await;
    call(&env, s, "finalAnswer", json!({"message": "Done."})).await;

    // pages: light and full reads, a page of a list, writes with null
    let home = call(&env, s, "getPage", json!({"slug": "home", "includeContent": true, "includeChildren": true})).await;
    let home_id = home["items"][0]["id"].as_str().unwrap().to_string();
    let paged = call(&env, s, "getPage", json!({"all": true, "limit": 2})).await;
    assert!(paged["nextCursor"].is_string());
    let about = env.page_id("about").await;
    let page = call(&env, s, "createPage", json!({"name": "Schema", "slug": "schema", "parentId": about})).await;
    let page_id = page["item"]["id"].as_str().unwrap().to_string();
    call(&env, s, "updatePage", json!({"id": page_id, "parentId": null, "meta": {"title": "S"}})).await;

    // sections and templates
    call(&env, s, "getSectionTemplate", json!({"all": true})).await;
    let light = call(&env, s, "getSection", json!({"pageId": home_id})).await;
    assert!(light["items"][0].get("heading").is_some(), "{light}");
    let section =
        call(&env, s, "createSection", json!({"pageId": page_id, "templateKey": "text", "content": {"body": "Hi"}}))
            .await;
    let section_id = section["item"]["pageSectionId"].as_str().unwrap().to_string();
    call(&env, s, "updateSection", json!({"pageSectionId": section_id, "hidden": true})).await;
    call(&env, s, "getSection", json!({"pageSectionId": section_id, "includeContent": true})).await;

    // images: a new file becomes a record
    use base64::Engine as _;
    let png = base64::engine::general_purpose::STANDARD.encode(quire_media::samples::png(2, 2));
    call(&env, s, "getImage", json!({"all": true})).await;
    let image = call(&env, s, "createImage", json!({"data": png, "filename": "schema.png", "alt": "Grey"})).await;
    let image_id = image["item"]["id"].as_str().unwrap().to_string();
    let updated = call(&env, s, "updateImage", json!({"id": image_id, "alt": null, "description": null})).await;
    assert!(updated["item"]["alt"].is_null());

    // posts and entries
    call(&env, s, "getPost", json!({"all": true, "includeContent": true})).await;
    call(
        &env,
        s,
        "createPost",
        json!({"collectionSlug": "blog", "slug": "schema-post", "title": "Schema", "content": {"body": "Text."}}),
    )
    .await;
    call(&env, s, "updatePost", json!({"slug": "schema-post", "excerpt": null})).await;
    call(&env, s, "getEntry", json!({"all": true, "collectionId": "testimonials", "includeContent": true})).await;
    let entry = call(
        &env,
        s,
        "createEntry",
        json!({"collectionId": "testimonials", "slug": "sam", "title": "Sam", "content": {"quote": "Good", "author": "Sam"}}),
    )
    .await;
    let entry_id = entry["item"]["id"].as_str().unwrap().to_string();
    call(&env, s, "updateEntry", json!({"id": entry_id, "title": "Sam B."})).await;

    // navigation
    call(&env, s, "getNavItem", json!({"all": true})).await;
    let nav = call(
        &env,
        s,
        "createNavItem",
        json!({"navigationId": "footer", "label": "Docs", "targetType": "url", "url": "/docs"}),
    )
    .await;
    let nav_id = nav["item"]["id"].as_str().unwrap().to_string();
    call(&env, s, "updateNavItem", json!({"id": nav_id, "label": "Help", "parentId": null})).await;

    // every destructive tool: preview, approval, execution
    let post_id = env.store.entry_by_slug(&env.scope, "blog", "schema-post").await.unwrap().id;
    let (preview, done) = destroy(&env, s, "publishContent", json!({"entity": "post", "ids": [post_id]})).await;
    assert_eq!(preview["items"][0]["differences"][0]["change"], "added", "{preview}");
    assert_eq!(done["items"][0]["publication"]["published"], true, "{done}");
    destroy(&env, s, "discardDraft", json!({"entity": "page", "ids": ["home"]})).await;
    destroy(&env, s, "unpublishContent", json!({"entity": "navigation", "ids": ["footer"]})).await;
    let about = env.store.page_by_slug(&env.scope, "about").await.unwrap().id;
    call(&env, s, "updatePage", json!({"id": about, "name": "About the studio"})).await;
    let made = call(&env, s, "createRelease", json!({"name": "Launch", "description": "The about page"})).await;
    let release = made["release"]["id"].as_str().unwrap().to_string();
    let add = json!({"id": release, "add": [{"entity": "page", "id": "about"}, {"entity": "post", "id": post_id}]});
    call(&env, s, "updateRelease", add).await;
    let remove = json!({"id": release, "name": "Spring launch", "remove": [{"entity": "post", "id": post_id}]});
    let updated = call(&env, s, "updateRelease", remove).await;
    assert_eq!(updated["release"]["items"].as_array().map(Vec::len), Some(1), "{updated}");
    let reviewed = call(&env, s, "getRelease", json!({"id": release})).await;
    assert!(reviewed["items"][0]["conflict"].is_null(), "{reviewed}");
    call(&env, s, "getRelease", json!({"state": "open"})).await;
    let (preview, done) = destroy(&env, s, "publishRelease", json!({"id": release})).await;
    assert!(preview["message"].as_str().unwrap().contains("Spring launch"), "{preview}");
    assert_eq!(done["release"]["state"], "published", "{done}");
    let (_, done) = destroy(&env, s, "revertRelease", json!({"id": release})).await;
    assert_eq!(done["release"]["state"], "reverted", "{done}");
    let spare = call(&env, s, "createRelease", json!({"name": "Spare"})).await;
    let discarded = call(&env, s, "discardRelease", json!({"id": spare["release"]["id"]})).await;
    assert_eq!(discarded["release"]["state"], "discarded", "{discarded}");
    destroy(&env, s, "deleteSection", json!({"ids": [section_id]})).await;
    destroy(&env, s, "deleteImage", json!({"ids": [image_id]})).await;
    destroy(&env, s, "deletePost", json!({"slugs": ["schema-post"]})).await;
    destroy(&env, s, "deleteEntry", json!({"ids": [entry_id]})).await;
    destroy(&env, s, "deleteNavItem", json!({"ids": [nav_id]})).await;
    let (preview, done) = destroy(&env, s, "deletePage", json!({"ids": [page_id]})).await;
    assert!(preview["expiresAt"].is_string() && done["items"][0]["items"].is_array(), "{preview} {done}");
    let archives = call(&env, s, "getArchive", json!({"entity": "page"})).await;
    let archive_id = archives["items"][0]["id"].as_str().unwrap().to_string();
    let (_, restored) = destroy(&env, s, "restoreArchive", json!({"ids": [archive_id]})).await;
    assert!(restored["items"][0]["restoredAt"].is_string(), "{restored}");

    // the vault
    call(&env, s, "readNote", json!({"path": "Welcome.md", "startLine": 1})).await;
    call(&env, s, "writeNote", json!({"path": "inbox/a.md", "content": "one\ntwo\n"})).await;
    call(&env, s, "updateNote", json!({"path": "inbox/a.md", "content": "2", "startLine": 2, "endLine": 2})).await;
    call(&env, s, "listFolder", json!({"includeHidden": true})).await;
    call(&env, s, "createFolder", json!({"path": "ideas"})).await;
    call(&env, s, "copyNote", json!({"path": "inbox/a.md", "newPath": "ideas/b.md"})).await;
    call(&env, s, "moveItem", json!({"path": "ideas/b.md", "newPath": "ideas/c.md"})).await;
    call(&env, s, "archiveItem", json!({"path": "ideas"})).await;
    call(&env, s, "openNote", json!({"path": "Welcome.md"})).await;
    call(&env, s, "searchNotes", json!({"query": "pricing"})).await;

    // agents, contexts and workspaces
    call(&env, s, "getAgent", json!({"all": true})).await;
    call(&env, s, "getAgent", json!({"id": "editor"})).await;
    let agent = json!({"alias": "schema-bot", "name": "Schema bot", "contexts": ["brand-voice"]});
    destroy(&env, s, "createAgent", agent).await;
    destroy(&env, s, "updateAgent", json!({"id": "schema-bot", "writeMode": "direct"})).await;
    destroy(&env, s, "archiveAgent", json!({"id": "schema-bot"})).await;
    call(&env, s, "getContext", json!({"all": true})).await;
    call(&env, s, "getContext", json!({"id": "brand-voice"})).await;
    let made = call(&env, s, "createContext", json!({"key": "schema", "name": "Schema", "body": "Terse."})).await;
    call(&env, s, "updateContext", json!({"id": "schema", "description": "For tests."})).await;
    destroy(&env, s, "deleteContext", json!({"ids": [made["item"]["id"]]})).await;
    let saved =
        call(&env, s, "saveWorkspace", json!({"name": "Schema", "records": [{"kind": "page", "id": home_id}]})).await;
    call(&env, s, "getWorkspace", json!({"all": true})).await;
    call(&env, s, "getWorkspace", json!({"id": "Schema"})).await;
    call(&env, s, "loadWorkspace", json!({"id": "Schema"})).await;
    destroy(&env, s, "deleteWorkspace", json!({"ids": [saved["item"]["id"]]})).await;
    call(&env, s, "proposeFormValues", json!({"values": {"name": "Home", "indexing": true}, "reason": "Shorter."}))
        .await;
    fails(&env.call("proposeFormValues", json!({"values": {"name": {"nested": 1}}})).await, "VALIDATION");

    // the external tools, with no provider configured: errors naming the setting
    for (name, args) in [
        ("browseImages", json!({"query": "harbour"})),
        ("importImage", json!({"provider": "pexels", "photoId": "1"})),
        ("searchWeb", json!({"query": "tides", "mode": "quick"})),
        ("fetchContent", json!({"urls": ["http://127.0.0.1/"]})),
        ("httpGet", json!({"url": "http://169.254.169.254/"})),
        ("httpPost", json!({"url": "http://10.0.0.1/hook", "body": {}})),
    ] {
        let v = env.call(name, args).await;
        assert_eq!(v["success"], false, "{name}: {v}");
        s.insert(name.to_string());
    }

    // failures match the error branch of the same schemas
    fails(&env.call("getPage", json!({"slug": "nope"})).await, "NOT_FOUND");
    fails(&env.call("deletePage", json!({"ids": []})).await, "VALIDATION");
    fails(&env.call("readNote", json!({"path": "../x.md", "startLine": 1})).await, "VALIDATION");

    let all: BTreeSet<String> = catalog().iter().map(|t| t.name.to_string()).collect();
    let missing: Vec<&String> = all.difference(&seen).collect();
    assert!(missing.is_empty(), "tools never called here: {missing:?}");
    assert_eq!(seen.len(), 68);
}

#[test]
fn schemas_are_portable() {
    // What MCP Inspector flags: type arrays, untyped subschemas, bare booleans.
    fn walk(v: &Value, at: &str, problems: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if m.get("type").is_some_and(Value::is_array) {
                    problems.push(format!("{at}: type array"));
                }
                let typed =
                    ["type", "anyOf", "enum", "const", "properties", "items"].iter().any(|k| m.contains_key(*k));
                if !typed {
                    problems.push(format!("{at}: untyped"));
                }
                for key in ["properties"] {
                    if let Some(Value::Object(props)) = m.get(key) {
                        props.iter().for_each(|(k, p)| walk(p, &format!("{at}.{k}"), problems));
                    }
                }
                if let Some(Value::Array(branches)) = m.get("anyOf") {
                    branches.iter().enumerate().for_each(|(i, b)| walk(b, &format!("{at}.anyOf[{i}]"), problems));
                }
                if let Some(items) = m.get("items") {
                    walk(items, &format!("{at}.items"), problems);
                }
            }
            other => problems.push(format!("{at}: bare {other}")),
        }
    }
    let mut problems = Vec::new();
    for tool in catalog() {
        walk(&output_schema(&tool), &format!("{}.outputSchema", tool.name), &mut problems);
        walk(&quire_tools::full_schema(&tool), &format!("{}.inputSchema", tool.name), &mut problems);
    }
    assert!(problems.is_empty(), "{problems:#?}");
}
