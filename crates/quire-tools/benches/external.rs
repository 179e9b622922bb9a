//! External tools: `fetchContent` of a 1 MB page (Readability extraction
//! alone, and the whole tool call through the guarded client, with the
//! growth of the process's peak resident memory), and `searchWeb` in deep
//! mode against zero-latency fakes (SearXNG and pages on loopback, a model
//! that answers at once), so the figures are the tools' own overhead.
//!
//! Run: `cargo bench -p quire-tools --bench external`.

use axum::Router;
use axum::extract::RawQuery;
use axum::routing::get;
use quire_core::access::Group;
use quire_core::model::Surface;
use quire_net::{Limits, NetClient, StaticResolver};
use quire_store::Store;
use quire_store::seed::seed_demo;
use quire_tools::external::web::readable_html;
use quire_tools::external::{ExternalSettings, WriteFuture, Writer};
use quire_tools::params::PageFormat;
use quire_tools::{CallContext, Registry, Services};
use serde_json::json;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Instant;

/// A news-like page of about `bytes` bytes: navigation, a long article of
/// paragraphs with links and lists, a sidebar and comments.
fn big_page(bytes: usize) -> String {
    let mut html = String::from(
        "<html><head><title>The harbour at 1 MB</title><meta name=\"author\" content=\"Mara Jensen\"></head><body>\
         <nav>",
    );
    for i in 0..200 {
        html.push_str(&format!("<a href=\"/section/{i}\">Section {i}</a> "));
    }
    html.push_str("</nav><aside>");
    for i in 0..300 {
        html.push_str(&format!("<div class=\"ad\"><a href=\"/promo/{i}\">Offer {i}</a></div>"));
    }
    html.push_str("</aside><article><h1>The harbour at 1 MB</h1>");
    let mut i = 0;
    while html.len() < bytes * 3 / 4 {
        html.push_str(&format!(
            "<h2>Part {i}</h2><p>Tides rise and fall twice a day because the moon's gravity pulls the oceans towards it \
             while the earth turns beneath; pilots plan around the <a href=\"https://example.org/t/{i}\">spring tide</a>, \
             and the office publishes tables a year ahead. Paragraph {i} adds enough words to be scored as content.</p>\
             <ul><li>High water {i}:12</li><li>Low water {i}:48</li></ul>"
        ));
        i += 1;
    }
    html.push_str("</article><section class=\"comments\">");
    while html.len() < bytes {
        html.push_str("<div class=\"comment\"><b>reader</b> Nice article!</div>");
    }
    html.push_str("</section></body></html>");
    html
}

/// Peak resident memory of this process (VmHWM), in MB.
fn peak_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("VmHWM:")).map(str::to_string))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[derive(Debug)]
struct InstantWriter;

impl Writer for InstantWriter {
    fn write<'a>(&'a self, instructions: &'a str, _material: &'a str) -> WriteFuture<'a> {
        Box::pin(async move {
            Ok(if instructions.contains("JSON array") {
                "[\"tide tables\", \"why tides rise\"]".to_string()
            } else {
                "Tides rise twice a day [1]; tables are published a year ahead [2].".to_string()
            })
        })
    }
}

#[tokio::main]
async fn main() {
    let page = Arc::new(big_page(1024 * 1024));
    let small = Arc::new(big_page(20 * 1024));
    // Zero-latency fakes: a page server and SearXNG on loopback.
    let (p1, p2) = (page.clone(), small.clone());
    let app = Router::new()
        .route("/big", get(move || { let p = p1.clone(); async move { ([("content-type", "text/html")], p.to_string()) } }))
        .route("/page/{n}", get(move || { let p = p2.clone(); async move { ([("content-type", "text/html")], p.to_string()) } }))
        .route(
            "/search",
            get(|RawQuery(q): RawQuery| async move {
                let q = q.unwrap_or_default();
                let results: Vec<_> = (0..8)
                    .map(|i| json!({ "title": format!("Result {i}"), "url": format!("http://fake.test:PORT/page/{}", (i + q.len()) % 10), "content": "snippet" }))
                    .collect();
                ([("content-type", "application/json")], json!({ "results": results }).to_string())
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = app.layer(axum::middleware::map_response(move |res: axum::response::Response| async move {
        // Point result URLs at the fake's port.
        let (parts, body) = res.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes).replace("PORT", &port.to_string());
        axum::response::Response::from_parts(parts, axum::body::Body::from(text))
    }));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    // Readability alone on the 1 MB page.
    let before = peak_mb();
    let mut extraction = Vec::new();
    let mut chars = 0;
    for _ in 0..15 {
        let started = Instant::now();
        let readable = readable_html(&page, Some("http://fake.test/big"), PageFormat::Markdown, 20_000);
        extraction.push(started.elapsed().as_secs_f64() * 1000.0);
        chars = readable.length;
    }
    let after = peak_mb();
    println!(
        "fetchContent extraction of a {:.2} MB page: median {:.1} ms over 15 runs ({chars} characters of markdown before the cut); peak RSS {before:.1} -> {after:.1} MB (+{:.1} MB)",
        page.len() as f64 / 1_048_576.0,
        median(extraction),
        after - before
    );

    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("quire.db")).await.unwrap();
    let scope = seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
    let mut services = Services::new(store, dir.path());
    let resolver = StaticResolver::new().with("fake.test", &[IpAddr::V4(Ipv4Addr::LOCALHOST)]);
    services.external = ExternalSettings {
        net: NetClient::with_resolver(&["fake.test".into()], Limits::default(), Arc::new(resolver)).unwrap(),
        searxng_url: Some(format!("http://fake.test:{port}")),
        writer: Some(Arc::new(InstantWriter)),
        ..ExternalSettings::default()
    };
    let registry = Registry::new(services);
    let ctx = CallContext::new("bench", Group::Admin, scope, Surface::Cli);

    // The whole tool call: guarded fetch of 1 MB over loopback + extraction.
    let mut calls = Vec::new();
    for _ in 0..15 {
        let started = Instant::now();
        let v = registry.call(&ctx, "fetchContent", json!({ "urls": [format!("http://fake.test:{port}/big")] })).await;
        calls.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(v["success"], true, "{v}");
    }
    println!(
        "fetchContent tool call, 1 MB page over loopback: median {:.1} ms over 15 calls; peak RSS now {:.1} MB",
        median(calls),
        peak_mb()
    );

    for (mode, n) in [("quick", 50), ("deep", 50)] {
        let mut times = Vec::new();
        for i in 0..n {
            let started = Instant::now();
            let v = registry
                .call(
                    &ctx,
                    "searchWeb",
                    json!({ "query": format!("why do tides rise {i}"), "mode": mode, "numResults": 5 }),
                )
                .await;
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(v["success"], true, "{v}");
        }
        println!(
            "searchWeb {mode} (5 results; deep: 3 queries, 5 pages of 20 KB read): median {:.2} ms over {n} calls",
            median(times)
        );
    }
}
