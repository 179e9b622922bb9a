//! The ceiling `bench/run.sh` measures Quire against: a bare axum handler
//! answering a small JSON body, on the same runtime and machine, with no
//! state, no database and no middleware.
//!
//! Usage: `cargo run --release -p quire-server --example bare_axum -- 127.0.0.1:18182`

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:18182".into());
    let app =
        axum::Router::new().route("/", axum::routing::get(|| async { axum::Json(serde_json::json!({ "ok": true })) }));
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    axum::serve(listener, app).await
}
