//! Writing without the script: text saved from any form keeps `\n` line
//! endings, the markdown preview is the server's (tasks as checkboxes,
//! the rule of links), fields read by their labels and errors name them,
//! and a post has one image, its featured image.

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use common::site;
use quire_core::access::Group;

#[tokio::test]
async fn line_endings_typed_in_any_form_are_saved_as_newlines() {
    let site = site().await;
    let ada = site.browser("ada@example.org", Group::Editor).await;
    let home = site.page_id("home").await;
    let ((status, body), to) = site
        .post(
            &ada,
            &format!("/pages/{home}/sections/new?template=text"),
            &[
                ("heading", "Opening hours"),
                ("body", "Monday\r\nto Friday\r\n\r\n- nine\r\n- five\r\n"),
                ("_status", "draft"),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    let id = to.rsplit("#section-").next().unwrap();
    let section = site.store.section(&site.scope, id).await.unwrap();
    assert_eq!(section.content["body"], "Monday\nto Friday\n\n- nine\n- five");

    // An entry's excerpt, a text area of the entry's own, too.
    let blog = site.store.collection(&site.scope, "blog").await.unwrap();
    let post = site.store.entry_by_slug(&site.scope, &blog.id, "hello-quire").await.unwrap();
    let version = post.version.to_string();
    let ((status, body), _) = site
        .post(
            &ada,
            &format!("/entries/{}", post.id),
            &[
                ("_version", &version),
                ("entry.title", "Hello, Quire"),
                ("entry.slug", "hello-quire"),
                ("entry.excerpt", "One line\r\nand another\rand a third"),
                ("body", "# Hello\r\n\r\nAgain."),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    let saved = site.store.entry(&site.scope, &post.id).await.unwrap();
    assert_eq!(saved.excerpt.as_deref(), Some("One line\nand another\nand a third"));
    assert_eq!(saved.content["body"], "# Hello\n\nAgain.");
}

/// POSTs the preview form as the script does (the secret in its header).
async fn preview(site: &common::Site, who: Option<&common::Browser>, text: &str) -> ((StatusCode, String), String) {
    let mut request = Request::post("/preview").header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    if let Some(who) = who {
        let cookie = site.request_get(who, "/").headers()[header::COOKIE].clone();
        request = request.header(header::COOKIE, cookie).header("x-csrf-token", &who.csrf);
    }
    let body = serde_urlencoded::to_string([("text", text)]).unwrap();
    site.send(request.body(Body::from(body)).unwrap()).await
}

#[tokio::test]
async fn the_preview_is_the_servers_with_tasks_as_checkboxes_for_anyone_signed_in() {
    let site = site().await;
    let viewer = site.browser("vic@example.org", Group::Viewer).await;
    let ((status, html), _) =
        preview(&site, Some(&viewer), "- [ ] write\r\n- [x] read\r\n\r\n[Home](/) and [out](//evil.example)").await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains("<input type=\"checkbox\" class=\"task\" disabled aria-label=\"To do\"> write"), "{html}");
    assert!(html.contains("disabled checked aria-label=\"Done\"> read"), "{html}");
    assert!(html.contains("<a href=\"/\">Home</a>") && html.contains(" and out</p>"), "{html}");
    // Signed out: nothing is rendered, the sign-in form is offered.
    let ((status, html), to) = preview(&site, None, "**hi**").await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{html}");
    assert!(to.starts_with("/sign-in"), "{to}");
    assert!(!html.contains("<strong>"));
}

#[tokio::test]
async fn fields_read_by_their_labels_and_errors_name_them() {
    let site = site().await;
    let ada = site.browser("ada@example.org", Group::Editor).await;
    let home = site.page_id("home").await;
    let (_, html) = site.get(&ada, &format!("/pages/{home}/sections/new?template=hero")).await;
    assert!(html.contains("<legend>Call to action</legend>"), "{html}");
    assert!(html.contains(">Background image</legend>"), "{html}");
    assert!(html.contains("The banner&#39;s main button") || html.contains("The banner's main button"), "{html}");
    assert!(!html.contains(">Cta<"), "{html}");

    // Refused: each error names its field by its label, in the summary too.
    let ((status, html), _) = site
        .post(
            &ada,
            &format!("/pages/{home}/sections/new?template=faq"),
            &[("heading", "Questions"), ("items.0.question", "Why?"), ("items.0.answer", ""), ("_status", "draft")],
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{html}");
    assert!(html.contains("id=\"e-items.0.answer\">Answer: required</p>"), "{html}");
    assert!(html.contains("<a href=\"#f-items.0.answer\">Questions › Item 1 › Answer</a>: required"), "{html}");
    assert!(!html.contains(">items.0.answer<"), "{html}");
}

#[tokio::test]
async fn a_post_has_one_image_its_featured_image_and_its_cover_follows() {
    let site = site().await;
    let ada = site.browser("ada@example.org", Group::Editor).await;
    let blog = site.store.collection(&site.scope, "blog").await.unwrap();
    let post = site.store.entry_by_slug(&site.scope, &blog.id, "hello-quire").await.unwrap();
    let image = post.featured_image.clone().expect("the seeded post has a featured image");
    let (_, html) = site.get(&ada, &format!("/entries/{}", post.id)).await;
    assert!(html.contains("name=\"entry.featuredImage\" data-image-picker>"), "{html}");
    assert!(!html.contains("name=\"cover.url\""), "no second image field: {html}");
    assert!(!html.contains("keep in step"), "{html}");

    // Cleared, the cover goes with it; chosen again, the cover follows.
    for chosen in ["", image.as_str()] {
        let version = site.store.entry(&site.scope, &post.id).await.unwrap().version.to_string();
        let ((status, body), _) = site
            .post(
                &ada,
                &format!("/entries/{}", post.id),
                &[
                    ("_version", &version),
                    ("entry.title", "Hello, Quire"),
                    ("entry.slug", "hello-quire"),
                    ("entry.featuredImage", chosen),
                    ("body", "# Hello"),
                ],
            )
            .await;
        assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
        let saved = site.store.entry(&site.scope, &post.id).await.unwrap();
        assert_eq!(saved.featured_image.as_deref(), Some(chosen).filter(|c| !c.is_empty()));
        assert_eq!(saved.content.get("cover").and_then(|c| c.as_str()), Some(chosen).filter(|c| !c.is_empty()));
    }

    // A post whose image is only its cover (as posts kept it before) shows
    // it as its featured image, so saving it makes it so.
    let made = site
        .store
        .create_entry(
            &quire_core::model::ChangeContext::system(),
            &site.scope,
            &blog.id,
            quire_core::input::NewEntry {
                slug: "covered".into(),
                title: "Covered".into(),
                content: Some(serde_json::json!({ "body": "x", "cover": image })),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let (_, html) = site.get(&ada, &format!("/entries/{}", made.id)).await;
    let picker = html.split("name=\"entry.featuredImage\"").nth(1).unwrap();
    let picker = &picker[..picker.find("</select>").unwrap()];
    assert!(picker.contains(&format!("value=\"{image}\"")) && picker.contains(" selected>"), "{picker}");
}

#[tokio::test]
async fn a_new_section_is_chosen_from_templates_named_with_what_each_is_for() {
    let site = site().await;
    let ada = site.browser("ada@example.org", Group::Editor).await;
    let home = site.page_id("home").await;
    let (_, html) = site.get(&ada, &format!("/pages/{home}")).await;
    assert!(html.contains("<select id=\"template\" name=\"template\" required"), "none chosen for the person: {html}");
    assert!(html.contains("<option value=\"\">Choose a template…</option>"), "{html}");
    // Each described, after a sketch drawn from its fields.
    let hero = "<dt>Hero</dt><dd data-template=\"hero\"><span class=\"sketch\" aria-hidden=\"true\">\
        <span class=\"sk-h\"></span><span class=\"sk-line\"></span><span class=\"sk-img\"></span><span class=\"sk-btn\"></span>\
        </span>Full-width opening banner";
    assert!(html.contains(hero), "{html}");
    let faq = "<dd data-template=\"faq\"><span class=\"sketch\" aria-hidden=\"true\"><span class=\"sk-h\"></span>\
        <span class=\"sk-items\"></span></span>Questions and answers.</dd>";
    assert!(html.contains(faq), "{html}");
}
