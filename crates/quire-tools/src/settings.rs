//! What [`crate::Services`] carries for media intake and the external
//! tools: their settings, and the model that writes deep search answers.
//! Kept apart from the modules that use them, which run against
//! `Services`.

use crate::error::{ErrorCode, ToolError};
use quire_media::Limits;
use quire_net::{Limits as NetLimits, NetClient};
use quire_store::{JobInfo, Scope};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// Default upload size limit in megabytes (`max_upload_mb`).
pub const DEFAULT_MAX_UPLOAD_MB: u64 = 25;

/// Settings of media intake and processing.
#[derive(Debug, Clone)]
pub struct MediaSettings {
    /// Largest file received, in bytes.
    pub max_upload_bytes: u64,
    /// Decoding limits: the pixel budget of one image (`max_image_megapixels`).
    pub limits: Limits,
    /// Images this process decodes at once: one. The budget bounds one
    /// decode, and more than one job may run at a time (the background
    /// worker, `importImage` and `quire images upload` each run jobs while
    /// they wait for theirs), so they take turns here: a process's decoding
    /// never holds more than one budget. A permit goes with the decoding
    /// thread, so one that outlives its time limit still holds it.
    pub decoding: Arc<tokio::sync::Semaphore>,
    /// How long a claimed job is held before another worker may take it;
    /// a running job renews it every third of this, so a job whose process
    /// stopped is taken over within this long.
    pub lease: Duration,
    /// Woken when a job is queued, so the worker starts at once.
    pub wake: Arc<tokio::sync::Notify>,
    /// How long an upload no image was made of is kept.
    pub upload_ttl: Duration,
    /// Every change of a job this process works on (the server forwards
    /// them to the session stream of the turn that queued the job).
    pub events: tokio::sync::broadcast::Sender<JobEvent>,
}

/// A job changed: claimed, a stage started, done, failed or queued again.
#[derive(Debug, Clone)]
pub struct JobEvent {
    /// Scope of the job.
    pub scope: Scope,
    /// The agent session whose turn queued it.
    pub session_id: Option<String>,
    /// The job as it is now.
    pub job: JobInfo,
}

impl Default for MediaSettings {
    fn default() -> Self {
        MediaSettings {
            max_upload_bytes: DEFAULT_MAX_UPLOAD_MB * 1024 * 1024,
            limits: Limits::default(),
            decoding: Arc::new(tokio::sync::Semaphore::new(1)),
            lease: Duration::from_secs(30),
            wake: Arc::new(tokio::sync::Notify::new()),
            upload_ttl: Duration::from_secs(24 * 3600),
            events: tokio::sync::broadcast::channel(256).0,
        }
    }
}

impl MediaSettings {
    /// The size limit in whole megabytes, for messages.
    pub fn max_upload_mb(&self) -> u64 {
        self.max_upload_bytes.div_ceil(1024 * 1024)
    }

    /// Sets the pixel budget of one image (`max_image_megapixels`): that
    /// many pixels, and the bytes they take decoded in 8-bit RGBA.
    pub fn set_max_megapixels(&mut self, megapixels: u64) {
        self.limits = Limits { max_time: self.limits.max_time, ..Limits::megapixels(megapixels) };
    }
}

/// Where a provider answers and with which key.
#[derive(Debug, Clone, Default)]
pub struct ProviderSettings {
    /// API key; none: the provider is not configured.
    pub key: Option<String>,
    /// Base URL of its API.
    pub base_url: String,
}

impl ProviderSettings {
    fn new(base_url: &str) -> Self {
        ProviderSettings { key: None, base_url: base_url.to_string() }
    }

    /// The key, or an error naming the setting that provides it.
    pub fn key(&self, setting: &str, provider: &str) -> Result<&str, ToolError> {
        self.key.as_deref().filter(|k| !k.trim().is_empty()).ok_or_else(|| not_configured(provider, setting))
    }

    /// `base_url` joined with `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url.trim_end_matches('/'))
    }
}

/// The error of a provider without its setting.
pub fn not_configured(what: &str, setting: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Upstream,
        format!("{what} is not configured: set {setting}"),
        format!(
            "An operator sets {setting} in quire.toml (or its environment variable); until then use another provider or tell the user."
        ),
    )
}

/// The external tools' configuration and client.
#[derive(Debug, Clone)]
pub struct ExternalSettings {
    /// The guarded client every external request goes through.
    pub net: NetClient,
    /// Pexels (`external.pexels_key`).
    pub pexels: ProviderSettings,
    /// Unsplash (`external.unsplash_key`, an access key).
    pub unsplash: ProviderSettings,
    /// A self-hosted SearXNG instance (`external.searxng_url`); needs no key.
    pub searxng_url: Option<String>,
    /// Brave Search (`external.brave_key`).
    pub brave: ProviderSettings,
    /// Search providers in the order they are asked (`external.search`):
    /// `searxng`, `brave`.
    pub search: Vec<String>,
    /// Writes deep search answers; none: deep mode answers an error.
    pub writer: Option<SharedWriter>,
    /// Longest text of one fetched page, in characters.
    pub max_page_chars: usize,
}

impl Default for ExternalSettings {
    fn default() -> Self {
        ExternalSettings {
            net: default_client(),
            pexels: ProviderSettings::new("https://api.pexels.com"),
            unsplash: ProviderSettings::new("https://api.unsplash.com"),
            searxng_url: None,
            brave: ProviderSettings::new("https://api.search.brave.com"),
            search: vec!["searxng".into(), "brave".into()],
            writer: None,
            max_page_chars: 20_000,
        }
    }
}

fn default_client() -> NetClient {
    match NetClient::new(&[], NetLimits::default()) {
        Ok(c) => c,
        // An empty allow list cannot be refused, and the TLS provider is
        // compiled in: building cannot fail unless the process cannot
        // create a client at all.
        Err(e) => panic!("http client: {e}"),
    }
}

/// A boxed future of a model's text.
pub type WriteFuture<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;

/// A model that writes text from instructions and material (deep search
/// answers). The agent runtime's providers implement it.
pub trait Writer: Send + Sync + std::fmt::Debug {
    /// Answers `material` following `instructions` (the system prompt).
    fn write<'a>(&'a self, instructions: &'a str, material: &'a str) -> WriteFuture<'a>;
}

/// A shared writer.
pub type SharedWriter = Arc<dyn Writer>;
