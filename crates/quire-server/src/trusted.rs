//! Values read from the store and trusted for a while without reading them
//! again: the tokens and the sites' scopes of [`crate::AppState`].

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The most entries kept; past it the map starts again empty.
const MOST: usize = 10_000;

/// A map of values each trusted for `ttl` from the moment the read that
/// found it began, never longer. An entry is read again ahead of that:
/// from `renew` on, the first request that finds it reads it again while
/// the others go on being answered with it. So the entries a busy server
/// uses are read again by one request at a time, not by every request in
/// flight at the moment they expire, and none is trusted longer than it
/// would be without renewal.
pub(crate) struct Trusted<K, V> {
    ttl: Duration,
    renew: Duration,
    map: Mutex<Map<K, V>>,
}

struct Map<K, V> {
    entries: HashMap<K, Entry<V>>,
    /// Bumped by [`Trusted::clear`]: what a read begun before it found is
    /// not kept.
    generation: u64,
}

struct Entry<V> {
    value: V,
    /// When the read that found it began.
    at: Instant,
    /// Whether a request is reading it again. A renewal whose request was
    /// dropped leaves it set: the entry then expires at `ttl` as it would
    /// have without renewal, and the next request reads it.
    renewing: bool,
}

/// What [`Trusted::find`] decided: a value to answer with, or a read of
/// the generation it began in.
enum Found<V> {
    Value(V),
    Read(u64),
}

impl<K: Eq + Hash, V: Clone> Trusted<K, V> {
    /// A map whose entries are trusted for `ttl` and read again from
    /// `renew` on (less than `ttl`).
    pub(crate) fn new(ttl: Duration, renew: Duration) -> Self {
        debug_assert!(renew < ttl);
        Trusted { ttl, renew, map: Mutex::new(Map { entries: HashMap::new(), generation: 0 }) }
    }

    /// The value of `key`: the one kept while it is trusted, else what
    /// `read` answers, kept unless it is `None` or an error (both answered
    /// as they are, and the entry forgotten).
    pub(crate) async fn get<E, F>(&self, key: K, read: impl FnOnce() -> F) -> Result<Option<V>, E>
    where
        F: Future<Output = Result<Option<V>, E>>,
    {
        self.get_at(key, Instant::now(), read).await
    }

    /// [`Trusted::get`] at `now`.
    async fn get_at<E, F>(&self, key: K, now: Instant, read: impl FnOnce() -> F) -> Result<Option<V>, E>
    where
        F: Future<Output = Result<Option<V>, E>>,
    {
        let generation = match self.find(&key, now) {
            Found::Value(value) => return Ok(Some(value)),
            Found::Read(generation) => generation,
        };
        let found = read().await;
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if map.generation == generation {
            match found.as_ref().ok().and_then(Option::as_ref) {
                Some(value) => {
                    if map.entries.len() >= MOST && !map.entries.contains_key(&key) {
                        map.entries.clear();
                    }
                    map.entries.insert(key, Entry { value: value.clone(), at: now, renewing: false });
                }
                None => {
                    map.entries.remove(&key);
                }
            }
        }
        found
    }

    /// Whether `key`'s value is trusted at `now` and not yet to be read
    /// again by this request; marks the renewal this request is to make.
    fn find(&self, key: &K, now: Instant) -> Found<V> {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        let generation = map.generation;
        match map.entries.get_mut(key) {
            Some(entry) if now.saturating_duration_since(entry.at) < self.ttl => {
                if entry.renewing || now.saturating_duration_since(entry.at) < self.renew {
                    Found::Value(entry.value.clone())
                } else {
                    entry.renewing = true;
                    Found::Read(generation)
                }
            }
            _ => Found::Read(generation),
        }
    }

    /// Forgets every entry, and what the reads in flight will find.
    pub(crate) fn clear(&self) {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.entries.clear();
        map.generation = map.generation.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::sync::oneshot;

    const TTL: Duration = Duration::from_secs(5);
    const RENEW: Duration = Duration::from_secs(4);

    type Answer = Result<Option<u32>, &'static str>;

    fn never() -> std::future::Ready<Answer> {
        panic!("read while the value was trusted")
    }

    /// A read that answers `Some(value)` at once.
    fn found(value: u32) -> impl FnOnce() -> std::future::Ready<Answer> {
        move || std::future::ready(Ok(Some(value)))
    }

    /// A read that answers what the test sends, counted in `reads`.
    fn waiting(
        reads: &Arc<AtomicUsize>,
    ) -> (oneshot::Sender<Answer>, impl FnOnce() -> oneshot::Receiver<Answer> + use<>) {
        let (send, receive) = oneshot::channel();
        let reads = Arc::clone(reads);
        (send, move || {
            reads.fetch_add(1, Ordering::SeqCst);
            receive
        })
    }

    async fn answered(receive: oneshot::Receiver<Answer>) -> Answer {
        receive.await.unwrap()
    }

    fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    #[tokio::test]
    async fn one_request_reads_a_value_again_while_the_others_are_answered_with_it() {
        let map = Arc::new(Trusted::<&str, u32>::new(TTL, RENEW));
        let t0 = Instant::now();
        assert_eq!(map.get_at("k", t0, found(1)).await, Ok(Some(1)));
        assert_eq!(map.get_at("k", at(t0, 3_900), never).await, Ok(Some(1)));
        // From `renew` on: the first request reads, the others do not wait.
        let reads = Arc::new(AtomicUsize::new(0));
        let (send, read) = waiting(&reads);
        let renewal = tokio::spawn({
            let map = Arc::clone(&map);
            async move { map.get_at("k", at(t0, 4_100), move || answered(read())).await }
        });
        while reads.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(map.get_at("k", at(t0, 4_200), never).await, Ok(Some(1)));
        assert_eq!(map.get_at("k", at(t0, 4_900), never).await, Ok(Some(1)));
        send.send(Ok(Some(2))).unwrap();
        assert_eq!(renewal.await.unwrap(), Ok(Some(2)));
        assert_eq!(reads.load(Ordering::SeqCst), 1);
        // Trusted from when the renewal began.
        assert_eq!(map.get_at("k", at(t0, 8_000), never).await, Ok(Some(2)));
    }

    #[tokio::test]
    async fn no_value_is_trusted_past_its_time_while_a_renewal_is_slow() {
        let map = Arc::new(Trusted::<&str, u32>::new(TTL, RENEW));
        let t0 = Instant::now();
        map.get_at("k", t0, found(1)).await.unwrap();
        let reads = Arc::new(AtomicUsize::new(0));
        let (_held, read) = waiting(&reads);
        let renewal = tokio::spawn({
            let map = Arc::clone(&map);
            async move { map.get_at("k", at(t0, 4_500), move || answered(read())).await }
        });
        while reads.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        // Past `ttl` the value is read again, renewal or not.
        assert_eq!(map.get_at("k", at(t0, 5_000), found(3)).await, Ok(Some(3)));
        renewal.abort();
        // And an entry whose renewal was dropped is read at `ttl`.
        let map = Trusted::<&str, u32>::new(TTL, RENEW);
        map.get_at("k", t0, found(1)).await.unwrap();
        let dropped = map.get_at("k", at(t0, 4_500), std::future::pending::<Answer>);
        assert!(tokio::time::timeout(Duration::from_millis(1), dropped).await.is_err());
        assert_eq!(map.get_at("k", at(t0, 4_600), never).await, Ok(Some(1)));
        assert_eq!(map.get_at("k", at(t0, 5_000), found(4)).await, Ok(Some(4)));
    }

    #[tokio::test]
    async fn a_clear_forgets_what_reads_in_flight_find_and_a_failed_renewal_forgets_the_entry() {
        let map = Arc::new(Trusted::<&str, u32>::new(TTL, RENEW));
        let t0 = Instant::now();
        map.get_at("k", t0, found(1)).await.unwrap();
        let reads = Arc::new(AtomicUsize::new(0));
        let (send, read) = waiting(&reads);
        let renewal = tokio::spawn({
            let map = Arc::clone(&map);
            async move { map.get_at("k", at(t0, 4_100), move || answered(read())).await }
        });
        while reads.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        map.clear();
        send.send(Ok(Some(2))).unwrap();
        assert_eq!(renewal.await.unwrap(), Ok(Some(2)));
        // The renewal began before the clear: read again.
        assert_eq!(map.get_at("k", at(t0, 4_200), found(5)).await, Ok(Some(5)));
        // A renewal that fails (a site archived, a token revoked) answers
        // so, and the next request reads again.
        assert_eq!(map.get_at("k", at(t0, 8_300), || std::future::ready(Err("gone"))).await, Err("gone"));
        assert_eq!(map.get_at("k", at(t0, 8_301), || std::future::ready(Answer::Ok(None))).await, Ok(None));
        assert_eq!(map.get_at("k", at(t0, 8_302), found(6)).await, Ok(Some(6)));
    }
}
