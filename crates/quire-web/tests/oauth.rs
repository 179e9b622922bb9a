//! OAuth 2.1 for remote MCP clients, end to end through the router: the
//! metadata a client discovers, registration, a person's consent in the
//! back-office, the code exchanged with PKCE, tokens bound to `/mcp`, and
//! the refusals — a wrong verifier, a code or refresh token used twice, a
//! token for another resource, a group above the person's, a revoked grant.

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use base64::Engine;
use common::{Browser, Site};
use http_body_util::BodyExt;
use quire_core::access::Group;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tower::ServiceExt;

const HOST: &str = "127.0.0.1";
const REDIRECT: &str = "http://127.0.0.1:4711/callback";

/// Sends `req` with this server's Host: (status, headers, JSON body).
async fn call(site: &Site, mut req: Request<Body>) -> (StatusCode, axum::http::HeaderMap, Value) {
    req.headers_mut().insert(header::HOST, HOST.parse().unwrap());
    let response = site.router().oneshot(req).await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, headers, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

fn challenge(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// The token endpoint with `fields`.
async fn token(site: &Site, fields: &[(&str, &str)]) -> (StatusCode, Value) {
    let body = serde_urlencoded::to_string(fields).unwrap();
    let req = Request::post("/oauth/token")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(body))
        .unwrap();
    let (status, _, body) = call(site, req).await;
    (status, body)
}

/// An MCP request with `token`: (status, headers, body).
async fn mcp(site: &Site, token: &str, method: &str) -> (StatusCode, axum::http::HeaderMap, String) {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": method,
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } },
    });
    let mut req = Request::post("/mcp")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .body(Body::from(body.to_string()))
        .unwrap();
    req.headers_mut().insert(header::HOST, "127.0.0.1".parse().unwrap());
    let response = site.router().oneshot(req).await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, headers, String::from_utf8_lossy(&bytes).into_owned())
}

/// A person's consent to `client` with `choices`: where it redirects.
async fn consent(site: &Site, who: &Browser, client: &str, verifier: &str, choices: &[(&str, &str)]) -> String {
    let challenge = challenge(verifier);
    let mut fields = vec![
        ("response_type", "code"),
        ("client_id", client),
        ("redirect_uri", REDIRECT),
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
        ("state", "xyz"),
        ("resource", "http://127.0.0.1/mcp"),
    ];
    fields.extend_from_slice(choices);
    let mut all = vec![("_csrf", who.csrf.as_str())];
    all.extend_from_slice(&fields);
    let mut req = site.request_get(who, "/oauth/authorize");
    *req.method_mut() = axum::http::Method::POST;
    req.headers_mut().insert(header::CONTENT_TYPE, "application/x-www-form-urlencoded".parse().unwrap());
    req.headers_mut().insert(header::HOST, HOST.parse().unwrap());
    *req.body_mut() = Body::from(serde_urlencoded::to_string(&all).unwrap());
    let response = site.router().oneshot(req).await.unwrap();
    let location = response.headers().get(header::LOCATION).map(|l| l.to_str().unwrap().to_string());
    location.unwrap_or_else(|| format!("no redirect: {}", response.status()))
}

/// The value of `name` in `url`'s query.
fn param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    serde_urlencoded::from_str::<Vec<(String, String)>>(query)
        .ok()?
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

#[tokio::test]
async fn a_client_discovers_registers_is_granted_by_a_person_and_calls_mcp_with_its_token() {
    let site = common::site().await;
    // Discovery: /mcp's challenge names its metadata, which names the server.
    let (status, headers, _) = mcp(&site, "nope", "initialize").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let challenge_header = headers.get(header::WWW_AUTHENTICATE).unwrap().to_str().unwrap();
    assert_eq!(
        challenge_header,
        "Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource/mcp\""
    );
    let (_, _, resource) =
        call(&site, Request::get("/.well-known/oauth-protected-resource/mcp").body(Body::empty()).unwrap()).await;
    assert_eq!(resource["resource"], "http://127.0.0.1/mcp");
    assert_eq!(resource["authorization_servers"], json!(["http://127.0.0.1"]));
    let (_, _, server) =
        call(&site, Request::get("/.well-known/oauth-authorization-server").body(Body::empty()).unwrap()).await;
    assert_eq!(server["token_endpoint"], "http://127.0.0.1/oauth/token");
    assert_eq!(server["code_challenge_methods_supported"], json!(["S256"]));

    // Registration.
    let refused = Request::post("/oauth/register")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({ "redirect_uris": ["http://evil.example/cb"] }).to_string()))
        .unwrap();
    let (status, _, body) = call(&site, refused).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_redirect_uri")), "{body}");
    let register = Request::post("/oauth/register")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({ "client_name": "Desk client", "redirect_uris": [REDIRECT] }).to_string()))
        .unwrap();
    let (status, _, registered) = call(&site, register).await;
    assert_eq!(status, StatusCode::CREATED, "{registered}");
    let client = registered["client_id"].as_str().unwrap().to_string();

    // The consent screen: after signing in, with groups up to the person's.
    let editor = site.browser("ed@example.com", Group::Editor).await;
    let query = format!(
        "/oauth/authorize?response_type=code&client_id={client}&redirect_uri={}&code_challenge={}&code_challenge_method=S256&state=xyz",
        urlencode(REDIRECT),
        challenge("v".repeat(43).as_str())
    );
    let (status, html) = site.get(&editor, &query).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains("Allow Desk client to use Quire?"), "{html}");
    assert!(html.contains(r#"<option value="editor" selected>"#) && !html.contains(r#"value="admin""#), "{html}");
    let unknown = query.replace(&client, "qc_nobody");
    assert_eq!(
        site.get(&editor, &unknown).await.0,
        StatusCode::BAD_REQUEST,
        "an unknown client is shown, not redirected"
    );

    // Above the person's group: refused on the screen, no code.
    let verifier = "a".repeat(50);
    let above = consent(
        &site,
        &editor,
        &client,
        &verifier,
        &[("place", "demo/production"), ("group", "admin"), ("tools", "readonly"), ("decision", "allow")],
    )
    .await;
    assert!(above.starts_with("no redirect: 422"), "{above}");
    // A site the person does not belong to: refused the same way.
    let elsewhere = [("place", "other/production"), ("group", "viewer"), ("tools", "readonly"), ("decision", "allow")];
    let elsewhere = consent(&site, &editor, &client, &verifier, &elsewhere).await;
    assert!(elsewhere.starts_with("no redirect: 422"), "{elsewhere}");
    // Denied: the client hears access_denied.
    let denied = consent(&site, &editor, &client, &verifier, &[("decision", "deny")]).await;
    assert_eq!(param(&denied, "error").as_deref(), Some("access_denied"), "{denied}");

    let choices = [("place", "demo/production"), ("group", "editor"), ("tools", "readonly"), ("decision", "allow")];
    // A wrong verifier: invalid_grant.
    let answer = consent(&site, &editor, &client, &verifier, &choices).await;
    assert!(answer.starts_with(REDIRECT), "{answer}");
    assert_eq!(
        (param(&answer, "state").as_deref(), param(&answer, "iss").as_deref()),
        (Some("xyz"), Some("http://127.0.0.1"))
    );
    let code = param(&answer, "code").unwrap();
    let wrong = "b".repeat(50);
    let exchange = |code: String, verifier: String| {
        let client = client.clone();
        let site = &site;
        async move {
            let fields = [
                ("grant_type", "authorization_code"),
                ("code", code.as_str()),
                ("redirect_uri", REDIRECT),
                ("client_id", client.as_str()),
                ("code_verifier", verifier.as_str()),
                ("resource", "http://127.0.0.1/mcp"),
            ];
            token(site, &fields).await
        }
    };
    let (status, body) = exchange(code, wrong).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")), "{body}");

    // The right verifier: tokens, bound to /mcp, offering read-only tools.
    let code = param(&consent(&site, &editor, &client, &verifier, &choices).await, "code").unwrap();
    let (status, tokens) = exchange(code.clone(), verifier.clone()).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!((tokens["token_type"].as_str(), tokens["expires_in"].as_i64()), (Some("Bearer"), Some(3600)));
    let access = tokens["access_token"].as_str().unwrap().to_string();
    let (status, _, _) = mcp(&site, &access, "initialize").await;
    assert_eq!(status, StatusCode::OK);
    // Not on REST, not at another resource.
    let rest =
        Request::get("/api/v1/pages").header(header::AUTHORIZATION, format!("Bearer {access}")).body(Body::empty());
    let (status, _, body) = call(&site, rest.unwrap()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(body["error"].as_str().unwrap().contains("works only there"), "{body}");
    let mut other = Request::post("/mcp")
        .header(header::AUTHORIZATION, format!("Bearer {access}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .body(Body::from(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#))
        .unwrap();
    other.headers_mut().insert(header::HOST, "localhost".parse().unwrap());
    let response = site.router().oneshot(other).await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "a token for another resource");

    // The code again: refused, and the grant is revoked with it.
    let (status, body) = exchange(code, verifier.clone()).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")), "{body}");
    assert_eq!(mcp(&site, &access, "initialize").await.0, StatusCode::UNAUTHORIZED, "the grant was revoked");

    // A fresh grant: its refresh token works once; a second use revokes it.
    let code = param(&consent(&site, &editor, &client, &verifier, &choices).await, "code").unwrap();
    let (_, tokens) = exchange(code, verifier.clone()).await;
    let refresh = tokens["refresh_token"].as_str().unwrap().to_string();
    let refreshing =
        [("grant_type", "refresh_token"), ("refresh_token", refresh.as_str()), ("client_id", client.as_str())];
    let (status, renewed) = token(&site, &refreshing).await;
    assert_eq!(status, StatusCode::OK, "{renewed}");
    let renewed_access = renewed["access_token"].as_str().unwrap().to_string();
    assert_ne!(renewed["refresh_token"], tokens["refresh_token"], "the refresh token rotates");
    assert_eq!(mcp(&site, &renewed_access, "initialize").await.0, StatusCode::OK);
    let (status, body) = token(&site, &refreshing).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")), "{body}");
    assert_eq!(mcp(&site, &renewed_access, "initialize").await.0, StatusCode::UNAUTHORIZED);

    // The grants are listed with the site's tokens, named after the client.
    let listed = site.store.tokens("demo").await.unwrap();
    assert!(listed.iter().all(|t| t.oauth_client_id.is_none() || !t.name.is_empty()));
    let grant = site.store.authenticate(&renewed_access).await.unwrap();
    assert!(grant.is_none(), "revoked grants authenticate nothing");
}

#[tokio::test]
async fn a_grant_revoked_on_the_tokens_screen_ends_its_access_token_at_once() {
    let site = common::site().await;
    let register = Request::post("/oauth/register")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({ "client_name": "Revoked", "redirect_uris": [REDIRECT] }).to_string()))
        .unwrap();
    let client = call(&site, register).await.2["client_id"].as_str().unwrap().to_string();
    let admin = site.browser("admin@example.com", Group::Admin).await;
    let verifier = "c".repeat(60);
    let choices = [("place", "demo/production"), ("group", "viewer"), ("tools", "all"), ("decision", "allow")];
    let code = param(&consent(&site, &admin, &client, &verifier, &choices).await, "code").unwrap();
    let fields = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("client_id", client.as_str()),
        ("code_verifier", verifier.as_str()),
    ];
    let (status, tokens) = token(&site, &fields).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(mcp(&site, access, "initialize").await.0, StatusCode::OK);
    let grant = site.store.tokens("demo").await.unwrap().into_iter().find(|t| t.name == "Revoked (OAuth)").unwrap();
    assert_eq!(grant.mcp_tools.as_deref(), Some("all"));
    let ((status, _), _) = site.post(&admin, &format!("/tokens/{}/revoke", grant.id), &[]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(mcp(&site, access, "initialize").await.0, StatusCode::UNAUTHORIZED);
}

fn urlencode(s: &str) -> String {
    serde_urlencoded::to_string([("v", s)]).unwrap().trim_start_matches("v=").to_string()
}
