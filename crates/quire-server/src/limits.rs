//! Fair use of the API: at most so many requests a minute per token or
//! person (`requests_per_minute`), shared by every replica through the
//! database ([decision 0047](../../../docs/decisions/0047-fair-use-in-the-database.md)).
//!
//! A request costs a map lookup under a mutex: each process admits against
//! the last shared count it read plus what it admitted since, and adds its
//! counts to the database at most once a second, in one write for every
//! key, reading the totals back. So a key may exceed its limit by what the
//! other replicas admitted for it since their last flush.

use crate::error::ApiError;
use chrono::Utc;
use quire_store::{Store, UsageAdd};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

/// The window requests are counted in, in seconds.
const WINDOW: i64 = 60;
/// How often counts are added to the database at most, in milliseconds.
const FLUSH_EVERY_MS: i64 = 1000;

/// The request limit of one process, and its counts not yet shared.
pub struct RequestLimits {
    /// Requests a minute per token or person; 0: no limit.
    per_minute: i64,
    store: Store,
    counts: Mutex<HashMap<String, Count>>,
    /// When counts were last flushed, in milliseconds since 1970.
    flushed_at: AtomicI64,
}

/// One key's count in the current window.
#[derive(Debug, Default, Clone, Copy)]
struct Count {
    /// The window's start, in seconds since 1970.
    window: i64,
    /// Admitted here and not yet added to the database.
    pending: i64,
    /// The count every replica made, as last read (this one's flushed counts included).
    shared: i64,
}

impl RequestLimits {
    /// `per_minute` requests a minute per actor (0: none), shared through `store`.
    pub fn new(store: Store, per_minute: u32) -> Self {
        let per_minute = i64::from(per_minute);
        Self { per_minute, store, counts: Mutex::new(HashMap::new()), flushed_at: AtomicI64::new(0) }
    }

    /// Whether requests are limited at all.
    pub fn is_on(&self) -> bool {
        self.per_minute > 0
    }

    /// Counts a request of `actor` (`token:<id>` or `user:<id>`), or
    /// refuses it with 429 and the seconds until its window ends.
    pub fn admit(self: &Arc<Self>, actor: &str) -> Result<(), ApiError> {
        if self.per_minute == 0 {
            return Ok(());
        }
        let now_ms = Utc::now().timestamp_millis();
        let now = now_ms.div_euclid(1000);
        let window = now - now.rem_euclid(WINDOW);
        let admitted = match self.counts.lock() {
            Ok(mut counts) => {
                // The key is copied only the first time it is seen.
                if !counts.contains_key(actor) {
                    counts.insert(actor.to_string(), Count::default());
                }
                let Some(count) = counts.get_mut(actor) else { return Ok(()) };
                if count.window != window {
                    *count = Count { window, ..Count::default() };
                }
                let free = count.shared + count.pending < self.per_minute;
                count.pending += i64::from(free);
                free
            }
            // A poisoned map admits: fair use never takes the API down.
            Err(_) => true,
        };
        self.flush_soon(now_ms);
        if admitted {
            return Ok(());
        }
        let wait = (window + WINDOW - now).max(1) as u64;
        Err(ApiError::too_many(
            format!("at most {} requests a minute per token or person; try again in {wait} s", self.per_minute),
            wait,
        ))
    }

    /// Starts a flush when the last was a second ago or more (one at a time).
    fn flush_soon(self: &Arc<Self>, now_ms: i64) {
        let last = self.flushed_at.load(Ordering::Relaxed);
        if now_ms - last < FLUSH_EVERY_MS
            || self.flushed_at.compare_exchange(last, now_ms, Ordering::AcqRel, Ordering::Relaxed).is_err()
        {
            return;
        }
        let this = Arc::clone(self);
        tokio::spawn(async move { this.flush().await });
    }

    /// Adds the counts admitted since the last flush to the database and
    /// reads every replica's totals back; forgets keys of past windows.
    pub async fn flush(&self) {
        let now = Utc::now().timestamp();
        let current = now - now.rem_euclid(WINDOW);
        let taken: Vec<(String, i64, i64)> = match self.counts.lock() {
            Ok(mut counts) => {
                counts.retain(|_, c| c.window >= current || c.pending > 0);
                counts
                    .iter_mut()
                    .filter(|(_, c)| c.pending > 0)
                    .map(|(actor, c)| {
                        let n = std::mem::take(&mut c.pending);
                        c.shared += n;
                        (actor.clone(), c.window, n)
                    })
                    .collect()
            }
            Err(_) => return,
        };
        if taken.is_empty() {
            return;
        }
        let adds = taken
            .iter()
            .map(|(actor, window, n)| UsageAdd { key: format!("requests:{actor}"), window_start: *window, by: *n })
            .collect();
        match self.store.add_usage(adds).await {
            Ok(totals) => {
                let Ok(mut counts) = self.counts.lock() else { return };
                for ((actor, window, _), total) in taken.iter().zip(totals) {
                    if let Some(c) = counts.get_mut(actor).filter(|c| c.window == *window) {
                        c.shared = c.shared.max(total);
                    }
                }
            }
            // Counted here all the same; the next flush tries again with new counts only.
            Err(e) => tracing::warn!(error = %e, "request counts not shared"),
        }
    }
}
