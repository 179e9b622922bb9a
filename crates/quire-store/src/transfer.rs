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

use crate::{Result, Store, StoreError};
use base64::Engine;
use serde_json::{Value, json};
use sqlx::{Row, TypeInfo, ValueRef};
use std::io::{BufRead, Write};

/// The format's version (`quireExport`).
const FORMAT: i64 = 1;

/// Tables written after all others: their insert triggers would otherwise
/// change rows already imported (a section's insert counts on its page's
/// `text_version`; with the page not yet there, nothing is counted, and
/// the page's insert indexes it with its sections).
const LAST: &[&str] = &["pages"];

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
        let mut names: Vec<String> = sqlx::query_scalar(
            "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table'
             AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> '_sqlx_migrations' ORDER BY name",
        )
        .fetch_all(&self.reader)
        .await?;
        names.sort_by_key(|n| LAST.contains(&n.as_str()));
        Ok(names)
    }

    /// The last migration applied to this database.
    async fn schema_version(&self) -> Result<i64> {
        Ok(sqlx::query_scalar("SELECT coalesce(max(version), 0) FROM _sqlx_migrations").fetch_one(&self.reader).await?)
    }

    /// Writes every row of every table to `out` as JSON lines (see the
    /// module's documentation), from one snapshot of the database.
    pub async fn export(&self, out: &mut dyn Write) -> Result<TransferReport> {
        let tables = self.exported_tables().await?;
        let schema = self.schema_version().await?;
        let mut tx = self.reader.begin().await?;
        writeln!(out, "{}", json!({ "quireExport": FORMAT, "schema": schema, "tables": tables.len() })).map_err(io)?;
        let mut report = TransferReport { tables: tables.len(), rows: 0 };
        for table in &tables {
            let columns: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_table_info(?1) ORDER BY cid")
                .bind(table)
                .fetch_all(&mut *tx)
                .await?;
            let count: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {}", quoted(table))))
                .fetch_one(&mut *tx)
                .await?;
            writeln!(out, "{}", json!({ "table": table, "columns": columns, "rows": count })).map_err(io)?;
            let names: Vec<String> = columns.iter().map(|c| quoted(c)).collect();
            let sql = format!("SELECT {} FROM {}", names.join(", "), quoted(table));
            let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).fetch_all(&mut *tx).await?;
            for row in &rows {
                let values = (0..row.columns().len()).map(|i| value_of(row, i)).collect::<Result<Vec<Value>>>()?;
                serde_json::to_writer(&mut *out, &values).map_err(|e| io(e.into()))?;
                out.write_all(b"\n").map_err(io)?;
            }
            report.rows += rows.len() as u64;
        }
        tx.commit().await?;
        writeln!(out, "{}", json!({ "end": true, "rows": report.rows })).map_err(io)?;
        out.flush().map_err(io)?;
        Ok(report)
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
        for table in &known {
            let any: Option<i64> =
                sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT 1 FROM {} LIMIT 1", quoted(table))))
                    .fetch_optional(&self.reader)
                    .await?;
            if any.is_some() {
                return Err(StoreError::Conflict {
                    message: format!("the database already holds data (table {table}); import into a new, empty one"),
                    field: None,
                });
            }
        }

        let mut tx = self.writer.begin().await?;
        // Rows come table by table, not parents first: references are
        // checked once, at the commit.
        sqlx::query("PRAGMA defer_foreign_keys = ON").execute(&mut *tx).await?;
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
                        insert(&mut tx, name, columns, &mut batch, n).await?;
                    }
                }
                Value::Object(o) if o.contains_key("table") => {
                    if let Some(done) = table.take() {
                        report.rows += finish(&mut tx, done, &mut batch, n).await?;
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
                    let have: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_table_info(?1)")
                        .bind(&name)
                        .fetch_all(&mut *tx)
                        .await?;
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
                        report.rows += finish(&mut tx, done, &mut batch, n).await?;
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
        tx.commit().await?;
        Ok(report)
    }
}

/// A table being read: its name, columns, the rows its line announced and
/// the rows read so far.
type Reading = (String, Vec<String>, u64, u64);

/// Inserts the rows of `batch` into `table` and empties it.
async fn insert(
    tx: &mut sqlx::SqliteConnection,
    table: &str,
    columns: &[String],
    batch: &mut Vec<Vec<Value>>,
    line: usize,
) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let not_a_value = |v: &&Value| matches!(v, Value::Object(_) | Value::Array(_)) && blob(v).is_none();
    if let Some(v) = batch.iter().flatten().find(not_a_value) {
        let what = "is neither a number, text, null nor {\"base64\": …}";
        return Err(bad(line, format!("a value of table {table} {what}: {v}")));
    }
    let names: Vec<String> = columns.iter().map(|c| quoted(c)).collect();
    let mut q =
        sqlx::QueryBuilder::<sqlx::Sqlite>::new(format!("INSERT INTO {} ({}) ", quoted(table), names.join(", ")));
    q.push_values(batch.iter(), |mut row, values| {
        for v in values {
            match v {
                Value::Null => row.push_bind(None::<String>),
                Value::Bool(b) => row.push_bind(i64::from(*b)),
                Value::Number(n) => match n.as_i64() {
                    Some(i) => row.push_bind(i),
                    None => row.push_bind(n.as_f64().unwrap_or_default()),
                },
                Value::String(s) => row.push_bind(s.clone()),
                other => row.push_bind(blob(other)),
            };
        }
    });
    q.build().execute(&mut *tx).await.map_err(|e| bad(line, format!("table {table}: {e}")))?;
    batch.clear();
    Ok(())
}

/// Inserts what is left of a table and checks it held the rows its line
/// announced; answers how many it held.
async fn finish(
    tx: &mut sqlx::SqliteConnection,
    done: Reading,
    batch: &mut Vec<Vec<Value>>,
    line: usize,
) -> Result<u64> {
    let (name, columns, announced, seen) = done;
    insert(tx, &name, &columns, batch, line).await?;
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

/// Column `i` of `row` as JSON, by the type of the value stored.
fn value_of(row: &sqlx::sqlite::SqliteRow, i: usize) -> Result<Value> {
    let raw = row.try_get_raw(i)?;
    if raw.is_null() {
        return Ok(Value::Null);
    }
    let kind = raw.type_info().name().to_string();
    Ok(match kind.as_str() {
        "INTEGER" => json!(row.try_get_unchecked::<i64, _>(i)?),
        "REAL" => json!(row.try_get_unchecked::<f64, _>(i)?),
        "BLOB" => {
            let bytes: Vec<u8> = row.try_get_unchecked(i)?;
            json!({ "base64": base64::engine::general_purpose::STANDARD.encode(bytes) })
        }
        _ => json!(row.try_get_unchecked::<String, _>(i)?),
    })
}
