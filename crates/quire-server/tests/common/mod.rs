//! A test application: a fresh database with the demo site, a second site,
//! and tokens of every group, driven through the real router.

#![allow(dead_code)]

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use quire_core::access::Group;
use quire_server::{AppState, router};
use quire_store::seed::seed_demo;
use quire_store::{NewToken, Scope, Store};
use serde_json::Value;
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
        .create_token(NewToken {
            name: format!("test-{}", group.as_str()),
            group,
            site: site.into(),
            environments: None,
            expires_at,
            secret: None,
            approval_policy: None,
        })
        .await
        .unwrap()
        .1
}

impl TestApp {
    pub async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("quire.db")).await.unwrap();
        let report = seed_demo(&store, &dir.path().join("uploads")).await.unwrap();
        let scope = report.scope.unwrap();
        let other = store.create_site("other", "Other", &["production"]).await.unwrap();
        let other_scope = Scope::new(other.id, "production");
        quire_store::seed::ensure_templates(&store, &other_scope).await.unwrap();
        let state = AppState::new(store.clone(), dir.path().join("uploads"), "demo");
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
            _dir: dir,
        }
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

    /// Id of a demo page by slug.
    pub async fn page_id(&self, slug: &str) -> String {
        self.store.page_by_slug(&self.scope, slug).await.unwrap().id
    }
}

/// Asserts a status, printing the body when it differs.
#[macro_export]
macro_rules! assert_status {
    ($reply:expr, $status:expr) => {{
        let r = &$reply;
        assert_eq!(r.status.as_u16(), $status, "unexpected status; body: {}", r.body);
    }};
}
