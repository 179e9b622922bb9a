//! `quire images upload` and the serving process's job worker, run as a user
//! runs them.

mod support;
use support::*;

use quire_media::samples::{self, SECRET};
use serde_json::Value;
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
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    assert!(run(&["seed", "--data", data]).0);
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
fn a_queued_image_is_processed_by_the_server_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    assert!(run(&["seed", "--data", data]).0);
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
