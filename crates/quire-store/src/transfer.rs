//! A whole database out and back in: [`Store::export`] writes every row of
//! every table as JSON lines, and [`Store::import`] reads them into an
//! empty database of the same schema — to move a site to another machine
//! (or, with a second backend, to another database), or to keep a copy
//! that any tool can read.
//!
//! The format names tables and columns and holds plain JSON values, so it
//! does not depend on SQLite's files:
//!
//! ```text
//! {"quireExport":1,"schema":20261127000001,"tables":31}
//! {"table":"pages","columns":["id","site_id",…],"rows":1000}
//! ["01J…","01J…",…]                      one array per row, in column order
//! …
//! {"end":true,"rows":24310}
//! ```
//!
//! Integers and reals are numbers, text is a string, a blob is
//! `{"base64":"…"}`, NULL is null. Left out: what the database derives
//! (the full-text indexes, rebuilt by their triggers as rows come in),
//! SQLite's own tables and the migrations' bookkeeping (the importing
//! database has its own, and must be at the same `schema`). The export
//! reads one snapshot; the import is one transaction, so a file that is
//! cut short or wrong anywhere changes nothing.

use crate::db::{self, Conn, QueryBuilder};
use crate::{Result, Store, StoreError};
use base64::Engine;
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use tokio::sync::mpsc;

/// The format's version (`quireExport`).
const FORMAT: i64 = 1;

/// Tables written after all others: their insert triggers would otherwise
/// change rows already imported (a section's insert counts on its page's
/// `text_version`; with the page not yet there, nothing is counted, and
/// the page's insert indexes it with its sections; a translation's insert
/// on PostgreSQL indexes fields its row may leave to the change log).
const LAST: &[&str] = &["pages", "translations"];

/// Rows per INSERT statement on import.
const BATCH: usize = 200;

/// What an export or an import moved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransferReport {
    /// Tables written or read.
    pub tables: usize,
    /// Rows written or read.
    pub rows: u64,
}

fn io(e: std::io::Error) -> StoreError {
    StoreError::Corrupt(format!("cannot write the export: {e}"))
}

fn bad(line: usize, what: impl std::fmt::Display) -> StoreError {
    StoreError::invalid("import", format!("line {line}: {what}; nothing was imported"))
}

/// Wraps a table name for SQL (names come from the schema, not from input).
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl Store {
    /// The tables an export holds, in the order it writes them.
    async fn exported_tables(&self) -> Result<Vec<String>> {
        self.db.read(exported_tables).await
    }

    /// The last migration applied to this database.
    async fn schema_version(&self) -> Result<i64> {
        self.db.read(schema_version).await
    }

    /// Writes every row of every table to `out` as JSON lines (see the
    /// module's documentation), from one snapshot of the database.
    pub async fn export(&self, out: &mut dyn Write) -> Result<TransferReport> {
        // The rows are read on a reader connection, in one read
        // transaction, and written to `out` here as they come.
        let (lines, mut received) = mpsc::channel::<Vec<u8>>(64);
        let read = self.db.read(move |c| {
            c.transaction(false, |c| {
                let tables = exported_tables(c)?;
                let schema = schema_version(c)?;
                let send =
                    |line: Vec<u8>| lines.blocking_send(line).map_err(|_| io(std::io::ErrorKind::BrokenPipe.into()));
                let header = json!({ "quireExport": FORMAT, "schema": schema, "tables": tables.len() });
                send(format!("{header}\n").into_bytes())?;
                let mut report = TransferReport { tables: tables.len(), rows: 0 };
                for table in &tables {
                    let columns = columns_of(c, table)?;
                    let count: i64 =
                        db::query_scalar(format!("SELECT count(*) FROM {}", quoted(table))).fetch_one(c)?;
                    send(format!("{}\n", json!({ "table": table, "columns": columns, "rows": count })).into_bytes())?;
                    let names: Vec<String> = columns.iter().map(|c| quoted(c)).collect();
                    // Ordered by every column, first to last (keys come first):
                    // the same rows give the same file on either database.
                    let order: Vec<String> = (1..=names.len()).map(|n| n.to_string()).collect();
                    let sql =
                        format!("SELECT {} FROM {} ORDER BY {}", names.join(", "), quoted(table), order.join(", "));
                    let mut failed = None;
                    db::query(sql).each(c, |row| {
                        let values: Vec<Value> = row.values().iter().map(value_of).collect();
                        let mut line = serde_json::to_vec(&values).unwrap_or_default();
                        line.push(b'\n');
                        report.rows += 1;
                        match send(line) {
                            Ok(()) => true,
                            Err(e) => {
                                failed = Some(e);
                                false
                            }
                        }
                    })?;
                    if let Some(e) = failed {
                        return Err(e);
                    }
                }
                send(format!("{}\n", json!({ "end": true, "rows": report.rows })).into_bytes())?;
                Ok(report)
            })
        });
        // Owns the receiving end, so a failed write to `out` drops it and the
        // reader's next send fails instead of waiting for room forever.
        let write = async move {
            while let Some(line) = received.recv().await {
                out.write_all(&line).map_err(io)?;
            }
            out.flush().map_err(io)
        };
        let (report, written) = tokio::join!(read, write);
        written?;
        report
    }

    /// Reads an export (see the module's documentation) into this
    /// database, which must be empty and at the export's schema. One
    /// transaction: on any error (a line that does not parse, a table or
    /// column this schema lacks, a file cut short) nothing is imported.
    pub async fn import(&self, input: &mut dyn BufRead) -> Result<TransferReport> {
        let mut lines = input.lines().enumerate().map(|(i, l)| (i + 1, l));
        // Blank lines are skipped.
        let mut next = move || -> Result<Option<(usize, Value)>> {
            loop {
                let Some((n, line)) = lines.next() else { return Ok(None) };
                let line = line.map_err(|e| bad(n, format!("cannot be read: {e}")))?;
                if line.trim().is_empty() {
                    continue;
                }
                let value = serde_json::from_str(&line).map_err(|e| bad(n, format!("is not JSON ({e})")))?;
                return Ok(Some((n, value)));
            }
        };
        let Some((_, header)) = next()? else { return Err(bad(1, "the file is empty")) };
        if header["quireExport"].as_i64() != Some(FORMAT) {
            return Err(bad(1, "this is not a Quire export (no \"quireExport\": 1 header)"));
        }
        let schema = self.schema_version().await?;
        if header["schema"].as_i64() != Some(schema) {
            return Err(bad(
                1,
                format!(
                    "the export is at schema {}, this database at {schema}; import with the Quire version that exported it",
                    header["schema"]
                ),
            ));
        }
        let known = self.exported_tables().await?;
        let tables = known.clone();
        self.db
            .read(move |c| {
                for table in &tables {
                    let any: Option<i64> =
                        db::query_scalar(format!("SELECT 1 FROM {} LIMIT 1", quoted(table))).fetch_optional(c)?;
                    if any.is_some() {
                        return Err(StoreError::Conflict {
                            message: format!(
                                "the database already holds data (table {table}); import into a new, empty one"
                            ),
                            field: None,
                        });
                    }
                }
                Ok(())
            })
            .await?;
        // The lines are read here and written in one write on the
        // writer's thread as they come.
        let (lines, mut received) = mpsc::channel::<Result<(usize, Value)>>(256);
        // In a transaction of its own between the writer's group commits:
        // its references are checked at its own commit, apart from others'
        // writes.
        let write = self.db.outside(move |c| {
            c.transaction(true, |tx| {
                let mut next = || received.blocking_recv().transpose();
                import_lines(tx, &known, &mut next)
            })
        });
        let read = async {
            loop {
                let line = match next() {
                    Ok(Some(line)) => Ok(line),
                    Ok(None) => break,
                    Err(e) => Err(e),
                };
                let stop = line.is_err();
                if lines.send(line).await.is_err() || stop {
                    break;
                }
            }
            drop(lines);
        };
        let (report, ()) = tokio::join!(write, read);
        report?
    }
}

/// Imports the lines after the header (see [`Store::import`]) inside the
/// writer's transaction.
fn import_lines(
    tx: &Conn,
    known: &[String],
    next: &mut dyn FnMut() -> Result<Option<(usize, Value)>>,
) -> Result<TransferReport> {
    {
        // Rows come table by table, not parents first: references are
        // checked once, at the commit.
        tx.batch(if tx.is_postgres() { "SET CONSTRAINTS ALL DEFERRED" } else { "PRAGMA defer_foreign_keys = ON" })?;
        let mut report = TransferReport::default();
        let mut table: Option<Reading> = None;
        let mut batch: Vec<Vec<Value>> = Vec::new();
        let mut ended = false;
        while let Some((n, line)) = next()? {
            if ended {
                return Err(bad(n, "there is more after the end line"));
            }
            match line {
                Value::Array(values) => {
                    let Some((_, columns, _, seen)) = table.as_mut() else {
                        return Err(bad(n, "a row before any table line"));
                    };
                    if values.len() != columns.len() {
                        return Err(bad(n, format!("{} values for {} columns", values.len(), columns.len())));
                    }
                    *seen += 1;
                    batch.push(values);
                    if batch.len() >= BATCH
                        && let Some((name, columns, _, _)) = &table
                    {
                        insert(tx, name, columns, &mut batch, n)?;
                    }
                }
                Value::Object(o) if o.contains_key("table") => {
                    if let Some(done) = table.take() {
                        report.rows += finish(tx, done, &mut batch, n)?;
                        report.tables += 1;
                    }
                    let name = o["table"].as_str().ok_or_else(|| bad(n, "\"table\" is not a name"))?.to_string();
                    if !known.contains(&name) {
                        return Err(bad(n, format!("this database has no table {name}")));
                    }
                    let columns: Vec<String> = o
                        .get("columns")
                        .and_then(Value::as_array)
                        .map(|c| c.iter().filter_map(Value::as_str).map(str::to_string).collect())
                        .unwrap_or_default();
                    let have = columns_of(tx, &name)?;
                    if let Some(missing) = columns.iter().find(|c| !have.contains(c)) {
                        return Err(bad(n, format!("table {name} has no column {missing} here")));
                    }
                    if columns.is_empty() {
                        return Err(bad(n, format!("table {name} lists no columns")));
                    }
                    let rows = o.get("rows").and_then(Value::as_u64).ok_or_else(|| bad(n, "\"rows\" is missing"))?;
                    table = Some((name, columns, rows, 0));
                }
                Value::Object(o) if o.get("end") == Some(&Value::Bool(true)) => {
                    if let Some(done) = table.take() {
                        report.rows += finish(tx, done, &mut batch, n)?;
                        report.tables += 1;
                    }
                    if o.get("rows").and_then(Value::as_u64) != Some(report.rows) {
                        return Err(bad(
                            n,
                            format!("the end line counts {} rows; the file holds {}", o["rows"], report.rows),
                        ));
                    }
                    ended = true;
                }
                _ => return Err(bad(n, "neither a table line, a row nor the end line")),
            }
        }
        if !ended {
            return Err(StoreError::invalid(
                "import",
                "the file ends before its end line (cut short?); nothing was imported",
            ));
        }
        // The full-text rows of what came in, before the commit.
        if tx.is_postgres() {
            // Change-log ids came with the rows: new ones follow the last.
            tx.batch(
                "SELECT setval(pg_get_serial_sequence('changes', 'id'), coalesce(max(id), 0) + 1, false) FROM changes",
            )?;
            // Where vectors are searched by pgvector, each gets its copy.
            crate::vectors::fill_embeddings(tx)?;
        }
        crate::search::index_pending(tx)?;
        Ok(report)
    }
}

/// A table being read: its name, columns, the rows its line announced and
/// the rows read so far.
type Reading = (String, Vec<String>, u64, u64);

/// Inserts the rows of `batch` into `table` and empties it.
fn insert(tx: &Conn, table: &str, columns: &[String], batch: &mut Vec<Vec<Value>>, line: usize) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let not_a_value = |v: &&Value| matches!(v, Value::Object(_) | Value::Array(_)) && blob(v).is_none();
    if let Some(v) = batch.iter().flatten().find(not_a_value) {
        let what = "is neither a number, text, null nor {\"base64\": …}";
        return Err(bad(line, format!("a value of table {table} {what}: {v}")));
    }
    let names: Vec<String> = columns.iter().map(|c| quoted(c)).collect();
    let mut q = QueryBuilder::new(format!("INSERT INTO {} ({}) VALUES ", quoted(table), names.join(", ")));
    q.push_list(batch.iter(), ", ", |q, values| {
        q.push("(");
        q.push_list(values, ", ", |q, v| {
            match v {
                Value::Null => q.push_bind(db::Value::Null),
                Value::Bool(b) => q.push_bind(i64::from(*b)),
                Value::Number(n) => match n.as_i64() {
                    Some(i) => q.push_bind(i),
                    None => q.push_bind(n.as_f64().unwrap_or_default()),
                },
                Value::String(s) => q.push_bind(s.clone()),
                other => q.push_bind(blob(other)),
            };
        });
        q.push(")");
    });
    q.build().execute(tx).map_err(|e| bad(line, format!("table {table}: {e}")))?;
    batch.clear();
    Ok(())
}

/// Inserts what is left of a table and checks it held the rows its line
/// announced; answers how many it held.
fn finish(tx: &Conn, done: Reading, batch: &mut Vec<Vec<Value>>, line: usize) -> Result<u64> {
    let (name, columns, announced, seen) = done;
    insert(tx, &name, &columns, batch, line)?;
    if announced != seen {
        return Err(bad(line, format!("table {name} announced {announced} rows and holds {seen}")));
    }
    Ok(seen)
}

/// The bytes of a `{"base64": "…"}` value.
fn blob(v: &Value) -> Option<Vec<u8>> {
    let text = v.as_object().filter(|o| o.len() == 1)?.get("base64")?.as_str()?;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

/// A stored value as JSON, by its type (blobs as `{"base64": …}`).
fn value_of(v: &db::Value) -> Value {
    match v {
        db::Value::Null => Value::Null,
        db::Value::Int(i) => json!(i),
        db::Value::Real(r) => json!(r),
        db::Value::Text(t) => json!(t),
        db::Value::Blob(b) => json!({ "base64": base64::engine::general_purpose::STANDARD.encode(b) }),
    }
}

/// The tables an export holds, in the order it writes them: every table
/// but the migrations' bookkeeping and what is derived from the others (the
/// full-text tables, the queue of what to index) and what only running
/// processes need (their heartbeats, the agents' recent events).
fn exported_tables(c: &Conn) -> Result<Vec<String>> {
    let sql = if c.is_postgres() {
        "SELECT table_name::TEXT FROM information_schema.tables
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
         AND table_name NOT LIKE '%\\_fts' ESCAPE '\\' AND table_name NOT IN ('_sqlx_migrations', 'search_pending', 'agent_runners', 'agent_events')"
    } else {
        "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table'
         AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT IN ('_sqlx_migrations', 'search_pending', 'agent_runners', 'agent_events')"
    };
    let mut names: Vec<String> = db::query_scalar(sql).fetch_all(c)?;
    names.sort();
    names.sort_by_key(|n| LAST.contains(&n.as_str()));
    Ok(names)
}

/// The columns of `table` an export holds, in the table's order: all of
/// them but PostgreSQL's stand-in for SQLite's implicit `rowid` and the
/// pgvector copy of a stored vector (`embedding`, made from `vector`).
fn columns_of(c: &Conn, table: &str) -> Result<Vec<String>> {
    let sql = if c.is_postgres() {
        "SELECT column_name::TEXT FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = ?1 AND column_name NOT IN ('rowid', 'embedding')
         ORDER BY ordinal_position"
    } else {
        "SELECT name FROM pragma_table_info(?1) ORDER BY cid"
    };
    db::query_scalar(sql).bind(table).fetch_all(c)
}

/// The last migration applied to this database.
fn schema_version(c: &Conn) -> Result<i64> {
    db::query_scalar("SELECT coalesce(max(version), 0) FROM _sqlx_migrations").fetch_one(c)
}
