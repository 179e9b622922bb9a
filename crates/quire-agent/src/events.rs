//! The event stream of each session, in AG-UI 1.0 event names: a bounded
//! in-memory log per session (for replay with Last-Event-ID) and a
//! broadcast channel for live subscribers.
//!
//! Across processes: once [`EventHub::persist`] was called, every event
//! emitted here is also queued for the database ([`EventHub::take_outbox`]),
//! and events another process stored are delivered to this one's
//! subscribers with [`EventHub::deliver`] (of the sessions
//! [`EventHub::followed`] names: subscribed here, run elsewhere). Event ids
//! follow the clock (microseconds, and always past every id seen), so they
//! increase across processes whose clocks agree. A run's events have even
//! ids and events aside from runs (a job's progress, which another process
//! may emit into a session run here) odd ones, so a run's event never
//! shares its id with progress from another process; two processes'
//! progress in one session within the same microsecond still can.
//!
//! Memory stays flat: a session's log is dropped a while after its run ended
//! (or paused), and only so many ended sessions are kept at all; dropping a
//! log ends its subscribers' streams. A client reconnecting after that reads
//! the session's persisted messages instead. The broadcast channel of a
//! session exists only once someone subscribed.

use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::broadcast;

/// Events kept per session for replay.
const KEEP: usize = 4096;
/// Live events a subscriber may fall behind by before it skips some.
const LIVE: usize = 1024;
/// Sessions whose run ended whose events are kept, at most.
pub const KEEP_ENDED: usize = 256;
/// How long the events of a session whose run ended are kept.
pub const KEEP_FOR: Duration = Duration::from_secs(120);

/// One event: its id (for Last-Event-ID) and its JSON (`type` included).
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Increases across all sessions and, being seeded from the clock, across restarts.
    pub id: u64,
    /// The AG-UI event object.
    pub data: Value,
}

impl Event {
    /// The event type (`RUN_STARTED`, ...).
    pub fn kind(&self) -> &str {
        self.data.get("type").and_then(Value::as_str).unwrap_or_default()
    }
}

struct Log {
    events: VecDeque<Event>,
    /// The highest id seen (emitted, delivered, or resumed after).
    last: u64,
    /// Whether its current run is emitted by this process.
    here: bool,
    /// Id of the latest RUN_STARTED: where a subscriber without Last-Event-ID starts.
    run_start: u64,
    /// Made by the first subscriber.
    live: Option<broadcast::Sender<Event>>,
    /// When its run ended (or it was opened without one): it may be dropped.
    ended: Option<Instant>,
}

impl Log {
    fn new() -> Self {
        Log { events: VecDeque::new(), last: 0, here: false, run_start: 0, live: None, ended: None }
    }
}

struct Logs {
    by_session: HashMap<String, Log>,
    /// Sessions in the order their run ended, with when (stale entries of a
    /// session that ran again are skipped).
    ended: VecDeque<(Instant, String)>,
}

/// An event on its way to the database: `(session, id, kind, data)`.
pub type Outgoing = (String, u64, String, String);

/// Every session's events.
pub struct EventHub {
    /// The last id given (or seen).
    next: AtomicU64,
    logs: Mutex<Logs>,
    /// Events emitted here not yet stored; None while not persisting.
    outbox: Mutex<Option<Vec<Outgoing>>>,
    keep_ended: usize,
    keep_for: Duration,
}

impl Default for EventHub {
    fn default() -> Self {
        Self::with_limits(KEEP_ENDED, KEEP_FOR)
    }
}

impl Logs {
    /// Marks a session's log as ended now.
    fn end(&mut self, session: &str, now: Instant) {
        if let Some(log) = self.by_session.get_mut(session) {
            log.ended = Some(now);
            self.ended.push_back((now, session.to_string()));
        }
    }

    /// Drops the logs of sessions that ended longer than `keep_for` ago, and
    /// the oldest ended ones beyond `keep_ended`.
    fn prune(&mut self, keep_ended: usize, keep_for: Duration, now: Instant) {
        while let Some((at, session)) = self.ended.front() {
            if self.ended.len() <= keep_ended && now.duration_since(*at) < keep_for {
                break;
            }
            let (at, session) = (*at, session.clone());
            self.ended.pop_front();
            if self.by_session.get(&session).is_some_and(|log| log.ended == Some(at)) {
                // Dropping the sender ends every subscriber's stream.
                self.by_session.remove(&session);
            }
        }
    }
}

impl EventHub {
    /// A hub that keeps the events of at most `keep_ended` sessions whose
    /// run ended, each for at most `keep_for` after it ended.
    pub fn with_limits(keep_ended: usize, keep_for: Duration) -> Self {
        EventHub {
            next: AtomicU64::new(0),
            logs: Mutex::new(Logs { by_session: HashMap::new(), ended: VecDeque::new() }),
            outbox: Mutex::new(None),
            keep_ended,
            keep_for,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Logs> {
        self.logs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next id of the given parity (0 for a run's events, 1 for those
    /// aside): the clock in microseconds, or past the last id given or
    /// seen when that is later.
    fn next_id(&self, parity: u64) -> u64 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(1);
        let after = |last: u64| {
            let id = now.max(last + 1);
            id + (id % 2 != parity) as u64
        };
        let previous =
            self.next.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |last| Some(after(last))).unwrap_or(0);
        after(previous)
    }

    /// Queues every event emitted from now on for the database.
    pub fn persist(&self) {
        let mut outbox = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
        outbox.get_or_insert_with(Vec::new);
    }

    /// The events emitted since the last call, in order, to store.
    pub fn take_outbox(&self) -> Vec<Outgoing> {
        let mut outbox = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
        outbox.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The events of one session emitted since the last call, in order,
    /// to store ahead of the others.
    pub fn take_outbox_of(&self, session: &str) -> Vec<Outgoing> {
        let mut outbox = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
        let Some(queued) = outbox.as_mut() else { return Vec::new() };
        let (mine, rest) = std::mem::take(queued).into_iter().partition(|e| e.0 == session);
        *queued = rest;
        mine
    }

    /// Puts events that could not be stored back before those emitted
    /// since, keeping at most `max` (the newest).
    pub fn put_back(&self, mut events: Vec<Outgoing>, max: usize) {
        let mut outbox = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(queued) = outbox.as_mut() {
            events.append(queued);
            let over = events.len().saturating_sub(max);
            events.drain(..over);
            *queued = events;
        }
    }

    /// Appends an event of `kind` with `fields` to a session's stream.
    /// `RUN_STARTED` opens a run; `RUN_FINISHED` and `RUN_ERROR` end it,
    /// after which the session's events are kept only for a while.
    pub fn emit(&self, session: &str, kind: &str, fields: Value) -> Event {
        self.emit_with(session, kind, fields, 0)
    }

    fn emit_with(&self, session: &str, kind: &str, fields: Value, parity: u64) -> Event {
        let mut data = json!({ "type": kind, "timestamp": chrono::Utc::now().timestamp_millis() });
        if let (Some(obj), Value::Object(extra)) = (data.as_object_mut(), fields) {
            obj.extend(extra);
        }
        let mut logs = self.lock();
        // The id is taken under the lock, so the outbox is in id order.
        let event = Event { id: self.next_id(parity), data };
        if let Some(outbox) = self.outbox.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            outbox.push((session.to_string(), event.id, kind.to_string(), event.data.to_string()));
        }
        self.append(&mut logs, session, event.clone(), true, Some(0));
        event
    }

    /// Adds an event to a session's log in id order (an event whose id the
    /// log holds already is skipped: answers false) and sends it to
    /// subscribers when `live` gives a floor its id is not below. `here`
    /// says whether this process emitted it.
    fn append(&self, logs: &mut Logs, session: &str, event: Event, here: bool, live: Option<u64>) -> bool {
        let log = match logs.by_session.get_mut(session) {
            Some(log) => log,
            None => logs.by_session.entry(session.to_string()).or_insert_with(Log::new),
        };
        if log.events.back().is_none_or(|e| e.id < event.id) {
            log.events.push_back(event.clone());
        } else {
            let at = log.events.partition_point(|e| e.id < event.id);
            if log.events.get(at).is_some_and(|e| e.id == event.id) {
                return false;
            }
            log.events.insert(at, event.clone());
        }
        while log.events.len() > KEEP {
            log.events.pop_front();
        }
        let kind = event.kind().to_string();
        if kind == "RUN_STARTED" && event.id > log.run_start {
            log.run_start = event.id;
            if here {
                log.ended = None;
                log.here = true;
            }
        }
        log.last = log.last.max(event.id);
        if live.is_some_and(|floor| event.id >= floor)
            && let Some(sender) = &log.live
        {
            let _ = sender.send(event);
        }
        if here && matches!(kind.as_str(), "RUN_FINISHED" | "RUN_ERROR") {
            log.here = false;
            let now = Instant::now();
            logs.end(session, now);
            logs.prune(self.keep_ended, self.keep_for, now);
        }
        true
    }

    /// Adds events another process stored to a session's log, in id order
    /// and each once; `live` sends those new to it and not older than all
    /// it held to the subscribers (as following does; a backlog read for a
    /// new subscriber is not sent).
    /// Ids given here later are past them. A log not run here is kept like
    /// an ended run's, for a while after events last reached it.
    pub fn deliver(&self, session: &str, events: Vec<Event>, live: bool) {
        let mut logs = self.lock();
        // Events older than all the log held are history for replays, not news.
        let floor = logs.by_session.get(session).and_then(|l| l.events.front()).map_or(0, |e| e.id);
        let live = live.then_some(floor);
        let mut delivered = false;
        for event in events {
            self.next.fetch_max(event.id, Ordering::Relaxed);
            delivered |= self.append(&mut logs, session, event, false, live);
        }
        let now = Instant::now();
        let log = logs.by_session.entry(session.to_string()).or_insert_with(Log::new);
        let refresh = log.ended.is_none_or(|at| delivered && now.duration_since(at) > self.keep_for / 4);
        if !log.here && refresh {
            logs.end(session, now);
        }
    }

    /// Forgets that a session's run is emitted here (another process took
    /// it over): its log is kept like an ended run's.
    pub fn abandon(&self, session: &str) {
        let mut logs = self.lock();
        if let Some(log) = logs.by_session.get_mut(session) {
            log.here = false;
            logs.end(session, Instant::now());
        }
    }

    /// The highest id of a session's events in memory, 0 when none: where
    /// a client that shows the stored conversation follows on from, so it
    /// does not replay the latest run over it.
    pub fn last_id(&self, session: &str) -> u64 {
        self.lock().by_session.get(session).map_or(0, |l| l.last)
    }

    /// Whether a session's current run is emitted by this process.
    pub fn runs_here(&self, session: &str) -> bool {
        self.lock().by_session.get(session).is_some_and(|l| l.here)
    }

    /// The sessions someone here subscribed to, each with the highest id
    /// in memory: those to follow in the database (for runs elsewhere, and
    /// what other processes add to runs here, such as a job's progress).
    pub fn followed(&self) -> Vec<(String, u64)> {
        let logs = self.lock();
        logs.by_session
            .iter()
            .filter(|(_, log)| log.live.as_ref().is_some_and(|l| l.receiver_count() > 0))
            .map(|(session, log)| (session.clone(), log.last))
            .collect()
    }

    /// Appends an event that is no part of a run (a background job's
    /// progress) to a session's stream: its subscribers get it live and
    /// replay it like any other; a session with no events in memory gets a
    /// log that is dropped like an ended run's.
    pub fn emit_aside(&self, session: &str, kind: &str, fields: Value) -> Event {
        let fresh = !self.lock().by_session.contains_key(session);
        let event = self.emit_with(session, kind, fields, 1);
        if fresh {
            let mut logs = self.lock();
            if logs.by_session.get(session).is_some_and(|l| l.ended.is_none() && l.run_start == 0) {
                let now = Instant::now();
                logs.end(session, now);
                logs.prune(self.keep_ended, self.keep_for, now);
            }
        }
        event
    }

    /// The events to replay and a receiver of the ones to come, taken
    /// together so none is missed or repeated: after `last_id` when given,
    /// else from the latest run's start. The receiver closes when the
    /// session's events are dropped (a while after its run ended).
    pub fn subscribe(&self, session: &str, last_id: Option<u64>) -> (Vec<Event>, broadcast::Receiver<Event>) {
        let mut logs = self.lock();
        let now = Instant::now();
        logs.prune(self.keep_ended, self.keep_for, now);
        if !logs.by_session.contains_key(session) {
            // No run in memory (none yet, or dropped): the log ends like one.
            logs.by_session.insert(session.to_string(), Log::new());
            logs.end(session, now);
        }
        let log = logs.by_session.get_mut(session).expect("inserted above");
        let from = last_id.map(|id| id.saturating_add(1)).unwrap_or(log.run_start);
        let backlog = log.events.iter().filter(|e| e.id >= from).cloned().collect();
        let receiver = match &log.live {
            Some(live) => live.subscribe(),
            None => {
                let (live, receiver) = broadcast::channel(LIVE);
                log.live = Some(live);
                receiver
            }
        };
        (backlog, receiver)
    }

    /// Drops the events of sessions that ended long enough ago (also done
    /// on every end of a run and every subscription).
    pub fn prune(&self) {
        self.lock().prune(self.keep_ended, self.keep_for, Instant::now());
    }

    /// How many sessions' events are in memory.
    pub fn sessions(&self) -> usize {
        self.lock().by_session.len()
    }

    /// Every kept event of a session (tests and diagnostics).
    pub fn history(&self, session: &str) -> Vec<Event> {
        let logs = self.lock();
        logs.by_session.get(session).map(|l| l.events.iter().cloned().collect()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscribers_replay_from_the_run_or_after_the_last_id() {
        let hub = EventHub::default();
        hub.emit("s", "RUN_STARTED", json!({}));
        hub.emit("s", "RUN_FINISHED", json!({}));
        let second = hub.emit("s", "RUN_STARTED", json!({}));
        let text = hub.emit("s", "TEXT_MESSAGE_START", json!({}));
        let (backlog, _) = hub.subscribe("s", None);
        assert_eq!(backlog.iter().map(|e| e.id).collect::<Vec<_>>(), vec![second.id, text.id]);
        let (after, mut rx) = hub.subscribe("s", Some(second.id));
        assert_eq!(after, vec![text]);
        let live = hub.emit("s", "RUN_FINISHED", json!({ "outcome": { "type": "success" } }));
        assert_eq!(rx.try_recv().unwrap(), live);
        assert_eq!(hub.subscribe("other", None).0, vec![]);
    }

    #[test]
    fn a_runs_events_and_those_aside_never_share_an_id_across_processes() {
        // Two processes whose clocks agree: one runs the session, the other
        // reports a job's progress into it, each as fast as it can.
        let (runner, worker) = (EventHub::default(), EventHub::default());
        let mut ids = Vec::new();
        for _ in 0..2_000 {
            ids.push(runner.emit("s", "TEXT_MESSAGE_CONTENT", json!({})).id);
            ids.push(worker.emit_aside("s", "CUSTOM", json!({})).id);
        }
        let (run, aside): (Vec<u64>, Vec<u64>) = ids.iter().partition(|id| *id % 2 == 0);
        assert_eq!((run.len(), aside.len()), (2_000, 2_000), "a run's ids even, aside odd");
        let distinct: std::collections::HashSet<&u64> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
        // Each process's ids still increase, whichever kind it emits.
        let mixed = EventHub::default();
        let sequence: Vec<u64> = (0..100)
            .map(|i| {
                if i % 3 == 0 {
                    mixed.emit_aside("t", "CUSTOM", json!({})).id
                } else {
                    mixed.emit("t", "X", json!({})).id
                }
            })
            .collect();
        assert!(sequence.windows(2).all(|w| w[0] < w[1]), "{sequence:?}");
    }

    #[test]
    fn ended_sessions_are_dropped_by_count_and_their_streams_close() {
        let hub = EventHub::with_limits(2, Duration::from_secs(3600));
        let (_, mut first) = hub.subscribe("s0", None);
        for s in ["s0", "s1", "s2"] {
            hub.emit(s, "RUN_STARTED", json!({}));
        }
        assert!(matches!(first.try_recv(), Ok(e) if e.kind() == "RUN_STARTED"));
        hub.emit("s0", "RUN_FINISHED", json!({}));
        assert!(matches!(first.try_recv(), Ok(e) if e.kind() == "RUN_FINISHED"));
        hub.emit("s1", "RUN_FINISHED", json!({}));
        // A running session is never dropped, however many ended.
        assert_eq!(hub.sessions(), 3);
        hub.emit("s2", "RUN_ERROR", json!({}));
        assert_eq!(hub.sessions(), 2, "the oldest ended session was dropped");
        assert!(hub.history("s0").is_empty());
        assert_eq!(first.try_recv(), Err(broadcast::error::TryRecvError::Closed), "its stream ended");
        assert_eq!(hub.history("s1").len(), 2);
        // A session that runs again is not dropped for its earlier end.
        hub.emit("s1", "RUN_STARTED", json!({}));
        for i in 0..5 {
            let s = format!("x{i}");
            hub.emit(&s, "RUN_STARTED", json!({}));
            hub.emit(&s, "RUN_FINISHED", json!({}));
        }
        assert_eq!(hub.history("s1").len(), 3, "the running session kept its events");
        assert_eq!(hub.sessions(), 3, "s1 and the two latest ended sessions");
    }

    #[test]
    fn events_aside_a_run_never_keep_a_session_forever() {
        let hub = EventHub::with_limits(100, Duration::from_millis(30));
        // A session whose events already left memory: kept like an ended run.
        hub.emit_aside("gone", "CUSTOM", json!({ "name": "job_progress" }));
        let (backlog, _) = hub.subscribe("gone", None);
        assert_eq!(backlog.len(), 1, "a subscriber still replays it");
        // A running session keeps running.
        hub.emit("live", "RUN_STARTED", json!({}));
        let (_, mut rx) = hub.subscribe("live", None);
        let aside = hub.emit_aside("live", "CUSTOM", json!({ "name": "job_progress" }));
        assert_eq!(rx.try_recv().unwrap(), aside);
        std::thread::sleep(Duration::from_millis(40));
        hub.prune();
        assert!(hub.history("gone").is_empty());
        assert_eq!(hub.history("live").len(), 2);
    }

    #[test]
    fn ended_sessions_are_dropped_after_a_while() {
        let hub = EventHub::with_limits(100, Duration::from_millis(30));
        hub.emit("s", "RUN_STARTED", json!({}));
        hub.emit("s", "RUN_FINISHED", json!({}));
        let (backlog, mut rx) = hub.subscribe("s", None);
        assert_eq!(backlog.len(), 2);
        // Subscribing to a session with no run in memory keeps nothing for long either.
        let (none, mut idle) = hub.subscribe("idle", None);
        assert!(none.is_empty());
        hub.prune();
        assert_eq!(hub.sessions(), 2);
        std::thread::sleep(Duration::from_millis(40));
        hub.prune();
        assert_eq!(hub.sessions(), 0);
        assert_eq!(rx.try_recv(), Err(broadcast::error::TryRecvError::Closed));
        assert_eq!(idle.try_recv(), Err(broadcast::error::TryRecvError::Closed));
        // A later run starts a new log.
        hub.emit("s", "RUN_STARTED", json!({}));
        assert_eq!(hub.history("s").len(), 1);
    }
}
