//! The releases and schedules screens and the editors' publishing panel as
//! plain forms, without the browser's script: a time typed without a zone
//! is read as UTC, a refused form is shown again with the reason beside
//! its control and nothing changed, a release opened before a rename
//! refuses to overwrite it, and a viewer is offered nothing and refused.

mod common;

use axum::http::StatusCode;
use common::site;
use quire_core::access::Group;

#[tokio::test]
async fn without_the_script_a_schedule_is_read_as_utc_and_a_time_gone_by_is_refused_beside_its_input() {
    let site = site().await;
    let editor = site.browser("ed@example.org", Group::Editor).await;
    let pricing = site.page_id("pricing").await;
    let panel = format!("/pages/{pricing}/publishing");

    let ((status, body), _) = site
        .post(&editor, &panel, &[("action", "schedule"), ("schedule_action", "unpublish"), ("at", "2001-01-01T09:00")])
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.contains(r#"<p class="error" id="e-pub-at">must be in the future</p>"#), "{body}");
    assert!(body.contains(r#"value="2001-01-01T09:00""#), "what was typed is kept: {body}");
    assert!(site.store.schedules(&site.scope, true).await.unwrap().is_empty(), "nothing was scheduled");

    let ((status, body), to) = site
        .post(&editor, &panel, &[("action", "schedule"), ("schedule_action", "unpublish"), ("at", "2099-01-02T03:04")])
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    assert_eq!(to, format!("/pages/{pricing}?done=scheduled"));
    let schedules = site.store.schedules(&site.scope, false).await.unwrap();
    assert_eq!(schedules.len(), 1);
    assert_eq!(
        schedules[0].at.to_rfc3339(),
        "2099-01-02T03:04:00+00:00",
        "a time without a zone is UTC, as the label says"
    );
    assert_eq!((schedules[0].target.as_str(), schedules[0].action.as_str()), ("page", "unpublish"));

    let (_, editor_page) = site.get(&editor, &to).await;
    assert!(editor_page.contains("Time (UTC)"), "{editor_page}");
    assert!(
        editor_page.contains(
            "Unpublish at <time datetime=\"2099-01-02T03:04:00+00:00\" data-local>2099-01-02 03:04 UTC</time>"
        )
    );

    // Listed on the Releases screen with the page's name, and cancelled there.
    let (_, list) = site.get(&editor, "/releases").await;
    assert!(list.contains("Page “Pricing”"), "{list}");
    let ((status, _), to) =
        site.post(&editor, &format!("/schedules/{}/cancel", schedules[0].id), &[("back", "/releases#schedules")]).await;
    assert_eq!((status, to.as_str()), (StatusCode::SEE_OTHER, "/releases#schedules"));
    assert!(site.store.schedules(&site.scope, false).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_new_release_named_in_the_panel_takes_the_document_and_a_nameless_one_is_refused() {
    let site = site().await;
    let editor = site.browser("ed@example.org", Group::Editor).await;
    let about = site.page_id("about").await;
    let panel = format!("/pages/{about}/publishing");

    let stage = [("action", "stage"), ("release", ""), ("release_name", " "), ("release_action", "publish")];
    let ((status, body), _) = site.post(&editor, &panel, &stage).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.contains(r#"id="e-pub-release-name""#), "the reason is beside the name: {body}");
    assert!(site.store.releases(&site.scope, None).await.unwrap().is_empty(), "no release was made");

    let stage = [("action", "stage"), ("release", ""), ("release_name", "Team week"), ("release_action", "unpublish")];
    let ((status, _), to) = site.post(&editor, &panel, &stage).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let releases = site.store.releases(&site.scope, None).await.unwrap();
    assert_eq!(releases.len(), 1);
    assert_eq!(releases[0].name, "Team week");
    assert_eq!(releases[0].items.len(), 1);
    assert_eq!((releases[0].items[0].id.as_str(), releases[0].items[0].action.as_str()), (about.as_str(), "unpublish"));
    assert_eq!(to, format!("/pages/{about}?done=staged&release={}", releases[0].id));
    let (_, editor_page) = site.get(&editor, &to).await;
    assert!(
        editor_page
            .contains(&format!(r#"Added to the release <a href="/releases/{}">“Team week”</a>."#, releases[0].id))
    );
    assert!(editor_page.contains("which takes it off the site"), "{editor_page}");

    // The release screen: the page by its name, linked to its editor, and
    // what taking it off the site changes.
    let (status, screen) = site.get(&editor, &format!("/releases/{}", releases[0].id)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(screen.contains(&format!(r#"Page <a href="/pages/{about}">About</a>"#)), "{screen}");
    assert!(screen.contains("When the release is published, it takes it off the site."));
    assert!(screen.contains(r#"<span class="badge">removed</span>"#), "{screen}");
}

#[tokio::test]
async fn a_release_renamed_since_its_screen_was_opened_refuses_the_older_form() {
    let site = site().await;
    let editor = site.browser("ed@example.org", Group::Editor).await;
    let ((status, _), to) = site.post(&editor, "/releases", &[("name", "Spring"), ("description", "")]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let id = to.trim_start_matches("/releases/").trim_end_matches("?done=created").to_string();
    let opened = site.store.releases(&site.scope, None).await.unwrap()[0].version.to_string();

    let ((status, _), _) = site
        .post(
            &editor,
            &format!("/releases/{id}"),
            &[("_version", &opened), ("name", "Spring sale"), ("description", "")],
        )
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let ((status, body), _) = site
        .post(
            &editor,
            &format!("/releases/{id}"),
            &[("_version", &opened), ("name", "Spring again"), ("description", "")],
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body.contains("it changed since you opened it"), "{body}");
    assert!(body.contains(r#"value="Spring again""#), "what was typed is kept");
    assert_eq!(site.store.releases(&site.scope, None).await.unwrap()[0].name, "Spring sale");

    // Publishing an empty release is refused on its screen, nothing changed.
    let ((status, body), _) = site.post(&editor, &format!("/releases/{id}/publish"), &[]).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body.contains(r#"id="release-error""#), "{body}");
}

#[tokio::test]
async fn a_viewer_is_offered_no_release_controls_and_a_forced_one_is_refused() {
    let site = site().await;
    let editor = site.browser("ed@example.org", Group::Editor).await;
    let viewer = site.browser("vi@example.org", Group::Viewer).await;
    let ((_, _), to) = site.post(&editor, "/releases", &[("name", "Autumn")]).await;
    let id = to.trim_start_matches("/releases/").trim_end_matches("?done=created").to_string();

    let (status, list) = site.get(&viewer, "/releases").await;
    assert_eq!(status, StatusCode::OK);
    assert!(list.contains("Autumn") && !list.contains("Make release"), "{list}");
    let (_, screen) = site.get(&viewer, &format!("/releases/{id}")).await;
    assert!(!screen.contains("Publish now") && !screen.contains("Discard this release"), "{screen}");
    let (_, editor_page) = site.get(&viewer, &format!("/pages/{}", site.page_id("about").await)).await;
    assert!(!editor_page.contains("Add to release") && !editor_page.contains(r#"name="at""#));

    let ((status, _), _) = site.post(&viewer, "/releases", &[("name", "Forced")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let ((status, _), _) = site.post(&viewer, &format!("/releases/{id}/discard"), &[]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let releases = site.store.releases(&site.scope, None).await.unwrap();
    assert_eq!(releases.len(), 1);
    assert_eq!(releases[0].state.as_str(), "open");
}

#[tokio::test]
async fn an_entry_and_a_menu_go_into_a_release_from_their_panels_and_a_refusal_shows_their_editor_again() {
    let site = site().await;
    let editor = site.browser("ed@example.org", Group::Editor).await;
    let blog = site.store.collection(&site.scope, "blog").await.unwrap();
    let post = site.store.entry_by_slug(&site.scope, &blog.id, "hello-quire").await.unwrap().id;
    let header = site.store.navigation(&site.scope, "header").await.unwrap().id;

    let stage = |name| [("action", "stage"), ("release", ""), ("release_name", name), ("release_action", "publish")];
    let ((status, _), to) = site.post(&editor, &format!("/entries/{post}/publishing"), &stage("Launch")).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert!(to.starts_with(&format!("/entries/{post}?done=staged&release=")), "{to}");
    let launch = site.store.releases(&site.scope, None).await.unwrap().remove(0);
    let into_launch = [("action", "stage"), ("release", launch.id.as_str()), ("release_action", "publish")];
    let ((status, _), to) = site.post(&editor, &format!("/navigation/{header}/publishing"), &into_launch).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(to, format!("/navigation/{header}?done=staged&release={}", launch.id));
    let held: Vec<(String, String)> = site.store.releases(&site.scope, None).await.unwrap()[0]
        .items
        .iter()
        .map(|i| (i.entity.as_str().to_string(), i.id.clone()))
        .collect();
    assert_eq!(held, [("entry".to_string(), post.clone()), ("navigation".to_string(), header.clone())]);

    // Refused, each editor is shown again with the reason in its panel.
    for (panel, heading) in [
        (format!("/entries/{post}/publishing"), "Hello, Quire"),
        (format!("/navigation/{header}/publishing"), "Header"),
    ] {
        let past = [("action", "schedule"), ("schedule_action", "publish"), ("at", "2001-01-01T09:00")];
        let ((status, body), _) = site.post(&editor, &panel, &past).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.contains(heading) && body.contains(r#"id="e-pub-at">must be in the future"#), "{body}");
    }
    assert!(site.store.schedules(&site.scope, true).await.unwrap().is_empty());
}
