//! Group commit: concurrent updates share one write transaction, so the
//! single writer pays for BEGIN and COMMIT once per batch instead of once per
//! update. Every statement is a round trip to the connection's thread, and
//! on a busy server those hand-offs, not SQLite, are the writer's cost.
//!
//! A job runs its statements and hands back the change-log record it owes;
//! the batch writes all of them with one statement before committing.
//!
//! A job is re-runnable: if one leaves partial writes behind when it fails
//! (`dirty`), or the commit fails, the batch is rolled back and every job
//! runs again alone in its own transaction, so one bad job never takes
//! others' writes with it. A job's caller hears back only after its
//! transaction committed (or failed).

use crate::changes::{PendingChange, log_changes};
use crate::{Result, StoreError};
use sqlx::{SqliteConnection, SqlitePool};
use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use tokio::sync::{mpsc, oneshot};

/// Why a job failed, and whether it wrote something before failing.
pub(crate) struct JobError {
    pub error: StoreError,
    pub dirty: bool,
}

impl JobError {
    /// A failure that wrote nothing (a failed statement is undone by SQLite).
    pub fn clean(error: impl Into<StoreError>) -> Self {
        JobError { error: error.into(), dirty: false }
    }
}

/// What a job did: the change-log record its writes owe (none when it
/// wrote nothing), and the value its caller gets back.
pub(crate) type JobDone = (Option<PendingChange>, Box<dyn Any + Send>);
/// The future of one run of a job.
pub(crate) type JobFuture<'c> = Pin<Box<dyn Future<Output = Result<JobDone, JobError>> + Send + 'c>>;
/// A job: statements to run inside the batch's transaction.
pub(crate) type JobFn = Box<dyn for<'c> Fn(&'c mut SqliteConnection) -> JobFuture<'c> + Send + Sync>;

struct Job {
    run: JobFn,
    reply: oneshot::Sender<Result<Box<dyn Any + Send>>>,
}

/// Most jobs in one transaction.
const MAX_BATCH: usize = 64;

/// The queue in front of the writer.
#[derive(Clone, Debug)]
pub(crate) struct Batcher {
    queue: mpsc::Sender<Job>,
}

impl Batcher {
    /// Starts the task that runs batches on `writer`; it ends when every
    /// handle is dropped.
    pub fn spawn(writer: SqlitePool) -> Self {
        let (queue, jobs) = mpsc::channel(1024);
        tokio::spawn(run_batches(writer, jobs));
        Batcher { queue }
    }

    /// Runs a job in the next batch; answers its value once its transaction committed.
    pub async fn run(&self, run: JobFn) -> Result<Box<dyn Any + Send>> {
        self.queue(run).await?.done().await
    }

    /// Queues a job for the next batch and answers at once; the answer
    /// gives the job's value once its transaction committed. Jobs run in
    /// the order they were queued.
    pub async fn queue(&self, run: JobFn) -> Result<Queued> {
        let (reply, answer) = oneshot::channel();
        self.queue.send(Job { run, reply }).await.map_err(|_| StoreError::Corrupt("the writer has stopped".into()))?;
        Ok(Queued(answer))
    }
}

/// A job in the writer's queue.
#[derive(Debug)]
pub(crate) struct Queued(oneshot::Receiver<Result<Box<dyn Any + Send>>>);

impl Queued {
    /// The job's value once its transaction committed (or its failure).
    pub async fn done(self) -> Result<Box<dyn Any + Send>> {
        self.0.await.map_err(|_| StoreError::Corrupt("the writer has stopped".into()))?
    }
}

async fn run_batches(writer: SqlitePool, mut jobs: mpsc::Receiver<Job>) {
    while let Some(first) = jobs.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        match together(&writer, &batch).await {
            Ok(results) => {
                for (job, result) in batch.into_iter().zip(results) {
                    let _ = job.reply.send(result);
                }
            }
            Err(e) => {
                if batch.len() > 1 {
                    tracing::debug!(error = %e, jobs = batch.len(), "batch rolled back; running its jobs one by one");
                }
                for job in batch {
                    let result = alone(&writer, &job).await;
                    let _ = job.reply.send(result);
                }
            }
        }
    }
}

/// Runs every job in one transaction; Err when it had to be rolled back.
async fn together(writer: &SqlitePool, batch: &[Job]) -> Result<Vec<Result<Box<dyn Any + Send>>>> {
    let mut tx = writer.begin().await?;
    let mut results = Vec::with_capacity(batch.len());
    let mut logs = Vec::new();
    for job in batch {
        match (job.run)(&mut tx).await {
            Ok((log, value)) => {
                results.push(Ok(value));
                logs.extend(log);
            }
            Err(JobError { error, dirty: false }) => results.push(Err(error)),
            Err(JobError { error, dirty: true }) => {
                let _ = tx.rollback().await;
                return Err(error);
            }
        }
    }
    if let Err(e) = log_changes(&mut tx, &logs).await {
        let _ = tx.rollback().await;
        return Err(e);
    }
    tx.commit().await?;
    Ok(results)
}

/// Runs one job in its own transaction.
async fn alone(writer: &SqlitePool, job: &Job) -> Result<Box<dyn Any + Send>> {
    let mut tx = writer.begin().await?;
    match (job.run)(&mut tx).await {
        Ok((log, value)) => {
            log_changes(&mut tx, log.as_slice()).await?;
            tx.commit().await?;
            Ok(value)
        }
        Err(e) => Err(e.error), // dropping the transaction rolls it back
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::sqlite::SqlitePoolOptions;

    fn insert(value: i64, fail_after: bool) -> JobFn {
        Box::new(move |conn| {
            Box::pin(async move {
                sqlx::query("INSERT INTO t (v) VALUES (?1)")
                    .bind(value)
                    .execute(&mut *conn)
                    .await
                    .map_err(JobError::clean)?;
                if fail_after {
                    return Err(JobError { error: StoreError::invalid("v", "refused after writing"), dirty: true });
                }
                let log = PendingChange {
                    scope: crate::Scope::new("s", "production"),
                    ctx: quire_core::model::ChangeContext::system(),
                    entity: quire_core::model::EntityKind::Page,
                    entity_id: value.to_string(),
                    action: "update",
                    before: None,
                    after: None,
                };
                Ok((Some(log), Box::new(value) as Box<dyn Any + Send>))
            })
        })
    }

    #[tokio::test]
    async fn a_dirty_failure_rolls_back_only_itself() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("t.db").display());
        let pool = SqlitePoolOptions::new().max_connections(1).connect(&url).await.unwrap();
        sqlx::query("CREATE TABLE t (v INTEGER UNIQUE)").execute(&pool).await.unwrap();
        sqlx::query(
            "CREATE TABLE changes (id INTEGER PRIMARY KEY, site_id, env, actor, surface, session_id, turn_id, entity,
             entity_id, action, before, after, patch, prior, at)",
        )
        .execute(&pool)
        .await
        .unwrap();
        let batcher = Batcher::spawn(pool.clone());
        let (a, b, c, d) = tokio::join!(
            batcher.run(insert(1, false)),
            batcher.run(insert(2, true)),
            batcher.run(insert(3, false)),
            batcher.run(insert(1, false)), // a clean failure: unique
        );
        assert_eq!(*a.unwrap().downcast::<i64>().unwrap(), 1);
        assert!(b.unwrap_err().to_string().contains("refused after writing"));
        assert_eq!(*c.unwrap().downcast::<i64>().unwrap(), 3);
        assert!(d.is_err());
        let values: Vec<i64> = sqlx::query_scalar("SELECT v FROM t ORDER BY v").fetch_all(&pool).await.unwrap();
        assert_eq!(values, [1, 3]);
        // one change-log record per job that wrote, none for the others
        let logged: Vec<String> =
            sqlx::query_scalar("SELECT entity_id FROM changes ORDER BY entity_id").fetch_all(&pool).await.unwrap();
        assert_eq!(logged, ["1", "3"]);
    }
}
