//! The database underneath the store: connections, the threads they live on,
//! queries and their values. The only file that names the driver.
//!
//! Every store call hands its work over once: a read runs as one closure on
//! a reader connection (on tokio's blocking pool), a write as one closure on
//! the writer's own thread, where it joins the next group commit. Inside the
//! closure statements run synchronously, so a call of twenty statements costs
//! one hand-off, not twenty.
//!
//! Group commit: the writer thread takes every write queued (up to
//! [`MAX_BATCH`]) into one transaction, each in a savepoint of its own (a
//! write alone in its transaction, as always on PostgreSQL, needs none). A
//! write that fails is rolled back alone, and its caller hears the error at
//! once; the others' callers hear back only after the COMMIT (or its
//! failure), never before. On PostgreSQL a connection never sends COMMIT
//! for a transaction a failed statement aborted (the server would roll it
//! back without an error): the writes in it hear that it failed.
//!
//! Queries keep SQL's own placeholders (`?1`, `?`), bind [`Value`]s, and
//! read rows into [`Row`]s of values, so nothing above this file sees a
//! driver type.
//!
//! The same connection, queries and group commit run over SQLite
//! (rusqlite) or PostgreSQL (`postgres.rs`).

mod postgres;

use crate::{DatabaseError, Result, StoreError};
use chrono::{DateTime, NaiveDateTime, SecondsFormat, Utc};
use rusqlite::types::{ToSqlOutput, ValueRef};
use std::borrow::Cow;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Semaphore, mpsc, oneshot};

/// Most writes in one transaction.
pub(crate) const MAX_BATCH: usize = 64;

/// Most writes in one transaction on PostgreSQL: one. There other
/// processes (replicas) write at the same time, and a transaction holding
/// the row locks of many writes waits on theirs and makes them wait, up to
/// deadlocks; one write's transaction holds its own rows alone.
const MAX_BATCH_POSTGRES: usize = 1;

/// Connections that read at once.
pub(crate) const READERS: usize = 4;

// ------------------------------------------------------------------ values

/// A value bound to a query or read from a row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Value {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Int(_) => "integer",
            Value::Real(_) => "real",
            Value::Text(_) => "text",
            Value::Blob(_) => "blob",
        }
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

impl Value {
    fn read(v: ValueRef<'_>) -> Self {
        match v {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Int(i),
            ValueRef::Real(r) => Value::Real(r),
            ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        }
    }
}

/// The text a time is stored as: RFC 3339 with as many fraction digits as it
/// has and `+00:00` (what the store has always written, so stored times
/// compare and sort as text).
pub(crate) fn time_text(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, false)
}

macro_rules! value_from {
    ($($t:ty => |$v:ident| $e:expr),* $(,)?) => {
        $(impl From<$t> for Value {
            fn from($v: $t) -> Self {
                $e
            }
        })*
    };
}

value_from! {
    i64 => |v| Value::Int(v),
    &i64 => |v| Value::Int(*v),
    i32 => |v| Value::Int(v.into()),
    &i32 => |v| Value::Int((*v).into()),
    &u32 => |v| Value::Int((*v).into()),
    &f64 => |v| Value::Real(*v),
    &f32 => |v| Value::Real((*v).into()),
    u32 => |v| Value::Int(v.into()),
    u16 => |v| Value::Int(v.into()),
    u8 => |v| Value::Int(v.into()),
    bool => |v| Value::Int(v.into()),
    &bool => |v| Value::Int((*v).into()),
    f64 => |v| Value::Real(v),
    f32 => |v| Value::Real(v.into()),
    &str => |v| Value::Text(v.to_string()),
    String => |v| Value::Text(v),
    &String => |v| Value::Text(v.clone()),
    &&str => |v| Value::Text(v.to_string()),
    Vec<u8> => |v| Value::Blob(v),
    &Vec<u8> => |v| Value::Blob(v.clone()),
    &[u8] => |v| Value::Blob(v.to_vec()),
    DateTime<Utc> => |v| Value::Text(time_text(&v)),
    &DateTime<Utc> => |v| Value::Text(time_text(v)),
    &Value => |v| v.clone(),
}

macro_rules! value_from_option {
    ($($t:ty),* $(,)?) => {
        $(impl From<Option<$t>> for Value {
            fn from(v: Option<$t>) -> Self {
                v.map_or(Value::Null, Into::into)
            }
        }
        impl From<&Option<$t>> for Value {
            fn from(v: &Option<$t>) -> Self {
                v.as_ref().map_or(Value::Null, Into::into)
            }
        })*
    };
}

value_from_option!(i64, i32, u32, bool, f64, f32, String, Vec<u8>, DateTime<Utc>);

impl From<Option<&str>> for Value {
    fn from(v: Option<&str>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

impl From<Option<&String>> for Value {
    fn from(v: Option<&String>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// A type a column's value decodes into.
pub(crate) trait FromValue: Sized {
    /// The value decoded, or why not.
    fn from_value(v: &Value) -> Result<Self, String>;
}

fn wrong(v: &Value, want: &str) -> String {
    format!("a {} where {want} was expected", v.kind())
}

impl FromValue for Value {
    fn from_value(v: &Value) -> Result<Self, String> {
        Ok(v.clone())
    }
}

impl FromValue for i64 {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Int(i) => Ok(*i),
            _ => Err(wrong(v, "an integer")),
        }
    }
}

impl FromValue for i32 {
    fn from_value(v: &Value) -> Result<Self, String> {
        i32::try_from(i64::from_value(v)?).map_err(|e| e.to_string())
    }
}

impl FromValue for u32 {
    fn from_value(v: &Value) -> Result<Self, String> {
        u32::try_from(i64::from_value(v)?).map_err(|e| e.to_string())
    }
}

impl FromValue for bool {
    fn from_value(v: &Value) -> Result<Self, String> {
        Ok(i64::from_value(v)? != 0)
    }
}

impl FromValue for f64 {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Real(r) => Ok(*r),
            Value::Int(i) => Ok(*i as f64),
            _ => Err(wrong(v, "a number")),
        }
    }
}

impl FromValue for f32 {
    fn from_value(v: &Value) -> Result<Self, String> {
        Ok(f64::from_value(v)? as f32)
    }
}

impl FromValue for String {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Text(s) => Ok(s.clone()),
            _ => Err(wrong(v, "text")),
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Blob(b) => Ok(b.clone()),
            Value::Text(s) => Ok(s.as_bytes().to_vec()),
            _ => Err(wrong(v, "a blob")),
        }
    }
}

impl FromValue for DateTime<Utc> {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Text(s) => parse_time(s).ok_or_else(|| format!("\"{s}\" is not a time")),
            Value::Int(secs) => DateTime::from_timestamp(*secs, 0).ok_or_else(|| format!("{secs} is not a time")),
            _ => Err(wrong(v, "a time")),
        }
    }
}

/// A stored time: RFC 3339, or SQLite's own `YYYY-MM-DD HH:MM:SS[.f]`
/// (with or without an offset, UTC when without).
fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    if let Ok(t) = DateTime::parse_from_str(s, "%F %T%.f%:z") {
        return Some(t.with_timezone(&Utc));
    }
    NaiveDateTime::parse_from_str(s, "%F %T%.f").ok().map(|t| t.and_utc())
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

// -------------------------------------------------------------------- rows

/// A row read: its columns' names and values.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    names: Arc<[String]>,
    values: Vec<Value>,
}

/// Names a column of a row: by name or by position.
pub(crate) trait ColumnIndex: std::fmt::Display + Copy {
    /// The column's position in `row`.
    fn position(self, row: &Row) -> Option<usize>;
}

impl ColumnIndex for &str {
    fn position(self, row: &Row) -> Option<usize> {
        row.names.iter().position(|n| n == self)
    }
}

impl ColumnIndex for usize {
    fn position(self, row: &Row) -> Option<usize> {
        (self < row.values.len()).then_some(self)
    }
}

impl Row {
    /// The value of column `col`, decoded.
    pub fn try_get<T: FromValue, I: ColumnIndex>(&self, col: I) -> Result<T> {
        let at = col.position(self).ok_or_else(|| StoreError::Corrupt(format!("no column {col}")))?;
        T::from_value(&self.values[at]).map_err(|e| StoreError::Corrupt(format!("column {col}: {e}")))
    }

    /// Its values, in the order of the columns.
    pub fn values(&self) -> &[Value] {
        &self.values
    }
}

/// A type a whole row decodes into (tuples, by position).
pub(crate) trait FromRow: Sized {
    /// The row decoded.
    fn from_row(row: &Row) -> Result<Self>;
}

impl FromRow for Row {
    fn from_row(row: &Row) -> Result<Self> {
        Ok(row.clone())
    }
}

macro_rules! tuple_from_row {
    ($($n:tt $t:ident),+) => {
        impl<$($t: FromValue),+> FromRow for ($($t,)+) {
            fn from_row(row: &Row) -> Result<Self> {
                Ok(($(row.try_get::<$t, usize>($n)?,)+))
            }
        }
    };
}

tuple_from_row!(0 A);
tuple_from_row!(0 A, 1 B);
tuple_from_row!(0 A, 1 B, 2 C);
tuple_from_row!(0 A, 1 B, 2 C, 3 D);
tuple_from_row!(0 A, 1 B, 2 C, 3 D, 4 E);
tuple_from_row!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
tuple_from_row!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
tuple_from_row!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);

// ----------------------------------------------------------------- queries

/// A statement and the values bound to it.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    sql: Cow<'static, str>,
    args: Vec<Value>,
}

/// A statement: `?N` and `?` placeholders bind in order.
pub(crate) fn query(sql: impl Into<Cow<'static, str>>) -> Query {
    Query { sql: sql.into(), args: Vec::new() }
}

/// A statement whose rows decode into `T` (a tuple).
pub(crate) fn query_as<T: FromRow>(sql: impl Into<Cow<'static, str>>) -> QueryAs<T> {
    QueryAs { query: query(sql), row: PhantomData }
}

/// A statement whose first column decodes into `T`.
pub(crate) fn query_scalar<T: FromValue>(sql: impl Into<Cow<'static, str>>) -> QueryScalar<T> {
    QueryScalar { query: query(sql), value: PhantomData }
}

/// What a statement that writes did.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Done {
    rows: u64,
}

impl Done {
    /// Rows it inserted, changed or deleted.
    pub fn rows_affected(&self) -> u64 {
        self.rows
    }
}

impl Query {
    /// Binds the next value.
    pub fn bind(mut self, v: impl Into<Value>) -> Self {
        self.args.push(v.into());
        self
    }

    /// Runs it; what it changed.
    pub fn execute(&self, conn: &Conn) -> Result<Done> {
        let rows = match &conn.inner {
            Driver::Sqlite(c) => {
                c.prepare_cached(&self.sql)?.execute(rusqlite::params_from_iter(self.args.iter()))? as u64
            }
            Driver::Postgres(c) => c.execute(&self.sql, &self.args)?,
        };
        Ok(Done { rows })
    }

    /// Every row it answers.
    pub fn fetch_all(&self, conn: &Conn) -> Result<Vec<Row>> {
        let mut out = Vec::new();
        self.each(conn, |row| {
            out.push(row);
            true
        })?;
        Ok(out)
    }

    /// Its first row, if any.
    pub fn fetch_optional(&self, conn: &Conn) -> Result<Option<Row>> {
        let mut out = None;
        self.each(conn, |row| {
            out = Some(row);
            false
        })?;
        Ok(out)
    }

    /// Its first row; an error when there is none.
    pub fn fetch_one(&self, conn: &Conn) -> Result<Row> {
        self.fetch_optional(conn)?.ok_or_else(|| StoreError::Corrupt(format!("no row from `{}`", self.sql)))
    }

    /// Calls `f` with each row until it answers false.
    pub fn each(&self, conn: &Conn, mut f: impl FnMut(Row) -> bool) -> Result<()> {
        let c = match &conn.inner {
            Driver::Sqlite(c) => c,
            Driver::Postgres(c) => return c.each(&self.sql, &self.args, |names, values| f(Row { names, values })),
        };
        let mut stmt = c.prepare_cached(&self.sql)?;
        let names: Arc<[String]> = stmt.column_names().map(str::to_string).collect();
        let width = names.len();
        let mut rows = stmt.query(rusqlite::params_from_iter(self.args.iter()))?;
        while let Some(row) = rows.next()? {
            let mut values = Vec::with_capacity(width);
            for i in 0..width {
                let value: ValueRef<'_> = row.get_ref(i)?;
                values.push(Value::read(value));
            }
            if !f(Row { names: Arc::clone(&names), values }) {
                break;
            }
        }
        Ok(())
    }
}

/// A statement as a store call of its own: `read_*` on a reader
/// connection, `write*` in the writer's next group commit (for statements
/// that write, `RETURNING` included).
impl Query {
    /// Every row, read on a reader connection.
    pub async fn read_all(self, db: &Db) -> Result<Vec<Row>> {
        db.read(move |c| self.fetch_all(c)).await
    }
    /// The first row if any, read on a reader connection.
    pub async fn read_optional(self, db: &Db) -> Result<Option<Row>> {
        db.read(move |c| self.fetch_optional(c)).await
    }
    /// The first row if any, in the writer's transaction.
    pub async fn write_optional(self, db: &Db) -> Result<Option<Row>> {
        db.write(move |c| self.fetch_optional(c)).await
    }
}

impl Query {
    /// Runs it in the writer's next group commit.
    pub async fn write(self, db: &Db) -> Result<Done> {
        db.write(move |c| self.execute(c)).await
    }
}

impl<T: FromRow + Send + 'static> QueryAs<T> {
    /// Every row, decoded, read on a reader connection.
    pub async fn read_all(self, db: &Db) -> Result<Vec<T>> {
        db.read(move |c| self.fetch_all(c)).await
    }
    /// The first row decoded if any, read on a reader connection.
    pub async fn read_optional(self, db: &Db) -> Result<Option<T>> {
        db.read(move |c| self.fetch_optional(c)).await
    }
}

impl<T: FromValue + Send + 'static> QueryScalar<T> {
    /// The first column of every row, read on a reader connection.
    pub async fn read_all(self, db: &Db) -> Result<Vec<T>> {
        db.read(move |c| self.fetch_all(c)).await
    }
    /// The first column of the first row if any, read on a reader connection.
    pub async fn read_optional(self, db: &Db) -> Result<Option<T>> {
        db.read(move |c| self.fetch_optional(c)).await
    }
    /// The first column of the first row, read on a reader connection.
    pub async fn read_one(self, db: &Db) -> Result<T> {
        db.read(move |c| self.fetch_one(c)).await
    }
    /// The first column of the first row if any, in the writer's transaction.
    pub async fn write_optional(self, db: &Db) -> Result<Option<T>> {
        db.write(move |c| self.fetch_optional(c)).await
    }
}

/// A [`Query`] whose rows decode into `T`.
#[derive(Debug, Clone)]
pub(crate) struct QueryAs<T> {
    query: Query,
    row: PhantomData<fn() -> T>,
}

impl<T: FromRow> QueryAs<T> {
    /// Binds the next value.
    pub fn bind(mut self, v: impl Into<Value>) -> Self {
        self.query = self.query.bind(v);
        self
    }
    /// Every row, decoded.
    pub fn fetch_all(&self, conn: &Conn) -> Result<Vec<T>> {
        self.query.fetch_all(conn)?.iter().map(T::from_row).collect()
    }
    /// The first row, decoded, if any.
    pub fn fetch_optional(&self, conn: &Conn) -> Result<Option<T>> {
        self.query.fetch_optional(conn)?.as_ref().map(T::from_row).transpose()
    }
    /// The first row, decoded; an error when there is none.
    pub fn fetch_one(&self, conn: &Conn) -> Result<T> {
        T::from_row(&self.query.fetch_one(conn)?)
    }
}

/// A [`Query`] whose first column decodes into `T`.
#[derive(Debug, Clone)]
pub(crate) struct QueryScalar<T> {
    query: Query,
    value: PhantomData<fn() -> T>,
}

impl<T: FromValue> QueryScalar<T> {
    /// Binds the next value.
    pub fn bind(mut self, v: impl Into<Value>) -> Self {
        self.query = self.query.bind(v);
        self
    }
    /// The first column of every row.
    pub fn fetch_all(&self, conn: &Conn) -> Result<Vec<T>> {
        self.query.fetch_all(conn)?.iter().map(|r| r.try_get(0usize)).collect()
    }
    /// The first column of the first row, if any.
    pub fn fetch_optional(&self, conn: &Conn) -> Result<Option<T>> {
        self.query.fetch_optional(conn)?.map(|r| r.try_get(0usize)).transpose()
    }
    /// The first column of the first row; an error when there is none.
    pub fn fetch_one(&self, conn: &Conn) -> Result<T> {
        self.query.fetch_one(conn)?.try_get(0usize)
    }
}

/// A statement built piece by piece: SQL pushed as text, values pushed as
/// placeholders (`?`) bound in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct QueryBuilder {
    sql: String,
    args: Vec<Value>,
}

impl QueryBuilder {
    /// A statement starting with `sql`.
    pub fn new(sql: impl Into<String>) -> Self {
        QueryBuilder { sql: sql.into(), args: Vec::new() }
    }
    /// Appends SQL text.
    pub fn push(&mut self, sql: impl std::fmt::Display) -> &mut Self {
        use std::fmt::Write;
        let _ = write!(self.sql, "{sql}");
        self
    }
    /// Appends a placeholder bound to `v`.
    pub fn push_bind(&mut self, v: impl Into<Value>) -> &mut Self {
        self.sql.push('?');
        self.args.push(v.into());
        self
    }
    /// Appends `items` separated by `sep`, each written by `f`.
    pub fn push_list<I>(&mut self, items: I, sep: &str, mut f: impl FnMut(&mut Self, I::Item)) -> &mut Self
    where
        I: IntoIterator,
    {
        for (n, item) in items.into_iter().enumerate() {
            if n > 0 {
                self.sql.push_str(sep);
            }
            f(self, item);
        }
        self
    }
    /// The statement.
    pub fn build(&self) -> Query {
        Query { sql: Cow::Owned(self.sql.clone()), args: self.args.clone() }
    }
    /// The statement, its first column decoded into `T`.
    pub fn build_query_scalar<T: FromValue>(&self) -> QueryScalar<T> {
        QueryScalar { query: self.build(), value: PhantomData }
    }
}

// ------------------------------------------------------------- connections

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

/// Where the database is: a SQLite file, or a PostgreSQL server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite database file (created when missing).
    File(PathBuf),
    /// A PostgreSQL database, as a `postgres://` URL.
    Postgres(String),
}

impl Location {
    /// A `postgres://` or `postgresql://` URL names a PostgreSQL database;
    /// anything else is a SQLite file's path (`sqlite://` taken off).
    pub fn parse(url: &str) -> Location {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Location::Postgres(url.to_string())
        } else {
            Location::File(PathBuf::from(url.strip_prefix("sqlite://").unwrap_or(url)))
        }
    }
}

impl std::fmt::Display for Location {
    /// The file's path, or the URL without its password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::File(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => match (url.find("://"), url.rfind('@')) {
                (Some(scheme), Some(at)) if at > scheme => {
                    let user = &url[scheme + 3..at];
                    let user = user.split(':').next().unwrap_or_default();
                    write!(f, "{}{user}{}", &url[..scheme + 3], &url[at..])
                }
                _ => f.write_str(url),
            },
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

    /// Whether the connection is gone (a PostgreSQL server closed it).
    pub fn is_closed(&self) -> bool {
        match &self.inner {
            Driver::Sqlite(_) => false,
            Driver::Postgres(c) => c.is_closed(),
        }
    }

    /// Whether this is a PostgreSQL connection.
    pub fn is_postgres(&self) -> bool {
        matches!(self.inner, Driver::Postgres(_))
    }

    /// Begins the transaction of a write: `BEGIN IMMEDIATE` on SQLite, so
    /// it holds the write lock from the start.
    pub fn begin_write(&self) -> Result<()> {
        self.batch(if self.is_postgres() { "BEGIN" } else { "BEGIN IMMEDIATE" })
    }

    /// Runs `f` in a transaction of its own (`BEGIN IMMEDIATE` on SQLite
    /// when it writes; one snapshot on PostgreSQL when it reads): committed
    /// when `f` succeeds, rolled back when it fails. Not for the writer's closures, which already run inside one.
    pub fn transaction<T>(&self, writes: bool, f: impl FnOnce(&Conn) -> Result<T>) -> Result<T> {
        match (writes, self.is_postgres()) {
            (true, _) => self.begin_write()?,
            // One snapshot for the whole read, as SQLite's read transaction is.
            (false, true) => self.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?,
            (false, false) => self.batch("BEGIN")?,
        }
        match f(self) {
            Ok(v) => match self.batch("COMMIT") {
                Ok(()) => Ok(v),
                Err(e) => {
                    let _ = self.batch("ROLLBACK");
                    Err(e)
                }
            },
            Err(e) => {
                let _ = self.batch("ROLLBACK");
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

    /// Whether a transaction is open.
    pub fn in_transaction(&self) -> bool {
        match &self.inner {
            Driver::Sqlite(c) => !c.is_autocommit(),
            Driver::Postgres(c) => c.in_transaction(),
        }
    }

    fn open(at: &Location, synchronous: Synchronous, read_only: bool) -> Result<Conn> {
        match at {
            Location::File(path) => Conn::open_file(path, synchronous, read_only),
            Location::Postgres(url) => Ok(Conn { inner: Driver::Postgres(Box::new(postgres::PgConn::connect(url)?)) }),
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
        let conn = Conn { inner: Driver::Sqlite(inner) };
        if !read_only {
            conn.batch(&format!(
                "PRAGMA journal_mode = WAL; PRAGMA journal_size_limit = {}; PRAGMA wal_autocheckpoint = 0;",
                2 * crate::WAL_HARD_LIMIT
            ))?;
        }
        // Set on readers too: the setting is per connection, and any
        // connection that ends up writing or checkpointing must honour it.
        conn.batch(&format!(
            "PRAGMA synchronous = {}; PRAGMA foreign_keys = ON; PRAGMA cache_size = -16000; \
             PRAGMA temp_store = MEMORY;",
            synchronous.as_str().to_ascii_uppercase()
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

/// Process-wide SQLite settings, applied once before the first connection:
/// no memory statistics, which SQLite otherwise keeps under a global mutex
/// taken on every allocation of every connection.
fn configure_sqlite() {
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

// ---------------------------------------------------------------- the pool

/// A finished write's reply, given the outcome of its batch's COMMIT.
type Finish = Box<dyn FnOnce(Result<(), &StoreError>) + Send>;
/// A write: runs in the batch's transaction; `Err(())` when it failed (its
/// caller has been told). Given an error instead of a connection, it tells
/// its caller that error without running.
type WriteFn = Box<dyn FnOnce(Result<&Conn, &StoreError>) -> Result<Finish, ()> + Send>;

enum Job {
    /// Runs in the next batch's transaction.
    Write(WriteFn),
    /// Runs between two transactions.
    Outside(Box<dyn FnOnce(&Conn) + Send>),
    /// Runs last (outside any transaction) after what is queued before it,
    /// then stops the writer.
    Close(Box<dyn FnOnce(&Conn) + Send>, oneshot::Sender<()>),
}

/// The connections and the writer's thread. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Db {
    readers: Arc<Mutex<Vec<Conn>>>,
    permits: Arc<Semaphore>,
    writer: mpsc::Sender<Job>,
    apart: Arc<Mutex<Option<Conn>>>,
    closed: Arc<AtomicBool>,
    /// Set once [`Db::close`] has finished.
    shut: Arc<tokio::sync::OnceCell<()>>,
    at: Arc<Location>,
    synchronous: Synchronous,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("at", &self.at.to_string()).finish_non_exhaustive()
    }
}

fn stopped() -> StoreError {
    StoreError::Corrupt("the store is closed".into())
}

/// The error a write's caller hears when its batch failed as a whole.
fn failed(e: &StoreError) -> StoreError {
    StoreError::Database(DatabaseError::new(e.to_string().into(), false))
}

impl Db {
    /// Opens the database file (creating it), runs `setup` on the writer's
    /// connection before anything else, and starts the writer's thread.
    /// Every SQLite connection it opens, the writer's, the readers' and the
    /// one apart, syncs commits as `synchronous` says.
    ///
    /// `before_commit` runs at the end of every group commit, after its
    /// writes and outside their savepoints, if any (work they leave for once
    /// per transaction); should it fail, the whole transaction fails.
    pub async fn open(
        at: Location,
        synchronous: Synchronous,
        setup: impl FnOnce(&Conn) -> Result<()> + Send + 'static,
        before_commit: fn(&Conn) -> Result<()>,
    ) -> Result<Db> {
        configure_sqlite();
        let at = Arc::new(at);
        let opened = Arc::clone(&at);
        let writer = tokio::task::spawn_blocking(move || {
            let conn = Conn::open(&opened, synchronous, false)?;
            setup(&conn)?;
            Ok::<_, StoreError>(conn)
        })
        .await
        .map_err(|e| StoreError::Corrupt(format!("opening the database: {e}")))??;
        let (queue, jobs) = mpsc::channel(1024);
        std::thread::Builder::new()
            .name("quire-writer".into())
            .spawn({
                let at = Arc::clone(&at);
                move || write_loop(writer, jobs, before_commit, &at, synchronous)
            })
            .map_err(|e| StoreError::Corrupt(format!("starting the writer: {e}")))?;
        Ok(Db {
            readers: Arc::default(),
            permits: Arc::new(Semaphore::new(READERS)),
            writer: queue,
            apart: Arc::default(),
            closed: Arc::default(),
            shut: Arc::default(),
            at,
            synchronous,
        })
    }

    /// Where the database is.
    pub fn location(&self) -> &Location {
        &self.at
    }

    /// Whether the database is PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        matches!(*self.at, Location::Postgres(_))
    }

    /// The SQLite database file; none on PostgreSQL.
    pub fn file(&self) -> Option<&Path> {
        match &*self.at {
            Location::File(path) => Some(path),
            Location::Postgres(_) => None,
        }
    }

    /// Whether [`Db::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Runs `f` on a reader connection (one hand-off).
    pub async fn read<T: Send + 'static>(&self, f: impl FnOnce(&Conn) -> Result<T> + Send + 'static) -> Result<T> {
        let permit = Arc::clone(&self.permits).acquire_owned().await.map_err(|_| stopped())?;
        if self.is_closed() {
            return Err(stopped());
        }
        let readers = Arc::clone(&self.readers);
        let (at, synchronous) = (Arc::clone(&self.at), self.synchronous);
        // The permit goes with the closure: a caller that stops waiting
        // does not free a connection still in use.
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let conn = readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let conn = match conn {
                Some(c) => c,
                None => Conn::open(&at, synchronous, true)?,
            };
            let out = f(&conn);
            give_back(&readers, conn);
            out
        })
        .await
        .map_err(|e| StoreError::Corrupt(format!("a read failed: {e}")))?
    }

    /// Runs `f`, a short read (a few indexed lookups, as public delivery
    /// makes), with no hand-off at all: on SQLite, on the calling thread
    /// with a free reader connection, since such a read costs less than
    /// waking a thread of the blocking pool and waiting for it to answer.
    /// On PostgreSQL, where every statement is a round trip, or when no
    /// reader connection is free, it runs as [`Db::read`] does. Only for
    /// reads whose cost grows no faster than their answer's: the answer is
    /// serialized on the same thread afterwards anyway.
    pub async fn read_short<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Conn) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        if self.is_postgres() || self.is_closed() {
            return self.read(f).await;
        }
        // Answered at once, it would never let a loop of reads yield: it
        // counts against the task's budget as I/O does.
        tokio::task::consume_budget().await;
        let Ok(_permit) = Arc::clone(&self.permits).try_acquire_owned() else { return self.read(f).await };
        let Some(conn) = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop() else {
            drop(_permit);
            return self.read(f).await;
        };
        let out = f(&conn);
        give_back(&self.readers, conn);
        out
    }

    /// Runs `f` in the writer's next group commit (one hand-off) and
    /// answers its value once the transaction committed.
    pub async fn write<T: Send + 'static>(&self, f: impl FnOnce(&Conn) -> Result<T> + Send + 'static) -> Result<T> {
        self.queue(f).await?.done().await
    }

    /// Queues `f` for the writer and answers at once; the answer gives its
    /// value once its transaction committed. Writes run in the order they
    /// were queued.
    pub async fn queue<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Conn) -> Result<T> + Send + 'static,
    ) -> Result<Queued<T>> {
        if self.is_closed() {
            return Err(stopped());
        }
        let (reply, answer) = oneshot::channel::<Result<T>>();
        let job: WriteFn = Box::new(move |conn| match conn.map_err(failed).and_then(f) {
            Ok(value) => Ok(Box::new(move |committed: Result<(), &StoreError>| {
                let _ = reply.send(committed.map(|()| value).map_err(failed));
            })),
            Err(e) => {
                let _ = reply.send(Err(e));
                Err(())
            }
        });
        self.writer.send(Job::Write(job)).await.map_err(|_| stopped())?;
        Ok(Queued(answer))
    }

    /// Runs `f` on the writer's connection between two transactions.
    pub async fn outside<T: Send + 'static>(&self, f: impl FnOnce(&Conn) -> T + Send + 'static) -> Result<T> {
        if self.is_closed() {
            return Err(stopped());
        }
        let (reply, answer) = oneshot::channel();
        let job = Job::Outside(Box::new(move |conn| {
            let _ = reply.send(f(conn));
        }));
        self.writer.send(job).await.map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())
    }

    /// Runs `f` on a connection of its own, outside the pool and the
    /// writer's thread (background checkpoints), one call at a time.
    pub async fn apart<T: Send + 'static>(&self, f: impl FnOnce(&Conn) -> Result<T> + Send + 'static) -> Result<T> {
        let (at, conn, closed) = (Arc::clone(&self.at), Arc::clone(&self.apart), Arc::clone(&self.closed));
        let synchronous = self.synchronous;
        tokio::task::spawn_blocking(move || {
            let mut slot = conn.lock().unwrap_or_else(|p| p.into_inner());
            if closed.load(Ordering::Acquire) {
                return Err(stopped());
            }
            // A connection the server closed (a restart, an idle cut) is
            // replaced, as the writer's and the readers' are.
            if slot.as_ref().is_none_or(Conn::is_closed) {
                *slot = Some(Conn::open(&at, synchronous, false)?);
            }
            f(slot.as_ref().expect("opened above"))
        })
        .await
        .map_err(|e| StoreError::Corrupt(format!("a maintenance task failed: {e}")))?
    }

    /// Stops the writer once what is queued has committed, then runs
    /// `last` on its connection (outside any transaction) and closes every
    /// connection. Reads and writes after this fail.
    ///
    /// Every caller returns once the first call finished closing.
    pub async fn close(&self, last: impl FnOnce(&Conn) + Send + 'static) {
        self.shut.get_or_init(|| self.shut_down(last)).await;
    }

    async fn shut_down(&self, last: impl FnOnce(&Conn) + Send + 'static) {
        self.closed.store(true, Ordering::Release);
        // Waits for a call in progress on the connection apart, then closes
        // it; later calls are refused (the flag is set).
        let apart = Arc::clone(&self.apart);
        let _ = tokio::task::spawn_blocking(move || apart.lock().unwrap_or_else(|p| p.into_inner()).take()).await;
        // Waits for reads in progress and drops their connections, so the
        // last task (a TRUNCATE checkpoint) waits for no reader.
        let all = self.permits.acquire_many(READERS as u32).await;
        self.readers.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.permits.close();
        drop(all);
        let (done, stopped) = oneshot::channel();
        if self.writer.send(Job::Close(Box::new(last), done)).await.is_ok() {
            let _ = stopped.await;
        }
    }
}

/// Returns a reader's connection to the pool after a read: a transaction
/// the read left open is rolled back, and a connection the server closed
/// is dropped (the next read opens another).
fn give_back(readers: &Mutex<Vec<Conn>>, conn: Conn) {
    if conn.in_transaction() {
        let _ = conn.batch("ROLLBACK");
    }
    if !conn.is_closed() {
        readers.lock().unwrap_or_else(|p| p.into_inner()).push(conn);
    }
}

/// A write in the writer's queue.
pub(crate) struct Queued<T>(oneshot::Receiver<Result<T>>);

impl<T> std::fmt::Debug for Queued<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Queued")
    }
}

impl<T> Queued<T> {
    /// The write's value once its transaction committed (or its failure).
    pub async fn done(self) -> Result<T> {
        self.0
            .await
            .map_err(|_| StoreError::Corrupt("the write did not finish: the writer stopped or it panicked".into()))?
    }
}

/// The writer's thread: takes the queued writes in batches, one transaction
/// each; ends on [`Job::Close`] or when every handle is gone.
/// A PostgreSQL connection the server closed (a restart, a network cut) is
/// opened again before the next batch; the batch it failed has told its
/// callers.
fn write_loop(
    mut conn: Conn,
    mut jobs: mpsc::Receiver<Job>,
    before_commit: fn(&Conn) -> Result<()>,
    at: &Location,
    synchronous: Synchronous,
) {
    let mut next: Option<Job> = None;
    loop {
        let job = match next.take() {
            Some(job) => job,
            None => match jobs.blocking_recv() {
                Some(job) => job,
                None => return,
            },
        };
        match job {
            Job::Outside(f) => outside_transaction(&conn, f),
            Job::Close(last, done) => {
                outside_transaction(&conn, last);
                drop(conn);
                let _ = done.send(());
                return;
            }
            Job::Write(first) => {
                let mut batch = vec![first];
                let most = if conn.is_postgres() { MAX_BATCH_POSTGRES } else { MAX_BATCH };
                while batch.len() < most {
                    match jobs.try_recv() {
                        Ok(Job::Write(f)) => batch.push(f),
                        Ok(other) => {
                            next = Some(other);
                            break;
                        }
                        Err(_) => break,
                    }
                }
                if conn.is_closed() {
                    match Conn::open(at, synchronous, false) {
                        Ok(fresh) => conn = fresh,
                        Err(e) => tracing::error!(error = %e, "the writer could not connect to the database again"),
                    }
                }
                run_batch(&conn, batch, before_commit);
            }
        }
    }
}

/// Runs `f` on the writer's connection between transactions: a panic is
/// caught and a transaction left open rolled back, so the writer goes on.
fn outside_transaction(conn: &Conn, f: Box<dyn FnOnce(&Conn) + Send>) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(conn))).is_err() {
        tracing::error!("a task on the writer's connection panicked");
    }
    if conn.in_transaction() {
        let _ = conn.batch("ROLLBACK");
    }
}

/// Rolls the whole transaction back and tells the writes it held that they
/// failed.
fn abandon(conn: &Conn, finished: &mut Vec<Finish>) {
    let _ = conn.batch("ROLLBACK");
    let e = StoreError::Corrupt("a write could not be rolled back alone; the transaction was rolled back".into());
    finished.drain(..).for_each(|f| f(Err(&e)));
}

/// Runs writes in one transaction, each in a savepoint (unless it is alone
/// in it), and tells each caller its outcome once the transaction ended.
///
/// Should SQLite end the transaction by itself (an I/O error, a full disk),
/// the writes it held hear that they failed and the rest go on in a new one:
/// no caller hears success for a write that is not in the database.
fn run_batch(conn: &Conn, batch: Vec<WriteFn>, before_commit: fn(&Conn) -> Result<()>) {
    let mut finished: Vec<Finish> = Vec::with_capacity(batch.len());
    let mut open = false;
    // A write alone in its transaction (always so on PostgreSQL) needs no
    // savepoint: rolling the transaction back undoes it alone. Two round
    // trips fewer per write there.
    let alone = batch.len() == 1;
    for f in batch {
        if !open {
            if let Err(e) = conn.begin_write() {
                tracing::error!(error = %e, "the writer could not begin a transaction");
                let _ = f(Err(&e));
                continue;
            }
            open = true;
        }
        if alone {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(Ok(conn)))) {
                Ok(Ok(finish)) => finished.push(finish),
                Ok(Err(())) | Err(_) => {
                    let _ = conn.batch("ROLLBACK");
                    return;
                }
            }
        } else if let Err(e) = conn.batch("SAVEPOINT w") {
            let _ = f(Err(&e));
        } else {
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(Ok(conn))));
            match ran {
                Ok(Ok(finish)) => match conn.batch("RELEASE SAVEPOINT w") {
                    Ok(()) => finished.push(finish),
                    Err(e) => {
                        let undone = conn.batch("ROLLBACK TO SAVEPOINT w; RELEASE SAVEPOINT w").is_ok();
                        finish(Err(&e));
                        if !undone {
                            abandon(conn, &mut finished);
                        }
                    }
                },
                Ok(Err(())) | Err(_) => {
                    if conn.batch("ROLLBACK TO SAVEPOINT w; RELEASE SAVEPOINT w").is_err() {
                        // What it wrote cannot be told apart from the others':
                        // none of it is committed.
                        tracing::error!("the writer could not roll back a failed write");
                        abandon(conn, &mut finished);
                    }
                }
            }
        }
        if !conn.in_transaction() {
            let e = StoreError::Corrupt("the database rolled the transaction back".into());
            tracing::error!("the database ended the writer's transaction by itself");
            finished.drain(..).for_each(|f| f(Err(&e)));
            open = false;
        }
    }
    if !open {
        return;
    }
    let committed = if finished.is_empty() {
        Ok(())
    } else {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| before_commit(conn)))
            .unwrap_or_else(|_| Err(StoreError::Corrupt("the work before the commit panicked".into())))
            .inspect_err(|e| tracing::error!(error = %e, "the work before the commit failed; the batch is rolled back"))
    };
    match committed.and_then(|()| conn.batch("COMMIT")) {
        Ok(()) => finished.into_iter().for_each(|f| f(Ok(()))),
        Err(e) => {
            let _ = conn.batch("ROLLBACK");
            finished.into_iter().for_each(|f| f(Err(&e)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn scratch() -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(
            Location::File(dir.path().join("t.db")),
            Synchronous::default(),
            |c| c.batch("CREATE TABLE t (v INTEGER UNIQUE, at TEXT)"),
            |_| Ok(()),
        )
        .await
        .unwrap();
        (dir, db)
    }

    fn insert(v: i64, fail_after: bool) -> impl FnOnce(&Conn) -> Result<i64> + Send + 'static {
        move |c| {
            query("INSERT INTO t (v) VALUES (?1)").bind(v).execute(c)?;
            if fail_after {
                return Err(StoreError::invalid("v", "refused after writing"));
            }
            Ok(v)
        }
    }

    #[tokio::test]
    async fn a_failed_write_rolls_back_only_itself() {
        let (_dir, db) = scratch().await;
        // Queued together, so they share one transaction.
        let a = db.queue(insert(1, false)).await.unwrap();
        let b = db.queue(insert(2, true)).await.unwrap();
        let c = db.queue(insert(3, false)).await.unwrap();
        let d = db.queue(insert(1, false)).await.unwrap(); // taken: unique
        assert_eq!(a.done().await.unwrap(), 1);
        assert!(b.done().await.unwrap_err().to_string().contains("refused after writing"));
        assert_eq!(c.done().await.unwrap(), 3);
        assert!(d.done().await.unwrap_err().is_unique_violation());
        let values = db.read(|c| query_scalar::<i64>("SELECT v FROM t ORDER BY v").fetch_all(c)).await.unwrap();
        assert_eq!(values, [1, 3]);
    }

    #[tokio::test]
    async fn a_write_alone_in_its_transaction_that_fails_leaves_nothing() {
        let (_dir, db) = scratch().await;
        // Each awaited before the next is queued: each alone in its
        // transaction, which has no savepoint then.
        assert_eq!(db.write(insert(1, false)).await.unwrap(), 1);
        assert!(db.write(insert(2, true)).await.unwrap_err().to_string().contains("refused after writing"));
        let panicking = db.write(|c: &Conn| -> Result<()> {
            query("INSERT INTO t (v) VALUES (3)").execute(c)?;
            panic!("a bug in a write");
        });
        assert!(panicking.await.is_err());
        assert!(db.write(insert(1, false)).await.unwrap_err().is_unique_violation());
        assert_eq!(db.write(insert(4, false)).await.unwrap(), 4);
        let values = db.read(|c| query_scalar::<i64>("SELECT v FROM t ORDER BY v").fetch_all(c)).await.unwrap();
        assert_eq!(values, [1, 4]);
    }

    /// A write that swallowed a failed statement: SQLite undid that
    /// statement alone, so the rest commits; PostgreSQL aborted the whole
    /// transaction and would answer COMMIT by rolling back without an error,
    /// so the write hears that nothing was committed. On the test server
    /// when `QUIRE_TEST_DATABASE_URL` is set.
    #[tokio::test]
    async fn a_write_that_swallowed_a_failed_statement_never_hears_a_false_success() {
        let dir = tempfile::tempdir().unwrap();
        let at = crate::testing::location(dir.path()).await.unwrap();
        let postgres = matches!(at, Location::Postgres(_));
        let db =
            Db::open(at, Synchronous::default(), |c| c.batch("CREATE TABLE t (v INTEGER UNIQUE, at TEXT)"), |_| Ok(()))
                .await
                .unwrap();
        db.write(insert(1, false)).await.unwrap();
        let swallowed = db
            .write(|c: &Conn| -> Result<i64> {
                let _ = query("INSERT INTO t (v) VALUES (1)").execute(c); // taken: unique
                let _ = query("INSERT INTO t (v) VALUES (2)").execute(c);
                Ok(2)
            })
            .await;
        let values = db.read(|c| query_scalar::<i64>("SELECT v FROM t ORDER BY v").fetch_all(c)).await.unwrap();
        if postgres {
            let e = swallowed.unwrap_err().to_string();
            assert!(e.contains("nothing was committed"), "{e}");
            assert_eq!(values, [1]);
        } else {
            assert_eq!(swallowed.unwrap(), 2);
            assert_eq!(values, [1, 2]);
        }
        // The writer goes on.
        assert_eq!(db.write(insert(3, false)).await.unwrap(), 3);
    }

    #[tokio::test]
    async fn a_panicking_write_fails_alone_and_the_writer_goes_on() {
        let (_dir, db) = scratch().await;
        let bad = db.queue(|c: &Conn| -> Result<()> {
            query("INSERT INTO t (v) VALUES (7)").execute(c)?;
            panic!("a bug in a write");
        });
        let bad = bad.await.unwrap();
        let good = db.write(insert(8, false)).await.unwrap();
        assert_eq!(good, 8);
        assert!(bad.done().await.is_err());
        let values = db.read(|c| query_scalar::<i64>("SELECT v FROM t").fetch_all(c)).await.unwrap();
        assert_eq!(values, [8]);
    }

    #[tokio::test]
    async fn values_read_back_as_written() {
        let (_dir, db) = scratch().await;
        let at: DateTime<Utc> = "2026-11-25T07:00:00.123456Z".parse().unwrap();
        db.write(move |c| query("INSERT INTO t (v, at) VALUES (?1, ?2)").bind(5).bind(at).execute(c).map(drop))
            .await
            .unwrap();
        let (text, back): (String, DateTime<Utc>) =
            db.read(|c| query_as("SELECT at, at FROM t").fetch_one(c)).await.unwrap();
        // The text earlier versions wrote, so stored times compare as before.
        assert_eq!(text, "2026-11-25T07:00:00.123456+00:00");
        assert_eq!(back, at);
        let naive: DateTime<Utc> =
            db.read(|c| query_scalar("SELECT '2026-11-25 07:00:00'").fetch_one(c)).await.unwrap();
        assert_eq!(naive, "2026-11-25T07:00:00Z".parse::<DateTime<Utc>>().unwrap());
        let err = db.read(|c| query_scalar::<i64>("SELECT 'x'").fetch_one(c)).await.unwrap_err();
        assert!(err.to_string().contains("text where an integer was expected"), "{err}");
    }

    #[tokio::test]
    async fn a_cached_statement_is_not_prepared_again_for_each_bound_value() {
        let (_dir, db) = scratch().await;
        db.outside(|c| c.batch("CREATE TABLE s (k INTEGER, at TEXT); CREATE INDEX s_k_at ON s (k, at)"))
            .await
            .unwrap()
            .unwrap();
        for k in 0..20 {
            db.write(move |c| query("INSERT INTO s (k, at) VALUES (?1, 'x')").bind(k).execute(c).map(drop))
                .await
                .unwrap();
        }
        let reprepared = db
            .read(|c| {
                let Driver::Sqlite(conn) = &c.inner else { unreachable!() };
                // The shape SQLite otherwise marks to plan again on every
                // new binding (an equality, then an ORDER BY on the index).
                let sql = "SELECT at FROM s WHERE k = ?1 ORDER BY at";
                for k in 0..20 {
                    query_scalar::<String>(sql).bind(k).fetch_all(c)?;
                }
                Ok(conn.prepare_cached(sql)?.get_status(rusqlite::StatementStatus::RePrepare))
            })
            .await
            .unwrap();
        assert_eq!(reprepared, 0);
    }

    #[tokio::test]
    async fn a_short_read_runs_on_the_calling_thread_once_a_reader_is_pooled() {
        let (_dir, db) = scratch().await;
        db.read(|c| query_scalar::<i64>("SELECT 1").fetch_one(c)).await.unwrap();
        let caller = std::thread::current().id();
        let (on, one) = db
            .read_short(|c| Ok((std::thread::current().id(), query_scalar::<i64>("SELECT 1").fetch_one(c)?)))
            .await
            .unwrap();
        assert_eq!((on, one), (caller, 1));
        db.close(|_| {}).await;
        assert!(db.read_short(|c| query_scalar::<i64>("SELECT 1").fetch_one(c)).await.is_err());
    }

    #[tokio::test]
    async fn nothing_runs_after_close() {
        let (_dir, db) = scratch().await;
        db.write(insert(1, false)).await.unwrap();
        db.close(|_| {}).await;
        assert!(db.write(insert(2, false)).await.is_err());
        assert!(db.read(|c| query_scalar::<i64>("SELECT 1").fetch_one(c)).await.is_err());
    }

    #[tokio::test]
    async fn writes_of_a_transaction_the_database_rolled_back_hear_that_they_failed() {
        let (_dir, db) = scratch().await;
        // RAISE(ROLLBACK) ends the whole transaction, not only the write.
        db.outside(|c| {
            c.batch("CREATE TRIGGER undo AFTER INSERT ON t WHEN new.v = 99 BEGIN SELECT RAISE(ROLLBACK, 'no'); END")
        })
        .await
        .unwrap()
        .unwrap();
        // The writer waits on the gate while the three are queued, so they
        // share the next transaction.
        let (open, gate) = std::sync::mpsc::channel::<()>();
        let (entered, inside) = oneshot::channel::<()>();
        let first = db
            .queue(move |_| {
                let _ = entered.send(());
                gate.recv().map_err(|_| stopped())
            })
            .await
            .unwrap();
        inside.await.unwrap();
        let a = db.queue(insert(1, false)).await.unwrap();
        let b = db.queue(insert(99, false)).await.unwrap();
        let c = db.queue(insert(3, false)).await.unwrap();
        open.send(()).unwrap();
        first.done().await.unwrap();
        assert!(a.done().await.is_err(), "its insert was rolled back with the transaction");
        assert!(b.done().await.is_err());
        assert_eq!(c.done().await.unwrap(), 3, "the next write goes on in a new transaction");
        let values = db.read(|c| query_scalar::<i64>("SELECT v FROM t").fetch_all(c)).await.unwrap();
        assert_eq!(values, [3]);
        // A task between transactions that panics or leaves one open does
        // not stop the writer.
        let _ = db
            .outside(|c| {
                c.batch("BEGIN").unwrap();
                panic!("a bug in a task");
            })
            .await;
        assert_eq!(db.write(insert(4, false)).await.unwrap(), 4);
    }

    #[tokio::test]
    async fn close_runs_its_last_task_after_the_queued_writes() {
        let (_dir, db) = scratch().await;
        let queued = db.queue(insert(1, false)).await.unwrap();
        let (seen, saw) = oneshot::channel();
        let ran = Arc::new(AtomicBool::new(false));
        let first = db.close({
            let ran = Arc::clone(&ran);
            move |c| {
                std::thread::sleep(Duration::from_millis(50));
                let _ = seen.send(query_scalar::<i64>("SELECT count(*) FROM t").fetch_one(c).unwrap());
                ran.store(true, Ordering::Release);
            }
        });
        // a second close at the same time returns once the first finished
        let second = async {
            tokio::task::yield_now().await;
            db.close(|_| panic!("only the first close's last task runs")).await;
            assert!(ran.load(Ordering::Acquire), "the second close returned before the first finished");
        };
        tokio::join!(first, second);
        assert_eq!(queued.done().await.unwrap(), 1);
        assert_eq!(saw.await.unwrap(), 1, "the last task saw the write queued before close");
        assert!(db.apart(|c| query_scalar::<i64>("SELECT 1").fetch_one(c)).await.is_err());
    }
}
