//! A connection to the database, SQLite (rusqlite) or PostgreSQL
//! (`postgres.rs`), and how it is opened: with `postgres.rs`, the only file
//! that names a driver.

use super::location::Location;
use super::postgres;
use super::row::{Row, RowRef};
use super::value::{self, Value};
use crate::{DatabaseError, Result, StoreError};
use rusqlite::types::{ToSqlOutput, ValueRef};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// When a SQLite commit is on disk (`PRAGMA synchronous`, set on every
/// connection the store opens). PostgreSQL ignores it: there the server's
/// `synchronous_commit` decides, and its default (`on`) flushes the
/// write-ahead log before a commit is acknowledged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Synchronous {
    /// The write-ahead log is synced at every commit, before any write in
    /// it hears success: what was acknowledged survives a power loss or a
    /// kernel panic. The group commit pays one sync for every write queued
    /// together.
    #[default]
    Full,
    /// The write-ahead log is synced only when a checkpoint copies it into
    /// the database: what was acknowledged survives a crash of the process
    /// (`kill -9`), but a power loss or a kernel panic may take the last
    /// commits before it with it (the database stays consistent).
    Normal,
}

impl Synchronous {
    /// Its name in settings and in the pragma: `full` or `normal`.
    pub fn as_str(self) -> &'static str {
        match self {
            Synchronous::Full => "full",
            Synchronous::Normal => "normal",
        }
    }
}

impl std::fmt::Display for Synchronous {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Synchronous {
    type Err = String;
    /// `full` or `normal`, in any case.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "full" => Ok(Synchronous::Full),
            "normal" => Ok(Synchronous::Normal),
            _ => Err(format!("\"{}\" is not one of full, normal", s.trim())),
        }
    }
}

/// Makes the schema `name` in the PostgreSQL database at `url`, and
/// installs the pgvector extension in `public` when the server has it.
pub(crate) fn create_schema(url: &str, name: &str) -> Result<()> {
    let conn = postgres::PgConn::connect(url)?;
    let missing =
        "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector' AND installed_version IS NULL)";
    if conn.truth(missing)? {
        // Another test may make it at the same moment, or this role may not:
        // either way the store finds out what there is when it opens.
        let _ = conn.batch("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public");
    }
    conn.batch(&format!("CREATE SCHEMA {name}"))
}

/// A connection to the database.
#[derive(Debug)]
pub(crate) struct Conn {
    inner: Driver,
    /// Set while a promotion between environments writes (see
    /// [`Conn::promoting`]): the only writer a locked environment takes.
    promoting: std::cell::Cell<bool>,
}

#[derive(Debug)]
enum Driver {
    Sqlite(rusqlite::Connection),
    Postgres(Box<postgres::PgConn>),
}

impl Conn {
    /// Runs SQL text of one or more statements, binding nothing.
    pub fn batch(&self, sql: &str) -> Result<()> {
        match &self.inner {
            Driver::Sqlite(c) => c.execute_batch(sql)?,
            Driver::Postgres(c) => c.batch(sql)?,
        }
        Ok(())
    }

    /// Runs `sql`, one statement that binds and answers nothing (`BEGIN`,
    /// `COMMIT`, `ROLLBACK`): on SQLite from the statement cache, parsed
    /// once per connection rather than at every transaction.
    fn control(&self, sql: &'static str) -> Result<()> {
        match &self.inner {
            Driver::Sqlite(c) => {
                c.prepare_cached(sql)?.execute([])?;
            }
            Driver::Postgres(c) => c.batch(sql)?,
        }
        Ok(())
    }

    /// Whether the connection is gone (a PostgreSQL server closed it).
    pub fn is_closed(&self) -> bool {
        match &self.inner {
            Driver::Sqlite(_) => false,
            Driver::Postgres(c) => c.is_closed(),
        }
    }

    /// Runs `f` as a promotion between environments: its writes may reach
    /// a locked environment (`crate::log::logged` refuses every other).
    pub fn as_promotion<T>(&self, f: impl FnOnce(&Conn) -> Result<T>) -> Result<T> {
        let before = self.promoting.replace(true);
        let out = f(self);
        self.promoting.set(before);
        out
    }

    /// Whether a promotion is writing (see [`Conn::as_promotion`]).
    pub fn promoting(&self) -> bool {
        self.promoting.get()
    }

    /// Whether this is a PostgreSQL connection.
    pub fn is_postgres(&self) -> bool {
        matches!(self.inner, Driver::Postgres(_))
    }

    /// Begins the transaction of a write: `BEGIN IMMEDIATE` on SQLite, so
    /// it holds the write lock from the start.
    pub fn begin_write(&self) -> Result<()> {
        self.control(if self.is_postgres() { "BEGIN" } else { "BEGIN IMMEDIATE" })
    }

    /// Runs `f` in a transaction of its own (`BEGIN IMMEDIATE` on SQLite
    /// when it writes; one snapshot on PostgreSQL when it reads): committed
    /// when `f` succeeds, rolled back when it fails. Not for the writer's closures, which already run inside one.
    ///
    /// Inside a transaction already (a read run on the writer, through an
    /// overlay), `f` runs in that one, which is one snapshot too.
    pub fn transaction<T>(&self, writes: bool, f: impl FnOnce(&Conn) -> Result<T>) -> Result<T> {
        if self.in_transaction() {
            return f(self);
        }
        match (writes, self.is_postgres()) {
            (true, _) => self.begin_write()?,
            // One snapshot for the whole read, as SQLite's read transaction is.
            (false, true) => self.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?,
            (false, false) => self.control("BEGIN")?,
        }
        match f(self) {
            Ok(v) => match self.control("COMMIT") {
                Ok(()) => Ok(v),
                Err(e) => {
                    let _ = self.control("ROLLBACK");
                    Err(e)
                }
            },
            Err(e) => {
                let _ = self.control("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Runs `f` inside a savepoint and rolls back whatever it wrote,
    /// answering what it answered (a write's preview).
    pub fn dry_run<T>(&self, f: impl FnOnce(&Conn) -> Result<T>) -> Result<T> {
        self.batch("SAVEPOINT dry_run")?;
        let out = f(self);
        self.batch("ROLLBACK TO SAVEPOINT dry_run; RELEASE SAVEPOINT dry_run")?;
        out
    }

    /// Writes the database file's pages that are in the operating system's
    /// cache to disk (`fdatasync`); nothing to do on PostgreSQL.
    pub fn sync_database(&self) -> Result<()> {
        let Driver::Sqlite(c) = &self.inner else { return Ok(()) };
        let path = c.path().ok_or_else(|| StoreError::Corrupt("the database has no file".into()))?;
        std::fs::File::open(path)
            .and_then(|f| f.sync_data())
            .map_err(|e| StoreError::Corrupt(format!("syncing the database file: {e}")))
    }

    /// Bytes this SQLite connection's page cache holds (0 on PostgreSQL).
    #[cfg(test)]
    pub fn cache_used(&self) -> i64 {
        let Driver::Sqlite(c) = &self.inner else { return 0 };
        let (mut used, mut peak) = (0, 0);
        // SAFETY: the handle is this open connection's, used on its own
        // thread for one status call that writes the two integers given.
        let rc = unsafe {
            rusqlite::ffi::sqlite3_db_status(
                c.handle(),
                rusqlite::ffi::SQLITE_DBSTATUS_CACHE_USED,
                &mut used,
                &mut peak,
                0,
            )
        };
        assert_eq!(rc, rusqlite::ffi::SQLITE_OK);
        i64::from(used)
    }

    /// Whether a transaction is open.
    pub fn in_transaction(&self) -> bool {
        match &self.inner {
            Driver::Sqlite(c) => !c.is_autocommit(),
            Driver::Postgres(c) => c.in_transaction(),
        }
    }

    /// Runs `sql` with `args` bound; the rows it changed.
    pub fn execute(&self, sql: &str, args: &[Value]) -> Result<u64> {
        Ok(match &self.inner {
            Driver::Sqlite(c) => c.prepare_cached(sql)?.execute(rusqlite::params_from_iter(args.iter()))? as u64,
            Driver::Postgres(c) => c.execute(sql, args)?,
        })
    }

    /// Runs `sql` with `args` bound and calls `f` with each row until it
    /// answers false.
    pub fn each(&self, sql: &str, args: &[Value], mut f: impl FnMut(Row) -> bool) -> Result<()> {
        let c = match &self.inner {
            Driver::Sqlite(c) => c,
            Driver::Postgres(c) => return c.each(sql, args, |names, values| f(Row { names, values })),
        };
        let mut stmt = c.prepare_cached(sql)?;
        let names: Arc<[String]> = stmt.column_names().map(str::to_string).collect();
        let width = names.len();
        let mut rows = stmt.query(rusqlite::params_from_iter(args.iter()))?;
        while let Some(row) = rows.next()? {
            let mut values = Vec::with_capacity(width);
            for i in 0..width {
                let value: ValueRef<'_> = row.get_ref(i)?;
                values.push(read_value(value));
            }
            if !f(Row { names: Arc::clone(&names), values }) {
                break;
            }
        }
        Ok(())
    }

    /// Runs `sql` with `args` bound and calls `f` with each row, its
    /// values borrowed from the statement, until it answers false: for a
    /// reader that writes each row out at once (a list's JSON), with no
    /// copy of its text. On PostgreSQL the rows are read as [`Conn::each`]
    /// reads them and lent out.
    pub fn each_ref(&self, sql: &str, args: &[Value], mut f: impl FnMut(RowRef<'_>) -> Result<bool>) -> Result<()> {
        let c = match &self.inner {
            Driver::Sqlite(c) => c,
            Driver::Postgres(c) => {
                let mut failed = None;
                c.each(sql, args, |names, values| {
                    let row = RowRef { names: &names, values: values.iter().map(Value::as_ref).collect() };
                    f(row).unwrap_or_else(|e| {
                        failed = Some(e);
                        false
                    })
                })?;
                return failed.map_or(Ok(()), Err);
            }
        };
        let mut stmt = c.prepare_cached(sql)?;
        let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
        let width = names.len();
        let mut rows = stmt.query(rusqlite::params_from_iter(args.iter()))?;
        while let Some(row) = rows.next()? {
            let mut values = Vec::with_capacity(width);
            for i in 0..width {
                values.push(borrow_value(row.get_ref(i)?));
            }
            if !f(RowRef { names: &names, values })? {
                break;
            }
        }
        Ok(())
    }

    /// The SQLite connection underneath, for tests that ask SQLite itself.
    #[cfg(test)]
    pub(super) fn sqlite(&self) -> Option<&rusqlite::Connection> {
        match &self.inner {
            Driver::Sqlite(c) => Some(c),
            Driver::Postgres(_) => None,
        }
    }

    pub(super) fn open(at: &Location, synchronous: Synchronous, read_only: bool) -> Result<Conn> {
        match at {
            Location::File(path) => Conn::open_file(path, synchronous, read_only),
            Location::Postgres(url) => Ok(Conn {
                inner: Driver::Postgres(Box::new(postgres::PgConn::connect(url)?)),
                promoting: Default::default(),
            }),
        }
    }

    fn open_file(path: &Path, synchronous: Synchronous, read_only: bool) -> Result<Conn> {
        use rusqlite::OpenFlags;
        let flags = if read_only {
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI
        };
        let inner = rusqlite::Connection::open_with_flags(path, flags)?;
        inner.set_prepared_statement_cache_capacity(256);
        inner.busy_timeout(Duration::from_secs(10))?;
        // A plan that never depends on bound values: otherwise SQLite marks
        // some statements (`... = ?1 ORDER BY ...` among them) to be parsed
        // and planned again whenever a new value is bound, which made every
        // cached statement of that shape cost a fresh prepare. No statistics
        // are gathered (no ANALYZE), so plans lose at most what a bound
        // LIMIT or a bound small integer would have told the planner.
        inner.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
        let conn = Conn { inner: Driver::Sqlite(inner), promoting: Default::default() };
        if !read_only {
            conn.batch(&format!(
                "PRAGMA journal_mode = WAL; PRAGMA journal_size_limit = {}; PRAGMA wal_autocheckpoint = 0;",
                2 * crate::WAL_HARD_LIMIT
            ))?;
        }
        // Set on readers too: the setting is per connection, and any
        // connection that ends up writing or checkpointing must honour it.
        conn.batch(&format!(
            "PRAGMA synchronous = {}; PRAGMA foreign_keys = ON; PRAGMA cache_size = -{}; \
             PRAGMA temp_store = MEMORY;",
            synchronous.as_str().to_ascii_uppercase(),
            CACHE_KIB
        ))?;
        Ok(conn)
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        let unique = matches!(
            e.sqlite_error().map(|s| s.extended_code),
            Some(rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY)
        );
        StoreError::Database(DatabaseError::new(Box::new(e), unique))
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Real(r) => ValueRef::Real(*r),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

/// A value SQLite answered, as a [`Value`].
fn read_value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) => Value::Text(text_of(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

/// A value SQLite answered, borrowed (see [`Conn::each_ref`]).
fn borrow_value(v: ValueRef<'_>) -> value::ValueRef<'_> {
    match v {
        ValueRef::Null => value::ValueRef::Null,
        ValueRef::Integer(i) => value::ValueRef::Int(i),
        ValueRef::Real(r) => value::ValueRef::Real(r),
        ValueRef::Text(t) => value::ValueRef::Text(text_of(t)),
        ValueRef::Blob(b) => value::ValueRef::Blob(b),
    }
}

/// Text SQLite answered: borrowed when it is UTF-8 (checked a word at a
/// time, where the lossy conversion goes a character at a time), else
/// with each bad sequence replaced.
fn text_of(t: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(t) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(t),
    }
}

/// Each SQLite connection's page cache, in KiB. Chosen by measurement
/// (docs/benchmarks.md, "Memory"): 2 MB and 16 MB answered every benchmark
/// scenario alike (the operating system's cache holds the rest of the
/// file), and 16 MB kept 14 MB more after random writes.
const CACHE_KIB: u32 = 2000;

/// Returns the C heap's free memory to the operating system (glibc keeps
/// what SQLite freed, page caches among it, in its arenas otherwise).
pub(super) fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes a size and touches only the allocator's own
    // state, under its locks.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Process-wide SQLite settings, applied once before the first connection:
/// no memory statistics, which SQLite otherwise keeps under a global mutex
/// taken on every allocation of every connection.
pub(super) fn configure_sqlite() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: sqlite3_config is called before any connection of this
        // process is opened (Once, first thing in `Db::open`); with
        // SQLITE_CONFIG_MEMSTATUS it reads one int argument. Were SQLite
        // already initialised it would return SQLITE_MISUSE and change nothing.
        let rc = unsafe { rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as std::ffi::c_int) };
        if rc != rusqlite::ffi::SQLITE_OK {
            tracing::debug!(rc, "SQLite was already initialised; memory statistics stay on");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transaction_begins_and_commits_with_statements_parsed_once() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Conn::open(&Location::File(dir.path().join("t.db")), Synchronous::default(), false).unwrap();
        for _ in 0..3 {
            conn.transaction(false, |_| Ok(())).unwrap();
        }
        let _ = conn.transaction(false, |_| Err::<(), _>(StoreError::invalid("v", "refused")));
        let runs = |sql| {
            let stmt = conn.sqlite().unwrap().prepare_cached(sql).unwrap();
            stmt.get_status(rusqlite::StatementStatus::Run)
        };
        assert_eq!((runs("BEGIN"), runs("COMMIT"), runs("ROLLBACK")), (4, 3, 1));
    }
}
