//! Quire's HTTP surface.
//!
//! An axum router with one module per resource under [`routes`]: the REST API
//! at `/api/v1`, the public delivery API at `/api/v1/delivery`, the OpenAPI
//! document at `/api/openapi.json` with its docs UI at `/api/docs`, and the
//! uploaded files at `/uploads`. Handlers parse, authorize and call the
//! store or the tool registry; they hold no business rules. Errors become one JSON shape in
//! [`error`].

pub mod auth;
pub mod connections;
pub mod error;
pub mod extract;
pub mod json;
pub mod limits;
pub mod mcp;
pub mod multipart;
pub mod openapi;
pub mod routes;
mod trusted;

pub use connections::{ConnectionLimits, SHUTDOWN_GRACE, serve, serve_until};

use axum::Router;
use axum::http::{HeaderName, Request};
use quire_store::{Store, TokenGrant};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tower_http::request_id::{PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

/// Shared state of every handler. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    registry: Arc<quire_tools::Registry>,
    runtime: Arc<quire_agent::Runtime>,
    mcp_allowed_hosts: Vec<String>,
    mcp_allowed_origins: Vec<String>,
    /// Whether `/mcp` offers the MCP conformance suite's test fixture.
    mcp_test_fixture: bool,
    default_site: String,
    /// Whether people reach the server over https (session cookies are `Secure`).
    https: bool,
    /// The address people reach the server at, when configured.
    public_url: Option<String>,
    tokens: trusted::Trusted<String, TokenGrant>,
    scopes: trusted::Trusted<(String, String), quire_store::Scope>,
    /// When this process last wrote each token's `last_used_at`.
    touched: Mutex<HashMap<String, Instant>>,
    /// Bumped on every revocation this process makes or notices, so open
    /// event streams re-check their token.
    revocations: tokio::sync::watch::Sender<u64>,
    /// Set once the process is stopping: event streams end, background
    /// work stops.
    stopping: tokio::sync::watch::Sender<bool>,
    /// The background tasks [`AppState::spawn_background`] started.
    background: Mutex<Vec<tokio::task::AbortHandle>>,
    /// Requests a minute per token or person, shared by the replicas.
    request_limits: Arc<limits::RequestLimits>,
    /// How long a webhook delivery waits after each failed attempt.
    webhook_retries: Vec<Duration>,
}

/// How long a looked-up token is trusted before it is read again. A
/// revocation made here clears the cache at once, and one made by another
/// process within [`REVOCATION_POLL`] (see [`AppState::spawn_background`]);
/// this bound remains for a process that runs no background work.
const TOKEN_CACHE_TTL: Duration = Duration::from_secs(5);

/// From this age on, a cached token or site is read again by the first
/// request that uses it, while the others go on using it (until
/// [`TOKEN_CACHE_TTL`], never longer): a busy server reads each again once,
/// not once for every request in flight when it expires.
const RENEW_AFTER: Duration = Duration::from_secs(4);

/// How often a serving process checks for revocations made by another
/// process (one indexed COUNT, not a read per request): twice a second, so
/// a replica refuses a token another revoked within a second.
pub const REVOCATION_POLL: Duration = Duration::from_millis(500);

/// How often an open event stream re-reads its token even without news of a
/// revocation (a token may also expire while the stream is open).
const STREAM_RECHECK: Duration = Duration::from_secs(10);

/// A token's `last_used_at` is written at most this often by one process.
const TOUCH_EVERY: Duration = Duration::from_secs(60);

impl AppState {
    /// State over the tools' services; `default_site` (slug) serves public
    /// delivery requests that name no site.
    pub fn new(services: quire_tools::Services, default_site: impl Into<String>) -> Self {
        let store = services.store.clone();
        let services_store = store.clone();
        let registry = Arc::new(quire_tools::Registry::new(services));
        Self {
            inner: Arc::new(Inner {
                runtime: quire_agent::Runtime::new(Arc::clone(&registry), quire_agent::Profiles::default()),
                registry,
                mcp_allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
                mcp_allowed_origins: Vec::new(),
                mcp_test_fixture: false,
                store,
                default_site: default_site.into(),
                https: false,
                public_url: None,
                tokens: trusted::Trusted::new(TOKEN_CACHE_TTL, RENEW_AFTER),
                scopes: trusted::Trusted::new(TOKEN_CACHE_TTL, RENEW_AFTER),
                touched: Mutex::new(HashMap::new()),
                revocations: tokio::sync::watch::Sender::new(0),
                stopping: tokio::sync::watch::Sender::new(false),
                background: Mutex::new(Vec::new()),
                request_limits: Arc::new(limits::RequestLimits::new(services_store, 0)),
                webhook_retries: quire_tools::webhooks::RETRIES.to_vec(),
            }),
        }
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The tool registry.
    pub fn registry(&self) -> &quire_tools::Registry {
        &self.inner.registry
    }

    /// The agent runtime.
    pub fn runtime(&self) -> &Arc<quire_agent::Runtime> {
        &self.inner.runtime
    }

    /// Runs agents on these model profiles. Call before the state is shared.
    pub fn with_profiles(mut self, profiles: quire_agent::Profiles) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.runtime = quire_agent::Runtime::new(Arc::clone(&inner.registry), profiles);
        }
        self
    }

    /// Starts the background work of a serving process: resuming agent
    /// turns whose approvals were answered elsewhere (the CLI, another
    /// process, before a restart) or expired, noticing tokens revoked by
    /// another process (the CLI) within [`REVOCATION_POLL`], and working the
    /// job queue (image processing; jobs a stopped process held are taken
    /// over when their lease ends).
    pub fn spawn_background(&self) {
        let runtime = Arc::clone(&self.inner.runtime);
        let sweep = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(2));
            loop {
                tick.tick().await;
                runtime.sweep().await;
            }
        });
        let state = self.clone();
        let revocations = tokio::spawn(async move { state.watch_revocations().await });
        let services = self.inner.registry.services().clone();
        let mut jobs = services.media.events.subscribe();
        let runtime = Arc::clone(&self.inner.runtime);
        let progress = tokio::spawn(async move {
            // A job queued by an agent's turn tells that session's stream
            // how it goes (CUSTOM `job_progress`).
            loop {
                match jobs.recv().await {
                    Ok(e) => {
                        if let Some(session) = &e.session_id {
                            let value = serde_json::to_value(&e.job).unwrap_or_default();
                            let fields = serde_json::json!({ "name": "job_progress", "value": value });
                            runtime.events().emit_aside(session, "CUSTOM", fields);
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                }
            }
        });
        let net = services.external.net.clone();
        let media = tokio::spawn(quire_tools::media::MediaWorker::new(services).run());
        let schedules = tokio::spawn(quire_app::schedules::Scheduler::new(self.store().clone()).run());
        let sender = quire_tools::webhooks::Sender::new(self.store().clone(), net)
            .with_retries(self.inner.webhook_retries.clone());
        let webhooks = tokio::spawn(sender.run());
        // Request counts reach the database on a clock too, so a process
        // that falls quiet still shares what it admitted.
        let limits = Arc::clone(&self.inner.request_limits);
        let counts = tokio::spawn(async move {
            while limits.is_on() {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                limits.flush().await;
            }
        });
        if let Ok(mut tasks) = self.inner.background.lock() {
            let all = [sweep, revocations, progress, media, schedules, counts, webhooks];
            tasks.extend(all.iter().map(|t| t.abort_handle()));
        }
    }

    /// Stops the process's work: open event streams end (see
    /// [`AppState::until_ended`]) and the background tasks stop. A media
    /// job cut off here is taken over by the next start when its lease
    /// ends; an agent turn cut off is taken over by another process (or the
    /// next start) once this one's heartbeat has been silent for 10 s.
    pub fn stop(&self) {
        self.inner.stopping.send_replace(true);
        if let Ok(mut tasks) = self.inner.background.lock() {
            for task in tasks.drain(..) {
                task.abort();
            }
        }
    }

    /// Polls the number of revoked tokens; when it changes, forgets the
    /// cached tokens so the next request reads its token again, and tells
    /// open event streams. Revocations are permanent, so the count only
    /// grows and a change always means a new revocation.
    async fn watch_revocations(&self) {
        let mut seen = None;
        let mut tick = tokio::time::interval(REVOCATION_POLL);
        loop {
            tick.tick().await;
            match self.inner.store.revocation_count().await {
                Ok(n) => {
                    if seen.is_some_and(|s| s != n) {
                        tracing::info!("a token was revoked elsewhere; cached tokens forgotten");
                        self.forget_tokens();
                    }
                    seen = Some(n);
                }
                Err(e) => tracing::warn!(error = %e, "could not check for revoked tokens"),
            }
        }
    }

    /// Also accepts MCP requests whose Host is one of `hosts` (besides
    /// loopback), and browser requests from the Origins `origins` (besides
    /// the server's own origin, always accepted; every other Origin is
    /// refused). Call before the state is shared.
    pub fn with_mcp_allowed(mut self, hosts: &[String], origins: &[String]) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.mcp_allowed_hosts.extend(hosts.iter().cloned());
            inner.mcp_allowed_origins.extend(origins.iter().cloned());
        }
        self
    }

    /// Offers the MCP conformance suite's test fixture on `/mcp`
    /// ([`quire_mcp::QuireMcp::with_test_fixture`]) beside the site's own
    /// tools, prompts and resources: for the suite's runs only. Call before
    /// the state is shared.
    pub fn with_mcp_test_fixture(mut self, on: bool) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.mcp_test_fixture = on;
        }
        self
    }

    /// Limits each token and person to `per_minute` requests a minute
    /// (0: no limit), shared by every replica. Call before the state is shared.
    pub fn with_request_limit(mut self, per_minute: u32) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.request_limits = Arc::new(limits::RequestLimits::new(inner.store.clone(), per_minute));
        }
        self
    }

    /// Webhook deliveries wait `retries` after each failed attempt (its
    /// length is the number of retries) instead of the default schedule.
    /// Call before the state is shared.
    pub fn with_webhook_retries(mut self, retries: Vec<Duration>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.webhook_retries = retries;
        }
        self
    }

    /// The request limit of fair use.
    pub fn request_limits(&self) -> &Arc<limits::RequestLimits> {
        &self.inner.request_limits
    }

    /// Marks browser session cookies `Secure` (people reach the server
    /// over https). Call before the state is shared.
    pub fn with_https(mut self, https: bool) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.https = https;
        }
        self
    }

    /// Whether people reach the server over https.
    pub fn https(&self) -> bool {
        self.inner.https
    }

    /// Names the address people reach the server at (`public_url`), for
    /// answers that point a person to a page (where to approve a call).
    /// Call before the state is shared.
    pub fn with_public_url(mut self, url: Option<String>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.public_url = url.map(|u| u.trim_end_matches('/').to_string()).filter(|u| !u.is_empty());
        }
        self
    }

    /// The address people reach the server at, when configured.
    pub fn public_url(&self) -> Option<&str> {
        self.inner.public_url.as_deref()
    }

    /// Where people reach this server: its `public_url`, or else the
    /// request's Host (`headers`).
    pub fn base_url(&self, headers: &axum::http::HeaderMap) -> String {
        if let Some(url) = self.public_url() {
            return url.trim_end_matches('/').to_string();
        }
        let host = headers.get(axum::http::header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("localhost");
        format!("{}://{host}", if self.https() { "https" } else { "http" })
    }

    /// The MCP endpoint as an OAuth resource: what its tokens are bound to.
    pub fn mcp_resource(&self, headers: &axum::http::HeaderMap) -> String {
        format!("{}/mcp", self.base_url(headers))
    }

    /// The site public delivery serves by default.
    pub fn default_site(&self) -> &str {
        &self.inner.default_site
    }

    /// Looks a token up, through a short-lived cache keyed by its hash, and
    /// records the use of a valid one (`last_used_at`, at most once a minute).
    pub async fn authenticate(&self, secret: &str) -> Result<Option<TokenGrant>, error::ApiError> {
        let grant = self.lookup(secret).await?;
        if let Some(g) = grant.as_ref().filter(|g| !g.expired) {
            self.note_use(&g.token);
        }
        Ok(grant)
    }

    async fn lookup(&self, secret: &str) -> Result<Option<TokenGrant>, error::ApiError> {
        let key = quire_store::hash_secret(secret);
        let store = &self.inner.store;
        let grant = self.inner.tokens.get(key, || store.authenticate(secret)).await?;
        Ok(grant.map(|mut grant| {
            grant.expired = grant.token.expires_at.is_some_and(|t| t <= chrono::Utc::now());
            grant
        }))
    }

    /// Notes that a valid token was presented: writes its `last_used_at` in
    /// the background, at most once per [`TOUCH_EVERY`] per token, so
    /// requests never wait for the writer.
    fn note_use(&self, token: &quire_store::TokenInfo) {
        let now = Instant::now();
        let due = match self.inner.touched.lock() {
            Ok(mut touched) => {
                if touched.len() > 10_000 {
                    touched.clear();
                }
                match touched.get(&token.id) {
                    Some(at) if now.duration_since(*at) < TOUCH_EVERY => false,
                    // Unknown here but recorded as recent (another process,
                    // or before a restart): wait a full period from now.
                    None if token.last_used_at.is_some_and(|t| {
                        chrono::Utc::now() - t < chrono::TimeDelta::seconds(TOUCH_EVERY.as_secs() as i64)
                    }) =>
                    {
                        touched.insert(token.id.clone(), now);
                        false
                    }
                    _ => {
                        touched.insert(token.id.clone(), now);
                        true
                    }
                }
            }
            Err(_) => false,
        };
        if due {
            let store = self.inner.store.clone();
            let id = token.id.clone();
            tokio::spawn(async move {
                if let Err(e) = store.touch_token(&id).await {
                    tracing::debug!(token = %id, error = %e, "could not record the token's last use");
                }
            });
        }
    }

    /// The scope of a site (slug or id) and environment, checking both
    /// exist; cached as briefly as tokens.
    pub async fn site_scope(&self, site: &str, env: &str) -> Result<quire_store::Scope, error::ApiError> {
        let key = (site.to_string(), env.to_string());
        let store = &self.inner.store;
        let scope = self.inner.scopes.get(key, || async { store.scope_of(site, env).await.map(Some) }).await?;
        scope.ok_or_else(|| error::ApiError::not_found(format!("site {site} has no environment {env}")))
    }

    /// Forgets cached tokens and sites (after a revocation, or a site
    /// archived or restored), so the next request of a revoked token, or of
    /// an archived site, is refused, and tells open event streams to
    /// re-check theirs.
    pub fn forget_tokens(&self) {
        self.inner.tokens.clear();
        self.inner.scopes.clear();
        self.inner.revocations.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Completes once the caller's token is revoked or expired, or their
    /// browser session ends (sign-out, expiry, the user disabled): checked
    /// when this process makes or notices a revocation or a user is
    /// disabled, and every [`STREAM_RECHECK`] besides. Long-lived responses
    /// (event streams) end on it.
    pub fn until_ended(&self, caller: &auth::Caller) -> impl std::future::Future<Output = ()> + Send + use<> {
        let store = self.inner.store.clone();
        let who = caller.who.clone();
        let mut changes = self.inner.revocations.subscribe();
        let mut stopping = self.inner.stopping.subscribe();
        let ended = async move {
            let mut told = true;
            loop {
                if told {
                    tokio::select! {
                        // An error means the state is gone: the timer alone re-checks then.
                        changed = changes.changed() => told = changed.is_ok(),
                        _ = tokio::time::sleep(STREAM_RECHECK) => {}
                    }
                } else {
                    tokio::time::sleep(STREAM_RECHECK).await;
                }
                let live = match &who {
                    auth::Who::Token(t) => store.live_token_group(&t.id).await.map(|g| g.is_some()),
                    auth::Who::Person(s) => store.web_session_live(&s.id).await,
                };
                match live {
                    Ok(true) => {}
                    Ok(false) => return,
                    Err(e) => tracing::warn!(error = %e, "could not re-check a stream's credentials"),
                }
            }
        };
        async move {
            tokio::select! {
                _ = ended => {}
                // An error means the state is gone: the stream ends too.
                _ = stopping.wait_for(|s| *s) => {}
            }
        }
    }
}

/// Largest request body accepted, in bytes.
pub const BODY_LIMIT: usize = 2 * 1024 * 1024;

/// The whole application router.
pub fn router(state: AppState) -> Router {
    router_with(state, Router::new())
}

/// The application router with `extra` routes (the back-office) merged in,
/// under the same layers.
pub fn router_with(state: AppState, extra: Router<AppState>) -> Router {
    router_with_files(state, extra, Router::new())
}

/// [`router_with`], and `files`: routes of `extra`'s kind that take files,
/// merged beside the API's own file routes, outside the 2 MiB limit (they
/// bring their own: [`multipart::with_upload_limit`]).
pub fn router_with_files(state: AppState, extra: Router<AppState>, files: Router<AppState>) -> Router {
    let request_id = HeaderName::from_static("x-request-id");
    let mcp = mcp::service(&state);
    let max_upload = state.registry().services().media.max_upload_bytes;
    let app = Router::new()
        .merge(routes::router())
        .merge(extra)
        .merge(openapi::router())
        .route("/uploads/{*path}", axum::routing::get(routes::uploads::serve_file))
        .nest_service("/mcp", mcp)
        .layer(tower_http::limit::RequestBodyLimitLayer::new(BODY_LIMIT))
        // Merged after the 2 MiB limit, with their own (`max_upload_mb`).
        .merge(routes::uploads::router(max_upload))
        .merge(routes::images::file_router(max_upload))
        .merge(files)
        .with_state(state)
        .layer(TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
            // The fields are read only when the span is logged.
            let id = || req.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or("");
            tracing::debug_span!("request", method = %req.method(), uri = %LoggedUri(req.uri()), id = id())
        }))
        .layer(PropagateRequestIdLayer::new(request_id.clone()))
        .layer(SetRequestIdLayer::new(request_id, RequestIds))
        .layer(tower_http::catch_panic::CatchPanicLayer::new());
    // Around the whole router, not each of its routes (what `Router::layer`
    // wraps): axum adds a 405's `Allow` header outside a route's layers, and
    // the JSON error names the allowed methods. Outermost, so the errors of
    // every layer above get the JSON shape.
    Router::new().fallback_service(app).layer(axum::middleware::from_fn(baseline_headers))
}

/// A request's URI as the log shows it: a sign-in link's path is its
/// secret, never logged.
struct LoggedUri<'a>(&'a axum::http::Uri);

impl std::fmt::Display for LoggedUri<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.path().starts_with("/sign-in/link/") { f.write_str("/sign-in/link/…") } else { self.0.fmt(f) }
    }
}

/// Makes each request's `x-request-id`: a random version 4 UUID, as
/// tower-http's `MakeRequestUuid` makes, drawn from a generator each
/// thread seeds once from the operating system's randomness instead of a
/// system call per request. An id only tells one request from another in
/// the log; nothing relies on it being unguessable.
#[derive(Clone, Copy)]
struct RequestIds;

impl tower_http::request_id::MakeRequestId for RequestIds {
    fn make_request_id<B>(&mut self, _: &Request<B>) -> Option<tower_http::request_id::RequestId> {
        let text = request_uuid(next_random_bytes());
        axum::http::HeaderValue::from_bytes(&text).ok().map(tower_http::request_id::RequestId::new)
    }
}

/// 16 bytes of this thread's generator (SplitMix64 over a counter whose
/// start is random).
fn next_random_bytes() -> [u8; 16] {
    use std::hash::BuildHasher;
    thread_local! {
        static STATE: std::cell::Cell<u64> =
            std::cell::Cell::new(std::hash::RandomState::new().hash_one(std::time::SystemTime::now()));
    }
    fn split_mix(state: &std::cell::Cell<u64>) -> u64 {
        let mut z = state.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
        state.set(z);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    let (high, low) = STATE.with(|state| (split_mix(state), split_mix(state)));
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&high.to_be_bytes());
    bytes[8..].copy_from_slice(&low.to_be_bytes());
    bytes
}

/// `bytes` as a version 4 UUID's text (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`,
/// lower case), its version and variant bits set.
fn request_uuid(mut bytes: [u8; 16]) -> [u8; 36] {
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut text = [b'-'; 36];
    let mut at = 0;
    for (i, byte) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            at += 1;
        }
        text[at] = HEX[usize::from(byte >> 4)];
        text[at + 1] = HEX[usize::from(byte & 0x0f)];
        at += 2;
    }
    text
}

/// Headers every response carries unless it set its own: no MIME sniffing,
/// no framing (the back-office shares this origin), and uploaded files
/// sandboxed so nothing served from `/uploads` runs as this origin; inside
/// them, every error in its JSON shape ([`error::json_errors`]). One
/// middleware for both: each costs a boxed future per request.
async fn baseline_headers(req: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    use axum::http::{HeaderValue, header};
    let uploads = req.uri().path().starts_with("/uploads/");
    let mut response = error::json_errors(req, next).await;
    let headers = response.headers_mut();
    headers.entry(header::X_CONTENT_TYPE_OPTIONS).or_insert(HeaderValue::from_static("nosniff"));
    headers.entry(header::X_FRAME_OPTIONS).or_insert(HeaderValue::from_static("DENY"));
    if uploads {
        headers
            .entry(header::CONTENT_SECURITY_POLICY)
            .or_insert(HeaderValue::from_static("default-src 'none'; img-src 'self'; sandbox"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_distinct_version_4_uuids() {
        let bytes: [u8; 16] = std::array::from_fn(|i| i as u8);
        assert_eq!(&request_uuid(bytes), b"00010203-0405-4607-8809-0a0b0c0d0e0f");
        assert_eq!(&request_uuid([0xff; 16]), b"ffffffff-ffff-4fff-bfff-ffffffffffff");
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let text = request_uuid(next_random_bytes());
            let text = std::str::from_utf8(&text).unwrap().to_string();
            let groups: Vec<&str> = text.split('-').collect();
            assert_eq!(groups.iter().map(|g| g.len()).collect::<Vec<_>>(), [8, 4, 4, 4, 12], "{text}");
            assert!(text.bytes().all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{text}");
            assert!(groups[2].starts_with('4') && groups[3].starts_with(['8', '9', 'a', 'b']), "{text}");
            assert!(seen.insert(text));
        }
        let other = std::thread::spawn(|| request_uuid(next_random_bytes())).join().unwrap();
        assert!(!seen.contains(std::str::from_utf8(&other).unwrap()));
    }
}
