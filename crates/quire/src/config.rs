//! Configuration: defaults, then `quire.toml`, then `QUIRE_*` environment
//! variables, then command-line flags (applied by the caller).

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where `serve` listens when neither `--addr` nor `addr` says.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";

/// Everything the binary can be configured with.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Address `serve` listens on (`QUIRE_ADDR`; default [`DEFAULT_ADDR`]).
    /// Set or not, it is what other commands take the server's address to
    /// be when `public_url` is not set.
    pub addr: Option<String>,
    /// Data directory: database and uploads (`QUIRE_DATA`).
    pub data: PathBuf,
    /// The database, when not `<data>/quire.db`: a PostgreSQL URL
    /// (`postgres://user:password@host:5432/quire`, the database must exist)
    /// or a SQLite file's path (`QUIRE_DATABASE_URL`).
    pub database_url: Option<String>,
    /// When a SQLite commit is on disk (`QUIRE_SQLITE_SYNCHRONOUS`): `full`
    /// (default: synced at every commit, so nothing acknowledged is lost
    /// even to a power loss) or `normal` (synced at checkpoints: survives a
    /// crash of the process, not of the machine). PostgreSQL ignores it.
    pub sqlite_synchronous: String,
    /// Site slug public delivery serves and tokens default to (`QUIRE_DEFAULT_SITE`).
    pub default_site: String,
    /// Log filter, e.g. `info` or `quire_server=debug` (`QUIRE_LOG`).
    pub log: String,
    /// `text` or `json` (`QUIRE_LOG_FORMAT`).
    pub log_format: String,
    /// The address people reach the server at, e.g. `https://cms.example.com`
    /// (`QUIRE_PUBLIC_URL`): sign-in links point there, and an `https` one
    /// marks the session cookie `Secure`.
    pub public_url: Option<String>,
    /// Admin token value to create on start (`QUIRE_BOOTSTRAP_TOKEN`).
    pub bootstrap_token: Option<String>,
    /// Async worker threads (`QUIRE_WORKERS`; default: one per core).
    pub workers: Option<usize>,
    /// Host names `/mcp` accepts besides loopback (`QUIRE_MCP_ALLOWED_HOSTS='["cms.example.com"]'`).
    pub mcp_allowed_hosts: Vec<String>,
    /// Browser Origins `/mcp` accepts besides the server's own, e.g. `["https://app.example.com"]` (`QUIRE_MCP_ALLOWED_ORIGINS`); requests from any other Origin get 403.
    pub mcp_allowed_origins: Vec<String>,
    /// Folder holding one notes vault per site (`QUIRE_VAULTS_DIR`; default `<data>/vaults`).
    pub vaults_dir: Option<PathBuf>,
    /// A site's vault elsewhere, e.g. an existing Obsidian vault: `[vaults] demo = "/notes"`.
    pub vaults: BTreeMap<String, PathBuf>,
    /// Largest file an upload may be, in megabytes (`QUIRE_MAX_UPLOAD_MB`, default 25).
    pub max_upload_mb: u64,
    /// Most pixels an image may have, in megapixels (`QUIRE_MAX_IMAGE_MEGAPIXELS`,
    /// default 16): refused from its header past it. A process decodes one
    /// image at a time, in about its decoded size plus up to 80 MB.
    pub max_image_megapixels: u64,
    /// Requests a minute each token or person may make, shared by every
    /// replica (`QUIRE_REQUESTS_PER_MINUTE`; 0, the default: no limit).
    /// Past it, 429 with `Retry-After`.
    pub requests_per_minute: u32,
    /// Agent turns an hour each token or person may start, shared by every
    /// replica (`QUIRE_AGENT_TURNS_PER_HOUR`; 0, the default: no limit).
    /// Past it, 429 with `Retry-After`.
    pub agent_turns_per_hour: u32,
    /// Model tokens (prompt and answer) a site's agents may use a day,
    /// from 00:00 UTC (`QUIRE_MODEL_TOKENS_PER_DAY`; 0, the default: no
    /// budget). Once spent, turns are refused with 429 and a running one
    /// stops before its next model call.
    pub model_tokens_per_day: u64,
    /// Milliseconds a webhook delivery waits after each failed attempt,
    /// one entry per retry (`QUIRE_WEBHOOK_RETRY_MS`; default 5 s, 5 min,
    /// 30 min, 2 h, 5 h, 10 h, 10 h, 10 h: about a day and a half).
    pub webhook_retry_ms: Vec<u64>,
    /// Seconds a request's line and headers may take to arrive, and a
    /// kept-alive connection may stay idle (`QUIRE_HEADER_TIMEOUT_SECS`, default 10).
    pub header_timeout_secs: u64,
    /// Seconds a request body may pause, and its head start before it must
    /// average 8 KiB/s (`QUIRE_BODY_TIMEOUT_SECS`, default 30); past either: 408.
    pub body_timeout_secs: u64,
    /// Connections one client address may hold open at once, 0 for no limit
    /// (`QUIRE_MAX_CONNECTIONS_PER_ADDRESS`, default 256). Behind a reverse
    /// proxy every connection comes from the proxy's address.
    pub max_connections_per_address: usize,
    /// Seconds a media job is held by its worker, renewed while it runs; a
    /// job whose process stopped is taken over after this (`QUIRE_JOB_LEASE_SECS`, default 30).
    pub job_lease_secs: u64,
    /// Hours an upload that no image was made of is kept before it is
    /// removed (`QUIRE_UPLOAD_TTL_HOURS`, default 24).
    pub upload_ttl_hours: u64,
    /// Model profiles by name (`[profiles.default]`); `default` otherwise
    /// comes from `QUIRE_LLM_*` (see the README).
    pub profiles: BTreeMap<String, quire_agent::Profile>,
    /// The guarded HTTP client of the external tools (`[http]`).
    pub http: HttpConfig,
    /// Stock photo and web search providers (`[external]`).
    pub external: ExternalConfig,
    /// Where published media is kept (`[media]`, `QUIRE_MEDIA_*`).
    pub media: MediaConfig,
}

/// `[media]`: where the published media files (what `/uploads` serves)
/// are kept. Received uploads are staged in `<data>/uploads` either way.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MediaConfig {
    /// `local` (default: `<data>/uploads`) or `s3` (`QUIRE_MEDIA_STORAGE`).
    pub storage: String,
    /// Base URL of an S3-compatible service; none: Amazon S3
    /// (`QUIRE_MEDIA_S3_ENDPOINT`).
    pub s3_endpoint: Option<String>,
    /// The bucket, which must exist (`QUIRE_MEDIA_S3_BUCKET`).
    pub s3_bucket: Option<String>,
    /// The region requests are signed for (`QUIRE_MEDIA_S3_REGION`, default `us-east-1`).
    pub s3_region: String,
    /// Access key id (`QUIRE_MEDIA_S3_ACCESS_KEY_ID`); none, with no
    /// secret either: the usual `AWS_*` variables.
    pub s3_access_key_id: Option<String>,
    /// Secret access key (`QUIRE_MEDIA_S3_SECRET_ACCESS_KEY`).
    #[serde(skip_serializing)]
    pub s3_secret_access_key: Option<String>,
    /// `<endpoint>/<bucket>` addressing rather than `<bucket>.<endpoint>`
    /// (`QUIRE_MEDIA_S3_PATH_STYLE`; default: true with an endpoint).
    pub s3_path_style: Option<bool>,
    /// Allows an `http://` endpoint (`QUIRE_MEDIA_S3_ALLOW_HTTP`, default false).
    pub s3_allow_http: bool,
}

impl Default for MediaConfig {
    fn default() -> Self {
        MediaConfig {
            storage: "local".into(),
            s3_endpoint: None,
            s3_bucket: None,
            s3_region: "us-east-1".into(),
            s3_access_key_id: None,
            s3_secret_access_key: None,
            s3_path_style: None,
            s3_allow_http: false,
        }
    }
}

impl MediaConfig {
    /// The storage these settings describe; an error names the field.
    pub fn storage(&self) -> Result<quire_tools::storage::StorageConfig, String> {
        use quire_tools::storage::{S3Config, StorageConfig};
        let set = |v: &Option<String>| v.as_deref().map(str::trim).filter(|v| !v.is_empty()).map(str::to_string);
        match self.storage.trim() {
            "local" => Ok(StorageConfig::Local),
            "s3" => {
                let endpoint = set(&self.s3_endpoint);
                Ok(StorageConfig::S3(S3Config {
                    path_style: self.s3_path_style.unwrap_or(endpoint.is_some()),
                    endpoint,
                    bucket: set(&self.s3_bucket).ok_or("media.s3_bucket: required when media.storage is \"s3\"")?,
                    region: self.s3_region.trim().to_string(),
                    access_key_id: set(&self.s3_access_key_id),
                    secret_access_key: set(&self.s3_secret_access_key),
                    allow_http: self.s3_allow_http,
                }))
            }
            other => Err(format!("media.storage: \"{other}\" is not one of local, s3")),
        }
    }
}

/// `[http]`: what the external tools may reach besides public addresses,
/// and their limits.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HttpConfig {
    /// Hosts (`wiki.corp`, `*.corp.example`) and ranges (`10.20.0.0/16`)
    /// allowed although private, e.g. a self-hosted SearXNG.
    pub allow: Vec<String>,
    /// Seconds one request may take, redirects and body included (default 20).
    pub timeout_secs: u64,
    /// Largest response read, in megabytes (default 5; imports use `max_upload_mb`).
    pub max_mb: u64,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig { allow: Vec::new(), timeout_secs: 20, max_mb: 5 }
    }
}

/// `[external]`: provider keys and base URLs. Keys also come from
/// `PEXELS_API_KEY`, `UNSPLASH_ACCESS_KEY` and `BRAVE_API_KEY`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExternalConfig {
    /// Pexels API key.
    #[serde(skip_serializing)]
    pub pexels_key: Option<String>,
    /// Unsplash access key.
    #[serde(skip_serializing)]
    pub unsplash_key: Option<String>,
    /// Brave Search API key.
    #[serde(skip_serializing)]
    pub brave_key: Option<String>,
    /// Base URL of a SearXNG instance with the JSON format enabled (no key).
    pub searxng_url: Option<String>,
    /// Search providers in the order they are asked (default searxng, brave).
    pub search: Vec<String>,
    /// Pexels API base URL.
    pub pexels_url: String,
    /// Unsplash API base URL.
    pub unsplash_url: String,
    /// Brave Search API base URL.
    pub brave_url: String,
}

impl Default for ExternalConfig {
    fn default() -> Self {
        ExternalConfig {
            pexels_key: None,
            unsplash_key: None,
            brave_key: None,
            searxng_url: None,
            search: vec!["searxng".into(), "brave".into()],
            pexels_url: "https://api.pexels.com".into(),
            unsplash_url: "https://api.unsplash.com".into(),
            brave_url: "https://api.search.brave.com".into(),
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            addr: None,
            data: PathBuf::from("./quire-data"),
            database_url: None,
            sqlite_synchronous: "full".into(),
            default_site: "demo".into(),
            log: "info".into(),
            log_format: "text".into(),
            public_url: None,
            bootstrap_token: None,
            workers: None,
            mcp_allowed_hosts: Vec::new(),
            mcp_allowed_origins: Vec::new(),
            vaults_dir: None,
            vaults: BTreeMap::new(),
            max_upload_mb: 25,
            max_image_megapixels: quire_tools::media::DEFAULT_MAX_MEGAPIXELS,
            requests_per_minute: 0,
            agent_turns_per_hour: 0,
            model_tokens_per_day: 0,
            webhook_retry_ms: quire_tools::webhooks::RETRIES.iter().map(|d| d.as_millis() as u64).collect(),
            header_timeout_secs: 10,
            body_timeout_secs: 30,
            max_connections_per_address: 256,
            job_lease_secs: 30,
            upload_ttl_hours: 24,
            profiles: BTreeMap::new(),
            http: HttpConfig::default(),
            external: ExternalConfig::default(),
            media: MediaConfig::default(),
        }
    }
}

/// The keys settable from `QUIRE_*` variables.
const KEYS: [&str; 24] = [
    "addr",
    "data",
    "database_url",
    "sqlite_synchronous",
    "default_site",
    "log",
    "log_format",
    "public_url",
    "bootstrap_token",
    "workers",
    "mcp_allowed_hosts",
    "mcp_allowed_origins",
    "vaults_dir",
    "max_upload_mb",
    "max_image_megapixels",
    "requests_per_minute",
    "agent_turns_per_hour",
    "model_tokens_per_day",
    "webhook_retry_ms",
    "header_timeout_secs",
    "body_timeout_secs",
    "max_connections_per_address",
    "job_lease_secs",
    "upload_ttl_hours",
];

/// The keys of `[media]` settable from `QUIRE_MEDIA_*` variables.
const MEDIA_KEYS: [&str; 8] = [
    "storage",
    "s3_endpoint",
    "s3_bucket",
    "s3_region",
    "s3_access_key_id",
    "s3_secret_access_key",
    "s3_path_style",
    "s3_allow_http",
];

impl Config {
    /// Loads the configuration; `file` defaults to `./quire.toml` when it exists.
    pub fn load(file: Option<&Path>) -> Result<Self, Box<figment::Error>> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        match file {
            Some(path) => figment = figment.merge(Toml::file_exact(path)),
            None => figment = figment.merge(Toml::file("quire.toml")),
        }
        // Only configuration keys: other QUIRE_* variables (QUIRE_TOKEN,
        // QUIRE_CONFIG, ...) belong to the command line.
        figment
            .merge(Env::prefixed("QUIRE_").only(&KEYS))
            .merge(Env::prefixed("QUIRE_MEDIA_").only(&MEDIA_KEYS).map(|k| format!("media.{k}").into()))
            .extract()
            .map_err(Box::new)
    }

    /// How the store is opened, checked: an error names the setting.
    pub fn store_options(&self) -> Result<quire_store::StoreOptions, String> {
        let synchronous = self.sqlite_synchronous.parse().map_err(|e| format!("sqlite_synchronous: {e}"))?;
        Ok(quire_store::StoreOptions { synchronous })
    }

    /// The address `serve` listens on: `flag` (`--addr`), else `addr`, else
    /// [`DEFAULT_ADDR`].
    pub fn listen_addr(&self, flag: Option<String>) -> String {
        flag.or_else(|| self.addr.clone()).unwrap_or_else(|| DEFAULT_ADDR.into())
    }

    /// How `serve` guards itself against slow and greedy clients; a zero
    /// timeout is refused, naming the setting.
    pub fn connection_limits(&self) -> Result<quire_server::ConnectionLimits, String> {
        let secs = |name: &str, v: u64| match v {
            0 => Err(format!("{name}: must be at least 1 second")),
            v => Ok(std::time::Duration::from_secs(v)),
        };
        Ok(quire_server::ConnectionLimits {
            header_timeout: secs("header_timeout_secs", self.header_timeout_secs)?,
            body_timeout: secs("body_timeout_secs", self.body_timeout_secs)?,
            per_address: self.max_connections_per_address,
        })
    }

    /// The media storage of `data`, checked: an error names the setting.
    pub fn media_storage(&self, data: &Path) -> Result<quire_tools::storage::Storage, String> {
        let config = self.media.storage()?;
        quire_tools::storage::Storage::from_config(&config, &data.join("uploads")).map_err(|e| e.to_string())
    }
}

impl Config {
    /// The model profiles: the configured ones, with `default` completed
    /// from `QUIRE_LLM_*`, `OPENAI_API_KEY` or `ANTHROPIC_API_KEY`. An
    /// unknown provider or a profile without a model is an error.
    pub fn model_profiles(&self) -> Result<quire_agent::Profiles, String> {
        quire_agent::Profiles::new(self.profiles.clone(), &|k| std::env::var(k).ok())
            .map_err(|e| format!("model provider: {e}"))
    }
}

/// Starts logging to stderr (stdout is kept for command output). Colours
/// only on a terminal: escape codes in a log file or a pipe are noise.
pub fn init_logging(config: &Config) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_new(&config.log)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    // A log line that cannot be written is dropped: reporting that on the
    // same closed stderr (`quire ... 2>&1 | head`) would panic.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .log_internal_errors(false);
    if config.log_format == "json" {
        builder.json().init();
    } else {
        builder.init();
    }
}

#[cfg(test)]
mod tests {
    use super::{Config, MediaConfig};
    use quire_store::Synchronous;

    #[test]
    fn sqlite_syncs_every_commit_unless_told_otherwise() {
        let synchronous = |value: &str| {
            Config { sqlite_synchronous: value.into(), ..Config::default() }.store_options().map(|o| o.synchronous)
        };
        assert_eq!(Config::default().store_options().unwrap().synchronous, Synchronous::Full);
        assert_eq!(synchronous("normal"), Ok(Synchronous::Normal));
        assert_eq!(synchronous("NORMAL"), Ok(Synchronous::Normal));
        assert_eq!(synchronous("off"), Err("sqlite_synchronous: \"off\" is not one of full, normal".into()));
    }
    use quire_tools::storage::StorageConfig;

    #[test]
    fn media_storage_settings_name_what_is_wrong() {
        assert_eq!(MediaConfig::default().storage(), Ok(StorageConfig::Local));
        let s3 = |f: fn(&mut MediaConfig)| {
            let mut m = MediaConfig { storage: "s3".into(), s3_bucket: Some("media".into()), ..MediaConfig::default() };
            f(&mut m);
            m.storage()
        };
        assert_eq!(
            MediaConfig { storage: "disk".into(), ..MediaConfig::default() }.storage(),
            Err("media.storage: \"disk\" is not one of local, s3".into())
        );
        assert!(s3(|m| m.s3_bucket = None).unwrap_err().starts_with("media.s3_bucket:"));
        let Ok(StorageConfig::S3(c)) = s3(|m| m.s3_endpoint = Some("http://127.0.0.1:9000".into())) else { panic!() };
        assert!(c.path_style, "path style by default with an endpoint");
        let Ok(StorageConfig::S3(c)) = s3(|_| {}) else { panic!() };
        assert!(!c.path_style && c.region == "us-east-1");
    }
}
