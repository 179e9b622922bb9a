//! Statements: SQL with its bound values, run on a connection inside a
//! store call's closure, or as a store call of its own.

use super::connection::Conn;
use super::pool::Db;
use super::row::{FromRow, Row, RowRef};
use super::value::{FromValue, Value};
use crate::{Result, Scope, StoreError};
use std::borrow::Cow;
use std::marker::PhantomData;

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

/// The row `id` of `table` in `scope`, archived or not (`table` is one of
/// the store's own names, never a caller's).
pub(crate) fn row_in(table: &str, scope: &Scope, id: &str) -> Query {
    query(format!("SELECT * FROM {table} WHERE id = ?1 AND site_id = ?2 AND env = ?3")).bind(id).bind_scope(scope)
}

/// A statement whose rows decode into `T` (a tuple).
pub(crate) fn query_as<T: FromRow>(sql: impl Into<Cow<'static, str>>) -> QueryAs<T> {
    Typed { query: query(sql), decode: PhantomData }
}

/// A statement whose first column decodes into `T`.
pub(crate) fn query_scalar<T: FromValue>(sql: impl Into<Cow<'static, str>>) -> QueryScalar<T> {
    Typed { query: query(sql), decode: PhantomData }
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

    /// Binds the next two values: the scope's site id, then its environment.
    pub fn bind_scope(self, scope: &Scope) -> Self {
        self.bind(&scope.site_id).bind(&scope.env)
    }

    /// Runs it; what it changed.
    pub fn execute(&self, conn: &Conn) -> Result<Done> {
        Ok(Done { rows: conn.execute(&self.sql, &self.args)? })
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
    pub fn each(&self, conn: &Conn, f: impl FnMut(Row) -> bool) -> Result<()> {
        conn.each(&self.sql, &self.args, f)
    }

    /// Calls `f` with each row, its values borrowed, until it answers
    /// false (see [`Conn::each_ref`]).
    pub fn each_ref(&self, conn: &Conn, f: impl FnMut(RowRef<'_>) -> Result<bool>) -> Result<()> {
        conn.each_ref(&self.sql, &self.args, f)
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
    /// Every row, in the writer's transaction (`RETURNING`).
    pub async fn write_all(self, db: &Db) -> Result<Vec<Row>> {
        db.write(move |c| self.fetch_all(c)).await
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

/// How the rows of a [`Typed`] statement decode.
pub(crate) trait Decode {
    /// What a row decodes into.
    type Out;
    /// Decodes one row.
    fn decode(row: &Row) -> Result<Self::Out>;
}

/// Rows decode whole into `T` (a tuple).
pub(crate) struct Rows<T>(PhantomData<fn() -> T>);

impl<T: FromRow> Decode for Rows<T> {
    type Out = T;
    fn decode(row: &Row) -> Result<T> {
        T::from_row(row)
    }
}

/// A row's first column decodes into `T`.
pub(crate) struct First<T>(PhantomData<fn() -> T>);

impl<T: FromValue> Decode for First<T> {
    type Out = T;
    fn decode(row: &Row) -> Result<T> {
        row.try_get(0usize)
    }
}

/// A [`Query`] whose rows decode as `D` says.
#[derive(Debug)]
pub(crate) struct Typed<D> {
    query: Query,
    decode: PhantomData<fn() -> D>,
}

/// A [`Query`] whose rows decode into `T`.
pub(crate) type QueryAs<T> = Typed<Rows<T>>;

/// A [`Query`] whose first column decodes into `T`.
pub(crate) type QueryScalar<T> = Typed<First<T>>;

impl<D: Decode> Typed<D> {
    /// Binds the next value.
    pub fn bind(mut self, v: impl Into<Value>) -> Self {
        self.query = self.query.bind(v);
        self
    }
    /// Binds the scope's site id, then its environment.
    pub fn bind_scope(mut self, scope: &Scope) -> Self {
        self.query = self.query.bind_scope(scope);
        self
    }
    /// Every row, decoded.
    pub fn fetch_all(&self, conn: &Conn) -> Result<Vec<D::Out>> {
        self.query.fetch_all(conn)?.iter().map(D::decode).collect()
    }
    /// The first row, decoded, if any.
    pub fn fetch_optional(&self, conn: &Conn) -> Result<Option<D::Out>> {
        self.query.fetch_optional(conn)?.as_ref().map(D::decode).transpose()
    }
    /// The first row, decoded; an error when there is none.
    pub fn fetch_one(&self, conn: &Conn) -> Result<D::Out> {
        D::decode(&self.query.fetch_one(conn)?)
    }
}

/// A typed statement as a store call of its own (see [`Query`]'s).
impl<D: Decode + 'static> Typed<D>
where
    D::Out: Send + 'static,
{
    /// Every row, decoded, read on a reader connection.
    pub async fn read_all(self, db: &Db) -> Result<Vec<D::Out>> {
        db.read(move |c| self.fetch_all(c)).await
    }
    /// The first row decoded if any, read on a reader connection.
    pub async fn read_optional(self, db: &Db) -> Result<Option<D::Out>> {
        db.read(move |c| self.fetch_optional(c)).await
    }
    /// The first row decoded, read on a reader connection.
    pub async fn read_one(self, db: &Db) -> Result<D::Out> {
        db.read(move |c| self.fetch_one(c)).await
    }
    /// The first row decoded if any, in the writer's transaction.
    pub async fn write_optional(self, db: &Db) -> Result<Option<D::Out>> {
        db.write(move |c| self.fetch_optional(c)).await
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
        Typed { query: self.build(), decode: PhantomData }
    }
}
