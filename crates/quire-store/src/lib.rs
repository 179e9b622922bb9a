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
pub mod users;
mod vectors;

pub use agents::{NewSession, QueuedWrite, SessionUpdate, StoredMessage};
pub use auth::{NewToken, TokenGrant, TokenInfo, check_expiry, expiry_in_days, hash_secret};
pub use changes::UndoReport;
pub use confirm::{Confirmation, ConfirmationStatus, Fingerprint, NewConfirmation};
pub use delivery::{DeliveredNavItem, DeliveredPage};
pub use error::StoreError;
pub use list::{ChangeFilter, EntryFilter, EntryView, Listing, PageFilter};
pub use media::{
    DESCRIBE_IMAGE, ImageFile, ImageMeta, ImageResult, Job, JobInfo, NewUpload, PROCESS_IMAGE, job_payload,
};
pub use search::{SearchDocument, SearchFilter, Searched};
pub use suggest::Suggestion;
pub use users::{NewUser, UserInfo, UserSite, WebSession};

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

/// Copies the write-ahead log into the database every half second without
/// blocking readers or the writer (PASSIVE), so commits never pay for a
/// checkpoint; ends when the store is closed.
async fn checkpoint_loop(pool: SqlitePool) {
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    loop {
        tick.tick().await;
        if pool.is_closed() {
            return;
        }
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").execute(&pool).await {
            if pool.is_closed() {
                return;
            }
            tracing::warn!(error = %e, "background checkpoint failed");
        }
    }
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
            .pragma("wal_autocheckpoint", "0");
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
        tokio::spawn(checkpoint_loop(checkpointer.clone()));
        let batcher = batch::Batcher::spawn(writer.clone());
        Ok(Self { reader, writer, checkpointer, batcher, vectors: vectors::Vectors::default() })
    }

    /// Applies pending migrations (done by [`Store::open`] too); returns how
    /// many the database has applied in all.
    pub async fn migrate(&self) -> Result<usize> {
        sqlx::migrate!("../../migrations/sqlite").run(&self.writer).await?;
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations").fetch_one(&self.reader).await?;
        Ok(n as usize)
    }

    /// Closes both pools, flushing the WAL.
    pub async fn close(&self) {
        let _ = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&self.checkpointer).await;
        self.checkpointer.close().await;
        self.reader.close().await;
        self.writer.close().await;
    }
}
