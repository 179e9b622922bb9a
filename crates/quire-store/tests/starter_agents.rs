//! Starter agents follow the version that runs: one missing is created, one
//! no person changed is brought up to date (logged, undoable), and one a
//! person edited is left as they made it.

use quire_core::input::AgentPatch;
use quire_core::model::{ChangeAction, ChangeContext, Publishing, Surface};
use quire_store::ChangeFilter;
use quire_store::seed::{ensure_agents, ensure_agents_everywhere};

#[tokio::test]
async fn starter_agents_are_brought_up_to_date_unless_a_person_changed_them() {
    let dir = tempfile::tempdir().unwrap();
    let (store, scope) = quire_store::testing::demo(dir.path()).await.unwrap();
    let system = ChangeContext::system();
    let person = ChangeContext {
        actor: "user:ana".into(),
        surface: Surface::Web,
        session_id: None,
        turn_id: None,
        publishing: Publishing::ByStatus,
    };
    let researcher = store.agent(&scope, "researcher").await.unwrap();
    let editor = store.agent(&scope, "editor").await.unwrap();
    let current = (researcher.tools.clone(), editor.tools.clone());
    assert!(researcher.tools.iter().any(|t| t == "tag:web"), "{:?}", researcher.tools);

    // As an earlier version seeded them: no web tools.
    let old = |tools: &[&str]| AgentPatch {
        tools: Some(tools.iter().map(|t| t.to_string()).collect()),
        ..Default::default()
    };
    store.update_agent(&system, &scope, "researcher", &old(&["read", "!tag:vault"]), None).await.unwrap();
    store.update_agent(&system, &scope, "editor", &old(&["category:internal", "!tag:vault"]), None).await.unwrap();
    // A person then edits the editor agent: it is theirs now.
    let mine = AgentPatch { system_prompt: Some("Only ever edit the blog.".into()), ..Default::default() };
    store.update_agent(&person, &scope, "editor", &mine, None).await.unwrap();

    // The researcher is brought up to date; the editor stays the person's.
    assert_eq!(ensure_agents(&store, &scope).await.unwrap(), 1);
    let researcher = store.agent(&scope, "researcher").await.unwrap();
    assert_eq!(researcher.tools, current.0);
    let editor = store.agent(&scope, "editor").await.unwrap();
    assert_eq!(editor.tools, ["category:internal", "!tag:vault"]);
    assert_eq!(editor.system_prompt, "Only ever edit the blog.");
    // The update is logged as the system's, like any other change.
    let filter = ChangeFilter { entity_id: Some(researcher.id.clone()), ..Default::default() };
    let log = store.changes(&scope, &filter, 10, None).await.unwrap().items;
    assert_eq!(log[0].actor, "system");
    assert_eq!(log[0].action, ChangeAction::Update);
    assert_ne!(current.1, editor.tools);

    // A second run changes nothing, here or in any other environment.
    assert_eq!(ensure_agents(&store, &scope).await.unwrap(), 0);
    assert_eq!(ensure_agents_everywhere(&store).await.unwrap(), 0);
}
