//! How a tool fails: the codes a caller can act on and the error every
//! tool answers, `{ success: false, error, errorCode, hint }`, with the
//! store's errors mapped to it once.

use quire_store::StoreError;
use serde::Serialize;
use serde_json::{Value, json};

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
        "agent" => "Agent",
        "context" => "Context",
        "workspace" => "Workspace",
        _ => "Page",
    }
}
