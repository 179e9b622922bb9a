//! `/mcp`: the MCP server over streamable HTTP. A request from a web page of
//! another origin is refused (403, as the MCP specification requires), then
//! every request needs a valid bearer token (401 without); the token decides
//! the caller, as on REST, and counts against its requests of fair use. A message's body is read as REST reads one (JSON
//! declared as JSON, one value, no repeated key) before rmcp sees it. rmcp
//! then checks the Host header (DNS rebinding).
//!
//! Every refusal is a JSON-RPC error response with no id, under the HTTP
//! status REST gives the same fault, whose `data` is the API's one error
//! body ([`ApiError::into_jsonrpc_response`]): a body that is not JSON is a
//! 400 with code -32700, JSON that is no JSON-RPC message (a batch among
//! them: MCP has had none since 2025-06-18) a 400 with -32600, a refusal of
//! the exchange (credentials, origin, content type, size) its own status
//! with -32000.

use crate::AppState;
use crate::error::{ApiError, JSONRPC_INVALID_REQUEST, JSONRPC_PARSE_ERROR, JSONRPC_SERVER_ERROR};
use crate::extract::{check_json_type, json_error};
use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request};
use axum::response::Response;
use quire_core::model::Surface;
use quire_mcp::{Caller, QuireMcp, ToolMode};
use quire_tools::CallContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::sync::Arc;
use tower::ServiceExt;
use tower::util::BoxCloneSyncService;

/// Who calls `/mcp` with a bearer secret that is valid: their call
/// context, the tools their credential limits them to (an OAuth grant's
/// choice), and the resource an OAuth access token is bound to.
struct McpCaller {
    ctx: CallContext,
    tools: Option<ToolMode>,
    resource: Option<String>,
}

/// The caller of an MCP request with this bearer secret, if it is valid.
async fn caller_of(state: AppState, secret: String) -> Option<McpCaller> {
    let grant = state.authenticate(&secret).await.ok()??;
    if grant.expired {
        return None;
    }
    let scope = grant.scope(None)?;
    let tools = grant.token.mcp_tools.as_deref().and_then(|t| ToolMode::parse(t).ok());
    let ctx = CallContext {
        policy: grant.token.approval_policy,
        ..CallContext::new(format!("token:{}", grant.token.id), grant.token.group, scope, Surface::Mcp)
    };
    Some(McpCaller { ctx, tools, resource: grant.resource })
}

/// A refusal of `/mcp`'s credentials: 401, whose challenge names the
/// endpoint's protected-resource metadata (RFC 9728), where an OAuth
/// client learns how to get a token.
fn unauthorized(state: &AppState, headers: &axum::http::HeaderMap, why: &str) -> Response {
    let mut response = ApiError::unauthorized(why).into_jsonrpc_response(JSONRPC_SERVER_ERROR);
    let metadata = format!("{}/.well-known/oauth-protected-resource/mcp", state.base_url(headers));
    if let Ok(value) = axum::http::HeaderValue::from_str(&format!("Bearer resource_metadata=\"{metadata}\"")) {
        response.headers_mut().insert(axum::http::header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The `/mcp` service: bearer check, then rmcp's streamable HTTP transport.
pub fn service(state: &AppState) -> BoxCloneSyncService<Request, Response, Infallible> {
    let auth_state = state.clone();
    let authenticator: quire_mcp::Authenticator = Arc::new(move |secret| {
        let state = auth_state.clone();
        Box::pin(async move { caller_of(state, secret).await.map(|c| (c.ctx, c.tools)) })
    });
    let registry = state.inner.registry.clone();
    let fixture = state.inner.mcp_test_fixture;
    // Origin is checked here, before authentication, so rmcp's own check
    // (which could not accept the server's own origin) stays off.
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(state.inner.mcp_allowed_hosts.clone())
        .disable_allowed_origins();
    let mcp = StreamableHttpService::new(
        move || {
            let server = QuireMcp::new(registry.clone(), Caller::Bearer(authenticator.clone()), ToolMode::All);
            Ok(if fixture { server.with_test_fixture() } else { server })
        },
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let check_state = state.clone();
    let guarded = tower::service_fn(move |req: Request| {
        let state = check_state.clone();
        let mcp = mcp.clone();
        async move {
            if let Err(why) = origin_allowed(req.headers(), &state.inner.mcp_allowed_origins) {
                tracing::warn!(reason = %why, "refused an MCP request from a browser origin");
                return Ok::<_, Infallible>(ApiError::forbidden(why).into_jsonrpc_response(JSONRPC_SERVER_ERROR));
            }
            let secret = req
                .headers()
                .get(axum::http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split_once(' '))
                .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                .map(|(_, t)| t.trim().to_string());
            let Some(secret) = secret else {
                return Ok::<_, Infallible>(unauthorized(&state, req.headers(), "a bearer token is required for /mcp"));
            };
            let Some(caller) = caller_of(state.clone(), secret).await else {
                return Ok(unauthorized(&state, req.headers(), "the token is not valid"));
            };
            // An OAuth access token works only at the resource it was issued for.
            let here = state.mcp_resource(req.headers());
            if let Some(bound) = caller.resource.as_ref().filter(|r| **r != here) {
                let why = format!("the token was issued for {bound}, not {here}");
                return Ok(unauthorized(&state, req.headers(), &why));
            }
            let caller = caller.ctx;
            // Each message counts against the token's requests, as on REST.
            if state.request_limits().is_on()
                && let Err(limited) = state.request_limits().admit(&caller.actor)
            {
                return Ok(limited.into_jsonrpc_response(JSONRPC_SERVER_ERROR));
            }
            let req = match checked_message(req).await {
                Ok(req) => req,
                Err(refused) => return Ok(refused),
            };
            let response = mcp.oneshot(req).await.unwrap_or_else(|e: Infallible| match e {});
            Ok(response.map(Body::new))
        }
    });
    BoxCloneSyncService::new(guarded)
}

/// A POST's body, read and checked as REST checks one before rmcp sees
/// it: rmcp would answer a body that is not JSON, or too deep to read, or
/// not a JSON-RPC message, with a plain-text 415, where REST answers 400.
async fn checked_message(req: Request) -> Result<Request, Response> {
    if req.method() != axum::http::Method::POST {
        return Ok(req);
    }
    let (parts, body) = req.into_parts();
    let content_type =
        parts.headers.get(axum::http::header::CONTENT_TYPE).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    check_json_type(content_type.as_deref()).map_err(|e| e.into_jsonrpc_response(JSONRPC_SERVER_ERROR))?;
    // The body limit is the router's (a 413 past it), as for every body.
    let bytes = Bytes::from_request(Request::new(body), &()).await.map_err(|e| {
        ApiError::with_status(e.status(), format!("cannot read the body: {}", e.body_text()))
            .into_jsonrpc_response(JSONRPC_SERVER_ERROR)
    })?;
    if let Err(e) = quire_core::json::parse_strict(&bytes) {
        let code = match e {
            quire_core::json::JsonError::Syntax(_) => JSONRPC_PARSE_ERROR,
            quire_core::json::JsonError::DuplicateKey { .. } => JSONRPC_INVALID_REQUEST,
        };
        return Err(json_error(e).into_jsonrpc_response(code));
    }
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        let error = ApiError::bad_request(
            "the body is a JSON-RPC batch, which MCP does not take (since protocol 2025-06-18): \
             send each request or notification in a POST of its own",
        );
        return Err(error.into_jsonrpc_response(JSONRPC_INVALID_REQUEST));
    }
    if let Err(e) = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(&bytes) {
        let error = ApiError::bad_request(format!("the body is not a JSON-RPC request, notification or response: {e}"));
        return Err(error.into_jsonrpc_response(JSONRPC_INVALID_REQUEST));
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// An origin as `(scheme, host, port)`, the port filled in from the scheme
/// when left out (RFC 6454); `None` for anything else, `null` included.
fn parse_origin(value: &str) -> Option<(String, String, Option<u16>)> {
    let uri = value.trim().parse::<axum::http::Uri>().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    if uri.path_and_query().is_some_and(|p| p.as_str() != "/" && !p.as_str().is_empty()) {
        return None;
    }
    let default = match scheme.as_str() {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    };
    let host = authority.host().trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
    Some((scheme, host, authority.port_u16().or(default)))
}

/// Whether a request may reach `/mcp` given its `Origin`. Without one it
/// comes from a program, not a web page, and passes. A page may call only
/// from the server's own origin (the same host and port as the request's
/// Host) or from one of `allowed` (`https://app.example.com`, a port, or
/// `:*` for any port; `null` for opaque origins). Anything else is refused
/// with the reason.
fn origin_allowed(headers: &axum::http::HeaderMap, allowed: &[String]) -> Result<(), String> {
    let Some(origin) = headers.get(axum::http::header::ORIGIN) else { return Ok(()) };
    let Ok(origin) = origin.to_str().map(str::trim) else {
        return Err("the Origin header is not valid text".into());
    };
    if allowed.iter().any(|a| a.trim() == origin) {
        return Ok(());
    }
    let refused =
        || Err(format!("Origin {origin} may not use /mcp: only the server's own origin and mcp_allowed_origins may"));
    let Some((scheme, host, port)) = parse_origin(origin) else { return refused() };
    let own = headers.get(axum::http::header::HOST).and_then(|h| h.to_str().ok()).and_then(|h| {
        let authority = h.parse::<axum::http::uri::Authority>().ok()?;
        let host = authority.host().trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        Some((host, authority.port_u16()))
    });
    if let Some((own_host, own_port)) = own {
        // The Host header leaves out the default port of the scheme the page used.
        let own_port = own_port.or(match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        });
        if own_host == host && own_port == port {
            return Ok(());
        }
    }
    for entry in allowed {
        let entry = entry.trim();
        let (base, any_port) = match entry.strip_suffix(":*") {
            Some(base) => (base, true),
            None => (entry, false),
        };
        if let Some((s, h, p)) = parse_origin(base)
            && s == scheme
            && h == host
            && (any_port || p == port)
        {
            return Ok(());
        }
    }
    refused()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderMap;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("host", host.parse().unwrap());
        if let Some(o) = origin {
            h.insert("origin", o.parse().unwrap());
        }
        h
    }

    #[test]
    fn origins() {
        let none: Vec<String> = Vec::new();
        assert!(origin_allowed(&headers("127.0.0.1:8080", None), &none).is_ok(), "programs send no Origin");
        assert!(origin_allowed(&headers("127.0.0.1:8080", Some("http://127.0.0.1:8080")), &none).is_ok());
        assert!(origin_allowed(&headers("cms.example.com", Some("https://cms.example.com")), &none).is_ok());
        assert!(origin_allowed(&headers("LOCALHOST:3000", Some("http://localhost:3000")), &none).is_ok());
        for foreign in ["http://127.0.0.1:9999", "https://evil.example", "null", "http://127.0.0.1:8080/x", "nonsense"]
        {
            let err = origin_allowed(&headers("127.0.0.1:8080", Some(foreign)), &none).unwrap_err();
            assert!(err.contains(foreign) && err.contains("mcp_allowed_origins"), "{err}");
        }
        let allowed: Vec<String> = vec!["https://app.example.com".into(), "http://localhost:*".into(), "null".into()];
        let h = |o| headers("127.0.0.1:8080", Some(o));
        assert!(origin_allowed(&h("https://app.example.com"), &allowed).is_ok());
        assert!(origin_allowed(&h("https://app.example.com:443"), &allowed).is_ok());
        assert!(origin_allowed(&h("https://app.example.com:8443"), &allowed).is_err(), "only the default port");
        assert!(origin_allowed(&h("http://app.example.com"), &allowed).is_err(), "scheme matters");
        assert!(origin_allowed(&h("http://localhost:5173"), &allowed).is_ok());
        assert!(origin_allowed(&h("null"), &allowed).is_ok());
    }
}
