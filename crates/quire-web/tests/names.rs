//! Names, not ids, without the script: History, a change, the Archive and
//! Approvals name people and tokens by name and records by name with a
//! link; a page's parent and an image field are pickers; every editor
//! links to its record's history; the theme chosen is remembered.

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use common::site;
use quire_core::access::Group;
use quire_core::model::{ChangeContext, EntityKind, Publishing, Surface};
use quire_store::NewToken;

/// A change context of `actor` through the back-office.
fn by(actor: &str) -> ChangeContext {
    ChangeContext {
        actor: actor.into(),
        surface: Surface::Web,
        session_id: None,
        turn_id: None,
        publishing: Publishing::ByStatus,
    }
}

#[tokio::test]
async fn history_and_a_change_name_people_tokens_and_records_with_links() {
    let site = site().await;
    let ada = site.browser("ada@example.org", Group::Editor).await;
    let bob = site.browser("bob@example.org", Group::Editor).await;
    let about = site.page_id("about").await;
    let version = site.store.page(&site.scope, &about).await.unwrap().version.to_string();
    // Bob renames the page through its form.
    let ((status, body), _) = site
        .post(
            &bob,
            &format!("/pages/{about}"),
            &[("_version", &version), ("name", "About the studio"), ("slug", "about"), ("parent_id", "")],
        )
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    // A token adds a page through REST.
    let (_, secret) = site.store.create_token(NewToken::new("Deploy bot", Group::Editor, "demo")).await.unwrap();
    let ((status, body), _) = site
        .send(
            Request::post("/api/v1/pages")
                .header(header::AUTHORIZATION, format!("Bearer {secret}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(r#"{"name":"Careers","slug":"careers"}"#))
                .unwrap(),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let careers = site.page_id("careers").await;

    let (status, html) = site.get(&ada, "/history").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("<td>bob</td>"), "Bob by his name: {html}");
    assert!(html.contains("API token “Deploy bot”"), "the token by its name: {html}");
    assert!(html.contains(&format!("<a href=\"/pages/{about}\">About the studio</a>")), "{html}");
    assert!(html.contains(&format!("<a href=\"/pages/{careers}\">Careers</a>")), "{html}");
    assert!(!html.contains(">user:") && !html.contains(">token:"), "no actor id is shown: {html}");
    // The "by" filter offers people by name.
    assert!(html.contains(&format!("<option value=\"{}\">bob</option>", bob.actor)), "{html}");

    // Filtered to Bob, and to the page: the record is named in the heading.
    let (_, mine) = site.get(&ada, &format!("/history?actor={}", bob.actor.replace(':', "%3A"))).await;
    assert!(mine.contains(&format!("<option value=\"{}\" selected>bob</option>", bob.actor)), "{mine}");
    assert!(!mine.contains("Deploy bot</td>"), "only Bob's changes: {mine}");
    let (_, one) = site.get(&ada, &format!("/history?entity=page&entity_id={about}")).await;
    assert!(one.contains("History of the page “About the studio”"), "{one}");
    assert!(one.contains(&format!("<a href=\"/pages/{about}\">Open the page</a>")), "{one}");

    // One change: who and what, by name.
    let change = site
        .store
        .changes(
            &site.scope,
            &quire_store::ChangeFilter { entity_id: Some(about.clone()), ..Default::default() },
            1,
            None,
        )
        .await
        .unwrap()
        .items
        .remove(0);
    let (_, shown) = site.get(&ada, &format!("/history/{}", change.id)).await;
    assert!(shown.contains("by bob through web"), "{shown}");
    assert!(shown.contains(&format!("of the page <a href=\"/pages/{about}\">About the studio</a></h1>")), "{shown}");
    let (_, own) = site.get(&bob, &format!("/history/{}", change.id)).await;
    assert!(own.contains("by bob (you) through web"), "{own}");
}

#[tokio::test]
async fn history_names_images_menu_items_and_sections_too() {
    let site = site().await;
    let ada = site.browser("ada@example.org", Group::Editor).await;
    let bob = site.browser("bob@example.org", Group::Editor).await;
    let image = site.store.images(&site.scope, None, 1, None).await.unwrap().items.remove(0);
    let patch = quire_core::input::ImagePatch { alt: Some(Some("A calm harbour".into())), ..Default::default() };
    site.store.update_image(&by(&bob.actor), &site.scope, &image.id, patch).await.unwrap();
    let header = site.store.navigation(&site.scope, "header").await.unwrap();
    let item = site.store.nav_items(&site.scope, &header.id, None, 1, None).await.unwrap().items.remove(0);
    let patch = quire_core::input::NavItemPatch { label: Some("Start here".into()), ..Default::default() };
    site.store.update_nav_item(&by(&bob.actor), &site.scope, &item.id, patch).await.unwrap();
    let home = site.page_id("home").await;
    let hero = site.store.sections(&site.scope, &home, 1, None).await.unwrap().items.remove(0);
    let patch = quire_core::input::SectionPatch { hidden: Some(true), ..Default::default() };
    site.store.update_section(&by(&bob.actor), &site.scope, &hero.id, patch).await.unwrap();

    let (_, html) = site.get(&ada, "/history").await;
    assert!(html.contains(&format!("image <a href=\"/media/{}\">A calm harbour</a>", image.id)), "{html}");
    assert!(html.contains(&format!("menu item <a href=\"/nav-items/{}\">Start here</a>", item.id)), "{html}");
    assert!(html.contains(&format!("section <a href=\"/sections/{}\">Hero on Home</a>", hero.id)), "{html}");

    // A translation by its document and locale, linked to its side-by-side screen.
    let about = site.page_id("about").await;
    let fields = serde_json::json!({ "name": "Über uns" });
    site.store
        .put_translation(&by(&bob.actor), &site.scope, EntityKind::Page, &about, "de", fields, false)
        .await
        .unwrap();
    let (_, html) = site.get(&ada, "/history").await;
    assert!(html.contains(&format!("translation <a href=\"/pages/{about}/translations/de\">About (de)</a>")), "{html}");
    assert!(!html.contains("no longer here"), "{html}");
}

#[tokio::test]
async fn the_archive_and_approvals_name_who_and_what() {
    let site = site().await;
    let ada = site.browser("ada@example.org", Group::Editor).await;
    let bob = site.browser("bob@example.org", Group::Editor).await;
    let contact = site.page_id("contact").await;
    site.store.archive(&by(&bob.actor), &site.scope, EntityKind::Page, &[contact]).await.unwrap();
    let (_, html) = site.get(&ada, "/archive").await;
    assert!(html.contains("by bob · "), "who archived it, by name: {html}");
    assert!(html.contains("page “contact”"), "{html}");
    assert!(!html.contains(&bob.actor), "{html}");

    // A token asks to archive a page: the inbox names the token and the page, with a link.
    let (_, secret) = site.store.create_token(NewToken::new("Release bot", Group::Admin, "demo")).await.unwrap();
    let pricing = site.page_id("pricing").await;
    let ((status, body), _) = site
        .send(
            Request::post("/api/v1/tools/deletePage/invoke")
                .header(header::AUTHORIZATION, format!("Bearer {secret}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(serde_json::json!({ "ids": [pricing] }).to_string()))
                .unwrap(),
        )
        .await;
    assert!(body.contains("confirmationId"), "{status} {body}");
    let (_, inbox) = site.get(&ada, "/approvals").await;
    assert!(inbox.contains("asked by API token “Release bot”"), "{inbox}");
    assert!(inbox.contains(&format!("page <a href=\"/pages/{pricing}\">Pricing</a>")), "{inbox}");
    assert!(!inbox.contains("asked by token:"), "{inbox}");
}

#[tokio::test]
async fn a_page_chooses_its_parent_from_the_tree_and_a_new_page_is_made_under_one() {
    let site = site().await;
    let ada = site.browser("ada@example.org", Group::Editor).await;
    let (about, team) = (site.page_id("about").await, site.page_id("team").await);

    let (_, html) = site.get(&ada, &format!("/pages/{team}")).await;
    assert!(html.contains("<select id=\"f-parent\" name=\"parent_id\" data-filterable>"), "{html}");
    assert!(html.contains("<option value=\"\">None: a root page</option>"), "{html}");
    assert!(html.contains(&format!("<option value=\"{about}\" selected>About (/about)</option>")), "{html}");
    assert!(!html.contains(&format!("<option value=\"{team}\"")), "a page is not its own parent: {html}");
    assert!(!html.contains("Parent page id"), "{html}");
    // The editor of About offers neither itself nor the page under it, and
    // the tree's depth shows in the names.
    let (_, html) = site.get(&ada, &format!("/pages/{about}")).await;
    assert!(!html.contains(&format!("<option value=\"{team}\"")), "{html}");
    let (_, tree) = site.get(&ada, "/pages").await;
    assert!(tree.contains(&format!("<option value=\"{team}\">\u{2003}Our team (/team)</option>")), "{tree}");
    assert!(tree.contains("<select id=\"f-new-parent\" name=\"parent_id\" data-filterable>"), "{tree}");
    // Under About's level the new page goes under About unless told otherwise.
    let (_, level) = site.get(&ada, &format!("/pages?parent={about}")).await;
    assert!(level.contains(&format!("<option value=\"{about}\" selected>About (/about)</option>")), "{level}");

    let ((status, body), to) =
        site.post(&ada, "/pages", &[("name", "Jobs"), ("slug", "jobs"), ("parent_id", &team)]).await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    let jobs = site.store.page_by_slug(&site.scope, "jobs").await.unwrap();
    assert_eq!(jobs.parent_id.as_deref(), Some(team.as_str()));
    assert_eq!(to, format!("/pages/{}", jobs.id));
    // Moved to the root through the editor's picker.
    let version = jobs.version.to_string();
    let ((status, _), _) = site
        .post(
            &ada,
            &format!("/pages/{}", jobs.id),
            &[("_version", &version), ("name", "Jobs"), ("slug", "jobs"), ("parent_id", "")],
        )
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(site.store.page(&site.scope, &jobs.id).await.unwrap().parent_id, None);
}

#[tokio::test]
async fn image_fields_choose_from_the_library_by_name_with_a_thumbnail() {
    let site = site().await;
    let ada = site.browser("ada@example.org", Group::Editor).await;
    let home = site.page_id("home").await;
    let hero = site.store.sections(&site.scope, &home, 10, None).await.unwrap().items.remove(0);
    assert_eq!(hero.template_key, "hero");
    let (_, html) = site.get(&ada, &format!("/sections/{}", hero.id)).await;
    assert!(html.contains("name=\"backgroundImage.url\" data-image-picker>"), "{html}");
    assert!(html.contains("<option value=\"\">None</option>"), "{html}");
    assert!(
        html.contains("selected>Abstract dawn gradient over a horizon</option>"),
        "the image by its alt text: {html}"
    );
    assert!(html.contains("<img class=\"thumb\" src=\"/uploads/"), "its thumbnail: {html}");
    assert!(html.contains("href=\"/media\""), "{html}");
    assert!(!html.contains("(/uploads/…)"), "{html}");

    // Cleared ("None") and saved, the image is gone from the section.
    let version = hero.version.to_string();
    let ((status, body), _) = site
        .post(
            &ada,
            &format!("/sections/{}", hero.id),
            &[
                ("_version", &version),
                ("heading", "Your site, edited by conversation"),
                ("backgroundImage.url", ""),
                ("backgroundImage.alt", ""),
                ("_status", "draft"),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    let saved = site.store.section(&site.scope, &hero.id).await.unwrap();
    assert!(saved.content.get("backgroundImage").is_none_or(|v| v.is_null()), "{}", saved.content);

    // A post's featured image is the same picker.
    let blog = site.store.collection(&site.scope, "blog").await.unwrap();
    let post = site.store.entries(&site.scope, &blog.id, &Default::default(), 1, None).await.unwrap().items.remove(0);
    let (_, html) = site.get(&ada, &format!("/entries/{}", post.id)).await;
    assert!(html.contains("name=\"entry.featuredImage\" data-image-picker>"), "{html}");
    assert!(!html.contains("Featured image (/uploads/…)"), "{html}");
}

#[tokio::test]
async fn every_editor_links_to_its_records_history() {
    let site = site().await;
    let ada = site.browser("ada@example.org", Group::Admin).await;
    let home = site.page_id("home").await;
    let section = site.store.sections(&site.scope, &home, 1, None).await.unwrap().items.remove(0);
    let blog = site.store.collection(&site.scope, "blog").await.unwrap();
    let post = site.store.entries(&site.scope, &blog.id, &Default::default(), 1, None).await.unwrap().items.remove(0);
    let image = site.store.images(&site.scope, None, 1, None).await.unwrap().items.remove(0);
    let menu = site.store.navigations(&site.scope, 1, None).await.unwrap().items.remove(0);
    let agent = site.store.agents(&site.scope).await.unwrap().remove(0);
    for (path, kind, id) in [
        (format!("/pages/{home}"), "page", home.clone()),
        (format!("/sections/{}", section.id), "section", section.id.clone()),
        (format!("/entries/{}", post.id), "entry", post.id.clone()),
        (format!("/media/{}", image.id), "image", image.id.clone()),
        (format!("/navigation/{}", menu.id), "navigation", menu.id.clone()),
        (format!("/agents/{}", agent.alias), "agent", agent.id.clone()),
    ] {
        let (status, html) = site.get(&ada, &path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        let link = format!("href=\"/history?entity={kind}&amp;entity_id={id}\"");
        assert!(html.contains(&link), "{path} links to its history ({link}): {html}");
    }
}

#[tokio::test]
async fn the_sidebar_names_the_records_a_turn_changed() {
    let site = site().await;
    let ada = site.browser("ada@example.org", Group::Viewer).await;
    let home = site.page_id("home").await;
    let hero = site.store.sections(&site.scope, &home, 1, None).await.unwrap().items.remove(0);
    let (status, json) =
        site.get(&ada, &format!("/names?r=section:{}&r=page:{home}&r=page:no-such-page", hero.id)).await;
    assert_eq!(status, StatusCode::OK);
    let named: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(named[0]["label"], "Hero on Home", "{named}");
    assert_eq!(named[0]["href"], format!("/sections/{}", hero.id));
    assert_eq!(named[1]["label"], "Home");
    assert_eq!(named[1]["noun"], "page");
    assert_eq!(named[2]["href"], serde_json::Value::Null, "{named}");
    assert!(!named[2]["label"].as_str().unwrap().contains("no-such-page"), "{named}");
}

#[tokio::test]
async fn the_theme_chosen_is_remembered_and_drawn_by_the_server() {
    let site = site().await;
    let ada = site.browser("ada@example.org", Group::Editor).await;
    let (_, html) = site.get(&ada, "/pages").await;
    assert!(html.contains("<html lang=\"en\">"), "the system's theme by default");
    assert!(html.contains("id=\"theme-toggle\" name=\"theme\" value=\"dark\" aria-pressed=\"false\""), "{html}");

    let mut request = Request::post("/theme")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::REFERER, "http://localhost/media?q=x")
        .body(Body::from(format!("_csrf={}&theme=dark", ada.csrf)))
        .unwrap();
    let get = site.request_get(&ada, "/");
    request.headers_mut().insert(header::COOKIE, get.headers()[header::COOKIE].clone());
    let response = tower::ServiceExt::oneshot(site.router(), request).await.unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()[header::LOCATION], "/media?q=x");
    let cookie = response.headers()[header::SET_COOKIE].to_str().unwrap();
    assert!(cookie.starts_with("quire_theme=dark;") && cookie.contains("Max-Age=31536000"), "{cookie}");

    let mut again = site.request_get(&ada, "/pages");
    again.headers_mut().append(header::COOKIE, "quire_theme=dark".parse().unwrap());
    let ((_, html), _) = site.send(again).await;
    assert!(html.contains("<html lang=\"en\" data-theme=\"dark\">"), "{html}");
    assert!(html.contains("value=\"light\" aria-pressed=\"true\">Dark mode</button>"), "{html}");
}

#[tokio::test]
async fn a_menu_items_target_is_shown_and_chosen_by_name() {
    let site = site().await;
    let ada = site.browser("ada@example.org", Group::Editor).await;
    let header = site.store.navigation(&site.scope, "header").await.unwrap();
    let items = site.store.nav_items(&site.scope, &header.id, None, 100, None).await.unwrap().items;
    let about_item = items.iter().find(|i| i.label == "About").unwrap();
    let (about, pricing) = (site.page_id("about").await, site.page_id("pricing").await);
    let (_, html) = site.get(&ada, &format!("/nav-items/{}", about_item.id)).await;
    assert!(html.contains("name=\"target\" value=\"About (/about)\""), "the target by its name: {html}");
    assert!(!html.contains(&format!("value=\"{about}\"")), "no id in the box: {html}");
    assert!(html.contains("<option value=\"Pricing (/pricing)\"></option>"), "suggestions by name: {html}");

    // Saved with a name the suggestions offer, the item points at that page.
    let version = about_item.version.to_string();
    let ((status, body), _) = site
        .post(
            &ada,
            &format!("/nav-items/{}", about_item.id),
            &[
                ("_version", &version),
                ("label", "About"),
                ("target_type", "page"),
                ("target", "Pricing (/pricing)"),
                ("parent_id", ""),
                ("visible", "true"),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    let saved = site.store.nav_item(&site.scope, &about_item.id).await.unwrap();
    assert_eq!(saved.target_id.as_deref(), Some(pricing.as_str()));
}

#[tokio::test]
async fn a_schedule_in_the_publishing_panel_names_who_made_it() {
    let site = site().await;
    let ada = site.browser("ada@example.org", Group::Editor).await;
    let bob = site.browser("bob@example.org", Group::Editor).await;
    let about = site.page_id("about").await;
    let ((status, body), _) = site
        .post(
            &bob,
            &format!("/pages/{about}/publishing"),
            &[("action", "schedule"), ("schedule_action", "publish"), ("at", "2099-01-01T10:00")],
        )
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    let (_, html) = site.get(&ada, &format!("/pages/{about}")).await;
    let waiting = html.split("<ul class=\"plain waiting\"").nth(1).unwrap_or_else(|| panic!("no schedule: {html}"));
    assert!(waiting.contains("bob"), "who scheduled it, by name: {waiting}");
    assert!(!waiting.contains("user:") && !waiting.contains("no longer"), "{waiting}");
}
