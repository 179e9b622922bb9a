//! Events between processes: the events emitted here are stored, those
//! other processes stored reach the streams open here, and the process's
//! heartbeat tells the others its turns are alive.

use super::Runtime;
use super::error::AgentError;
use crate::events::{Event, Outgoing};
use chrono::{DateTime, Utc};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::broadcast::Receiver;

/// How often the relay stores the events emitted here.
const RELAY_EVERY: Duration = Duration::from_millis(50);
/// Every how many relay ticks events stored by other processes are read
/// for the streams open here (every 250 ms).
const FOLLOW_TICKS: u64 = 5;
/// How far back following reads again, for events stored late (a batch of
/// another process committed after a later one).
const FOLLOW_BACK: Duration = Duration::from_secs(5);
/// Most events of one session read by one follow.
const FOLLOW_LIMIT: u32 = 2_000;
/// How often the process beats while it runs turns.
const HEARTBEAT_EVERY: Duration = Duration::from_secs(2);
/// Every how many relay ticks old stored events are forgotten (every 10
/// min, and at the first tick).
const PRUNE_TICKS: u64 = 12_000;
/// Most events kept for the database while it cannot be written.
const OUTBOX_MAX: usize = 50_000;
/// How long stored events are kept: long after any stream reconnects.
const KEEP_STORED: Duration = Duration::from_secs(3600);

impl Runtime {
    /// Stores the events emitted here and not stored yet, after those
    /// another call is storing; a batch that could not be stored is kept
    /// for the next call (up to [`OUTBOX_MAX`] events).
    pub async fn flush_events(&self) {
        let _order = self.flushing.lock().await;
        let outgoing = self.hub.take_outbox();
        if outgoing.is_empty() {
            return;
        }
        match self.store().append_events(&outgoing).await {
            Ok(()) => self.flush_failures.store(0, Ordering::Relaxed),
            // A batch the database keeps refusing is given up after a few
            // tries rather than holding back every event after it.
            Err(e) if self.flush_failures.fetch_add(1, Ordering::Relaxed) >= 3 => {
                self.flush_failures.store(0, Ordering::Relaxed);
                tracing::error!(error = %e, events = outgoing.len(), "agent events could not be stored; given up");
            }
            Err(e) => self.keep_for_later(outgoing, &e),
        }
    }

    /// Stores a session's events emitted here and not stored yet, ahead of
    /// the others (a new run's start, before its caller hears of it), where
    /// other processes serve the same database (PostgreSQL; on a SQLite
    /// file the relay stores them within 50 ms).
    pub(super) async fn flush_session(&self, session: &str) {
        if !matches!(self.store().location(), quire_store::Location::Postgres(_)) {
            return;
        }
        let _order = self.flushing.lock().await;
        let outgoing = self.hub.take_outbox_of(session);
        if outgoing.is_empty() {
            return;
        }
        if let Err(e) = self.store().append_events(&outgoing).await {
            self.keep_for_later(outgoing, &e);
        }
    }

    /// Puts back a batch the database refused, for the next flush.
    fn keep_for_later(&self, outgoing: Vec<Outgoing>, e: &quire_store::StoreError) {
        tracing::warn!(error = %e, events = outgoing.len(), "could not store agent events; kept to try again");
        self.hub.put_back(outgoing, OUTBOX_MAX);
    }

    /// Reads what other processes stored for the streams open here (the
    /// runs they emit, and what they add to runs emitted here), from a
    /// little before the last event each stream's session holds.
    async fn follow(&self) {
        let back = FOLLOW_BACK.as_micros() as u64;
        for (session, last) in self.hub.followed() {
            // Pages until one comes back short, so a busy session (more
            // than a page within the look-back) is never stuck on it.
            let mut from = last.saturating_sub(back);
            loop {
                let page = match self.store().events_since(&[(session.clone(), from)], FOLLOW_LIMIT).await {
                    Ok(page) => page,
                    Err(e) => {
                        tracing::warn!(error = %e, "could not read agent events");
                        return;
                    }
                };
                let full = page.len() as u32 == FOLLOW_LIMIT;
                from = page.last().map_or(from, |(_, id, _)| *id);
                let events = page.into_iter().filter_map(|(_, id, data)| stored_event(id, &data)).collect();
                self.hub.deliver(&session, events, true);
                if !full {
                    break;
                }
            }
        }
    }

    /// Where a client showing a session's stored conversation follows its
    /// stream on from: the last event so far, so nothing it shows is
    /// replayed (0 when none is kept). A run that ended a while ago has left
    /// memory, but its events stay stored for an hour.
    pub async fn last_event_id(&self, session: &str) -> Result<u64, AgentError> {
        let here = self.hub.last_id(session);
        if here > 0 {
            return Ok(here);
        }
        Ok(self.store().events_after(session, None).await?.last().map_or(0, |(id, _)| *id))
    }

    /// When the latest run of a session started, while its events are
    /// kept: what a client showing the conversation during a run leaves to
    /// the stream, which replays that run from its start.
    pub async fn latest_run_start(&self, session: &str) -> Result<Option<DateTime<Utc>>, AgentError> {
        let (backlog, _) = self.subscribe(session, None).await?;
        Ok(backlog
            .first()
            .filter(|e| e.kind() == "RUN_STARTED")
            .and_then(|e| e.data.get("timestamp")?.as_i64())
            .and_then(DateTime::from_timestamp_millis))
    }

    /// A session's events to replay and a receiver of those to come (see
    /// [`EventHub::subscribe`]): after `last_id` when given, else from the
    /// latest run's start. A session whose run is not emitted here (it runs
    /// in another process, or ran before a restart) is read from the
    /// database first, and followed there. The receiver may also get
    /// events stored late with ids before the replay's last: a stream
    /// skips those before where it started.
    pub async fn subscribe(
        &self,
        session: &str,
        last_id: Option<u64>,
    ) -> Result<(Vec<Event>, Receiver<Event>), AgentError> {
        if !self.hub.runs_here(session) {
            let stored = self.store().events_after(session, last_id).await?;
            let events = stored.into_iter().filter_map(|(id, data)| stored_event(id, &data)).collect();
            // Streams already open here get what they missed too; the new
            // one subscribes after, so it gets nothing twice.
            self.hub.deliver(session, events, true);
        }
        Ok(self.hub.subscribe(session, last_id))
    }
}

/// An event as the database holds it; none when its data is not JSON.
fn stored_event(id: u64, data: &str) -> Option<Event> {
    serde_json::from_str(data).ok().map(|data| Event { id, data })
}

/// Starts a runtime's relay and heartbeat on the current Tokio runtime, if
/// there is one; both end with the runtime.
pub(super) fn start(runtime: &Arc<Runtime>) {
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        runtime.hub.persist();
        handle.spawn(relay(Arc::downgrade(runtime)));
        handle.spawn(heartbeat(runtime.store().clone(), Arc::downgrade(&runtime.running)));
    }
}

/// Ticks every `period`, late ticks delayed rather than bunched.
fn ticks(period: Duration) -> tokio::time::Interval {
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick
}

/// The relay of a runtime (see [`Runtime::new`]): stores the events
/// emitted here, reads those stored elsewhere for the streams open here and
/// forgets old events; ends with the runtime.
async fn relay(runtime: Weak<Runtime>) {
    let mut tick = ticks(RELAY_EVERY);
    for n in 0u64.. {
        tick.tick().await;
        let Some(runtime) = runtime.upgrade() else { break };
        runtime.flush_events().await;
        if n % FOLLOW_TICKS == 0 {
            runtime.follow().await;
        }
        if n % PRUNE_TICKS == 0
            && let Err(e) = runtime.store().prune_events(KEEP_STORED).await
        {
            tracing::debug!(error = %e, "could not forget old agent events");
        }
    }
}

/// The process's heartbeat, every [`HEARTBEAT_EVERY`] while turns run here
/// (see [`quire_store::Store::heartbeat`]), on a task of its own so that no other work
/// delays it; ends with the runtime.
async fn heartbeat(store: quire_store::Store, running: Weak<AtomicU64>) {
    let mut tick = ticks(HEARTBEAT_EVERY);
    loop {
        tick.tick().await;
        let Some(running) = running.upgrade() else { break };
        if running.load(Ordering::Relaxed) > 0
            && let Err(e) = store.heartbeat().await
        {
            tracing::warn!(error = %e, "could not write the process's heartbeat");
        }
    }
}
