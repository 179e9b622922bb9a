//! Migrations: the SQL files of `migrations/sqlite` or
//! `migrations/postgres`, embedded at build time (`build.rs`) and applied in
//! version order, each in its own transaction.
//!
//! What was applied is kept in `_sqlx_migrations` (the table, its columns
//! and its SHA-384 checksums are those databases of earlier versions
//! already have), so an existing database carries on where it stopped. A
//! migration whose file changed after it was applied, one that failed
//! half-way, or one this binary does not know (a newer version's) stops the
//! start with an error naming it.

use crate::db::{Conn, query, query_as};
use crate::{DatabaseError, Result, StoreError};
use sha2::{Digest, Sha384};

include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

fn refused(message: String) -> StoreError {
    StoreError::Migration(DatabaseError::new(message.into(), false))
}

/// Applies the migrations not applied yet; answers how many are applied in all.
pub(crate) fn run(conn: &Conn) -> Result<usize> {
    let (migrations, bytes) = if conn.is_postgres() { (POSTGRES, "BYTEA") } else { (SQLITE, "BLOB") };
    if conn.is_postgres() {
        // Replicas starting at once migrate one after the other; the lock
        // ends with the connection's session, or below.
        conn.batch("SELECT pg_advisory_lock(7726921)")?;
        let applied = apply(conn, migrations, bytes);
        conn.batch("SELECT pg_advisory_unlock(7726921)")?;
        return applied;
    }
    apply(conn, migrations, bytes)
}

fn apply(conn: &Conn, migrations: &[(i64, &str, &str)], bytes: &str) -> Result<usize> {
    conn.batch(&format!(
        "CREATE TABLE IF NOT EXISTS _sqlx_migrations (
            version BIGINT PRIMARY KEY,
            description TEXT NOT NULL,
            installed_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
            success BOOLEAN NOT NULL,
            checksum {bytes} NOT NULL,
            execution_time BIGINT NOT NULL
        )"
    ))?;
    let applied: Vec<(i64, bool, Vec<u8>)> =
        query_as("SELECT version, success, checksum FROM _sqlx_migrations ORDER BY version").fetch_all(conn)?;
    for (version, success, _) in &applied {
        if !migrations.iter().any(|(v, _, _)| v == version) {
            return Err(refused(format!(
                "the database has migration {version}, which this version of quire does not know: it was made by a newer one"
            )));
        }
        if !success {
            return Err(refused(format!("migration {version} failed part-way; the database needs repair")));
        }
    }
    for &(version, description, sql) in migrations {
        let checksum = Sha384::digest(sql.as_bytes()).to_vec();
        if let Some((_, _, stored)) = applied.iter().find(|(v, _, _)| *v == version) {
            if *stored != checksum {
                return Err(refused(format!(
                    "migration {version} ({description}) was applied but its file has changed since"
                )));
            }
            continue;
        }
        let started = std::time::Instant::now();
        conn.transaction(true, |c| {
            c.batch(sql).map_err(|e| refused(format!("migration {version} ({description}): {e}")))?;
            query(
                "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
                 VALUES (?1, ?2, TRUE, ?3, ?4)",
            )
            .bind(version)
            .bind(description)
            .bind(checksum)
            .bind(started.elapsed().as_nanos() as i64)
            .execute(c)?;
            Ok(())
        })?;
    }
    // Content a migration wrote is indexed before anyone searches it.
    let pending: bool = crate::db::query_scalar(if conn.is_postgres() {
        "SELECT to_regclass('search_pending') IS NOT NULL"
    } else {
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'search_pending')"
    })
    .fetch_one(conn)?;
    if pending {
        conn.transaction(true, crate::search::index_pending)?;
    }
    let applied: i64 = crate::db::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations").fetch_one(conn)?;
    Ok(applied as usize)
}
