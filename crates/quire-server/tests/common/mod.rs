//! A test application: a fresh database with the demo site, a second site,
//! and tokens of every group, driven through the real router.

#![allow(dead_code)]

pub mod embeddings;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use quire_agent::testing::{Fake, SseEvent, SseReader, openai_stream};
use quire_core::access::Group;
use quire_server::{AppState, router};
use quire_store::seed::{seed_demo, seed_demo_into};
use quire_store::{NewToken, Scope, Store};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use tower::ServiceExt;

pub struct TestApp {
    pub router: Router,
    pub store: Store,
    pub scope: Scope,
    pub admin: String,
    pub editor: String,
    pub author: String,
    pub viewer: String,
    pub expired: String,
    /// Admin of a second site, `other`.
    pub other_admin: String,
    pub other_scope: Scope,
    /// The services the router runs on (data directory, media settings).
    pub services: quire_tools::Services,
    _dir: tempfile::TempDir,
}

pub struct Reply {
    pub status: StatusCode,
    pub body: Value,
}

impl Reply {
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or_default()
    }
    pub fn error(&self) -> &str {
        self.body["error"].as_str().unwrap_or_default()
    }
}

async fn token(store: &Store, group: Group, site: &str, expired: bool) -> String {
    let expires_at = expired.then(|| chrono::Utc::now() - chrono::Duration::minutes(1));
    store
        .create_token(NewToken { expires_at, ..NewToken::new(format!("test-{}", group.as_str()), group, site) })
        .await
        .unwrap()
        .1
}

/// The boundary of the multipart bodies [`form`] makes.
pub const BOUNDARY: &str = "quire-test-boundary-7d9f";

/// A multipart body of `(name, filename, bytes)` parts. File parts declare
/// `text/html`, which the server must not trust.
pub fn form(parts: &[(&str, Option<&str>, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, filename, bytes) in parts {
        out.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
        let disposition = match filename {
            Some(f) => format!(
                "Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\nContent-Type: text/html\r\n\r\n"
            ),
            None => format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n"),
        };
        out.extend_from_slice(disposition.as_bytes());
        out.extend_from_slice(bytes);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    out
}

/// An answer as bytes, for tests that read more than its JSON.
pub struct Raw {
    pub status: u16,
    pub headers: axum::http::HeaderMap,
    pub bytes: Vec<u8>,
}

impl Raw {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or(Value::Null)
    }

    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
    }
}

impl TestApp {
    /// Sends `req` through the router; the answer whole, as bytes.
    pub async fn raw(&self, req: Request<Body>) -> Raw {
        let res = self.router.clone().oneshot(req).await.unwrap();
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let bytes = res.into_body().collect().await.unwrap().to_bytes().to_vec();
        Raw { status, headers, bytes }
    }
}

impl TestApp {
    pub async fn new() -> Self {
        Self::build(|s| s).await
    }

    /// A test app whose agents run on an OpenAI-compatible server at `base`.
    pub async fn with_llm(base: &str) -> Self {
        let profiles = quire_agent::testing::fake_profiles(base);
        Self::build(move |s| s.with_profiles(profiles)).await
    }

    /// Like [`TestApp::with_llm`], with the serving process's background
    /// work running (the job worker, the session watch among it).
    pub async fn serving_with_llm(base: &str) -> Self {
        let profiles = quire_agent::testing::fake_profiles(base);
        Self::build(move |s| {
            let s = s.with_profiles(profiles);
            s.spawn_background();
            s
        })
        .await
    }

    pub async fn build(configure: impl FnOnce(AppState) -> AppState) -> Self {
        Self::build_with(|_| {}, configure).await
    }

    /// A test app whose services are first adjusted by `services`.
    pub async fn build_with(
        services: impl FnOnce(&mut quire_tools::Services),
        configure: impl FnOnce(AppState) -> AppState,
    ) -> Self {
        Self::build_on(None, services, configure).await
    }

    /// A test app whose published media is kept in `storage` (the demo
    /// images seeded there too).
    pub async fn with_storage(storage: quire_tools::storage::Storage) -> Self {
        Self::build_on(Some(storage), |_| {}, |s| s).await
    }

    async fn build_on(
        storage: Option<quire_tools::storage::Storage>,
        services: impl FnOnce(&mut quire_tools::Services),
        configure: impl FnOnce(AppState) -> AppState,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = quire_store::testing::open(dir.path()).await.unwrap();
        let report = match &storage {
            Some(storage) => seed_demo_into(&store, storage).await.unwrap(),
            None => seed_demo(&store, &dir.path().join("uploads")).await.unwrap(),
        };
        let scope = report.scope.unwrap();
        let other = store.create_site("other", "Other", &["production"]).await.unwrap();
        let other_scope = Scope::new(other.id, "production");
        quire_store::seed::ensure_templates(&store, &other_scope).await.unwrap();
        let mut adjusted = quire_tools::Services::new(store.clone(), dir.path());
        if let Some(storage) = storage {
            adjusted.storage = storage;
        }
        services(&mut adjusted);
        let state = configure(AppState::new(adjusted.clone(), "demo"));
        Self {
            router: router(state),
            admin: token(&store, Group::Admin, "demo", false).await,
            editor: token(&store, Group::Editor, "demo", false).await,
            author: token(&store, Group::Author, "demo", false).await,
            viewer: token(&store, Group::Viewer, "demo", false).await,
            expired: token(&store, Group::Admin, "demo", true).await,
            other_admin: token(&store, Group::Admin, "other", false).await,
            store,
            scope,
            other_scope,
            services: adjusted,
            _dir: dir,
        }
    }

    /// Creates `token` straight in the store, as `quire token create`
    /// does; answers its secret.
    pub async fn token(&self, token: NewToken) -> String {
        self.store.create_token(token).await.unwrap().1
    }

    pub async fn send(&self, method: &str, path: &str, token: Option<&str>, body: Option<Value>) -> Reply {
        self.send_raw(method, path, token, body.map(|b| b.to_string()), &[]).await
    }

    pub async fn send_raw(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<String>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let mut req = Request::builder().method(method).uri(path);
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = match body {
            Some(b) if headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type")) => {
                req.body(Body::from(b)).unwrap()
            }
            Some(b) => req.header("content-type", "application/json").body(Body::from(b)).unwrap(),
            None => req.body(Body::empty()).unwrap(),
        };
        let res = self.router.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
        };
        Reply { status, body }
    }

    /// Sends `body` to the editor agent's chat as the holder of `token`.
    pub async fn chat(&self, token: &str, body: Value) -> Reply {
        self.send("POST", "/api/v1/agents/editor/chat", Some(token), Some(body)).await
    }

    /// Starts a turn of the editor agent with `message` as the holder of
    /// `token`; answers the new session's id.
    pub async fn start_chat(&self, token: &str, message: &str) -> String {
        let started = self.chat(token, json!({ "message": message })).await;
        assert_eq!(started.status, 202, "{}", started.body);
        started.body["sessionId"].as_str().unwrap().to_string()
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send("GET", path, Some(&self.admin), None).await
    }
    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.send("POST", path, Some(&self.admin), Some(body)).await
    }
    pub async fn patch(&self, path: &str, body: Value) -> Reply {
        self.send("PATCH", path, Some(&self.admin), Some(body)).await
    }
    pub async fn delete(&self, path: &str) -> Reply {
        self.send("DELETE", path, Some(&self.admin), None).await
    }

    /// Reads a Server-Sent Events stream until an event of type `until`
    /// (or 20 s); answers the events as (id, type, data).
    pub async fn sse(&self, path: &str, token: &str, last_id: Option<&str>, until: &str) -> Vec<SseEvent> {
        let mut req = Request::builder().method("GET").uri(path).header("authorization", format!("Bearer {token}"));
        if let Some(id) = last_id {
            req = req.header("last-event-id", id);
        }
        let res = self.router.clone().oneshot(req.body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(res.headers()["content-type"], "text/event-stream");
        let mut body = res.into_body();
        let mut reader = SseReader::default();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
        while let Ok(Some(Ok(frame))) = tokio::time::timeout_at(deadline, body.frame()).await {
            if let Some(data) = frame.data_ref()
                && reader.read_until(data, until)
            {
                return reader.events;
            }
        }
        panic!("no {until} event; got {:?}", reader.events);
    }

    /// One record of each kind of site `demo`, some made for the purpose
    /// (an archive, a preview waiting for approval, a chat session, a
    /// queued job; the note `private/plan.md` is the caller's to write), by
    /// the name
    /// [`concrete`] puts into a route's path.
    pub async fn records(&self) -> BTreeMap<&'static str, String> {
        let contact = self.page_id("contact").await;
        let archived = self.delete(&format!("/api/v1/pages/{contact}")).await;
        assert_eq!(archived.status, 200, "{}", archived.body);
        let pricing = self.page_id("pricing").await;
        let preview = self.post("/api/v1/tools/deletePage/invoke", json!({ "ids": [pricing] })).await;
        let agent_id = self.get("/api/v1/agents/editor").await.body["id"].as_str().unwrap().to_string();
        let session =
            self.store.create_session(&self.scope, &agent_id, "token:someone", Group::Editor, "private chat", None);
        let session = session.await.unwrap();
        let first = |body: Value| -> String {
            let item = &body["items"][0]["id"];
            item.as_str().map(str::to_string).unwrap_or_else(|| item.to_string())
        };
        let home = self.page_id("home").await;
        let section = self.store.sections(&self.scope, &home, 1, None).await.unwrap().items.remove(0).id;
        let mut values = BTreeMap::new();
        values.insert("page", home);
        values.insert("section", section);
        values.insert("template", first(self.get("/api/v1/section-templates?limit=100").await.body));
        values.insert("collection", first(self.get("/api/v1/collections?limit=100").await.body));
        values.insert("entry", first(self.get("/api/v1/collections/blog/entries?limit=100").await.body));
        values.insert("image", first(self.get("/api/v1/images?limit=100").await.body));
        values.insert("navigation", first(self.get("/api/v1/navigations?limit=100").await.body));
        values.insert("navItem", first(self.get("/api/v1/navigations/header/items?limit=100").await.body));
        values.insert("archive", first(self.get("/api/v1/archive?limit=100").await.body));
        values.insert("change", first(self.get("/api/v1/changes?limit=100").await.body));
        values.insert("agent", agent_id);
        values.insert("session", session.id);
        values.insert("confirmation", preview.body["confirmationId"].as_str().unwrap().to_string());
        values.insert("note", "private/plan.md".to_string());
        // a job (alt text for one of the images), queued, unworked
        let image = values["image"].clone();
        self.store
            .enqueue_job(quire_core::model::JobKind::DescribeImage, &self.scope, &image, json!({}))
            .await
            .unwrap();
        let job = self.store.jobs_of(&self.scope, &image).await.unwrap().remove(0).id;
        values.insert("job", job);
        // an open release holding the home page, and a schedule waiting
        let release = self.post("/api/v1/releases", json!({ "name": "Probe" })).await;
        let release = release.body["id"].as_str().expect("a release made").to_string();
        let staged = json!({ "entity": "page", "id": values["page"] });
        assert_eq!(self.post(&format!("/api/v1/releases/{release}/items"), staged).await.status, 200);
        values.insert("release", release);
        let at = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
        let schedule =
            self.post("/api/v1/schedules", json!({ "entity": "page", "id": values["page"], "at": at })).await;
        values.insert("schedule", schedule.body["id"].as_str().expect("a schedule made").to_string());
        let tokens = self.store.tokens("demo").await.unwrap();
        values.insert("token", tokens.iter().find(|t| t.group == Group::Editor).unwrap().id.clone());
        // a person of the site, invited and not yet signed in
        let invited = self.post("/api/v1/users", json!({ "email": "probe@example.org", "group": "editor" })).await;
        values.insert("user", invited.body["user"]["id"].as_str().expect("a person invited").to_string());
        // a webhook, and a delivery of a change made after it
        let hook = self.post("/api/v1/webhooks", json!({ "url": "https://hooks.example.invalid/probe" })).await;
        let hook = hook.body["id"].as_str().expect("a webhook made").to_string();
        self.patch(&format!("/api/v1/pages/{}", values["page"]), json!({ "name": "Home" })).await;
        let deliveries = self.get(&format!("/api/v1/webhooks/{hook}/deliveries")).await;
        values.insert("delivery", first(deliveries.body));
        values.insert("webhook", hook);
        // a promotion: production copied into an environment of its own
        let copy = self.post("/api/v1/environments", json!({ "key": "probe", "from": "production" })).await;
        values.insert(
            "promotion",
            copy.body["promotion"]["id"].as_str().unwrap_or_else(|| panic!("a copy made: {}", copy.body)).to_string(),
        );
        // the demo's German home page
        let translations = self.get(&format!("/api/v1/pages/{}/translations", values["page"])).await;
        let translation = translations.body["translations"][0]["translation"]["id"].as_str();
        values.insert("translation", translation.expect("the demo's home page in German").to_string());
        values
    }

    /// Id of a demo page by slug.
    pub async fn page_id(&self, slug: &str) -> String {
        self.store.page_by_slug(&self.scope, slug).await.unwrap().id
    }

    /// Scripts the model's next step: `text` and a call archiving the
    /// contact page, which waits for an approval. Answers the page's id.
    pub async fn script_archive_contact(&self, fake: &Fake, text: &str) -> String {
        let contact = self.page_id("contact").await;
        let args = json!({ "ids": [contact] }).to_string();
        fake.push(openai_stream(text, &[("d1", "deletePage", &args)]));
        contact
    }
}

/// A route of the OpenAPI document (`/api/v1/pages/{id}`) with each path
/// parameter replaced by the record of `values` its segment names.
pub fn concrete(path: &str, values: &BTreeMap<&'static str, String>) -> String {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let parts: Vec<String> = segments
        .iter()
        .enumerate()
        .map(|(i, s)| if s.starts_with('{') { path_value(values, &segments, i) } else { s.to_string() })
        .collect();
    format!("/{}", parts.join("/"))
}

/// The record for a path parameter, by the segment before it.
fn path_value(values: &BTreeMap<&'static str, String>, segments: &[&str], index: usize) -> String {
    let before = if index > 0 { segments[index - 1] } else { "" };
    let param = segments[index];
    let key = match (before, param) {
        ("pages", _) => "page",
        ("sections", _) => "section",
        ("section-templates", _) => "template",
        ("collections", _) => "collection",
        ("entries", _) => "entry",
        ("images", _) => "image",
        ("jobs", _) => "job",
        ("navigations", _) => "navigation",
        ("nav-items", _) => "navItem",
        ("archive", _) => "archive",
        ("changes", _) => "change",
        ("agents", _) => "agent",
        ("sessions", _) => "session",
        ("approvals", _) => "confirmation",
        ("tokens", _) => "token",
        ("users", _) => "user",
        ("releases", _) => "release",
        ("schedules", _) => "schedule",
        ("webhooks", _) => "webhook",
        ("webhook-deliveries", _) => "delivery",
        ("translations", "{locale}") => return "de".into(),
        ("sites", _) => return "demo".into(),
        ("environments", _) => return "staging".into(),
        ("promotions", _) => "promotion",
        ("translations", _) => "translation",
        ("items", "{entity}") => return "page".into(),
        (_, "{document}") => "page",
        ("turns", _) => return "1".into(),
        ("tools", _) => return "getPage".into(),
        ("models", _) => return "editor".into(),
        ("revisions", "{entity}") => return "page".into(),
        (_, "{id}") if segments.get(index - 2) == Some(&"revisions") => "page",
        _ => panic!("no record for {param} after {before} in /{}", segments.join("/")),
    };
    values[key].clone()
}

/// Asserts a status, printing the body when it differs.
#[macro_export]
macro_rules! assert_status {
    ($reply:expr, $status:expr) => {{
        let r = &$reply;
        assert_eq!(r.status.as_u16(), $status, "unexpected status; body: {}", r.body);
    }};
}
