//! The store's errors: what went wrong in the caller's terms.

use quire_core::{FieldError, ValidationErrors};

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No live record of that kind with that id (or slug) in the scope.
    #[error("{entity} {id} not found")]
    NotFound {
        /// Kind of record.
        entity: &'static str,
        /// The id or slug asked for.
        id: String,
    },
    /// The input broke one or more rules; nothing was changed.
    #[error("{0}")]
    Validation(ValidationErrors),
    /// The write would clash with existing data (a slug in use, a stale
    /// version, an archive already restored); nothing was changed.
    #[error("{message}")]
    Conflict {
        /// What clashes, in words.
        message: String,
        /// The field at fault, when there is one.
        field: Option<String>,
    },
    /// A step of an agent's turn was refused because another process took
    /// the turn over (its runner is no longer this process); nothing was
    /// written.
    #[error("session {session} is not run by this process (another took its turn over)")]
    TakenOver {
        /// The session whose turn was taken over.
        session: String,
    },
    /// The database failed.
    #[error("database error: {0}")]
    Database(DatabaseError),
    /// Migrations failed.
    #[error("migration error: {0}")]
    Migration(DatabaseError),
    /// Stored data could not be decoded (a bug or a hand-edited database).
    #[error("corrupt stored data: {0}")]
    Corrupt(String),
}

/// What the database driver reported. The driver's own error type stays
/// inside the store, so no caller depends on the backend: they read the
/// message (and, for logs, `source()`).
#[derive(Debug)]
pub struct DatabaseError {
    source: Box<dyn std::error::Error + Send + Sync>,
    unique: bool,
}

impl DatabaseError {
    pub(crate) fn new(source: Box<dyn std::error::Error + Send + Sync>, unique: bool) -> Self {
        DatabaseError { source, unique }
    }
}

impl std::fmt::Display for DatabaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.source.fmt(f)
    }
}

impl std::error::Error for DatabaseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.source.as_ref())
    }
}

impl StoreError {
    /// A not-found error.
    pub fn not_found(entity: &'static str, id: impl Into<String>) -> Self {
        StoreError::NotFound { entity, id: id.into() }
    }
    /// A single-field validation error.
    pub fn invalid(field: impl Into<String>, rule: impl Into<String>) -> Self {
        StoreError::Validation(ValidationErrors::one(field, rule))
    }
    /// Whether the database refused a row whose unique key is taken.
    pub(crate) fn is_unique_violation(&self) -> bool {
        matches!(self, StoreError::Database(DatabaseError { unique: true, .. }))
    }
    /// A conflict on `field`.
    pub fn conflict(field: Option<&str>, message: impl Into<String>) -> Self {
        StoreError::Conflict { message: message.into(), field: field.map(str::to_string) }
    }
}

impl From<FieldError> for StoreError {
    fn from(e: FieldError) -> Self {
        StoreError::Validation(ValidationErrors(vec![e]))
    }
}

impl From<ValidationErrors> for StoreError {
    fn from(e: ValidationErrors) -> Self {
        StoreError::Validation(e)
    }
}

impl From<serde_json::Error> for StoreError {
    fn from(e: serde_json::Error) -> Self {
        StoreError::Corrupt(e.to_string())
    }
}
