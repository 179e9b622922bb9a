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
    /// No such record in the actor's scope (or none they may see).
    NotFound,
    /// The actor may not do this.
    Forbidden,
    /// The state does not allow it now (busy, changed since, nothing to do).
    Conflict,
    /// A destructive call's approval is missing, expired or used.
    ApprovalRequired,
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
}

/// A use case's answer.
pub type AppResult<T> = Result<T, AppError>;

impl AppError {
    /// A new error.
    pub fn new(failure: Failure, message: impl Into<String>) -> Self {
        Self { failure, message: message.into(), field: None }
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
            StoreError::Validation(errors) => Self {
                failure: Failure::Invalid,
                field: Some(errors.first().field.clone()),
                message: errors.to_string(),
            },
            StoreError::Conflict { message, field } => Self { failure: Failure::Conflict, message, field },
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
            AgentError::Invalid { field, message } => {
                Self { failure: Failure::Invalid, message: format!("{field}: {message}"), field: Some(field.into()) }
            }
            AgentError::Store(e) => e.into(),
            AgentError::Internal(m) => Self::new(Failure::Internal, m),
        }
    }
}
