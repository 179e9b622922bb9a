//! Search of pages (with their sections), posts and entries: `query` on
//! getPage, getPost and getEntry, ranked by full text (stemmed, BM25) and,
//! with an embedding model, fused with vector similarity — through the fake
//! embeddings server with deterministic vectors. Archived records and other
//! sites' records are never found; bad queries are refused in the tool
//! error shape and change nothing.

mod common;

use common::TestApp;
use common::embeddings::{Fake, fake_server};
use quire_store::{SearchFilter, Searched};
use quire_tools::embed::{OpenAiEmbedder, SharedEmbedder, embed_notes, embed_pending};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;

async fn call(app: &TestApp, tool: &str, args: Value) -> Value {
    let r = app.post(&format!("/api/v1/tools/{tool}/invoke"), args).await;
    assert_eq!(r.status.as_u16(), 200, "{tool}: {}", r.body);
    r.body
}

async fn call_as(app: &TestApp, token: &str, tool: &str, args: Value) -> Value {
    let r = app.send("POST", &format!("/api/v1/tools/{tool}/invoke"), Some(token), Some(args)).await;
    assert_eq!(r.status.as_u16(), 200, "{tool}: {}", r.body);
    r.body
}

fn names(found: &Value, key: &str) -> Vec<String> {
    found["items"].as_array().unwrap().iter().map(|i| i[key].as_str().unwrap_or_default().to_string()).collect()
}

/// A page with one text section; answers its id and the section's id.
async fn page_with_text(app: &TestApp, token: &str, name: &str, slug: &str, body: &str) -> (String, String) {
    let page = call_as(app, token, "createPage", json!({"name": name, "slug": slug})).await;
    let id = page["item"]["id"].as_str().unwrap().to_string();
    let section = call_as(
        app,
        token,
        "createSection",
        json!({"pageId": id, "templateKey": "text", "content": {"heading": "More", "body": body}}),
    )
    .await;
    (id, section["item"]["pageSectionId"].as_str().unwrap().to_string())
}

/// An app that embeds through a fake embeddings server; answers the fake
/// (to count its calls), the embedder and the app.
async fn embedding_app() -> (Arc<Fake>, SharedEmbedder, TestApp) {
    let fake = Arc::new(Fake::default());
    let base = fake_server(Arc::clone(&fake)).await;
    let embedder: SharedEmbedder = Arc::new(OpenAiEmbedder::new(&base, None, "fake-embed").unwrap());
    let app = TestApp::build_with(|s| s.embedder = Some(Arc::clone(&embedder)), |s| s).await;
    (fake, embedder, app)
}

async fn post(app: &TestApp, slug: &str, title: &str, body: &str, tags: &[&str]) -> String {
    let made = call(
        app,
        "createPost",
        json!({"collectionSlug": "blog", "slug": slug, "title": title, "content": {"body": body}, "tags": tags}),
    )
    .await;
    made["item"]["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn full_text_alone_finds_stemmed_words_in_pages_sections_posts_and_entries() {
    let app = TestApp::new().await;
    page_with_text(&app, &app.admin, "Mountain sunset", "mountain-sunset", "Light on the ridge.").await;
    let (trips, section) = page_with_text(&app, &app.admin, "Trips", "trips", "Walks through the Dolomites.").await;
    post(&app, "mountain-sunset", "A mountain sunset", "We climbed before dawn.", &["hiking"]).await;
    post(&app, "city-lights", "City lights", "Neon and rain.", &["urban"]).await;

    // No embedding model: stemmed words ("mountains" → "mountain"), BM25.
    let found = call(&app, "getPage", json!({"query": "sunset over the mountains"})).await;
    assert_eq!(found["ranking"], "fulltext");
    assert_eq!(names(&found, "name")[0], "Mountain sunset", "{found}");
    let found = call(&app, "getPost", json!({"query": "sunset over the mountains"})).await;
    assert_eq!(found["ranking"], "fulltext");
    assert_eq!(names(&found, "title"), ["A mountain sunset"]);
    // Tags count; getEntry searches every collection unless narrowed.
    assert_eq!(names(&call(&app, "getPost", json!({"query": "hiking"})).await, "title"), ["A mountain sunset"]);
    let found = call(&app, "getEntry", json!({"query": "sunsets"})).await;
    assert_eq!(found["ranking"], "fulltext");
    assert_eq!(names(&found, "title"), ["A mountain sunset"]);
    let found = call(&app, "getEntry", json!({"query": "sunsets", "collectionId": "testimonials"})).await;
    assert_eq!(found["count"], 0, "{found}");
    // Filters narrow the ranked answer: the new post is a draft.
    assert_eq!(call(&app, "getPost", json!({"query": "sunset", "status": "published"})).await["count"], 0);

    // A section's text finds its page, and follows the section's changes.
    assert_eq!(names(&call(&app, "getPage", json!({"query": "dolomites"})).await, "name"), ["Trips"]);
    call(&app, "updateSection", json!({"pageSectionId": section, "content": {"body": "Beaches of the south."}})).await;
    assert_eq!(call(&app, "getPage", json!({"query": "dolomites"})).await["count"], 0);
    assert_eq!(names(&call(&app, "getPage", json!({"query": "beach"})).await, "name"), ["Trips"]);
    // A page's meta counts too.
    call(&app, "updatePage", json!({"id": trips, "meta": {"description": "Guided glacier tours"}})).await;
    assert_eq!(names(&call(&app, "getPage", json!({"query": "glaciers"})).await, "name"), ["Trips"]);

    // Archived: not found; restored: found again.
    let archived = app.delete(&format!("/api/v1/pages/{trips}")).await;
    assert_eq!(archived.status.as_u16(), 200, "{}", archived.body);
    assert_eq!(call(&app, "getPage", json!({"query": "glacier beach"})).await["count"], 0);
    let archive_id = archived.body["id"].as_str().unwrap();
    let restored = app.post(&format!("/api/v1/archive/{archive_id}/restore"), json!({})).await;
    assert_eq!(restored.status.as_u16(), 200, "{}", restored.body);
    assert_eq!(names(&call(&app, "getPage", json!({"query": "glacier"})).await, "name"), ["Trips"]);
    let city = call(&app, "getPost", json!({"query": "neon"})).await["items"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(app.delete(&format!("/api/v1/entries/{city}")).await.status.as_u16(), 200);
    assert_eq!(call(&app, "getPost", json!({"query": "neon city"})).await["count"], 0);
    assert_eq!(call(&app, "getEntry", json!({"query": "neon city"})).await["count"], 0);
}

#[tokio::test]
async fn another_sites_records_are_never_found() {
    let app = TestApp::new().await;
    page_with_text(&app, &app.other_admin, "Harbour nights", "harbour-nights", "Boats at the quay.").await;
    page_with_text(&app, &app.admin, "Harbour days", "harbour-days", "Ferries at noon.").await;
    let mine = call(&app, "getPage", json!({"query": "harbour"})).await;
    assert_eq!(names(&mine, "name"), ["Harbour days"]);
    let theirs = call_as(&app, &app.other_admin, "getPage", json!({"query": "harbour"})).await;
    assert_eq!(names(&theirs, "name"), ["Harbour nights"]);
    // Entries: the other site's blog holds a post with the same words.
    let blog = app
        .send(
            "POST",
            "/api/v1/collections",
            Some(&app.other_admin),
            Some(json!({"slug": "blog", "name": "Blog", "kind": "posts"})),
        )
        .await;
    assert!(blog.status.is_success(), "{}", blog.body);
    call_as(
        &app,
        &app.other_admin,
        "createPost",
        json!({"collectionSlug": "blog", "slug": "ferries", "title": "Ferries at noon", "content": {"body": "x"}}),
    )
    .await;
    assert_eq!(call(&app, "getPost", json!({"query": "ferries"})).await["count"], 0);
    assert_eq!(call(&app, "getEntry", json!({"query": "ferries"})).await["count"], 0);
    let theirs = call_as(&app, &app.other_admin, "getEntry", json!({"query": "ferries"})).await;
    assert_eq!(names(&theirs, "title"), ["Ferries at noon"]);
}

#[tokio::test]
async fn bad_queries_are_refused_in_the_tool_error_shape() {
    let app = TestApp::new().await;
    let home = call(&app, "getPage", json!({"slug": "home"})).await["items"][0]["id"].as_str().unwrap().to_string();
    let refused = [
        ("getPage", json!({"query": ""}), "query: is empty"),
        ("getPage", json!({"query": "   "}), "query: is empty"),
        ("getPost", json!({"query": "?!"}), "query: has no letters or digits to search for"),
        ("getEntry", json!({"query": ""}), "query: is empty"),
        ("getImage", json!({"query": ""}), "query: is empty"),
        ("getPage", json!({"query": "x".repeat(1001)}), "query: is 1001 characters long; the limit is 1000"),
        (
            "getPage",
            json!({"query": "home", "id": home}),
            "Provide only one of id, slug, query, parentId, all; got id and query",
        ),
        (
            "getEntry",
            json!({"query": "a", "slug": "b"}),
            "Provide only one of id, slug, query, all; got slug and query",
        ),
        ("getPost", json!({"query": 3}), "query"),
    ];
    for (tool, args, message) in refused {
        let r = app.post(&format!("/api/v1/tools/{tool}/invoke"), args.clone()).await;
        assert_eq!(r.status.as_u16(), 422, "{tool} {args}: {}", r.body);
        assert_eq!(r.body["success"], false);
        assert_eq!(r.body["errorCode"], "VALIDATION");
        assert!(r.body["error"].as_str().unwrap().contains(message), "{tool} {args}: {}", r.body);
        assert!(r.body["hint"].as_str().is_some_and(|h| !h.is_empty()));
    }
}

#[tokio::test]
async fn meaning_ranks_pages_and_posts_and_follows_their_changes() {
    let (fake, embedder, app) = embedding_app().await;
    let (alps, section) =
        page_with_text(&app, &app.admin, "Evening in the Alps", "alps-evening", "Light on the summit.").await;
    page_with_text(&app, &app.admin, "Our crew", "crew", "Who we are.").await;
    page_with_text(&app, &app.other_admin, "Twilight summit", "twilight-summit", "Dusk on the peaks.").await;
    post(&app, "shore", "The shore at sundown", "Waves.", &[]).await;
    post(&app, "desk", "A tidy desk", "Pens.", &[]).await;
    let first = embed_pending(&app.store, embedder.as_ref(), 100).await.unwrap();
    assert!(first >= 5, "{first}");
    assert_eq!(embed_pending(&app.store, embedder.as_ref(), 100).await.unwrap(), 0, "nothing left to embed");

    // No word of the query is in any of them: only the meaning matches.
    let words = app
        .store
        .search_ids(&app.scope, Searched::Page, "dusk on the peaks", &SearchFilter::default(), 10)
        .await
        .unwrap();
    assert!(words.is_empty(), "{words:?}");
    let found = call(&app, "getPage", json!({"query": "dusk on the peaks"})).await;
    assert_eq!(found["ranking"], "hybrid");
    assert_eq!(names(&found, "name"), ["Evening in the Alps"], "the other site's page is not found");
    let found = call(&app, "getPost", json!({"query": "sunset by the sea"})).await;
    assert_eq!(found["ranking"], "hybrid");
    assert_eq!(names(&found, "title")[0], "The shore at sundown");
    let found = call(&app, "getEntry", json!({"query": "office", "collectionId": "blog"})).await;
    assert_eq!(names(&found, "title"), ["A tidy desk"]);
    assert_eq!(call(&app, "getEntry", json!({"query": "office", "collectionId": "testimonials"})).await["count"], 0);
    let theirs = call_as(&app, &app.other_admin, "getPage", json!({"query": "sunset in the mountains"})).await;
    assert_eq!(names(&theirs, "name"), ["Twilight summit"]);

    let found = names(&call(&app, "getPage", json!({"query": "people"})).await, "name");
    assert!(!found.contains(&"Evening in the Alps".to_string()), "{found:?}");
    // A section's change embeds its page again; a change outside the text
    // (whether search engines may index it) only notes the vector is current.
    let texts = fake.texts.load(Ordering::SeqCst);
    call(&app, "updateSection", json!({"pageSectionId": section, "content": {"body": "Staff photos."}})).await;
    assert_eq!(embed_pending(&app.store, embedder.as_ref(), 100).await.unwrap(), 1);
    assert_eq!(fake.texts.load(Ordering::SeqCst), texts + 1);
    call(&app, "updatePage", json!({"id": alps, "indexing": false})).await;
    assert_eq!(embed_pending(&app.store, embedder.as_ref(), 100).await.unwrap(), 0);
    assert_eq!(fake.texts.load(Ordering::SeqCst), texts + 1);
    // The section now speaks of people: the page is found by that meaning
    // (with the seeded "Our team" and "Our crew"), by no word of it.
    let found = names(&call(&app, "getPage", json!({"query": "people"})).await, "name");
    assert!(found.contains(&"Evening in the Alps".to_string()), "{found:?}");
    assert!(found.contains(&"Our crew".to_string()), "{found:?}");

    // Archived pages keep their vectors but are never answered.
    assert_eq!(app.delete(&format!("/api/v1/pages/{alps}")).await.status.as_u16(), 200);
    let found = call(&app, "getPage", json!({"query": "dusk on the peaks"})).await;
    assert_eq!(found["ranking"], "hybrid");
    assert_eq!(found["count"], 0, "{found}");

    // The model is down: full text answers, and says so.
    fake.down.store(true, Ordering::SeqCst);
    let found = call(&app, "getPost", json!({"query": "sundown"})).await;
    assert_eq!(found["ranking"], "fulltext");
    assert_eq!(names(&found, "title"), ["The shore at sundown"]);
}

fn paths(found: &Value) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for hit in found["items"].as_array().unwrap() {
        let p = hit["path"].as_str().unwrap().to_string();
        if !seen.contains(&p) {
            seen.push(p);
        }
    }
    seen
}

#[tokio::test]
async fn notes_are_found_by_meaning_among_the_notes_in_view_and_follow_their_changes() {
    let (fake, embedder, app) = embedding_app().await;
    let embed = || embed_notes(&app.store, &app.services.vaults, embedder.as_ref(), 100);
    let write =
        |path: &'static str, content: &'static str| call(&app, "writeNote", json!({"path": path, "content": content}));
    write("trips/alps.md", "# Evening on the ridge\n\nLight on the summit before the walk down.").await;
    write("trips/coast.md", "Waves at the shore.").await;
    write("work/standup.md", "Notes from the crew meeting.").await;
    call_as(&app, &app.other_admin, "writeNote", json!({"path": "twilight.md", "content": "Dusk on the peaks."})).await;
    assert_eq!(embed().await.unwrap(), 4, "every site's notes");
    assert_eq!(embed().await.unwrap(), 0, "nothing left to embed");

    // No word of the query is in any note: only the meaning matches.
    let found = call(&app, "searchNotes", json!({"query": "dusk peaks"})).await;
    assert_eq!(found["ranking"], "hybrid");
    assert_eq!(paths(&found), ["trips/alps.md"], "the other site's note is not found: {found}");
    assert_eq!(found["items"][0]["line"], 1);
    assert_eq!(found["items"][0]["snippet"], "# Evening on the ridge");
    // Words and meaning fused: the note with the word comes first.
    let found = call(&app, "searchNotes", json!({"query": "meeting of the team"})).await;
    assert_eq!(paths(&found)[0], "work/standup.md", "{found}");
    // A folder narrows the meaning too.
    let found = call(&app, "searchNotes", json!({"query": "people", "path": "trips"})).await;
    assert_eq!(found["count"], 0, "{found}");
    assert_eq!(paths(&call(&app, "searchNotes", json!({"query": "people"})).await), ["work/standup.md"]);

    // An edit is embedded at the next sweep; a rewrite with the same text
    // is only noted.
    let texts = fake.texts.load(Ordering::SeqCst);
    call(&app, "writeNote", json!({"path": "trips/coast.md", "content": "Staff outing.", "overwrite": true})).await;
    write("trips/more.md", "Sea views.").await;
    assert_eq!(embed().await.unwrap(), 2);
    assert_eq!(fake.texts.load(Ordering::SeqCst), texts + 2);
    let found = paths(&call(&app, "searchNotes", json!({"query": "people"})).await);
    assert!(found.contains(&"trips/coast.md".to_string()), "{found:?}");
    let texts = fake.texts.load(Ordering::SeqCst);
    call(&app, "writeNote", json!({"path": "trips/more.md", "content": "Sea views.", "overwrite": true})).await;
    assert_eq!(embed().await.unwrap(), 0);
    assert_eq!(fake.texts.load(Ordering::SeqCst), texts, "the same text is not embedded again");

    // A moved note is answered at its new path once the sweep has seen it;
    // the vector of the old path is forgotten, none is made twice.
    call(&app, "moveItem", json!({"path": "trips/alps.md", "newPath": "old/alps.md"})).await;
    let found = call(&app, "searchNotes", json!({"query": "dusk peaks"})).await;
    assert_eq!(found["count"], 0, "{found}");
    assert_eq!(embed().await.unwrap(), 1);
    assert_eq!(paths(&call(&app, "searchNotes", json!({"query": "dusk peaks"})).await), ["old/alps.md"]);
    let site = &app.scope.site_id;
    let mut kept: Vec<String> = app.store.note_vector_stamps(site, "fake-embed").await.unwrap().into_keys().collect();
    kept.sort();
    assert_eq!(kept, ["old/alps.md", "trips/coast.md", "trips/more.md", "work/standup.md"]);

    // The model is down: full text answers, and says so.
    fake.down.store(true, Ordering::SeqCst);
    let found = call(&app, "searchNotes", json!({"query": "crew"})).await;
    assert_eq!(found["ranking"], "fulltext");
    assert_eq!(paths(&found), ["work/standup.md"]);
}

#[tokio::test]
async fn notes_without_an_embedding_model_are_ranked_by_words_and_say_so() {
    let app = TestApp::new().await;
    call(&app, "writeNote", json!({"path": "ideas.md", "content": "A mountain sunset walk."})).await;
    let found = call(&app, "searchNotes", json!({"query": "sunset over the mountains"})).await;
    assert_eq!(found["ranking"], "fulltext");
    assert_eq!(paths(&found), ["ideas.md"]);
    let r = app.post("/api/v1/tools/searchNotes/invoke", json!({"query": "  "})).await;
    assert_eq!(r.status.as_u16(), 422, "{}", r.body);
    assert!(r.body["error"].as_str().unwrap().contains("query"), "{}", r.body);
}
