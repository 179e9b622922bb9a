//! The store's handle on its database: the reader connections, the
//! writer's queue and the connection apart, and the one hand-off of each
//! store call to them.

use super::connection::{Conn, Synchronous, configure_sqlite};
use super::location::Location;
use super::writer::{Job, Queued, WriteFn, failed, stopped, write_loop};
use crate::{Result, StoreError};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

/// Connections that read at once.
pub(crate) const READERS: usize = 4;

/// A view laid over the database for one handle's reads and writes (a
/// release seen over the working copies): each read runs on the writer's
/// connection inside [`Overlay::read`], each write inside
/// [`Overlay::write`], which decide what the database keeps.
pub(crate) trait Overlay: Send + Sync {
    /// Runs `f`, a read, with the view in place; keeps nothing.
    fn read(&self, conn: &Conn, f: &mut dyn FnMut(&Conn) -> Result<()>) -> Result<()>;
    /// Runs `f`, a write, with the view in place; keeps what the view says.
    fn write(&self, conn: &Conn, f: &mut dyn FnMut(&Conn) -> Result<()>) -> Result<()>;
}

/// Runs `f` once inside `around` (an overlay's read or write), answering
/// its value.
fn through<T>(
    conn: &Conn,
    f: impl FnOnce(&Conn) -> Result<T>,
    around: impl FnOnce(&Conn, &mut dyn FnMut(&Conn) -> Result<()>) -> Result<()>,
) -> Result<T> {
    let (mut f, mut out) = (Some(f), None);
    around(conn, &mut |c| {
        let f = f.take().ok_or_else(|| StoreError::Corrupt("an overlay ran a call twice".into()))?;
        out = Some(f(c)?);
        Ok(())
    })?;
    out.ok_or_else(|| StoreError::Corrupt("an overlay did not run its call".into()))
}

/// The connections and the writer's thread. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Db {
    readers: Arc<Mutex<Vec<Conn>>>,
    permits: Arc<Semaphore>,
    writer: mpsc::Sender<Job>,
    apart: Arc<Mutex<Option<Conn>>>,
    closed: Arc<AtomicBool>,
    /// Set once [`Db::close`] has finished.
    shut: Arc<tokio::sync::OnceCell<()>>,
    at: Arc<Location>,
    synchronous: Synchronous,
    /// The view this handle reads and writes through, if any.
    overlay: Option<Arc<dyn Overlay>>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("at", &self.at.to_string()).finish_non_exhaustive()
    }
}

impl Db {
    /// Opens the database file (creating it), runs `setup` on the writer's
    /// connection before anything else, and starts the writer's thread.
    /// Every SQLite connection it opens, the writer's, the readers' and the
    /// one apart, syncs commits as `synchronous` says.
    ///
    /// `before_commit` runs at the end of every group commit, after its
    /// writes and outside their savepoints, if any (work they leave for once
    /// per transaction); should it fail, the whole transaction fails.
    pub async fn open(
        at: Location,
        synchronous: Synchronous,
        setup: impl FnOnce(&Conn) -> Result<()> + Send + 'static,
        before_commit: fn(&Conn) -> Result<()>,
    ) -> Result<Db> {
        configure_sqlite();
        let at = Arc::new(at);
        let opened = Arc::clone(&at);
        let writer = tokio::task::spawn_blocking(move || {
            let conn = Conn::open(&opened, synchronous, false)?;
            setup(&conn)?;
            Ok::<_, StoreError>(conn)
        })
        .await
        .map_err(|e| StoreError::Corrupt(format!("opening the database: {e}")))??;
        let (queue, jobs) = mpsc::channel(1024);
        std::thread::Builder::new()
            .name("quire-writer".into())
            .spawn({
                let at = Arc::clone(&at);
                move || write_loop(writer, jobs, before_commit, &at, synchronous)
            })
            .map_err(|e| StoreError::Corrupt(format!("starting the writer: {e}")))?;
        Ok(Db {
            readers: Arc::default(),
            permits: Arc::new(Semaphore::new(READERS)),
            writer: queue,
            apart: Arc::default(),
            closed: Arc::default(),
            shut: Arc::default(),
            at,
            synchronous,
            overlay: None,
        })
    }

    /// This database seen through `overlay`: a handle whose reads and
    /// writes all run on the writer inside it.
    pub fn with_overlay(&self, overlay: Arc<dyn Overlay>) -> Db {
        Db { overlay: Some(overlay), ..self.clone() }
    }

    /// Where the database is.
    pub fn location(&self) -> &Location {
        &self.at
    }

    /// Whether the database is PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        matches!(*self.at, Location::Postgres(_))
    }

    /// The SQLite database file; none on PostgreSQL.
    pub fn file(&self) -> Option<&Path> {
        match &*self.at {
            Location::File(path) => Some(path),
            Location::Postgres(_) => None,
        }
    }

    /// Whether [`Db::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Gives back the memory the connections' page caches hold beyond the
    /// pages in use (`PRAGMA shrink_memory` on the writer's, the one apart
    /// and every reader's, when no read is running), then the heap's free
    /// memory to the operating system. For an idle store: the next reads
    /// fetch their pages again (from the operating system's cache, most of
    /// the time). Nothing on PostgreSQL.
    pub async fn release_memory(&self) -> Result<()> {
        if self.is_postgres() || self.is_closed() {
            return Ok(());
        }
        let shrink = |c: &Conn| c.batch("PRAGMA shrink_memory");
        // Readers only when none is in use: a busy pool is no idle one.
        if let Ok(all) = Arc::clone(&self.permits).try_acquire_many_owned(READERS as u32) {
            let readers = Arc::clone(&self.readers);
            tokio::task::spawn_blocking(move || {
                let _all = all;
                readers.lock().unwrap_or_else(|p| p.into_inner()).iter().try_for_each(shrink)
            })
            .await
            .map_err(|e| StoreError::Corrupt(format!("releasing memory: {e}")))??;
        }
        self.outside(shrink).await??;
        self.apart(shrink).await?;
        super::connection::trim_heap();
        Ok(())
    }

    /// Runs `f` on a reader connection (one hand-off).
    pub async fn read<T: Send + 'static>(&self, f: impl FnOnce(&Conn) -> Result<T> + Send + 'static) -> Result<T> {
        if let Some(overlay) = &self.overlay {
            let overlay = Arc::clone(overlay);
            return self.queue_plain(move |c| through(c, f, |c, f| overlay.read(c, f))).await?.done().await;
        }
        let permit = Arc::clone(&self.permits).acquire_owned().await.map_err(|_| stopped())?;
        self.hand_off(permit, f).await
    }

    /// Runs `f` on a reader connection on tokio's blocking pool, holding
    /// `permit` until it is done.
    async fn hand_off<T: Send + 'static>(
        &self,
        permit: OwnedSemaphorePermit,
        f: impl FnOnce(&Conn) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        if self.is_closed() {
            return Err(stopped());
        }
        let readers = Arc::clone(&self.readers);
        let (at, synchronous) = (Arc::clone(&self.at), self.synchronous);
        // The permit goes with the closure: a caller that stops waiting
        // does not free a connection still in use.
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let conn = readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let conn = match conn {
                Some(c) => c,
                None => Conn::open(&at, synchronous, true)?,
            };
            let out = f(&conn);
            give_back(&readers, conn);
            out
        })
        .await
        .map_err(|e| StoreError::Corrupt(format!("a read failed: {e}")))?
    }

    /// Runs `f`, a short read (a few indexed lookups, as public delivery
    /// makes), with no hand-off at all: on SQLite, on the calling thread
    /// with a reader connection, since such a read costs less than waking a
    /// thread of the blocking pool and waiting for it to answer. When every
    /// reader is busy it waits for one here, in the permits' queue, and
    /// still runs on the calling thread: handing it off instead put it
    /// behind the other hand-offs, and while they held the readers every
    /// later short read handed off too. On PostgreSQL, where every
    /// statement is a round trip, it runs as [`Db::read`] does, and so does
    /// the read that has to open a connection first. Only for reads whose
    /// cost grows no faster than their answer's: the answer is serialized
    /// on the same thread afterwards anyway.
    pub async fn read_short<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Conn) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        if self.is_postgres() || self.is_closed() || self.overlay.is_some() {
            return self.read(f).await;
        }
        // Answered at once, it would never let a loop of reads yield: it
        // counts against the task's budget as I/O does.
        tokio::task::consume_budget().await;
        let permit = match Arc::clone(&self.permits).try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => Arc::clone(&self.permits).acquire_owned().await.map_err(|_| stopped())?,
        };
        if self.is_closed() {
            return Err(stopped());
        }
        let Some(conn) = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop() else {
            return self.hand_off(permit, f).await;
        };
        let out = f(&conn);
        give_back(&self.readers, conn);
        drop(permit);
        out
    }

    /// Runs `f` in the writer's next group commit (one hand-off) and
    /// answers its value once the transaction committed.
    pub async fn write<T: Send + 'static>(&self, f: impl FnOnce(&Conn) -> Result<T> + Send + 'static) -> Result<T> {
        self.queue(f).await?.done().await
    }

    /// Queues `f` for the writer and answers at once; the answer gives its
    /// value once its transaction committed. Writes run in the order they
    /// were queued.
    pub async fn queue<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Conn) -> Result<T> + Send + 'static,
    ) -> Result<Queued<T>> {
        match &self.overlay {
            Some(overlay) => {
                let overlay = Arc::clone(overlay);
                self.queue_plain(move |c| through(c, f, |c, f| overlay.write(c, f))).await
            }
            None => self.queue_plain(f).await,
        }
    }

    /// [`Db::queue`] with no overlay.
    async fn queue_plain<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Conn) -> Result<T> + Send + 'static,
    ) -> Result<Queued<T>> {
        if self.is_closed() {
            return Err(stopped());
        }
        let (reply, answer) = oneshot::channel::<Result<T>>();
        let job: WriteFn = Box::new(move |conn| match conn.map_err(failed).and_then(f) {
            Ok(value) => Ok(Box::new(move |committed: Result<(), &StoreError>| {
                let _ = reply.send(committed.map(|()| value).map_err(failed));
            })),
            Err(e) => {
                let _ = reply.send(Err(e));
                Err(())
            }
        });
        self.writer.send(Job::Write(job)).await.map_err(|_| stopped())?;
        Ok(Queued(answer))
    }

    /// Runs `f` on the writer's connection between two transactions.
    pub async fn outside<T: Send + 'static>(&self, f: impl FnOnce(&Conn) -> T + Send + 'static) -> Result<T> {
        if self.is_closed() {
            return Err(stopped());
        }
        let (reply, answer) = oneshot::channel();
        let job = Job::Outside(Box::new(move |conn| {
            let _ = reply.send(f(conn));
        }));
        self.writer.send(job).await.map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())
    }

    /// Runs `f` on a connection of its own, outside the pool and the
    /// writer's thread (background checkpoints), one call at a time.
    pub async fn apart<T: Send + 'static>(&self, f: impl FnOnce(&Conn) -> Result<T> + Send + 'static) -> Result<T> {
        let (at, conn, closed) = (Arc::clone(&self.at), Arc::clone(&self.apart), Arc::clone(&self.closed));
        let synchronous = self.synchronous;
        tokio::task::spawn_blocking(move || {
            let mut slot = conn.lock().unwrap_or_else(|p| p.into_inner());
            if closed.load(Ordering::Acquire) {
                return Err(stopped());
            }
            // A connection the server closed (a restart, an idle cut) is
            // replaced, as the writer's and the readers' are.
            if slot.as_ref().is_none_or(Conn::is_closed) {
                *slot = Some(Conn::open(&at, synchronous, false)?);
            }
            f(slot.as_ref().expect("opened above"))
        })
        .await
        .map_err(|e| StoreError::Corrupt(format!("a maintenance task failed: {e}")))?
    }

    /// Stops the writer once what is queued has committed, then runs
    /// `last` on its connection (outside any transaction) and closes every
    /// connection. Reads and writes after this fail.
    ///
    /// Every caller returns once the first call finished closing.
    pub async fn close(&self, last: impl FnOnce(&Conn) + Send + 'static) {
        self.shut.get_or_init(|| self.shut_down(last)).await;
    }

    async fn shut_down(&self, last: impl FnOnce(&Conn) + Send + 'static) {
        self.closed.store(true, Ordering::Release);
        // Waits for a call in progress on the connection apart, then closes
        // it; later calls are refused (the flag is set).
        let apart = Arc::clone(&self.apart);
        let _ = tokio::task::spawn_blocking(move || apart.lock().unwrap_or_else(|p| p.into_inner()).take()).await;
        // Waits for reads in progress and drops their connections, so the
        // last task (a TRUNCATE checkpoint) waits for no reader.
        let all = self.permits.acquire_many(READERS as u32).await;
        self.readers.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.permits.close();
        drop(all);
        let (done, stopped) = oneshot::channel();
        if self.writer.send(Job::Close(Box::new(last), done)).await.is_ok() {
            let _ = stopped.await;
        }
    }
}

/// Returns a reader's connection to the pool after a read: a transaction
/// the read left open is rolled back, and a connection the server closed
/// is dropped (the next read opens another).
fn give_back(readers: &Mutex<Vec<Conn>>, conn: Conn) {
    if conn.in_transaction() {
        let _ = conn.batch("ROLLBACK");
    }
    if !conn.is_closed() {
        readers.lock().unwrap_or_else(|p| p.into_inner()).push(conn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::query_scalar;

    #[tokio::test]
    async fn a_short_read_that_finds_every_reader_busy_waits_for_one_on_its_own_thread() {
        let dir = tempfile::tempdir().unwrap();
        let at = Location::File(dir.path().join("t.db"));
        let db = Db::open(at, Synchronous::default(), |_| Ok(()), |_| Ok(())).await.unwrap();
        // One reader connection pooled, then every permit taken.
        db.read(|c| query_scalar::<i64>("SELECT 1").fetch_one(c)).await.unwrap();
        let busy = Arc::clone(&db.permits).acquire_many_owned(READERS as u32).await.unwrap();
        let short = tokio::spawn({
            let db = db.clone();
            async move {
                db.read_short(|c| Ok((std::thread::current().id(), query_scalar::<i64>("SELECT 2").fetch_one(c)?)))
                    .await
            }
        });
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(!short.is_finished(), "a short read ran without a permit");
        drop(busy);
        // The test's runtime has one thread: the task ran on it, not on the
        // blocking pool's.
        let (on, two) = short.await.unwrap().unwrap();
        assert_eq!((on, two), (std::thread::current().id(), 2));
    }
}
