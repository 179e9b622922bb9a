//! What the commands share: the data directory and the stores opened in
//! it, the tools' services built from the configuration, the caller of a
//! local command, and the demo seed.

use crate::cli::CallerArgs;
use crate::commands::AnyResult;
use crate::config::Config;
use quire_store::seed::seed_demo_into;
use quire_store::{Location, Store, StoreOptions};
use std::path::PathBuf;
use std::sync::Mutex;

/// A data directory (the database, unless `database_url` names another,
/// and the uploads and vaults folders) and every store this process opened
/// in it. Whatever way a command ends (done, refused, failed), `main`
/// closes them on the way out ([`DataDir::close_stores`]), so the
/// write-ahead log is folded into the database and emptied and the next
/// start does not read it back.
pub struct DataDir {
    /// The directory.
    pub path: PathBuf,
    /// The configured database (`database_url`); none: `<data>/quire.db`.
    database: Option<Location>,
    /// How stores are opened (`sqlite_synchronous`).
    pub options: StoreOptions,
    /// Every store opened so far.
    opened: Mutex<Vec<Store>>,
}

impl DataDir {
    /// The data directory `path`, its database at `database` (none:
    /// `<path>/quire.db`), stores opened with `options`.
    pub fn new(path: PathBuf, database: Option<Location>, options: StoreOptions) -> Self {
        DataDir { path, database, options, opened: Mutex::new(Vec::new()) }
    }

    /// Where the database of the data directory is.
    pub fn database(&self) -> Location {
        self.database.clone().unwrap_or_else(|| Location::File(self.path.join("quire.db")))
    }

    /// Opens the database (see [`DataDir::database`]), remembered until
    /// [`DataDir::close_stores`].
    async fn open_store(&self) -> AnyResult<Store> {
        let at = self.database();
        let store =
            Store::open_with(at.clone(), self.options).await.map_err(|e| format!("opening the database {at}: {e}"))?;
        if let Ok(mut opened) = self.opened.lock() {
            opened.push(store.clone());
        }
        Ok(store)
    }

    /// Closes every store this process opened in the directory.
    pub async fn close_stores(&self) {
        let opened = self.opened.lock().map(|mut o| std::mem::take(&mut *o)).unwrap_or_default();
        for store in opened {
            store.close().await;
        }
    }

    /// Opens the data directory, creating it (and the database) when
    /// missing: for `serve`, `migrate`, `seed` and `import` only.
    pub async fn open_or_create(&self) -> AnyResult<Store> {
        let dir = &self.path;
        std::fs::create_dir_all(dir.join("uploads"))
            .map_err(|e| format!("cannot create data directory {}: {e}", dir.display()))?;
        self.open_store().await
    }
}

/// What a command that uses data accepts in its data directory.
#[derive(Clone, Copy, PartialEq)]
pub enum Existing {
    /// The database must exist.
    Database,
    /// The directory must exist; an empty one gets a new database (which
    /// `mcp` and `chat` seed with the demo site on first use).
    Directory,
}

impl DataDir {
    /// Opens the existing data directory. A missing one is an error naming
    /// the absolute path looked for and how to create it, never a new empty
    /// directory wherever the command happened to run.
    pub async fn open_existing(&self, needs: Existing) -> AnyResult<Store> {
        let dir = self.path.as_path();
        let shown = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let shown = shown.display();
        let create = format!(
            "create it with `quire serve --data {shown}` (first start migrates, seeds the demo site and prints an \
         admin token) or `quire seed --data {shown}`, or point to an existing one with --data DIR or QUIRE_DATA"
        );
        if !dir.is_dir() {
            return Err(format!("no data directory at {shown}: {create}").into());
        }
        if let Location::File(file) = self.database()
            && needs == Existing::Database
            && !file.is_file()
        {
            let name =
                file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned());
            return Err(format!("no Quire database ({name}) in the data directory {shown}: {create}").into());
        }
        std::fs::create_dir_all(dir.join("uploads"))
            .map_err(|e| format!("cannot create {}: {e}", dir.join("uploads").display()))?;
        self.open_store().await
    }
}

/// Seeds the demo site and its notes vault (both idempotent).
pub async fn seed(store: &Store, dir: &std::path::Path, config: &Config) -> AnyResult<quire_store::seed::SeedReport> {
    let services = services(store, dir, config)?;
    let mut report = seed_demo_into(store, &services.storage).await?;
    if let Some(scope) = &report.scope {
        let notes = quire_tools::notes::seed_demo_vault(&services, scope)
            .await
            .map_err(|e| format!("demo vault: {}", e.message))?;
        report.created += notes;
    }
    Ok(report)
}

/// The tools' services over a data directory, with the configured vaults
/// and media storage.
pub fn services(store: &Store, dir: &std::path::Path, config: &Config) -> AnyResult<quire_tools::Services> {
    let mut services = quire_tools::Services::new(store.clone(), dir);
    services.storage = config.media_storage(dir).map_err(|e| format!("configuration: {e}"))?;
    let mut vaults = quire_tools::vaults::Vaults::new(config.vaults_dir.clone().unwrap_or_else(|| dir.join("vaults")));
    for (site, path) in &config.vaults {
        vaults = vaults.with_site(site.clone(), path.clone());
    }
    services.vaults = vaults;
    services.media.max_upload_bytes = config.max_upload_mb.saturating_mul(1024 * 1024);
    if config.max_image_megapixels == 0 {
        return Err("configuration: max_image_megapixels must be at least 1".into());
    }
    services.media.set_max_megapixels(config.max_image_megapixels);
    services.media.lease = std::time::Duration::from_secs(config.job_lease_secs.clamp(1, 3600));
    services.media.upload_ttl = std::time::Duration::from_secs(config.upload_ttl_hours.saturating_mul(3600));
    services.embedder = embedder(config);
    services.describer = describer(config);
    services.external = external(config);
    Ok(services)
}

/// The external tools' client and providers from `[http]` and
/// `[external]` (keys also from the providers' usual variables); deep
/// search writes with the default profile's model. A bad allow entry is
/// reported and leaves the client refusing every private address.
fn external(config: &Config) -> quire_tools::external::ExternalSettings {
    use quire_tools::external::{ExternalSettings, ProviderSettings};
    let env_key = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let limits = quire_net::Limits {
        timeout: std::time::Duration::from_secs(config.http.timeout_secs.max(1)),
        max_bytes: config.http.max_mb.max(1).saturating_mul(1024 * 1024),
        ..quire_net::Limits::default()
    };
    let mut settings = ExternalSettings::default();
    match quire_net::NetClient::new(&config.http.allow, limits) {
        Ok(net) => settings.net = net,
        Err(e) => tracing::error!(error = %e, "[http] allow: the external tools reach public addresses only"),
    }
    let e = &config.external;
    settings.pexels = ProviderSettings {
        key: e.pexels_key.clone().or_else(|| env_key("PEXELS_API_KEY")),
        base_url: e.pexels_url.clone(),
    };
    settings.unsplash = ProviderSettings {
        key: e.unsplash_key.clone().or_else(|| env_key("UNSPLASH_ACCESS_KEY")),
        base_url: e.unsplash_url.clone(),
    };
    settings.brave = ProviderSettings {
        key: e.brave_key.clone().or_else(|| env_key("BRAVE_API_KEY")),
        base_url: e.brave_url.clone(),
    };
    settings.searxng_url = e.searxng_url.clone().filter(|u| !u.trim().is_empty());
    for name in e.search.iter().filter(|n| !matches!(n.as_str(), "searxng" | "brave")) {
        tracing::warn!(provider = %name, "external.search: unknown search provider (searxng, brave); ignored");
    }
    settings.search = e.search.clone();
    settings.writer = config.model_profiles().ok().and_then(|p| p.get("default").cloned()).and_then(|profile| {
        match quire_agent::ModelWriter::of(&profile) {
            Ok(w) => Some(std::sync::Arc::new(w) as quire_tools::external::SharedWriter),
            Err(e) => {
                tracing::warn!(error = %e, "deep search has no model");
                None
            }
        }
    });
    settings
}

/// The default profile's OpenAI-compatible base URL, API key and the model
/// `pick` names (a vision or an embedding model); none when unset, or when
/// the provider is not OpenAI-compatible (said in the log, with `without`).
fn openai_model(
    config: &Config,
    setting: &str,
    without: &str,
    pick: impl Fn(&quire_agent::Profile) -> Option<String>,
) -> Option<(String, Option<String>, String)> {
    let profiles = config.model_profiles().ok()?;
    let profile = profiles.get("default")?;
    let model = pick(profile).filter(|m| !m.trim().is_empty())?;
    if profile.provider != quire_agent::ProviderKind::Openai {
        tracing::warn!("{setting} needs an OpenAI-compatible provider; {without}");
        return None;
    }
    let base = profile.base_url.as_deref().unwrap_or("https://api.openai.com/v1").to_string();
    Some((base, profile.api_key.clone(), model))
}

/// The vision model of the default profile (`vision_model`), which writes
/// alt text for new images; none writes nothing.
fn describer(config: &Config) -> Option<quire_tools::describe::SharedDescriber> {
    let (base, key, model) =
        openai_model(config, "vision_model", "no alt text is written", |p| p.vision_model.clone())?;
    let vision = built(quire_tools::describe::OpenAiVision::new(&base, key, model), "no alt text by a vision model")?;
    Some(std::sync::Arc::new(vision))
}

/// The embedding model of the default profile (`embedding_model`), served
/// by its OpenAI-compatible base URL; none leaves search on full text.
fn embedder(config: &Config) -> Option<quire_tools::embed::SharedEmbedder> {
    let (base, key, model) =
        openai_model(config, "embedding_model", "search stays on full text", |p| p.embedding_model.clone())?;
    let embedder = built(quire_tools::embed::OpenAiEmbedder::new(&base, key, model), "no semantic search")?;
    Some(std::sync::Arc::new(embedder))
}

/// A model client, or none with `without` said in the log.
fn built<T, E: std::fmt::Display>(made: Result<T, E>, without: &str) -> Option<T> {
    made.inspect_err(|e| tracing::warn!(error = %e, "{without}")).ok()
}

/// Who a CLI command acts as: the local admin of a site (the person at the
/// machine that holds the data), or a token's holder with its group,
/// environments and approval policy. The one place the CLI turns
/// credentials into an actor.
pub async fn cli_actor(store: &Store, config: &Config, caller: CallerArgs) -> AnyResult<quire_app::Actor> {
    let CallerArgs { site, env, token } = caller;
    let surface = quire_core::model::Surface::Cli;
    if let Some(secret) = token {
        let grant = store.authenticate(&secret).await?.ok_or("the token is not valid")?;
        if grant.expired {
            return Err("the token has expired".into());
        }
        let scope = grant.scope(env.as_deref()).ok_or("the token may not use that environment")?;
        if let Some(site) = site
            && store.site(&site).await?.id != scope.site_id
        {
            return Err(format!("the token is not valid for site {site}").into());
        }
        // Recorded as a server does: at most once a minute per token.
        if grant.token.last_used_at.is_none_or(|t| chrono::Utc::now() - t >= chrono::TimeDelta::minutes(1)) {
            store.touch_token(&grant.token.id).await?;
        }
        return Ok(quire_app::Actor {
            id: format!("token:{}", grant.token.id),
            group: grant.token.group,
            scope,
            surface,
            policy: grant.token.approval_policy,
            environments: grant.token.environments,
            session: None,
        });
    }
    let site = site.unwrap_or(config.default_site.clone());
    let scope = store.scope_of(&site, env.as_deref().unwrap_or("production")).await?;
    Ok(quire_app::Actor::local_admin(scope))
}

/// The context of a CLI command's tool calls: [`cli_actor`]'s.
pub async fn cli_context(store: &Store, config: &Config, caller: CallerArgs) -> AnyResult<quire_tools::CallContext> {
    Ok(cli_actor(store, config, caller).await?.call_context())
}
