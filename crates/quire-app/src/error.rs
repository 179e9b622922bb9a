//! The one error of the use cases: a kind every edge maps once (an HTTP
//! status, a CLI message), the words, and the field at fault.

use quire_agent::AgentError;
use quire_store::StoreError;
use quire_tools::{ErrorCode, ToolError};

/// What kind of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The input broke a rule (names its field).
    Invalid,
    /// The request itself is malformed, not its content (a listing's
    /// cursor that is not one of ours).
    Malformed,
    /// No such record in the actor's scope (or none they may see).
    NotFound,
    /// The actor may not do this.
    Forbidden,
    /// The state does not allow it now (busy, changed since, nothing to do).
    Conflict,
    /// A destructive call's approval is missing, expired or used.
    ApprovalRequired,
    /// Over a fair-use limit: tried again after `retry_after` seconds it
    /// may pass.
    Limited,
    /// A bug, or a store that failed.
    Internal,
}

/// A use case's refusal or failure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct AppError {
    /// What kind.
    pub failure: Failure,
    /// What went wrong, in words.
    pub message: String,
    /// The field at fault, when the input is.
    pub field: Option<String>,
    /// Every rule the input broke, when it broke more than one.
    pub details: Vec<quire_core::FieldError>,
    /// For [`Failure::Limited`]: the seconds until it may pass.
    pub retry_after: Option<u64>,
}

/// A use case's answer.
pub type AppResult<T> = Result<T, AppError>;

impl AppError {
    /// A new error.
    pub fn new(failure: Failure, message: impl Into<String>) -> Self {
        Self { failure, message: message.into(), field: None, details: Vec::new(), retry_after: None }
    }

    /// The actor may not do this.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(Failure::Forbidden, message)
    }

    /// No such record.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(Failure::NotFound, message)
    }

    /// Not now.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(Failure::Conflict, message)
    }

    /// Over a fair-use limit for `seconds` more.
    pub fn limited(message: impl Into<String>, seconds: u64) -> Self {
        Self { retry_after: Some(seconds.max(1)), ..Self::new(Failure::Limited, message) }
    }

    /// The input broke a rule of `field`.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { field: Some(field.into()), ..Self::new(Failure::Invalid, message) }
    }
}

impl From<ToolError> for AppError {
    fn from(e: ToolError) -> Self {
        let failure = match e.code {
            ErrorCode::Validation => Failure::Invalid,
            ErrorCode::NotFound => Failure::NotFound,
            ErrorCode::Forbidden => Failure::Forbidden,
            ErrorCode::Conflict | ErrorCode::Limit | ErrorCode::Upstream => Failure::Conflict,
            ErrorCode::ApprovalRequired | ErrorCode::ApprovalExpired => Failure::ApprovalRequired,
            ErrorCode::Rejected | ErrorCode::Interrupted => Failure::Conflict,
            ErrorCode::Internal => Failure::Internal,
        };
        Self::new(failure, e.message)
    }
}

impl From<StoreError> for AppError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { .. } => Self::not_found(e.to_string()),
            StoreError::Validation(errors) => {
                let first = errors.first().clone();
                // A cursor is not content: a bad one is a malformed request.
                let failure = if first.field == "cursor" { Failure::Malformed } else { Failure::Invalid };
                let message = errors.to_string();
                Self {
                    field: Some(first.field),
                    details: if errors.0.len() > 1 { errors.0 } else { Vec::new() },
                    ..Self::new(failure, message)
                }
            }
            StoreError::Conflict { message, field } => Self { field, ..Self::conflict(message) },
            other => Self::new(Failure::Internal, other.to_string()),
        }
    }
}

impl From<AgentError> for AppError {
    fn from(e: AgentError) -> Self {
        match e {
            AgentError::NotFound(m) => Self::not_found(m),
            AgentError::Forbidden(m) => Self::forbidden(m),
            AgentError::Conflict(m) => Self::conflict(m),
            AgentError::Invalid { field, message } => Self::invalid(field, format!("{field}: {message}")),
            AgentError::Store(e) => e.into(),
            AgentError::Limited { message, retry_after } => Self::limited(message, retry_after),
            AgentError::Internal(m) => Self::new(Failure::Internal, m),
        }
    }
}
