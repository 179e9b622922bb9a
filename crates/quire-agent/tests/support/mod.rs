//! A runtime over a fresh database with the demo site, talking to a fake provider.

#![allow(dead_code)]

pub use quire_agent::testing::*;
use quire_agent::{Person, Profile, Profiles, ProviderKind, Runtime};
use quire_core::access::Group;
use quire_core::model::SessionStatus;
use quire_store::seed::seed_demo;
use quire_store::{Scope, Store};
use quire_tools::{Registry, Services};
use std::sync::Arc;
use std::time::Duration;

pub struct Env {
    pub store: Store,
    pub scope: Scope,
    pub registry: Arc<Registry>,
    pub runtime: Arc<Runtime>,
    pub fake: Fake,
    /// The in-process model (answers only in `Env::in_process`).
    pub model: Scripted,
    pub base: String,
    pub dir: tempfile::TempDir,
    /// `token:<id>` of the editor token the person chats with.
    pub actor: String,
}

impl Env {
    pub async fn openai() -> Self {
        Self::new(ProviderKind::Openai, |p| p, |r| r).await
    }

    /// Like [`Env::openai`], with the provider profile changed by `change`.
    pub async fn openai_with(change: impl FnOnce(&mut Profile)) -> Self {
        Self::new(
            ProviderKind::Openai,
            |mut p| {
                change(&mut p);
                p
            },
            |r| r,
        )
        .await
    }

    /// A runtime whose model is `model`, injected: no HTTP.
    pub async fn in_process() -> Self {
        let env = Self::openai().await;
        let mut profile = Profile::new(ProviderKind::Openai);
        profile.model = Some("scripted".into());
        env.runtime.set_provider("default", profile, Arc::new(env.model.clone()));
        env
    }

    pub async fn new(
        kind: ProviderKind,
        profile: impl FnOnce(Profile) -> Profile,
        registry: impl FnOnce(Registry) -> Registry,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = quire_store::testing::open(dir.path()).await.unwrap();
        let scope = seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
        let registry = Arc::new(registry(Registry::new(Services::new(store.clone(), dir.path()))));
        let (fake, base) = serve().await;
        let mut p = fake_profile(kind, &base);
        p.timeout_secs = 10;
        let runtime = runtime_on(Arc::clone(&registry), profile(p));
        let actor = format!("token:{}", editor_token(&store).await);
        Env { store, scope, registry, runtime, fake, model: Scripted::default(), base, dir, actor }
    }

    /// A second runtime over the same database, as after a restart.
    pub fn restarted(&self) -> Arc<Runtime> {
        let registry = Arc::new(Registry::new(Services::new(self.store.clone(), self.dir.path())));
        runtime_on(registry, fake_profile(ProviderKind::Openai, &self.base))
    }

    /// Another process over the same database (a replica on one
    /// PostgreSQL, or a second process on one SQLite file), with the same
    /// model: its own store handle, registry and runtime.
    pub async fn replica(&self) -> Replica {
        let store = Store::open_at(self.store.location().clone()).await.unwrap();
        let registry = Arc::new(Registry::new(Services::new(store.clone(), self.dir.path())));
        let runtime = runtime_on(Arc::clone(&registry), fake_profile(ProviderKind::Openai, &self.base));
        Replica { store, registry, runtime }
    }

    pub fn person(&self) -> Person {
        Person { actor: self.actor.clone(), group: Group::Editor, scope: self.scope.clone() }
    }

    /// Runs one turn to its end (or pause); answers the session id.
    pub async fn turn(&self, message: &str, session: Option<&str>) -> String {
        let started = self.runtime.start(&self.person(), "editor", message, session, None, None).await.unwrap();
        tokio::time::timeout(Duration::from_secs(30), started.handle).await.unwrap().unwrap();
        started.session_id
    }

    pub async fn page_id(&self, slug: &str) -> String {
        self.store.page_by_slug(&self.scope, slug).await.unwrap().id
    }

    /// Scripts the model's deletePage of `page_id` (a call that pauses the
    /// turn for a person), then whatever follows.
    pub fn delete_page(&self, page_id: &str) {
        let args = serde_json::json!({ "ids": [page_id] }).to_string();
        self.fake.push(openai_stream("I'll archive it.", &[("del_1", "deletePage", &args)]));
    }

    /// Approves, as the person, the request `approval` (an entry of a
    /// paused run's `approvals`).
    pub async fn approve(&self, approval: &serde_json::Value) {
        let id = approval["approvalId"].as_str().unwrap();
        self.registry.approve(&approver(self), id).await.unwrap();
    }

    /// Rejects, as the person, the request `approval`.
    pub async fn reject(&self, approval: &serde_json::Value, reason: Option<&str>) {
        let id = approval["approvalId"].as_str().unwrap();
        self.registry.reject(&approver(self), id, reason).await.unwrap();
    }

    /// Waits until the session's turn has ended (at most 10 s).
    pub async fn wait_idle(&self, session: &str) {
        for _ in 0..200 {
            if self.store.session(&self.scope, session).await.unwrap().status == SessionStatus::Idle {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("session {session} did not end");
    }

    /// The event types of a session, in order.
    pub fn event_types(&self, session: &str) -> Vec<String> {
        self.runtime.events().history(session).iter().map(|e| e.kind().to_string()).collect()
    }
}

/// Another process's store, registry and runtime (see [`Env::replica`]).
pub struct Replica {
    pub store: Store,
    pub registry: Arc<Registry>,
    pub runtime: Arc<Runtime>,
}

/// A runtime over `registry` whose agents run on `profile`.
fn runtime_on(registry: Arc<Registry>, profile: Profile) -> Arc<Runtime> {
    let mut profiles = Profiles::default();
    profiles.insert("default", profile);
    Runtime::new(registry, profiles)
}

/// A person's CallContext for approving.
pub fn approver(env: &Env) -> quire_tools::CallContext {
    quire_tools::CallContext::new(env.actor.clone(), Group::Editor, env.scope.clone(), quire_core::model::Surface::Rest)
}

/// Replaces every UUID in `text` with `[id]` (for snapshots).
pub fn redact_ids(text: &str) -> String {
    let is_id = |s: &str| {
        s.char_indices().all(|(i, c)| if matches!(i, 8 | 13 | 18 | 23) { c == '-' } else { c.is_ascii_hexdigit() })
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if rest.get(..36).is_some_and(is_id) {
            out.push_str("[id]");
            rest = &rest[36..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}
