//! Every content tool: at least one success and one failure.

mod common;
use common::{Env, fails, ok};
use serde_json::json;

#[tokio::test]
async fn get_page_scope_selection_and_options() {
    let env = Env::new().await;
    let err = fails(&env.call("getPage", json!({})).await, "VALIDATION");
    assert_eq!(err, "Provide id, slug, query, parentId, or set all: true");
    fails(&env.call("getPage", json!({"id": "x", "slug": "y"})).await, "VALIDATION");
    let all = ok(env.call("getPage", json!({"all": true})).await);
    assert_eq!(all["count"], 6);
    assert!(all["items"][0].get("meta").is_none(), "light by default");
    let about =
        ok(env.call("getPage", json!({"slug": "about", "includeChildren": true, "includeContent": true})).await);
    assert_eq!(about["items"][0]["children"][0]["slug"], "team");
    assert_eq!(about["items"][0]["sections"].as_array().unwrap().len(), 2);
    assert!(about["items"][0]["sections"][0]["content"].is_object());
    let about_id = about["items"][0]["id"].as_str().unwrap();
    let children = ok(env.call("getPage", json!({"parentId": about_id})).await);
    assert_eq!(children["count"], 1);
    let paged = ok(env.call("getPage", json!({"all": true, "limit": 2})).await);
    assert_eq!(paged["count"], 2);
    let next = ok(env.call("getPage", json!({"all": true, "limit": 2, "cursor": paged["nextCursor"]})).await);
    assert_ne!(next["items"][0]["id"], paged["items"][0]["id"]);
    fails(&env.call("getPage", json!({"slug": "nope"})).await, "NOT_FOUND");
    let limit = fails(&env.call("getPage", json!({"all": true, "limit": 500})).await, "VALIDATION");
    assert_eq!(limit, "limit: 500 is not between 1 and 100");
    let unknown = fails(&env.call("getPage", json!({"all": true, "deep": true})).await, "VALIDATION");
    assert!(unknown.starts_with("deep: unknown parameter (accepted: id, slug, query, parentId"), "{unknown}");
}

#[tokio::test]
async fn create_and_update_page() {
    let env = Env::new().await;
    let created = ok(env
        .call(
            "createPage",
            json!({"name": "Careers", "slug": "careers", "meta": {"title": "Jobs", "description": "d"}}),
        )
        .await);
    assert_eq!(created["item"]["status"], "draft");
    assert!(created["message"].as_str().unwrap().contains("Careers"));
    let id = created["item"]["id"].as_str().unwrap();
    let updated = ok(env.call("updatePage", json!({"id": id, "meta": {"description": null}})).await);
    assert_eq!(updated["item"]["meta"], json!({"title": "Jobs"}));
    // A tool changes drafts; publishing is publishContent's, which a person approves.
    let by_status = fails(&env.call("updatePage", json!({"id": id, "status": "published"})).await, "VALIDATION");
    assert!(by_status.starts_with("status: ") && by_status.contains("publishContent"), "{by_status}");
    let bad = fails(&env.call("updatePage", json!({"id": id, "status": "live"})).await, "VALIDATION");
    assert_eq!(bad, "status: \"live\" is not one of draft, published, unpublished");
    let dup = fails(&env.call("createPage", json!({"name": "X", "slug": "about"})).await, "CONFLICT");
    assert!(dup.contains("already used"));
    let missing = fails(&env.call("createPage", json!({"slug": "x"})).await, "VALIDATION");
    assert_eq!(missing, "name: required");
    // nothing changed by the failures
    assert_eq!(env.store.page(&env.scope, id).await.unwrap().version, 2);
}

#[tokio::test]
async fn sections_create_update_and_image_fields() {
    let env = Env::new().await;
    let home = env.page_id("home").await;
    let t = ok(env.call("getSectionTemplate", json!({"key": "hero"})).await);
    assert_eq!(t["items"][0]["fields"][0]["name"], "heading");
    assert_eq!(ok(env.call("getSectionTemplate", json!({"all": true})).await)["count"], 10);
    fails(&env.call("getSectionTemplate", json!({"key": "carousel"})).await, "NOT_FOUND");

    let bad = fails(
        &env.call(
            "createSection",
            json!({"pageId": home, "templateKey": "hero", "content": {"heading": "Hi", "cta": {"label": "Go"}}}),
        )
        .await,
        "VALIDATION",
    );
    assert_eq!(bad, "content.cta.href: required");
    let created = ok(env
        .call("createSection", json!({"pageId": home, "templateKey": "hero", "content": {"heading": "Hello"}}))
        .await);
    let sid = created["item"]["pageSectionId"].as_str().unwrap().to_string();

    let list = ok(env.call("getSection", json!({"pageId": home})).await);
    assert_eq!(list["count"], 5);
    assert!(list["items"][0].get("content").is_none());
    assert_eq!(
        ok(env.call("getSection", json!({"pageSectionId": sid, "includeContent": true})).await)["items"][0]["content"]
            ["heading"],
        "Hello"
    );
    fails(&env.call("getSection", json!({})).await, "VALIDATION");

    let merged = ok(env.call("updateSection", json!({"pageSectionId": sid, "content": {"subheading": "Sub"}})).await);
    assert_eq!(merged["item"]["content"], json!({"heading": "Hello", "subheading": "Sub"}));

    let image = env.store.images(&env.scope, None, 1, None).await.unwrap().items.remove(0);
    let attached = ok(env
        .call("updateSection", json!({"pageSectionId": sid, "imageId": image.id, "imageField": "backgroundImage"}))
        .await);
    assert_eq!(attached["item"]["content"]["backgroundImage"]["url"], image.url.as_str());
    assert_eq!(attached["item"]["content"]["backgroundImage"]["imageId"], image.id.as_str());

    let not_image = fails(
        &env.call("updateSection", json!({"pageSectionId": sid, "imageId": image.id, "imageField": "heading"})).await,
        "VALIDATION",
    );
    assert!(not_image.starts_with("imageField: \"heading\" is not an image field"), "{not_image}");
    assert!(not_image.contains("image fields of hero: backgroundImage"), "{not_image}");
    let no_field = fails(
        &env.call("updateSection", json!({"pageSectionId": sid, "imageId": image.id, "imageField": "photo"})).await,
        "VALIDATION",
    );
    assert!(no_field.starts_with("imageField: \"photo\" is not a field of hero"), "{no_field}");
    fails(&env.call("updateSection", json!({"pageSectionId": sid, "imageId": image.id})).await, "VALIDATION");
    fails(
        &env.call("updateSection", json!({"pageSectionId": sid, "imageId": "nope", "imageField": "backgroundImage"}))
            .await,
        "NOT_FOUND",
    );
}

#[tokio::test]
async fn images_get_create_update() {
    let env = Env::new().await;
    let found = ok(env.call("getImage", json!({"query": "team table"})).await);
    assert_eq!(found["count"], 1);
    assert_eq!(found["items"][0]["url"], format!("/uploads/{}/team-table.png", env.scope.site_id));
    assert_eq!(ok(env.call("getImage", json!({"query": "unicorn"})).await)["count"], 0);
    // Wildcards are never "anything": a query of them alone is refused,
    // and within words they are no syntax.
    for wildcard in ["%", "_", "%%", "\\"] {
        let err = fails(&env.call("getImage", json!({"query": wildcard})).await, "VALIDATION");
        assert_eq!(err, "query: has no letters or digits to search for", "{wildcard}");
    }
    assert_eq!(ok(env.call("getImage", json!({"query": "t_am"})).await)["count"], 0);
    assert_eq!(ok(env.call("getImage", json!({"all": true})).await)["count"], 4);
    fails(&env.call("getImage", json!({"id": "nope"})).await, "NOT_FOUND");

    // a file sent as data becomes an image, processing; the same bytes are deduplicated
    use base64::Engine as _;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let seeded = std::fs::read(env.dir.path().join(format!("uploads/{}/studio-desk.png", env.scope.site_id))).unwrap();
    let dedup = ok(env.call("createImage", json!({"data": b64(&seeded), "filename": "copy.png", "alt": "Copy"})).await);
    assert!(dedup["message"].as_str().unwrap().contains("already in the library"));
    let png = quire_media::samples::png(3, 2);
    let created = ok(env.call("createImage", json!({"data": b64(&png), "filename": "tiny.png", "alt": "Tiny"})).await);
    assert_eq!(created["item"]["width"], 3);
    assert_eq!(created["item"]["height"], 2);
    assert_eq!(created["item"]["filename"], "tiny.png");
    assert_eq!(created["item"]["status"], "processing");
    let text =
        fails(&env.call("createImage", json!({"data": b64(b"hello"), "filename": "notes.txt"})).await, "VALIDATION");
    assert_eq!(text, "data: the file is plain text; only PNG, JPEG, WebP and GIF images are accepted");
    fails(&env.call("createImage", json!({"uploadId": "nope"})).await, "NOT_FOUND");
    fails(&env.call("createImage", json!({"url": "/uploads/../quire.db"})).await, "NOT_FOUND");
    fails(&env.call("createImage", json!({"url": "https://example.com/a.png"})).await, "VALIDATION");

    let id = created["item"]["id"].as_str().unwrap();
    let updated = ok(env.call("updateImage", json!({"id": id, "alt": null, "tags": ["small"]})).await);
    assert!(updated["item"]["alt"].is_null());
    fails(&env.call("updateImage", json!({"id": id, "alt": "x".repeat(301)})).await, "VALIDATION");
}

#[tokio::test]
async fn posts_get_create_update() {
    let env = Env::new().await;
    let all = ok(env.call("getPost", json!({"all": true})).await);
    assert_eq!(all["count"], 4);
    assert_eq!(ok(env.call("getPost", json!({"all": true, "status": "draft"})).await)["count"], 1);
    let one = ok(env.call("getPost", json!({"slug": "hello-quire", "includeContent": true})).await);
    assert!(one["items"][0]["content"]["body"].as_str().unwrap().starts_with("# Hello"));
    let not_posts =
        fails(&env.call("getPost", json!({"all": true, "collectionSlug": "testimonials"})).await, "VALIDATION");
    assert_eq!(not_posts, "collectionSlug: testimonials holds entries, not posts");

    let created = ok(env
        .call("createPost", json!({"collectionSlug": "blog", "slug": "launch", "title": "Launch", "content": {"body": "We launched."}, "tags": ["news"]}))
        .await);
    assert_eq!(created["item"]["status"], "draft");
    let missing_body = fails(
        &env.call("createPost", json!({"collectionSlug": "blog", "slug": "x", "title": "X", "content": {}})).await,
        "VALIDATION",
    );
    assert_eq!(missing_body, "content.body: required");

    let covered = ok(env
        .call("updatePost", json!({"slug": "launch", "featuredImage": "/uploads/demo/hero-dawn.png", "content": {"cover": "/uploads/demo/hero-dawn.png"}}))
        .await);
    assert_eq!(covered["item"]["status"], "draft");
    assert_eq!(covered["item"]["content"]["body"], "We launched.");
    fails(&env.call("updatePost", json!({"slug": "launch", "status": "published"})).await, "VALIDATION");
    fails(&env.call("updatePost", json!({"slug": "nope", "title": "x"})).await, "NOT_FOUND");
}

#[tokio::test]
async fn nav_items_get_create_update() {
    let env = Env::new().await;
    let header = ok(env.call("getNavItem", json!({"navigationId": "header"})).await);
    assert_eq!(header["count"], 6);
    let contact = ok(env.call("getNavItem", json!({"label": "contact"})).await);
    assert_eq!(contact["count"], 2, "header and footer both link to contact");
    let in_footer = ok(env.call("getNavItem", json!({"label": "contact", "navigationId": "footer"})).await);
    assert_eq!(in_footer["count"], 1);
    assert_eq!(ok(env.call("getNavItem", json!({"all": true})).await)["count"], 10);
    // the seed's own form: every item of one navigation
    let seed_form = ok(env.call("getNavItem", json!({"navigationId": "header", "all": true})).await);
    assert_eq!(seed_form["items"], header["items"]);
    fails(&env.call("getNavItem", json!({"navigationId": "header", "all": true, "label": "x"})).await, "VALIDATION");
    fails(&env.call("getNavItem", json!({})).await, "VALIDATION");

    let pricing = env.page_id("pricing").await;
    let created = ok(env
        .call(
            "createNavItem",
            json!({"navigationId": "footer", "label": "Pricing", "targetType": "page", "targetId": pricing}),
        )
        .await);
    assert_eq!(created["item"]["sortOrder"], 4);
    let ghost = fails(
        &env.call(
            "createNavItem",
            json!({"navigationId": "footer", "label": "Ghost", "targetType": "page", "targetId": "nope"}),
        )
        .await,
        "VALIDATION",
    );
    assert_eq!(ghost, "targetId: page nope does not exist");
    let bad_type = fails(
        &env.call("createNavItem", json!({"navigationId": "footer", "label": "x", "targetType": "link"})).await,
        "VALIDATION",
    );
    assert_eq!(bad_type, "targetType: \"link\" is not one of page, entry, media, url, placeholder");

    let id = created["item"]["id"].as_str().unwrap();
    let hidden = ok(env.call("updateNavItem", json!({"id": id, "visible": false, "label": "Plans"})).await);
    assert_eq!(hidden["item"]["visible"], false);
    let to_url = fails(&env.call("updateNavItem", json!({"id": id, "targetType": "url"})).await, "VALIDATION");
    assert!(to_url.contains("url: required when targetType is url"), "{to_url}");
    ok(env.call("updateNavItem", json!({"id": id, "targetType": "url", "targetId": null, "url": "/pricing"})).await);
}

#[tokio::test]
async fn entries_get_create_update() {
    let env = Env::new().await;
    let list = ok(env.call("getEntry", json!({"all": true, "collectionId": "testimonials"})).await);
    assert_eq!(list["count"], 3);
    let need = fails(&env.call("getEntry", json!({"all": true})).await, "VALIDATION");
    assert_eq!(need, "collectionId: required with slug or all");
    let maya =
        ok(env.call("getEntry", json!({"slug": "maya", "collectionId": "testimonials", "includeContent": true})).await);
    assert_eq!(maya["items"][0]["content"]["rating"], 5);

    let created = ok(env
        .call("createEntry", json!({"collectionId": "testimonials", "slug": "lee", "title": "Lee", "content": {"quote": "Great.", "author": "Lee"}}))
        .await);
    let bad = fails(
        &env.call("createEntry", json!({"collectionId": "testimonials", "slug": "kim", "title": "Kim", "content": {"quote": "Hi", "author": "Kim", "rating": 9}})).await,
        "VALIDATION",
    );
    assert_eq!(bad, "content.rating: at most 5");
    let id = created["item"]["id"].as_str().unwrap();
    let updated = ok(env.call("updateEntry", json!({"id": id, "content": {"role": "CTO"}})).await);
    assert_eq!(updated["item"]["content"]["quote"], "Great.");
    assert_eq!(updated["item"]["content"]["role"], "CTO");
    fails(&env.call("updateEntry", json!({"id": id, "slug": "maya"})).await, "CONFLICT");
}

#[tokio::test]
async fn default_tools() {
    let env = Env::new().await;
    let ack = ok(env.call("acknowledgeRequest", json!({"message": "You want a pricing page."})).await);
    assert_eq!(ack["message"], "You want a pricing page.");
    fails(&env.call("acknowledgeRequest", json!({"message": " "})).await, "VALIDATION");
    ok(env.call("finalAnswer", json!({"message": "Done."})).await);
    fails(&env.call("finalAnswer", json!({})).await, "VALIDATION");
    let found = ok(env.call("searchTools", json!({"query": "add a menu link", "limit": 3})).await);
    assert_eq!(found["count"], 3);
    assert_eq!(found["tools"][0]["name"], "createNavItem");
    fails(&env.call("searchTools", json!({"query": ""})).await, "VALIDATION");
    fails(&env.call("noSuchTool", json!({})).await, "NOT_FOUND");
}

#[tokio::test]
async fn every_mutation_is_logged_with_the_caller() {
    let env = Env::new().await;
    let ctx = env.agent("s-1", quire_tools::ApprovalPolicy::User);
    let created = ok(env.call_as(&ctx, "createPage", json!({"name": "Logged", "slug": "logged"})).await);
    let id = created["item"]["id"].as_str().unwrap();
    let filter = quire_store::ChangeFilter { entity_id: Some(id.to_string()), ..Default::default() };
    let changes = env.store.changes(&env.scope, &filter, 10, None).await.unwrap().items;
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].actor, "agent:editor");
    assert_eq!(changes[0].surface, quire_core::model::Surface::Agent);
    assert_eq!(changes[0].session_id.as_deref(), Some("s-1"));
    assert_eq!(changes[0].turn_id.as_deref(), Some("1"));
}

#[tokio::test]
async fn search_queries_are_bounded_and_activation_is_per_caller() {
    let env = Env::new().await;
    let long = "page ".repeat(100);
    let err = fails(&env.call("searchTools", json!({"query": long})).await, "VALIDATION");
    assert_eq!(err, "query: at most 300 characters");
    let agent = env.agent("chat-1", quire_tools::ApprovalPolicy::User);
    ok(env.call_as(&agent, "searchTools", json!({"query": "add a menu link", "limit": 2})).await);
    let key = quire_tools::defaults::session_key(&agent, "chat-1");
    assert_eq!(env.registry.activated(&key), ["createNavItem", "getNavItem"]);
    let mut other = agent.clone();
    other.actor = "agent:other".into();
    assert!(env.registry.activated(&quire_tools::defaults::session_key(&other, "chat-1")).is_empty());
}

#[tokio::test]
async fn names_titles_and_labels_refuse_characters_that_act_instead_of_showing() {
    let env = Env::new().await;
    let about = env.page_id("about").await;
    for (tool, args, field) in [
        ("createPage", json!({"name": "Evil\u{0}", "slug": "evil"}), "name"),
        ("updatePage", json!({"id": about, "name": "\u{1b}[2J\u{1b}[31mAbout"}), "name"),
        (
            "createPost",
            json!({"collectionSlug": "blog", "slug": "invoice", "title": "Invoice\u{202e}fdp.exe", "content": {"body": "x"}}),
            "title",
        ),
        (
            "createNavItem",
            json!({"navigationId": "header", "label": "Home\u{2066}", "targetType": "url", "url": "/"}),
            "label",
        ),
    ] {
        let err = fails(&env.call(tool, args).await, "VALIDATION");
        assert!(err.contains(field) && err.contains("U+"), "{tool}: {err}");
    }
    assert_eq!(env.store.page(&env.scope, &about).await.unwrap().name, "About", "nothing changed");
    assert!(env.store.page_by_slug(&env.scope, "evil").await.is_err());
}

#[tokio::test]
async fn names_titles_and_labels_refuse_characters_that_show_nothing() {
    let env = Env::new().await;
    let about = env.page_id("about").await;
    let home = env.page_id("home").await;
    for (tool, args, field, code) in [
        ("createPage", json!({"name": "Pricing\u{200b}", "slug": "pricing-2"}), "name", "U+200B"),
        ("updatePage", json!({"id": about, "name": "\u{feff}About"}), "name", "U+FEFF"),
        ("updatePage", json!({"id": about, "meta": {"title": "About\u{2060}us"}}), "meta.title", "U+2060"),
        (
            "createPost",
            json!({"collectionSlug": "blog", "slug": "prices", "title": "Pri\u{ad}cing", "content": {"body": "x"}}),
            "title",
            "U+00AD",
        ),
        (
            "createNavItem",
            json!({"navigationId": "header", "label": "Pricing\u{200f}", "targetType": "url", "url": "/pricing"}),
            "label",
            "U+200F",
        ),
        (
            "createSection",
            json!({"pageId": home, "templateKey": "hero",
                   "content": {"heading": "Hi", "cta": {"label": "Pricing\u{61c}", "href": "/pricing"}}}),
            "content.cta.label",
            "U+061C",
        ),
    ] {
        let err = fails(&env.call(tool, args).await, "VALIDATION");
        assert!(err.starts_with(&format!("{field}: contains an invisible character ({code})")), "{tool}: {err}");
    }
    assert_eq!(env.store.page(&env.scope, &about).await.unwrap().name, "About", "nothing changed");
    assert!(env.store.page_by_slug(&env.scope, "pricing-2").await.is_err());
    // Emoji sequences and the joiners of Persian spelling are what shows.
    ok(env.call("createPage", json!({"name": "👩‍💻 Team", "slug": "team-2"})).await);
    ok(env.call("updatePage", json!({"id": about, "name": "درباره\u{200c}ی ما"})).await);
}

#[tokio::test]
async fn a_link_a_browser_would_read_as_another_site_is_refused() {
    let env = Env::new().await;
    let home = env.page_id("home").await;
    // Browsers drop tabs and line breaks from URLs: "/\t/host" is "//host".
    for url in ["//evil.example/x", "/\t/evil.example", "/\n/evil.example", "javascript:alert(1)"] {
        let err = fails(
            &env.call(
                "createNavItem",
                json!({"navigationId": "header", "label": "Docs", "targetType": "url", "url": url}),
            )
            .await,
            "VALIDATION",
        );
        assert!(err.starts_with("url: ") && err.contains("must be a relative path"), "{url:?}: {err}");
        let err = fails(
            &env.call(
                "createSection",
                json!({"pageId": home, "templateKey": "hero", "content": {"heading": "Hi", "cta": {"href": url}}}),
            )
            .await,
            "VALIDATION",
        );
        assert!(err.starts_with("content.cta.href: "), "{url:?}: {err}");
    }
}

#[tokio::test]
async fn release_tools_decide_each_document_and_a_staging_agent_leaves_images_alone() {
    let env = Env::new().await;
    // An author may stage pages but not publish menus nor archive.
    let author = env.ctx(quire_core::access::Group::Author);
    let made = ok(env.call_as(&author, "createRelease", json!({"name": "Author's"})).await);
    let release = made["release"]["id"].as_str().unwrap().to_string();
    let add = |entity: &str, id: &str, action: &str| json!({"id": release, "add": [{"entity": entity, "id": id, "action": action}]});
    let menu = env.call_as(&author, "updateRelease", add("navigation", "footer", "publish")).await;
    let archive = env.call_as(&author, "updateRelease", add("page", "about", "archive")).await;
    let (menu, archive) = (fails(&menu, "FORBIDDEN"), fails(&archive, "FORBIDDEN"));
    assert!(!menu.is_empty() && !archive.is_empty());
    assert!(env.store.release(&env.scope, &release).await.unwrap().items.is_empty(), "nothing was staged");

    // An agent in release mode may read images but not change them.
    let mut agent = env.agent("s-9", quire_tools::ApprovalPolicy::User);
    agent.staging = Some(quire_store::Staging {
        release: "s-9.1".into(),
        name: "Staged".into(),
        scope: env.scope.clone(),
        actor: agent.actor.clone(),
        session_id: "s-9".into(),
        turn_id: "1".into(),
    });
    let image = env.store.images(&env.scope, None, 1, None).await.unwrap().items.remove(0);
    ok(env.call_as(&agent, "getImage", json!({"id": image.id})).await);
    let changed = env.call_as(&agent, "updateImage", json!({"id": image.id, "alt": "Staged alt"})).await;
    assert!(fails(&changed, "FORBIDDEN").contains("stages its work"), "{changed}");
    let published = env.call_as(&agent, "publishContent", json!({"entity": "page", "ids": ["about"]})).await;
    fails(&published, "FORBIDDEN");
}
