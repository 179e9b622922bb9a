//! The web a task's research happens in: a small HTTP server on a local
//! port serving the task's pages, and at `/search` a SearXNG-shaped
//! answer listing them, so research and injection tasks run the real
//! external tools without reaching the internet.

use super::task::WebPage;
use serde_json::json;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// A running web server; it stops when dropped.
pub struct Web {
    /// Its address, `http://<host>:<port>`.
    pub base: String,
    /// The loopback address it listens on: the one address a run lets the
    /// guarded client reach. `127.77.0.1` where the system routes all of
    /// 127.0.0.0/8 to loopback (Linux), so a task's web is not the address
    /// of every other local service; `127.0.0.1` elsewhere.
    pub host: String,
    serving: JoinHandle<()>,
}

impl Drop for Web {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

impl Web {
    /// Serves `pages` on a free local port.
    pub async fn serve(pages: Vec<WebPage>) -> std::io::Result<Web> {
        let listener = match TcpListener::bind("127.77.0.1:0").await {
            Ok(listener) => listener,
            Err(_) => TcpListener::bind("127.0.0.1:0").await?,
        };
        let addr = listener.local_addr()?;
        let base = format!("http://{addr}");
        let host = addr.ip().to_string();
        let pages = Arc::new(pages);
        let site = base.clone();
        let serving = tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let (pages, site) = (Arc::clone(&pages), site.clone());
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 4096];
                    // The request head only: these pages take no body.
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&head);
                    let target = head.split_whitespace().nth(1).unwrap_or("/");
                    let (status, kind, body) = answer(&pages, &site, target);
                    let reply = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = socket.write_all(reply.as_bytes()).await;
                    let _ = socket.write_all(body.as_bytes()).await;
                    let _ = socket.shutdown().await;
                });
            }
        });
        Ok(Web { base, host, serving })
    }
}

/// The status, content type and body for a request of `target`.
fn answer(pages: &[WebPage], base: &str, target: &str) -> (&'static str, String, String) {
    let (path, _query) = target.split_once('?').unwrap_or((target, ""));
    if path == "/search" {
        let results: Vec<_> = pages
            .iter()
            .map(|p| {
                let text: String = strip_tags(&p.body).chars().take(300).collect();
                json!({ "title": p.title, "url": format!("{base}{}", p.path), "content": text })
            })
            .collect();
        return ("200 OK", "application/json".into(), json!({ "results": results }).to_string());
    }
    match pages.iter().find(|p| p.path == path) {
        Some(page) => ("200 OK", page.content_type.clone(), page.body.clone()),
        None => ("404 Not Found", "text/plain".into(), "not found".into()),
    }
}

/// Text without markup, for search snippets.
fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in html.chars() {
        match c {
            '<' => inside = true,
            '>' => {
                inside = false;
                out.push(' ');
            }
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}
