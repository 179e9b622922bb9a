//! What a tool is: its definition, the context a call runs in, and the shape
//! of its results and errors.

use crate::services::Services;
use crate::subject::Subject;
use quire_core::access::Group;
use quire_core::model::{ChangeContext, Surface};
use quire_store::{Fingerprint, Scope, Store, StoreError};
use serde::Serialize;
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;

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

/// Errors a tool reports to its caller, which can read and repair from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// Arguments or content broke a rule.
    Validation,
    /// No such record.
    NotFound,
    /// Clashes with existing data, or changed since a preview.
    Conflict,
    /// The caller may not do this.
    Forbidden,
    /// A destructive call needs an approval that is missing, expired or used.
    ApprovalRequired,
    /// An outside service failed.
    Upstream,
    /// A limit was hit.
    Limit,
    /// A bug or an unavailable database.
    Internal,
    /// A person rejected the call; it did not run.
    Rejected,
    /// Nobody answered the approval request before it lapsed; it did not run.
    ApprovalExpired,
    /// The call was cut short (its turn was taken over); what it did is said.
    Interrupted,
}

impl ErrorCode {
    /// The wire name (`APPROVAL_REQUIRED`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Validation => "VALIDATION",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::Conflict => "CONFLICT",
            ErrorCode::Forbidden => "FORBIDDEN",
            ErrorCode::ApprovalRequired => "APPROVAL_REQUIRED",
            ErrorCode::Upstream => "UPSTREAM",
            ErrorCode::Limit => "LIMIT",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::Rejected => "REJECTED",
            ErrorCode::ApprovalExpired => "APPROVAL_EXPIRED",
            ErrorCode::Interrupted => "INTERRUPTED",
        }
    }
}

/// A tool's failure: `{ success: false, error, errorCode, hint }`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    /// What kind of failure.
    pub code: ErrorCode,
    /// What went wrong, naming the parameter.
    pub message: String,
    /// What to do about it.
    pub hint: String,
}

impl ToolError {
    /// A new error.
    pub fn new(code: ErrorCode, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self { code, message: message.into(), hint: hint.into() }
    }
    /// A validation error.
    pub fn invalid(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self::new(ErrorCode::Validation, message, hint)
    }
    /// The JSON the caller sees.
    pub fn to_json(&self) -> Value {
        json!({ "success": false, "error": self.message, "errorCode": self.code, "hint": self.hint })
    }
}

impl From<StoreError> for ToolError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { entity, .. } => {
                let hint = format!("List with get{} first and use an id from the results.", getter(entity));
                ToolError::new(ErrorCode::NotFound, e.to_string(), hint)
            }
            StoreError::Validation(errors) => ToolError::new(
                ErrorCode::Validation,
                errors.to_string(),
                "Fix the named fields and call again; nothing was changed.",
            ),
            StoreError::Conflict { message, .. } => {
                ToolError::new(ErrorCode::Conflict, message, "Nothing was changed. Fetch fresh state, then retry.")
            }
            other => {
                tracing::error!(error = %other, "tool failed");
                ToolError::new(ErrorCode::Internal, "internal error", "Try again later; the server log has details.")
            }
        }
    }
}

fn getter(entity: &str) -> &'static str {
    match entity {
        "page" => "Page",
        "section" => "Section",
        "section template" | "sectionTemplate" => "SectionTemplate",
        "entry" => "Entry",
        "collection" => "Post or getEntry",
        "image" => "Image",
        "navigation" | "navItem" => "NavItem",
        "archive" => "Archive",
        _ => "Page",
    }
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
    pub writer: Option<crate::external::SharedWriter>,
}

impl CallContext {
    /// The change-log context of this caller.
    pub fn change_context(&self) -> ChangeContext {
        ChangeContext {
            actor: self.actor.clone(),
            surface: self.surface,
            session_id: self.session_id.clone(),
            turn_id: self.turn_id.clone(),
        }
    }
}

/// Everything an executing tool may use.
pub struct Call<'a> {
    /// The services.
    pub services: &'a Services,
    /// The caller.
    pub ctx: &'a CallContext,
    /// The registry (searchTools reads it).
    pub registry: &'a crate::Registry,
    /// For destructive tools: the fingerprint the approved preview described.
    pub approved: Option<&'a Fingerprint>,
}

impl Call<'_> {
    /// The store.
    pub fn store(&self) -> &Store {
        &self.services.store
    }
    /// The scope.
    pub fn scope(&self) -> &Scope {
        &self.ctx.scope
    }
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

/// One tool, fully described. The registry lists these; nothing else defines
/// tool metadata.
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
    pub phrases: &'static [&'static str],
    /// JSON Schema of the arguments, generated from the Rust argument type.
    pub input_schema: fn() -> Value,
    /// Runs the tool.
    pub execute: for<'a> fn(&'a Call<'a>, Value) -> ToolFuture<'a>,
    /// For destructive tools: what the call would do.
    pub preview: Option<for<'a> fn(&'a Call<'a>, Value) -> PreviewFuture<'a>>,
}

impl Tool {
    /// Whether a call sends data out of Quire (httpPost): nothing can take
    /// it back, so it always waits for a person's explicit approval,
    /// whatever the caller's approval policy.
    pub fn sends_out(&self) -> bool {
        self.category == Category::External && self.destructive
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
