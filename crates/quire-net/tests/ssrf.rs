//! The SSRF suite: every way of pointing the guarded client at an internal
//! address, against local fake servers that count each connection they
//! accept. A refused attempt must fail with the rule that refused it and
//! leave every counter of an internal server at zero.

use quire_net::{Limits, NetClient, NetError, Request, StaticResolver};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

mod support {
    pub mod loopback;
}
use support::loopback;

/// What a fake answers for a path.
#[derive(Clone)]
enum Reply {
    Text(&'static str, String),
    Redirect(String),
    /// `n` bytes, with or without a Content-Length.
    Big(usize, bool),
    /// Headers, then one byte every 200 ms, forever.
    Trickle,
    /// Never answers.
    Silent,
}

type Route = Arc<dyn Fn(&str) -> Reply + Send + Sync>;

struct Fake {
    addr: SocketAddr,
    hits: Arc<AtomicUsize>,
}

impl Fake {
    async fn start(bind: SocketAddr, route: Route) -> Option<Fake> {
        let listener = TcpListener::bind(bind).await.ok()?;
        let addr = listener.local_addr().ok()?;
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = hits.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                let route = route.clone();
                tokio::spawn(serve(stream, route));
            }
        });
        Some(Fake { addr, hits })
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    fn port(&self) -> u16 {
        self.addr.port()
    }
}

async fn serve(mut stream: TcpStream, route: Route) {
    loop {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match stream.read(&mut byte).await {
                Ok(1) => head.push(byte[0]),
                _ => return,
            }
        }
        let head = String::from_utf8_lossy(&head).to_string();
        let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        let length: usize = head
            .lines()
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
            .unwrap_or(0);
        let mut body = vec![0; length];
        if stream.read_exact(&mut body).await.is_err() {
            return;
        }
        let ok = match route(&path) {
            Reply::Text(ct, body) => {
                let out =
                    format!("HTTP/1.1 200 OK\r\ncontent-type: {ct}\r\ncontent-length: {}\r\n\r\n{body}", body.len());
                stream.write_all(out.as_bytes()).await.is_ok()
            }
            Reply::Redirect(to) => {
                // Closing makes the next hop open a new connection (and resolve again).
                let out =
                    format!("HTTP/1.1 302 Found\r\nlocation: {to}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                let _ = stream.write_all(out.as_bytes()).await;
                return;
            }
            Reply::Big(n, with_length) => {
                let head = if with_length {
                    format!("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {n}\r\n\r\n")
                } else {
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n".to_string()
                };
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = vec![b'x'; 64 * 1024];
                let mut sent = 0;
                while sent < n {
                    let k = chunk.len().min(n - sent);
                    if stream.write_all(&chunk[..k]).await.is_err() {
                        return;
                    }
                    sent += k;
                }
                if !with_length {
                    return;
                }
                true
            }
            Reply::Trickle => {
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 1000\r\n\r\n")
                    .await;
                loop {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    if stream.write_all(b"x").await.is_err() {
                        return;
                    }
                }
            }
            Reply::Silent => {
                tokio::time::sleep(Duration::from_secs(60)).await;
                return;
            }
        };
        if !ok {
            return;
        }
    }
}

fn text(body: &str) -> Route {
    let body = body.to_string();
    Arc::new(move |_| Reply::Text("text/plain", body.clone()))
}

const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

fn limits() -> Limits {
    Limits { timeout: Duration::from_millis(1500), max_bytes: 64 * 1024, ..Limits::default() }
}

fn client(allow: &[&str], resolver: StaticResolver) -> NetClient {
    let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
    NetClient::with_resolver(&allow, limits(), Arc::new(resolver)).unwrap()
}

fn refused_by(result: &Result<quire_net::Response, NetError>, rule: &str, attempt: &str) {
    match result {
        Err(e) => assert_eq!(e.rule(), Some(rule), "{attempt}: refused for another reason: {e}"),
        Ok(r) => panic!("{attempt}: was not refused (status {})", r.status),
    }
}

/// The internal servers every attempt aims at: IPv4 loopback, and IPv6
/// loopback on the same port where the machine has it.
struct Internal {
    v4: Fake,
    v6: Option<Fake>,
}

impl Internal {
    async fn start() -> Internal {
        let v4 = Fake::start("127.0.0.1:0".parse().unwrap(), text("internal secret")).await.unwrap();
        let v6 = Fake::start(SocketAddr::new("::1".parse().unwrap(), v4.port()), text("internal secret")).await;
        Internal { v4, v6 }
    }
    fn hits(&self) -> usize {
        self.v4.hits() + self.v6.as_ref().map_or(0, Fake::hits)
    }
}

#[tokio::test]
async fn address_spellings_are_refused_and_nothing_is_reached() {
    let internal = Internal::start().await;
    let p = internal.v4.port();
    let resolver = StaticResolver::new()
        .with("localhost", &[LOCALHOST])
        .with("internal.test", &[LOCALHOST])
        .with("ten.test", &["10.0.0.1".parse().unwrap()])
        .with("metadata.test", &["169.254.169.254".parse().unwrap()])
        .with("v6.test", &["::1".parse().unwrap()])
        .with("mapped.test", &["::ffff:127.0.0.1".parse().unwrap()])
        .with("mixed.test", &["93.184.215.14".parse().unwrap(), LOCALHOST]);
    let client = client(&[], resolver);
    let attempts: Vec<String> = loopback::SPELLINGS
        .into_iter()
        .chain([
            "0x7f.0x0.0x0.0x1",
            "127.127.127.127",
            "[::ffff:127.0.0.1]",
            "[::ffff:7f00:1]",
            "[::127.0.0.1]",
            "[::1]",
            "[0:0:0:0:0:0:0:1]",
            "[::]",
            "[::ffff:0.0.0.0]",
            "[64:ff9b::7f00:1]",
            "[2002:7f00:1::]",
            "0.0.0.0",
            "0",
            "localhost",
            "LOCALHOST",
            "internal.test",
            "v6.test",
            "mapped.test",
            "mixed.test",
        ])
        .map(|h| format!("http://{h}:{p}/"))
        .collect();
    for url in &attempts {
        refused_by(&client.send(Request::get(url.as_str())).await, "address", url);
    }
    // Addresses with no server behind them, refused before any connection.
    let more = [
        "http://ten.test/",
        "http://metadata.test/latest/meta-data/",
        "http://169.254.169.254/latest/meta-data/",
        "http://0xa9fea9fe/",
        "http://2852039166/",
        "http://[::ffff:169.254.169.254]/",
        "http://[fd00:ec2::254]/",
        "http://100.100.100.200/",
        "http://192.168.1.1/",
        "http://172.16.0.1/",
        "http://10.0.0.1/",
        "http://100.64.0.1/",
        "http://[fe80::1]/",
        "http://[fc00::1]/",
        "http://224.0.0.1/",
        "http://[ff02::1]/",
        "https://10.1.1.1/",
    ];
    for url in more {
        refused_by(&client.send(Request::get(url)).await, "address", url);
    }
    for url in [
        "file:///etc/passwd",
        &format!("ftp://127.0.0.1:{p}/"),
        &format!("gopher://127.0.0.1:{p}/_x"),
        "data:text/plain,hi",
    ] {
        refused_by(&client.send(Request::get(url)).await, "scheme", url);
    }
    let total = attempts.len() + more.len() + 4;
    assert!(total >= 40, "{total} attempts");
    assert_eq!(internal.hits(), 0, "an internal server was reached");

    // The fake does count: a client whose operator allows loopback reaches it.
    let allowed = NetClient::with_resolver(&["127.0.0.0/8".into()], limits(), Arc::new(StaticResolver::new())).unwrap();
    let res = allowed.send(Request::get(format!("http://127.0.0.1:{p}/"))).await.unwrap();
    assert_eq!(res.text(), "internal secret");
    assert_eq!(internal.hits(), 1);
}

#[tokio::test]
async fn redirects_to_internal_addresses_are_refused() {
    let internal = Internal::start().await;
    let p = internal.v4.port();
    let targets = vec![
        format!("http://127.0.0.1:{p}/"),
        format!("http://[::ffff:127.0.0.1]:{p}/"),
        format!("http://2130706433:{p}/"),
        format!("http://[::1]:{p}/"),
        format!("http://internal.test:{p}/"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
        format!("file:///etc/passwd"),
        // two allowed hops first, then the internal address
        "/hop/1".to_string(),
    ];
    let targets_for_route = targets.clone();
    let route: Route = Arc::new(move |path: &str| {
        if let Some(i) = path.strip_prefix("/to/") {
            Reply::Redirect(targets_for_route[i.parse::<usize>().unwrap()].clone())
        } else if path == "/hop/1" {
            Reply::Redirect("/hop/2".into())
        } else if path == "/hop/2" {
            Reply::Redirect(targets_for_route[0].clone())
        } else if let Some(n) = path.strip_prefix("/loop/") {
            let n: usize = n.parse().unwrap();
            if n == 0 {
                Reply::Text("text/plain", "end of loop".into())
            } else {
                Reply::Redirect(format!("/loop/{}", n - 1))
            }
        } else {
            Reply::Text("text/plain", "public".into())
        }
    });
    let public = Fake::start("127.0.0.1:0".parse().unwrap(), route).await.unwrap();
    let resolver = StaticResolver::new().with("public.test", &[LOCALHOST]).with("internal.test", &[LOCALHOST]);
    let client = client(&["public.test"], resolver);
    let base = format!("http://public.test:{}", public.port());
    for (i, target) in targets.iter().enumerate() {
        let rule = if target.starts_with("file:") { "scheme" } else { "address" };
        refused_by(&client.send(Request::get(format!("{base}/to/{i}"))).await, rule, target);
    }
    // Five redirects are followed; the sixth is refused.
    let res = client.send(Request::get(format!("{base}/loop/5"))).await.unwrap();
    assert_eq!((res.text().as_str(), res.redirects.len()), ("end of loop", 5));
    refused_by(&client.send(Request::get(format!("{base}/loop/6"))).await, "redirect", "six redirects");
    assert_eq!(internal.hits(), 0, "a redirect reached an internal server");
    assert!(public.hits() > 0);
}

#[tokio::test]
async fn a_name_answering_public_then_private_reaches_only_the_checked_address() {
    // 127.0.0.2 plays the private address on the same port as the
    // "public" one (127.0.0.1, allowed as a range for this test).
    let private = Fake::start("127.0.0.2:0".parse().unwrap(), text("private")).await.unwrap();
    let p = private.port();
    let route: Route = Arc::new(|path: &str| {
        if path == "/first" { Reply::Redirect("/second".into()) } else { Reply::Text("text/plain", "public".into()) }
    });
    let Some(public) = Fake::start(SocketAddr::new(LOCALHOST, p), route).await else {
        eprintln!("port {p} busy on 127.0.0.1; skipped");
        return;
    };
    let resolver = Arc::new(
        StaticResolver::new().with_sequence("rebind.test", vec![vec![LOCALHOST], vec!["127.0.0.2".parse().unwrap()]]),
    );
    let client = NetClient::with_resolver(&["127.0.0.1/32".into()], limits(), resolver.clone()).unwrap();
    // One request: resolved once, connected to what was checked.
    let res = client.send(Request::get(format!("http://rebind.test:{p}/plain"))).await.unwrap();
    assert_eq!(res.text(), "public");
    assert_eq!(resolver.lookups(), 1);
    // The redirect closes the connection; the next hop resolves again,
    // gets the private answer and is refused.
    refused_by(&client.send(Request::get(format!("http://rebind.test:{p}/first"))).await, "address", "rebinding");
    assert_eq!(private.hits(), 0, "the private address was reached");
    assert!(public.hits() >= 1);
}

#[tokio::test]
async fn oversized_and_slow_answers_are_cut_off() {
    let route: Route = Arc::new(|path: &str| match path {
        "/big-declared" => Reply::Big(10 * 1024 * 1024, true),
        "/big-streamed" => Reply::Big(10 * 1024 * 1024, false),
        "/small" => Reply::Big(1000, true),
        "/trickle" => Reply::Trickle,
        "/silent" => Reply::Silent,
        "/html" => Reply::Text("text/html; charset=utf-8", "<p>hi</p>".into()),
        _ => Reply::Text("application/octet-stream", "??".into()),
    });
    let server = Fake::start("127.0.0.1:0".parse().unwrap(), route).await.unwrap();
    let client = client(&["files.test"], StaticResolver::new().with("files.test", &[LOCALHOST]));
    let base = format!("http://files.test:{}", server.port());
    for path in ["/big-declared", "/big-streamed"] {
        let started = Instant::now();
        refused_by(&client.send(Request::get(format!("{base}{path}"))).await, "size", path);
        assert!(started.elapsed() < Duration::from_secs(1), "{path} was not cut off early");
    }
    assert_eq!(client.send(Request::get(format!("{base}/small"))).await.unwrap().body.len(), 1000);
    refused_by(&client.send(Request::get(format!("{base}/small")).max_bytes(999)).await, "size", "lowered limit");
    for path in ["/trickle", "/silent"] {
        let started = Instant::now();
        refused_by(&client.send(Request::get(format!("{base}{path}"))).await, "time", path);
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(1400) && took < Duration::from_secs(3), "{path}: {took:?}");
    }
    let html = client.send(Request::get(format!("{base}/html")).accept(&["text/html"])).await.unwrap();
    assert_eq!((html.content_type.as_deref(), html.charset.as_deref()), (Some("text/html"), Some("utf-8")));
    refused_by(
        &client.send(Request::get(format!("{base}/binary")).accept(&["text/html", "+json"])).await,
        "content-type",
        "binary",
    );
}

#[tokio::test]
async fn credentials_do_not_follow_a_redirect_to_another_origin() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let log = seen.clone();
    let other = Fake::start("127.0.0.1:0".parse().unwrap(), text("other")).await.unwrap();
    let other_port = other.port();
    // The fake route sees only the path; record the request line through it.
    let route: Route = Arc::new(move |path: &str| {
        log.lock().unwrap().push(path.to_string());
        Reply::Redirect(format!("http://other.test:{other_port}/landing"))
    });
    let first = Fake::start("127.0.0.1:0".parse().unwrap(), route).await.unwrap();
    let resolver = StaticResolver::new().with("first.test", &[LOCALHOST]).with("other.test", &[LOCALHOST]);
    let client = client(&["first.test", "other.test"], resolver);
    let res = client
        .send(Request::get(format!("http://first.test:{}/start", first.port())).header("Authorization", "Bearer k"))
        .await
        .unwrap();
    assert_eq!(res.text(), "other");
    assert_eq!(res.redirects, [format!("http://other.test:{other_port}/landing")]);
    assert_eq!(seen.lock().unwrap().as_slice(), ["/start"]);
    for header in ["Host", "Content-Length", "Transfer-Encoding"] {
        let e = client.send(Request::get("http://first.test/").header(header, "x")).await.unwrap_err();
        assert!(matches!(e, NetError::InvalidRequest(_)), "{header}: {e}");
    }
}

#[test]
fn allow_entries_are_checked() {
    assert!(
        quire_net::Policy::new(&["10.0.0.0/8".into(), "wiki.corp".into(), "*.corp.example".into(), "::1".into()])
            .is_ok()
    );
    let e = quire_net::Policy::new(&["http://wiki".into()]).unwrap_err();
    assert!(e.contains("http.allow") && e.contains("http://wiki"), "{e}");
    let policy = quire_net::Policy::new(&["*.corp.example".into(), "10.1.0.0/16".into()]).unwrap();
    let ip = |s: &str| s.parse::<IpAddr>().unwrap();
    assert!(policy.check("a.corp.example", ip("10.9.9.9")).is_ok());
    assert!(policy.check("corp.example.evil", ip("10.9.9.9")).is_err());
    assert!(policy.check("x.test", ip("10.1.2.3")).is_ok());
    assert!(policy.check("x.test", ip("::ffff:10.1.2.3")).is_ok());
    // A host allowed by name still never reaches cloud metadata.
    assert!(policy.check("a.corp.example", ip("169.254.169.254")).is_err());
}
