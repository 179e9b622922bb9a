//! The database underneath the store: connections, the threads they live on,
//! queries and their values. Only `connection.rs` and `postgres.rs` name a
//! driver.
//!
//! Every store call hands its work over once: a read runs as one closure on
//! a reader connection (on tokio's blocking pool; a short read on the
//! calling thread, waiting there for a reader when all are busy), a write
//! as one closure on the writer's own thread, where it joins the next group
//! commit. Inside the closure statements run synchronously, so a call of
//! twenty statements costs one hand-off, not twenty.
//!
//! Group commit: the writer thread takes every write queued (up to
//! [`MAX_BATCH`](writer::MAX_BATCH)) into one transaction, each in a savepoint of its own (a
//! write alone in its transaction, as always on PostgreSQL, needs none). A
//! write that fails is rolled back alone, and its caller hears the error at
//! once; the others' callers hear back only after the COMMIT (or its
//! failure), never before. On PostgreSQL a connection never sends COMMIT
//! for a transaction a failed statement aborted (the server would roll it
//! back without an error): the writes in it hear that it failed.
//!
//! Queries keep SQL's own placeholders (`?1`, `?`), bind [`Value`]s, and
//! read rows into [`Row`]s of values, so nothing above this folder sees a
//! driver type.
//!
//! The same connection, queries and group commit run over SQLite
//! (rusqlite) or PostgreSQL (`postgres.rs`).
//!
//! From the bottom up: `value.rs` (what is bound and read), `row.rs`,
//! `location.rs`, `postgres.rs` and `connection.rs` (the drivers),
//! `writer.rs` (the group commit), `pool.rs` (the store's handle, [`Db`]),
//! `query.rs` (statements); each uses only the files before it.

mod connection;
mod location;
mod pool;
mod postgres;
mod query;
mod row;
#[cfg(test)]
mod tests;
mod value;
mod writer;

pub use connection::Synchronous;
pub(crate) use connection::{Conn, create_schema};
pub use location::Location;
#[cfg(test)]
pub(crate) use pool::READERS;
pub(crate) use pool::{Db, Overlay};
pub(crate) use query::{Query, QueryBuilder, query, query_as, query_scalar, row_in};
pub(crate) use row::{FromRow, Row, RowRef, read_row};
#[cfg(test)]
pub(crate) use value::ValueRef;
pub(crate) use value::{Value, parse_time};
pub(crate) use writer::Queued;
