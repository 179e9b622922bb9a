//! The `quire` binary: parses the command line and configuration, then calls
//! the library crates. It holds no logic of its own.

/// Writes a line of command output to stdout and answers the `io::Result`
/// (unlike `println!`, which panics when the reader has gone, as in
/// `quire tools list | head -1`); `main` ends quietly on a broken pipe.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

mod chat;
mod config;
mod users;

/// mimalloc: the server allocates many short-lived JSON buffers across
/// threads, where glibc's allocator spends a measurable share of the time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Args, Parser, Subcommand};
use config::Config;
use quire_core::access::Group;
use quire_store::seed::{DEMO_SITE, seed_bench, seed_demo_into};
use quire_store::{Location, NewToken, Store};
use std::path::PathBuf;
use std::process::ExitCode;

/// Quire: a headless CMS with a governed AI agent.
#[derive(Parser)]
#[command(name = "quire", version, about)]
struct Cli {
    /// Configuration file (default: ./quire.toml when present).
    #[arg(long, global = true, env = "QUIRE_CONFIG")]
    config: Option<PathBuf>,
    /// Data directory holding the database and uploads (default: the
    /// configured `data`, ./quire-data). Only serve, migrate, seed and import create it.
    #[arg(long, global = true, value_name = "DIR")]
    data: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

/// Who a local command acts as, and where.
#[derive(Args, Clone)]
struct CallerArgs {
    /// Site slug or id (default: the default site).
    #[arg(long)]
    site: Option<String>,
    /// Environment (default: production).
    #[arg(long = "env")]
    env: Option<String>,
    /// Act as the holder of this API token instead of the local admin.
    #[arg(long, env = "QUIRE_TOKEN")]
    token: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP server (creates, migrates and seeds the database on first start).
    Serve {
        /// Address to listen on.
        #[arg(long)]
        addr: Option<String>,
        /// Do not seed the demo site into an empty database.
        #[arg(long)]
        no_seed: bool,
    },
    /// Create the database if needed and apply migrations.
    Migrate,
    /// Seed the demo site (idempotent).
    Seed {
        /// Also add this many benchmark pages.
        #[arg(long, default_value_t = 0, hide = true)]
        bench_pages: usize,
        /// Also add this many benchmark posts.
        #[arg(long, default_value_t = 0, hide = true)]
        bench_posts: usize,
    },
    /// Write the whole database as JSON lines: to move a site to another
    /// machine or database, or keep a readable copy. The uploads and vaults
    /// folders of the data directory are files: copy them alongside.
    Export {
        /// File to write (default: standard output).
        #[arg(long, short = 'o')]
        out: Option<PathBuf>,
    },
    /// Read an export into a new, empty database (created here if missing;
    /// nothing is seeded). One transaction: a bad file changes nothing.
    Import {
        /// The export (`-` for standard input).
        file: PathBuf,
    },
    /// Manage the people who sign in to the back-office.
    User {
        #[command(subcommand)]
        command: users::UserCommand,
    },
    /// Manage API tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// List, describe and call the tools of the registry.
    Tools {
        #[command(subcommand)]
        command: ToolsCommand,
    },
    /// Add images to the media library.
    Images {
        #[command(subcommand)]
        command: ImagesCommand,
    },
    /// Serve MCP over stdio (stdout carries the protocol alone; logs go to stderr).
    Mcp {
        #[command(flatten)]
        caller: CallerArgs,
        /// Which tools to offer: all, readonly, discover, or groups (pages,sections,images,posts,navigation,entries,archive,internal,external).
        #[arg(long, default_value = "all")]
        tools: String,
        /// The client is an interactive app whose user answers its prompts:
        /// a destructive preview is then put to them (elicitation) and their
        /// answer counts. Without it, a person approves in Quire.
        #[arg(long)]
        interactive: bool,
    },
    /// Chat with an agent: one message with -m, or a conversation on the terminal.
    Chat {
        /// Agent alias.
        #[arg(long, default_value = "editor")]
        agent: String,
        /// Continue this session.
        #[arg(long)]
        session: Option<String>,
        /// Send this one message, print the answer and exit.
        #[arg(short = 'm', long)]
        message: Option<String>,
        #[command(flatten)]
        caller: CallerArgs,
    },
    /// Undo an agent's turn: every record and note change it made is taken
    /// back (what it created is archived, what it archived comes back), and
    /// its open approval requests are refused.
    Undo {
        /// The session id.
        session: String,
        /// The turn's number (1 is the first).
        turn: i64,
        #[command(flatten)]
        caller: CallerArgs,
    },
    /// Restore a record (or note) as it was right after a change, given the
    /// change's id (a number), or an archived record with everything that
    /// went with it, given the archive's id.
    Restore {
        /// A change id or an archive id.
        id: String,
        #[command(flatten)]
        caller: CallerArgs,
    },
    /// Review destructive calls waiting for a person's approval (an agent's
    /// turn waiting on one continues once all of its calls are answered).
    Approvals {
        #[command(subcommand)]
        command: ApprovalsCommand,
        /// Site slug or id (default: the default site).
        #[arg(long, global = true)]
        site: Option<String>,
        /// Environment (default: production).
        #[arg(long = "env", global = true)]
        env: Option<String>,
        /// Act as the holder of this API token instead of the local admin.
        #[arg(long, env = "QUIRE_TOKEN", global = true)]
        token: Option<String>,
    },
}

#[derive(Subcommand)]
enum ImagesCommand {
    /// Upload image files (PNG, JPEG, WebP, GIF) and process them: prints
    /// each image as JSON once completed or failed.
    Upload {
        /// The files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Alternative text for every file.
        #[arg(long)]
        alt: Option<String>,
        /// Return at once with the images still processing (a running
        /// server finishes them).
        #[arg(long)]
        no_wait: bool,
        #[command(flatten)]
        caller: CallerArgs,
    },
}

#[derive(Subcommand)]
enum ApprovalsCommand {
    /// List pending approvals with what each would change.
    List,
    /// Approve a pending call.
    Approve {
        /// The confirmationId.
        id: String,
    },
    /// Reject a pending call (a reason is optional).
    Reject {
        /// The confirmationId.
        id: String,
        /// Why; whoever asked is told.
        #[arg(long)]
        reason: Option<String>,
    },
}

#[derive(Subcommand)]
enum ToolsCommand {
    /// List every tool.
    List {
        /// Print a JSON array of { name, description, category, risk, destructive }.
        #[arg(long)]
        json: bool,
    },
    /// Show one tool: description, guidance, metadata and input schema.
    Show {
        /// Tool name, e.g. getPage.
        name: String,
    },
    /// Call a tool and print its result JSON (as the local admin unless --token is given).
    Call {
        /// Tool name, e.g. getPage.
        name: String,
        /// Arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
        #[command(flatten)]
        caller: CallerArgs,
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
        /// Days until it expires, at least 1 (default: never).
        #[arg(long)]
        expires_in_days: Option<i64>,
        /// How its destructive calls are approved: user (a person approves) or conversational.
        #[arg(long, default_value = "user")]
        policy: String,
    },
    /// List a site's tokens that are not revoked (never their secrets).
    List {
        /// Site slug or id (default: the default site).
        #[arg(long)]
        site: Option<String>,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a token by id; a running server refuses it within a second.
    Revoke {
        /// The token's id (see `quire token list`).
        id: String,
        /// Site slug or id the token belongs to (default: the default site).
        #[arg(long)]
        site: Option<String>,
    },
}

/// Whether a tool result reported failure (the CLI exits non-zero then).
static TOOL_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

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
    let data = cli.data.unwrap_or_else(|| config.data.clone());
    let _ = DATABASE.set(config.database_url.as_deref().filter(|u| !u.trim().is_empty()).map(Location::parse));
    match config.store_options() {
        Ok(options) => {
            let _ = STORE_OPTIONS.set(options);
        }
        Err(e) => {
            eprintln!("error: configuration: {e}");
            return ExitCode::from(2);
        }
    }
    if let Err(e) = config.media_storage(&data) {
        eprintln!("error: configuration: {e}");
        return ExitCode::from(2);
    }
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = config.workers.filter(|n| *n > 0) {
        builder.worker_threads(n);
    }
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        let outcome = run(cli.command, config, data).await;
        close_stores().await;
        outcome
    });
    match outcome {
        Ok(()) if TOOL_FAILED.load(std::sync::atomic::Ordering::Relaxed) => ExitCode::FAILURE,
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output has gone (`| head`): nothing left to say.
        Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) => {
            ExitCode::SUCCESS
        }
        Err(e) => {
            // Not eprintln!: a closed stderr must not turn an error into a panic.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::FAILURE
        }
    }
}

type AnyResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// Every store this process opened. Whatever way a command ends (done,
/// refused, failed), `main` closes them on the way out, so the write-ahead
/// log is folded into the database and emptied and the next start does not
/// read it back.
static OPENED: std::sync::Mutex<Vec<Store>> = std::sync::Mutex::new(Vec::new());

/// The configured database (`database_url`); none: `<data>/quire.db`.
static DATABASE: std::sync::OnceLock<Option<Location>> = std::sync::OnceLock::new();

/// How stores are opened (`sqlite_synchronous`); unset: the defaults.
static STORE_OPTIONS: std::sync::OnceLock<quire_store::StoreOptions> = std::sync::OnceLock::new();

/// Where the database of data directory `dir` is.
fn database(dir: &std::path::Path) -> Location {
    DATABASE.get().cloned().flatten().unwrap_or_else(|| Location::File(dir.join("quire.db")))
}

/// Opens the database of data directory `dir` (see [`database`]),
/// remembered in [`OPENED`].
async fn open_store(dir: &std::path::Path) -> AnyResult<Store> {
    let at = database(dir);
    let options = STORE_OPTIONS.get().copied().unwrap_or_default();
    let store = Store::open_with(at.clone(), options).await.map_err(|e| format!("opening the database {at}: {e}"))?;
    if let Ok(mut opened) = OPENED.lock() {
        opened.push(store.clone());
    }
    Ok(store)
}

/// Closes every store this process opened (see [`OPENED`]).
async fn close_stores() {
    let opened = OPENED.lock().map(|mut o| std::mem::take(&mut *o)).unwrap_or_default();
    for store in opened {
        store.close().await;
    }
}

/// Opens the data directory `dir`, creating it (and the database) when
/// missing: for `serve`, `migrate` and `seed` only.
async fn open_or_create(dir: &std::path::Path) -> AnyResult<Store> {
    std::fs::create_dir_all(dir.join("uploads"))
        .map_err(|e| format!("cannot create data directory {}: {e}", dir.display()))?;
    open_store(dir).await
}

/// What a command that uses data accepts in its data directory.
#[derive(Clone, Copy, PartialEq)]
enum Existing {
    /// The database must exist.
    Database,
    /// The directory must exist; an empty one gets a new database (which
    /// `mcp` and `chat` seed with the demo site on first use).
    Directory,
}

/// Opens an existing data directory. A missing one is an error naming the
/// absolute path looked for and how to create it, never a new empty
/// directory wherever the command happened to run.
async fn open_existing(dir: &std::path::Path, needs: Existing) -> AnyResult<Store> {
    let shown = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let shown = shown.display();
    let create = format!(
        "create it with `quire serve --data {shown}` (first start migrates, seeds the demo site and prints an \
         admin token) or `quire seed --data {shown}`, or point to an existing one with --data DIR or QUIRE_DATA"
    );
    if !dir.is_dir() {
        return Err(format!("no data directory at {shown}: {create}").into());
    }
    if let Location::File(file) = database(dir)
        && needs == Existing::Database
        && !file.is_file()
    {
        let name = file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned());
        return Err(format!("no Quire database ({name}) in the data directory {shown}: {create}").into());
    }
    std::fs::create_dir_all(dir.join("uploads"))
        .map_err(|e| format!("cannot create {}: {e}", dir.join("uploads").display()))?;
    open_store(dir).await
}

async fn run(command: Command, config: Config, dir: PathBuf) -> AnyResult {
    match command {
        Command::Serve { addr, no_seed } => {
            let profiles = config.model_profiles()?;
            let limits = config.connection_limits()?;
            let store = open_or_create(&dir).await?;
            if !no_seed && store.sites().await?.is_empty() {
                let report = seed(&store, &dir, &config).await?;
                tracing::info!(created = report.created, "seeded the demo site");
            }
            let sign_in = bootstrap_admin(&store, &config).await?;
            // Starter agents no person changed follow this version's tools.
            let refreshed = quire_store::seed::ensure_agents_everywhere(&store).await?;
            if refreshed > 0 {
                tracing::info!(agents = refreshed, "starter agents created or brought up to date");
            }
            let addr = config.listen_addr(addr);
            let listener =
                tokio::net::TcpListener::bind(&addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
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
            let state = quire_server::AppState::new(services(&store, &dir, &config)?, config.default_site.clone())
                .with_mcp_allowed(&config.mcp_allowed_hosts, &config.mcp_allowed_origins)
                .with_profiles(profiles)
                .with_https(base.starts_with("https://"));
            tracing::info!(storage = %state.registry().services().storage.describe(), "published media");
            if matches!(store.location(), Location::File(_))
                && STORE_OPTIONS.get().is_some_and(|o| o.synchronous == quire_store::Synchronous::Normal)
            {
                tracing::info!("sqlite_synchronous = normal: commits survive a crash of the process, not a power loss");
            }
            state.spawn_background();
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
        }
        Command::Migrate => {
            let store = open_or_create(&dir).await?;
            let n = store.migrate().await?;
            outln!("database {} is at migration {n}", database(&dir))?;
        }
        Command::Seed { bench_pages, bench_posts } => {
            let store = open_or_create(&dir).await?;
            let report = seed(&store, &dir, &config).await?;
            outln!("demo site seeded: {} records created", report.created)?;
            if bench_pages + bench_posts > 0 {
                let scope = report.scope.ok_or("demo site has no production scope")?;
                seed_bench(&store, &scope, bench_pages, bench_posts).await?;
                outln!("benchmark data: {bench_pages} pages, {bench_posts} posts")?;
            }
        }
        Command::Export { out } => {
            let store = open_existing(&dir, Existing::Database).await?;
            let report = match &out {
                Some(path) => {
                    let file =
                        std::fs::File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
                    store.export(&mut std::io::BufWriter::new(file)).await?
                }
                None => store.export(&mut std::io::BufWriter::new(std::io::stdout().lock())).await?,
            };
            eprintln!("exported {} rows of {} tables", report.rows, report.tables);
        }
        Command::Import { file } => {
            let mut input: Box<dyn std::io::BufRead> = if file.as_os_str() == "-" {
                Box::new(std::io::BufReader::new(std::io::stdin()))
            } else {
                let f = std::fs::File::open(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
                Box::new(std::io::BufReader::new(f))
            };
            let store = open_or_create(&dir).await?;
            let report = store.import(&mut *input).await?;
            outln!("imported {} rows of {} tables into {}", report.rows, report.tables, database(&dir))?;
        }
        Command::User { command } => users::run(command, &config, &dir).await?,
        Command::Token { command } => token(command, &config, &dir).await?,
        Command::Tools { command } => tools(command, &config, &dir).await?,
        Command::Images { command: ImagesCommand::Upload { files, alt, no_wait, caller } } => {
            let store = open_existing(&dir, Existing::Database).await?;
            let ctx = cli_context(&store, &config, caller).await?;
            let services = services(&store, &dir, &config)?;
            let mut out = Vec::new();
            for file in &files {
                let meta = quire_store::ImageMeta { alt: alt.clone(), ..Default::default() };
                let made = match quire_tools::media::receive_path(&services, &ctx, file).await {
                    Ok(upload) => quire_tools::images::create_from_upload(&services, &ctx, &upload, meta).await,
                    Err(e) => Err(e),
                };
                let made = match made {
                    Ok((image, _)) if no_wait => Ok(image),
                    Ok((image, _)) => {
                        let wait = std::time::Duration::from_secs(120);
                        quire_tools::media::settle(&services, &ctx.scope, &image.id, wait).await
                    }
                    Err(e) => Err(e),
                };
                let failed = match &made {
                    Ok(image) => image.status == quire_core::model::ImageStatus::Failed,
                    Err(_) => true,
                };
                if failed {
                    TOOL_FAILED.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                out.push(match made {
                    Ok(image) => serde_json::json!({"file": file, "image": image}),
                    Err(e) => serde_json::json!({"file": file, "error": e.message}),
                });
            }
            outln!("{}", serde_json::to_string_pretty(&out)?)?;
            store.close().await;
        }
        Command::Mcp { caller, tools, interactive } => {
            use rmcp::ServiceExt;
            let mode = quire_mcp::ToolMode::parse(&tools)?;
            let store = open_existing(&dir, Existing::Directory).await?;
            if store.sites().await?.is_empty() {
                seed(&store, &dir, &config).await?;
            }
            let mut ctx = cli_context(&store, &config, caller).await?;
            ctx.surface = quire_core::model::Surface::Mcp;
            if interactive {
                ctx.policy = quire_tools::ApprovalPolicy::Conversational;
            }
            let registry = std::sync::Arc::new(quire_tools::Registry::new(services(&store, &dir, &config)?));
            let server = quire_mcp::QuireMcp::new(registry, quire_mcp::Caller::Fixed(Box::new(ctx)), mode);
            let running = server.serve(rmcp::transport::stdio()).await?;
            running.waiting().await?;
            store.close().await;
        }
        Command::Chat { agent, session, message, caller } => {
            let profiles = config.model_profiles()?;
            let store = open_existing(&dir, Existing::Directory).await?;
            if store.sites().await?.is_empty() {
                seed(&store, &dir, &config).await?;
            }
            let ctx = cli_context(&store, &config, caller).await?;
            let registry = std::sync::Arc::new(quire_tools::Registry::new(services(&store, &dir, &config)?));
            let runtime = quire_agent::Runtime::new(registry, profiles);
            let person = quire_agent::Person { actor: ctx.actor.clone(), group: ctx.group, scope: ctx.scope.clone() };
            match message {
                Some(m) => {
                    let (id, ok) = chat::turn(&runtime, &person, &ctx, &agent, session.as_deref(), &m).await?;
                    eprintln!("session: {id}");
                    if !ok {
                        TOOL_FAILED.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                None => chat::repl(&runtime, &person, &ctx, &agent, session).await?,
            }
            runtime.flush_events().await;
            store.close().await;
        }
        Command::Approvals { command, site, env, token } => {
            // Answering may continue an agent's turn here: its model
            // configuration must be sound before anything is answered.
            let profiles = match command {
                ApprovalsCommand::List => quire_agent::Profiles::default(),
                _ => config.model_profiles()?,
            };
            let store = open_existing(&dir, Existing::Database).await?;
            let ctx = cli_context(&store, &config, CallerArgs { site, env, token }).await?;
            let actor = quire_app::Actor::of_call(&ctx);
            let registry = std::sync::Arc::new(quire_tools::Registry::new(services(&store, &dir, &config)?));
            let runtime = quire_agent::Runtime::new(registry, profiles);
            let (id, verdict) = match command {
                ApprovalsCommand::List => {
                    let pending = quire_app::approvals::pending(&runtime, &actor).await?;
                    outln!("{}", serde_json::to_string_pretty(&pending)?)?;
                    store.close().await;
                    return Ok(());
                }
                ApprovalsCommand::Approve { id } => (id, quire_app::approvals::Verdict::Approve),
                ApprovalsCommand::Reject { id, reason } => (id, quire_app::approvals::Verdict::Reject(reason)),
            };
            let answered = quire_app::approvals::answer(&runtime, &actor, &id, verdict).await?;
            outln!("{}", serde_json::to_string_pretty(&answered.confirmation)?)?;
            if let (Some(session), Some(_)) = (&answered.session, &answered.resumed) {
                eprintln!("agent turn of session {session} continues:");
                if let chat::Ended::Paused(more) = chat::follow(&runtime, session, None).await {
                    for a in more {
                        outln!("approval pending: {}", a["approvalId"].as_str().unwrap_or_default())?;
                    }
                }
            }
            runtime.flush_events().await;
            store.close().await;
        }
        Command::Undo { session, turn, caller } => {
            let store = open_existing(&dir, Existing::Database).await?;
            let actor = quire_app::Actor::of_call(&cli_context(&store, &config, caller).await?);
            let registry = std::sync::Arc::new(quire_tools::Registry::new(services(&store, &dir, &config)?));
            let runtime = quire_agent::Runtime::new(registry, quire_agent::Profiles::default());
            let undone = quire_app::undo::undo_turn(&runtime, &actor, &session, turn).await;
            runtime.flush_events().await;
            let undone = undone?;
            outln!("{}", serde_json::to_string_pretty(&undone)?)?;
            store.close().await;
        }
        Command::Restore { id, caller } => {
            let store = open_existing(&dir, Existing::Database).await?;
            let actor = quire_app::Actor::of_call(&cli_context(&store, &config, caller).await?);
            let registry = quire_tools::Registry::new(services(&store, &dir, &config)?);
            let restored = match id.parse::<i64>() {
                Ok(change) => {
                    serde_json::to_value(quire_app::restore::restore_revision(&registry, &actor, change).await?)?
                }
                Err(_) => serde_json::to_value(quire_app::restore::restore_archive(&registry, &actor, &id).await?)?,
            };
            outln!("{}", serde_json::to_string_pretty(&restored)?)?;
            store.close().await;
        }
    }
    Ok(())
}

async fn token(command: TokenCommand, config: &Config, dir: &std::path::Path) -> AnyResult {
    match command {
        TokenCommand::Create { group, site, envs, name, expires_in_days, policy } => {
            let group = Group::parse(&group)?;
            // Checked before the database is opened: bad input changes nothing.
            let expires_at =
                expires_in_days.map(|d| quire_store::expiry_in_days("--expires-in-days", d)).transpose()?;
            let store = open_existing(dir, Existing::Database).await?;
            let site = site.unwrap_or(config.default_site.clone());
            let (_, secret) = store
                .create_token(NewToken {
                    name,
                    group,
                    site,
                    environments: (!envs.is_empty()).then_some(envs),
                    expires_at,
                    secret: None,
                    approval_policy: Some(policy),
                    user_id: None,
                })
                .await?;
            outln!("{secret}")?;
            store.close().await;
        }
        TokenCommand::List { site, json } => {
            let store = open_existing(dir, Existing::Database).await?;
            let tokens = store.tokens(&site.unwrap_or(config.default_site.clone())).await?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&tokens)?)?;
            } else {
                let when = |t: Option<chrono::DateTime<chrono::Utc>>, none: &str| {
                    t.map(|t| t.format("%Y-%m-%d %H:%M").to_string()).unwrap_or_else(|| none.to_string())
                };
                outln!(
                    "{:<36}  {:<16} {:<8} {:<7} {:<20} {:<16} {:<16} {}",
                    "ID",
                    "NAME",
                    "PREFIX",
                    "GROUP",
                    "ENVIRONMENTS",
                    "EXPIRES",
                    "CREATED",
                    "LAST USED"
                )?;
                for t in &tokens {
                    let envs = t.environments.as_ref().map(|e| e.join(",")).unwrap_or_else(|| "all".into());
                    outln!(
                        "{:<36}  {:<16} {:<8} {:<7} {:<20} {:<16} {:<16} {}",
                        t.id,
                        t.name,
                        t.prefix,
                        t.group.as_str(),
                        envs,
                        when(t.expires_at, "never"),
                        when(Some(t.created_at), ""),
                        when(t.last_used_at, "never")
                    )?;
                }
            }
            store.close().await;
        }
        TokenCommand::Revoke { id, site } => {
            let store = open_existing(dir, Existing::Database).await?;
            let token = store.revoke_token(&site.unwrap_or(config.default_site.clone()), &id).await?;
            outln!("revoked token {} ({}, {})", token.id, token.name, token.group.as_str())?;
            store.close().await;
        }
    }
    Ok(())
}

/// `quire tools`: `list` and `show` describe the catalog, the same for
/// every data directory (so they accept `--data` and need none); `call`
/// runs a tool on the data directory `dir`.
async fn tools(command: ToolsCommand, config: &Config, dir: &std::path::Path) -> AnyResult {
    match command {
        ToolsCommand::List { json } => {
            let tools = quire_tools::catalog();
            if json {
                let list: Vec<_> = tools
                    .iter()
                    .map(|t| {
                        serde_json::json!({
                            "name": t.name, "description": t.description, "category": t.category,
                            "risk": t.risk, "destructive": t.destructive,
                        })
                    })
                    .collect();
                outln!("{}", serde_json::to_string_pretty(&list)?)?;
            } else {
                for t in &tools {
                    let flag = if t.destructive { "destructive" } else { "" };
                    outln!(
                        "{:<20} {:<9} {:<9} {:<12} {}",
                        t.name,
                        t.category.as_str(),
                        format!("{:?}", t.risk).to_lowercase(),
                        flag,
                        t.description
                    )?;
                }
            }
        }
        ToolsCommand::Show { name } => {
            let tools = quire_tools::catalog();
            let tool = tools
                .iter()
                .find(|t| t.name == name)
                .ok_or_else(|| format!("no tool named \"{name}\" (see quire tools list)"))?;
            let info = serde_json::json!({
                "name": tool.name, "description": tool.description, "guidance": tool.guidance,
                "category": tool.category, "entity": tool.entity, "risk": tool.risk,
                "destructive": tool.destructive, "idempotent": tool.idempotent, "readOnly": tool.read_only,
                "tags": tool.tags, "inputSchema": quire_tools::full_schema(tool),
            });
            outln!("{}", serde_json::to_string_pretty(&info)?)?;
        }
        ToolsCommand::Call { name, args, caller } => {
            let args: serde_json::Value =
                serde_json::from_str(&args).map_err(|e| format!("--args is not valid JSON: {e}"))?;
            let store = open_existing(dir, Existing::Database).await?;
            let ctx = cli_context(&store, config, caller).await?;
            let registry = quire_tools::Registry::new(services(&store, dir, config)?);
            let result = registry.call(&ctx, &name, args).await;
            if result["success"] == false {
                TOOL_FAILED.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            outln!("{}", serde_json::to_string_pretty(&result)?)?;
            store.close().await;
        }
    }
    Ok(())
}

/// Seeds the demo site and its notes vault (both idempotent).
async fn seed(store: &Store, dir: &std::path::Path, config: &Config) -> AnyResult<quire_store::seed::SeedReport> {
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
fn services(store: &Store, dir: &std::path::Path, config: &Config) -> AnyResult<quire_tools::Services> {
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

/// The vision model of the default profile (`vision_model`), which writes
/// alt text for new images; none writes nothing.
fn describer(config: &Config) -> Option<quire_tools::describe::SharedDescriber> {
    let profiles = config.model_profiles().ok()?;
    let profile = profiles.get("default")?;
    let model = profile.vision_model.clone().filter(|m| !m.trim().is_empty())?;
    if profile.provider != quire_agent::ProviderKind::Openai {
        tracing::warn!("vision_model needs an OpenAI-compatible provider; no alt text is written");
        return None;
    }
    let base = profile.base_url.as_deref().unwrap_or("https://api.openai.com/v1");
    match quire_tools::describe::OpenAiVision::new(base, profile.api_key.clone(), model) {
        Ok(d) => Some(std::sync::Arc::new(d)),
        Err(e) => {
            tracing::warn!(error = %e, "no alt text by a vision model");
            None
        }
    }
}

/// The embedding model of the default profile (`embedding_model`), served
/// by its OpenAI-compatible base URL; none leaves search on full text.
fn embedder(config: &Config) -> Option<quire_tools::embed::SharedEmbedder> {
    let profiles = config.model_profiles().ok()?;
    let profile = profiles.get("default")?;
    let model = profile.embedding_model.clone().filter(|m| !m.trim().is_empty())?;
    if profile.provider != quire_agent::ProviderKind::Openai {
        tracing::warn!("embedding_model needs an OpenAI-compatible provider; search stays on full text");
        return None;
    }
    let base = profile.base_url.as_deref().unwrap_or("https://api.openai.com/v1");
    match quire_tools::embed::OpenAiEmbedder::new(base, profile.api_key.clone(), model) {
        Ok(e) => Some(std::sync::Arc::new(e)),
        Err(e) => {
            tracing::warn!(error = %e, "no semantic search");
            None
        }
    }
}

/// The approval policy a token carries.
fn policy_of(name: &str) -> quire_tools::ApprovalPolicy {
    quire_tools::ApprovalPolicy::parse(name)
}

/// The caller of a CLI tool call: the local admin of a site, or a token's holder.
async fn cli_context(store: &Store, config: &Config, caller: CallerArgs) -> AnyResult<quire_tools::CallContext> {
    let CallerArgs { site, env, token } = caller;
    let policy = quire_tools::ApprovalPolicy::User;
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
        let policy = policy_of(&grant.token.approval_policy);
        return Ok(quire_tools::CallContext {
            actor: format!("token:{}", grant.token.id),
            group: grant.token.group,
            scope,
            surface,
            session_id: None,
            turn_id: None,
            policy,
            writer: None,
        });
    }
    let site = site.unwrap_or(config.default_site.clone());
    let scope = store.scope_of(&site, env.as_deref().unwrap_or("production")).await?;
    Ok(quire_tools::CallContext {
        actor: "local:admin".into(),
        group: Group::Admin,
        scope,
        surface,
        session_id: None,
        turn_id: None,
        policy,
        writer: None,
    })
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
                    name: "bootstrap".into(),
                    group: Group::Admin,
                    site: site.clone(),
                    environments: None,
                    expires_at: None,
                    secret: Some(secret.clone()),
                    approval_policy: None,
                    user_id: None,
                })
                .await?;
            eprintln!("Admin token set from QUIRE_BOOTSTRAP_TOKEN.");
        }
    } else if store.token_count().await? == 0 {
        let (_, secret) = store
            .create_token(NewToken {
                name: "admin".into(),
                group: Group::Admin,
                site: site.clone(),
                environments: None,
                expires_at: None,
                secret: None,
                approval_policy: None,
                user_id: None,
            })
            .await?;
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
