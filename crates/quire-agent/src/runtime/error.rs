//! The runtime's errors: why a request was refused ([`AgentError`], the
//! public one), why a running turn stopped (`LoopError`) and why a tool
//! call of the model did not run as asked (`CallError`, told to the model).

use quire_store::StoreError;
use quire_tools::{ErrorCode, ToolError};
use serde_json::Value;

/// Why a chat request was refused.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// No such agent or session in the scope.
    #[error("{0}")]
    NotFound(String),
    /// The person may not use this agent or session.
    #[error("{0}")]
    Forbidden(String),
    /// The session is busy or waiting for approvals.
    #[error("{0}")]
    Conflict(String),
    /// A field of the request is wrong.
    #[error("{field}: {message}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// Over a fair-use limit ([`crate::runtime::FairUse`]).
    #[error("{message}")]
    Limited {
        /// Which limit, and when it passes, in words.
        message: String,
        /// Seconds until it may pass.
        retry_after: u64,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Something that is not the caller's fault (a vault that cannot be read).
    #[error("{0}")]
    Internal(String),
}

/// Why a running turn stopped before its end. Its words reach the person
/// as the run's `RUN_ERROR` message, except a take-over's: that run ends
/// without a word.
#[derive(Debug, thiserror::Error)]
pub(super) enum LoopError {
    /// Another process took the turn over (this one was silent too long):
    /// it runs the turn now, and this one stops.
    #[error("session {session} is not run by this process (another took its turn over)")]
    TakenOver {
        /// The session.
        session: String,
    },
    /// The token or person that started the session may no longer act.
    #[error(
        "the token or person that started this session was revoked, has expired or was disabled; nothing more runs"
    )]
    Revoked,
    /// The model could not be reached or answered an error, or its client
    /// could not be built.
    #[error(transparent)]
    Model(#[from] crate::ProviderError),
    /// The store failed.
    #[error(transparent)]
    Store(StoreError),
}

impl LoopError {
    /// The `code` of the run's `RUN_ERROR`.
    pub(super) fn code(&self) -> &'static str {
        match self {
            LoopError::TakenOver { .. } => "TAKEN_OVER",
            LoopError::Revoked => "REVOKED",
            LoopError::Model(_) => "MODEL_ERROR",
            LoopError::Store(_) => "STORE_ERROR",
        }
    }
}

impl From<StoreError> for LoopError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::TakenOver { session } => LoopError::TakenOver { session },
            e => LoopError::Store(e),
        }
    }
}

/// Why a tool call of the model did not run as asked. The model reads it
/// as the call's result (`{ success: false, error, errorCode, hint }`).
#[derive(Debug, thiserror::Error)]
pub(super) enum CallError {
    /// No tool of that name.
    #[error("no tool named \"{0}\"")]
    UnknownTool(String),
    /// The tool exists but the agent may not use it.
    #[error("tool {tool} is not enabled for agent {agent}")]
    NotEnabled {
        /// The tool.
        tool: &'static str,
        /// The agent's alias.
        agent: String,
    },
    /// The arguments are not JSON.
    #[error("arguments are not valid JSON: {0}")]
    BadArguments(#[from] serde_json::Error),
    /// A person rejected the call.
    #[error("{by} rejected this call{}", .reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default())]
    Rejected {
        /// Who rejected it.
        by: String,
        /// Why, when they said.
        reason: Option<String>,
    },
    /// Nobody answered the approval request in time.
    #[error("nobody answered the approval request before it expired; nothing changed")]
    Expired,
    /// The process running the call stopped before its result was written.
    #[error("the process running this call stopped; it may or may not have taken effect")]
    Interrupted,
    /// The turn was undone while the call waited for approval.
    #[error("the turn was undone before this call was approved; nothing changed")]
    Undone,
}

impl CallError {
    /// The code the result carries.
    fn code(&self) -> ErrorCode {
        match self {
            CallError::UnknownTool(_) => ErrorCode::NotFound,
            CallError::NotEnabled { .. } => ErrorCode::Forbidden,
            CallError::BadArguments(_) => ErrorCode::Validation,
            CallError::Rejected { .. } | CallError::Undone => ErrorCode::Rejected,
            CallError::Expired => ErrorCode::ApprovalExpired,
            CallError::Interrupted => ErrorCode::Interrupted,
        }
    }

    /// What the model should do about it.
    fn hint(&self) -> &'static str {
        match self {
            CallError::UnknownTool(_) => "Use searchTools to find the right tool name.",
            CallError::NotEnabled { .. } => "Use the tools you have, or tell the user this agent cannot do it.",
            CallError::BadArguments(_) => "Send the arguments as one JSON object matching the schema.",
            CallError::Rejected { .. } => {
                "Nothing changed. Do not retry the same call; tell the user and ask what they want instead."
            }
            CallError::Expired => "Tell the user; call the tool again if they still want it.",
            CallError::Interrupted => "Check the record before calling again.",
            CallError::Undone => "Do not retry; the user undid this request.",
        }
    }

    /// The call's result, as the model reads it.
    pub(super) fn to_json(&self) -> Value {
        ToolError::new(self.code(), self.to_string(), self.hint()).to_json()
    }
}

/// A tool-layer failure (vault notes) as the runtime's error.
pub(super) fn tool_failure(e: ToolError) -> AgentError {
    match e.code {
        ErrorCode::NotFound => AgentError::NotFound(e.message),
        ErrorCode::Forbidden => AgentError::Forbidden(e.message),
        ErrorCode::Validation => AgentError::Invalid { field: "turn", message: e.message },
        ErrorCode::Internal => AgentError::Internal(e.message),
        _ => AgentError::Conflict(e.message),
    }
}

/// A record the store may not have: none when it has not.
pub(super) fn found<T>(read: Result<T, StoreError>) -> Result<Option<T>, StoreError> {
    match read {
        Ok(record) => Ok(Some(record)),
        Err(StoreError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}
