//! The event stream of each session, in AG-UI 1.0 event names: a bounded
//! in-memory log per session (for replay with Last-Event-ID) and a
//! broadcast channel for live subscribers.

use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::broadcast;

/// Events kept per session for replay.
const KEEP: usize = 4096;

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
    /// Id of the latest RUN_STARTED: where a subscriber without Last-Event-ID starts.
    run_start: u64,
    live: broadcast::Sender<Event>,
}

impl Log {
    fn new() -> Self {
        Log { events: VecDeque::new(), run_start: 0, live: broadcast::channel(1024).0 }
    }
}

/// Every session's events.
pub struct EventHub {
    next: AtomicU64,
    logs: Mutex<HashMap<String, Log>>,
}

impl Default for EventHub {
    fn default() -> Self {
        let micros = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(1);
        EventHub { next: AtomicU64::new(micros), logs: Mutex::new(HashMap::new()) }
    }
}

impl EventHub {
    /// Appends an event of `kind` with `fields` to a session's stream.
    pub fn emit(&self, session: &str, kind: &str, fields: Value) -> Event {
        let mut data = json!({ "type": kind, "timestamp": chrono::Utc::now().timestamp_millis() });
        if let (Some(obj), Value::Object(extra)) = (data.as_object_mut(), fields) {
            obj.extend(extra);
        }
        let event = Event { id: self.next.fetch_add(1, Ordering::Relaxed), data };
        let mut logs = self.logs.lock().unwrap_or_else(|e| e.into_inner());
        let log = logs.entry(session.to_string()).or_insert_with(Log::new);
        if kind == "RUN_STARTED" {
            log.run_start = event.id;
        }
        log.events.push_back(event.clone());
        while log.events.len() > KEEP {
            log.events.pop_front();
        }
        let _ = log.live.send(event.clone());
        event
    }

    /// The events to replay and a receiver of the ones to come, taken
    /// together so none is missed or repeated: after `last_id` when given,
    /// else from the latest run's start.
    pub fn subscribe(&self, session: &str, last_id: Option<u64>) -> (Vec<Event>, broadcast::Receiver<Event>) {
        let mut logs = self.logs.lock().unwrap_or_else(|e| e.into_inner());
        let log = logs.entry(session.to_string()).or_insert_with(Log::new);
        let from = last_id.map(|id| id + 1).unwrap_or(log.run_start);
        let backlog = log.events.iter().filter(|e| e.id >= from).cloned().collect();
        (backlog, log.live.subscribe())
    }

    /// Every kept event of a session (tests and diagnostics).
    pub fn history(&self, session: &str) -> Vec<Event> {
        let logs = self.logs.lock().unwrap_or_else(|e| e.into_inner());
        logs.get(session).map(|l| l.events.iter().cloned().collect()).unwrap_or_default()
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
        let live = hub.emit("s", "RUN_FINISHED", json!({ "outcome": "success" }));
        assert_eq!(rx.try_recv().unwrap(), live);
        assert_eq!(hub.subscribe("other", None).0, vec![]);
    }
}
