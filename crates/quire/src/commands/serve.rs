//! `quire serve`: the HTTP server, after creating, migrating and seeding the
//! database on first start and making the first admin token and user.

use super::AnyResult;
use crate::config::Config;
use crate::services::{DataDir, seed, services};
use quire_core::access::Group;
use quire_store::seed::DEMO_SITE;
use quire_store::{Location, NewToken, Store};

/// Runs the server on `addr` (default: the configured one) until it is
/// stopped; `no_seed` leaves an empty database empty.
pub async fn run(addr: Option<String>, no_seed: bool, config: &Config, data: &DataDir) -> AnyResult {
    let profiles = config.model_profiles()?;
    let limits = config.connection_limits()?;
    let store = data.open_or_create().await?;
    if !no_seed && store.sites().await?.is_empty() {
        let report = seed(&store, &data.path, config).await?;
        tracing::info!(created = report.created, "seeded the demo site");
    }
    let sign_in = bootstrap_admin(&store, config).await?;
    // Starter agents no person changed follow this version's tools.
    let refreshed = quire_store::seed::ensure_agents_everywhere(&store).await?;
    if refreshed > 0 {
        tracing::info!(agents = refreshed, "starter agents created or brought up to date");
    }
    let addr = config.listen_addr(addr);
    let listener = tokio::net::TcpListener::bind(&addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr()?;
    let base = config.public_url.clone().unwrap_or_else(|| format!("http://{local}"));
    let base = base.trim_end_matches('/');
    if let Some(secret) = sign_in {
        outln!(
            "Back-office sign-in link for admin@localhost (one use, 24 hours):\n\n    {base}/sign-in/link/{secret}\n"
        )?;
    }
    eprintln!("Quire listening on {base}  (back-office: {base}/ · API docs: {base}/api/docs)");
    if profiles.is_empty() {
        tracing::warn!("no model provider configured: agents will answer how to configure one");
    }
    // The MCP conformance suite's fixture, for its runs only: never from
    // the configuration file, only from this variable at start.
    let fixture = std::env::var("QUIRE_MCP_TEST_FIXTURE").is_ok_and(|v| v == "1");
    if fixture {
        tracing::warn!(
            "QUIRE_MCP_TEST_FIXTURE=1: /mcp offers the conformance suite's test_* tools, prompts and resources"
        );
    }
    let state = quire_server::AppState::new(services(&store, &data.path, config)?, config.default_site.clone())
        .with_mcp_allowed(&config.mcp_allowed_hosts, &config.mcp_allowed_origins)
        .with_mcp_test_fixture(fixture)
        .with_profiles(profiles)
        .with_https(base.starts_with("https://"))
        .with_public_url(config.public_url.clone())
        .with_request_limit(config.requests_per_minute)
        .with_webhook_retries(config.webhook_retry_ms.iter().map(|ms| std::time::Duration::from_millis(*ms)).collect());
    state.runtime().set_fair_use(quire_agent::FairUse {
        turns_per_hour: config.agent_turns_per_hour,
        model_tokens_per_day: config.model_tokens_per_day,
    });
    tracing::info!(storage = %state.registry().services().storage.describe(), "published media");
    if matches!(store.location(), Location::File(_)) && data.options.synchronous == quire_store::Synchronous::Normal {
        tracing::info!("sqlite_synchronous = normal: commits survive a crash of the process, not a power loss");
    }
    state.spawn_background();
    // Once the store is quiet, the process gives back its spare memory too.
    let mut quiet = store.quiet_periods();
    tokio::spawn(async move {
        while quiet.changed().await.is_ok() {
            let _ = tokio::task::spawn_blocking(crate::memory::release).await;
        }
    });
    let max_upload = state.registry().services().media.max_upload_bytes;
    let router = quire_server::router_with_files(
        state.clone(),
        quire_web::router(state.clone()),
        quire_web::file_router(max_upload),
    );
    quire_server::serve(listener, router, state.clone(), limits).await?;
    // The last events of turns that ran here, for streams elsewhere.
    state.runtime().flush_events().await;
    store.close().await;
    Ok(())
}

/// On a database without tokens, creates the admin token and prints it once;
/// `QUIRE_BOOTSTRAP_TOKEN` chooses its value (and is added if unknown). On
/// a database without users, creates the admin user `admin@localhost` and
/// answers a one-time sign-in link's secret for them.
async fn bootstrap_admin(store: &Store, config: &Config) -> AnyResult<Option<String>> {
    let site = if store.site(&config.default_site).await.is_ok() {
        config.default_site.clone()
    } else {
        DEMO_SITE.to_string()
    };
    if store.site(&site).await.is_err() {
        store.create_site(&site, "Quire", &["production", "staging"]).await?;
        let scope = store.scope_of(&site, "production").await?;
        quire_store::seed::ensure_templates(store, &scope).await?;
        quire_store::seed::ensure_agents(store, &scope).await?;
    }
    if let Some(secret) = &config.bootstrap_token {
        if store.authenticate(secret).await?.is_none() {
            store
                .create_token(NewToken {
                    secret: Some(secret.clone()),
                    instance_admin: true,
                    ..NewToken::new("bootstrap", Group::Admin, site.clone())
                })
                .await?;
            eprintln!("Admin token set from QUIRE_BOOTSTRAP_TOKEN.");
        }
    } else if store.token_count().await? == 0 {
        // The first token is the instance's administrator's: it may manage sites.
        let first = NewToken { instance_admin: true, ..NewToken::new("admin", Group::Admin, site.clone()) };
        let (_, secret) = store.create_token(first).await?;
        outln!(
            "\nAdmin token (shown once, keep it safe):\n\n    {secret}\n\nUse it as:  Authorization: Bearer {secret}\n"
        )?;
    }
    if store.user_count().await? > 0 {
        return Ok(None);
    }
    let user = store
        .create_user(quire_store::NewUser {
            email: "admin@localhost".into(),
            display_name: Some("Admin".into()),
            group: Group::Admin,
            sites: vec![(site, None)],
            password: None,
        })
        .await?;
    Ok(Some(store.create_sign_in_link(&user.id).await?))
}
