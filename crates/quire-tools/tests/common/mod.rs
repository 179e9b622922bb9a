//! A registry over a fresh database with the demo site.

#![allow(dead_code)]

use quire_core::access::Group;
use quire_core::model::Surface;
use quire_store::seed::seed_demo;
use quire_store::{Scope, Store};
use quire_tools::{ApprovalPolicy, CallContext, Registry, Services};
use serde_json::Value;

pub struct Env {
    pub registry: Registry,
    pub store: Store,
    pub scope: Scope,
    pub dir: tempfile::TempDir,
}

impl Env {
    pub async fn new() -> Self {
        Self::with(|r| r).await
    }

    pub async fn with(configure: impl FnOnce(Registry) -> Registry) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = quire_store::testing::open(dir.path()).await.unwrap();
        let scope = seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
        let registry = configure(Registry::new(Services::new(store.clone(), dir.path())));
        Self { registry, store, scope, dir }
    }

    pub fn ctx(&self, group: Group) -> CallContext {
        user(&self.scope, group)
    }

    pub fn agent(&self, session: &str, policy: ApprovalPolicy) -> CallContext {
        CallContext {
            session_id: Some(session.into()),
            turn_id: Some("1".into()),
            policy,
            ..CallContext::new("agent:editor", Group::Editor, self.scope.clone(), Surface::Agent)
        }
    }

    pub async fn call(&self, name: &str, args: Value) -> Value {
        self.call_as(&self.ctx(Group::Admin), name, args).await
    }

    /// Calls a tool and holds its answer to the tool's declared output
    /// schema, so every call of every test checks that schema too.
    pub async fn call_as(&self, ctx: &CallContext, name: &str, args: Value) -> Value {
        let result = self.registry.call(ctx, name, args).await;
        conforms(&self.registry, name, &result);
        result
    }

    pub async fn page_id(&self, slug: &str) -> String {
        self.store.page_by_slug(&self.scope, slug).await.unwrap().id
    }
}

/// A person of `group` calling from the command line, in `scope`.
pub fn user(scope: &Scope, group: Group) -> CallContext {
    CallContext::new(format!("user:{}", group.as_str()), group, scope.clone(), Surface::Cli)
}

/// Asserts success and returns the value.
#[track_caller]
pub fn ok(v: Value) -> Value {
    assert_eq!(v["success"], true, "expected success: {v}");
    v
}

/// Asserts a failure with `code` and returns the error message.
#[track_caller]
pub fn fails(v: &Value, code: &str) -> String {
    assert_eq!(v["success"], false, "expected failure: {v}");
    assert_eq!(v["errorCode"], code, "{v}");
    assert!(v["hint"].as_str().is_some_and(|h| !h.is_empty()), "errors carry a hint: {v}");
    v["error"].as_str().unwrap().to_string()
}

/// Asserts that `result` matches the output schema `name` declares.
#[track_caller]
pub fn conforms(registry: &Registry, name: &str, result: &Value) {
    if let Some(schema) = registry.output_schema(name) {
        let problems = quire_tools::output::violations(schema, result);
        assert!(problems.is_empty(), "{name} answered outside its output schema: {problems:?}\n{result}");
    }
}
