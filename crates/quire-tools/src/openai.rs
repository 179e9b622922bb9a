//! The HTTP side of the OpenAI-compatible model clients (embeddings,
//! vision): one endpoint with its key and model, a JSON request, its JSON
//! answer, and errors that say which client failed.

use serde_json::Value;
use std::time::Duration;

/// One endpoint of an OpenAI-compatible API (`{base_url}/embeddings`).
#[derive(Debug)]
pub(crate) struct Endpoint {
    http: reqwest::Client,
    url: String,
    api_key: Option<String>,
    /// The model asked.
    pub(crate) model: String,
    /// What errors call the client (`vision`).
    what: &'static str,
    /// What errors call the other side (`vision model`).
    answerer: &'static str,
}

impl Endpoint {
    /// `path` of `base_url` for `model`, each request cut off after
    /// `timeout`; errors name the client `what` and the other side
    /// `answerer`.
    pub(crate) fn new(
        base_url: &str,
        path: &str,
        api_key: Option<String>,
        model: impl Into<String>,
        timeout: Duration,
        what: &'static str,
        answerer: &'static str,
    ) -> Result<Self, String> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(timeout)
            .build()
            .map_err(|e| format!("{what} client: {e}"))?;
        Ok(Endpoint {
            http,
            url: format!("{}{path}", base_url.trim_end_matches('/')),
            api_key: api_key.filter(|k| !k.is_empty()),
            model: model.into(),
            what,
            answerer,
        })
    }

    /// Posts `body` and reads the JSON answer of a successful status.
    pub(crate) async fn post(&self, body: &Value) -> Result<Value, String> {
        let what = self.what;
        let mut req = self.http.post(&self.url).json(body);
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let res = req.send().await.map_err(|e| format!("{what} request failed: {e}"))?;
        let status = res.status();
        if !status.is_success() {
            let text = res.text().await.unwrap_or_default();
            return Err(format!("{} answered {status}: {}", self.answerer, text.chars().take(300).collect::<String>()));
        }
        res.json().await.map_err(|e| format!("{what} answer is not JSON: {e}"))
    }
}
