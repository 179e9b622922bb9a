//! The application layer: the use cases every surface calls, as typed
//! functions — REST, the back-office, the CLI and MCP parse their input,
//! build an [`Actor`] from the credentials that arrived, call one of these
//! and render the answer.
//!
//! Each use case decides who may do it with [`authorize`] (one
//! [`Permission`] enum, one function) before it touches the registry, the
//! agent runtime or the store. Errors are one [`AppError`], mapped once at
//! each edge (an HTTP status, a CLI message).

mod actor;
pub mod approvals;
pub mod chat;
pub mod content;
pub mod dashboard;
pub mod environments;
mod error;
pub mod images;
pub mod locales;
pub mod names;
pub mod notes;
pub mod oauth;
pub mod people;
mod permission;
pub mod preferences;
pub mod previews;
pub mod published;
pub mod releases;
pub mod removal;
pub mod restore;
pub mod revisions;
pub mod schedules;
pub mod search;
pub mod sites;
pub mod tokens;
pub mod undo;
pub mod uploads;
pub mod users;
pub mod webhooks;

pub use actor::Actor;
pub use error::{AppError, AppResult, Failure};
pub use permission::{Permission, authorize};
