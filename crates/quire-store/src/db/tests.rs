//! The database layer's own tests: group commit, values, statements, the
//! pool and closing.

use super::writer::stopped;
use super::*;
use crate::{Result, StoreError};
use chrono::{DateTime, Utc};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::oneshot;

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
async fn released_memory_empties_the_page_caches_and_the_store_goes_on() {
    let (_dir, db) = scratch().await;
    // ~4 MB of rows: more than a page cache keeps, so both fill to the top.
    db.write(|c| {
        c.batch("CREATE TABLE big (body TEXT)")?;
        query("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) INSERT INTO big SELECT printf('%.2000c', 'x') FROM n").execute(c)?;
        Ok(())
    })
    .await
    .unwrap();
    let count = || query_scalar::<i64>("SELECT count(*) FROM big WHERE length(body) = 2000");
    assert_eq!(db.read(move |c| count().fetch_one(c)).await.unwrap(), 2000);
    let reader = db.read(|c| Ok(c.cache_used())).await.unwrap();
    let writer = db.outside(|c| c.cache_used()).await.unwrap();
    assert!(reader > 1_000_000 && writer > 1_000_000, "caches before: reader {reader}, writer {writer}");
    db.release_memory().await.unwrap();
    let reader = db.read(|c| Ok(c.cache_used())).await.unwrap();
    let writer = db.outside(|c| c.cache_used()).await.unwrap();
    assert!(reader < 100_000 && writer < 100_000, "caches after: reader {reader}, writer {writer}");
    // Nothing is lost: the pages are read again.
    assert_eq!(db.read(move |c| count().fetch_one(c)).await.unwrap(), 2000);
    db.write(insert(7, false)).await.unwrap();
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
    let naive: DateTime<Utc> = db.read(|c| query_scalar("SELECT '2026-11-25 07:00:00'").fetch_one(c)).await.unwrap();
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
        db.write(move |c| query("INSERT INTO s (k, at) VALUES (?1, 'x')").bind(k).execute(c).map(drop)).await.unwrap();
    }
    let reprepared = db
        .read(|c| {
            let conn = c.sqlite().expect("a SQLite connection");
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

/// Rows read borrowed (`each_ref`) hold what rows read whole (`each`)
/// hold, text that is not UTF-8 replaced the same way; an error of the
/// reader stops the rows and is answered.
#[tokio::test]
async fn rows_read_borrowed_hold_what_rows_read_whole_hold() {
    let (_dir, db) = scratch().await;
    db.write(|c| {
        c.batch("CREATE TABLE r (i INTEGER, f REAL, s TEXT, b BLOB, n TEXT)")?;
        c.batch("INSERT INTO r VALUES (7, 2.5, 'é \"x\"', x'00ff', NULL), (8, 0.0, CAST(x'61ff62' AS TEXT), x'', 'n')")
    })
    .await
    .unwrap();
    let (whole, borrowed, stopped) = db
        .read(|c| {
            let q = query("SELECT * FROM r ORDER BY i");
            let whole: Vec<Vec<Value>> = q.fetch_all(c)?.iter().map(|r| r.values().to_vec()).collect();
            let mut borrowed = Vec::new();
            q.each_ref(c, |row| {
                assert_eq!((row.int(0)?, row.opt_text(4)?.is_none()), (borrowed.len() as i64 + 7, borrowed.is_empty()));
                borrowed.push((0..5).map(|at| row.get(at).map(value_of)).collect::<Result<Vec<_>>>()?);
                Ok(true)
            })?;
            let mut calls = 0;
            let stopped = q.each_ref(c, |row| {
                calls += 1;
                row.text(0).map(|_| true)
            });
            assert_eq!(calls, 1);
            Ok((whole, borrowed, stopped))
        })
        .await
        .unwrap();
    assert_eq!(borrowed, whole);
    assert_eq!(whole[1][2], Value::Text("a\u{fffd}b".into()));
    assert!(stopped.unwrap_err().to_string().contains("column i: a integer where text was expected"));
}

/// A borrowed value owned.
fn value_of(v: &ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Int(i) => Value::Int(*i),
        ValueRef::Real(r) => Value::Real(*r),
        ValueRef::Text(t) => Value::Text(t.to_string()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}
