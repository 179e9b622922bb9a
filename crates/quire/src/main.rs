//! The `quire` binary: parses the command line and configuration, then calls
//! the library crates. It holds no logic of its own.

mod config;

use clap::{Args, Parser, Subcommand};
use config::Config;
use quire_core::access::Group;
use quire_store::seed::{DEMO_SITE, seed_bench, seed_demo};
use quire_store::{NewToken, Store};
use std::path::PathBuf;
use std::process::ExitCode;

/// Quire: a headless CMS with a governed AI agent.
#[derive(Parser)]
#[command(name = "quire", version, about)]
struct Cli {
    /// Configuration file (default: ./quire.toml when present).
    #[arg(long, global = true, env = "QUIRE_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct DataArg {
    /// Data directory holding the database and uploads.
    #[arg(long)]
    data: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP server (creates, migrates and seeds the database on first start).
    Serve {
        /// Address to listen on.
        #[arg(long)]
        addr: Option<String>,
        #[command(flatten)]
        data: DataArg,
        /// Do not seed the demo site into an empty database.
        #[arg(long)]
        no_seed: bool,
    },
    /// Create the database if needed and apply migrations.
    Migrate {
        #[command(flatten)]
        data: DataArg,
    },
    /// Seed the demo site (idempotent).
    Seed {
        #[command(flatten)]
        data: DataArg,
        /// Also add this many benchmark pages.
        #[arg(long, default_value_t = 0, hide = true)]
        bench_pages: usize,
        /// Also add this many benchmark posts.
        #[arg(long, default_value_t = 0, hide = true)]
        bench_posts: usize,
    },
    /// Manage API tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Create a token and print it alone on stdout.
    Create {
        /// Group: admin, editor, author or viewer.
        #[arg(long)]
        group: String,
        /// Site slug or id (default: the default site).
        #[arg(long)]
        site: Option<String>,
        /// Environments the token may use (repeatable; default: all).
        #[arg(long = "env")]
        envs: Vec<String>,
        /// A name to recognise the token by.
        #[arg(long, default_value = "cli")]
        name: String,
        /// Days until it expires (default: never).
        #[arg(long)]
        expires_in_days: Option<i64>,
        #[command(flatten)]
        data: DataArg,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match Config::load(cli.config.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: configuration: {e}");
            return ExitCode::from(2);
        }
    };
    config::init_logging(&config);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli.command, config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

type AnyResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

async fn open(config: &Config, data: &DataArg) -> AnyResult<(Store, PathBuf)> {
    let dir = data.data.clone().unwrap_or_else(|| config.data.clone());
    std::fs::create_dir_all(dir.join("uploads"))
        .map_err(|e| format!("cannot create data directory {}: {e}", dir.display()))?;
    let store = Store::open(&dir.join("quire.db")).await?;
    Ok((store, dir))
}

async fn run(command: Command, config: Config) -> AnyResult {
    match command {
        Command::Serve { addr, data, no_seed } => {
            let (store, dir) = open(&config, &data).await?;
            if !no_seed && store.sites().await?.is_empty() {
                let report = seed_demo(&store, &dir.join("uploads")).await?;
                tracing::info!(created = report.created, "seeded the demo site");
            }
            bootstrap_admin(&store, &config).await?;
            let addr = addr.unwrap_or(config.addr.clone());
            let listener =
                tokio::net::TcpListener::bind(&addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            let local = listener.local_addr()?;
            eprintln!("Quire listening on http://{local}  (API docs: http://{local}/api/docs)");
            let state = quire_server::AppState::new(store.clone(), dir.join("uploads"), config.default_site.clone());
            quire_server::serve(listener, state).await?;
            store.close().await;
        }
        Command::Migrate { data } => {
            let (store, dir) = open(&config, &data).await?;
            let n = store.migrate().await?;
            println!("database {} is at migration {n}", dir.join("quire.db").display());
        }
        Command::Seed { data, bench_pages, bench_posts } => {
            let (store, dir) = open(&config, &data).await?;
            let report = seed_demo(&store, &dir.join("uploads")).await?;
            println!("demo site seeded: {} records created", report.created);
            if bench_pages + bench_posts > 0 {
                let scope = report.scope.ok_or("demo site has no production scope")?;
                seed_bench(&store, &scope, bench_pages, bench_posts).await?;
                println!("benchmark data: {bench_pages} pages, {bench_posts} posts");
            }
        }
        Command::Token { command: TokenCommand::Create { group, site, envs, name, expires_in_days, data } } => {
            let group = Group::parse(&group)?;
            let (store, _) = open(&config, &data).await?;
            let site = site.unwrap_or(config.default_site.clone());
            let expires_at = expires_in_days.map(|d| chrono::Utc::now() + chrono::Duration::days(d));
            let (_, secret) = store
                .create_token(NewToken {
                    name,
                    group,
                    site,
                    environments: (!envs.is_empty()).then_some(envs),
                    expires_at,
                    secret: None,
                })
                .await?;
            println!("{secret}");
        }
    }
    Ok(())
}

/// On a database without tokens, creates the admin token and prints it once;
/// `QUIRE_BOOTSTRAP_TOKEN` chooses its value (and is added if unknown).
async fn bootstrap_admin(store: &Store, config: &Config) -> AnyResult {
    let site = if store.site(&config.default_site).await.is_ok() {
        config.default_site.clone()
    } else {
        DEMO_SITE.to_string()
    };
    if store.site(&site).await.is_err() {
        store.create_site(&site, "Quire", &["production", "staging"]).await?;
        quire_store::seed::ensure_templates(store, &store.scope_of(&site, "production").await?).await?;
    }
    if let Some(secret) = &config.bootstrap_token {
        if store.authenticate(secret).await?.is_none() {
            store
                .create_token(NewToken {
                    name: "bootstrap".into(),
                    group: Group::Admin,
                    site,
                    environments: None,
                    expires_at: None,
                    secret: Some(secret.clone()),
                })
                .await?;
            eprintln!("Admin token set from QUIRE_BOOTSTRAP_TOKEN.");
        }
        return Ok(());
    }
    if store.token_count().await? == 0 {
        let (_, secret) = store
            .create_token(NewToken {
                name: "admin".into(),
                group: Group::Admin,
                site,
                environments: None,
                expires_at: None,
                secret: None,
            })
            .await?;
        println!(
            "\nAdmin token (shown once, keep it safe):\n\n    {secret}\n\nUse it as:  Authorization: Bearer {secret}\n"
        );
    }
    Ok(())
}
