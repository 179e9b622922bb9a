//! What a tool is: its definition, the context a call runs in, and the shape
//! of its results. Its errors are [`crate::error`]'s, named here too, so a
//! tool module finds everything it defines a tool with in one place.

pub use crate::error::{ErrorCode, ToolError};
use crate::services::Services;
use crate::settings::SharedWriter;
use crate::subject::Subject;
use quire_core::access::{Group, Principal, Reach, ToolAccess};
use quire_core::model::{ChangeContext, Publishing, Surface};
use quire_store::{Fingerprint, Scope, Store};
use serde::Serialize;
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Where a tool belongs: always-active defaults, internal content tools, or
/// tools that reach outside the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// Always active (searchTools, acknowledgeRequest, finalAnswer).
    Default,
    /// Works on this site's content.
    Internal,
    /// Reaches the internet.
    External,
}

impl Category {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Default => "default",
            Category::Internal => "internal",
            Category::External => "external",
        }
    }
}

/// How much harm a wrong call can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Reads, or talks to the user.
    Safe,
    /// Creates or changes content.
    Moderate,
    /// Archives or restores content, or sends data out.
    High,
}

/// How a destructive call gets its go-ahead (never conversationally for
/// tools that send data out, [`Tool::sends_out`]).
pub use quire_core::model::ApprovalPolicy;

/// Who is calling, from where, in which scope. Never built from tool arguments.
#[derive(Debug, Clone)]
pub struct CallContext {
    /// `token:<id>`, `user:<id>` or `local:admin`.
    pub actor: String,
    /// The caller's group.
    pub group: Group,
    /// Site and environment every read and write is confined to.
    pub scope: Scope,
    /// The surface of the call.
    pub surface: Surface,
    /// Agent (or MCP) session.
    pub session_id: Option<String>,
    /// Agent turn.
    pub turn_id: Option<String>,
    /// How destructive calls are approved for this caller.
    pub policy: ApprovalPolicy,
    /// The calling agent's own model, for tools that write with a model
    /// (deep search); none outside a turn, where the default profile's
    /// model writes.
    pub writer: Option<SharedWriter>,
    /// Where a long call reports how far it got, when the surface shows it
    /// (MCP, for a client that gave a progress token); none otherwise.
    pub progress: Option<Progress>,
    /// How its writes reach the public site: separately (publishing is its
    /// own, approved call), or directly for an agent in direct mode.
    pub publishing: Publishing,
    /// For an agent in release mode: the release its turn stages in.
    pub staging: Option<quire_store::Staging>,
}

impl CallContext {
    /// A call by `actor` of `group` in `scope` through `surface`, outside
    /// any session, whose destructive calls a person approves one by one,
    /// with no model of its own; change the rest with struct update syntax.
    pub fn new(actor: impl Into<String>, group: Group, scope: Scope, surface: Surface) -> Self {
        Self {
            actor: actor.into(),
            group,
            scope,
            surface,
            session_id: None,
            turn_id: None,
            policy: ApprovalPolicy::User,
            writer: None,
            progress: None,
            publishing: Publishing::Separately,
            staging: None,
        }
    }

    /// Who calls, as the access rules see them.
    pub fn principal(&self) -> Principal<'_> {
        Principal { actor: &self.actor, group: self.group, surface: self.surface }
    }

    /// The change-log context of this caller.
    pub fn change_context(&self) -> ChangeContext {
        ChangeContext {
            actor: self.actor.clone(),
            surface: self.surface,
            session_id: self.session_id.clone(),
            turn_id: self.turn_id.clone(),
            publishing: self.publishing,
        }
    }
}

/// How far a long call got: `done` of `total` steps (when known), and what
/// was just done, in words a person reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressUpdate {
    /// Steps done so far.
    pub done: u64,
    /// Steps in all, when known.
    pub total: Option<u64>,
    /// What was just done (`fetched https://example.com`).
    pub message: String,
}

/// The channel a long call reports its progress through. A surface that
/// shows progress puts one in the [`CallContext`]; tools report with
/// [`Call::progress`], and nothing happens when the context has none.
#[derive(Clone)]
pub struct Progress(Arc<dyn Fn(ProgressUpdate) + Send + Sync>);

impl Progress {
    /// A channel that hands each update to `report` (which must not block:
    /// it runs inside the tool's call).
    pub fn new(report: impl Fn(ProgressUpdate) + Send + Sync + 'static) -> Self {
        Self(Arc::new(report))
    }

    /// Reports `done` of `total` steps.
    pub fn report(&self, done: u64, total: Option<u64>, message: impl Into<String>) {
        (self.0)(ProgressUpdate { done, total, message: message.into() });
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

/// Everything an executing tool may use.
pub struct Call<'a> {
    /// The services.
    pub services: &'a Services,
    /// The caller.
    pub ctx: &'a CallContext,
    /// The registry the call runs in (searchTools finds and activates
    /// tools through it).
    pub registry: &'a dyn ToolSearch,
    /// For destructive tools: the fingerprint the approved preview described.
    pub approved: Option<&'a Fingerprint>,
    /// The store as this call sees it, in release mode (see [`Call::new`]).
    staged: Option<Store>,
}

impl<'a> Call<'a> {
    /// A call of `tool`. For a caller that stages its work in a release,
    /// a tool of pages, sections, posts, entries, menus or archives reads
    /// and writes through the release laid over the working copies.
    pub fn new(
        services: &'a Services,
        ctx: &'a CallContext,
        registry: &'a dyn ToolSearch,
        approved: Option<&'a Fingerprint>,
        tool: &Tool,
    ) -> Self {
        let staged = ctx.staging.clone().filter(|_| tool.stages()).map(|s| services.store.staged(s));
        Call { services, ctx, registry, approved, staged }
    }

    /// The store (through the release, for a call that stages).
    pub fn store(&self) -> &Store {
        self.staged.as_ref().unwrap_or(&self.services.store)
    }
    /// The scope.
    pub fn scope(&self) -> &Scope {
        &self.ctx.scope
    }
    /// Reports how far a long call got, if its caller follows progress.
    pub fn progress(&self, done: u64, total: Option<u64>, message: impl Into<String>) {
        if let Some(progress) = &self.ctx.progress {
            progress.report(done, total, message);
        }
    }
}

/// What searchTools asks of the registry a call runs in. A trait, so that
/// a tool's definition does not name the registry that lists it.
pub trait ToolSearch: Sync {
    /// Every tool, in the catalog's order.
    fn tools(&self) -> &[Tool];
    /// Tools ranked for a capability query, best first.
    fn search(&self, query: &str) -> Vec<&Tool>;
    /// Marks tools active for a session.
    fn activate(&self, session: &str, names: &[&'static str]);
}

/// The result of a tool: its JSON answer or an error.
pub type ToolResult = Result<Value, ToolError>;

/// A boxed future of a tool result.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>>;

/// What a destructive tool would do, computed without changing anything.
#[derive(Debug, Clone)]
pub struct Preview {
    /// One sentence for the person who approves.
    pub message: String,
    /// Exactly what would be archived or restored, cascade included.
    pub items: Value,
    /// Versions of those records now.
    pub fingerprint: Fingerprint,
}

/// A boxed future of a preview.
pub type PreviewFuture<'a> = Pin<Box<dyn Future<Output = Result<Preview, ToolError>> + Send + 'a>>;

/// What calling a tool does. It decides the tool's risk and flags, so a
/// definition cannot be read-only and destructive at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Changes nothing (reads, or talks to the user): safe, idempotent.
    ReadOnly,
    /// Adds what harms nothing (a folder, a copy of a note): safe, but a
    /// second call adds again.
    SafeWrite,
    /// Creates or changes content, again at every call (a create, a line
    /// edit): moderate.
    Write,
    /// Sets what the call names, so a second call changes nothing more (an
    /// update): moderate, idempotent.
    IdempotentWrite,
    /// Archives, restores or sends data out: high, previewed, and run only
    /// once a person approves.
    Destructive,
}

/// One tool, fully described. The registry lists these; nothing else defines
/// tool metadata. Serialised, a tool is what clients list: its metadata,
/// without the phrases and the code.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// camelCase name (`getPage`).
    pub name: &'static str,
    /// What the model reads to choose: `<verb> <entity>. <scope>. <behaviour>. <returns>.`
    pub description: &'static str,
    /// The gotcha injected while the tool is active (~20 tokens).
    pub guidance: &'static str,
    /// default, internal or external.
    pub category: Category,
    /// What it works on (`page`).
    pub entity: Subject,
    /// safe, moderate or high.
    pub risk: Risk,
    /// Archives, restores or sends data out: needs approval.
    pub destructive: bool,
    /// Calling twice with the same arguments has the effect of calling once.
    pub idempotent: bool,
    /// Changes nothing.
    pub read_only: bool,
    /// Keywords for search.
    pub tags: &'static [&'static str],
    /// Phrases a user might say for this capability.
    #[serde(skip)]
    pub phrases: &'static [&'static str],
    /// JSON Schema of the arguments, generated from the Rust argument type.
    #[serde(skip)]
    pub input_schema: fn() -> Value,
    /// Runs the tool.
    #[serde(skip)]
    pub execute: for<'a> fn(&'a Call<'a>, Value) -> ToolFuture<'a>,
    /// For destructive tools: what the call would do.
    #[serde(skip)]
    pub preview: Option<for<'a> fn(&'a Call<'a>, Value) -> PreviewFuture<'a>>,
}

impl Tool {
    /// Where a tool belongs, what it works on and what calling it does: the
    /// base of a definition, which names and describes the tool and gives
    /// its functions (`Tool { name: "getPage", …, ..Tool::base(…) }`).
    /// Until then it has no name and does nothing; the catalog's tests
    /// refuse a tool without a name, description, guidance or schema.
    pub fn base(category: Category, entity: Subject, effect: Effect) -> Tool {
        let (risk, idempotent) = match effect {
            Effect::ReadOnly => (Risk::Safe, true),
            Effect::SafeWrite => (Risk::Safe, false),
            Effect::Write => (Risk::Moderate, false),
            Effect::IdempotentWrite => (Risk::Moderate, true),
            Effect::Destructive => (Risk::High, false),
        };
        Tool {
            name: "",
            description: "",
            guidance: "",
            category,
            entity,
            risk,
            destructive: effect == Effect::Destructive,
            idempotent,
            read_only: effect == Effect::ReadOnly,
            tags: &[],
            phrases: &[],
            input_schema: || Value::Null,
            execute: |_, _| {
                Box::pin(async {
                    Err(ToolError::new(ErrorCode::Internal, "this tool does nothing", "Report it as a bug."))
                })
            },
            preview: None,
        }
    }

    /// Whether, for a caller in release mode, the tool works in the release:
    /// a tool of pages, sections, posts, entries, menus or archives.
    pub fn stages(&self) -> bool {
        use quire_core::model::EntityKind as K;
        matches!(
            self.entity,
            Subject::Record(K::Page | K::Section | K::Entry | K::Navigation | K::NavItem)
                | Subject::Post
                | Subject::Archive
        )
    }

    /// Whether a call sends data out of Quire (httpPost): nothing can take
    /// it back, so it always waits for a person's explicit approval,
    /// whatever the caller's approval policy.
    pub fn sends_out(&self) -> bool {
        self.category == Category::External && self.destructive
    }

    /// The tool as the access rules see it.
    pub fn access(&self) -> ToolAccess<'_> {
        ToolAccess {
            name: self.name,
            reach: match self.category {
                Category::Default => Reach::Always,
                Category::Internal => Reach::Site,
                Category::External => Reach::Internet,
            },
            read_only: self.read_only,
            destructive: self.destructive,
            record: self.entity.record(),
        }
    }
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool").field("name", &self.name).finish()
    }
}

/// `{ success, count, items }` (plus `nextCursor` when there is more).
pub fn items_result(items: Vec<Value>, next_cursor: Option<String>) -> Value {
    let mut out = json!({ "success": true, "count": items.len(), "items": items });
    if let Some(c) = next_cursor {
        out["nextCursor"] = Value::String(c);
    }
    out
}

/// `{ success, item, message }`.
pub fn item_result(item: Value, message: impl Into<String>) -> Value {
    json!({ "success": true, "item": item, "message": message.into() })
}
