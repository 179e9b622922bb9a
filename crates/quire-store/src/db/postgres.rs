//! A PostgreSQL connection behind the same synchronous [`super::Conn`] as
//! SQLite's: the `postgres` client runs each statement on the calling
//! thread (a store call's closure, on the blocking pool or the writer's
//! thread), so a call of twenty statements is still one hand-off.
//!
//! The store's SQL keeps SQLite's placeholders (`?1`, `?`); they are
//! numbered PostgreSQL's way (`$1`) once per statement text, and prepared
//! statements are kept per connection. Values bind by the type PostgreSQL
//! infers for each placeholder, the way SQLite's loose typing takes them
//! (an integer where text is expected is written as its digits), and read
//! back as the same few [`Value`]s.

use super::value::Value;
use crate::{DatabaseError, Result, StoreError};
use bytes::BytesMut;
use postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls, Statement};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::error::Error as StdError;
use std::sync::Arc;

type BoxError = Box<dyn StdError + Sync + Send>;

/// Prepared statements kept per connection, at most.
const CACHED: usize = 512;

/// A prepared statement and its columns' names.
type Prepared = (Statement, Arc<[String]>);

/// One connection and what it keeps.
pub(crate) struct PgConn {
    /// Always there but while being dropped.
    client: RefCell<Option<Client>>,
    prepared: RefCell<HashMap<String, Prepared>>,
    /// Whether a transaction is open (`BEGIN` seen, no `COMMIT`/`ROLLBACK` since).
    open: Cell<bool>,
    /// Whether a statement failed in the open transaction since it began or
    /// since a `ROLLBACK TO` a savepoint. PostgreSQL then answers `COMMIT`
    /// by rolling back, without an error: this connection refuses to send it.
    failed: Cell<bool>,
}

impl std::fmt::Debug for PgConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConn").field("open", &self.open.get()).finish_non_exhaustive()
    }
}

impl From<postgres::Error> for StoreError {
    /// The server's own message is kept (the client's error says only
    /// "db error").
    fn from(e: postgres::Error) -> Self {
        let unique = e.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION);
        let source: Box<dyn StdError + Send + Sync> = match e.as_db_error() {
            Some(db) => format!("{} ({})", db.message(), db.code().code()).into(),
            None => Box::new(e),
        };
        StoreError::Database(DatabaseError::new(source, unique))
    }
}

impl PgConn {
    /// Connects to `url` (`postgres://user@host:port/db?options=...`).
    pub(crate) fn connect(url: &str) -> Result<PgConn> {
        let client = Client::connect(url, NoTls)?;
        Ok(PgConn {
            client: RefCell::new(Some(client)),
            prepared: RefCell::default(),
            open: Cell::new(false),
            failed: Cell::new(false),
        })
    }

    fn client(&self) -> std::cell::RefMut<'_, Client> {
        std::cell::RefMut::map(self.client.borrow_mut(), |c| {
            c.as_mut().expect("a connection has its client until dropped")
        })
    }

    /// Runs SQL text of one or more statements, binding nothing.
    pub(crate) fn batch(&self, sql: &str) -> Result<()> {
        let head = sql.trim_start().get(..12).unwrap_or(sql.trim_start()).to_ascii_uppercase();
        let commit = head.starts_with("COMMIT") || head.starts_with("END");
        if commit && self.open.get() && self.failed.get() {
            // Left open for the caller's ROLLBACK, as a failed COMMIT is.
            return Err(StoreError::Corrupt(
                "a statement of the transaction failed, so PostgreSQL would roll it back: nothing was committed".into(),
            ));
        }
        let out = self.client().batch_execute(sql);
        // What the text does to the transaction, whether it ran or not: a
        // failed statement leaves PostgreSQL's transaction open (aborted)
        // until a ROLLBACK.
        if head.starts_with("BEGIN") || head.starts_with("START") {
            self.open.set(out.is_ok() || self.open.get());
            self.failed.set(false);
        } else if commit {
            // A failed COMMIT leaves the transaction for a ROLLBACK.
            self.open.set(out.is_err() && self.open.get());
        } else if head.starts_with("ROLLBACK TO") {
            self.failed.set(out.is_err());
        } else if head.starts_with("ROLLBACK") {
            self.open.set(false);
            self.failed.set(false);
        } else {
            self.noted(&out);
        }
        Ok(out?)
    }

    /// Notes a statement's failure in an open transaction.
    fn noted<T, E>(&self, out: &std::result::Result<T, E>) {
        if out.is_err() && self.open.get() {
            self.failed.set(true);
        }
    }

    /// Whether the server closed the connection.
    pub(crate) fn is_closed(&self) -> bool {
        self.client.borrow().as_ref().is_none_or(Client::is_closed)
    }

    /// Whether a transaction is open.
    pub(crate) fn in_transaction(&self) -> bool {
        self.open.get()
    }

    fn prepared(&self, sql: &str) -> Result<Prepared> {
        if let Some(found) = self.prepared.borrow().get(sql) {
            return Ok(found.clone());
        }
        let statement = self.client().prepare(&numbered(sql))?;
        let names: Arc<[String]> = statement.columns().iter().map(|c| c.name().to_string()).collect();
        let mut cache = self.prepared.borrow_mut();
        if cache.len() >= CACHED {
            cache.clear();
        }
        cache.insert(sql.to_string(), (statement.clone(), Arc::clone(&names)));
        Ok((statement, names))
    }

    /// Runs a statement; the rows it changed.
    pub(crate) fn execute(&self, sql: &str, args: &[Value]) -> Result<u64> {
        let out = self.prepared(sql).and_then(|(statement, _)| {
            let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
            Ok(self.client().execute(&statement, &params)?)
        });
        self.noted(&out);
        out
    }

    /// The first column of the first row of `sql`, as a truth value.
    pub(crate) fn truth(&self, sql: &str) -> Result<bool> {
        let mut out = false;
        self.each(sql, &[], |_, values| {
            out = matches!(values.first(), Some(Value::Int(1)));
            false
        })?;
        Ok(out)
    }

    /// Calls `f` with each row's column names and values until it answers false.
    pub(crate) fn each(
        &self,
        sql: &str,
        args: &[Value],
        mut f: impl FnMut(Arc<[String]>, Vec<Value>) -> bool,
    ) -> Result<()> {
        let rows = self.prepared(sql).and_then(|(statement, names)| {
            let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
            Ok((self.client().query(&statement, &params)?, names))
        });
        self.noted(&rows);
        let (rows, names) = rows?;
        for row in rows {
            let mut values = Vec::with_capacity(names.len());
            for i in 0..names.len() {
                values.push(row.try_get::<_, Read>(i)?.0);
            }
            if !f(Arc::clone(&names), values) {
                break;
            }
        }
        Ok(())
    }
}

impl Drop for PgConn {
    /// The client says goodbye to the server by blocking on its own
    /// runtime, which a thread that drives async tasks may not do: it is
    /// dropped on a thread of its own.
    fn drop(&mut self) {
        if let Some(client) = self.client.get_mut().take() {
            let _ = std::thread::Builder::new().name("quire-pg-close".into()).spawn(move || drop(client));
        }
    }
}

/// SQL with SQLite's placeholders numbered PostgreSQL's way: `?N` becomes
/// `$N`, a bare `?` the next number after the largest so far (SQLite's
/// rule). Text in quotes and comments is left alone.
pub(crate) fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut chars = sql.chars().peekable();
    let mut largest = 0u32;
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == c {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == '\n' {
                        break;
                    }
                }
            }
            '?' => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    chars.next();
                }
                let n = digits.parse::<u32>().unwrap_or(largest + 1);
                largest = largest.max(n);
                out.push('$');
                out.push_str(&n.to_string());
            }
            c => out.push(c),
        }
    }
    out
}

fn mismatch(value: &Value, ty: &Type) -> BoxError {
    format!("a {} value cannot be bound where {} is expected", value.kind(), ty.name()).into()
}

impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> std::result::Result<IsNull, BoxError> {
        let text = matches!(*ty, Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN);
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                Type::FLOAT4 => (*i as f32).to_sql(ty, out),
                _ if text => i.to_string().to_sql(ty, out),
                _ => Err(mismatch(self, ty)),
            },
            Value::Real(r) => match *ty {
                Type::FLOAT8 => r.to_sql(ty, out),
                Type::FLOAT4 => (*r as f32).to_sql(ty, out),
                _ if text => r.to_string().to_sql(ty, out),
                _ => Err(mismatch(self, ty)),
            },
            Value::Text(s) => match *ty {
                _ if text => s.as_str().to_sql(ty, out),
                Type::JSONB => {
                    out.extend_from_slice(&[1]);
                    out.extend_from_slice(s.as_bytes());
                    Ok(IsNull::No)
                }
                Type::JSON => {
                    out.extend_from_slice(s.as_bytes());
                    Ok(IsNull::No)
                }
                Type::INT8 => s.parse::<i64>()?.to_sql(ty, out),
                Type::FLOAT8 => s.parse::<f64>()?.to_sql(ty, out),
                Type::BYTEA => s.as_bytes().to_sql(ty, out),
                _ => Err(mismatch(self, ty)),
            },
            Value::Blob(b) => match *ty {
                Type::BYTEA => b.as_slice().to_sql(ty, out),
                _ => Err(mismatch(self, ty)),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// A column's value as read, whatever its type.
struct Read(Value);

impl<'a> FromSql<'a> for Read {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> std::result::Result<Self, BoxError> {
        Ok(Read(match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::OID => Value::Int(u32::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            Type::BYTEA => Value::Blob(raw.to_vec()),
            Type::JSONB => Value::Text(String::from_utf8(raw.get(1..).unwrap_or_default().to_vec())?),
            Type::NUMERIC => numeric(raw)?,
            _ => Value::Text(String::from_utf8(raw.to_vec())?),
        }))
    }

    fn from_sql_null(_: &Type) -> std::result::Result<Self, BoxError> {
        Ok(Read(Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// A NUMERIC (what `SUM` of integers answers) as an integer when it has no
/// fraction, else as a real.
fn numeric(raw: &[u8]) -> std::result::Result<Value, BoxError> {
    let word = |i: usize| -> std::result::Result<i16, BoxError> {
        let b = raw.get(2 * i..2 * i + 2).ok_or("a NUMERIC value is cut short")?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    };
    let (digits, weight, sign, scale) = (word(0)?, word(1)?, word(2)? as u16, word(3)?);
    let mut value = 0f64;
    for i in 0..digits.max(0) as usize {
        value += f64::from(word(4 + i)?) * 10_000f64.powi(i32::from(weight) - i as i32);
    }
    if sign == 0x4000 {
        value = -value;
    } else if sign == 0xC000 {
        return Ok(Value::Null);
    }
    Ok(if scale == 0 && value.abs() < 9.0e15 { Value::Int(value as i64) } else { Value::Real(value) })
}

#[cfg(test)]
mod tests {
    use super::numbered;

    #[test]
    fn placeholders_are_numbered_as_sqlite_numbers_them() {
        assert_eq!(numbered("SELECT ?1, ?2, ?1"), "SELECT $1, $2, $1");
        assert_eq!(numbered("a = ? AND b = ? AND c = ?"), "a = $1 AND b = $2 AND c = $3");
        assert_eq!(numbered("a = ?3 AND b = ?"), "a = $3 AND b = $4");
        assert_eq!(
            numbered("x = '?1' AND \"q?\" = ? -- what?\n AND y = ?2"),
            "x = '?1' AND \"q?\" = $1 -- what?\n AND y = $2"
        );
    }
}
