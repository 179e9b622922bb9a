//! Clients that hold the server with slow or many connections, over real
//! TCP against `serve_until`: a request's head that stops arriving is cut
//! off after the header timeout, a trickled body is answered 408, one
//! address past its connection limit is refused while others are served,
//! and none of this cuts a long response (an event stream), which ends
//! with the graceful shutdown.

mod common;

use common::TestApp;
use quire_server::{AppState, ConnectionLimits};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::{Instant, timeout};

/// A test app served on a free port within `limits` until `stop` is sent.
struct Served {
    app: TestApp,
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn serve(limits: ConnectionLimits) -> Served {
    let kept = Arc::new(Mutex::new(None::<AppState>));
    let keep = Arc::clone(&kept);
    let app = TestApp::build(move |state| {
        *keep.lock().unwrap() = Some(state.clone());
        state
    })
    .await;
    let state = kept.lock().unwrap().take().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel();
    let router = app.router.clone();
    let server = tokio::spawn(quire_server::serve_until(listener, router, state, limits, async {
        let _ = stopped.await;
    }));
    Served { app, addr, stop: Some(stop), server }
}

fn limits(header: u64, body: u64, per_address: usize) -> ConnectionLimits {
    ConnectionLimits {
        header_timeout: Duration::from_secs(header),
        body_timeout: Duration::from_secs(body),
        per_address,
    }
}

/// A connection to `to` from the loopback address `from`.
async fn connect_from(from: &str, to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    socket.connect(to).await.unwrap()
}

/// Reads one response (status, headers in lower case, body) off a
/// kept-alive connection; `None` when it closed before one arrived.
async fn response(stream: &mut TcpStream) -> Option<(u16, String, Value)> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match timeout(Duration::from_secs(10), stream.read(&mut chunk)).await.expect("no answer within 10 s") {
            Ok(0) | Err(_) => return None,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&bytes[..head_end]).to_ascii_lowercase();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let length: usize =
        head.lines().find_map(|l| l.strip_prefix("content-length:")).map_or(0, |v| v.trim().parse().unwrap());
    while bytes.len() < head_end + length {
        let n = timeout(Duration::from_secs(10), stream.read(&mut chunk)).await.unwrap().unwrap();
        assert!(n > 0, "closed inside a body");
        bytes.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&bytes[head_end..head_end + length]).unwrap_or(Value::Null);
    Some((status, head, body))
}

/// Sends a GET of `path` on a kept-alive connection and reads its answer.
async fn get(stream: &mut TcpStream, path: &str, token: &str) -> Option<(u16, String, Value)> {
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    response(stream).await
}

/// Whether the server closed `stream` within `within` (what it sent
/// before, if anything, is skipped).
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut chunk = [0u8; 4096];
    let deadline = Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test]
async fn a_head_that_stops_arriving_is_cut_off_after_the_header_timeout() {
    let served = serve(limits(1, 30, 0)).await;
    let started = Instant::now();
    let mut half = TcpStream::connect(served.addr).await.unwrap();
    half.write_all(b"GET /api/v1/me HT").await.unwrap();
    let mut silent = TcpStream::connect(served.addr).await.unwrap();
    assert!(closed_within(&mut half, Duration::from_secs(10)).await, "half a request line kept its connection");
    assert!(closed_within(&mut silent, Duration::from_secs(10)).await, "a silent connection stayed open");
    assert!(started.elapsed() >= Duration::from_millis(900), "closed before the timeout: {:?}", started.elapsed());

    // A request sent whole is answered, and its connection kept alive
    // until it idles for as long.
    let mut whole = TcpStream::connect(served.addr).await.unwrap();
    let (status, _, me) = get(&mut whole, "/api/v1/me", &served.app.admin).await.unwrap();
    assert_eq!(status, 200, "{me}");
    let (status, _, _) = get(&mut whole, "/api/v1/me", &served.app.admin).await.unwrap();
    assert_eq!(status, 200);
    assert!(closed_within(&mut whole, Duration::from_secs(10)).await, "an idle kept-alive connection stayed open");
}

#[tokio::test]
async fn a_trickled_body_is_answered_408_and_its_connection_closed() {
    let served = serve(limits(30, 1, 0)).await;
    let before = served.app.get("/api/v1/pages?limit=100").await.body["count"].clone();
    let stream = TcpStream::connect(served.addr).await.unwrap();
    let (mut read, mut write) = stream.into_split();
    let head = format!(
        "POST /api/v1/pages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
        served.app.admin
    );
    write.write_all(head.as_bytes()).await.unwrap();
    // A byte every 200 ms: never a pause as long as the timeout, but far
    // below the rate a body must keep.
    let trickle = tokio::spawn(async move {
        for _ in 0..1000 {
            if write.write_all(b" ").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let started = Instant::now();
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match timeout(Duration::from_secs(10), read.read(&mut chunk)).await.expect("still reading after 10 s") {
            Ok(0) | Err(_) => break,
            Ok(n) => answer.extend_from_slice(&chunk[..n]),
        }
    }
    let text = String::from_utf8_lossy(&answer).into_owned();
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.to_ascii_lowercase().contains("connection: close"), "{text}");
    let body: Value = serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["code"], "REQUEST_TIMEOUT", "{body}");
    assert!(body["error"].as_str().unwrap().contains("stopped arriving"), "{body}");
    assert!(started.elapsed() < Duration::from_secs(5), "cut after {:?}", started.elapsed());
    trickle.abort();
    assert_eq!(served.app.get("/api/v1/pages?limit=100").await.body["count"], before);

    // A body sent at once is read as ever.
    let mut stream = TcpStream::connect(served.addr).await.unwrap();
    let page = json!({ "name": "On time", "slug": "on-time" }).to_string();
    let request = format!(
        "POST /api/v1/pages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{page}",
        served.app.admin,
        page.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let (status, _, created) = response(&mut stream).await.unwrap();
    assert_eq!(status, 201, "{created}");
}

#[tokio::test]
async fn an_address_past_its_connection_limit_is_refused_while_others_are_served() {
    let served = serve(limits(30, 30, 2)).await;
    let token = served.app.admin.clone();
    let mut first = connect_from("127.0.0.1", served.addr).await;
    let mut second = connect_from("127.0.0.1", served.addr).await;
    assert_eq!(get(&mut first, "/api/v1/me", &token).await.unwrap().0, 200);
    assert_eq!(get(&mut second, "/api/v1/me", &token).await.unwrap().0, 200);

    let mut third = connect_from("127.0.0.1", served.addr).await;
    assert!(get(&mut third, "/api/v1/me", &token).await.is_none(), "a third connection was served");

    let mut elsewhere = connect_from("127.0.0.2", served.addr).await;
    assert_eq!(get(&mut elsewhere, "/api/v1/me", &token).await.unwrap().0, 200);

    // Once one of its connections closes, the address may open another.
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut again = connect_from("127.0.0.1", served.addr).await;
        if let Some((status, _, _)) = get(&mut again, "/api/v1/me", &token).await {
            assert_eq!(status, 200);
            break;
        }
        assert!(Instant::now() < deadline, "the address stayed refused after a connection closed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(get(&mut second, "/api/v1/me", &token).await.unwrap().0, 200, "kept connections go on");
}

#[tokio::test]
async fn an_event_stream_outlives_the_timeouts_and_ends_with_the_graceful_shutdown() {
    let mut served = serve(limits(1, 1, 4)).await;
    let chat = served.app.chat(&served.app.editor, json!({ "message": "hi" })).await;
    assert_eq!(chat.status.as_u16(), 202, "{}", chat.body);
    let session = chat.body["sessionId"].as_str().unwrap();
    let mut stream = TcpStream::connect(served.addr).await.unwrap();
    let request = format!(
        "GET /api/v1/sessions/{session}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\n\
         Accept: text/event-stream\r\n\r\n",
        served.app.editor
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut first = [0u8; 64];
    let n = timeout(Duration::from_secs(10), stream.read(&mut first)).await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).starts_with("HTTP/1.1 200"), "{:?}", &first[..n]);

    assert!(!closed_within(&mut stream, Duration::from_secs(3)).await, "the event stream was cut");

    served.stop.take().unwrap().send(()).unwrap();
    assert!(closed_within(&mut stream, Duration::from_secs(5)).await, "the stream outlived the shutdown");
    let ended = timeout(Duration::from_secs(5), &mut served.server).await;
    assert!(matches!(ended, Ok(Ok(Ok(())))), "serve did not end: {ended:?}");
}
