//! The `quire` binary: parses the command line and configuration, sets up
//! logging and the runtime, and hands each command to its module in
//! [`commands`]. It holds no logic of its own.

/// Writes a line of command output to stdout and answers the `io::Result`
/// (unlike `println!`, which panics when the reader has gone, as in
/// `quire tools list | head -1`); `main` ends quietly on a broken pipe.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

mod cli;
mod commands;
mod config;
mod memory;
mod services;

/// mimalloc: the server allocates many short-lived JSON buffers across
/// threads, where glibc's allocator spends a measurable share of the time.
/// Without transparent huge pages (`no_thp`): with them the arena's pages
/// came 2 MB at a time, doubling an idle server's heap, for no CPU saved
/// per request (docs/benchmarks.md, "Memory").
/// The one static left: a global allocator can only be one.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use cli::{CallerArgs, Cli, Command, ImagesCommand};
use commands::{AnyResult, Outcome, chat, database, env, eval, images, mcp, review, serve, site, token, tools, user};
use config::Config;
use quire_store::Location;
use services::DataDir;
use std::process::ExitCode;

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
    let dir = cli.data.unwrap_or_else(|| config.data.clone());
    let database = config.database_url.as_deref().filter(|u| !u.trim().is_empty()).map(Location::parse);
    let options = match config.store_options() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("error: configuration: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = config.media_storage(&dir) {
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
    let data = DataDir::new(dir, database, options);
    let outcome = runtime.block_on(async {
        let outcome = dispatch(cli.command, &config, &data).await;
        data.close_stores().await;
        outcome
    });
    match outcome {
        Ok(Outcome::Failed) => ExitCode::FAILURE,
        Ok(Outcome::Succeeded) => ExitCode::SUCCESS,
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

/// Runs `command` with the configuration and the data directory.
async fn dispatch(command: Command, config: &Config, data: &DataDir) -> AnyResult<Outcome> {
    match command {
        Command::Serve { addr, no_seed } => serve::run(addr, no_seed, config, data).await?,
        Command::Migrate => database::migrate(data).await?,
        Command::Seed { bench_pages, bench_posts } => database::seed(bench_pages, bench_posts, config, data).await?,
        Command::Export { out } => database::export(out, data).await?,
        Command::Import { file } => database::import(file, data).await?,
        Command::User { command } => user::run(command, config, data).await?,
        Command::Token { command } => token::run(command, config, data).await?,
        Command::Site { command } => site::run(command, config, data).await?,
        Command::Env { command, site, token } => {
            env::run(command, CallerArgs { site, env: None, token }, config, data).await?
        }
        Command::Tools { command } => return tools::run(command, config, data).await,
        Command::Images { command: ImagesCommand::Upload { files, alt, no_wait, caller } } => {
            return images::upload(files, alt, no_wait, caller, config, data).await;
        }
        Command::Mcp { caller, tools, interactive } => mcp::run(caller, tools, interactive, config, data).await?,
        Command::Chat { agent, session, message, caller } => {
            return chat::run(agent, session, message, caller, config, data).await;
        }
        Command::Approvals { command, site, env, token } => {
            review::approvals(command, CallerArgs { site, env, token }, config, data).await?
        }
        Command::Eval(args) => return eval::run(args, config).await,
        Command::Undo { session, turn, caller } => review::undo(session, turn, caller, config, data).await?,
        Command::Restore { id, caller } => review::restore(id, caller, config, data).await?,
    }
    Ok(Outcome::Succeeded)
}
