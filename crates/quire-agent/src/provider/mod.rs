//! Model providers behind one trait: OpenAI-compatible chat completions and
//! Anthropic Messages, both streaming (with a non-streaming fallback),
//! retrying 429, 5xx and connection errors with backoff.

mod anthropic;
mod openai;
mod sse;

pub use anthropic::{Anthropic, body as anthropic_body};
pub use openai::{OpenAi, TokenLimit, body as openai_body};

use crate::message::{ChatRequest, ChatResponse, Delta};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// Why a model call failed.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The provider answered with an error status (after retries).
    #[error("the model provider answered {status}: {message}")]
    Status {
        /// HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The connection failed or timed out (after retries).
    #[error("could not reach the model provider: {0}")]
    Transport(String),
    /// The answer could not be understood.
    #[error("the model provider's answer could not be read: {0}")]
    Protocol(String),
}

/// A boxed future of a model answer.
pub type ChatFuture<'a> = Pin<Box<dyn Future<Output = Result<ChatResponse, ProviderError>> + Send + 'a>>;

/// A model provider (which wire protocol it speaks is its profile's
/// [`ProviderKind`]). `sink` receives text and tool-call pieces as they
/// stream in.
pub trait Provider: Send + Sync {
    /// Sends one request and collects the answer.
    fn complete<'a>(&'a self, request: &'a ChatRequest, sink: &'a mut (dyn FnMut(Delta) + Send)) -> ChatFuture<'a>;
}

/// Which wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, OpenRouter, ...).
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

/// A model name to suggest for a provider in error messages.
fn example_model(provider: ProviderKind) -> &'static str {
    match provider {
        ProviderKind::Openai => "gpt-4.1-mini",
        ProviderKind::Anthropic => "claude-sonnet-4-5",
    }
}

impl ProviderKind {
    /// `openai` or `anthropic`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
        }
    }

    fn parse(value: &str) -> Option<Self> {
        match value.to_ascii_lowercase().as_str() {
            "openai" => Some(Self::Openai),
            "anthropic" => Some(Self::Anthropic),
            _ => None,
        }
    }
}

/// A model profile: which provider and model, and how to sample.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// openai or anthropic.
    pub provider: ProviderKind,
    /// Base URL (`https://api.openai.com/v1`, `http://localhost:11434/v1`).
    #[serde(default)]
    pub base_url: Option<String>,
    /// API key (may be empty for local servers).
    #[serde(default, skip_serializing)]
    pub api_key: Option<String>,
    /// Model name.
    #[serde(default)]
    pub model: Option<String>,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f32>,
    /// Steps per turn before the runtime stops (default 20).
    #[serde(default = "default_max_steps")]
    pub max_steps: u32,
    /// Most output tokens per step (default 4096).
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    /// Which field of an OpenAI-compatible request carries `max_tokens`:
    /// `max_tokens` or `max_completion_tokens`. Unset, it follows the
    /// server and model ([`TokenLimit::for_profile`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens_field: Option<TokenLimit>,
    /// Seconds a request may wait for the next bytes (default 120).
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
    /// Retries of 429, 5xx and connection errors (default 3).
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// First backoff in milliseconds, doubled each retry (default 500).
    #[serde(default = "default_backoff")]
    pub backoff_ms: u64,
    /// Stream answers (default true); false uses plain JSON answers.
    #[serde(default = "default_stream")]
    pub stream: bool,
    /// Embedding model served at the same base URL (`/embeddings`), for
    /// semantic search; none means full-text search alone.
    #[serde(default)]
    pub embedding_model: Option<String>,
    /// Vision-capable model at the same base URL that writes alt text,
    /// descriptions and tags for new images; none writes nothing.
    #[serde(default)]
    pub vision_model: Option<String>,
}

fn default_max_steps() -> u32 {
    20
}
fn default_max_tokens() -> u32 {
    4096
}
fn default_timeout() -> u64 {
    120
}
fn default_retries() -> u32 {
    3
}
fn default_backoff() -> u64 {
    500
}
fn default_stream() -> bool {
    true
}

impl Profile {
    /// A profile for `provider` with every default.
    pub fn new(provider: ProviderKind) -> Self {
        Profile {
            provider,
            base_url: None,
            api_key: None,
            model: None,
            temperature: None,
            max_steps: default_max_steps(),
            max_tokens: default_max_tokens(),
            max_tokens_field: None,
            timeout_secs: default_timeout(),
            retries: default_retries(),
            backoff_ms: default_backoff(),
            stream: default_stream(),
            embedding_model: None,
            vision_model: None,
        }
    }

    /// The model name, or the provider's usual default.
    pub fn model_name(&self) -> String {
        self.model.clone().unwrap_or_else(|| match self.provider {
            ProviderKind::Openai => "gpt-4.1-mini".into(),
            ProviderKind::Anthropic => "claude-sonnet-4-5".into(),
        })
    }

    /// Builds the provider client of this profile.
    pub fn client(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        Ok(match self.provider {
            ProviderKind::Openai => Arc::new(OpenAi::new(self)?),
            ProviderKind::Anthropic => Arc::new(Anthropic::new(self)?),
        })
    }
}

/// Every configured profile by name, plus how to say that none is.
#[derive(Debug, Clone, Default)]
pub struct Profiles {
    profiles: BTreeMap<String, Profile>,
}

/// What chat answers when no provider is configured.
pub const NOT_CONFIGURED: &str = "No model provider is configured, so the agent cannot answer yet. Set \
QUIRE_LLM_PROVIDER (openai or anthropic), QUIRE_LLM_MODEL and QUIRE_LLM_API_KEY (or OPENAI_API_KEY / \
ANTHROPIC_API_KEY); for a local OpenAI-compatible server such as Ollama set QUIRE_LLM_BASE_URL=http://localhost:11434/v1. \
Or add a [profiles.default] table to quire.toml.";

impl Profiles {
    /// Profiles from configuration (`[profiles.<name>]`), with `default`
    /// completed from the environment when the file does not define it.
    /// Refuses an unknown `QUIRE_LLM_PROVIDER` and a profile that names no
    /// model, so a misconfiguration is reported at start rather than by the
    /// provider on the first chat.
    pub fn new(configured: BTreeMap<String, Profile>, env: &dyn Fn(&str) -> Option<String>) -> Result<Self, String> {
        let mut profiles = configured;
        for (name, profile) in &profiles {
            if profile.model.as_deref().is_none_or(|m| m.trim().is_empty()) {
                return Err(format!(
                    "model profile \"{name}\" names no model: add model = \"...\" (e.g. \"{}\") to [profiles.{name}]",
                    example_model(profile.provider)
                ));
            }
        }
        if !profiles.contains_key("default")
            && let Some(p) = Self::from_env(env)?
        {
            profiles.insert("default".into(), p);
        }
        Ok(Profiles { profiles })
    }

    /// The profile `QUIRE_LLM_*` (or a provider's usual key variable)
    /// describes; `None` when nothing is set, or only a provider's key
    /// variable without `QUIRE_LLM_MODEL` (a warning). An unknown
    /// `QUIRE_LLM_PROVIDER`, or a provider chosen by `QUIRE_LLM_PROVIDER` or
    /// `QUIRE_LLM_BASE_URL` without `QUIRE_LLM_MODEL`, is an error that says
    /// what to set.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Profile>, String> {
        let get = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        let (provider, chosen_by) = match get("QUIRE_LLM_PROVIDER") {
            Some(p) => match ProviderKind::parse(&p) {
                Some(kind) => (kind, "QUIRE_LLM_PROVIDER"),
                None => {
                    return Err(format!("QUIRE_LLM_PROVIDER: \"{}\" is not one of openai, anthropic", p.trim()));
                }
            },
            None if get("ANTHROPIC_API_KEY").is_some() && get("OPENAI_API_KEY").is_none() => {
                (ProviderKind::Anthropic, "ANTHROPIC_API_KEY")
            }
            None if get("QUIRE_LLM_BASE_URL").is_some() => (ProviderKind::Openai, "QUIRE_LLM_BASE_URL"),
            None if get("OPENAI_API_KEY").is_some() => (ProviderKind::Openai, "OPENAI_API_KEY"),
            None => return Ok(None),
        };
        let key_var = match provider {
            ProviderKind::Openai => "OPENAI_API_KEY",
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
        };
        let Some(model) = get("QUIRE_LLM_MODEL") else {
            if chosen_by.ends_with("_API_KEY") {
                // A key in the shell for other programs is no request to run
                // agents: start without them (chat says what to set).
                tracing::warn!("{chosen_by} is set but QUIRE_LLM_MODEL is not; agents stay off until a model is set");
                return Ok(None);
            }
            return Err(format!(
                "QUIRE_LLM_MODEL is not set: {chosen_by} selects the {} provider, which needs a model name \
                 (e.g. QUIRE_LLM_MODEL={}); unset {chosen_by} to run without agents",
                provider.as_str(),
                example_model(provider)
            ));
        };
        let mut p = Profile::new(provider);
        p.base_url = get("QUIRE_LLM_BASE_URL");
        p.api_key = get("QUIRE_LLM_API_KEY").or_else(|| get(key_var));
        p.model = Some(model);
        p.embedding_model = get("QUIRE_LLM_EMBEDDING_MODEL");
        p.vision_model = get("QUIRE_LLM_VISION_MODEL");
        Ok(Some(p))
    }

    /// Adds or replaces a profile.
    pub fn insert(&mut self, name: impl Into<String>, profile: Profile) {
        self.profiles.insert(name.into(), profile);
    }

    /// The profile `name`, falling back to `default`.
    pub fn get(&self, name: &str) -> Option<&Profile> {
        self.profiles.get(name).or_else(|| self.profiles.get("default"))
    }

    /// Whether a profile of exactly this name is configured (no fallback).
    pub fn contains(&self, name: &str) -> bool {
        self.profiles.contains_key(name)
    }

    /// Whether any profile exists.
    pub fn is_empty(&self) -> bool {
        self.profiles.is_empty()
    }
}

/// The HTTP client every adapter uses: connect and read timeouts, rustls
/// with the ring provider.
pub(crate) fn http_client(profile: &Profile) -> Result<reqwest::Client, ProviderError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .read_timeout(Duration::from_secs(profile.timeout_secs.max(1)))
        .build()
        .map_err(|e| ProviderError::Transport(e.to_string()))
}

/// Sends a request built by `build`, retrying 429, 5xx and connection
/// failures with exponential backoff (or the server's Retry-After, at most
/// 30 s). Answers the first success, or the last failure.
pub(crate) async fn send_with_retry(
    profile: &Profile,
    build: impl Fn() -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, ProviderError> {
    let mut attempt = 0;
    loop {
        let outcome = build().send().await;
        let retry_after = match &outcome {
            Ok(resp) if resp.status().is_success() => return Ok(outcome.expect("matched Ok")),
            Ok(resp) if resp.status().as_u16() == 429 || resp.status().is_server_error() => resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(|s| Duration::from_secs(s.min(30))),
            Ok(_) => None,
            Err(e) if e.is_connect() || e.is_timeout() || e.is_request() => None,
            Err(_) => None,
        };
        let retryable = match &outcome {
            Ok(resp) => resp.status().as_u16() == 429 || resp.status().is_server_error(),
            Err(e) => e.is_connect() || e.is_timeout() || e.is_request(),
        };
        if !retryable || attempt >= profile.retries {
            return match outcome {
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let body = resp.text().await.unwrap_or_default();
                    Err(ProviderError::Status { status, message: error_message(&body) })
                }
                Err(e) => Err(ProviderError::Transport(e.to_string())),
            };
        }
        let backoff = Duration::from_millis(profile.backoff_ms.saturating_mul(1 << attempt.min(10)));
        let wait = retry_after.unwrap_or(backoff);
        tracing::warn!(attempt = attempt + 1, wait_ms = wait.as_millis() as u64, "model provider busy; retrying");
        tokio::time::sleep(wait).await;
        attempt += 1;
    }
}

/// The readable part of a provider's error body.
fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.pointer("/message"))
            .or_else(|| v.get("error"))
            .and_then(|m| m.as_str())
    });
    let text = message.unwrap_or(body).trim();
    text.chars().take(500).collect()
}

/// Adds to a request body what both wire formats say alike: the tools,
/// each in the provider's `shape`, when there are any, and the sampling
/// temperature when the profile sets one.
fn with_tools_and_temperature(
    mut body: serde_json::Value,
    request: &ChatRequest,
    shape: impl Fn(&crate::message::ToolSpec) -> serde_json::Value,
) -> serde_json::Value {
    if !request.tools.is_empty() {
        body["tools"] = request.tools.iter().map(shape).collect();
    }
    if let Some(t) = request.temperature {
        body["temperature"] = serde_json::json!(t);
    }
    body
}

/// Reads a non-streamed answer with `parse` and hands it to `sink` as if it
/// had streamed (text, then each call with its whole arguments).
pub(crate) async fn whole_answer(
    response: reqwest::Response,
    parse: fn(&serde_json::Value) -> Result<ChatResponse, ProviderError>,
    sink: &mut (dyn FnMut(Delta) + Send),
) -> Result<ChatResponse, ProviderError> {
    let v: serde_json::Value = response.json().await.map_err(|e| ProviderError::Protocol(e.to_string()))?;
    let answer = parse(&v)?;
    if !answer.text.is_empty() {
        sink(Delta::Text(answer.text.clone()));
    }
    for (index, c) in answer.tool_calls.iter().enumerate() {
        sink(Delta::ToolCallStart { index, id: c.id.clone(), name: c.name.clone() });
        sink(Delta::ToolCallArgs { index, delta: c.arguments.clone() });
    }
    Ok(answer)
}

/// Joins a base URL and a path without doubling slashes.
pub(crate) fn join(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}

/// A profile's model as the writer of texts the tools ask for (deep
/// search answers): one request with the instructions as system prompt
/// and the material as the user's message, no tools.
pub struct ModelWriter {
    profile: Profile,
    provider: Arc<dyn Provider>,
}

impl std::fmt::Debug for ModelWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelWriter").field("model", &self.profile.model_name()).finish()
    }
}

impl ModelWriter {
    /// The writer of `profile`, answered by `provider`.
    pub fn new(profile: Profile, provider: Arc<dyn Provider>) -> Self {
        ModelWriter { profile, provider }
    }

    /// The writer of `profile` over its own client.
    pub fn of(profile: &Profile) -> Result<Self, ProviderError> {
        Ok(ModelWriter::new(profile.clone(), profile.client()?))
    }
}

impl quire_tools::external::Writer for ModelWriter {
    fn write<'a>(&'a self, instructions: &'a str, material: &'a str) -> quire_tools::external::WriteFuture<'a> {
        Box::pin(async move {
            let request = crate::message::ChatRequest {
                model: self.profile.model_name(),
                system: instructions.to_string(),
                messages: vec![crate::message::Message::User { content: material.to_string() }],
                tools: Vec::new(),
                temperature: self.profile.temperature,
                max_tokens: self.profile.max_tokens,
                stream: self.profile.stream,
            };
            let mut ignore = |_delta: crate::message::Delta| {};
            let answer = self.provider.complete(&request, &mut ignore).await.map_err(|e| e.to_string())?;
            Ok(answer.text)
        })
    }
}
