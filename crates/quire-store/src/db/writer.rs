//! The writer's thread and its group commit: the queued writes taken
//! together into one transaction, each in a savepoint of its own, each
//! caller told its outcome once the transaction ended.

use super::connection::{Conn, Synchronous};
use super::location::Location;
use crate::{DatabaseError, Result, StoreError};
use tokio::sync::{mpsc, oneshot};

/// Most writes in one transaction.
pub(crate) const MAX_BATCH: usize = 64;

/// Most writes in one transaction on PostgreSQL: one. There other
/// processes (replicas) write at the same time, and a transaction holding
/// the row locks of many writes waits on theirs and makes them wait, up to
/// deadlocks; one write's transaction holds its own rows alone.
const MAX_BATCH_POSTGRES: usize = 1;

/// A finished write's reply, given the outcome of its batch's COMMIT.
pub(super) type Finish = Box<dyn FnOnce(Result<(), &StoreError>) + Send>;
/// A write: runs in the batch's transaction; `Err(())` when it failed (its
/// caller has been told). Given an error instead of a connection, it tells
/// its caller that error without running.
pub(super) type WriteFn = Box<dyn FnOnce(Result<&Conn, &StoreError>) -> Result<Finish, ()> + Send>;

pub(super) enum Job {
    /// Runs in the next batch's transaction.
    Write(WriteFn),
    /// Runs between two transactions.
    Outside(Box<dyn FnOnce(&Conn) + Send>),
    /// Runs last (outside any transaction) after what is queued before it,
    /// then stops the writer.
    Close(Box<dyn FnOnce(&Conn) + Send>, oneshot::Sender<()>),
}

pub(super) fn stopped() -> StoreError {
    StoreError::Corrupt("the store is closed".into())
}

/// The error a write's caller hears when its batch failed as a whole.
pub(super) fn failed(e: &StoreError) -> StoreError {
    StoreError::Database(DatabaseError::new(e.to_string().into(), false))
}

/// A write in the writer's queue.
pub(crate) struct Queued<T>(pub(super) oneshot::Receiver<Result<T>>);

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
pub(super) fn write_loop(
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
