//! Stores for tests, on either database: every test suite of the workspace
//! opens its stores here, so one setting runs all of them against
//! PostgreSQL.
//!
//! With `QUIRE_TEST_DATABASE_URL` set to a PostgreSQL server's URL
//! (`postgres://user@127.0.0.1:5432/db`), each store is a schema of its own
//! in that database, made for it (and left for the throwaway cluster to
//! take away), searched before `public`, where the pgvector extension is
//! installed when the server has it (as an administrator would install
//! it); otherwise it is a SQLite file in the test's folder.

use crate::db::Location;
use crate::{Result, Scope, Store};
use std::path::Path;

/// The PostgreSQL URL tests run against, if any.
pub fn postgres_url() -> Option<String> {
    std::env::var("QUIRE_TEST_DATABASE_URL").ok().filter(|u| !u.trim().is_empty())
}

/// Where a new test store is: a fresh schema on the test server, or
/// `dir/q.db`.
pub async fn location(dir: &Path) -> Result<Location> {
    let Some(url) = postgres_url() else { return Ok(Location::File(dir.join("q.db"))) };
    let schema = format!("test_{}", uuid::Uuid::now_v7().simple());
    let made = schema.clone();
    let admin = url.clone();
    tokio::task::spawn_blocking(move || crate::db::create_schema(&admin, &made))
        .await
        .map_err(|e| crate::StoreError::Corrupt(format!("making a test schema: {e}")))??;
    let sep = if url.contains('?') { '&' } else { '?' };
    // The schema names the connections too (`application_name`), so a test
    // can find its own among the server's.
    Ok(Location::Postgres(format!("{url}{sep}application_name={schema}&options=-c%20search_path%3D{schema},public")))
}

/// A new, empty, migrated store for a test (see the module's text).
pub async fn open(dir: &Path) -> Result<Store> {
    Store::open_at(location(dir).await?).await
}

/// A new store for a test with the demo site seeded (its images under
/// `dir/uploads`), and the demo site's scope.
pub async fn demo(dir: &Path) -> Result<(Store, Scope)> {
    let store = open(dir).await?;
    let seeded = crate::seed::seed_demo(&store, &dir.join("uploads")).await?;
    let scope = seeded.scope.ok_or_else(|| crate::StoreError::Corrupt("the demo seed made no site".into()))?;
    Ok((store, scope))
}

/// Two stores on one new database, as two processes (replicas) share one
/// on PostgreSQL, the demo site seeded through the first; and its scope.
/// On SQLite both open the same file.
pub async fn replicas(dir: &Path) -> Result<(Store, Store, Scope)> {
    let at = location(dir).await?;
    let a = Store::open_at(at.clone()).await?;
    let seeded = crate::seed::seed_demo(&a, &dir.join("uploads")).await?;
    let scope = seeded.scope.ok_or_else(|| crate::StoreError::Corrupt("the demo seed made no site".into()))?;
    let b = Store::open_at(at).await?;
    Ok((a, b, scope))
}

/// A person writing through the back-office (`user:ana`): a status set to
/// or from published publishes or unpublishes, as people's writes do.
pub fn person() -> quire_core::model::ChangeContext {
    use quire_core::model::{ChangeContext, Publishing, Surface};
    ChangeContext {
        actor: "user:ana".into(),
        surface: Surface::Web,
        session_id: None,
        turn_id: None,
        publishing: Publishing::ByStatus,
    }
}

/// A small, seeded generator for tests that walk random sequences: the
/// same walk on every run, so a failure names a step that happens again.
#[derive(Debug, Clone)]
pub struct Walk(pub u64);

impl Walk {
    /// The next number below `below` (xorshift).
    pub fn next(&mut self, below: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % below as u64) as usize
    }
}
