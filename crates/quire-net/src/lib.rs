//! Quire's guarded HTTP client: the one way tools reach the network.
//!
//! Every external tool (stock images, web search, page fetching, `httpGet`
//! and `httpPost`) sends its requests through a [`NetClient`]. It speaks
//! http and https only and refuses loopback, private, link-local, CGNAT,
//! multicast, unspecified, reserved and cloud-metadata addresses however
//! they are spelled ([`address`]), unless the operator's allow list
//! (`[http] allow`) names the host or a range holding the address. A host
//! name is resolved once per connection by the client's own resolver, which
//! checks every answer and hands the connection exactly the checked
//! addresses: there is no second lookup an attacker's DNS could answer
//! differently. Redirects are followed by hand (at most
//! [`Limits::max_redirects`]) and each target is checked again; bodies are
//! streamed and cut off at a size limit; the whole exchange runs under a
//! time limit; a caller names the content types it accepts. Every refusal
//! is a [`NetError`] that names the rule that refused.

pub mod address;

pub use address::{is_metadata, parse_ip, refused_class};

use ipnet::IpNet;
use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use url::{Host, Url};

/// Why a request was refused or failed. The `Display` text names the rule.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NetError {
    /// The URL could not be read.
    #[error("url: {0}")]
    InvalidUrl(String),
    /// A header or body the client will not send.
    #[error("request: {0}")]
    InvalidRequest(String),
    /// Not http or https.
    #[error("refused by the scheme rule: {scheme}: is not allowed; only http and https are")]
    Scheme {
        /// The scheme asked for.
        scheme: String,
    },
    /// The host is, or resolves to, an address of a refused class.
    #[error(
        "refused by the address rule: {host} is {addr}, a {class} address; only public addresses are reached unless an operator allows the host or range in [http] allow"
    )]
    Address {
        /// The host as written in the URL.
        host: String,
        /// The address it is or resolved to.
        addr: IpAddr,
        /// Which class (`loopback`, `private`, `cloud metadata`, ...).
        class: &'static str,
    },
    /// The name did not resolve.
    #[error("could not resolve {host}: {message}")]
    Resolve {
        /// The host.
        host: String,
        /// The resolver's answer.
        message: String,
    },
    /// More redirects than allowed.
    #[error("refused by the redirect rule: more than {limit} redirects")]
    Redirects {
        /// The limit.
        limit: usize,
    },
    /// The body is larger than allowed.
    #[error("refused by the size rule: the response is larger than {limit} bytes; the transfer was cut off")]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// The exchange took longer than allowed.
    #[error("refused by the time rule: no complete answer within {millis} ms; the transfer was cut off")]
    Timeout {
        /// The limit in milliseconds.
        millis: u128,
    },
    /// The response's type is not one the caller accepts.
    #[error("refused by the content-type rule: the response is {got}, expected {expected}")]
    ContentType {
        /// What the server sent (`none` when it sent no type).
        got: String,
        /// What the caller accepts.
        expected: String,
    },
    /// The connection failed.
    #[error("could not reach {host}: {message}")]
    Transport {
        /// The host.
        host: String,
        /// What failed.
        message: String,
    },
}

impl NetError {
    /// The rule that refused (`scheme`, `address`, `redirect`, `size`,
    /// `time`, `content-type`), or `None` for failures that are not
    /// refusals (a bad URL, an unreachable host).
    pub fn rule(&self) -> Option<&'static str> {
        Some(match self {
            NetError::Scheme { .. } => "scheme",
            NetError::Address { .. } => "address",
            NetError::Redirects { .. } => "redirect",
            NetError::TooLarge { .. } => "size",
            NetError::Timeout { .. } => "time",
            NetError::ContentType { .. } => "content-type",
            _ => return None,
        })
    }
}

/// What an operator allows besides public addresses: host names (exact,
/// or every subdomain with `*.example.com`) and address ranges
/// (`10.20.0.0/16`, a single address).
#[derive(Debug, Clone, Default)]
pub struct Policy {
    hosts: Vec<String>,
    suffixes: Vec<String>,
    nets: Vec<IpNet>,
}

impl Policy {
    /// Reads allow entries; an entry that is neither a host name, a
    /// `*.domain` pattern nor an address or range is an error naming it.
    pub fn new(allow: &[String]) -> Result<Self, String> {
        let mut policy = Policy::default();
        for entry in allow {
            let e = entry.trim().trim_end_matches('.').to_ascii_lowercase();
            if let Ok(net) = e.parse::<IpNet>() {
                policy.nets.push(net);
            } else if let Ok(ip) = e.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
                policy.nets.push(IpNet::from(ip));
            } else if let Some(domain) = e.strip_prefix("*.").filter(|d| is_host_name(d)) {
                policy.suffixes.push(format!(".{domain}"));
            } else if is_host_name(&e) {
                policy.hosts.push(e);
            } else {
                return Err(format!("http.allow: \"{entry}\" is not a host name, *.domain, address or CIDR range"));
            }
        }
        Ok(policy)
    }

    fn host_allowed(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.hosts.contains(&host) || self.suffixes.iter().any(|s| host.ends_with(s.as_str()))
    }

    /// Whether `host` may be reached at `ip`: a public address always; a
    /// refused class when a range holds the address, or (cloud metadata
    /// excepted) when the host name is allowed.
    pub fn check(&self, host: &str, ip: IpAddr) -> Result<(), NetError> {
        let ip = canonical(ip);
        if self.nets.iter().any(|n| n.contains(&ip)) {
            return Ok(());
        }
        let Some(class) = refused_class(ip) else { return Ok(()) };
        if !is_metadata(ip) && self.host_allowed(host) {
            return Ok(());
        }
        Err(NetError::Address { host: host.to_string(), addr: ip, class })
    }
}

/// IPv4-mapped IPv6 addresses as the IPv4 address they are, so a range
/// written in IPv4 matches them.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

fn is_host_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|l| {
            !l.is_empty() && l.len() <= 63 && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
}

/// A boxed future of a lookup's addresses.
pub type LookupFuture = Pin<Box<dyn Future<Output = Result<Vec<IpAddr>, String>> + Send>>;

/// Resolves host names. The client checks whatever a resolver answers, so
/// a resolver can only narrow what is reached, never widen it.
pub trait Resolve: Send + Sync {
    /// The addresses of `host`.
    fn lookup(&self, host: &str) -> LookupFuture;
}

/// The operating system's resolver (`getaddrinfo` on a blocking thread).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn lookup(&self, host: &str) -> LookupFuture {
        let host = host.to_string();
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host.as_str(), 0)).await.map_err(|e| e.to_string())?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// A host's answers and which one comes next.
type Answers = (usize, Vec<Vec<IpAddr>>);

/// A fixed table of answers, like a hosts file: each host answers its
/// list of answers in turn (the last one repeats), and every lookup is
/// counted. Useful for fixed intranet maps and for tests that must see
/// a name answer differently the second time.
#[derive(Debug, Default)]
pub struct StaticResolver {
    answers: Mutex<HashMap<String, Answers>>,
    lookups: AtomicUsize,
}

impl StaticResolver {
    /// An empty table: every name fails to resolve.
    pub fn new() -> Self {
        Self::default()
    }

    /// `host` answers `addrs` on every lookup.
    pub fn with(self, host: &str, addrs: &[IpAddr]) -> Self {
        self.with_sequence(host, vec![addrs.to_vec()])
    }

    /// `host` answers the first list on the first lookup, the second on
    /// the second, and so on; the last repeats.
    pub fn with_sequence(self, host: &str, answers: Vec<Vec<IpAddr>>) -> Self {
        if let Ok(mut table) = self.answers.lock() {
            table.insert(host.to_ascii_lowercase(), (0, answers));
        }
        self
    }

    /// How many lookups were made.
    pub fn lookups(&self) -> usize {
        self.lookups.load(Ordering::SeqCst)
    }
}

impl Resolve for StaticResolver {
    fn lookup(&self, host: &str) -> LookupFuture {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        let answer = self.answers.lock().ok().and_then(|mut table| {
            let (next, answers) = table.get_mut(&host.to_ascii_lowercase())?;
            let a = answers.get(*next).or_else(|| answers.last()).cloned();
            *next += 1;
            a
        });
        Box::pin(async move { answer.ok_or_else(|| "no such host".to_string()) })
    }
}

/// The client's resolver as reqwest sees it: resolve, check every
/// address, and hand the connection exactly the checked ones.
struct Guard {
    inner: Arc<dyn Resolve>,
    policy: Arc<Policy>,
}

impl reqwest::dns::Resolve for Guard {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        let inner = self.inner.clone();
        let policy = self.policy.clone();
        Box::pin(async move {
            let refuse = |e: NetError| -> Box<dyn std::error::Error + Send + Sync> { Box::new(e) };
            // A name spelled like an address is judged as that address.
            let ips = match parse_ip(&host) {
                Some(ip) => vec![ip],
                None => inner
                    .lookup(&host)
                    .await
                    .map_err(|message| refuse(NetError::Resolve { host: host.clone(), message }))?,
            };
            if ips.is_empty() {
                return Err(refuse(NetError::Resolve { host, message: "no addresses".into() }));
            }
            // Every answer must pass: a name answering one public and one
            // private address is refused rather than raced.
            for ip in &ips {
                policy.check(&host, *ip).map_err(refuse)?;
            }
            let addrs: reqwest::dns::Addrs = Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// Size and time limits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest body read, in bytes (default 5 MiB); a request may lower it.
    pub max_bytes: u64,
    /// Whole exchange, redirects and body included (default 20 s).
    pub timeout: Duration,
    /// Establishing one connection (default 10 s).
    pub connect_timeout: Duration,
    /// Redirects followed (default 5).
    pub max_redirects: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 5 * 1024 * 1024,
            timeout: Duration::from_secs(20),
            connect_timeout: Duration::from_secs(10),
            max_redirects: 5,
        }
    }
}

/// GET or POST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// GET.
    Get,
    /// POST.
    Post,
}

/// One request.
#[derive(Debug, Clone)]
pub struct Request {
    /// GET or POST.
    pub method: Method,
    /// Absolute http(s) URL.
    pub url: String,
    /// Headers to send.
    pub headers: Vec<(String, String)>,
    /// Body (POST).
    pub body: Option<Vec<u8>>,
    /// Accepted content types of a successful answer: `text/html`,
    /// `image/*`, `+json` (any `…+json`); empty accepts any.
    pub accept: Vec<String>,
    /// A lower size limit than the client's.
    pub max_bytes: Option<u64>,
    /// Follow redirects (re-checking each); off answers the redirect.
    pub follow_redirects: bool,
}

impl Request {
    /// A GET of `url` following redirects.
    pub fn get(url: impl Into<String>) -> Self {
        Request {
            method: Method::Get,
            url: url.into(),
            headers: Vec::new(),
            body: None,
            accept: Vec::new(),
            max_bytes: None,
            follow_redirects: true,
        }
    }

    /// A POST of `body` to `url`; redirects are answered, not followed.
    pub fn post(url: impl Into<String>, body: Vec<u8>) -> Self {
        Request { method: Method::Post, body: Some(body), follow_redirects: false, ..Request::get(url) }
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the accepted content types.
    pub fn accept(mut self, types: &[&str]) -> Self {
        self.accept = types.iter().map(|t| t.to_string()).collect();
        self
    }

    /// Lowers the size limit.
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = Some(bytes);
        self
    }
}

/// A complete answer.
#[derive(Debug, Clone)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// The URL that answered (after redirects).
    pub url: String,
    /// The `Content-Type` essence (`text/html`), lowercased.
    pub content_type: Option<String>,
    /// The `charset` parameter of the content type, if any.
    pub charset: Option<String>,
    /// Response headers (values that are not text are left out).
    pub headers: Vec<(String, String)>,
    /// The body, at most the size limit.
    pub body: Vec<u8>,
    /// Each redirect followed, in order.
    pub redirects: Vec<String>,
}

impl Response {
    /// Whether the status is 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Headers a caller may not set: the client owns framing and the
/// connection, and the Host header follows the URL.
const RESERVED_HEADERS: [&str; 7] =
    ["host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "proxy-authorization"];

/// Headers dropped when a redirect leaves the origin, so credentials meant
/// for one service do not reach another.
const CREDENTIAL_HEADERS: [&str; 5] =
    ["authorization", "cookie", "x-api-key", "x-subscription-token", "proxy-authorization"];

/// The guarded client. Cheap to clone (one connection pool).
#[derive(Clone)]
pub struct NetClient {
    http: reqwest::Client,
    policy: Arc<Policy>,
    limits: Limits,
}

impl std::fmt::Debug for NetClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetClient").field("policy", &self.policy).field("limits", &self.limits).finish()
    }
}

impl NetClient {
    /// A client using the system resolver, refusing everything but public
    /// addresses and what `allow` names.
    pub fn new(allow: &[String], limits: Limits) -> Result<Self, String> {
        Self::with_resolver(allow, limits, Arc::new(SystemResolver))
    }

    /// A client resolving names with `resolver` (its answers are checked
    /// like any other).
    pub fn with_resolver(allow: &[String], limits: Limits, resolver: Arc<dyn Resolve>) -> Result<Self, String> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let policy = Arc::new(Policy::new(allow)?);
        let http = reqwest::Client::builder()
            // A proxy would make the checked address the proxy's, not the target's.
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(Guard { inner: resolver, policy: policy.clone() }))
            .connect_timeout(limits.connect_timeout)
            .user_agent(concat!("Quire/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("http client: {e}"))?;
        Ok(NetClient { http, policy, limits })
    }

    /// The limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Checks a URL without sending anything: scheme, and an address
    /// written in the host (names are checked when resolved).
    pub fn check_url(&self, url: &str) -> Result<Url, NetError> {
        let url = Url::parse(url.trim()).map_err(|e| NetError::InvalidUrl(format!("\"{url}\": {e}")))?;
        self.check_parsed(&url)?;
        Ok(url)
    }

    fn check_parsed(&self, url: &Url) -> Result<(), NetError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(NetError::Scheme { scheme: url.scheme().to_string() });
        }
        let host_str = url.host_str().unwrap_or_default().to_string();
        let ip = match url.host() {
            Some(Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
            Some(Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
            Some(Host::Domain(d)) => parse_ip(d),
            None => return Err(NetError::InvalidUrl(format!("\"{url}\" has no host"))),
        };
        if let Some(ip) = ip {
            self.policy.check(&host_str, ip)?;
        }
        Ok(())
    }

    /// Sends a request under the limits, following and re-checking
    /// redirects when asked; checks the content type of a 2xx answer.
    pub async fn send(&self, request: Request) -> Result<Response, NetError> {
        let limit = self.limits.timeout;
        match tokio::time::timeout(limit, self.exchange(request)).await {
            Ok(result) => result,
            Err(_) => Err(NetError::Timeout { millis: limit.as_millis() }),
        }
    }

    async fn exchange(&self, request: Request) -> Result<Response, NetError> {
        for (name, value) in &request.headers {
            let lower = name.to_ascii_lowercase();
            if RESERVED_HEADERS.contains(&lower.as_str()) {
                return Err(NetError::InvalidRequest(format!("header {name} is set by the client")));
            }
            if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err()
                || reqwest::header::HeaderValue::from_str(value).is_err()
            {
                return Err(NetError::InvalidRequest(format!("header {name} is not a valid header")));
            }
        }
        let max_bytes = request.max_bytes.map_or(self.limits.max_bytes, |m| m.min(self.limits.max_bytes));
        let mut url = self.check_url(&request.url)?;
        let mut method = request.method;
        let mut body = request.body.clone();
        let mut headers = request.headers.clone();
        let mut redirects = Vec::new();
        loop {
            self.check_parsed(&url)?;
            let host = url.host_str().unwrap_or_default().to_string();
            let mut rb = match method {
                Method::Get => self.http.get(url.clone()),
                Method::Post => self.http.post(url.clone()),
            };
            for (n, v) in &headers {
                rb = rb.header(n.as_str(), v.as_str());
            }
            if let Some(b) = &body {
                rb = rb.body(b.clone());
            }
            let mut res = rb.send().await.map_err(|e| map_error(e, &host))?;
            let status = res.status().as_u16();
            if request.follow_redirects && matches!(status, 301 | 302 | 303 | 307 | 308) {
                if redirects.len() >= self.limits.max_redirects {
                    return Err(NetError::Redirects { limit: self.limits.max_redirects });
                }
                let location =
                    res.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok()).ok_or_else(|| {
                        NetError::Transport {
                            host: host.clone(),
                            message: format!("redirect {status} without a Location"),
                        }
                    })?;
                let next =
                    url.join(location).map_err(|e| NetError::InvalidUrl(format!("redirect to \"{location}\": {e}")))?;
                if status == 303 || (method == Method::Post && matches!(status, 301 | 302)) {
                    method = Method::Get;
                    body = None;
                }
                if next.origin() != url.origin() {
                    headers.retain(|(n, _)| !CREDENTIAL_HEADERS.contains(&n.to_ascii_lowercase().as_str()));
                }
                redirects.push(next.to_string());
                url = next;
                continue;
            }
            let (content_type, charset) = content_type_of(res.headers());
            if (200..300).contains(&status) && !request.accept.is_empty() {
                let accepted = content_type.as_deref().is_some_and(|ct| accepts(&request.accept, ct));
                if !accepted {
                    return Err(NetError::ContentType {
                        got: content_type.unwrap_or_else(|| "none".into()),
                        expected: request.accept.join(" or "),
                    });
                }
            }
            if res.content_length().is_some_and(|n| n > max_bytes) {
                return Err(NetError::TooLarge { limit: max_bytes });
            }
            let headers_out = res
                .headers()
                .iter()
                .filter_map(|(n, v)| Some((n.as_str().to_string(), v.to_str().ok()?.to_string())))
                .collect();
            let mut bytes = Vec::new();
            while let Some(chunk) = res.chunk().await.map_err(|e| map_error(e, &host))? {
                if bytes.len() as u64 + chunk.len() as u64 > max_bytes {
                    return Err(NetError::TooLarge { limit: max_bytes });
                }
                bytes.extend_from_slice(&chunk);
            }
            return Ok(Response {
                status,
                url: url.to_string(),
                content_type,
                charset,
                headers: headers_out,
                body: bytes,
                redirects,
            });
        }
    }
}

fn content_type_of(headers: &reqwest::header::HeaderMap) -> (Option<String>, Option<String>) {
    let Some(raw) = headers.get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return (None, None);
    };
    let mut parts = raw.split(';');
    let essence = parts.next().map(|s| s.trim().to_ascii_lowercase()).filter(|s| !s.is_empty());
    let charset = parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case("charset").then(|| v.trim().trim_matches('"').to_ascii_lowercase())
    });
    (essence, charset)
}

/// Whether `content_type` (an essence) matches one of `accept`:
/// `type/subtype`, `type/*`, or `+suffix`.
pub fn accepts(accept: &[String], content_type: &str) -> bool {
    accept.iter().any(|a| {
        if let Some(suffix) = a.strip_prefix('+') {
            content_type.ends_with(&format!("+{suffix}"))
        } else if let Some(kind) = a.strip_suffix("/*") {
            content_type.split('/').next() == Some(kind)
        } else {
            content_type == a
        }
    })
}

/// Finds our own refusal inside reqwest's error chain (the resolver's
/// error travels up through hyper), or describes the failure.
fn map_error(e: reqwest::Error, host: &str) -> NetError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(s) = source {
        if let Some(ours) = s.downcast_ref::<NetError>() {
            return ours.clone();
        }
        source = s.source();
    }
    let mut message = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        message = format!("{message}: {s}");
        source = s.source();
    }
    NetError::Transport { host: host.to_string(), message }
}
