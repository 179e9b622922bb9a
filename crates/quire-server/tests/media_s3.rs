//! Media kept in an S3-compatible bucket: a local S3 server (moto's server
//! mode, started here as a child process) holds the published files; the
//! uploads folder holds staging alone. Uploads are processed into the
//! bucket, served from it with the same headers as local files (streamed,
//! ranges, conditions), never once archived, never to another site, and
//! the clean-up removes orphans there.
//!
//! Without moto (`pip install "moto[server]"`) the test says so and passes,
//! unless `QUIRE_TEST_S3=required`, where it fails.

mod common;

use axum::body::Body;
use axum::http::Request;
use common::{BOUNDARY, Raw, TestApp, form};
use quire_media::samples::{self, SECRET};
use quire_tools::media::MediaWorker;
use quire_tools::storage::{S3Config, Storage};
use serde_json::Value;
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BUCKET: &str = "quire-media";

/// The moto server, stopped when this drops (the test passed or not).
struct Moto {
    child: Child,
    port: u16,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts moto's S3 server on a free loopback port and creates the
/// bucket; none (after saying why) when moto is not installed and the S3
/// tests are not required.
fn start_moto() -> Option<Moto> {
    let required = std::env::var("QUIRE_TEST_S3").is_ok_and(|v| v == "required");
    let unavailable = |why: String| {
        if required {
            panic!("QUIRE_TEST_S3=required but {why}; install it with pip install \"moto[server]\"");
        }
        eprintln!("SKIPPED: the S3 media test needs moto's server ({why}); set QUIRE_TEST_S3=required to fail instead");
    };
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    match Command::new(&python).args(["-c", "import moto.server"]).stderr(Stdio::null()).status() {
        Ok(s) if s.success() => {}
        Ok(_) => {
            unavailable(format!("{python} cannot import moto.server"));
            return None;
        }
        Err(e) => {
            unavailable(format!("{python} cannot run: {e}"));
            return None;
        }
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(&python)
        .args(["-m", "moto.server", "-H", "127.0.0.1", "-p", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start moto's server: {e}"));
    let moto = Moto { child, port };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        // Creating the bucket is also the sign the server is up.
        if let Ok(status) = http(port, "PUT", &format!("/{BUCKET}")) {
            assert_eq!(status, 200, "creating the bucket");
            return Some(moto);
        }
        assert!(Instant::now() < deadline, "moto's server did not start on port {port} within 60 s");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// One bodiless request to the local server; its status.
fn http(port: u16, method: &str, path: &str) -> std::io::Result<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP answer: {answer:.80}")))
}

async fn upload(app: &TestApp, token: &str, filename: &str, bytes: &[u8]) -> Value {
    let req = Request::post("/api/v1/images")
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", format!("multipart/form-data; boundary={BOUNDARY}"))
        .body(Body::from(form(&[("file", Some(filename), bytes), ("alt", None, b"A test image")])))
        .unwrap();
    let res = app.raw(req).await;
    let body: Value = serde_json::from_slice(&res.bytes).unwrap_or(Value::Null);
    assert_eq!(res.status, 202, "{body}");
    body
}

async fn fetch(app: &TestApp, url: &str, headers: &[(&str, &str)]) -> Raw {
    let mut req = Request::get(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    app.raw(req.body(Body::empty()).unwrap()).await
}

/// Every file under `dir`, relative to it.
fn local_files(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.push(e.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out
}

#[tokio::test]
async fn media_is_stored_in_and_served_from_an_s3_bucket() {
    let Some(moto) = start_moto() else { return };
    let storage = Storage::s3(&S3Config {
        endpoint: Some(format!("http://127.0.0.1:{}", moto.port)),
        bucket: BUCKET.into(),
        region: "us-east-1".into(),
        access_key_id: Some("testing".into()),
        secret_access_key: Some("testing".into()),
        path_style: true,
        allow_http: true,
    })
    .unwrap();
    let app = TestApp::with_storage(storage.clone()).await;
    let site = app.scope.site_id.clone();

    // The seeded demo images are in the bucket and served from it.
    let seeded = app.get("/api/v1/images?limit=1").await.body["items"][0]["url"].as_str().unwrap().to_string();
    let demo = fetch(&app, &seeded, &[]).await;
    assert_eq!((demo.status, demo.header("content-type")), (200, "image/png"));
    assert_eq!(demo.bytes, storage.read(seeded.trim_start_matches("/uploads/")).await.unwrap());

    // A PNG and a JPEG (with EXIF) through the multipart route, processed.
    let png = upload(&app, &app.editor, "diagram.png", &samples::png(120, 80)).await;
    let jpeg = upload(&app, &app.editor, "holiday.jpg", &samples::jpeg_with_exif(64, 32, 6)).await;
    assert_eq!(MediaWorker::new(app.services.clone()).drain().await.unwrap(), 2);
    let mut urls = Vec::new();
    for (made, mime) in [(&png, "image/png"), (&jpeg, "image/jpeg")] {
        let image = app.get(&format!("/api/v1/images/{}", made["id"].as_str().unwrap())).await.body;
        assert_eq!((image["status"].as_str(), image["mime"].as_str()), (Some("completed"), Some(mime)), "{image}");
        let mut own = vec![(image["url"].as_str().unwrap().to_string(), mime.to_string())];
        for variant in ["thumbnail", "medium", "large"] {
            own.push((image["variants"][variant]["url"].as_str().unwrap().to_string(), mime.to_string()));
            own.push((image["variants"][variant]["webp"].as_str().unwrap().to_string(), "image/webp".into()));
        }
        urls.push((made["id"].as_str().unwrap().to_string(), own));
    }

    // Every file is an object of the bucket, listed through object_store.
    let stored: Vec<String> = storage.files(&site).await.unwrap().into_iter().map(|f| f.name).collect();
    for (_, own) in &urls {
        for (url, _) in own {
            let name = url.strip_prefix(&format!("/uploads/{site}/")).unwrap();
            assert!(stored.iter().any(|s| s == name), "{name} not in the bucket: {stored:?}");
        }
    }
    // The local folder holds staging only, and that is empty once done.
    let left = local_files(&app.services.uploads_dir);
    assert!(left.is_empty(), "files in the local uploads folder: {left:?}");

    // Served from the bucket with the recorded type and the usual headers.
    for (_, own) in &urls {
        for (url, mime) in own {
            let file = fetch(&app, url, &[]).await;
            assert_eq!(file.status, 200, "{url}");
            assert_eq!(file.header("content-type"), mime, "{url}");
            assert_eq!(file.header("x-content-type-options"), "nosniff");
            assert_eq!(file.header("cache-control"), "public, max-age=31536000, immutable");
            assert!(file.header("content-security-policy").contains("sandbox"));
            assert_eq!(file.header("content-length"), file.bytes.len().to_string());
            assert_eq!(file.bytes, storage.read(url.trim_start_matches("/uploads/")).await.unwrap());
            assert!(!file.bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()), "no metadata kept");
        }
    }
    let (jpeg_id, jpeg_files) = &urls[1];
    let original = &jpeg_files[0].0;
    let whole = fetch(&app, original, &[]).await;
    // A byte range, a suffix, and one past the end.
    let part = fetch(&app, original, &[("range", "bytes=2-11")]).await;
    assert_eq!(part.status, 206);
    assert_eq!(part.bytes, whole.bytes[2..12]);
    assert_eq!(part.header("content-range"), format!("bytes 2-11/{}", whole.bytes.len()));
    assert_eq!(part.header("content-type"), "image/jpeg");
    let tail = fetch(&app, original, &[("range", "bytes=-4")]).await;
    assert_eq!((tail.status, &tail.bytes[..]), (206, &whole.bytes[whole.bytes.len() - 4..]));
    let past = fetch(&app, original, &[("range", &format!("bytes={}-", whole.bytes.len()))]).await;
    assert_eq!(past.status, 416);
    // A cached copy that is still current, and a HEAD without the body.
    let etag = whole.header("etag").to_string();
    assert!(!etag.is_empty(), "an ETag");
    assert_eq!(fetch(&app, original, &[("if-none-match", &etag)]).await.status, 304);
    // The condition comes before the range, and before If-Modified-Since.
    let beyond = format!("bytes={}-", whole.bytes.len());
    assert_eq!(fetch(&app, original, &[("range", &beyond), ("if-none-match", &etag)]).await.status, 304);
    let since = "Thu, 01 Jan 2099 00:00:00 GMT";
    let changed = fetch(&app, original, &[("if-none-match", "\"other\""), ("if-modified-since", since)]).await;
    assert_eq!(changed.status, 200, "another ETag is a change, whatever the date");
    assert_eq!(past.header("content-range"), format!("bytes */{}", whole.bytes.len()));
    // An invalid range is ignored: the whole file answers.
    let backwards = fetch(&app, original, &[("range", "bytes=5-2")]).await;
    assert_eq!((backwards.status, backwards.bytes.len()), (200, whole.bytes.len()));
    let head = app.raw(Request::head(original).body(Body::empty()).unwrap()).await;
    assert_eq!((head.status, head.header("content-length")), (200, whole.bytes.len().to_string().as_str()));
    assert!(head.bytes.is_empty());

    // Another site reads none of it: not by its own path, not by the API.
    let name = original.rsplit('/').next().unwrap();
    assert_eq!(fetch(&app, &format!("/uploads/{}/{name}", app.other_scope.site_id), &[]).await.status, 404);
    let theirs = app.send("GET", &format!("/api/v1/images/{jpeg_id}"), Some(&app.other_admin), None).await;
    assert_eq!(theirs.status, 404);

    // Archived, the image and its variants are no longer served.
    assert_eq!(app.delete(&format!("/api/v1/images/{jpeg_id}")).await.status, 200);
    for (url, _) in jpeg_files {
        assert_eq!(fetch(&app, url, &[]).await.status, 404, "{url}");
    }
    // The PNG is still served.
    assert_eq!(fetch(&app, &urls[0].1[0].0, &[]).await.status, 200);

    // The clean-up removes an object no image registers, once old enough,
    // and keeps the registered ones (the archived image's too).
    storage
        .put(&format!("{site}/0123456789abcdef0123456789abcdef.png"), b"left by a failed job".to_vec())
        .await
        .unwrap();
    // The bucket also holds what is not Quire's: never touched.
    storage.put("backups/site.jsonl", b"someone else's".to_vec()).await.unwrap();
    let worker = MediaWorker::new(app.services.clone());
    let now = worker.clean(chrono::Utc::now()).await.unwrap();
    assert_eq!(now.files, 0, "too young to be taken for a leftover");
    let later = worker.clean(chrono::Utc::now() + chrono::Duration::hours(2)).await.unwrap();
    assert_eq!(later.files, 1);
    let after: Vec<String> = storage.files(&site).await.unwrap().into_iter().map(|f| f.name).collect();
    assert!(!after.iter().any(|n| n.starts_with("0123456789abcdef")), "{after:?}");
    assert_eq!(after.len(), stored.len(), "registered files stay: {after:?}");
    assert_eq!(storage.files("backups").await.unwrap().len(), 1, "another prefix is left alone");
    drop(moto);
}
