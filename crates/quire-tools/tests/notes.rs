//! Vault tools through the registry: every tool, the change log with
//! before and after content, reverting, sandboxing and external edits.

mod common;
use common::{Env, fails, ok};
use quire_core::access::Group;
use quire_core::model::{ChangeContext, EntityKind, Publishing, Surface};
use quire_store::ChangeFilter;
use quire_tools::notes;
use serde_json::json;

async fn env() -> Env {
    let env = Env::new().await;
    let seeded = notes::seed_demo_vault(&env.registry.services().clone(), &env.scope).await.unwrap();
    assert_eq!(seeded, 4);
    env
}

async fn note_changes(env: &Env) -> Vec<quire_core::model::Change> {
    let filter = ChangeFilter { entity: Some(EntityKind::Note), ..Default::default() };
    env.store.changes(&env.scope, &filter, 100, None).await.unwrap().items
}

#[tokio::test]
async fn read_write_update_with_line_semantics() {
    let env = env().await;
    let read =
        ok(env.call("readNote", json!({"path": "projects/site-relaunch.md", "startLine": 3, "endLine": 5})).await);
    assert_eq!(read["content"], "3: ## Goals\n4: - Faster pages\n5: - A clearer pricing page");
    assert_eq!(read["item"]["totalLines"], 8);
    let past =
        fails(&env.call("readNote", json!({"path": "projects/site-relaunch.md", "startLine": 40})).await, "VALIDATION");
    assert!(past.contains("has 8 lines"), "{past}");
    let missing = fails(&env.call("readNote", json!({"path": "projects/site-relaunch.md"})).await, "VALIDATION");
    assert!(missing.contains("startLine"), "{missing}");

    ok(env
        .call("updateNote", json!({"path": "projects/site-relaunch.md", "content": "- Fewer clicks", "startLine": 6}))
        .await);
    ok(env
        .call(
            "updateNote",
            json!({"path": "projects/site-relaunch.md", "content": "## Done\n- nothing yet", "startLine": -1}),
        )
        .await);
    ok(env
        .call("updateNote", json!({"path": "projects/site-relaunch.md", "content": "", "startLine": 1, "endLine": 2}))
        .await);
    let all = ok(env.call("readNote", json!({"path": "projects/site-relaunch.md", "startLine": 1})).await);
    assert_eq!(
        all["content"],
        "1: ## Goals\n2: - Faster pages\n3: - A clearer pricing page\n4: - Fewer clicks\n5: \n6: ## Open questions\n7: - Which testimonials go on the home page?\n8: ## Done\n9: - nothing yet"
    );

    ok(env.call("writeNote", json!({"path": "inbox/idea.md", "content": "# Idea\n"})).await);
    let again = fails(&env.call("writeNote", json!({"path": "inbox/idea.md", "content": "other"})).await, "CONFLICT");
    assert!(again.contains("overwrite: true"), "{again}");
    ok(env.call("writeNote", json!({"path": "inbox/idea.md", "content": "# Better idea\n", "overwrite": true})).await);

    // every write is logged with its content before and after
    let changes = note_changes(&env).await;
    let last = &changes[0];
    assert_eq!(last.entity_id, "inbox/idea.md");
    assert_eq!(last.action, quire_core::model::ChangeAction::Write);
    assert_eq!(last.before.as_ref().unwrap()["content"], "# Idea\n");
    assert_eq!(last.after.as_ref().unwrap()["content"], "# Better idea\n");
    assert_eq!(last.actor, "user:admin");
}

#[tokio::test]
async fn folders_moves_copies_and_archive() {
    let env = env().await;
    let root = ok(env.call("listFolder", json!({})).await);
    let paths: Vec<&str> = root["items"].as_array().unwrap().iter().map(|i| i["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["meetings", "projects", "Welcome.md"]);
    ok(env.call("createFolder", json!({"path": "ideas"})).await);
    fails(&env.call("createFolder", json!({"path": "ideas"})).await, "CONFLICT");
    ok(env.call("copyNote", json!({"path": "Welcome.md", "newPath": "ideas/welcome-copy.md"})).await);
    fails(&env.call("copyNote", json!({"path": "Welcome.md", "newPath": "ideas/welcome-copy.md"})).await, "CONFLICT");
    ok(env.call("moveItem", json!({"path": "ideas/welcome-copy.md", "newPath": "ideas/hello.md"})).await);
    fails(&env.call("moveItem", json!({"path": "ideas/nothing.md", "newPath": "x.md"})).await, "NOT_FOUND");
    let replaced =
        ok(env.call("moveItem", json!({"path": "ideas/hello.md", "newPath": "Welcome.md", "overwrite": true})).await);
    assert!(replaced["message"].as_str().unwrap().contains(".archive/"), "the replaced note is archived: {replaced}");

    let archived = ok(env.call("archiveItem", json!({"path": "meetings"})).await);
    let to = archived["item"]["archivedTo"].as_str().unwrap().to_string();
    assert!(to.starts_with(".archive/") && to.ends_with("/meetings"), "{to}");
    let listed = ok(env.call("listFolder", json!({})).await);
    assert!(!listed.to_string().contains(".archive"));
    let hidden = ok(env.call("listFolder", json!({"includeHidden": true})).await);
    assert!(hidden.to_string().contains(".archive"));
    // only archiveItem writes into .archive
    let into = fails(&env.call("writeNote", json!({"path": ".archive/x.md", "content": "x"})).await, "VALIDATION");
    assert!(into.contains(".archive"), "{into}");
    // restore by moving back
    ok(env.call("moveItem", json!({"path": to, "newPath": "meetings"})).await);
    ok(env.call("readNote", json!({"path": "meetings/2026-11-02 kickoff.md", "startLine": 1})).await);
    let filtered = ok(env.call("listFolder", json!({"path": "projects", "filter": "*calendar*"})).await);
    assert_eq!(filtered["count"], 1);
}

#[tokio::test]
async fn traversal_is_refused_through_the_tools() {
    let env = env().await;
    let outside = env.dir.path().join("secret.txt");
    std::fs::write(&outside, "secret").unwrap();
    for (tool, args) in [
        ("readNote", json!({"path": "../secret.txt", "startLine": 1})),
        ("readNote", json!({"path": "/etc/passwd", "startLine": 1})),
        ("writeNote", json!({"path": "../../escape.md", "content": "x"})),
        ("writeNote", json!({"path": "a/../../escape.md", "content": "x"})),
        ("updateNote", json!({"path": "..\\secret.txt", "content": "x", "startLine": 1})),
        ("listFolder", json!({"path": ".."})),
        ("moveItem", json!({"path": "Welcome.md", "newPath": "../moved.md"})),
        ("copyNote", json!({"path": "Welcome.md", "newPath": "/tmp/copied.md"})),
        ("archiveItem", json!({"path": "../secret.txt"})),
        ("searchNotes", json!({"query": "secret", "path": "../"})),
        ("createFolder", json!({"path": "x\u{0}y"})),
    ] {
        let result = env.call(tool, args.clone()).await;
        assert_eq!(result["success"], false, "{tool} {args} escaped: {result}");
        assert_eq!(result["errorCode"], "VALIDATION", "{tool} {args}: {result}");
        assert!(
            result["error"].as_str().unwrap().starts_with("path:")
                || result["error"].as_str().unwrap().starts_with("newPath:"),
            "{result}"
        );
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret");
    assert!(!env.dir.path().join("escape.md").exists());
    assert!(!env.dir.path().join("moved.md").exists());
}

#[tokio::test]
async fn search_finds_edits_made_outside_quire() {
    let env = env().await;
    let hits = ok(env.call("searchNotes", json!({"query": "pricing copy"})).await);
    assert_eq!(hits["items"][0]["path"], "meetings/2026-11-02 kickoff.md");
    assert_eq!(hits["items"][0]["line"], 6);
    // another editor writes into the vault folder directly
    let folder = env.registry.services().vaults.folder("demo");
    std::fs::write(folder.join("projects/offsite.md"), "# Offsite\n\nBook the lighthouse venue.\n").unwrap();
    let found = ok(env.call("searchNotes", json!({"query": "lighthouse"})).await);
    assert_eq!(found["items"][0]["path"], "projects/offsite.md");
    assert_eq!(found["items"][0]["line"], 3);
    std::fs::remove_file(folder.join("projects/offsite.md")).unwrap();
    let gone = ok(env.call("searchNotes", json!({"query": "lighthouse"})).await);
    assert_eq!(gone["count"], 0);
    fails(&env.call("searchNotes", json!({"query": "  "})).await, "VALIDATION");
}

#[tokio::test]
async fn open_note_asks_a_screen_only_where_there_is_one() {
    let env = env().await;
    let cli = ok(env.call("openNote", json!({"path": "Welcome.md"})).await);
    assert_eq!(cli["opened"], false);
    assert!(cli["message"].as_str().unwrap().contains("No screen"), "{cli}");
    let agent = env.agent("s1", quire_tools::ApprovalPolicy::User);
    let opened = ok(env.call_as(&agent, "openNote", json!({"path": "Welcome.md"})).await);
    assert_eq!(opened["opened"], true);
    fails(&env.call("openNote", json!({"path": "Nope.md"})).await, "NOT_FOUND");
}

#[tokio::test]
async fn viewers_read_notes_but_do_not_write_them() {
    let env = env().await;
    let viewer = env.ctx(Group::Viewer);
    ok(env.call_as(&viewer, "readNote", json!({"path": "Welcome.md", "startLine": 1})).await);
    ok(env.call_as(&viewer, "searchNotes", json!({"query": "welcome"})).await);
    fails(&env.call_as(&viewer, "writeNote", json!({"path": "v.md", "content": "x"})).await, "FORBIDDEN");
    fails(&env.call_as(&viewer, "archiveItem", json!({"path": "Welcome.md"})).await, "FORBIDDEN");
    let author = env.ctx(Group::Author);
    ok(env
        .call_as(&author, "updateNote", json!({"path": "Welcome.md", "content": "by an author", "startLine": -1}))
        .await);
}

#[tokio::test]
async fn note_changes_revert_like_any_other_change() {
    let env = env().await;
    let services = env.registry.services().clone();
    let ctx = ChangeContext {
        actor: "user:admin".into(),
        surface: Surface::Rest,
        session_id: None,
        turn_id: None,
        publishing: Publishing::ByStatus,
    };
    ok(env.call("updateNote", json!({"path": "Welcome.md", "content": "Second line of news.", "startLine": -1})).await);
    ok(env.call("updateNote", json!({"path": "Welcome.md", "content": "Third line.", "startLine": -1})).await);
    ok(env.call("writeNote", json!({"path": "new.md", "content": "fresh"})).await);
    ok(env.call("moveItem", json!({"path": "projects/content-calendar.md", "newPath": "calendar.md"})).await);
    let changes = note_changes(&env).await;
    let (moved, created, third, second) = (&changes[0], &changes[1], &changes[2], &changes[3]);

    // back to the revision the first update left
    let restored = notes::restore_note_revision(&services, &ctx, &env.scope, second).await.unwrap();
    assert_eq!(restored.action, quire_core::model::ChangeAction::Restore);
    assert_eq!(restored.before.as_ref().unwrap()["content"], third.after.as_ref().unwrap()["content"]);
    let text = ok(env.call("readNote", json!({"path": "Welcome.md", "startLine": 1})).await);
    assert!(text["content"].as_str().unwrap().contains("Second line"));
    assert!(!text["content"].as_str().unwrap().contains("Third line"));
    // restoring it again changes nothing: a conflict that says so
    let again = notes::restore_note_revision(&services, &ctx, &env.scope, second).await.unwrap_err();
    assert!(again.message.contains("already at that revision"), "{}", again.message);

    // undo: a move goes back, a creation is archived
    notes::undo_note_changes(&services, &ctx, &env.scope, &[moved.clone(), created.clone()]).await.unwrap();
    ok(env.call("readNote", json!({"path": "projects/content-calendar.md", "startLine": 1})).await);
    fails(&env.call("readNote", json!({"path": "new.md", "startLine": 1})).await, "NOT_FOUND");
    // the last update cannot be undone any more: the note changed since
    let err = notes::undo_note_changes(&services, &ctx, &env.scope, std::slice::from_ref(third)).await.unwrap_err();
    assert!(err.message.contains("changed since"), "{}", err.message);
}
