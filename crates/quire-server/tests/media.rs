//! Media over HTTP: multipart uploads streamed to the site's folder (size
//! limit as a 413 in the JSON shape), images made of uploads, processing in
//! the background, stored files served with the recorded type, nosniff and
//! cache headers, never across sites, never once archived.

mod common;

use axum::body::Body;
use axum::http::Request;
use common::{BOUNDARY, Raw, TestApp, form};
use quire_media::samples::{self, SECRET};
use quire_tools::media::MediaWorker;
use serde_json::{Value, json};

async fn send(
    app: &TestApp,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Body,
    chunked: bool,
    len: Option<usize>,
) -> Raw {
    let mut req = Request::builder().method(method).uri(path);
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    if !chunked && let Some(n) = len {
        req = req.header("content-length", n.to_string());
    }
    req = req.header("content-type", format!("multipart/form-data; boundary={BOUNDARY}"));
    app.raw(req.body(body).unwrap()).await
}

async fn post_form(app: &TestApp, path: &str, token: &str, body: Vec<u8>) -> Raw {
    let n = body.len();
    send(app, "POST", path, Some(token), Body::from(body), false, Some(n)).await
}

/// The body in 64 KiB chunks without a Content-Length.
async fn post_streamed(app: &TestApp, path: &str, token: &str, body: Vec<u8>) -> Raw {
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = body.chunks(64 * 1024).map(|c| Ok(c.to_vec())).collect();
    let stream = futures_util::stream::iter(chunks);
    send(app, "POST", path, Some(token), Body::from_stream(stream), true, None).await
}

async fn fetch(app: &TestApp, path: &str) -> Raw {
    app.raw(Request::builder().uri(path).body(Body::empty()).unwrap()).await
}

async fn process(app: &TestApp) -> usize {
    MediaWorker::new(app.services.clone()).drain().await.unwrap()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn incoming_files(app: &TestApp) -> usize {
    let dir = app.services.uploads_dir.join(&app.scope.site_id).join("incoming");
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

#[tokio::test]
async fn a_multipart_upload_becomes_a_processed_image_served_as_recorded() {
    let app = TestApp::new().await;
    let raw = samples::jpeg_with_exif(64, 32, 6);
    let body = form(&[
        ("file", Some("C:\\fakepath\\holiday.jpg"), &raw),
        ("alt", None, b"A beach"),
        ("tags", None, b"sea, summer"),
    ]);
    let res = post_form(&app, "/api/v1/images", &app.editor, body).await;
    assert_eq!(res.status, 202, "{}", res.json());
    let image = res.json();
    assert_eq!(image["status"], "processing");
    assert_eq!(image["filename"], "holiday.jpg");
    assert_eq!(image["mime"], "image/jpeg", "from the bytes, not the part's declared text/html");
    assert_eq!(image["alt"], "A beach");
    assert_eq!(image["tags"], json!(["sea", "summer"]));
    let id = image["id"].as_str().unwrap().to_string();
    // Not served while processing.
    assert_eq!(fetch(&app, image["url"].as_str().unwrap()).await.status, 404);

    assert_eq!(process(&app).await, 1);
    let done = app.get(&format!("/api/v1/images/{id}")).await;
    assert_status!(done, 200);
    let image = done.body;
    assert_eq!(image["status"], "completed");
    assert_eq!((image["width"].as_i64(), image["height"].as_i64()), (Some(32), Some(64)));
    let url = image["url"].as_str().unwrap();
    assert!(url.starts_with(&format!("/uploads/{}/", app.scope.site_id)), "{url}");

    let file = fetch(&app, url).await;
    assert_eq!(file.status, 200);
    assert_eq!(file.header("content-type"), "image/jpeg");
    assert_eq!(file.header("x-content-type-options"), "nosniff");
    assert_eq!(file.header("cache-control"), "public, max-age=31536000, immutable");
    assert!(file.header("content-security-policy").contains("sandbox"));
    assert!(!contains(&file.bytes, SECRET.as_bytes()) && !contains(&file.bytes, b"Exif"));
    let webp = fetch(&app, image["variants"]["thumbnail"]["webp"].as_str().unwrap()).await;
    assert_eq!((webp.status, webp.header("content-type")), (200, "image/webp"));
    assert_eq!(incoming_files(&app), 0);
}

#[tokio::test]
async fn an_upload_then_create_image_by_its_id_and_duplicates() {
    let app = TestApp::new().await;
    let png = samples::png(30, 20);
    let up = post_form(&app, "/api/v1/uploads", &app.author, form(&[("file", Some("logo.png"), &png)])).await;
    assert_eq!(up.status, 201, "{}", up.json());
    let up = up.json();
    assert_eq!(
        (up["mime"].as_str(), up["width"].as_i64(), up["bytes"].as_u64()),
        (Some("image/png"), Some(30), Some(png.len() as u64))
    );
    let made = app.post("/api/v1/images", json!({"uploadId": up["id"], "alt": "Logo"})).await;
    assert_status!(made, 202);
    let again = app.post("/api/v1/images", json!({"url": up["url"]})).await;
    assert_status!(again, 200);
    assert_eq!(again.body["id"], made.body["id"]);
    // The upload's own URL is never served.
    assert_eq!(fetch(&app, up["url"].as_str().unwrap()).await.status, 404);
    // Exactly one way to name the file.
    let none = app.post("/api/v1/images", json!({"alt": "x"})).await;
    assert_status!(none, 422);
    assert_eq!(none.error(), "Provide exactly one of uploadId, url or data");
    let unknown = app.post("/api/v1/images", json!({"url": "/uploads/demo/hero-dawn.png", "mime": "text/html"})).await;
    assert_status!(unknown, 400);
    // A viewer may not upload.
    let viewer = post_form(&app, "/api/v1/uploads", &app.viewer, form(&[("file", Some("a.png"), &png)])).await;
    assert_eq!(viewer.status, 403);
}

#[tokio::test]
async fn files_over_the_limit_are_413_in_the_json_shape_streamed_or_not() {
    let app = TestApp::build_with(|s| s.media.max_upload_bytes = 1024 * 1024, |s| s).await;
    let big = vec![0x42u8; 1_200_000];
    let mut png_head = samples::png(4, 4);
    png_head.extend_from_slice(&big);
    let before = app.get("/api/v1/images?limit=100").await.body["count"].clone();
    for streamed in [false, true] {
        let body = form(&[("file", Some("big.png"), &png_head)]);
        let res = if streamed {
            post_streamed(&app, "/api/v1/images", &app.admin, body).await
        } else {
            post_form(&app, "/api/v1/images", &app.admin, body).await
        };
        assert_eq!(res.status, 413, "streamed {streamed}: {:?}", String::from_utf8_lossy(&res.bytes));
        let err = res.json();
        assert_eq!(err["code"], "PAYLOAD_TOO_LARGE", "{err}");
        assert_eq!(err["error"], "the body is larger than the upload limit (max_upload_mb)");
    }
    // Just under the limit passes the size check (the bytes are then checked).
    let ok =
        post_form(&app, "/api/v1/uploads", &app.admin, form(&[("file", Some("ok.png"), &samples::png(8, 8))])).await;
    assert_eq!(ok.status, 201);
    assert_eq!(app.get("/api/v1/images?limit=100").await.body["count"], before);
    assert_eq!(incoming_files(&app), 1, "only the accepted upload is kept");
}

/// Two 380 KB PNGs of 7,000×7,000 took a server to 1.17 GB. A small file of
/// huge dimensions is refused from its header under the default pixel
/// budget, in the JSON error shape naming its size and the limit, on every
/// route that receives files; nothing is kept or queued. A server
/// configured with a larger budget takes it.
#[tokio::test]
async fn a_small_file_of_huge_dimensions_is_refused_before_decoding() {
    let app = TestApp::new().await;
    let flat = samples::png_flat(7000, 7000, false);
    assert!(flat.len() < 1_000_000, "{} bytes", flat.len());
    let said = "the image is 7000×7000 pixels (49 megapixels); the limit is 16 megapixels";
    for path in ["/api/v1/images", "/api/v1/uploads"] {
        let res = post_form(&app, path, &app.editor, form(&[("file", Some("flat.png"), &flat)])).await;
        assert_eq!(res.status, 422, "{path}: {}", res.json());
        let err = res.json();
        assert_eq!((err["code"].as_str(), err["field"].as_str()), (Some("VALIDATION"), Some("file")), "{path}");
        assert_eq!(err["error"], format!("file: {said}"), "{path}");
    }
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(&flat);
    let inline = app.post("/api/v1/images", json!({"data": data, "filename": "flat.png"})).await;
    assert_status!(inline, 422);
    assert_eq!(inline.error(), format!("data: {said}"));
    assert_eq!(incoming_files(&app), 0);
    assert_eq!(process(&app).await, 0, "nothing was queued");

    let larger = TestApp::build_with(|s| s.media.limits = quire_media::Limits::megapixels(50), |s| s).await;
    let res = post_form(&larger, "/api/v1/uploads", &larger.editor, form(&[("file", Some("flat.png"), &flat)])).await;
    assert_eq!(res.status, 201, "{}", res.json());
    assert_eq!((res.json()["width"].as_i64(), res.json()["height"].as_i64()), (Some(7000), Some(7000)));
}

#[tokio::test]
async fn refused_files_name_what_they_are() {
    let app = TestApp::new().await;
    let svg =
        post_form(&app, "/api/v1/images", &app.admin, form(&[("file", Some("logo.png"), &samples::svg_with_script())]))
            .await;
    assert_eq!(svg.status, 422);
    let err = svg.json();
    assert_eq!(err["code"], "VALIDATION");
    assert_eq!(err["field"], "file");
    assert_eq!(
        err["error"],
        "file: the file is an SVG image (SVG can carry scripts); only PNG, JPEG, WebP and GIF images are accepted"
    );
    let bomb =
        post_form(&app, "/api/v1/uploads", &app.admin, form(&[("file", Some("b.png"), &samples::png_bomb(60_000))]))
            .await;
    assert_eq!(bomb.status, 422);
    assert!(bomb.json()["error"].as_str().unwrap().contains("60000×60000"));
    let missing = post_form(&app, "/api/v1/images", &app.admin, form(&[("alt", None, b"x")])).await;
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["field"], "file");
    let unknown = post_form(&app, "/api/v1/uploads", &app.admin, form(&[("alt", None, b"x")])).await;
    assert_eq!(unknown.status, 400);
    assert_eq!(unknown.json()["error"], "unknown form field \"alt\"; the form has one field, file");
    let two = form(&[("file", Some("a.png"), &samples::png(2, 2)), ("file", Some("b.png"), &samples::png(3, 3))]);
    assert_eq!(post_form(&app, "/api/v1/uploads", &app.admin, two).await.status, 400);
    assert_eq!(incoming_files(&app), 0);
}

#[tokio::test]
async fn a_site_neither_registers_nor_reads_another_sites_files() {
    let app = TestApp::new().await;
    let up = post_form(&app, "/api/v1/uploads", &app.admin, form(&[("file", Some("a.png"), &samples::png(9, 9))]))
        .await
        .json();
    let theirs = app.send("POST", "/api/v1/images", Some(&app.other_admin), Some(json!({"uploadId": up["id"]}))).await;
    assert_status!(theirs, 404);
    let theirs = app.send("POST", "/api/v1/images", Some(&app.other_admin), Some(json!({"url": up["url"]}))).await;
    assert_status!(theirs, 404);
    let mine = app.post("/api/v1/images", json!({"uploadId": up["id"]})).await;
    assert_status!(mine, 202);
    let id = mine.body["id"].as_str().unwrap();
    assert_status!(app.send("GET", &format!("/api/v1/images/{id}"), Some(&app.other_admin), None).await, 404);
    // The other site's createImage tool cannot name it either.
    let tool = app
        .send("POST", "/api/v1/tools/createImage/invoke", Some(&app.other_admin), Some(json!({"uploadId": up["id"]})))
        .await;
    assert_status!(tool, 404);
    // Its files live in the other site's own folder.
    let other =
        post_form(&app, "/api/v1/images", &app.other_admin, form(&[("file", Some("a.png"), &samples::png(9, 9))]))
            .await;
    assert_eq!(other.status, 202, "the same bytes in another site are a new image");
    process(&app).await;
    let other = app
        .send("GET", &format!("/api/v1/images/{}", other.json()["id"].as_str().unwrap()), Some(&app.other_admin), None)
        .await;
    assert!(other.body["url"].as_str().unwrap().starts_with(&format!("/uploads/{}/", app.other_scope.site_id)));
}

#[tokio::test]
async fn archived_images_stop_being_served_and_restore_brings_them_back() {
    let app = TestApp::new().await;
    let made =
        post_form(&app, "/api/v1/images", &app.admin, form(&[("file", Some("a.gif"), &samples::gif(10, 10, 2))]))
            .await
            .json();
    process(&app).await;
    let image = app.get(&format!("/api/v1/images/{}", made["id"].as_str().unwrap())).await.body;
    let url = image["url"].as_str().unwrap().to_string();
    let thumb = image["variants"]["thumbnail"]["url"].as_str().unwrap().to_string();
    assert_eq!(fetch(&app, &url).await.header("content-type"), "image/gif");
    let archive = app.delete(&format!("/api/v1/images/{}", made["id"].as_str().unwrap())).await;
    assert_status!(archive, 200);
    assert_eq!(fetch(&app, &url).await.status, 404);
    assert_eq!(fetch(&app, &thumb).await.status, 404);
    let restored =
        app.post(&format!("/api/v1/archive/{}/restore", archive.body["id"].as_str().unwrap()), json!({})).await;
    assert_status!(restored, 200);
    assert_eq!(fetch(&app, &url).await.status, 200);
    assert_eq!(fetch(&app, &thumb).await.status, 200);
}

#[tokio::test]
async fn only_recorded_files_are_served() {
    let app = TestApp::new().await;
    let seeded = app.get("/api/v1/images?limit=1").await.body["items"][0]["url"].as_str().unwrap().to_string();
    let file = fetch(&app, &seeded).await;
    assert_eq!(file.status, 200);
    assert_eq!(file.header("content-type"), "image/png");
    assert_eq!(file.header("cache-control"), "public, max-age=300", "not a hashed name");
    // A file put in the folder by hand is not served; nor is any path out.
    let site = app.services.uploads_dir.join(&app.scope.site_id);
    std::fs::write(site.join("page.html"), "<script>alert(1)</script>").unwrap();
    for path in [
        format!("/uploads/{}/page.html", app.scope.site_id),
        "/uploads/../quire.db".to_string(),
        "/uploads/%2e%2e/quire.db".to_string(),
        format!("/uploads/{}//x.png", app.scope.site_id),
    ] {
        let res = fetch(&app, &path).await;
        assert_eq!(res.status, 404, "{path}");
        assert_eq!(res.json()["code"], "NOT_FOUND", "{path}");
    }
}

#[tokio::test]
async fn processing_progress_is_readable_over_rest_stage_by_stage() {
    let app = TestApp::new().await;
    let body = form(&[("file", Some("stages.png"), &samples::png(900, 600))]);
    let res = post_form(&app, "/api/v1/images", &app.editor, body).await;
    assert_eq!(res.status, 202, "{}", res.json());
    let id = res.json()["id"].as_str().unwrap().to_string();
    let jobs = app.get(&format!("/api/v1/images/{id}/jobs")).await;
    assert_status!(jobs, 200);
    let queued = &jobs.body["items"][0];
    assert_eq!(
        (&queued["kind"], &queued["status"], &queued["progress"], &queued["stage"], &queued["attempts"]),
        (&json!("image.process"), &json!("queued"), &json!(0), &Value::Null, &json!(0))
    );
    let job_id = queued["id"].as_str().unwrap().to_string();

    // What the worker reports while it runs, as listeners receive it.
    let mut events = app.services.media.events.subscribe();
    assert_eq!(process(&app).await, 1);
    let mut seen = Vec::new();
    while let Ok(e) = events.try_recv() {
        assert_eq!(e.job.id, job_id);
        assert_eq!(e.session_id, None, "queued over REST, by no agent's turn");
        seen.push((e.job.status, e.job.stage.clone().unwrap_or_default(), e.job.progress));
    }
    let stages: Vec<&str> = seen.iter().map(|(_, s, _)| s.as_str()).collect();
    assert_eq!(
        stages,
        ["starting", "reading", "decoding", "encoding", "variants", "variants", "variants", "storing", ""]
    );
    assert!(seen.windows(2).all(|w| w[0].2 <= w[1].2), "progress only grows: {seen:?}");
    assert_eq!(seen.last().unwrap(), &(quire_core::model::JobStatus::Done, String::new(), 100));

    let done = app.get(&format!("/api/v1/jobs/{job_id}")).await;
    assert_status!(done, 200);
    assert_eq!(
        (&done.body["status"], &done.body["progress"], &done.body["stage"], &done.body["attempts"]),
        (&json!("done"), &json!(100), &Value::Null, &json!(1))
    );
    assert_eq!(done.body["subjectId"], id);
    assert_eq!(app.get(&format!("/api/v1/images/{id}/jobs")).await.body["items"][0], done.body);

    // A failure says why, on the job as on the image.
    let poly = form(&[("file", Some("poly.gif"), &samples::gif_html_polyglot())]);
    let bad = post_form(&app, "/api/v1/images", &app.editor, poly).await.json();
    process(&app).await;
    let failed = app.get(&format!("/api/v1/images/{}/jobs", bad["id"].as_str().unwrap())).await;
    assert_eq!(failed.body["items"][0]["status"], "failed");
    assert!(failed.body["items"][0]["error"].as_str().unwrap().contains("not a readable GIF"), "{}", failed.body);

    // Another site sees neither the job nor the image's jobs.
    let other = app.send("GET", &format!("/api/v1/jobs/{job_id}"), Some(&app.other_admin), None).await;
    assert_status!(other, 404);
    let other = app.send("GET", &format!("/api/v1/images/{id}/jobs"), Some(&app.other_admin), None).await;
    assert_status!(other, 404);
    assert_status!(app.get("/api/v1/jobs/nope").await, 404);
    assert_status!(app.send("GET", &format!("/api/v1/jobs/{job_id}"), None, None).await, 401);
}

#[tokio::test]
async fn a_job_queued_by_a_turn_reports_progress_on_the_session_stream() {
    use quire_agent::testing::{openai_stream, serve};
    let (fake, base) = serve().await;
    // The serving process's background work: the job worker among it.
    let app = TestApp::serving_with_llm(&base).await;
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(samples::png(400, 300));
    let args = json!({ "data": data, "filename": "chart.png", "alt": "A chart" }).to_string();
    fake.push(openai_stream("", &[("c1", "createImage", &args)]));
    fake.push(openai_stream("Added the chart.", &[]));
    let session = app.start_chat(&app.editor, "add the chart").await;
    let path = format!("/api/v1/sessions/{session}/events");
    let mut last: Option<String> = None;
    let mut jobs = Vec::new();
    // Job events arrive while the turn runs or after it ended, on the same stream.
    loop {
        let events = app.sse(&path, &app.editor, last.as_deref(), "CUSTOM").await;
        let (id, _, data) = events.last().unwrap().clone();
        last = Some(id);
        if data["name"] == "job_progress" {
            jobs.push(data["value"].clone());
            if data["value"]["status"] == "done" {
                break;
            }
        }
    }
    let image_id = jobs[0]["subjectId"].as_str().unwrap();
    assert!(jobs.iter().all(|j| j["kind"] == "image.process" && j["subjectId"] == image_id));
    assert_eq!(jobs[0]["status"], "running");
    assert!(jobs.iter().any(|j| j["stage"] == "variants"), "{jobs:?}");
    assert_eq!(jobs.last().unwrap()["progress"], 100);
    let image = app.get(&format!("/api/v1/images/{image_id}")).await;
    assert_eq!(image.body["status"], "completed");
    // The session's owner alone reads that stream.
    let other = app.send_raw("GET", &path, Some(&app.author), None, &[]).await;
    assert_status!(other, 404);
}

#[tokio::test]
async fn an_image_made_from_a_form_is_logged_under_the_session_the_client_named() {
    let app = TestApp::new().await;
    let png = samples::png(12, 8);
    let body = form(&[("file", Some("named.png"), &png), ("alt", None, b"Named")]);
    let n = body.len();
    let req = Request::builder()
        .method("POST")
        .uri("/api/v1/images")
        .header("authorization", format!("Bearer {}", app.author))
        .header("x-quire-session", "client-chat-3")
        .header("content-length", n.to_string())
        .header("content-type", format!("multipart/form-data; boundary={BOUNDARY}"));
    let made = app.raw(req.body(Body::from(body)).unwrap()).await;
    assert_eq!(made.status, 202, "{}", made.json());
    let id = made.json()["id"].as_str().unwrap().to_string();
    let changes = app.get(&format!("/api/v1/revisions/image/{id}")).await;
    let created = &changes.body["items"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(created["sessionId"], "client-chat-3", "{created}");
}
