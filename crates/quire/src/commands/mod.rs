//! One module per command (or small family of commands): each opens the
//! data directory, calls the library crates and prints the answer; what to
//! do is decided in those crates, not here.

pub mod chat;
pub mod database;
pub mod env;
pub mod eval;
pub mod images;
pub mod mcp;
pub mod review;
pub mod serve;
pub mod site;
pub mod token;
pub mod tools;
pub mod user;

/// What a command answers when it fails.
pub type AnyResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// How a command that ran to its end went: a tool result, an image or an
/// agent's turn that reported failure makes the process exit non-zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Everything it did succeeded.
    Succeeded,
    /// It ran, and what it ran reported failure.
    Failed,
}
