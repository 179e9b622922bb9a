//! A runtime over a fresh database with the demo site, talking to a fake provider.

#![allow(dead_code)]

pub use quire_agent::testing::*;
use quire_agent::{Person, Profile, Profiles, ProviderKind, Runtime};
use quire_core::access::Group;
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
        let fake = Fake::default();
        let base = serve(fake.clone()).await;
        let mut p = Profile::new(kind);
        p.base_url = Some(match kind {
            ProviderKind::Openai => format!("{base}/v1"),
            ProviderKind::Anthropic => base.clone(),
        });
        p.api_key = Some("test-key".into());
        p.model = Some("fake-model".into());
        p.backoff_ms = 5;
        p.timeout_secs = 10;
        let mut profiles = Profiles::default();
        profiles.insert("default", profile(p));
        let runtime = Runtime::new(Arc::clone(&registry), profiles);
        let actor = format!("token:{}", editor_token(&store).await);
        Env { store, scope, registry, runtime, fake, model: Scripted::default(), base, dir, actor }
    }

    /// A second runtime over the same database, as after a restart.
    pub fn restarted(&self) -> Arc<Runtime> {
        let registry = Arc::new(Registry::new(Services::new(self.store.clone(), self.dir.path())));
        let mut p = Profile::new(ProviderKind::Openai);
        p.base_url = Some(format!("{}/v1", self.base));
        p.model = Some("fake-model".into());
        p.backoff_ms = 5;
        let mut profiles = Profiles::default();
        profiles.insert("default", p);
        Runtime::new(registry, profiles)
    }

    /// Another process over the same database (a replica on one
    /// PostgreSQL, or a second process on one SQLite file), with the same
    /// model: its own store handle, registry and runtime.
    pub async fn replica(&self) -> Replica {
        let store = Store::open_at(self.store.location().clone()).await.unwrap();
        let registry = Arc::new(Registry::new(Services::new(store.clone(), self.dir.path())));
        let mut p = Profile::new(ProviderKind::Openai);
        p.base_url = Some(format!("{}/v1", self.base));
        p.api_key = Some("test-key".into());
        p.model = Some("fake-model".into());
        p.backoff_ms = 5;
        p.timeout_secs = 120;
        let mut profiles = Profiles::default();
        profiles.insert("default", p);
        let runtime = Runtime::new(Arc::clone(&registry), profiles);
        Replica { store, registry, runtime }
    }

    pub fn person(&self) -> Person {
        Person { actor: self.actor.clone(), group: Group::Editor, scope: self.scope.clone() }
    }

    /// Runs one turn to its end (or pause); answers the session id.
    pub async fn turn(&self, message: &str, session: Option<&str>) -> String {
        let started = self.runtime.start(&self.person(), "editor", message, session, None).await.unwrap();
        tokio::time::timeout(Duration::from_secs(30), started.handle).await.unwrap().unwrap();
        started.session_id
    }

    pub async fn page_id(&self, slug: &str) -> String {
        self.store.page_by_slug(&self.scope, slug).await.unwrap().id
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

/// Creates an editor token of the demo site; answers its id.
pub async fn editor_token(store: &Store) -> String {
    let (info, _) = store
        .create_token(quire_store::NewToken {
            name: "chat".into(),
            group: Group::Editor,
            site: "demo".into(),
            environments: None,
            expires_at: None,
            secret: None,
            approval_policy: None,
            user_id: None,
        })
        .await
        .unwrap();
    info.id
}

/// A person's CallContext for approving.
pub fn approver(env: &Env) -> quire_tools::CallContext {
    quire_tools::CallContext {
        actor: env.actor.clone(),
        group: Group::Editor,
        scope: env.scope.clone(),
        surface: quire_core::model::Surface::Rest,
        session_id: None,
        turn_id: None,
        policy: quire_tools::ApprovalPolicy::User,
        writer: None,
    }
}

/// Replaces every UUID in `text` with `[id]` (for snapshots).
pub fn redact_ids(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let shape = [8, 4, 4, 4, 12];
    while i < bytes.len() {
        let mut j = i;
        let mut ok = true;
        for (n, len) in shape.iter().enumerate() {
            for _ in 0..*len {
                if j < bytes.len() && bytes[j].is_ascii_hexdigit() {
                    j += 1;
                } else {
                    ok = false;
                    break;
                }
            }
            if !ok {
                break;
            }
            if n < 4 {
                if j < bytes.len() && bytes[j] == b'-' {
                    j += 1;
                } else {
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            out.push_str("[id]");
            i = j;
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}
