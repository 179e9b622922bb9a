//! The command line: every command, subcommand and flag as clap parses
//! them. What each command does is in [`crate::commands`].

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Quire: a headless CMS with a governed AI agent.
#[derive(Parser)]
#[command(name = "quire", version, about)]
pub struct Cli {
    /// Configuration file (default: ./quire.toml when present).
    #[arg(long, global = true, env = "QUIRE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Data directory holding the database and uploads (default: the
    /// configured `data`, ./quire-data). Only serve, migrate, seed and import create it.
    #[arg(long, global = true, value_name = "DIR")]
    pub data: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

/// Who a local command acts as, and where.
#[derive(Args, Clone)]
pub struct CallerArgs {
    /// Site slug or id (default: the default site).
    #[arg(long)]
    pub site: Option<String>,
    /// Environment (default: production).
    #[arg(long = "env")]
    pub env: Option<String>,
    /// Act as the holder of this API token instead of the local admin.
    #[arg(long, env = "QUIRE_TOKEN")]
    pub token: Option<String>,
}

/// The commands.
#[derive(Subcommand)]
pub enum Command {
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
        command: UserCommand,
    },
    /// Manage API tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Manage the instance's sites.
    Site {
        #[command(subcommand)]
        command: SiteCommand,
    },
    /// Manage a site's environments: make one as a copy of another, compare
    /// two, promote what differs, lock, rename, archive.
    Env {
        #[command(subcommand)]
        command: EnvCommand,
        /// Site slug or id (default: the default site).
        #[arg(long, global = true)]
        site: Option<String>,
        /// Act as the holder of this API token instead of the local admin.
        #[arg(long, global = true, env = "QUIRE_TOKEN")]
        token: Option<String>,
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
    /// Measure how well the configured model does the agent's job: run a
    /// suite of tasks, each on a fresh demo site, and report success,
    /// steps, tokens, time, tools and calls made without consent.
    Eval(EvalArgs),
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

/// `quire images …`.
#[derive(Subcommand)]
pub enum ImagesCommand {
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

/// `quire approvals …`.
#[derive(Subcommand)]
pub enum ApprovalsCommand {
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

/// `quire tools …`.
#[derive(Subcommand)]
pub enum ToolsCommand {
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

/// `quire site …`.
#[derive(Subcommand)]
pub enum SiteCommand {
    /// List every site, archived ones too.
    List {
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Make a site, empty (the starter templates and agents) or with the demo content.
    Create {
        /// Its slug: lowercase words joined by hyphens.
        slug: String,
        /// Its name.
        #[arg(long)]
        name: String,
        /// Its environments, the first the default (repeatable; default: production and staging).
        #[arg(long = "env")]
        envs: Vec<String>,
        /// Start with the demo site's pages, posts, menus and images.
        #[arg(long, conflicts_with = "copy_of")]
        demo: bool,
        /// Start as a copy of this site (slug or id): its locales and its
        /// first environment's content, templates, images and agents.
        #[arg(long, value_name = "SITE")]
        copy_of: Option<String>,
    },
    /// Rename a site.
    Rename {
        /// Its slug or id.
        site: String,
        /// The new name.
        name: String,
    },
    /// Archive a site: its tokens stop and nothing of it is delivered; all it holds is kept.
    Archive {
        /// Its slug or id.
        site: String,
    },
    /// Bring an archived site back.
    Restore {
        /// Its slug or id.
        site: String,
    },
}

/// `quire env …`.
#[derive(Subcommand)]
pub enum EnvCommand {
    /// List the site's environments, archived ones too.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Make an environment: a copy of another (--from), or empty with the starter templates and agents.
    Create {
        /// Its key: lowercase words joined by hyphens.
        key: String,
        /// Its display name (default: the key).
        #[arg(long)]
        name: Option<String>,
        /// The environment it is a copy of.
        #[arg(long)]
        from: Option<String>,
    },
    /// Rename an environment (its key stays).
    Rename {
        /// Its key.
        key: String,
        /// The new display name.
        name: String,
    },
    /// Lock an environment: content reaches it only by promotion.
    Lock {
        /// Its key.
        key: String,
    },
    /// Unlock an environment.
    Unlock {
        /// Its key.
        key: String,
    },
    /// Archive an environment: its tokens stop; all it holds is kept.
    Archive {
        /// Its key.
        key: String,
    },
    /// Bring an archived environment back.
    Restore {
        /// Its key.
        key: String,
    },
    /// Show what differs between two environments, record by record.
    Compare {
        /// The environment whose changes would be promoted.
        from: String,
        /// The environment they would be promoted into.
        to: String,
        /// Print JSON (with the field-by-field differences) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Promote what differs (or the named records) from one environment into another, as one change set.
    Promote {
        /// The environment promoted from.
        from: String,
        /// The environment promoted into.
        to: String,
        /// Promote only this record (lineage or id; repeatable).
        #[arg(long = "item")]
        items: Vec<String>,
        /// Settle a conflict for the source's record (lineage or id; repeatable).
        #[arg(long = "take-source")]
        source: Vec<String>,
        /// Settle a conflict by keeping the target's record (lineage or id; repeatable).
        #[arg(long = "keep-target")]
        target: Vec<String>,
    },
    /// Undo a promotion: its target goes back to what it held before.
    Undo {
        /// The promotion's id.
        id: String,
    },
}

/// `quire token …`.
#[derive(Subcommand)]
pub enum TokenCommand {
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

/// `quire user …`.
#[derive(Subcommand)]
pub enum UserCommand {
    /// Create a user; prints a one-time sign-in link unless a password is given.
    Create {
        /// Email address (the sign-in name).
        #[arg(long)]
        email: String,
        /// Group: admin, editor, author or viewer.
        #[arg(long)]
        group: String,
        /// Sites the user works on, slug or id (repeatable; default: the default site).
        #[arg(long = "site")]
        sites: Vec<String>,
        /// Environments the user may use on those sites (repeatable; default: all).
        #[arg(long = "env")]
        envs: Vec<String>,
        /// Name shown to others (default: the email's local part).
        #[arg(long)]
        name: Option<String>,
        /// Read the password from standard input (one line) instead of printing a sign-in link.
        #[arg(long)]
        password_stdin: bool,
    },
    /// List users (never their passwords).
    List {
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Disable a user; their browser sessions end at once.
    Disable {
        /// Email or id.
        user: String,
    },
    /// Enable a disabled user again.
    Enable {
        /// Email or id.
        user: String,
    },
    /// Print a one-time sign-in link for a user (valid 24 hours), e.g. to set a forgotten password.
    Link {
        /// Email or id.
        user: String,
    },
}

/// What `quire eval` runs and where it writes the results.
#[derive(Args)]
pub struct EvalArgs {
    /// The folder of task files (`*.toml`).
    #[arg(long, default_value = "evals", value_name = "DIR")]
    pub suite: PathBuf,
    /// Run only tasks whose name contains this (repeatable).
    #[arg(long, value_name = "NAME")]
    pub task: Vec<String>,
    /// Run only tasks with this tag (repeatable).
    #[arg(long)]
    pub tag: Vec<String>,
    /// Run each task this many times, for a success rate with its spread.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeat: u32,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write the results as an HTML report to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Seconds a task's conversation may take before it counts as failed.
    #[arg(long, default_value_t = 300, value_name = "SECS")]
    pub timeout: u64,
    /// List the tasks (checking every file) and run nothing.
    #[arg(long)]
    pub list: bool,
}
