//! Locales over REST: a site's languages set by its admins (bad tags,
//! circles and a new default refused), a page translated as a draft then
//! published on its own, delivery by `?locale=` and `Accept-Language` with
//! the fallback chain and the locale of each value, paths by localised
//! slugs, stale translations, a locale taken away and brought back with
//! its translations, and a page's archive taking its translations along;
//! the tools in a locale over REST and in an agent's turn, whose German
//! translation is logged, read back, published on its own and undone;
//! entry lists delivered in a locale, an entry by its localised slug, and
//! the content searched in each language by the stems of that language.

mod common;

use axum::body::Body;
use axum::http::Request;
use common::TestApp;
use quire_agent::testing::{openai_stream, serve};
use serde_json::{Value, json};

async fn set_locales(app: &TestApp, locales: Value) -> common::Reply {
    app.send("PUT", "/api/v1/locales", Some(&app.admin), Some(json!({ "locales": locales }))).await
}

fn german() -> Value {
    json!([
        { "tag": "en", "isDefault": true },
        { "tag": "de", "isDefault": false },
        { "tag": "de-AT", "fallback": "de", "isDefault": false },
    ])
}

/// The delivered page `slug` in `locale` (none: no `?locale=`), with an
/// `Accept-Language` header if given: status, body and `Vary`.
async fn delivered(app: &TestApp, slug: &str, locale: Option<&str>, accept: Option<&str>) -> (u16, Value, String) {
    let query = locale.map(|l| format!("?locale={l}")).unwrap_or_default();
    let mut req = Request::get(format!("/api/v1/delivery/pages/{slug}{query}"));
    if let Some(accept) = accept {
        req = req.header("accept-language", accept);
    }
    let raw = app.raw(req.body(Body::empty()).unwrap()).await;
    (raw.status, raw.json(), raw.header("vary").to_string())
}

#[tokio::test]
async fn a_site_has_locales_its_admins_set_and_bad_ones_are_refused_naming_the_field() {
    let app = TestApp::new().await;
    let listed = app.get("/api/v1/locales").await;
    assert_status!(listed, 200);
    assert_eq!(
        listed.body["items"],
        json!([{ "tag": "en", "fallback": null, "isDefault": true }, { "tag": "de", "fallback": null, "isDefault": false }]),
        "the demo site is in English and German"
    );

    let by_editor = app.send("PUT", "/api/v1/locales", Some(&app.editor), Some(json!({ "locales": german() }))).await;
    assert_status!(by_editor, 403);
    let bad =
        set_locales(&app, json!([{ "tag": "en", "isDefault": true }, { "tag": "deutsch", "isDefault": false }])).await;
    assert_eq!((bad.status.as_u16(), bad.body["field"].as_str()), (422, Some("locales.1.tag")), "{}", bad.body);
    let circle = set_locales(
        &app,
        json!([{ "tag": "en", "isDefault": true }, { "tag": "de", "fallback": "fr", "isDefault": false },
               { "tag": "fr", "fallback": "de", "isDefault": false }]),
    )
    .await;
    assert_status!(circle, 422);
    assert!(circle.error().contains("circle"), "{}", circle.body);
    let moved =
        set_locales(&app, json!([{ "tag": "en", "isDefault": false }, { "tag": "de", "isDefault": true }])).await;
    assert_status!(moved, 422);
    assert!(moved.error().contains("stays en"), "{}", moved.body);
    assert_eq!(app.get("/api/v1/locales").await.body["count"], 2, "nothing changed");

    let set = set_locales(&app, german()).await;
    assert_status!(set, 200);
    let tags: Vec<&str> = set.body["items"].as_array().unwrap().iter().map(|l| l["tag"].as_str().unwrap()).collect();
    assert_eq!(tags, ["en", "de", "de-AT"]);
}

#[tokio::test]
async fn a_translated_page_is_drafted_published_and_delivered_by_locale_with_its_fallbacks() {
    let app = TestApp::new().await;
    assert_status!(set_locales(&app, german()).await, 200);
    let about = app.page_id("about").await;
    let sections = app.get(&format!("/api/v1/pages/{about}/sections")).await;
    let section = sections.body["items"][0]["id"].as_str().unwrap().to_string();
    let template = sections.body["items"][0]["templateKey"].as_str().unwrap().to_string();
    assert_eq!(template, "text", "{}", sections.body);

    // Bad translations change nothing and name what is wrong.
    let put = |locale: &str, fields: Value| {
        let path = format!("/api/v1/pages/{about}/translations/{locale}");
        let app = &app;
        async move { app.send("PUT", &path, Some(&app.editor), Some(json!({ "fields": fields }))).await }
    };
    let stray = put("de", json!({ "isProtected": true })).await;
    assert_eq!(
        (stray.status.as_u16(), stray.body["field"].as_str()),
        (422, Some("fields.isProtected")),
        "{}",
        stray.body
    );
    let french = put("fr", json!({ "name": "À propos" })).await;
    assert_eq!((french.status.as_u16(), french.body["field"].as_str()), (422, Some("locale")), "{}", french.body);
    assert!(french.error().contains("en, de, de-AT"), "{}", french.body);
    let english = put("en", json!({ "name": "About" })).await;
    assert_status!(english, 422);
    let unknown_field = put("de", json!({ "sections": { section.clone(): { "colour": "rot" } } })).await;
    assert_status!(unknown_field, 422);
    assert!(unknown_field.body["field"].as_str().unwrap().starts_with(&format!("fields.sections.{section}")));
    let viewer = app
        .send(
            "PUT",
            &format!("/api/v1/pages/{about}/translations/de"),
            Some(&app.viewer),
            Some(json!({ "fields": { "name": "Über uns" } })),
        )
        .await;
    assert_status!(viewer, 403);

    // A draft: the public site does not move.
    let fields = json!({
        "name": "Über uns",
        "slug": "ueber-uns",
        "meta": { "title": "Über uns" },
        "sections": { section.clone(): { "heading": "Wer wir sind" } },
    });
    let drafted = put("de", fields).await;
    assert_status!(drafted, 200);
    assert_eq!((drafted.body["status"].as_str(), drafted.body["locale"].as_str()), (Some("draft"), Some("de")));
    let translation = drafted.body["id"].as_str().unwrap().to_string();
    let (status, page, vary) = delivered(&app, "about", Some("de"), None).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(vary, "Accept-Language");
    assert_eq!((page["name"].as_str(), page["locale"].as_str()), (Some("About"), Some("de")), "{page}");
    assert_eq!(page["localeOf"]["name"], "en", "a draft is not delivered: the default's value");

    // Published on its own: the German page, its path and its section.
    let published = app.post(&format!("/api/v1/translations/{translation}/publish"), json!({})).await;
    assert_status!(published, 200);
    let (status, page, _) = delivered(&app, "about", Some("de"), None).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        (page["name"].as_str(), page["slug"].as_str(), page["path"].as_str()),
        (Some("Über uns"), Some("ueber-uns"), Some("/ueber-uns"))
    );
    let delivered_section = page["sections"].as_array().unwrap().iter().find(|s| s["id"] == section.as_str()).unwrap();
    assert_eq!(delivered_section["content"]["heading"], "Wer wir sind");
    assert!(delivered_section["content"]["body"].is_string(), "an untranslated value stays");
    assert_eq!(page["localeOf"]["name"], "de");
    assert_eq!(page["localeOf"][format!("sections.{section}.heading")], "de");
    // By its German slug, and by Accept-Language: Austrian German falls back to German.
    let (status, by_slug, _) = delivered(&app, "ueber-uns", Some("de"), None).await;
    assert_eq!((status, by_slug["id"].as_str()), (200, Some(about.as_str())));
    let (_, austrian, _) = delivered(&app, "about", None, Some("de-AT, en;q=0.5")).await;
    assert_eq!((austrian["locale"].as_str(), austrian["name"].as_str()), (Some("de-AT"), Some("Über uns")));
    assert_eq!(austrian["localeOf"]["name"], "de", "de-AT has none: its fallback's");
    // Without a locale, or asking for the default: the page as it was.
    let (_, plain, _) = delivered(&app, "about", None, None).await;
    assert_eq!(plain["name"], "About");
    assert!(plain.get("locale").is_none() && plain.get("localeOf").is_none(), "{plain}");
    let (_, english, _) = delivered(&app, "about", None, Some("en-GB")).await;
    assert_eq!(english["name"], "About");
    let (status, unknown, _) = delivered(&app, "about", Some("fr"), None).await;
    assert_eq!((status, unknown["field"].as_str()), (422, Some("locale")), "{unknown}");
    // The header menu in German: the translated label, and the link by the German slug.
    let header = app.get("/api/v1/navigations/header/items?limit=100").await;
    let item = header.body["items"].as_array().unwrap().iter().find(|i| i["targetId"] == about.as_str()).unwrap();
    let item = item["id"].as_str().unwrap().to_string();
    let header_id = app.get("/api/v1/navigations/header").await.body["id"].as_str().unwrap().to_string();
    let labelled = app
        .send(
            "PUT",
            &format!("/api/v1/navigations/{header_id}/translations/de"),
            Some(&app.editor),
            Some(json!({ "fields": { "items": { item.clone(): { "label": "Über uns" } } }, "publish": true })),
        )
        .await;
    assert_status!(labelled, 200);
    let menu = app.send("GET", "/api/v1/delivery/navigations/header?locale=de-AT", None, None).await;
    assert_status!(menu, 200);
    let items = menu.body["items"].as_array().unwrap();
    let about_item = items.iter().find(|i| i["id"] == item.as_str()).unwrap();
    assert_eq!((about_item["label"].as_str(), about_item["href"].as_str()), (Some("Über uns"), Some("/ueber-uns")));
    assert_eq!(about_item["labelLocale"], "de");
    let home_item = items.iter().find(|i| i["href"] == "/").unwrap();
    assert_eq!((home_item["label"].as_str(), home_item["labelLocale"].as_str()), (Some("Home"), Some("en")));
    assert_eq!(menu.body["locale"], "de-AT");
    let bad_item = app
        .send(
            "PUT",
            &format!("/api/v1/navigations/{header_id}/translations/de"),
            Some(&app.editor),
            Some(json!({ "fields": { "items": { about.clone(): { "label": "Falsch" } } } })),
        )
        .await;
    assert_eq!(bad_item.body["field"], format!("fields.items.{about}"), "{}", bad_item.body);
    let plain_menu = app.send("GET", "/api/v1/delivery/navigations/header", None, None).await;
    assert!(plain_menu.body.get("locale").is_none() && plain_menu.body["items"][0].get("labelLocale").is_none());
    let entries = app.send("GET", "/api/v1/delivery/collections/blog/entries?locale=de", None, None).await;
    assert_status!(entries, 200);

    // Which locales it has, lacks and has gone stale.
    let listed = app.get(&format!("/api/v1/pages/{about}/translations")).await;
    assert_status!(listed, 200);
    assert_eq!(listed.body["missing"], json!(["de-AT"]));
    assert_eq!(listed.body["stale"], json!([]));
    assert_eq!(listed.body["translations"][0]["published"], true);
    assert_status!(app.patch(&format!("/api/v1/pages/{about}"), json!({ "name": "About us" })).await, 200);
    let listed = app.get(&format!("/api/v1/pages/{about}/translations")).await;
    assert_eq!(listed.body["stale"], json!(["de"]), "the English changed since");

    // Each write of a translation is in the change log.
    let changes = app.get("/api/v1/changes?limit=10").await;
    let kinds: Vec<&str> =
        changes.body["items"].as_array().unwrap().iter().filter_map(|c| c["entity"].as_str()).collect();
    assert!(kinds.contains(&"translation"), "{kinds:?}");

    // A locale taken away hides its translations; brought back, they return.
    assert_status!(set_locales(&app, json!([{ "tag": "en", "isDefault": true }])).await, 200);
    let (status, _, _) = delivered(&app, "about", Some("de"), None).await;
    assert_eq!(status, 422);
    assert_status!(set_locales(&app, german()).await, 200);
    let (_, back, _) = delivered(&app, "about", Some("de"), None).await;
    assert_eq!(back["name"], "Über uns");

    // The demo's home page is in German.
    let (_, home, _) = delivered(&app, "home", Some("de"), None).await;
    assert_eq!((home["name"].as_str(), home["path"].as_str()), (Some("Startseite"), Some("/")), "{home}");

    // The page archived takes its translation along.
    let archived = app.delete(&format!("/api/v1/pages/{about}")).await;
    assert_status!(archived, 200);
    let (status, _, _) = delivered(&app, "ueber-uns", Some("de"), None).await;
    assert_eq!(status, 404);
    assert_status!(app.get(&format!("/api/v1/pages/{about}/translations")).await, 404);
}

/// Calls tool `name` over REST as the editor: status and answer.
async fn invoke(app: &TestApp, name: &str, args: Value) -> (u16, Value) {
    let reply = app.send("POST", &format!("/api/v1/tools/{name}/invoke"), Some(&app.editor), Some(args)).await;
    (reply.status.as_u16(), reply.body)
}

#[tokio::test]
async fn the_tools_read_and_write_a_locale_and_an_agents_german_translation_is_undone() {
    let (fake, base) = serve().await;
    let app = TestApp::with_llm(&base).await;
    let about = app.page_id("about").await;
    let sections = app.get(&format!("/api/v1/pages/{about}/sections")).await;
    let section = sections.body["items"][0]["id"].as_str().unwrap().to_string();

    // Over REST: an unknown locale and a field with one value are 422s naming them.
    let (status, unknown) = invoke(&app, "getPage", json!({ "id": about, "locale": "fr" })).await;
    assert_eq!((status, unknown["errorCode"].as_str()), (422, Some("VALIDATION")), "{unknown}");
    assert!(unknown["error"].as_str().unwrap().contains("(en, de)"), "{unknown}");
    let (status, stray) = invoke(&app, "updatePage", json!({ "id": about, "locale": "de", "indexing": false })).await;
    assert_eq!(status, 422, "{stray}");
    assert!(stray["error"].as_str().unwrap().contains("indexing is not localised"), "{stray}");
    let (status, plain) = invoke(&app, "getPage", json!({ "id": about })).await;
    assert_eq!(status, 200);
    assert_eq!(plain["items"][0]["locales"]["missing"], json!(["de"]), "{plain}");

    // An agent's turn writes the page's German translation through the tools.
    let rename = json!({ "id": about, "locale": "de", "name": "Über uns", "slug": "ueber-uns" }).to_string();
    let heading =
        json!({ "pageSectionId": section, "locale": "de", "content": { "heading": "Wer wir sind" } }).to_string();
    fake.push(openai_stream("", &[("u1", "updatePage", &rename), ("u2", "updateSection", &heading)]));
    fake.push(openai_stream("Übersetzt.", &[]));
    let started = app.chat(&app.editor, json!({ "message": "translate About into German" })).await;
    assert_eq!(started.status, 202, "{}", started.body);
    let session = started.body["sessionId"].as_str().unwrap().to_string();
    app.sse(&format!("/api/v1/sessions/{session}/events"), &app.editor, None, "RUN_FINISHED").await;

    // Read back in German by the tools, and as the translations list it: a draft.
    let (_, german) =
        invoke(&app, "getPage", json!({ "slug": "ueber-uns", "locale": "de", "includeContent": true })).await;
    let page = &german["items"][0];
    assert_eq!((page["id"].as_str(), page["name"].as_str()), (Some(about.as_str()), Some("Über uns")), "{german}");
    assert_eq!(page["localeOf"]["name"], "de");
    assert_eq!(page["sections"][0]["content"]["heading"], "Wer wir sind");
    assert_eq!(page["locales"]["translated"], json!(["de"]));
    let listed = app.get(&format!("/api/v1/pages/{about}/translations")).await;
    let translation = &listed.body["translations"][0];
    assert_eq!(
        (translation["translation"]["status"].as_str(), translation["published"].as_bool()),
        (Some("draft"), Some(false))
    );
    let translation_id = translation["translation"]["id"].as_str().unwrap().to_string();
    let (_, english) = invoke(&app, "getPage", json!({ "id": about })).await;
    assert_eq!(english["items"][0]["name"], "About", "the default locale's values are untouched");
    let (_, public, _) = delivered(&app, "about", Some("de"), None).await;
    assert_eq!(public["name"], "About", "a draft is not delivered");
    // The change log says which locale changed, in the turn.
    let changes = app.get(&format!("/api/v1/changes?sessionId={session}&limit=10")).await;
    let logged: Vec<&Value> = changes.body["items"].as_array().unwrap().iter().collect();
    assert_eq!(logged.len(), 2, "{}", changes.body);
    for change in logged {
        let read = app.get(&format!("/api/v1/changes/{}", change["id"])).await;
        assert_status!(read, 200);
        let change = &read.body;
        assert_eq!(
            (change["entity"].as_str(), change["entityId"].as_str()),
            (Some("translation"), Some(translation_id.as_str()))
        );
        assert_eq!(change["after"]["locale"], "de", "{change}");
    }

    // Undone: the translation goes, the page and its English stay.
    let undo = app.send("POST", &format!("/api/v1/sessions/{session}/turns/1/undo"), Some(&app.editor), None).await;
    assert_eq!(undo.status, 200, "{}", undo.body);
    let (_, after) = invoke(&app, "getPage", json!({ "id": about, "locale": "de", "includeContent": true })).await;
    let page = &after["items"][0];
    assert_eq!((page["name"].as_str(), page["localeOf"]["name"].as_str()), (Some("About"), Some("en")), "{after}");
    assert_eq!(page["sections"][0]["content"]["heading"], "Our story");
    assert_eq!(page["locales"]["missing"], json!(["de"]));
    let (status, _) = invoke(&app, "getPage", json!({ "slug": "ueber-uns", "locale": "de" })).await;
    assert_eq!(status, 404, "its German slug went with it");
}

/// The delivered entries of the blog with `query` (`?…`), with an
/// `Accept-Language` header if given: status, body and `Vary`.
async fn delivered_entries(app: &TestApp, query: &str, accept: Option<&str>) -> (u16, Value, String) {
    let mut req = Request::get(format!("/api/v1/delivery/collections/blog/entries{query}"));
    if let Some(accept) = accept {
        req = req.header("accept-language", accept);
    }
    let raw = app.raw(req.body(Body::empty()).unwrap()).await;
    (raw.status, raw.json(), raw.header("vary").to_string())
}

/// The item of `list` with id `id`.
fn item<'a>(list: &'a Value, id: &str) -> &'a Value {
    list["items"].as_array().unwrap().iter().find(|e| e["id"] == id).unwrap_or_else(|| panic!("{id} in {list}"))
}

#[tokio::test]
async fn entries_are_delivered_in_a_locale_with_their_fallbacks_and_by_their_localised_slug() {
    let app = TestApp::new().await;
    assert_status!(set_locales(&app, german()).await, 200);
    let (status, plain, vary) = delivered_entries(&app, "", None).await;
    assert_eq!((status, vary.as_str()), (200, "Accept-Language"), "{plain}");
    let items = plain["items"].as_array().unwrap();
    let hello = items.iter().find(|e| e["slug"] == "hello-quire").expect("the demo's first post").clone();
    let id = hello["id"].as_str().unwrap().to_string();
    let other = plain["items"].as_array().unwrap().iter().find(|e| e["id"] != id.as_str()).unwrap().clone();
    let other_id = other["id"].as_str().unwrap().to_string();
    assert!(hello.get("locale").is_none() && hello.get("localeOf").is_none(), "without a locale, as before: {hello}");

    // Published in German: title, slug and body; the excerpt and the cover stay.
    let fields =
        json!({ "title": "Hallo, Quire", "slug": "hallo-quire", "content": { "body": "Ein **deutscher** Text." } });
    let put = app
        .send(
            "PUT",
            &format!("/api/v1/entries/{id}/translations/de"),
            Some(&app.admin),
            Some(json!({ "fields": fields, "publish": true })),
        )
        .await;
    assert_status!(put, 200);
    // Another entry's German is a draft: not delivered, but previewed.
    let draft = json!({ "title": "Nur ein Entwurf" });
    let put = app
        .send(
            "PUT",
            &format!("/api/v1/entries/{other_id}/translations/de"),
            Some(&app.admin),
            Some(json!({ "fields": draft })),
        )
        .await;
    assert_status!(put, 200);

    for (query, accept) in [("?locale=de-AT", None), ("", Some("de-AT, en;q=0.5"))] {
        let (status, list, vary) = delivered_entries(&app, query, accept).await;
        assert_eq!((status, vary.as_str()), (200, "Accept-Language"), "{list}");
        let german = item(&list, &id);
        assert_eq!(
            (german["title"].as_str(), german["slug"].as_str(), german["locale"].as_str()),
            (Some("Hallo, Quire"), Some("hallo-quire"), Some("de-AT")),
            "{german}"
        );
        assert_eq!(german["content"]["body"], "Ein **deutscher** Text.");
        assert_eq!(german["excerpt"], hello["excerpt"], "what the translation lacks is the default's");
        for (field, from) in [("title", "de"), ("slug", "de"), ("excerpt", "en"), ("content.body", "de")] {
            assert_eq!(german["localeOf"][field], from, "{field}: {german}");
        }
        if hello["content"].get("cover").is_some() {
            assert_eq!(german["content"]["cover"], hello["content"]["cover"], "an image has one value");
        }
        let untranslated = item(&list, &other_id);
        assert_eq!(untranslated["title"], other["title"], "a draft is not delivered");
        assert_eq!(
            (untranslated["localeOf"]["title"].as_str(), untranslated["locale"].as_str()),
            (Some("en"), Some("de-AT"))
        );
        assert_eq!(list["count"], plain["count"], "the same entries, in German");
    }
    let (_, previewed) = {
        let r = app
            .send("GET", "/api/v1/delivery/collections/blog/entries?preview=true&locale=de", Some(&app.admin), None)
            .await;
        (r.status, r.body)
    };
    assert_eq!(item(&previewed, &other_id)["title"], "Nur ein Entwurf", "a preview shows the draft");

    // One entry by its slug: the German one in German, its own otherwise.
    let (_, by_german, _) = delivered_entries(&app, "?slug=hallo-quire&locale=de", None).await;
    assert_eq!(by_german["count"], 1, "{by_german}");
    assert_eq!(
        (by_german["items"][0]["id"].as_str(), by_german["items"][0]["title"].as_str()),
        (Some(id.as_str()), Some("Hallo, Quire"))
    );
    let (_, by_own, _) = delivered_entries(&app, "?slug=hello-quire&locale=de", None).await;
    assert_eq!(
        (by_own["count"].as_u64(), by_own["items"][0]["slug"].as_str()),
        (Some(1), Some("hallo-quire")),
        "{by_own}"
    );
    let (_, in_english, _) = delivered_entries(&app, "?slug=hallo-quire", None).await;
    assert_eq!(in_english["count"], 0, "the German slug is not an English one: {in_english}");
    let (_, english, _) = delivered_entries(&app, "?slug=hello-quire", None).await;
    assert_eq!((english["count"].as_u64(), english["items"][0]["title"].as_str()), (Some(1), Some("Hello, Quire")));
    assert!(english["items"][0].get("localeOf").is_none());

    // Paged in a locale as without; a locale the site lacks is refused.
    let (_, first, _) = delivered_entries(&app, "?locale=de&limit=1", None).await;
    let cursor = first["nextCursor"].as_str().expect("more than one entry").to_string();
    let (_, second, _) = delivered_entries(&app, &format!("?locale=de&limit=1&cursor={cursor}"), None).await;
    assert_ne!(first["items"][0]["id"], second["items"][0]["id"]);
    assert_eq!(second["items"][0]["id"], plain["items"][1]["id"], "{second}");
    let (status, refused, _) = delivered_entries(&app, "?locale=fr", None).await;
    assert_eq!(status, 422, "{refused}");
    let (status, _, _) = app_missing(&app).await;
    assert_eq!(status, 404);
}

/// The entries of a collection the site lacks, in German.
async fn app_missing(app: &TestApp) -> (u16, Value, String) {
    let raw =
        app.raw(Request::get("/api/v1/delivery/collections/nope/entries?locale=de").body(Body::empty()).unwrap()).await;
    (raw.status, raw.json(), raw.header("vary").to_string())
}

#[tokio::test]
async fn content_is_searched_in_each_language_by_its_own_stems() {
    let app = TestApp::new().await;
    assert_status!(set_locales(&app, german()).await, 200);
    let page = app.post("/api/v1/pages", json!({ "name": "Homes", "slug": "homes" })).await;
    assert_status!(page, 201);
    let page = page.body["id"].as_str().unwrap().to_string();
    let section = app
        .post(
            &format!("/api/v1/pages/{page}/sections"),
            json!({ "templateKey": "text", "content": { "body": "Our houses stand by the sea." } }),
        )
        .await;
    assert_status!(section, 201);
    let section = section.body["id"].as_str().unwrap().to_string();
    let fields = json!({ "name": "Wohnen", "slug": "wohnen", "sections": { section: { "body": "Unsere Häuser stehen am Meer." } } });
    let put = app
        .send(
            "PUT",
            &format!("/api/v1/pages/{page}/translations/de"),
            Some(&app.editor),
            Some(json!({ "fields": fields })),
        )
        .await;
    assert_status!(put, 200);
    let post = app.get("/api/v1/delivery/collections/blog/entries?slug=hello-quire").await.body["items"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let fields = json!({ "title": "Hallo, Quire", "content": { "body": "Über Bäume und Wälder." } });
    let put = app
        .send(
            "PUT",
            &format!("/api/v1/entries/{post}/translations/de"),
            Some(&app.editor),
            Some(json!({ "fields": fields })),
        )
        .await;
    assert_status!(put, 200);

    let found = |tool: &'static str, args: Value| {
        let app = &app;
        async move {
            let (status, answer) = invoke(app, tool, args).await;
            assert_eq!(status, 200, "{answer}");
            answer["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["id"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        }
    };
    let german = found("getPage", json!({ "query": "Haus", "locale": "de" })).await;
    assert_eq!(german.first(), Some(&page), "Haus finds Häuser in German: {german:?}");
    assert!(
        found("getPage", json!({ "query": "Haus", "locale": "de-AT" })).await.contains(&page),
        "through the fallback"
    );
    assert!(!found("getPage", json!({ "query": "Haus" })).await.contains(&page), "not in English");
    assert!(found("getPage", json!({ "query": "house" })).await.contains(&page), "house finds houses in English");
    assert!(
        found("getPage", json!({ "query": "house", "locale": "de" })).await.contains(&page),
        "the page's own words too"
    );
    let (_, named) = invoke(&app, "getPage", json!({ "query": "Haus", "locale": "de" })).await;
    assert_eq!(named["items"][0]["name"], "Wohnen", "read in German: {named}");

    assert!(found("getPost", json!({ "query": "Baum", "locale": "de" })).await.contains(&post), "Baum finds Bäume");
    assert!(found("getEntry", json!({ "query": "Wald", "locale": "de" })).await.contains(&post), "Wald finds Wälder");
    assert!(!found("getEntry", json!({ "query": "Wald" })).await.contains(&post));
    let (status, refused) = invoke(&app, "getPage", json!({ "query": "Haus", "locale": "fr" })).await;
    assert_eq!(status, 422, "{refused}");
}

#[tokio::test]
async fn lists_show_the_records_not_translated_into_a_locale() {
    let app = TestApp::new().await;
    let slugs = |reply: &common::Reply| -> Vec<String> {
        reply.body["items"].as_array().unwrap().iter().map(|i| i["slug"].as_str().unwrap().to_string()).collect()
    };
    let all = slugs(&app.get("/api/v1/pages?limit=100").await);
    let missing = app.get("/api/v1/pages?missingLocale=de&limit=100").await;
    assert_status!(missing, 200);
    let missing = slugs(&missing);
    assert!(all.contains(&"home".to_string()) && !missing.contains(&"home".to_string()), "{missing:?}");
    assert_eq!(missing.len() + 1, all.len(), "only the demo's home page is in German: {missing:?}");
    // Translated (a draft is a translation), a page leaves the list.
    let about = app.page_id("about").await;
    let put = app
        .send(
            "PUT",
            &format!("/api/v1/pages/{about}/translations/de"),
            Some(&app.admin),
            Some(json!({ "fields": { "name": "Über uns" } })),
        )
        .await;
    assert_status!(put, 200);
    let now = slugs(&app.get("/api/v1/pages?missingLocale=de&limit=100").await);
    assert!(!now.contains(&"about".to_string()) && now.len() + 1 == missing.len(), "{now:?}");
    // Entries the same way; a locale nothing is translated into lists them all.
    let posts = slugs(&app.get("/api/v1/collections/blog/entries?limit=100").await);
    let untranslated = slugs(&app.get("/api/v1/collections/blog/entries?missingLocale=fr&limit=100").await);
    assert_eq!(untranslated, posts);
}

/// Three locales: English (the default), German, and French falling back
/// to German.
fn three() -> Value {
    json!([
        { "tag": "en", "isDefault": true },
        { "tag": "de", "isDefault": false },
        { "tag": "fr", "fallback": "de", "isDefault": false },
    ])
}

/// Writes the About page's translation into `locale` with `name` and
/// `slug`, published or a draft: its id.
async fn translate_about(
    app: &TestApp,
    about: &str,
    locale: &str,
    (name, slug): (&str, &str),
    publish: bool,
) -> String {
    let fields = json!({ "fields": { "name": name, "slug": slug }, "publish": publish });
    let put =
        app.send("PUT", &format!("/api/v1/pages/{about}/translations/{locale}"), Some(&app.editor), Some(fields)).await;
    assert_status!(put, 200);
    put.body["id"].as_str().unwrap().to_string()
}

/// The name of page `id` as the tools read it in `locale`.
async fn name_in(app: &TestApp, id: &str, locale: &str) -> String {
    let (status, read) = invoke(app, "getPage", json!({ "id": id, "locale": locale })).await;
    assert_eq!(status, 200, "{read}");
    read["items"][0]["name"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_revision_restored_in_one_locale_leaves_the_others_as_they_are() {
    let app = TestApp::new().await;
    assert_status!(set_locales(&app, three()).await, 200);
    let about = app.page_id("about").await;
    let german = translate_about(&app, &about, "de", ("Über uns", "ueber-uns"), true).await;
    translate_about(&app, &about, "fr", ("À propos", "a-propos"), true).await;
    translate_about(&app, &about, "de", ("Über uns heute", "ueber-uns-heute"), false).await;
    assert_status!(app.patch(&format!("/api/v1/pages/{about}"), json!({ "name": "About us" })).await, 200);

    // The German translation's first revision, brought back.
    let changes = app.get(&format!("/api/v1/changes?entity=translation&entityId={german}&limit=20")).await;
    assert_status!(changes, 200);
    let created = changes.body["items"].as_array().unwrap().iter().find(|c| c["action"] == "create").unwrap();
    let restored = app.post(&format!("/api/v1/changes/{}/restore", created["id"]), json!({})).await;
    assert_status!(restored, 200);
    assert_eq!(name_in(&app, &about, "de").await, "Über uns");
    // French and English keep what they had, and the public German stays published.
    assert_eq!(name_in(&app, &about, "fr").await, "À propos");
    assert_eq!(name_in(&app, &about, "en").await, "About us");
    let (_, public, _) = delivered(&app, "about", Some("de"), None).await;
    assert_eq!(public["name"], "Über uns", "{public}");
    let (_, french, _) = delivered(&app, "about", Some("fr"), None).await;
    assert_eq!((french["name"].as_str(), french["localeOf"]["name"].as_str()), (Some("À propos"), Some("fr")));

    // The restore is logged for the German translation alone, and undone in turn.
    let latest = app.get(&format!("/api/v1/changes?entity=translation&entityId={german}&limit=1")).await;
    let latest = &latest.body["items"][0];
    assert_ne!(latest["id"], created["id"]);
    let previous = app.get(&format!("/api/v1/changes?entity=translation&entityId={german}&limit=2")).await;
    let draft = &previous.body["items"][1];
    let back = app.post(&format!("/api/v1/changes/{}/restore", draft["id"]), json!({})).await;
    assert_status!(back, 200);
    assert_eq!(name_in(&app, &about, "de").await, "Über uns heute");
    assert_eq!(name_in(&app, &about, "fr").await, "À propos");
    assert_eq!(name_in(&app, &about, "en").await, "About us");
}

#[tokio::test]
async fn a_release_carries_a_page_in_three_locales_published_and_reverted_together() {
    let app = TestApp::new().await;
    assert_status!(set_locales(&app, three()).await, 200);
    let about = app.page_id("about").await;
    translate_about(&app, &about, "de", ("Über uns", "ueber-uns"), true).await;
    translate_about(&app, &about, "fr", ("À propos", "a-propos"), true).await;
    translate_about(&app, &about, "de", ("Wer wir sind", "wer-wir-sind"), false).await;
    translate_about(&app, &about, "fr", ("Qui sommes-nous", "qui-sommes-nous"), false).await;
    assert_status!(app.patch(&format!("/api/v1/pages/{about}"), json!({ "name": "About us" })).await, 200);

    let made = app.post("/api/v1/releases", json!({ "name": "Relaunch in three languages" })).await;
    assert_status!(made, 201);
    let release = made.body["id"].as_str().unwrap().to_string();
    let items = format!("/api/v1/releases/{release}/items");
    // What cannot go in is refused by name, and nothing is staged.
    let spanish = app.post(&items, json!({ "entity": "page", "id": "about", "locale": "es" })).await;
    assert_eq!((spanish.status.as_u16(), spanish.body["field"].as_str()), (422, Some("locale")), "{}", spanish.body);
    assert!(spanish.error().contains("en, de, fr"), "{}", spanish.body);
    let archive =
        app.post(&items, json!({ "entity": "page", "id": "about", "locale": "de", "action": "archive" })).await;
    assert_eq!((archive.status.as_u16(), archive.body["field"].as_str()), (422, Some("action")), "{}", archive.body);
    let contact = app.post(&items, json!({ "entity": "page", "id": "contact", "locale": "de" })).await;
    assert_eq!((contact.status.as_u16(), contact.body["field"].as_str()), (422, Some("locale")), "{}", contact.body);
    assert!(contact.error().contains("no de translation"), "{}", contact.body);
    assert_eq!(app.get(&format!("/api/v1/releases/{release}")).await.body["items"], json!([]));

    // The page, and its German and French translations, each one item.
    for locale in [None, Some("de"), Some("en"), Some("fr")] {
        let mut body = json!({ "entity": "page", "id": "about" });
        if let Some(locale) = locale {
            body["locale"] = json!(locale);
        }
        assert_status!(app.post(&items, body).await, 200);
    }
    let review = app.get(&format!("/api/v1/releases/{release}")).await;
    assert_status!(review, 200);
    let reviewed = review.body["items"].as_array().unwrap();
    let mut locales: Vec<Option<&str>> = reviewed.iter().map(|i| i["locale"].as_str()).collect();
    locales.sort();
    assert_eq!(locales, [None, Some("de"), Some("fr")], "the default locale is the page itself: {}", review.body);
    assert!(reviewed.iter().all(|i| i["entity"] == "page" && i["id"] == about.as_str()), "{}", review.body);
    let german = reviewed.iter().find(|i| i["locale"] == "de").unwrap();
    assert!(german["differences"].to_string().contains("Wer wir sind"), "{german}");
    assert!(german["conflict"].is_null(), "{german}");
    for (locale, name) in [("en", "About"), ("de", "Über uns"), ("fr", "À propos")] {
        let (_, public, _) = delivered(&app, "about", Some(locale), None).await;
        assert_eq!(public["name"], name, "nothing published while staged: {public}");
    }

    // Published together: every locale's new name is public at once.
    let published = app.post(&format!("/api/v1/releases/{release}/publish"), json!({})).await;
    assert_status!(published, 200);
    for (locale, name, path) in [
        ("en", "About us", "/about"),
        ("de", "Wer wir sind", "/wer-wir-sind"),
        ("fr", "Qui sommes-nous", "/qui-sommes-nous"),
    ] {
        let (status, public, _) = delivered(&app, "about", Some(locale), None).await;
        assert_eq!(status, 200, "{public}");
        assert_eq!((public["name"].as_str(), public["path"].as_str()), (Some(name), Some(path)), "{locale}: {public}");
    }

    // Reverted together: each locale shows again what it showed before.
    let reverted = app.post(&format!("/api/v1/releases/{release}/revert"), json!({})).await;
    assert_status!(reverted, 200);
    for (locale, name) in [("en", "About"), ("de", "Über uns"), ("fr", "À propos")] {
        let (_, public, _) = delivered(&app, "about", Some(locale), None).await;
        assert_eq!(public["name"], name, "{locale}: {public}");
    }

    // A translation is taken out of an open release by its document and locale.
    let other =
        app.post("/api/v1/releases", json!({ "name": "French only" })).await.body["id"].as_str().unwrap().to_string();
    let other_items = format!("/api/v1/releases/{other}/items");
    assert_status!(app.post(&other_items, json!({ "entity": "page", "id": "about", "locale": "fr" })).await, 200);
    let removed = app.delete(&format!("{other_items}/page/{about}?locale=fr")).await;
    assert_status!(removed, 200);
    assert_eq!(removed.body["items"], json!([]));
}

#[tokio::test]
async fn a_page_under_translated_ancestors_is_delivered_and_linked_by_their_localised_slugs() {
    let app = TestApp::new().await;
    assert_status!(set_locales(&app, german()).await, 200);
    let about = app.page_id("about").await;
    let made = app.post("/api/v1/pages", json!({"name": "Careers", "slug": "careers", "parentId": about})).await;
    assert_status!(made, 201);
    let careers = made.body["id"].as_str().unwrap().to_string();
    assert_status!(app.post(&format!("/api/v1/pages/{careers}/publish"), json!({})).await, 200);
    let item = json!({"label": "Careers", "targetType": "page", "targetId": careers});
    assert_status!(app.post("/api/v1/navigations/header/items", item).await, 201);
    assert_status!(app.post("/api/v1/navigations/header/publish", json!({})).await, 200);
    // The parent in German, published; the child's German a draft.
    let put = |id: &str, fields: Value, publish: bool| {
        let path = format!("/api/v1/pages/{id}/translations/de");
        let app = &app;
        async move { app.send("PUT", &path, Some(&app.admin), Some(json!({ "fields": fields, "publish": publish }))).await }
    };
    assert_status!(put(&about, json!({ "name": "Über uns", "slug": "ueber-uns" }), true).await, 200);
    assert_status!(put(&careers, json!({ "name": "Stellen", "slug": "stellen" }), false).await, 200);

    // Published: the child by its own slug under its parent's German one.
    let (status, page, _) = delivered(&app, "careers", Some("de-AT"), None).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!((page["name"].as_str(), page["path"].as_str()), (Some("Careers"), Some("/ueber-uns/careers")), "{page}");
    assert_eq!((page["localeOf"]["name"].as_str(), page["locale"].as_str()), (Some("en"), Some("de-AT")));
    let (status, _, _) = delivered(&app, "stellen", Some("de"), None).await;
    assert_eq!(status, 404, "a draft's slug is not published");
    let menu = app.send("GET", "/api/v1/delivery/navigations/header?locale=de", None, None).await;
    let href = |menu: &Value, label: &str| {
        menu["items"].as_array().unwrap().iter().find(|i| i["label"] == label).map(|i| i["href"].clone())
    };
    assert_eq!(href(&menu.body, "Careers"), Some(json!("/ueber-uns/careers")), "{}", menu.body);
    let plain = app.send("GET", "/api/v1/delivery/navigations/header", None, None).await;
    assert_eq!(href(&plain.body, "Careers"), Some(json!("/about/careers")), "{}", plain.body);

    // A preview shows the drafts: the child by its German slug, and linked by it.
    let preview =
        app.send("GET", "/api/v1/delivery/pages/stellen?preview=true&locale=de", Some(&app.admin), None).await;
    assert_status!(preview, 200);
    assert_eq!(
        (preview.body["id"].as_str(), preview.body["name"].as_str(), preview.body["path"].as_str()),
        (Some(careers.as_str()), Some("Stellen"), Some("/ueber-uns/stellen")),
        "{}",
        preview.body
    );
    let menu =
        app.send("GET", "/api/v1/delivery/navigations/header?preview=true&locale=de", Some(&app.admin), None).await;
    assert_eq!(href(&menu.body, "Careers"), Some(json!("/ueber-uns/stellen")), "{}", menu.body);
    // An unknown locale is refused in the menu as in the page.
    let unknown = app.send("GET", "/api/v1/delivery/navigations/header?locale=fr", None, None).await;
    assert_eq!((unknown.status.as_u16(), unknown.body["field"].as_str()), (422, Some("locale")), "{}", unknown.body);
}
