//! The accept loop: HTTP/1 connections served with hyper, each guarded
//! against clients that hold the server with slow or many connections, and
//! graceful shutdown.
//!
//! Three limits ([`ConnectionLimits`]): a request's head (request line and
//! headers) must arrive within `header_timeout` (hyper's
//! `header_read_timeout`, which also closes a kept-alive connection idle
//! for as long); a request's body must keep arriving ([`BODY_MIN_RATE`]
//! after `body_timeout`, no pause longer than `body_timeout`) or the request
//! is answered 408 and the connection closed; and one client address holds
//! at most `per_address` connections at once, those past it closed as soon
//! as they are accepted. Only reading the request is timed: a response may
//! take as long as it needs, so event streams stay open.
//!
//! axum::serve has no header timeout and no hook per connection; tower-http's
//! `RequestBodyTimeoutLayer` resets its timer at every frame, so a body
//! trickled a byte at a time is never cut: hence this loop.

use crate::AppState;
use crate::error::{ApiError, JSONRPC_SERVER_ERROR};
use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body::{Body, Frame, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};
use tower::ServiceExt;

/// How long in-flight requests get to finish once a stop was asked for.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The slowest a request body may arrive on average, in bytes per second,
/// once its first `body_timeout` has passed: 8 KiB/s lets a 25 MB upload
/// take 50 minutes, while a body trickled a few bytes at a time is cut.
pub const BODY_MIN_RATE: u64 = 8 * 1024;

/// What a client may hold of the server: see the module's documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// How long a request's head may take to arrive, and how long a
    /// kept-alive connection may wait idle for its next request.
    pub header_timeout: Duration,
    /// How long a request body may pause, and the head start it gets
    /// before [`BODY_MIN_RATE`] counts.
    pub body_timeout: Duration,
    /// Most connections open at once from one client address (an IPv6
    /// client counts by its /64 network); 0: no limit.
    pub per_address: usize,
}

impl Default for ConnectionLimits {
    /// 10 s for a head, 30 s for a body, 256 connections per address.
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            per_address: 256,
        }
    }
}

/// Serves `router` on `listener` until the process is asked to stop
/// (SIGINT — Ctrl-C — or SIGTERM, what `kill`, systemd and `docker stop`
/// send): see [`serve_until`].
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    state: AppState,
    limits: ConnectionLimits,
) -> std::io::Result<()> {
    serve_until(listener, router, state, limits, stop_signal()).await
}

/// Serves `router` on `listener` within `limits` until `stop` completes:
/// then no new connection is accepted, `state` is stopped (event streams
/// end, background work stops), and requests in flight finish, for at most
/// [`SHUTDOWN_GRACE`]. The caller closes the store afterwards.
pub async fn serve_until(
    listener: tokio::net::TcpListener,
    router: Router,
    state: AppState,
    limits: ConnectionLimits,
    stop: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
    let graceful = GracefulShutdown::new();
    let addresses = Arc::new(Addresses::new(limits.per_address));
    let mut stop = std::pin::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
            _ = &mut stop => break,
        };
        // Refused: closed at once, before a byte is read.
        let Some(slot) = addresses.take(peer.ip()) else { continue };
        let router = router.clone();
        let service = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
            answer(router.clone(), req, limits.body_timeout)
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(slot);
        });
    }
    drop(listener);
    tracing::info!("shutting down");
    state.stop();
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await.is_err() {
        tracing::warn!("requests still in flight after the grace period were cut off");
    }
    Ok(())
}

/// One request: its body timed, then the router's answer, or a 408 when
/// the body stopped arriving (the connection then closes: the rest of the
/// body is never read).
async fn answer(
    router: Router,
    req: hyper::Request<hyper::body::Incoming>,
    body_timeout: Duration,
) -> Result<Response, std::convert::Infallible> {
    // A request without a body (most GETs) has nothing to time.
    if req.body().is_end_stream() {
        return router.oneshot(req.map(axum::body::Body::new)).await;
    }
    let mcp = req.uri().path() == "/mcp" || req.uri().path().starts_with("/mcp/");
    let cut = Arc::new(AtomicBool::new(false));
    let req = req.map(|body| TimedBody::new(body, body_timeout, Arc::clone(&cut)));
    let response = router.oneshot(req).await?;
    if !cut.load(Ordering::Relaxed) {
        return Ok(response);
    }
    let error = ApiError::with_status(
        StatusCode::REQUEST_TIMEOUT,
        format!(
            "the request body stopped arriving: it may pause at most {} s and must average {} KiB/s after that",
            body_timeout.as_secs_f64(),
            BODY_MIN_RATE / 1024
        ),
    );
    let mut response = if mcp { error.into_jsonrpc_response(JSONRPC_SERVER_ERROR) } else { error.into_response() };
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    Ok(response)
}

/// An accept error: one about a connection already gone is nothing; any
/// other (out of file descriptors, ...) is logged and the loop waits a
/// second rather than spin.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if !matches!(e.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        tracing::error!(error = %e, "cannot accept connections");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Completes on SIGINT or SIGTERM.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
                return;
            }
            Err(e) => tracing::warn!(error = %e, "cannot listen for SIGTERM; only Ctrl-C stops the server cleanly"),
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// The connections open per client address.
struct Addresses {
    max: usize,
    /// Connections open, and whether refusing one more was logged.
    open: Mutex<HashMap<IpAddr, (usize, bool)>>,
}

/// A connection counted against its address until dropped.
struct Slot {
    addresses: Arc<Addresses>,
    key: IpAddr,
}

impl Addresses {
    fn new(max: usize) -> Self {
        Addresses { max, open: Mutex::new(HashMap::new()) }
    }

    /// Counts a connection from `ip` until the slot is dropped (`Some(None)`
    /// when there is no limit, so nothing is counted), or `None` when its
    /// address holds the most it may (logged once while it does).
    fn take(self: &Arc<Self>, ip: IpAddr) -> Option<Option<Slot>> {
        if self.max == 0 {
            return Some(None);
        }
        let key = address_key(ip);
        let Ok(mut open) = self.open.lock() else { return Some(None) };
        let (count, warned) = open.entry(key).or_insert((0, false));
        if *count >= self.max {
            if !*warned {
                *warned = true;
                tracing::warn!(
                    address = %key,
                    limit = self.max,
                    "refusing connections from an address past max_connections_per_address"
                );
            }
            return None;
        }
        *count += 1;
        Some(Some(Slot { addresses: Arc::clone(self), key }))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut open) = self.addresses.open.lock()
            && let Some((count, _)) = open.get_mut(&self.key)
        {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// What a client's connections are counted by: its IPv4 address (an
/// IPv4-mapped IPv6 one included), or its IPv6 /64, which one client
/// usually holds whole.
fn address_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let mut s = v6.segments();
            s[4..].fill(0);
            IpAddr::V6(s.into())
        }
        v4 => v4,
    }
}

/// A request body that must keep arriving: each wait for the client may
/// last at most `timeout`, and all of them together at most `timeout` plus
/// one second per [`BODY_MIN_RATE`] bytes received. Only time spent waiting
/// for the client counts, never time the handler spent elsewhere. Past
/// either, it ends with an error and sets `cut`.
struct TimedBody<B> {
    inner: B,
    timeout: Duration,
    received: u64,
    waited: Duration,
    /// Since when the current wait for the client lasts, and when it ends.
    waiting: Option<(Instant, Pin<Box<Sleep>>)>,
    cut: Arc<AtomicBool>,
}

impl<B> TimedBody<B> {
    fn new(inner: B, timeout: Duration, cut: Arc<AtomicBool>) -> Self {
        TimedBody { inner, timeout, received: 0, waited: Duration::ZERO, waiting: None, cut }
    }
}

/// The error a [`TimedBody`] ends with.
#[derive(Debug)]
struct BodyTimedOut;

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body stopped arriving")
    }
}

impl std::error::Error for BodyTimedOut {}

impl<B> Body for TimedBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if this.cut.load(Ordering::Relaxed) {
            return Poll::Ready(Some(Err(BodyTimedOut.into())));
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                if let Some((since, _)) = this.waiting.take() {
                    this.waited += since.elapsed();
                }
                if let Some(Ok(data)) = frame.as_ref().map(|f| f.as_ref().map(Frame::data_ref)) {
                    this.received += data.map_or(0, |d| d.len() as u64);
                }
                Poll::Ready(frame.map(|f| f.map_err(Into::into)))
            }
            Poll::Pending => {
                let (timeout, received, waited) = (this.timeout, this.received, this.waited);
                let (_, sleep) = this.waiting.get_or_insert_with(|| {
                    let earned = timeout + Duration::from_secs_f64(received as f64 / BODY_MIN_RATE as f64);
                    let now = Instant::now();
                    (now, Box::pin(tokio::time::sleep_until(now + timeout.min(earned.saturating_sub(waited)))))
                });
                if sleep.as_mut().poll(cx).is_ready() {
                    this.cut.store(true, Ordering::Relaxed);
                    return Poll::Ready(Some(Err(BodyTimedOut.into())));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipv6_client_counts_by_its_network_and_a_mapped_ipv4_as_itself() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let other: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(address_key(a), address_key(b));
        assert_ne!(address_key(a), address_key(other));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(address_key(mapped), "192.0.2.7".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn an_address_past_its_limit_is_refused_until_one_of_its_connections_closes() {
        let addresses = Arc::new(Addresses::new(2));
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let first = addresses.take(ip).unwrap();
        let _second = addresses.take(ip).unwrap();
        assert!(addresses.take(ip).is_none());
        assert!(addresses.take("192.0.2.2".parse().unwrap()).is_some());
        drop(first);
        assert!(addresses.take(ip).is_some());
        assert!(Arc::new(Addresses::new(0)).take(ip).is_some(), "0: no limit");
    }
}
