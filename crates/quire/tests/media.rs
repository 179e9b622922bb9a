//! `quire images upload` and the serving process's job worker, run as a user
//! runs them.

mod support;
use support::*;

use quire_media::samples::{self, SECRET};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn http_get(addr: &str, path: &str, token: Option<&str>) -> (u16, String, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).unwrap();
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n").unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&response[..split]).to_string();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head, response[split + 4..].to_vec())
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn images_upload_processes_files_and_names_what_it_refuses() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    let photo = dir.path().join("photo.jpg");
    std::fs::write(&photo, samples::jpeg_with_exif(80, 40, 6)).unwrap();
    let logo = dir.path().join("logo.png");
    std::fs::write(&logo, samples::svg_with_script()).unwrap();
    let (ok, out, err) =
        run(&["images", "upload", photo.to_str().unwrap(), logo.to_str().unwrap(), "--alt", "Test", "--data", data]);
    assert!(!ok, "one file was refused, so the command fails: {out} {err}");
    let results: Value = serde_json::from_str(&out).unwrap();
    let image = &results[0]["image"];
    assert_eq!(image["status"], "completed", "{out}");
    assert_eq!((image["width"].as_i64(), image["height"].as_i64()), (Some(40), Some(80)));
    assert_eq!(image["alt"], "Test");
    let error = results[1]["error"].as_str().unwrap();
    assert!(error.contains("an SVG image"), "{error}");
    let stored = std::fs::read(dir.path().join(image["url"].as_str().unwrap().trim_start_matches('/'))).unwrap();
    assert!(!contains(&stored, SECRET.as_bytes()) && !contains(&stored, b"Exif"));

    let (ok, _, err) = run(&["images", "upload", "/no/such/file.png", "--data", data]);
    assert!(!ok);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn the_pixel_budget_is_the_configured_one() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    let flat = dir.path().join("flat.png");
    std::fs::write(&flat, samples::png_flat(7000, 7000, false)).unwrap();
    let upload = |megapixels: Option<&str>| {
        let mut cmd = quire();
        cmd.args(["images", "upload", flat.to_str().unwrap(), "--no-wait", "--data", data]);
        if let Some(m) = megapixels {
            cmd.env("QUIRE_MAX_IMAGE_MEGAPIXELS", m);
        }
        let out = cmd.output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (ok, out, _) = upload(None);
    assert!(!ok, "{out}");
    let results: Value = serde_json::from_str(&out).unwrap();
    let error = results[0]["error"].as_str().unwrap();
    assert!(error.contains("the image is 7000×7000 pixels (49 megapixels); the limit is 16 megapixels"), "{error}");
    let (ok, out, err) = upload(Some("50"));
    assert!(ok, "{out} {err}");
    let results: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(results[0]["image"]["width"], 7000, "{out}");
    let (ok, _, err) = upload(Some("0"));
    assert!(!ok && err.contains("max_image_megapixels must be at least 1"), "{err}");
}

#[test]
fn a_queued_image_is_processed_by_the_server_after_a_restart() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    let file = dir.path().join("later.png");
    std::fs::write(&file, samples::png(120, 60)).unwrap();
    // Queued with no server running: nothing processes it yet.
    let (ok, out, err) = run(&["images", "upload", file.to_str().unwrap(), "--no-wait", "--data", data]);
    assert!(ok, "{err}");
    let results: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(results[0]["image"]["status"], "processing");
    let id = results[0]["image"]["id"].as_str().unwrap().to_string();

    let token = "qk_media-cli-test-0123456789abcdef";
    let server = start(data, Some(token));
    let deadline = Instant::now() + Duration::from_secs(60);
    let image = loop {
        let (status, _, body) = http_get(&server.addr, &format!("/api/v1/images/{id}"), Some(token));
        assert_eq!(status, 200);
        let image: Value = serde_json::from_slice(&body).unwrap();
        if image["status"] != "processing" {
            break image;
        }
        assert!(Instant::now() < deadline, "still processing: {image}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(image["status"], "completed", "{image}");
    let (status, head, body) = http_get(&server.addr, image["url"].as_str().unwrap(), None);
    assert_eq!(status, 200);
    let head = head.to_ascii_lowercase();
    assert!(head.contains("content-type: image/png"), "{head}");
    assert!(head.contains("x-content-type-options: nosniff"), "{head}");
    assert!(head.contains("cache-control: public, max-age=31536000, immutable"), "{head}");
    assert_eq!(image::load_from_memory(&body).unwrap().width(), 120);
}

/// Files (not folders) directly in `dir`, by name.
fn files_in(dir: &std::path::Path) -> std::collections::BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Everything under `dir`, folders included, as paths relative to it.
fn tree(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.push(format!("{name}/"));
            out.extend(tree(&e.path()).into_iter().map(|p| format!("{name}/{p}")));
        } else {
            out.push(name);
        }
    }
    out
}

fn get_json(addr: &str, path: &str, token: &str) -> Value {
    let (status, _, body) = http_get(addr, path, Some(token));
    assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body));
    serde_json::from_slice(&body).unwrap()
}

#[test]
fn a_server_killed_mid_job_finishes_it_on_the_next_start_with_nothing_half_written() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();
    let token = "qk_media-crash-test-0123456789abcdef";
    // A short lease, so the next start takes the job over soon.
    let lease = [("QUIRE_JOB_LEASE_SECS", "2")];
    let server = start_with(data, Some(token), &lease);
    let uploads = dir.path().join("uploads");
    let site = std::fs::read_dir(&uploads).unwrap().next().unwrap().unwrap().path();
    let seeded = files_in(&site);

    // Large enough that processing takes a while: the kill lands inside it.
    let file = dir.path().join("big.jpg");
    std::fs::write(&file, samples::photo_jpeg(2400, 1600)).unwrap();
    let (ok, out, err) = run(&["images", "upload", file.to_str().unwrap(), "--no-wait", "--data", data]);
    assert!(ok, "{err}");
    let results: Value = serde_json::from_str(&out).unwrap();
    let id = results[0]["image"]["id"].as_str().unwrap().to_string();

    // Wait until the server is inside the job, past decoding, then SIGKILL it.
    let deadline = Instant::now() + Duration::from_secs(120);
    let stage = loop {
        let jobs = get_json(&server.addr, &format!("/api/v1/images/{id}/jobs"), token);
        let job = &jobs["items"][0];
        assert_ne!(job["status"], "done", "the job finished before the kill; use a larger image: {job}");
        if job["status"] == "running" && ["encoding", "variants", "storing"].contains(&job["stage"].as_str().unwrap()) {
            break job["stage"].as_str().unwrap().to_string();
        }
        assert!(Instant::now() < deadline, "the job never ran: {job}\nlog:\n{}", server.log());
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut server = server;
    server.child.kill().unwrap(); // SIGKILL
    server.child.wait().unwrap();
    drop(server);
    let killed = get_json_offline(data, &id);
    assert_eq!(killed["status"], "processing", "killed while {stage}: {killed}");

    // The next start takes the job over (its lease ended) and finishes it.
    let server = start_with(data, Some(token), &lease);
    let deadline = Instant::now() + Duration::from_secs(180);
    let image = loop {
        let image = get_json(&server.addr, &format!("/api/v1/images/{id}"), token);
        if image["status"] != "processing" {
            break image;
        }
        if Instant::now() >= deadline {
            let jobs = get_json(&server.addr, &format!("/api/v1/images/{id}/jobs"), token);
            panic!("still processing after the restart: {image}\njobs: {jobs}\nlog:\n{}", server.log());
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(image["status"], "completed", "{image}");
    assert_eq!((image["width"].as_i64(), image["height"].as_i64()), (Some(2400), Some(1600)));
    let jobs = get_json(&server.addr, &format!("/api/v1/images/{id}/jobs"), token);
    let job = &jobs["items"][0];
    assert_eq!(
        (&job["status"], &job["attempts"], &job["progress"]),
        (&json!("done"), &json!(2), &json!(100)),
        "the killed attempt, then the one that finished: {job}"
    );
    assert_eq!(jobs["items"].as_array().unwrap().len(), 1, "one job, not a second one");

    // One image, and exactly its files: the original and three variants in
    // two formats, no duplicates, nothing partial anywhere.
    let all = get_json(&server.addr, "/api/v1/images?limit=100", token);
    let same: Vec<&Value> = all["items"].as_array().unwrap().iter().filter(|i| i["filename"] == "big.jpg").collect();
    assert_eq!(same.len(), 1);
    let mut expected: std::collections::BTreeSet<String> = seeded.clone();
    let mut urls = vec![image["url"].as_str().unwrap().to_string()];
    for v in image["variants"].as_object().unwrap().values() {
        urls.push(v["url"].as_str().unwrap().to_string());
        urls.push(v["webp"].as_str().unwrap().to_string());
    }
    for url in &urls {
        expected.insert(url.rsplit('/').next().unwrap().to_string());
        let (status, _, body) = http_get(&server.addr, url, None);
        assert_eq!(status, 200, "{url}");
        image::load_from_memory(&body).unwrap_or_else(|e| panic!("{url} does not decode: {e}"));
    }
    assert_eq!(urls.len(), 7);
    assert_eq!(files_in(&site), expected, "the site's folder holds the seed's files and this image's, nothing else");
    assert_eq!(tree(&site.join("incoming")), Vec::<String>::new(), "no staged file or work folder is left");
    // Its change log: created, then completed once.
    let changes = get_json(&server.addr, &format!("/api/v1/changes?entity=image&entityId={id}"), token);
    assert_eq!(changes["count"], 2, "{changes}");
}

/// An image as the database holds it, read with the CLI (no server running).
fn get_json_offline(data: &str, id: &str) -> Value {
    let args = format!("{{\"id\":\"{id}\"}}");
    let (ok, out, err) = run(&["tools", "call", "getImage", "--args", &args, "--data", data]);
    assert!(ok, "{err}");
    let result: Value = serde_json::from_str(&out).unwrap();
    result["items"][0].clone()
}
