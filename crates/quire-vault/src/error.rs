//! The one error type of the vault: every message names the parameter at fault and says what is wrong with it.

use std::fmt;
use std::io;

/// The tool parameter an error is about, spelled as the tools spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Param {
    /// `path`: the note or folder an operation works on.
    Path,
    /// `newPath`: the destination of a move or copy.
    NewPath,
    /// `startLine`: the first line of a read or an edit.
    StartLine,
    /// `endLine`: the last line (inclusive) of a read or an edit.
    EndLine,
    /// `content`: the text to write or insert.
    Content,
    /// `filter`: the glob pattern of a listing.
    Filter,
    /// `query`: the words of a search.
    Query,
}

impl Param {
    /// The parameter's name as it appears in tool schemas (`newPath`, `startLine`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Param::Path => "path",
            Param::NewPath => "newPath",
            Param::StartLine => "startLine",
            Param::EndLine => "endLine",
            Param::Content => "content",
            Param::Filter => "filter",
            Param::Query => "query",
        }
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What sort of failure an error is, so a caller can map it to a status once (422 / 404 / 409 / 500).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The request itself is wrong: a path that leaves the vault, a line number out of range, a folder where a note
    /// was expected, a binary or oversized file.
    InvalidInput,
    /// The named note or folder does not exist.
    NotFound,
    /// The destination already exists and the operation will not replace it.
    Conflict,
    /// The file system failed (permissions, disk full, …).
    Io,
}

/// An error from a vault operation.
///
/// `Display` gives the whole message, starting with the parameter name: `path: "notes/a.md" does not exist`.
/// Messages name paths relative to the vault and never reveal where the vault lives on disk.
#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    /// See [`ErrorKind::InvalidInput`].
    #[error("{field}: {message}")]
    InvalidInput {
        /// The parameter at fault.
        field: Param,
        /// What is wrong with it.
        message: String,
    },
    /// See [`ErrorKind::NotFound`].
    #[error("{field}: {message}")]
    NotFound {
        /// The parameter at fault.
        field: Param,
        /// What is missing.
        message: String,
    },
    /// See [`ErrorKind::Conflict`].
    #[error("{field}: {message}")]
    Conflict {
        /// The parameter at fault.
        field: Param,
        /// What is in the way.
        message: String,
    },
    /// See [`ErrorKind::Io`].
    #[error("{context}: {source}")]
    Io {
        /// The parameter whose file failed, when there is one.
        field: Option<Param>,
        /// What was being done, e.g. `could not write "notes/a.md"`.
        context: String,
        /// The underlying failure.
        #[source]
        source: io::Error,
    },
}

impl VaultError {
    /// Which parameter the error is about: `"path"`, `"newPath"`, `"startLine"`, `"endLine"`, `"content"`,
    /// `"filter"` or `"query"`.
    pub fn field(&self) -> Option<&'static str> {
        self.param().map(Param::as_str)
    }

    /// The parameter the error is about, as a [`Param`].
    pub fn param(&self) -> Option<Param> {
        match self {
            VaultError::InvalidInput { field, .. } | VaultError::NotFound { field, .. } => Some(*field),
            VaultError::Conflict { field, .. } => Some(*field),
            VaultError::Io { field, .. } => *field,
        }
    }

    /// The sort of failure, for mapping to a status code.
    pub fn kind(&self) -> ErrorKind {
        match self {
            VaultError::InvalidInput { .. } => ErrorKind::InvalidInput,
            VaultError::NotFound { .. } => ErrorKind::NotFound,
            VaultError::Conflict { .. } => ErrorKind::Conflict,
            VaultError::Io { .. } => ErrorKind::Io,
        }
    }

    pub(crate) fn invalid(field: Param, message: impl Into<String>) -> Self {
        VaultError::InvalidInput { field, message: message.into() }
    }

    pub(crate) fn not_found(field: Param, message: impl Into<String>) -> Self {
        VaultError::NotFound { field, message: message.into() }
    }

    pub(crate) fn conflict(field: Param, message: impl Into<String>) -> Self {
        VaultError::Conflict { field, message: message.into() }
    }

    pub(crate) fn io(field: Option<Param>, context: impl Into<String>, source: io::Error) -> Self {
        VaultError::Io { field, context: context.into(), source }
    }
}
