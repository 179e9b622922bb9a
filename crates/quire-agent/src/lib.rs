//! Quire's agent runtime.
//!
//! An agent is a configured record (prompt, tool selection, policy) that
//! runs on a model [`provider::Profile`]. A turn is a loop of steps: before
//! each, [`prompt::prepare_step`] rebuilds the request from scratch (default
//! tools + tools activated by searchTools + pinned tools, filtered by the
//! agent and the user's group, each with its guidance; a system prompt with
//! the rules they need and working memory). Tool calls go through the same
//! [`quire_tools::Registry`] as every other surface. Destructive calls pause
//! the turn as pending approvals that only a person can answer; the
//! [`runtime::Runtime`] resumes it once they are answered, even after a
//! restart. Every step streams as AG-UI events ([`events::EventHub`]).

pub mod consent;
pub mod eval;
pub mod events;
pub mod memory;
pub mod message;
pub mod prompt;
pub mod provider;
pub mod runtime;
#[cfg(feature = "testing")]
pub mod testing;

pub use events::{Event, EventHub};
pub use message::{ChatRequest, ChatResponse, Delta, Message, ToolCall, ToolSpec, Usage};
pub use provider::{ModelWriter, NOT_CONFIGURED, Profile, Profiles, Provider, ProviderError, ProviderKind};
pub use runtime::{
    AgentError, Ask, FairUse, PendingCall, Person, PreviewAnswer, Record, Runtime, TurnStarted, TurnUndone,
};
