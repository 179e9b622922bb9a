//! The agent loop: acknowledgeRequest → tools → finalAnswer, with approvals
//! that pause a turn until a person answers, sessions that survive a
//! restart, and every step streamed as AG-UI events.
//!
//! One [`Runtime`] per process; its parts, each on one concern:
//! - `chat`: a person's message starts (or continues) a session's turn;
//! - `turn`: a turn's run, step by step, until it ends, pauses or fails;
//! - `calls`: one tool call of the model, or one answered after a pause;
//! - `journal`: a turn's writes, fenced on the session's runner;
//! - `resume`: paused turns resumed, and turns of stopped processes taken over;
//! - `undo`: a turn's changes undone;
//! - `record`: what happened besides the messages (approvals asked, undos,
//!   failures), stored with them for people who read the conversation again;
//! - `stream`: a turn as AG-UI events;
//! - `relay`: events stored and followed across processes, and the heartbeat;
//! - `clients`: the model each agent runs on;
//! - `error`: why a request was refused, a turn stopped or a call did not run.

mod calls;
mod chat;
mod clients;
mod error;
mod fair_use;
mod journal;
mod record;
mod relay;
mod resume;
mod stream;
mod turn;
mod undo;

pub use calls::PendingCall;
pub use chat::{Ask, PreviewAnswer, TurnStarted};
pub use error::AgentError;
pub use fair_use::FairUse;
pub use record::Record;
pub use undo::TurnUndone;

use crate::events::EventHub;
use crate::provider::Profiles;
use clients::ProfileClient;
use quire_core::access::Group;
use quire_store::{Scope, Store};
use quire_tools::Registry;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The person chatting.
#[derive(Debug, Clone)]
pub struct Person {
    /// `token:<id>` or `local:admin`.
    pub actor: String,
    /// Their group.
    pub group: Group,
    /// Site and environment.
    pub scope: Scope,
}

/// The agent runtime: one per process, shared by REST, CLI and tests.
pub struct Runtime {
    registry: Arc<Registry>,
    /// The registry's tools as a step sends them, made once each.
    tool_specs: crate::prompt::ToolSpecs,
    profiles: Profiles,
    hub: Arc<EventHub>,
    /// Clients by profile name: built from a profile on first use, or
    /// injected with [`Runtime::set_provider`].
    clients: Mutex<HashMap<String, ProfileClient>>,
    /// How long (milliseconds) a runner may stay silent before its running
    /// turns are taken over ([`RUNNER_SILENT`] unless changed).
    silent_ms: AtomicU64,
    /// Turns running here now: the process beats only while some do.
    running: Arc<AtomicU64>,
    /// Held while events are stored, so batches are stored in order.
    flushing: tokio::sync::Mutex<()>,
    /// Stores of the relay's batch that failed in a row.
    flush_failures: AtomicU32,
    /// Fair use ([`FairUse`]): agent turns an hour per token or person.
    turns_per_hour: AtomicU64,
    /// Fair use: model tokens a day per site.
    model_tokens_per_day: AtomicU64,
}

/// A process silent this long is taken to have stopped: its running turns
/// are taken over by another.
pub const RUNNER_SILENT: Duration = Duration::from_secs(10);

impl Runtime {
    /// A runtime over the registry with these model profiles.
    ///
    /// Inside a Tokio runtime it also starts its relay: the events emitted
    /// here are stored (every 50 ms), events other processes
    /// stored reach the streams open here, and the process's heartbeat
    /// tells the others its turns are alive. The relay ends with the runtime.
    pub fn new(registry: Arc<Registry>, profiles: Profiles) -> Arc<Self> {
        let runtime = Arc::new(Runtime {
            registry,
            tool_specs: Default::default(),
            profiles,
            hub: Arc::new(EventHub::default()),
            clients: Mutex::new(HashMap::new()),
            silent_ms: AtomicU64::new(RUNNER_SILENT.as_millis() as u64),
            running: Arc::new(AtomicU64::new(0)),
            flushing: tokio::sync::Mutex::new(()),
            flush_failures: AtomicU32::new(0),
            turns_per_hour: AtomicU64::new(0),
            model_tokens_per_day: AtomicU64::new(0),
        });
        relay::start(&runtime);
        runtime
    }

    /// Takes over running turns whose runner was silent for `silent`
    /// (instead of [`RUNNER_SILENT`]).
    pub fn set_runner_silent(&self, silent: Duration) {
        self.silent_ms.store(silent.as_millis() as u64, Ordering::Relaxed);
    }

    /// The event streams of all sessions.
    pub fn events(&self) -> &EventHub {
        &self.hub
    }

    /// The tool registry.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    fn store(&self) -> &Store {
        &self.registry.services().store
    }

    /// How long a runner may stay silent before its running turns are
    /// taken over.
    fn silent(&self) -> Duration {
        Duration::from_millis(self.silent_ms.load(Ordering::Relaxed))
    }
}
