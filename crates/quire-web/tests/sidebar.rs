//! The AI sidebar's release of a turn, as the server renders it for the
//! sidebar's script: an agent in release mode stages a turn's changes in a
//! release of its own (`<session>.<turn>`), which the sidebar shows with
//! each document's differences and the buttons that publish, schedule,
//! open or discard it; a turn that staged nothing shows nothing; only the
//! person whose conversation it is (or an administrator) is shown it.

mod common;

use axum::http::StatusCode;
use common::site;
use quire_core::access::Group;
use quire_core::input::PagePatch;
use quire_core::model::{ChangeContext, Publishing, Surface};
use quire_store::Staging;

#[tokio::test]
async fn a_turns_release_is_shown_with_its_differences_and_published_from_its_buttons() {
    let site = site().await;
    let ana = site.browser("ana@example.org", Group::Editor).await;
    let agent = site.store.agent(&site.scope, "editor").await.unwrap();
    let session = site
        .store
        .create_session(&site.scope, &agent.id, &ana.actor, Group::Editor, "Rename the about page", None)
        .await
        .unwrap();
    let about = site.page_id("about").await;

    // The agent's turn 1, in release mode: the page is renamed in the release.
    let release = format!("{}.1", session.id);
    let staged = site.store.staged(Staging {
        release: release.clone(),
        name: "Editor: Rename the about page, turn 1".into(),
        scope: site.scope.clone(),
        actor: ana.actor.clone(),
        session_id: session.id.clone(),
        turn_id: "1".into(),
    });
    let ctx = ChangeContext {
        actor: ana.actor.clone(),
        surface: Surface::Agent,
        session_id: Some(session.id.clone()),
        turn_id: Some("1".into()),
        publishing: Publishing::Separately,
    };
    let patch = PagePatch { name: Some("About us".into()), ..Default::default() };
    staged.update_page(&ctx, &site.scope, &about, patch).await.unwrap();

    let path = format!("/ai/sessions/{}/releases", session.id);
    let (status, shown) = site.get(&ana, &format!("{path}?turn=1")).await;
    assert_eq!(status, StatusCode::OK, "{shown}");
    assert!(shown.contains(&format!(r#"data-release="{release}""#)), "{shown}");
    assert!(shown.contains("Editor: Rename the about page, turn 1"), "{shown}");
    assert!(shown.contains(r#"<th scope="row">name</th><td><pre class="before">About</pre></td><td><pre class="after">About us</pre></td>"#), "{shown}");
    assert!(shown.contains(&format!(r#"action="/releases/{release}/publish""#)), "{shown}");
    assert!(shown.contains(&format!(r#"<a href="/releases/{release}#schedule">Schedule…</a>"#)));
    assert!(shown.contains(&format!(r#"<a href="/releases/{release}">Open the release</a>"#)));
    assert!(shown.contains(&format!(r#"action="/releases/{release}/discard""#)));
    assert_eq!(site.get(&ana, &path).await.1, shown, "every turn's release: the one turn that made one");
    let (status, none) = site.get(&ana, &format!("{path}?turn=2")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!none.contains("ai-release"), "a turn that staged nothing has no release: {none}");

    // Someone else's conversation is not shown to another editor.
    let bo = site.browser("bo@example.org", Group::Editor).await;
    let (status, refused) = site.get(&bo, &path).await;
    assert!(matches!(status, StatusCode::FORBIDDEN | StatusCode::NOT_FOUND), "{status}");
    assert!(!refused.contains("About us"));

    // Its Publish button posts to the release's own route.
    let ((status, _), to) = site.post(&ana, &format!("/releases/{release}/publish"), &[]).await;
    assert_eq!((status, to), (StatusCode::SEE_OTHER, format!("/releases/{release}?done=published")));
    assert_eq!(site.store.delivery_page(&site.scope, "about").await.unwrap().page.name, "About us");
    let (_, after) = site.get(&ana, &format!("{path}?turn=1")).await;
    assert!(after.contains(r#"<span class="status status-published">published</span>"#), "{after}");
    assert!(!after.contains("/publish\""), "nothing left to publish: {after}");
    assert!(after.contains(r#"<th scope="col">Before</th>"#), "{after}");
}
