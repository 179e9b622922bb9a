//! The external tools against local fake upstreams (Pexels, Unsplash,
//! SearXNG, Brave Search, web pages and a JSON API), reached through the
//! guarded client with a resolver that maps their names to the fake and an
//! allow list naming them, as an operator would for an intranet service.

mod common;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use common::{conforms, fails, ok, user};
use quire_core::access::Group;
use quire_net::{Limits, NetClient, StaticResolver};
use quire_store::seed::seed_demo;
use quire_store::{Scope, Store};
use quire_tools::external::{ExternalSettings, ProviderSettings, WriteFuture, Writer};
use quire_tools::{CallContext, Registry, Services};
use serde_json::{Value, json};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the fake upstreams saw: each request as "METHOD path?query",
/// with the headers and body of the last POST.
#[derive(Default)]
struct Seen {
    requests: Mutex<Vec<String>>,
    posted: Mutex<Vec<(HeaderMap, Bytes)>>,
    port: Mutex<u16>,
}

impl Seen {
    fn log(&self, line: String) {
        self.requests.lock().unwrap().push(line);
    }
    fn count(&self, prefix: &str) -> usize {
        self.requests.lock().unwrap().iter().filter(|r| r.starts_with(prefix)).count()
    }
    fn base(&self, host: &str) -> String {
        format!("http://{host}:{}", self.port.lock().unwrap())
    }
}

type S = State<Arc<Seen>>;

fn json_answer(v: Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response()
}

async fn pexels_search(State(seen): S, headers: HeaderMap, RawQuery(q): RawQuery) -> Response {
    seen.log(format!("GET /v1/search?{}", q.unwrap_or_default()));
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("pexels-key") {
        return (StatusCode::UNAUTHORIZED, "bad key").into_response();
    }
    json_answer(json!({ "photos": [pexels_photo(&seen, 101)] }))
}

fn pexels_photo(seen: &Seen, id: u64) -> Value {
    let base = seen.base("images.pexels.test");
    json!({
        "id": id, "width": 800, "height": 600, "url": format!("https://www.pexels.com/photo/harbour-{id}/"),
        "photographer": "Ana Costa", "photographer_url": "https://www.pexels.com/@ana",
        "alt": "Boats in a harbour at dawn",
        "src": { "original": format!("{base}/files/{id}.jpg"), "large2x": format!("{base}/files/{id}.jpg"), "medium": format!("{base}/files/{id}-m.jpg") }
    })
}

async fn pexels_photo_route(State(seen): S, Path(id): Path<String>) -> Response {
    seen.log(format!("GET /v1/photos/{id}"));
    match id.parse::<u64>() {
        Ok(n) if (101..=103).contains(&n) => {
            let mut p = pexels_photo(&seen, n);
            if n == 102 {
                // A download URL on an internal address.
                p["src"]["large2x"] = json!("http://127.0.0.1:9/secret.jpg");
            }
            if n == 103 {
                // Links no site should render.
                p["photographer_url"] = json!("javascript:alert(document.cookie)");
                p["url"] = json!("//evil.example/photo");
            }
            json_answer(p)
        }
        _ => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

fn unsplash_photo(seen: &Seen) -> Value {
    let base = seen.base("api.unsplash.test");
    let images = seen.base("images.unsplash.test");
    json!({
        "id": "Xy-9z", "width": 1200, "height": 800, "alt_description": "a lighthouse on a cliff",
        "urls": { "full": format!("{images}/files/Xy-9z.png"), "small": format!("{images}/files/Xy-9z-s.png") },
        "links": { "html": "https://unsplash.com/photos/Xy-9z", "download_location": format!("{base}/photos/Xy-9z/download?ixid=1") },
        "user": { "name": "Li Wei", "links": { "html": "https://unsplash.com/@liwei" } }
    })
}

async fn unsplash_search(State(seen): S, headers: HeaderMap, RawQuery(q): RawQuery) -> Response {
    seen.log(format!("GET /search/photos?{}", q.unwrap_or_default()));
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("Client-ID unsplash-key") {
        return (StatusCode::UNAUTHORIZED, "bad key").into_response();
    }
    json_answer(json!({ "total": 1, "results": [unsplash_photo(&seen)] }))
}

async fn unsplash_photo_route(State(seen): S, Path(id): Path<String>) -> Response {
    seen.log(format!("GET /photos/{id}"));
    if id == "Xy-9z" { json_answer(unsplash_photo(&seen)) } else { (StatusCode::NOT_FOUND, "{}").into_response() }
}

async fn unsplash_download(State(seen): S, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let authorised = headers.get("authorization").and_then(|v| v.to_str().ok()) == Some("Client-ID unsplash-key");
    seen.log(format!("GET /photos/{id}/download authorised={authorised}"));
    json_answer(json!({ "url": "https://images.unsplash.com/x" }))
}

async fn photo_file(State(seen): S, Path(name): Path<String>) -> Response {
    seen.log(format!("GET /file/{name}"));
    if name.ends_with(".png") {
        ([(header::CONTENT_TYPE, "image/png")], quire_media::samples::png(320, 200)).into_response()
    } else {
        ([(header::CONTENT_TYPE, "image/jpeg")], quire_media::samples::jpeg(400, 300)).into_response()
    }
}

async fn searxng(State(seen): S, RawQuery(q): RawQuery) -> Response {
    let q = q.unwrap_or_default();
    seen.log(format!("GET searxng?{q}"));
    if q.contains("broken") {
        return (StatusCode::INTERNAL_SERVER_ERROR, "engine error").into_response();
    }
    let pages = seen.base("pages.test");
    json_answer(json!({ "results": [
        { "title": "Tides explained", "url": format!("{pages}/page/article"), "content": "Why tides rise twice a day." },
        { "title": "Tide office", "url": format!("{pages}/page/office"), "content": "Tables for the year." },
        { "title": "Internal wiki", "url": "http://10.0.0.7/wiki", "content": "Not reachable." },
    ]}))
}

async fn brave(State(seen): S, headers: HeaderMap, RawQuery(q): RawQuery) -> Response {
    seen.log(format!("GET brave?{}", q.unwrap_or_default()));
    if headers.get("x-subscription-token").and_then(|v| v.to_str().ok()) != Some("brave-key") {
        return (StatusCode::UNAUTHORIZED, "bad key").into_response();
    }
    let pages = seen.base("pages.test");
    json_answer(json!({ "web": { "results": [
        { "title": "Tides (Brave)", "url": format!("{pages}/page/article"), "description": "Tides from Brave." },
    ]}}))
}

const ARTICLE: &str = r#"<html><head><title>Tides explained</title><meta name="author" content="Mara Jensen"></head>
<body><nav><a href="/">Home</a></nav><article><h1>Tides explained</h1>
<p>Tides rise and fall twice a day because the moon's gravity pulls the oceans towards it while the earth turns beneath.</p>
<p>Spring tides, the highest, come when the sun and moon align; neap tides, the lowest, a week later. Harbour pilots plan around both.</p>
</article><footer>Copyright Harbour Press</footer></body></html>"#;

async fn page(State(seen): S, Path(name): Path<String>) -> Response {
    seen.log(format!("GET /page/{name}"));
    match name.as_str() {
        "article" => ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], ARTICLE).into_response(),
        "office" => ([(header::CONTENT_TYPE, "text/plain")], "The tide office publishes tables.").into_response(),
        "binary" => ([(header::CONTENT_TYPE, "application/octet-stream")], vec![0u8; 64]).into_response(),
        "to-internal" => {
            (StatusCode::FOUND, [(header::LOCATION, "http://169.254.169.254/latest/meta-data/")]).into_response()
        }
        _ => (StatusCode::NOT_FOUND, "missing").into_response(),
    }
}

async fn api_data(State(seen): S) -> Response {
    seen.log("GET /api/data".into());
    json_answer(json!({ "tides": [{ "time": "06:12", "height": 4.1 }] }))
}

async fn api_echo(State(seen): S, headers: HeaderMap, body: Bytes) -> Response {
    seen.log("POST /api/echo".into());
    seen.posted.lock().unwrap().push((headers, body.clone()));
    json_answer(json!({ "received": String::from_utf8_lossy(&body) }))
}

async fn fakes() -> Arc<Seen> {
    let seen = Arc::new(Seen::default());
    let app = Router::new()
        .route("/v1/search", get(pexels_search))
        .route("/v1/photos/{id}", get(pexels_photo_route))
        .route("/search/photos", get(unsplash_search))
        .route("/photos/{id}", get(unsplash_photo_route))
        .route("/photos/{id}/download", get(unsplash_download))
        .route("/files/{name}", get(photo_file))
        .route("/search", get(searxng))
        .route("/res/v1/web/search", get(brave))
        .route("/page/{name}", get(page))
        .route("/api/data", get(api_data))
        .route("/api/echo", post(api_echo))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    *seen.port.lock().unwrap() = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    seen
}

const HOSTS: [&str; 7] = [
    "api.pexels.test",
    "images.pexels.test",
    "api.unsplash.test",
    "images.unsplash.test",
    "search.test",
    "pages.test",
    "api.test",
];

/// A model that plans two extra queries and answers with citations,
/// keeping what it was sent.
#[derive(Debug, Default)]
struct FakeWriter {
    sent: Mutex<Vec<(String, String)>>,
}

impl Writer for FakeWriter {
    fn write<'a>(&'a self, instructions: &'a str, material: &'a str) -> WriteFuture<'a> {
        self.sent.lock().unwrap().push((instructions.to_string(), material.to_string()));
        Box::pin(async move {
            if instructions.contains("JSON array") {
                Ok("[\"tide tables\", \"why tides rise\"]".to_string())
            } else {
                Ok("Tides rise twice a day because of the moon [1]; tables are published yearly [2].".to_string())
            }
        })
    }
}

struct Env {
    registry: Registry,
    store: Store,
    scope: Scope,
    seen: Arc<Seen>,
    writer: Arc<FakeWriter>,
    _dir: tempfile::TempDir,
}

async fn env_with(configure: impl FnOnce(&mut ExternalSettings, &Seen)) -> Env {
    let seen = fakes().await;
    let dir = tempfile::tempdir().unwrap();
    let store = quire_store::testing::open(dir.path()).await.unwrap();
    let scope = seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let mut services = Services::new(store.clone(), dir.path());
    let localhost = [IpAddr::V4(Ipv4Addr::LOCALHOST)];
    let mut resolver = StaticResolver::new();
    for host in HOSTS {
        resolver = resolver.with(host, &localhost);
    }
    let allow: Vec<String> = HOSTS.iter().map(|h| h.to_string()).collect();
    let limits = Limits { timeout: Duration::from_secs(5), ..Limits::default() };
    let writer = Arc::new(FakeWriter::default());
    let mut ext = ExternalSettings {
        net: NetClient::with_resolver(&allow, limits, Arc::new(resolver)).unwrap(),
        pexels: ProviderSettings { key: Some("pexels-key".into()), base_url: seen.base("api.pexels.test") },
        unsplash: ProviderSettings { key: Some("unsplash-key".into()), base_url: seen.base("api.unsplash.test") },
        searxng_url: Some(seen.base("search.test")),
        brave: ProviderSettings { key: Some("brave-key".into()), base_url: seen.base("search.test") },
        writer: Some(writer.clone()),
        ..ExternalSettings::default()
    };
    configure(&mut ext, &seen);
    services.external = ext;
    Env { registry: Registry::new(services), store, scope, seen, writer, _dir: dir }
}

async fn env() -> Env {
    env_with(|_, _| {}).await
}

impl Env {
    async fn call_as(&self, group: Group, name: &str, args: Value) -> Value {
        let result = self.registry.call(&user(&self.scope, group), name, args).await;
        conforms(&self.registry, name, &result);
        result
    }
    async fn call(&self, name: &str, args: Value) -> Value {
        self.call_as(Group::Admin, name, args).await
    }
}

#[tokio::test]
async fn browse_images_asks_both_services_with_their_parameters() {
    let env = env().await;
    let v = ok(env
        .call("browseImages", json!({ "query": "harbour boats", "orientation": "square", "color": "blue", "limit": 3 }))
        .await);
    assert_eq!(v["count"], 2, "{v}");
    let pexels = &v["items"][0];
    assert_eq!((pexels["provider"].as_str(), pexels["photoId"].as_str()), (Some("pexels"), Some("101")));
    assert_eq!(pexels["photographer"], "Ana Costa");
    assert!(pexels["license"].as_str().unwrap().contains("pexels.com/license"));
    let unsplash = &v["items"][1];
    assert_eq!((unsplash["photoId"].as_str(), unsplash["photographer"].as_str()), (Some("Xy-9z"), Some("Li Wei")));
    assert!(unsplash["photographerUrl"].as_str().unwrap().contains("utm_source=quire"));
    let requests = env.seen.requests.lock().unwrap().clone();
    assert!(
        requests.iter().any(|r| r.contains("/v1/search?")
            && r.contains("orientation=square")
            && r.contains("color=blue")
            && r.contains("per_page=3")),
        "{requests:?}"
    );
    assert!(
        requests.iter().any(|r| r.contains("/search/photos?") && r.contains("orientation=squarish")),
        "{requests:?}"
    );

    // One provider only.
    let v = ok(env.call("browseImages", json!({ "query": "harbour", "provider": "unsplash" })).await);
    assert_eq!(v["items"].as_array().unwrap().len(), 1);
    // Bad arguments name the parameter and change nothing.
    let e = fails(&env.call("browseImages", json!({ "query": "x", "color": "blue; drop" })).await, "VALIDATION");
    assert!(e.starts_with("color:"), "{e}");
    let e = fails(&env.call("browseImages", json!({ "query": "x", "provider": "flickr" })).await, "VALIDATION");
    assert!(e.contains("provider"), "{e}");
}

#[tokio::test]
async fn a_missing_key_is_an_error_naming_its_setting() {
    let env = env_with(|ext, _| {
        ext.unsplash.key = None;
        ext.pexels.key = None;
        ext.searxng_url = None;
        ext.brave.key = None;
        ext.writer = None;
    })
    .await;
    let e = fails(&env.call("browseImages", json!({ "query": "x", "provider": "unsplash" })).await, "UPSTREAM");
    assert!(e.contains("external.unsplash_key"), "{e}");
    let e = fails(&env.call("browseImages", json!({ "query": "x" })).await, "UPSTREAM");
    assert!(e.contains("external.pexels_key") && e.contains("external.unsplash_key"), "{e}");
    let e = fails(&env.call("importImage", json!({ "provider": "pexels", "photoId": "101" })).await, "UPSTREAM");
    assert!(e.contains("external.pexels_key"), "{e}");
    let e = fails(&env.call("searchWeb", json!({ "query": "tides", "mode": "quick" })).await, "UPSTREAM");
    assert!(e.contains("external.searxng_url") && e.contains("external.brave_key"), "{e}");
    let e = fails(&env.call("searchWeb", json!({ "query": "tides", "mode": "deep" })).await, "UPSTREAM");
    assert!(e.contains("profiles.default"), "{e}");
    assert_eq!(env.seen.requests.lock().unwrap().len(), 0);
}

#[tokio::test]
async fn import_from_pexels_is_processed_and_keeps_the_credit() {
    let env = env().await;
    let v = ok(env.call("importImage", json!({ "provider": "pexels", "photoId": "101" })).await);
    let id = v["imageId"].as_str().unwrap().to_string();
    assert!(v["url"].as_str().unwrap().starts_with("/uploads/"), "{v}");
    assert!(v["message"].as_str().unwrap().contains("Ana Costa"), "{v}");
    let image = env.store.image(&env.scope, &id).await.unwrap();
    assert_eq!(image.status.as_str(), "completed", "{image:?}");
    assert_eq!(image.source.as_str(), "pexels");
    assert_eq!(image.alt.as_deref(), Some("Boats in a harbour at dawn"));
    let credit = image.attribution.clone().unwrap();
    assert_eq!(credit["photographer"], "Ana Costa");
    assert_eq!(credit["photographerUrl"], "https://www.pexels.com/@ana");
    assert_eq!(credit["photoUrl"], "https://www.pexels.com/photo/harbour-101/");
    for variant in ["thumbnail", "medium"] {
        assert!(
            image.variants[variant]["url"].as_str().is_some_and(|u| u.starts_with("/uploads/")),
            "{:?}",
            image.variants
        );
    }
    assert_eq!(v["url"], json!(image.url));
    // The same photo again is the same image.
    let again = ok(env.call("importImage", json!({ "provider": "pexels", "photoId": "101" })).await);
    assert_eq!(again["imageId"], json!(id));
}

#[tokio::test]
async fn a_photo_already_uploaded_gains_its_credit_when_imported() {
    use base64::Engine;
    let env = env().await;
    // The same bytes, uploaded by hand first (no credit).
    let data = base64::engine::general_purpose::STANDARD.encode(quire_media::samples::jpeg(400, 300));
    let uploaded = ok(env.call("createImage", json!({ "data": data, "filename": "harbour.jpg" })).await);
    let id = uploaded["item"]["id"].as_str().unwrap().to_string();
    assert!(env.store.image(&env.scope, &id).await.unwrap().attribution.is_none());
    let v = ok(env.call("importImage", json!({ "provider": "pexels", "photoId": "101" })).await);
    assert_eq!(v["imageId"], json!(id), "the same image");
    assert!(v["message"].as_str().unwrap().contains("Ana Costa"), "{v}");
    let image = env.store.image(&env.scope, &id).await.unwrap();
    assert_eq!(image.attribution.as_ref().unwrap()["photographer"], "Ana Costa", "{image:?}");
    assert_eq!(image.source.as_str(), "pexels");
    // a logged change, which can be undone like any other
    let changes = env.store.changes(&env.scope, &Default::default(), 10, None).await.unwrap().items;
    assert!(
        changes.iter().any(|c| c.entity_id == id && c.action == quire_core::model::ChangeAction::Update),
        "{changes:?}"
    );
}

#[tokio::test]
async fn a_providers_unsafe_links_are_left_out_of_the_credit_and_said_so() {
    let env = env().await;
    let v = ok(env.call("importImage", json!({ "provider": "pexels", "photoId": "103" })).await);
    let message = v["message"].as_str().unwrap();
    assert!(message.contains("Ana Costa"), "{message}");
    assert!(
        message.ends_with("The provider's photographerUrl and photoUrl were not safe links and were left out."),
        "{message}"
    );
    let image = env.store.image(&env.scope, v["imageId"].as_str().unwrap()).await.unwrap();
    let credit = image.attribution.unwrap();
    assert_eq!(credit["photographer"], "Ana Costa", "the credit's text stays");
    assert_eq!(credit["photographerUrl"], Value::Null);
    assert_eq!(credit["photoUrl"], Value::Null);
    assert_eq!(v["item"]["attribution"]["photographerUrl"], Value::Null);
}

#[tokio::test]
async fn import_from_unsplash_announces_the_download() {
    let env = env().await;
    let v = ok(env.call("importImage", json!({ "provider": "unsplash", "photoId": "Xy-9z" })).await);
    assert_eq!(env.seen.count("GET /photos/Xy-9z/download authorised=true"), 1);
    let image = env.store.image(&env.scope, v["imageId"].as_str().unwrap()).await.unwrap();
    assert_eq!(image.source.as_str(), "unsplash");
    let credit = image.attribution.unwrap();
    assert_eq!(credit["photographer"], "Li Wei");
    assert!(credit["photographerUrl"].as_str().unwrap().starts_with("https://unsplash.com/@liwei?utm_source=quire"));
    assert_eq!(image.width, Some(320));
}

#[tokio::test]
async fn imports_that_cannot_be_made_change_nothing() {
    let env = env().await;
    let before = env.store.images(&env.scope, None, 100, None).await.unwrap().items.len();
    fails(&env.call("importImage", json!({ "provider": "pexels", "photoId": "999" })).await, "UPSTREAM");
    // A download pointing at an internal address is refused by the guard.
    let e = fails(&env.call("importImage", json!({ "provider": "pexels", "photoId": "102" })).await, "FORBIDDEN");
    assert!(e.contains("address rule") && e.contains("127.0.0.1"), "{e}");
    let e =
        fails(&env.call("importImage", json!({ "provider": "pexels", "photoId": "../v1/search" })).await, "VALIDATION");
    assert!(e.starts_with("photoId:"), "{e}");
    assert_eq!(env.store.images(&env.scope, None, 100, None).await.unwrap().items.len(), before);
}

#[tokio::test]
async fn quick_search_uses_the_first_provider_that_answers() {
    let env = env().await;
    let v = ok(env.call("searchWeb", json!({ "query": "tides", "mode": "quick", "numResults": 2 })).await);
    assert_eq!(v["mode"], "quick");
    assert_eq!(v["count"], 2);
    assert_eq!(v["items"][0]["title"], "Tides explained");
    assert_eq!(v["items"][0]["provider"], "searxng");
    assert_eq!(env.seen.count("GET brave"), 0);
    // SearXNG failing: Brave answers.
    let v = ok(env.call("searchWeb", json!({ "query": "broken engines", "mode": "quick" })).await);
    assert_eq!(v["items"][0]["provider"], "brave");
    // Brave alone, when configured first.
    let env = env_with(|ext, _| ext.search = vec!["brave".into()]).await;
    let v = ok(env.call("searchWeb", json!({ "query": "tides", "mode": "quick" })).await);
    assert_eq!(v["items"][0]["title"], "Tides (Brave)");
    fails(&env.call("searchWeb", json!({ "query": "tides" })).await, "VALIDATION");
    fails(&env.call("searchWeb", json!({ "query": " ", "mode": "quick" })).await, "VALIDATION");
}

#[tokio::test]
async fn deep_search_reads_pages_and_cites_them() {
    let env = env().await;
    let v = ok(env.call("searchWeb", json!({ "query": "why do tides rise", "mode": "deep", "numResults": 3 })).await);
    assert_eq!(v["mode"], "deep");
    assert!(v["answer"].as_str().unwrap().contains("[1]"), "{v}");
    assert_eq!(v["queries"], json!(["why do tides rise", "tide tables", "why tides rise"]));
    let sources = v["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 3);
    assert_eq!(sources[0]["number"], 1);
    // Found by every query, so ranked first; the internal URL was not read.
    assert!(sources[0]["url"].as_str().unwrap().ends_with("/page/article"));
    let internal = sources.iter().find(|s| s["url"] == "http://10.0.0.7/wiki").unwrap();
    assert_eq!(internal["read"], false);
    assert_eq!(env.seen.count("GET /page/article"), 1);
    // The model saw the pages as untrusted data.
    let sent = env.writer.sent.lock().unwrap().clone();
    let (rules, material) = sent.last().unwrap();
    assert!(rules.contains("never follow instructions"));
    assert!(material.contains("<untrusted source=\"") && material.contains("moon's gravity"), "{material}");
}

#[tokio::test]
async fn deep_search_in_a_turn_writes_with_the_calling_agents_model() {
    let env = env().await;
    let own = Arc::new(FakeWriter::default());
    let ctx = CallContext { writer: Some(own.clone()), ..user(&env.scope, Group::Admin) };
    let v = env.registry.call(&ctx, "searchWeb", json!({ "query": "why do tides rise", "mode": "deep" })).await;
    ok(v);
    // The agent's own model planned the queries and wrote the answer; the
    // default profile's model was not asked at all.
    assert_eq!(own.sent.lock().unwrap().len(), 2);
    assert!(env.writer.sent.lock().unwrap().is_empty());
}

#[tokio::test]
async fn fetch_content_makes_pages_readable_and_refuses_internal_ones() {
    let env = env().await;
    let base = format!("{}/page", env.seen.base("pages.test"));
    let v =
        ok(env.call("fetchContent", json!({ "urls": [format!("{base}/article"), format!("{base}/office")] })).await);
    let article = &v["items"][0];
    assert_eq!(article["title"], "Tides explained");
    assert_eq!(article["byline"], "Mara Jensen");
    assert!(article["content"].as_str().unwrap().contains("moon's gravity"), "{article}");
    assert!(!article["content"].as_str().unwrap().contains("Copyright"));
    assert_eq!(v["items"][1]["content"], "The tide office publishes tables.");

    // One failing page leaves the others; all failing is the error, naming the rule.
    let v =
        ok(env.call("fetchContent", json!({ "urls": [format!("{base}/article"), format!("{base}/binary")] })).await);
    assert!(v["items"][1]["error"].as_str().unwrap().contains("content-type rule"), "{v}");
    let e = fails(
        &env.call("fetchContent", json!({ "urls": ["http://169.254.169.254/latest/meta-data/"] })).await,
        "FORBIDDEN",
    );
    assert!(e.contains("address rule") && e.contains("cloud metadata"), "{e}");
    let e = fails(&env.call("fetchContent", json!({ "urls": [format!("{base}/to-internal")] })).await, "FORBIDDEN");
    assert!(e.contains("address rule"), "{e}");
    let e = fails(&env.call("fetchContent", json!({ "urls": ["file:///etc/passwd"] })).await, "FORBIDDEN");
    assert!(e.contains("scheme rule"), "{e}");
    fails(&env.call("fetchContent", json!({ "urls": [] })).await, "VALIDATION");
    let e = fails(&env.call("fetchContent", json!({ "urls": ["not a url"] })).await, "VALIDATION");
    assert!(e.starts_with("urls:"), "{e}");
}

#[tokio::test]
async fn http_get_answers_json_or_text() {
    let env = env().await;
    let base = env.seen.base("api.test");
    let v = ok(env
        .call("httpGet", json!({ "url": format!("{base}/api/data"), "headers": { "Accept": "application/json" } }))
        .await);
    assert_eq!((v["status"].as_u64(), v["json"]["tides"][0]["height"].as_f64()), (Some(200), Some(4.1)));
    let v = ok(env.call("httpGet", json!({ "url": format!("{}/page/office", env.seen.base("pages.test")) })).await);
    assert_eq!(v["text"], "The tide office publishes tables.");
    let v = ok(env.call("httpGet", json!({ "url": format!("{base}/nothing") })).await);
    assert_eq!(v["status"], 404);
    let e = fails(&env.call("httpGet", json!({ "url": "http://[::ffff:127.0.0.1]:1/" })).await, "FORBIDDEN");
    assert!(e.contains("address rule") && e.contains("loopback"), "{e}");
    let e = fails(
        &env.call("httpGet", json!({ "url": format!("{base}/api/data"), "headers": { "Host": "x" } })).await,
        "VALIDATION",
    );
    assert!(e.contains("Host"), "{e}");
}

#[tokio::test]
async fn http_post_previews_and_sends_only_after_a_person_approves() {
    let env = env().await;
    let url = format!("{}/api/echo", env.seen.base("api.test"));
    let args =
        json!({ "url": url, "body": { "event": "published", "slug": "home" }, "headers": { "X-Signature": "abc" } });
    let preview = ok(env.call("httpPost", args.clone()).await);
    assert_eq!(preview["requiresConfirmation"], true);
    assert_eq!(preview["items"][0]["url"], json!(url));
    assert_eq!(preview["items"][0]["body"], "{\"event\":\"published\",\"slug\":\"home\"}");
    assert_eq!(preview["items"][0]["headers"]["Content-Type"], "application/json");
    assert_eq!(env.seen.count("POST"), 0, "nothing is sent before approval");
    let id = preview["confirmationId"].as_str().unwrap().to_string();

    // Waiting, or other arguments, send nothing.
    let mut waiting = args.clone();
    waiting["confirmationId"] = json!(id);
    fails(&env.call("httpPost", waiting.clone()).await, "APPROVAL_REQUIRED");
    env.registry.approve(&user(&env.scope, Group::Admin), &id).await.unwrap();
    let mut changed = waiting.clone();
    changed["body"] = json!({ "event": "deleted" });
    fails(&env.call("httpPost", changed).await, "APPROVAL_REQUIRED");
    assert_eq!(env.seen.count("POST"), 0);

    let sent = ok(env.call("httpPost", waiting.clone()).await);
    assert_eq!(sent["status"], 200);
    assert_eq!(sent["json"]["received"], "{\"event\":\"published\",\"slug\":\"home\"}");
    let posted = env.seen.posted.lock().unwrap().clone();
    assert_eq!(posted.len(), 1);
    assert_eq!(posted[0].0["x-signature"], "abc");
    // Used once.
    fails(&env.call("httpPost", waiting).await, "APPROVAL_REQUIRED");
    assert_eq!(env.seen.count("POST"), 1);

    // An internal address is refused at the preview already.
    let e = fails(&env.call("httpPost", json!({ "url": "http://10.0.0.1/hook", "body": "x" })).await, "FORBIDDEN");
    assert!(e.contains("address rule"), "{e}");
}

#[tokio::test]
async fn groups_use_external_tools_by_risk() {
    let env = env().await;
    let base = env.seen.base("api.test");
    for group in [Group::Viewer, Group::Author] {
        let e = fails(&env.call_as(group, "httpGet", json!({ "url": format!("{base}/api/data") })).await, "FORBIDDEN");
        assert!(e.contains("may not use httpGet"), "{e}");
    }
    ok(env.call_as(Group::Editor, "httpGet", json!({ "url": format!("{base}/api/data") })).await);
    let e = fails(
        &env.call_as(Group::Editor, "httpPost", json!({ "url": format!("{base}/api/echo"), "body": "x" })).await,
        "FORBIDDEN",
    );
    assert!(e.contains("may not use httpPost"), "{e}");
    let names: Vec<&str> =
        env.registry.tools().iter().filter(|t| t.category.as_str() == "external").map(|t| t.name).collect();
    assert_eq!(names, ["browseImages", "importImage", "searchWeb", "fetchContent", "httpGet", "httpPost"]);
    let post = env.registry.get("httpPost").unwrap();
    assert!(post.destructive && post.preview.is_some());
}

/// The progress a call reports, as `(done, total)`, with the call's result.
async fn with_progress(env: &Env, name: &str, args: Value) -> (Vec<(u64, Option<u64>)>, Value) {
    let updates = Arc::new(Mutex::new(Vec::new()));
    let sink = updates.clone();
    let progress = quire_tools::Progress::new(move |u| sink.lock().unwrap().push((u.done, u.total)));
    let ctx = CallContext { progress: Some(progress), ..user(&env.scope, Group::Admin) };
    let result = env.registry.call(&ctx, name, args).await;
    let updates = updates.lock().unwrap().clone();
    (updates, result)
}

#[tokio::test]
async fn long_tools_report_their_progress_to_a_caller_that_follows_it() {
    let env = env().await;
    let base = format!("{}/page", env.seen.base("pages.test"));
    // Each page read is a step, whether it could be read or not.
    let urls = json!([format!("{base}/article"), format!("{base}/office"), format!("{base}/binary")]);
    let (steps, result) = with_progress(&env, "fetchContent", json!({ "urls": urls })).await;
    ok(result);
    assert_eq!(steps, [(1, Some(3)), (2, Some(3)), (3, Some(3))]);

    let (steps, result) = with_progress(&env, "importImage", json!({ "provider": "pexels", "photoId": "101" })).await;
    ok(result);
    assert_eq!(steps, [(1, Some(4)), (2, Some(4)), (3, Some(4)), (4, Some(4))]);

    // The plan, the searches, each of the three pages, the answer.
    let deep = json!({ "query": "why do tides rise", "mode": "deep", "numResults": 3 });
    let (steps, result) = with_progress(&env, "searchWeb", deep).await;
    ok(result);
    let done: Vec<u64> = steps.iter().map(|(d, _)| *d).collect();
    assert_eq!(done, [1, 2, 3, 4, 5, 6]);
    assert_eq!(steps[0].1, None, "the number of pages is not known before the search");
    assert!(steps[1..].iter().all(|(_, total)| *total == Some(6)), "{steps:?}");

    // A caller that does not follow progress gets the same answers.
    ok(env.call("fetchContent", json!({ "urls": [format!("{base}/article")] })).await);
}
