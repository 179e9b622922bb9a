//! Quire's persistence.
//!
//! The [`Store`] is the only place SQL lives. It opens an embedded SQLite
//! database (WAL, foreign keys on), applies the migrations of
//! `migrations/sqlite`, and offers typed operations on the content model:
//! create, update, list, archive with cascade, restore, revisions, delivery
//! reads, tokens and the demo seed. Every mutation runs in one transaction
//! together with its change-log record, so the log and the data never
//! disagree. Callers never see a row, a pool or a SQLite error: the API speaks
//! in `quire_core` types and [`StoreError`], which a PostgreSQL backend will
//! implement the same way.

mod agents;
mod archive;
mod auth;
mod batch;
mod changes;
mod confirm;
mod delivery;
mod error;
mod list;
mod media;
mod ops;
mod record;
mod records;
mod search;
pub mod seed;
mod suggest;
mod transfer;
pub mod users;
mod vectors;

pub use agents::{NewSession, QueuedWrite, SessionUpdate, StoredMessage};
pub use auth::{NewToken, TokenGrant, TokenInfo, check_expiry, expiry_in_days, hash_secret};
pub use changes::{ChangeSummary, UndoReport};
pub use confirm::{Confirmation, ConfirmationStatus, Fingerprint, NewConfirmation};
pub use delivery::{DeliveredNavItem, DeliveredPage};
pub use error::{DatabaseError, StoreError};
pub use list::{ChangeFilter, EntryFilter, EntryView, Listing, PageFilter};
pub use media::{
    DESCRIBE_IMAGE, ImageFile, ImageMeta, ImageResult, Job, JobInfo, NewUpload, PROCESS_IMAGE, job_payload,
};
pub use search::{SearchDocument, SearchFilter, Searched};
pub use suggest::Suggestion;
pub use transfer::TransferReport;
pub use users::{NewUser, UserInfo, UserSite, WebSession};
pub use vectors::NoteVectorStamp;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

/// The tenancy scope of every content record: a site and one of its environments.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scope {
    /// Site id.
    pub site_id: String,
    /// Environment key (`production`).
    pub env: String,
}

impl Scope {
    /// A scope from its parts.
    pub fn new(site_id: impl Into<String>, env: impl Into<String>) -> Self {
        Self { site_id: site_id.into(), env: env.into() }
    }
}

/// Size past which the write-ahead log is emptied as soon as the writer
/// pauses, in bytes; also the size its file is cut back to whenever SQLite
/// rewinds it (`journal_size_limit`). Under sustained writes a passive
/// checkpoint never quite catches up with the writer, and SQLite only
/// rewinds the log once one has: without a bound the file grows with every
/// write until the process stops (and the next start reads all of it back).
pub const WAL_LIMIT: i64 = 64 * 1024 * 1024;

/// Size past which the log is rewound even while writes keep coming, in
/// bytes. Rewinding then costs the writer a pause (the last frames copied
/// and the database synced: ~90 ms on the benchmark machine's disk), so it
/// is kept for logs four times past [`WAL_LIMIT`]; what a start after
/// `kill -9` reads back stays within this.
pub const WAL_HARD_LIMIT: i64 = 4 * WAL_LIMIT;

/// Keeps the write-ahead log small without making commits pay for it.
///
/// Every half second a PASSIVE checkpoint on the `checkpointer`'s own
/// connection copies the log into the database, blocking neither readers
/// nor the writer. The log file is rewound only when every frame has been
/// copied before the next commit, which under steady writes never happens
/// by itself, so:
/// - past [`WAL_LIMIT`], once no commit came since the last tick (the
///   writer paused), a TRUNCATE checkpoint on the writer's connection
///   empties the file; nobody waits for it;
/// - past [`WAL_HARD_LIMIT`], passive checkpoints run back to back until one
///   finds little left, then a PASSIVE on the writer's connection copies
///   the rest with no commit in between, and the next commit rewinds the
///   log (cutting the file back to [`WAL_LIMIT`]).
///
/// Both run on the writer's connection, taken from its pool of one between
/// two transactions: on another connection a checkpoint that must see every
/// frame would hold the write lock while waiting for the writer's open
/// transaction to end, and that transaction, wanting the lock, would fail
/// with `SQLITE_BUSY`. Ends when the store is closed.
async fn checkpoint_loop(checkpointer: SqlitePool, writer: SqlitePool) {
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    let mut last_frames = 0;
    loop {
        tick.tick().await;
        if checkpointer.is_closed() {
            return;
        }
        let started = std::time::Instant::now();
        let frames = match checkpoint(&checkpointer, "PASSIVE").await {
            Ok((_, frames, _)) => frames,
            Err(_) if checkpointer.is_closed() => return,
            Err(e) => {
                tracing::warn!(error = %e, "background checkpoint failed");
                continue;
            }
        };
        let paused = frames == last_frames;
        last_frames = frames;
        let bytes = frames * page_size(&checkpointer).await;
        let rewound = if bytes > WAL_LIMIT && paused {
            checkpoint(&writer, "TRUNCATE").await
        } else if bytes > WAL_HARD_LIMIT {
            // Each passive pass copies what came during the one before.
            let mut took = started.elapsed();
            for _ in 0..4 {
                if took < Duration::from_millis(15) {
                    break;
                }
                let again = std::time::Instant::now();
                if checkpoint(&checkpointer, "PASSIVE").await.is_err() {
                    break;
                }
                took = again.elapsed();
            }
            let pause = std::time::Instant::now();
            let done = checkpoint(&writer, "PASSIVE").await;
            tracing::debug!(pause_ms = pause.elapsed().as_millis() as u64, bytes, "write-ahead log rewound under load");
            done
        } else {
            continue;
        };
        if let Err(e) = rewound
            && !writer.is_closed()
        {
            tracing::warn!(error = %e, "could not rewind the write-ahead log");
        }
    }
}

/// Runs `PRAGMA wal_checkpoint(mode)`: (busy, frames in the log, frames
/// copied into the database).
async fn checkpoint(pool: &SqlitePool, mode: &'static str) -> Result<(i64, i64, i64), sqlx::Error> {
    let sql = match mode {
        "TRUNCATE" => "PRAGMA wal_checkpoint(TRUNCATE)",
        _ => "PRAGMA wal_checkpoint(PASSIVE)",
    };
    sqlx::query_as(sql).fetch_one(pool).await
}

/// The database's page size (a frame of the log holds one page).
async fn page_size(pool: &SqlitePool) -> i64 {
    sqlx::query_scalar("PRAGMA page_size").fetch_one(pool).await.unwrap_or(4096)
}

/// Process-wide SQLite settings, applied once before the first connection:
/// no memory statistics, which SQLite otherwise keeps under a global mutex
/// taken on every allocation of every connection.
fn configure_sqlite() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: sqlite3_config is called before any connection of this
        // process is opened (Once, first thing in `Store::open`); with
        // SQLITE_CONFIG_MEMSTATUS it reads one int argument. Were SQLite
        // already initialised it would return SQLITE_MISUSE and change nothing.
        let rc =
            unsafe { libsqlite3_sys::sqlite3_config(libsqlite3_sys::SQLITE_CONFIG_MEMSTATUS, 0 as std::ffi::c_int) };
        if rc != libsqlite3_sys::SQLITE_OK {
            tracing::debug!(rc, "SQLite was already initialised; memory statistics stay on");
        }
    });
}

/// Result of store operations.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Handle on the database. Cheap to clone.
///
/// Writes go through a pool of one connection, so SQLite's single writer is
/// queued in-process instead of failing with `SQLITE_BUSY`; reads use a
/// separate pool and, with WAL, never wait for a writer.
#[derive(Clone, Debug)]
pub struct Store {
    reader: SqlitePool,
    writer: SqlitePool,
    checkpointer: SqlitePool,
    batcher: batch::Batcher,
    vectors: vectors::Vectors,
    path: std::sync::Arc<std::path::PathBuf>,
}

impl Store {
    /// Opens (creating if needed) the database file at `path` and migrates it.
    pub async fn open(path: &Path) -> Result<Self> {
        configure_sqlite();
        let url = format!("sqlite://{}", path.display());
        let options = SqliteConnectOptions::from_str(&url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10))
            .pragma("cache_size", "-16000")
            .pragma("temp_store", "memory")
            // Checkpoints run in the background (below), not inside a commit
            // of the single writer.
            .pragma("wal_autocheckpoint", "0")
            // When the log is rewound, its file is cut back to this size.
            .pragma("journal_size_limit", WAL_LIMIT.to_string());
        let writer = SqlitePoolOptions::new().max_connections(1).connect_with(options.clone()).await?;
        let checkpointer = SqlitePoolOptions::new().max_connections(1).connect_with(options.clone()).await?;
        let store_migrations = sqlx::migrate!("../../migrations/sqlite");
        store_migrations.run(&writer).await?;
        let readers = 4;
        let reader = SqlitePoolOptions::new()
            .max_connections(readers)
            .min_connections(1)
            .connect_with(options.read_only(true))
            .await?;
        tokio::spawn(checkpoint_loop(checkpointer.clone(), writer.clone()));
        let batcher = batch::Batcher::spawn(writer.clone());
        let path = std::sync::Arc::new(path.to_path_buf());
        Ok(Self { reader, writer, checkpointer, batcher, vectors: vectors::Vectors::default(), path })
    }

    /// Applies pending migrations (done by [`Store::open`] too); returns how
    /// many the database has applied in all.
    pub async fn migrate(&self) -> Result<usize> {
        sqlx::migrate!("../../migrations/sqlite").run(&self.writer).await?;
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations").fetch_one(&self.reader).await?;
        Ok(n as usize)
    }

    /// Closes the store: waits for the writes in progress, copies the
    /// write-ahead log into the database and empties it (TRUNCATE), then
    /// closes every connection. Idempotent. Every process that writes calls
    /// it on its way out, so no large log is left for the next start.
    pub async fn close(&self) {
        if self.writer.is_closed() {
            return;
        }
        // The writer first: a batch in progress commits, nothing new starts.
        self.writer.close().await;
        if let Err(e) = checkpoint(&self.checkpointer, "TRUNCATE").await {
            tracing::warn!(error = %e, "could not truncate the write-ahead log on close");
        }
        self.checkpointer.close().await;
        self.reader.close().await;
    }

    /// Bytes the database's pages in use take (its size less its free
    /// pages), and the size of its write-ahead log file.
    pub async fn disk_usage(&self) -> Result<(u64, u64)> {
        let pages: i64 = sqlx::query_scalar("PRAGMA page_count").fetch_one(&self.checkpointer).await?;
        let free: i64 = sqlx::query_scalar("PRAGMA freelist_count").fetch_one(&self.checkpointer).await?;
        let size = page_size(&self.checkpointer).await;
        let wal = std::fs::metadata(format!("{}-wal", self.path.display())).map(|m| m.len()).unwrap_or(0);
        Ok((((pages - free) * size) as u64, wal))
    }
}
