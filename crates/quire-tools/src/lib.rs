//! Quire's tool registry.
//!
//! Every operation an agent, an MCP client, the CLI or a REST caller can
//! perform on content is a [`Tool`]: a plain definition with its name,
//! description, guidance, metadata, an input schema generated from its Rust
//! argument type, and its execute function. Each is described once in
//! `catalog.toml`, from which `build.rs` generates the [`Tool`]s and their
//! argument types ([`catalog`](mod@catalog)); the tool modules hold the
//! handlers. [`catalog()`] lists them all; [`Registry::call`] is the one entry point every surface goes through. It
//! enforces group permissions and the preview → approval → execute flow of
//! destructive tools, and records which tools a session activated.

pub mod agents;
pub mod archive;
pub mod args;
pub mod catalog;
pub mod defaults;
pub mod describe;
pub mod embed;
pub mod entries;
pub mod error;
pub mod external;
pub mod guidance;
pub mod images;
mod locales;
pub mod media;
pub mod memory;
pub mod navigation;
pub mod notes;
mod openai;
pub mod output;
pub mod pages;
pub mod params;
pub mod posts;
pub mod publishing;
pub mod registry;
pub mod releases;
pub mod scope;
pub mod screen;
pub mod search;
pub mod sections;
pub mod services;
pub mod settings;
pub mod storage;
pub mod subject;
pub mod tool;
pub mod vaults;
pub mod webhooks;

pub use error::{ErrorCode, ToolError};
pub use guidance::{all_rules, render_guidance, render_rules};
pub use output::output_schema;
pub use registry::{
    Approval, Outcome, PendingApproval, Registry, ToolInfo, approval_in, full_schema, permits, preference_categories,
    preference_of,
};
pub use services::Services;
pub use subject::Subject;
pub use tool::{ApprovalPolicy, CallContext, Category, Effect, Progress, ProgressUpdate, Risk, Tool};

/// Every tool, grouped as in TOOLS.md: default, pages, sections, images,
/// posts, navigation, entries, publishing, releases, archive, vault,
/// external ([`catalog::tools`], from `catalog.toml`).
pub fn catalog() -> Vec<Tool> {
    catalog::tools()
}
