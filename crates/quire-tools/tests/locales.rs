//! The `locale` argument of the tools of pages, sections, posts, entries
//! and menus: the default locale (or none) answers as ever; another of the
//! site's locales reads the record with that locale's values laid over,
//! along its fallbacks, saying where each came from, and writes the
//! record's translation there, refusing fields that have one value in
//! every locale; an unknown locale is refused naming the site's.

mod common;
use common::{Env, fails, ok};
use quire_core::model::{ChangeContext, EntityKind, SiteLocale};
use serde_json::json;

/// The about page's sections: (id, template key), in page order.
async fn about_sections(env: &Env) -> Vec<(String, String)> {
    let about = env.page_id("about").await;
    let sections = env.store.sections(&env.scope, &about, 100, None).await.unwrap().items;
    sections.into_iter().map(|s| (s.id, s.template_key)).collect()
}

#[tokio::test]
async fn the_default_locale_or_none_answers_as_before_and_an_unknown_one_names_the_sites() {
    let env = Env::new().await;
    let about = env.page_id("about").await;
    for (tool, args) in [
        ("getPage", json!({ "slug": "about", "includeContent": true, "includeChildren": true })),
        ("getPage", json!({ "all": true })),
        ("getSection", json!({ "pageId": about, "includeContent": true })),
        ("getPost", json!({ "slug": "hello-quire", "includeContent": true })),
        ("getEntry", json!({ "collectionId": "testimonials", "all": true, "includeContent": true })),
        ("getNavItem", json!({ "navigationId": "header", "all": true })),
    ] {
        let plain = ok(env.call(tool, args.clone()).await);
        let mut in_english = args.clone();
        in_english["locale"] = json!("en");
        assert_eq!(ok(env.call(tool, in_english).await), plain, "{tool} in the default locale");
        for item in plain["items"].as_array().unwrap() {
            assert!(item.get("locale").is_none() && item.get("localeOf").is_none(), "{tool}: {item}");
        }
        let mut unknown = args.clone();
        unknown["locale"] = json!("fr");
        let refused = fails(&env.call(tool, unknown).await, "VALIDATION");
        assert_eq!(refused, "locale: fr is not one of the site's locales (en, de)", "{tool}");
    }
    let refused =
        fails(&env.call("updatePage", json!({ "id": about, "name": "À propos", "locale": "fr" })).await, "VALIDATION");
    assert!(refused.contains("(en, de)"), "{refused}");
    let bad_tag = fails(&env.call("getPage", json!({ "id": about, "locale": "deutsch" })).await, "VALIDATION");
    assert!(bad_tag.starts_with("locale: deutsch"), "{bad_tag}");
    assert_eq!(env.store.translations(&env.scope, EntityKind::Page, &about).await.unwrap().translations.len(), 0);

    // Which locales a record has is said on a site of several, and only there.
    let two = ok(env.call("getPage", json!({ "id": about })).await);
    assert_eq!(two["items"][0]["locales"]["missing"], json!(["de"]));
    let english = vec![SiteLocale { tag: "en".into(), fallback: None, is_default: true }];
    env.store.set_site_locales(&env.scope.site_id, english).await.unwrap();
    let one = ok(env.call("getPage", json!({ "id": about })).await);
    assert!(one["items"][0].get("locales").is_none(), "{one}");
    let refused = fails(&env.call("getPage", json!({ "id": about, "locale": "de" })).await, "VALIDATION");
    assert_eq!(refused, "locale: de is not one of the site's locales (en)");
}

#[tokio::test]
async fn a_page_written_in_german_reads_back_in_german_and_its_default_is_untouched() {
    let env = Env::new().await;
    let about = env.page_id("about").await;
    let sections = about_sections(&env).await;
    let (text, image_text) = (&sections[0].0, &sections[1].0);
    assert_eq!((sections[0].1.as_str(), sections[1].1.as_str()), ("text", "image-text"));

    // Fields with one value in every locale are refused, naming them; nothing is written.
    let stray = fails(
        &env.call(
            "updatePage",
            json!({ "id": about, "locale": "de", "name": "Über uns", "isProtected": true, "sortOrder": 3 }),
        )
        .await,
        "VALIDATION",
    );
    assert!(stray.starts_with("locale de: isProtected, sortOrder are not localised"), "{stray}");
    assert!(stray.contains("name, slug, meta"), "{stray}");
    let image = fails(
        &env.call(
            "updateSection",
            json!({ "pageSectionId": image_text, "locale": "de", "content": { "heading": "Wo", "imagePosition": "left" } }),
        )
        .await,
        "VALIDATION",
    );
    assert!(image.contains("content.imagePosition is not localised"), "{image}");
    assert!(image.contains("template image-text: heading, body"), "{image}");
    let hidden = fails(
        &env.call("updateSection", json!({ "pageSectionId": text, "locale": "de", "hidden": true })).await,
        "VALIDATION",
    );
    assert!(hidden.contains("hidden is not localised"), "{hidden}");
    assert!(env.store.translations(&env.scope, EntityKind::Page, &about).await.unwrap().translations.is_empty());

    // Written in German: a draft translation, read back in German.
    let written = ok(env
        .call(
            "updatePage",
            json!({ "id": about, "locale": "de", "name": "Über uns", "slug": "ueber-uns", "meta": { "title": "Über uns" } }),
        )
        .await);
    let item = &written["item"];
    assert_eq!(
        (item["name"].as_str(), item["slug"].as_str(), item["locale"].as_str()),
        (Some("Über uns"), Some("ueber-uns"), Some("de"))
    );
    assert_eq!(item["meta"]["title"], "Über uns");
    assert_eq!(item["localeOf"], json!({ "name": "de", "slug": "de", "meta": "de" }));
    assert_eq!(
        (item["translation"]["locale"].as_str(), item["translation"]["status"].as_str()),
        (Some("de"), Some("draft"))
    );
    let section = ok(env
        .call(
            "updateSection",
            json!({ "pageSectionId": text, "locale": "de", "content": { "heading": "Unsere Geschichte" } }),
        )
        .await);
    assert_eq!(section["item"]["content"]["heading"], "Unsere Geschichte");
    assert_eq!(section["item"]["localeOf"]["content.heading"], "de");
    assert_eq!(section["item"]["localeOf"]["content.body"], "en", "not translated: the default's");
    assert!(section["item"]["content"]["body"].as_str().unwrap().starts_with("Quire started"));

    // The record's own values are the default locale's, unchanged.
    let own = env.store.page(&env.scope, &about).await.unwrap();
    assert_eq!((own.name.as_str(), own.slug.as_str()), ("About", "about"));
    let plain = ok(env.call("getPage", json!({ "id": about, "includeContent": true })).await);
    assert_eq!(plain["items"][0]["name"], "About");
    assert_eq!(plain["items"][0]["sections"][0]["content"]["heading"], "Our story");

    // Read in German, by its German slug: the page and its sections.
    let german = ok(env.call("getPage", json!({ "slug": "ueber-uns", "locale": "de", "includeContent": true })).await);
    let page = &german["items"][0];
    assert_eq!((page["id"].as_str(), page["name"].as_str()), (Some(about.as_str()), Some("Über uns")));
    assert_eq!(page["sections"][0]["content"]["heading"], "Unsere Geschichte");
    assert_eq!(page["sections"][1]["content"]["heading"], "Where we work");
    assert_eq!(page["sections"][1]["localeOf"]["content.heading"], "en");
    assert!(page["publication"].is_object(), "where the page itself stands: {page}");
    assert_eq!(
        page["locales"],
        json!({ "default": "en", "translated": ["de"], "published": [], "missing": [], "stale": [] })
    );
    let light = ok(env.call("getSection", json!({ "pageId": about, "locale": "de" })).await);
    assert_eq!(light["items"][0]["heading"], "Unsere Geschichte", "the heading of a light read too");
    fails(&env.call("getPage", json!({ "slug": "ueber-uns" })).await, "NOT_FOUND");

    // The English changes after: the German is stale.
    ok(env.call("updatePage", json!({ "id": about, "name": "About us" })).await);
    let after = ok(env.call("getPage", json!({ "id": about })).await);
    assert_eq!(after["items"][0]["locales"]["stale"], json!(["de"]));
    assert_eq!(after["items"][0]["name"], "About us");
    let still = ok(env.call("getPage", json!({ "id": about, "locale": "de" })).await);
    assert_eq!(still["items"][0]["name"], "Über uns");

    // The translation's write is a change of its own, logged like any.
    let changes = env.store.translations(&env.scope, EntityKind::Page, &about).await.unwrap();
    assert_eq!(changes.translations[0].translation.version, 2, "written, then its section added");
}

#[tokio::test]
async fn a_locale_falls_back_along_its_chain_and_says_where_each_value_came_from() {
    let env = Env::new().await;
    let locales = vec![
        SiteLocale { tag: "en".into(), fallback: None, is_default: true },
        SiteLocale { tag: "de".into(), fallback: None, is_default: false },
        SiteLocale { tag: "de-AT".into(), fallback: Some("de".into()), is_default: false },
    ];
    env.store.set_site_locales(&env.scope.site_id, locales).await.unwrap();
    let about = env.page_id("about").await;
    ok(env.call("updatePage", json!({ "id": about, "locale": "de", "name": "Über uns" })).await);
    ok(env.call("updatePage", json!({ "id": about, "locale": "de-at", "slug": "ueber-uns-at" })).await);
    let austrian = ok(env.call("getPage", json!({ "id": about, "locale": "de-AT" })).await);
    let page = &austrian["items"][0];
    assert_eq!(
        (page["locale"].as_str(), page["name"].as_str(), page["slug"].as_str()),
        (Some("de-AT"), Some("Über uns"), Some("ueber-uns-at"))
    );
    assert_eq!(page["localeOf"], json!({ "name": "de", "slug": "de-AT" }));
    assert_eq!(page["locales"]["translated"], json!(["de", "de-AT"]));
    let german = ok(env.call("getPage", json!({ "id": about, "locale": "de" })).await);
    assert_eq!(german["items"][0]["localeOf"], json!({ "name": "de", "slug": "en" }));
    assert_eq!(german["items"][0]["slug"], "about");
}

#[tokio::test]
async fn posts_entries_and_menus_are_written_and_read_in_a_locale() {
    let env = Env::new().await;
    // A post: its title and body in German; its image has one value.
    let refused = fails(
        &env.call(
            "updatePost",
            json!({ "slug": "hello-quire", "locale": "de", "title": "Hallo", "featuredImage": null }),
        )
        .await,
        "VALIDATION",
    );
    assert!(refused.contains("featuredImage is not localised"), "{refused}");
    let cover = fails(
        &env.call(
            "updatePost",
            json!({ "slug": "hello-quire", "locale": "de", "content": { "cover": "/uploads/x.png" } }),
        )
        .await,
        "VALIDATION",
    );
    assert!(cover.contains("content.cover is not localised") && cover.contains("collection blog: body"), "{cover}");
    let post = ok(env
        .call(
            "updatePost",
            json!({ "slug": "hello-quire", "locale": "de", "title": "Hallo, Quire", "content": { "body": "Hallo." } }),
        )
        .await);
    assert_eq!(
        (post["item"]["title"].as_str(), post["item"]["content"]["body"].as_str()),
        (Some("Hallo, Quire"), Some("Hallo."))
    );
    let read = ok(env.call("getPost", json!({ "slug": "hello-quire", "locale": "de", "includeContent": true })).await);
    let item = &read["items"][0];
    assert_eq!((item["title"].as_str(), item["content"]["body"].as_str()), (Some("Hallo, Quire"), Some("Hallo.")));
    assert_eq!((item["localeOf"]["title"].as_str(), item["localeOf"]["slug"].as_str()), (Some("de"), Some("en")));
    assert_eq!(item["locales"]["translated"], json!(["de"]));
    let english = ok(env.call("getPost", json!({ "slug": "hello-quire", "includeContent": true })).await);
    assert_eq!(english["items"][0]["title"], "Hello, Quire");

    // An entry: its quote in German, its rating refused.
    let listed = ok(env.call("getEntry", json!({ "collectionId": "testimonials", "all": true })).await);
    let id = listed["items"][0]["id"].as_str().unwrap().to_string();
    let rating = fails(
        &env.call("updateEntry", json!({ "id": id, "locale": "de", "content": { "rating": 1 } })).await,
        "VALIDATION",
    );
    assert!(rating.contains("content.rating is not localised"), "{rating}");
    let status =
        fails(&env.call("updateEntry", json!({ "id": id, "locale": "de", "status": "draft" })).await, "VALIDATION");
    assert!(status.contains("status is not localised"), "{status}");
    ok(env
        .call("updateEntry", json!({ "id": id, "locale": "de", "slug": "zitat", "content": { "quote": "Sehr gut." } }))
        .await);
    let entry = ok(env
        .call(
            "getEntry",
            json!({ "slug": "zitat", "collectionId": "testimonials", "locale": "de", "includeContent": true }),
        )
        .await);
    let item = &entry["items"][0];
    assert_eq!((item["id"].as_str(), item["content"]["quote"].as_str()), (Some(id.as_str()), Some("Sehr gut.")));
    assert_eq!(item["localeOf"]["content.quote"], "de");
    assert_eq!(item["localeOf"]["content.author"], "en");
    assert!(item["content"]["rating"].is_number(), "one value in every locale");

    // A menu item: its label in German, nothing else.
    let header = ok(env.call("getNavItem", json!({ "navigationId": "header", "all": true })).await);
    let about_item = header["items"].as_array().unwrap().iter().find(|i| i["label"] == "About").unwrap();
    let about_item = about_item["id"].as_str().unwrap().to_string();
    let url = fails(
        &env.call("updateNavItem", json!({ "id": about_item, "locale": "de", "label": "Über uns", "visible": false }))
            .await,
        "VALIDATION",
    );
    assert!(url.contains("visible is not localised") && url.contains("label"), "{url}");
    ok(env.call("updateNavItem", json!({ "id": about_item, "locale": "de", "label": "Über uns" })).await);
    let german = ok(env.call("getNavItem", json!({ "navigationId": "header", "all": true, "locale": "de" })).await);
    for item in german["items"].as_array().unwrap() {
        let translated = item["id"] == about_item.as_str();
        assert_eq!(item["label"] == "Über uns", translated, "{item}");
        assert_eq!(item["localeOf"]["label"], if translated { "de" } else { "en" }, "{item}");
    }
    let plain = env.store.nav_item(&env.scope, &about_item).await.unwrap();
    assert_eq!(plain.label, "About");
}

#[tokio::test]
async fn a_record_created_in_a_locale_has_its_translation_there() {
    let env = Env::new().await;
    let created = ok(env.call("createPage", json!({ "name": "Karriere", "slug": "karriere", "locale": "de" })).await);
    let id = created["item"]["id"].as_str().unwrap().to_string();
    assert_eq!(created["item"]["translation"]["status"], "draft");
    let read = ok(env.call("getPage", json!({ "id": id })).await);
    assert_eq!(read["items"][0]["locales"]["translated"], json!(["de"]));
    assert_eq!(read["items"][0]["locales"]["stale"], json!([]));

    let about = env.page_id("about").await;
    let (image_text, _) = about_sections(&env).await.remove(1);
    let image = env.store.section(&env.scope, &image_text).await.unwrap().content["image"].clone();
    let section = ok(env
        .call(
            "createSection",
            json!({ "pageId": about, "templateKey": "image-text", "locale": "de",
                    "content": { "heading": "Neu", "body": "Text.", "image": image, "imagePosition": "left" } }),
        )
        .await);
    let section_id = section["item"]["pageSectionId"].as_str().unwrap().to_string();
    let t = env.store.translations_in(&env.scope, &about, &["de".to_string()]).await.unwrap();
    assert_eq!(t[0].fields["sections"][&section_id], json!({ "heading": "Neu", "body": "Text." }), "its words only");
    let later = ok(env
        .call("getSection", json!({ "pageSectionId": section_id, "locale": "de", "includeContent": true }))
        .await);
    assert_eq!(later["items"][0]["localeOf"]["content.heading"], "de");

    let item = ok(env
        .call("createNavItem", json!({ "navigationId": "footer", "label": "Impressum", "targetType": "url", "url": "/impressum", "locale": "de" }))
        .await);
    assert_eq!(item["item"]["localeOf"]["label"], "de");
    let entry = ok(env
        .call(
            "createEntry",
            json!({ "collectionId": "testimonials", "slug": "neu", "title": "Neu", "locale": "de",
                                      "content": { "quote": "Gut.", "author": "Anna", "rating": 4 } }),
        )
        .await);
    let entry_id = entry["item"]["id"].as_str().unwrap();
    let t = env.store.translations_in(&env.scope, entry_id, &["de".to_string()]).await.unwrap();
    assert_eq!(t[0].fields["content"], json!({ "quote": "Gut.", "author": "Anna" }));
}

#[tokio::test]
async fn an_agent_turn_writing_in_german_is_undone_with_its_translation() {
    let env = Env::new().await;
    let about = env.page_id("about").await;
    let agent = env.agent("s-locale", quire_tools::ApprovalPolicy::User);
    ok(env.call_as(&agent, "updatePage", json!({ "id": about, "locale": "de", "name": "Über uns" })).await);
    let read = ok(env.call("getPage", json!({ "id": about, "locale": "de" })).await);
    assert_eq!(read["items"][0]["name"], "Über uns");
    let report = env.store.undo_turn(&ChangeContext::system(), &env.scope, "s-locale", "1").await.unwrap();
    assert!(!report.reverted.is_empty(), "{report:?}");
    let undone = ok(env.call("getPage", json!({ "id": about, "locale": "de" })).await);
    assert_eq!(undone["items"][0]["name"], "About", "the translation is gone: {undone}");
    assert_eq!(undone["items"][0]["localeOf"]["name"], "en");
    assert_eq!(undone["items"][0]["locales"]["missing"], json!(["de"]));
}

/// Whether the page's German translation is published; `None` without one.
async fn german(env: &Env, page: &str) -> Option<bool> {
    let all = env.store.translations(&env.scope, EntityKind::Page, page).await.unwrap();
    all.translations.into_iter().find(|t| t.translation.locale == "de").map(|t| t.published)
}

#[tokio::test]
async fn a_translation_is_published_and_taken_off_through_the_publishing_tools_once_a_person_approves() {
    let env = Env::new().await;
    let about = env.page_id("about").await;
    // Nothing to publish in German yet: named, with what to do.
    let none = fails(
        &env.call("publishContent", json!({ "entity": "page", "ids": ["about"], "locale": "de" })).await,
        "VALIDATION",
    );
    assert!(none.contains("about has no translation into de"), "{none}");
    ok(env.call("updatePage", json!({ "id": about, "locale": "de", "name": "Über uns", "slug": "ueber-uns" })).await);
    assert_eq!(german(&env, &about).await, Some(false), "a written translation is a draft");

    // The preview names the translation and changes nothing; a person approves.
    let preview = ok(env.call("publishContent", json!({ "entity": "page", "ids": ["about"], "locale": "de" })).await);
    assert_eq!(preview["requiresConfirmation"], true, "{preview}");
    assert_eq!(preview["items"][0]["entity"], "translation", "{preview}");
    assert_eq!(german(&env, &about).await, Some(false));
    let id = preview["confirmationId"].as_str().unwrap().to_string();
    env.registry.approve(&env.ctx(quire_core::access::Group::Editor), &id).await.unwrap();
    let args = json!({ "entity": "page", "ids": ["about"], "locale": "de", "confirmationId": id });
    ok(env.call("publishContent", args).await);
    assert_eq!(german(&env, &about).await, Some(true));
    // The page's own (English) publication did not move with it.
    let page = env.store.publication(&env.scope, EntityKind::Page, &about).await.unwrap();
    assert!(page.published && !page.changed, "{page:?}");

    // Taken off in German alone, the same way.
    let preview = ok(env.call("unpublishContent", json!({ "entity": "page", "ids": [about], "locale": "de" })).await);
    let id = preview["confirmationId"].as_str().unwrap().to_string();
    env.registry.approve(&env.ctx(quire_core::access::Group::Editor), &id).await.unwrap();
    ok(env
        .call("unpublishContent", json!({ "entity": "page", "ids": [about], "locale": "de", "confirmationId": id }))
        .await);
    assert_eq!(german(&env, &about).await, Some(false));
    assert!(env.store.publication(&env.scope, EntityKind::Page, &about).await.unwrap().published);
    // A locale the site lacks is refused naming the site's.
    let unknown = fails(
        &env.call("publishContent", json!({ "entity": "page", "ids": [about], "locale": "fr" })).await,
        "VALIDATION",
    );
    assert!(unknown.contains("not one of the site's locales"), "{unknown}");
}

#[tokio::test]
async fn a_release_made_by_the_tools_carries_a_translation_published_once_a_person_approves() {
    let env = Env::new().await;
    let about = env.page_id("about").await;
    ok(env.call("updatePage", json!({ "id": about, "locale": "de", "name": "Über uns", "slug": "ueber-uns" })).await);
    let made = ok(env.call("createRelease", json!({ "name": "German launch" })).await);
    let release = made["release"]["id"].as_str().unwrap().to_string();
    let add = |locale: &str| json!({ "id": release, "add": [{ "entity": "page", "id": "about", "locale": locale }] });
    let refused = fails(&env.call("updateRelease", add("fr")).await, "VALIDATION");
    assert!(refused.contains("locale: fr is not one of the site's locales"), "{refused}");
    let staged = ok(env.call("updateRelease", add("de")).await);
    let items = &staged["release"]["items"];
    assert_eq!((items[0]["entity"].as_str(), items[0]["locale"].as_str()), (Some("page"), Some("de")), "{staged}");

    // The publish previews the German translation alone, and runs once approved.
    let preview = ok(env.call("publishRelease", json!({ "id": release })).await);
    assert_eq!(preview["requiresConfirmation"], true, "{preview}");
    assert!(preview["message"].as_str().unwrap().contains("about (de)"), "{preview}");
    assert_eq!(german(&env, &about).await, Some(false));
    let id = preview["confirmationId"].as_str().unwrap().to_string();
    env.registry.approve(&env.ctx(quire_core::access::Group::Editor), &id).await.unwrap();
    ok(env.call("publishRelease", json!({ "id": release, "confirmationId": id })).await);
    assert_eq!(german(&env, &about).await, Some(true));
    assert!(env.store.publication(&env.scope, EntityKind::Page, &about).await.unwrap().published);

    // Out of another release by its page and locale.
    let other = ok(env.call("createRelease", json!({ "name": "Again" })).await);
    let other = other["release"]["id"].as_str().unwrap().to_string();
    ok(env
        .call("updateRelease", json!({ "id": other, "add": [{ "entity": "page", "id": about, "locale": "de" }] }))
        .await);
    let removed = ok(env
        .call("updateRelease", json!({ "id": other, "remove": [{ "entity": "page", "id": about, "locale": "de" }] }))
        .await);
    assert_eq!(removed["release"]["items"], json!([]), "{removed}");
}
