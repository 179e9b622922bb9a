//! `/mcp`: the MCP server over streamable HTTP. Every request needs a valid
//! bearer token (401 without); the token decides the caller, as on REST.

use crate::AppState;
use crate::error::ApiError;
use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use quire_core::model::Surface;
use quire_mcp::{Caller, QuireMcp, ToolMode};
use quire_tools::{ApprovalPolicy, CallContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::sync::Arc;
use tower::ServiceExt;
use tower::util::BoxCloneSyncService;

/// The caller of an MCP request with this bearer secret, if it is valid.
async fn caller_of(state: AppState, secret: String) -> Option<CallContext> {
    let grant = state.authenticate(&secret).await.ok()??;
    if grant.expired {
        return None;
    }
    let scope = grant.scope(None)?;
    Some(CallContext {
        actor: format!("token:{}", grant.token.id),
        group: grant.token.group,
        scope,
        surface: Surface::Mcp,
        session_id: None,
        turn_id: None,
        policy: ApprovalPolicy::parse(&grant.token.approval_policy),
    })
}

/// The `/mcp` service: bearer check, then rmcp's streamable HTTP transport.
pub fn service(state: &AppState) -> BoxCloneSyncService<Request, Response, Infallible> {
    let auth_state = state.clone();
    let authenticator: quire_mcp::Authenticator = Arc::new(move |secret| {
        let state = auth_state.clone();
        Box::pin(caller_of(state, secret))
    });
    let registry = state.inner.registry.clone();
    let mut config = StreamableHttpServerConfig::default().with_allowed_hosts(state.inner.mcp_allowed_hosts.clone());
    if !state.inner.mcp_allowed_origins.is_empty() {
        config = config.with_allowed_origins(state.inner.mcp_allowed_origins.clone());
    }
    let mcp = StreamableHttpService::new(
        move || Ok(QuireMcp::new(registry.clone(), Caller::Bearer(authenticator.clone()), ToolMode::All)),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let check_state = state.clone();
    let guarded = tower::service_fn(move |req: Request| {
        let state = check_state.clone();
        let mcp = mcp.clone();
        async move {
            let secret = req
                .headers()
                .get(axum::http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split_once(' '))
                .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                .map(|(_, t)| t.trim().to_string());
            let Some(secret) = secret else {
                return Ok::<_, Infallible>(
                    ApiError::unauthorized("a bearer token is required for /mcp").into_response(),
                );
            };
            if caller_of(state, secret).await.is_none() {
                return Ok(ApiError::unauthorized("the token is not valid").into_response());
            }
            let response = mcp.oneshot(req).await.unwrap_or_else(|e: Infallible| match e {});
            Ok(response.map(Body::new))
        }
    });
    BoxCloneSyncService::new(guarded)
}
