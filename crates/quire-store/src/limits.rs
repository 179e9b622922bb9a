//! Fair use kept in the database, so every replica shares it and a restart
//! forgets nothing: fixed-window usage counts (a token's or person's
//! requests and agent turns, a site's model tokens), and each email's
//! failed sign-ins with the lock they earned.
//!
//! The rules (how many, how long) belong to the callers; this module only
//! adds and reads, each change in one write of the writer's queue.

use crate::db::{self, Conn};
use crate::{Result, Store};

/// Windows older than this (seconds) are forgotten when counts are added.
const FORGET_AFTER: i64 = 2 * 24 * 60 * 60;

/// An amount to add to a key's count in one window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageAdd {
    /// What is counted, e.g. `requests:token:<id>`.
    pub key: String,
    /// The window's start, in seconds since 1970.
    pub window_start: i64,
    /// How much to add (0 reads the count).
    pub by: i64,
}

/// An email's failed sign-ins, as the lockout rule reads and writes them
/// (times in seconds since 1970).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SignInFailures {
    /// Failures counted since `first_at`.
    pub failures: i64,
    /// When the first of them happened.
    pub first_at: i64,
    /// Until when the email is refused unchecked, if locked.
    pub locked_until: Option<i64>,
}

impl Store {
    /// Adds each amount to its key's count in its window, all in one
    /// write; answers each count after the add, in order. Windows older
    /// than two days are forgotten on the way.
    pub async fn add_usage(&self, adds: Vec<UsageAdd>) -> Result<Vec<i64>> {
        if adds.is_empty() {
            return Ok(Vec::new());
        }
        self.db
            .write(move |conn| {
                let oldest = adds.iter().map(|a| a.window_start).min().unwrap_or_default() - FORGET_AFTER;
                db::query("DELETE FROM usage_counts WHERE window_start < ?1").bind(oldest).execute(conn)?;
                adds.iter().map(|a| add_one(conn, a)).collect()
            })
            .await
    }

    /// Adds `add` to its key's count unless the count would then pass
    /// `limit`, in one statement (so replicas taking at once are counted one
    /// after the other); answers the count after, or none when refused and
    /// nothing was added.
    pub async fn take_usage(&self, add: UsageAdd, limit: i64) -> Result<Option<i64>> {
        if add.by > limit {
            return Ok(None);
        }
        db::query_scalar(
            "INSERT INTO usage_counts (key, window_start, count) VALUES (?1, ?2, ?3)
             ON CONFLICT (key, window_start) DO UPDATE SET count = usage_counts.count + excluded.count
             WHERE usage_counts.count + excluded.count <= ?4
             RETURNING count",
        )
        .bind(add.key)
        .bind(add.window_start)
        .bind(add.by)
        .bind(limit)
        .write_optional(&self.db)
        .await
    }

    /// A key's count in a window (0 when nothing was counted).
    pub async fn usage(&self, key: &str, window_start: i64) -> Result<i64> {
        let count: Option<i64> =
            db::query_scalar("SELECT count FROM usage_counts WHERE key = ?1 AND window_start = ?2")
                .bind(key)
                .bind(window_start)
                .read_optional(&self.db)
                .await?;
        Ok(count.unwrap_or(0))
    }

    /// Counts a sign-in attempt for `email` as `rule` decides from what was
    /// stored (nothing: never failed, or forgotten), in one write that
    /// holds the email's row, so attempts on every replica are counted one
    /// after the other. `rule` answers what to store and what the attempt
    /// gets; the answer is returned.
    pub async fn count_sign_in<T: Send + 'static>(
        &self,
        email: &str,
        rule: impl FnOnce(Option<SignInFailures>) -> (SignInFailures, T) + Send + 'static,
    ) -> Result<T> {
        let email = email.to_string();
        self.db
            .write(move |conn| {
                // The row exists before it is read, so PostgreSQL can lock it.
                db::query(
                    "INSERT INTO sign_in_failures (email, failures, first_at) VALUES (?1, 0, 0)
                     ON CONFLICT (email) DO NOTHING",
                )
                .bind(&email)
                .execute(conn)?;
                let lock = if conn.is_postgres() { " FOR UPDATE" } else { "" };
                let row = db::query(format!(
                    "SELECT failures, first_at, locked_until FROM sign_in_failures WHERE email = ?1{lock}"
                ))
                .bind(&email)
                .fetch_one(conn)?;
                let stored = SignInFailures {
                    failures: row.try_get("failures")?,
                    first_at: row.try_get("first_at")?,
                    locked_until: row.try_get("locked_until")?,
                };
                let (next, answer) = rule((stored.failures > 0).then_some(stored));
                db::query(
                    "UPDATE sign_in_failures SET failures = ?2, first_at = ?3, locked_until = ?4 WHERE email = ?1",
                )
                .bind(&email)
                .bind(next.failures)
                .bind(next.first_at)
                .bind(next.locked_until)
                .execute(conn)?;
                Ok(answer)
            })
            .await
    }

    /// Forgets an email's failed sign-ins (it signed in).
    pub async fn forget_sign_in_failures(&self, email: &str) -> Result<()> {
        db::query("DELETE FROM sign_in_failures WHERE email = ?1").bind(email).write(&self.db).await?;
        Ok(())
    }
}

/// Adds one amount; answers the count after it.
fn add_one(conn: &Conn, add: &UsageAdd) -> Result<i64> {
    db::query_scalar(
        "INSERT INTO usage_counts (key, window_start, count) VALUES (?1, ?2, ?3)
         ON CONFLICT (key, window_start) DO UPDATE SET count = usage_counts.count + excluded.count
         RETURNING count",
    )
    .bind(&add.key)
    .bind(add.window_start)
    .bind(add.by)
    .fetch_one(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_take_stops_at_its_limit_and_adds_nothing_then() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::testing::open(dir.path()).await.unwrap();
        let take = |by| UsageAdd { key: "turns:user:a".into(), window_start: 3_600, by };
        assert_eq!(store.take_usage(take(2), 3).await.unwrap(), Some(2));
        assert_eq!(store.take_usage(take(2), 3).await.unwrap(), None, "2 + 2 passes 3");
        assert_eq!(store.take_usage(take(1), 3).await.unwrap(), Some(3));
        assert_eq!(store.take_usage(take(1), 3).await.unwrap(), None);
        assert_eq!(store.usage("turns:user:a", 3_600).await.unwrap(), 3, "refusals add nothing");
        assert_eq!(store.take_usage(take(5), 3).await.unwrap(), None, "more than the limit at once");
    }

    #[tokio::test]
    async fn counts_add_up_per_key_and_window_and_old_windows_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::testing::open(dir.path()).await.unwrap();
        let add = |key: &str, window_start, by| UsageAdd { key: key.into(), window_start, by };
        let old = 1_000;
        let now = old + FORGET_AFTER + 60;
        assert_eq!(store.add_usage(vec![add("a", old, 3)]).await.unwrap(), vec![3]);
        let counts = store.add_usage(vec![add("a", now, 2), add("b", now, 1), add("a", now, 4)]).await.unwrap();
        assert_eq!(counts, vec![2, 1, 6]);
        assert_eq!(store.usage("a", now).await.unwrap(), 6);
        assert_eq!(store.usage("a", old).await.unwrap(), 0, "forgotten");
        assert_eq!(store.usage("c", now).await.unwrap(), 0);
    }

    #[tokio::test]
    async fn sign_in_failures_are_read_and_written_by_the_rule() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::testing::open(dir.path()).await.unwrap();
        let bump = |seen: Option<SignInFailures>| {
            let mut f = seen.unwrap_or(SignInFailures { failures: 0, first_at: 10, locked_until: None });
            f.failures += 1;
            (f, seen)
        };
        assert_eq!(store.count_sign_in("a@example.org", bump).await.unwrap(), None);
        let seen = store.count_sign_in("a@example.org", bump).await.unwrap();
        assert_eq!(seen, Some(SignInFailures { failures: 1, first_at: 10, locked_until: None }));
        store.forget_sign_in_failures("a@example.org").await.unwrap();
        assert_eq!(store.count_sign_in("a@example.org", bump).await.unwrap(), None);
    }
}
