//! What the back-office's tests share: a seeded demo site served with the
//! back-office, and browsers signed in to it, sending plain forms as a
//! browser without the script does.

#![allow(dead_code)]

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use quire_core::access::Group;
use quire_store::{NewUser, Scope, Store};
use tower::ServiceExt;

/// A seeded demo site served by the server with the back-office merged in.
pub struct Site {
    _dir: tempfile::TempDir,
    pub store: Store,
    pub scope: Scope,
    app: Router,
}

/// A browser signed in as someone of `group`: its cookie and CSRF secret.
pub struct Browser {
    cookie: String,
    pub csrf: String,
    /// Who they are to the change log (`user:<id>`).
    pub actor: String,
}

/// A fresh demo site.
pub async fn site() -> Site {
    let dir = tempfile::tempdir().unwrap();
    let store = quire_store::testing::open(dir.path()).await.unwrap();
    let scope = quire_store::seed::seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let state = quire_server::AppState::new(quire_tools::Services::new(store.clone(), dir.path()), "demo");
    let app = quire_server::router_with(state.clone(), quire_web::router(state));
    Site { _dir: dir, store, scope, app }
}

impl Site {
    /// A browser signed in as a new person of `group`.
    pub async fn browser(&self, email: &str, group: Group) -> Browser {
        let user = self
            .store
            .create_user(NewUser {
                email: email.into(),
                display_name: None,
                group,
                sites: vec![("demo".into(), None)],
                password: Some("a good long password".into()),
            })
            .await
            .unwrap();
        let (session, secret) = self.store.start_web_session(&user).await.unwrap();
        Browser { cookie: format!("quire_session={secret}"), csrf: session.csrf, actor: format!("user:{}", user.id) }
    }

    /// GETs `path`: (status, body).
    pub async fn get(&self, who: &Browser, path: &str) -> (StatusCode, String) {
        self.send(self.request_get(who, path)).await.0
    }

    /// A GET of `path` by `who`, to send.
    pub fn request_get(&self, who: &Browser, path: &str) -> Request<Body> {
        Request::get(path).header(header::COOKIE, &who.cookie).body(Body::empty()).unwrap()
    }

    /// POSTs the form `fields` (the CSRF secret added) to `path`:
    /// ((status, body), where it redirects to).
    pub async fn post(&self, who: &Browser, path: &str, fields: &[(&str, &str)]) -> ((StatusCode, String), String) {
        let mut all = vec![("_csrf", who.csrf.as_str())];
        all.extend_from_slice(fields);
        let request = Request::post(path)
            .header(header::COOKIE, &who.cookie)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(serde_urlencoded::to_string(&all).unwrap()))
            .unwrap();
        self.send(request).await
    }

    pub async fn send(&self, request: Request<Body>) -> ((StatusCode, String), String) {
        let response = self.app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let location =
            response.headers().get(header::LOCATION).map(|l| l.to_str().unwrap().to_string()).unwrap_or_default();
        let body = String::from_utf8_lossy(&response.into_body().collect().await.unwrap().to_bytes()).into_owned();
        ((status, body), location)
    }

    /// The router, to send a request whose whole response is read.
    pub fn router(&self) -> Router {
        self.app.clone()
    }

    /// The id of the page `slug`.
    pub async fn page_id(&self, slug: &str) -> String {
        self.store.page_by_slug(&self.scope, slug).await.unwrap().id
    }
}
