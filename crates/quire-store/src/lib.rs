//! Quire's persistence.
//!
//! The [`Store`] is the only place SQL lives. It opens an embedded SQLite
//! database (WAL, foreign keys on, every commit synced to disk unless
//! [`Synchronous::Normal`] is asked for), applies the migrations of
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
mod changes;
mod confirm;
mod db;
mod delivery;
mod environments;
mod error;
mod limits;
mod list;
mod locales;
mod log;
mod media;
mod memory;
mod migrate;
mod oauth;
mod ops;
mod outbox;
mod preferences;
mod previews;
mod publishing;
mod record;
mod records;
mod releases;
mod schedules;
mod search;
pub mod seed;
mod staging;
mod suggest;
pub mod testing;
mod transfer;
pub mod users;
mod vectors;
mod webhooks;

pub use agents::{NewSession, QueuedWrite, SessionUpdate, StoredMessage};
pub use auth::{NewToken, TokenGrant, TokenInfo, check_expiry, expiry_in_days, hash_secret};
pub use changes::{ChangeSummary, UndoReport};
pub use confirm::{Confirmation, ConfirmationStatus, Fingerprint, NewConfirmation};
pub use db::{Location, Synchronous};
pub use delivery::{DeliveredEntry, DeliveredNavItem, DeliveredPage};
pub use environments::{
    ChangedIn, EnvChange, EnvDifference, Environment, PromotedItem, Promotion, PromotionRequest, Resolution,
};
pub use error::{DatabaseError, StoreError};
pub use limits::{SignInFailures, UsageAdd};
pub use list::{ChangeFilter, EntryFilter, EntryView, Listing, PageFilter};
pub use locales::{TranslationState, Translations};
pub use media::{ImageFile, ImageMeta, ImageResult, Job, JobInfo, NewUpload, job_payload};
pub use oauth::{ACCESS_LIFETIME, NewGrant, OAuthClient, OAuthRefusal, OAuthTokens, pkce_matches};
pub use preferences::StoredPreferences;
pub use previews::PREVIEW_TTL;
pub use publishing::{DocumentPreview, Publication, PublishAction};
pub use record::Version;
pub use releases::{ItemReview, Release, ReleaseItem, ReleasePatch, ReleaseReview, Stage};
pub use schedules::{Schedule, ScheduleTarget};
pub use search::{SearchDocument, SearchFilter, Searched};
pub use staging::Staging;
pub use suggest::Suggestion;
pub use transfer::TransferReport;
pub use users::{NewUser, UserInfo, UserSite, WebSession};
pub use vectors::NoteVectorStamp;
pub use webhooks::{Claimed, Delivery, EVENTS as WEBHOOK_EVENTS, KINDS as WEBHOOK_KINDS, NewWebhook, Webhook};

use std::path::Path;
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

    /// The scope of a row with `site_id` and `env` columns.
    pub(crate) fn of_row(row: &db::Row) -> Result<Self> {
        Ok(Self::new(row.try_get::<String, _>("site_id")?, row.try_get::<String, _>("env")?))
    }
}

/// Size past which the write-ahead log is emptied as soon as the writer
/// pauses, in bytes. (When SQLite rewinds the log it keeps the file, up to
/// twice [`WAL_HARD_LIMIT`] (`journal_size_limit`), and writes over it:
/// cutting a file of hundreds of megabytes back at the first commit after
/// each rewind stalled that commit for tens of milliseconds.) Under sustained writes a passive
/// checkpoint never quite catches up with the writer, and SQLite only
/// rewinds the log once one has: without a bound the file grows with every
/// write until the process stops (and the next start reads all of it back).
pub const WAL_LIMIT: i64 = 64 * 1024 * 1024;

/// Size past which the log is rewound even while writes keep coming, in
/// bytes. Rewinding then costs the writer a pause (the last frames copied
/// and the database synced: 6–22 ms on the benchmark machine's disk, the
/// passes before having synced what they copied), so it is kept for logs
/// four times past [`WAL_LIMIT`]; what a start after `kill -9` reads back
/// stays near this.
pub const WAL_HARD_LIMIT: i64 = 4 * WAL_LIMIT;

/// How long the log goes without a new frame (no commit changed anything)
/// before the connections give back their page caches' memory
/// ([`db::Db::release_memory`]), in ticks of the checkpoint loop (10 s).
/// Not any write: background work (schedules, the outbox) commits
/// transactions that change nothing every few seconds.
const QUIET_TICKS: u32 = 20;

/// Keeps the write-ahead log small without making commits pay for it.
///
/// Every half second a PASSIVE checkpoint on a connection of its own copies
/// the log into the database, blocking neither readers nor the writer. The
/// log file is rewound only when every frame has been copied before the
/// next commit, which under steady writes never happens by itself, so:
/// - past [`WAL_LIMIT`] (the log or its file), once no commit came since
///   the last tick (the writer paused), a TRUNCATE checkpoint on the
///   writer's connection empties the file; nobody waits for it;
/// - past [`WAL_HARD_LIMIT`], passive checkpoints run back to back until one
///   finds little left, then a PASSIVE on the writer's connection copies
///   the rest with no commit in between, and the next commit rewinds the
///   log. Each passive pass syncs the database file after it (see
///   [`passive_checkpoint`]), so that last checkpoint has little to sync.
///
/// Both run on the writer's connection between two transactions: on
/// another connection a checkpoint that must see every frame would hold the
/// write lock while waiting for the writer's open transaction to end, and
/// that transaction, wanting the lock, would fail with `SQLITE_BUSY`. Ends
/// when the store is closed.
async fn checkpoint_loop(db: db::Db, quiet_periods: tokio::sync::watch::Sender<u64>) {
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    let mut last_frames = 0;
    let mut quiet = 0;
    loop {
        tick.tick().await;
        if db.is_closed() {
            return;
        }
        let started = std::time::Instant::now();
        let passive = db.apart(passive_checkpoint);
        let (frames, page) = match passive.await {
            Ok(((_, frames, _), page)) => (frames, page),
            Err(_) if db.is_closed() => return,
            Err(e) => {
                tracing::warn!(error = %e, "background checkpoint failed");
                continue;
            }
        };
        let paused = frames == last_frames;
        last_frames = frames;
        // A store no longer written to gives its caches back, once a pause.
        quiet = if paused { quiet + 1 } else { 0 };
        if quiet == QUIET_TICKS {
            match db.release_memory().await {
                Ok(()) => {
                    tracing::debug!("no writes for a while: the caches' memory released");
                    quiet_periods.send_modify(|n| *n += 1);
                }
                Err(e) => tracing::debug!(error = %e, "could not release the caches' memory"),
            }
        }
        let bytes = frames * page;
        // A log rewound under load keeps its file's size: emptied too.
        let file = db
            .file()
            .and_then(|f| std::fs::metadata(format!("{}-wal", f.display())).ok())
            .map_or(0, |m| m.len() as i64);
        let rewound = if bytes.max(file) > WAL_LIMIT && paused {
            db.outside(|c| checkpoint(c, "TRUNCATE")).await
        } else if bytes > WAL_HARD_LIMIT {
            // Each passive pass copies what came during the one before.
            let mut took = started.elapsed();
            for _ in 0..4 {
                if took < Duration::from_millis(15) {
                    break;
                }
                let again = std::time::Instant::now();
                if db.apart(passive_checkpoint).await.is_err() {
                    break;
                }
                took = again.elapsed();
            }
            let pause = std::time::Instant::now();
            let done = db.outside(|c| checkpoint(c, "PASSIVE")).await;
            tracing::debug!(pause_ms = pause.elapsed().as_millis() as u64, bytes, "write-ahead log rewound under load");
            done
        } else {
            continue;
        };
        if let Err(e) | Ok(Err(e)) = rewound.map(|r| r.map(|_| ()))
            && !db.is_closed()
        {
            tracing::warn!(error = %e, "could not rewind the write-ahead log");
        }
    }
}

/// A PASSIVE checkpoint on the connection apart, then the database file
/// synced. SQLite syncs the file only when a checkpoint copied every frame,
/// so under steady writes the pages copied by passive passes would wait,
/// unsynced, for the one checkpoint that does — the one the writer waits
/// for when the log is rewound under load. Synced here, on a background
/// thread, that last checkpoint syncs little.
fn passive_checkpoint(conn: &db::Conn) -> Result<((i64, i64, i64), i64)> {
    let done = checkpoint(conn, "PASSIVE")?;
    if done.0.2 > 0 {
        conn.sync_database()?;
    }
    Ok(done)
}

/// Runs `PRAGMA wal_checkpoint(mode)`: ((busy, frames in the log, frames
/// copied into the database), the page size).
fn checkpoint(conn: &db::Conn, mode: &'static str) -> Result<((i64, i64, i64), i64)> {
    let sql = match mode {
        "TRUNCATE" => "PRAGMA wal_checkpoint(TRUNCATE)",
        _ => "PRAGMA wal_checkpoint(PASSIVE)",
    };
    let done = db::query_as(sql).fetch_one(conn)?;
    let page = db::query_scalar("PRAGMA page_size").fetch_one(conn)?;
    Ok((done, page))
}

/// Result of store operations.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Handle on the database. Cheap to clone.
///
/// Writes run on the writer's own thread, so SQLite's single writer is
/// queued in-process instead of failing with `SQLITE_BUSY`; reads run on
/// reader connections and, with WAL, never wait for a writer.
#[derive(Clone, Debug)]
pub struct Store {
    db: db::Db,
    vectors: vectors::Vectors,
    /// Whether records' vectors are searched in PostgreSQL (pgvector).
    pgvector: bool,
    /// This handle's name among the processes sharing the database: the
    /// runner of the agent turns it starts (see [`Store::heartbeat`]).
    replica: std::sync::Arc<str>,
    /// Counts the pauses after which the store gave its caches back.
    quiet_periods: tokio::sync::watch::Receiver<u64>,
}

/// How a store is opened, besides where.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreOptions {
    /// When a SQLite commit is on disk (default [`Synchronous::Full`]).
    pub synchronous: Synchronous,
}

impl Store {
    /// Opens (creating if needed) the SQLite database file at `path` and migrates it.
    pub async fn open(path: &Path) -> Result<Self> {
        Self::open_at(Location::File(path.to_path_buf())).await
    }

    /// Opens the database at `at` — a SQLite file (created if needed) or
    /// a PostgreSQL database (which must exist) — and migrates it, with
    /// the default [`StoreOptions`].
    pub async fn open_at(at: Location) -> Result<Self> {
        Self::open_with(at, StoreOptions::default()).await
    }

    /// [`Store::open_at`] with `options`.
    pub async fn open_with(at: Location, options: StoreOptions) -> Result<Self> {
        let sqlite = matches!(at, Location::File(_));
        let db = db::Db::open(at, options.synchronous, |c| migrate::run(c).map(drop), search::index_pending).await?;
        let (quiet, quiet_periods) = tokio::sync::watch::channel(0);
        if sqlite {
            tokio::spawn(checkpoint_loop(db.clone(), quiet));
        }
        let pgvector = !sqlite && db.outside(vectors::pgvector).await??;
        let replica = uuid::Uuid::now_v7().to_string().into();
        Ok(Self { db, vectors: vectors::Vectors::default(), pgvector, replica, quiet_periods })
    }

    /// Changes each time the store, once no commit has changed anything for
    /// a while, has given back its connections' caches (SQLite only; see
    /// `QUIET_TICKS`): the moment for the process to give back its own
    /// spare memory too.
    pub fn quiet_periods(&self) -> tokio::sync::watch::Receiver<u64> {
        self.quiet_periods.clone()
    }

    /// This handle's name among the processes sharing the database.
    pub fn replica(&self) -> &str {
        &self.replica
    }

    /// Where the database is.
    pub fn location(&self) -> &Location {
        self.db.location()
    }

    /// Applies pending migrations (done by [`Store::open`] too); returns how
    /// many the database has applied in all.
    pub async fn migrate(&self) -> Result<usize> {
        self.db.outside(migrate::run).await?
    }

    /// Closes the store: waits for the writes in progress, copies the
    /// write-ahead log into the database and empties it (TRUNCATE), then
    /// closes every connection. Idempotent. Every process that writes calls
    /// it on its way out, so no large log is left for the next start.
    pub async fn close(&self) {
        self.db
            .close(|c| {
                if c.is_postgres() {
                    return;
                }
                if let Err(e) = checkpoint(c, "TRUNCATE") {
                    tracing::warn!(error = %e, "could not truncate the write-ahead log on close");
                }
            })
            .await;
    }

    /// Bytes the database's pages in use take (its size less its free
    /// pages), and the size of its write-ahead log file.
    pub async fn disk_usage(&self) -> Result<(u64, u64)> {
        let (pages, free, size): (i64, i64, i64) = self
            .db
            .read(|c| {
                if c.is_postgres() {
                    let bytes = db::query_scalar("SELECT pg_database_size(current_database())").fetch_one(c)?;
                    return Ok((bytes, 0, 1));
                }
                Ok((
                    db::query_scalar("PRAGMA page_count").fetch_one(c)?,
                    db::query_scalar("PRAGMA freelist_count").fetch_one(c)?,
                    db::query_scalar("PRAGMA page_size").fetch_one(c)?,
                ))
            })
            .await?;
        let wal =
            self.db.file().and_then(|f| std::fs::metadata(format!("{}-wal", f.display())).ok()).map_or(0, |m| m.len());
        Ok((((pages - free) * size) as u64, wal))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `PRAGMA synchronous` (2 FULL, 1 NORMAL) on every connection `store`
    /// has open: the writer's, the one apart (background checkpoints), and
    /// as many readers as may read at once, all held together so each read
    /// has a connection of its own.
    async fn synchronous_everywhere(store: &Store) -> Vec<i64> {
        let pragma = |c: &db::Conn| db::query_scalar::<i64>("PRAGMA synchronous").fetch_one(c);
        let mut seen = vec![store.db.write(pragma).await.unwrap(), store.db.apart(pragma).await.unwrap()];
        let together = std::sync::Arc::new(std::sync::Barrier::new(db::READERS));
        let reads: Vec<_> = (0..db::READERS)
            .map(|_| {
                let (together, db) = (std::sync::Arc::clone(&together), store.db.clone());
                tokio::spawn(async move {
                    db.read(move |c| {
                        together.wait();
                        pragma(c)
                    })
                    .await
                })
            })
            .collect();
        for read in reads {
            seen.push(read.await.unwrap().unwrap());
        }
        // A short read takes a reader from the pool on the caller's thread.
        seen.push(store.db.read_short(pragma).await.unwrap());
        seen
    }

    #[tokio::test]
    async fn every_connection_syncs_each_commit_unless_told_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let at = Location::File(dir.path().join("q.db"));
        let store = Store::open_at(at.clone()).await.unwrap();
        let seen = synchronous_everywhere(&store).await;
        assert_eq!(seen, vec![2; 3 + db::READERS], "FULL by default: writer, apart, readers, short read");
        store.close().await;

        let normal = StoreOptions { synchronous: Synchronous::Normal };
        let store = Store::open_with(at, normal).await.unwrap();
        let seen = synchronous_everywhere(&store).await;
        assert_eq!(seen, vec![1; 3 + db::READERS], "NORMAL when asked: writer, apart, readers, short read");
        store.close().await;
    }

    #[test]
    fn the_setting_reads_as_written_in_any_case() {
        assert_eq!("FULL".parse(), Ok(Synchronous::Full));
        assert_eq!(" normal ".parse(), Ok(Synchronous::Normal));
        assert_eq!("off".parse::<Synchronous>(), Err("\"off\" is not one of full, normal".to_string()));
        assert_eq!(Synchronous::default().to_string(), "full");
    }
}
