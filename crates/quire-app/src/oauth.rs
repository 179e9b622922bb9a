//! OAuth 2.1 for remote MCP clients ([decision 0048]), as the MCP
//! authorization specification asks: a client registers itself (RFC 7591),
//! sends a person to the authorization endpoint with a PKCE challenge
//! (S256 only) and the resource it wants (RFC 8707), the person consents
//! in the back-office — choosing the environment, a group no higher than
//! their own and which tools the client is offered — and the client
//! exchanges the code, and later its refresh token, at the token endpoint.
//!
//! The checks live here, once; REST and the back-office only parse and
//! render. What is stored, and how tokens rotate, is the store's
//! (`quire_store::oauth`).
//!
//! [decision 0048]: ../../../docs/decisions/0048-oauth-for-remote-mcp.md

use crate::{Actor, AppError, AppResult, Permission, authorize};
use quire_core::access::Group;
use quire_store::{NewGrant, OAuthClient, OAuthRefusal, OAuthTokens, Store};
use serde::Deserialize;
use url::Url;

/// The tools a grant may offer over MCP.
pub const TOOL_MODES: [(&str, &str); 3] = [
    ("all", "every tool the group may use"),
    ("readonly", "only tools that change nothing"),
    ("discover", "searchTools and useTool, for clients that struggle with many tools"),
];

/// An authorization request, as its query names it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct AuthorizeQuery {
    /// Must be `code`.
    pub response_type: Option<String>,
    /// A registered client's id.
    pub client_id: Option<String>,
    /// One of the client's redirect URIs, exactly.
    pub redirect_uri: Option<String>,
    /// The PKCE challenge.
    pub code_challenge: Option<String>,
    /// Must be `S256`.
    pub code_challenge_method: Option<String>,
    /// Given back with the code.
    pub state: Option<String>,
    /// Scopes asked for (informative: the person's choices decide).
    pub scope: Option<String>,
    /// The resource the tokens are for: this server's MCP endpoint.
    pub resource: Option<String>,
}

/// An authorization request that passed its checks: what the consent
/// screen shows and the grant is made from.
#[derive(Debug, Clone)]
pub struct Authorization {
    /// The client asking.
    pub client: OAuthClient,
    /// Where the answer goes.
    pub redirect_uri: String,
    /// The PKCE challenge.
    pub code_challenge: String,
    /// Given back with the answer.
    pub state: Option<String>,
    /// The resource its tokens will be bound to.
    pub resource: String,
}

/// Why an authorization request is refused: shown to the person when the
/// client or its redirect URI cannot be trusted, else sent back to the
/// client's redirect URI (RFC 6749 §4.1.2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthorizeRefusal {
    /// Shown on the screen, never redirected.
    Show(String),
    /// The URL to send the person back to, with `error` and its description.
    Redirect(String),
}

/// What a person chose on the consent screen.
#[derive(Debug, Clone)]
pub struct Consent {
    /// The site (slug or id) the client may use: one of the person's.
    pub site: String,
    /// The environment there, one the person may use.
    pub environment: String,
    /// The group it acts as.
    pub group: Group,
    /// Which tools it is offered: a name of [`TOOL_MODES`].
    pub tools: String,
}

/// Checks an authorization request for `resource` (this server's MCP
/// endpoint).
pub async fn check(store: &Store, q: &AuthorizeQuery, resource: &str) -> Result<Authorization, AuthorizeRefusal> {
    let show = |m: String| AuthorizeRefusal::Show(m);
    let client_id = q.client_id.as_deref().ok_or_else(|| show("client_id: required".into()))?;
    let client = store
        .oauth_client(client_id)
        .await
        .map_err(|e| show(e.to_string()))?
        .ok_or_else(|| show(format!("client_id: no client {client_id} is registered here")))?;
    let redirect_uri = match (q.redirect_uri.as_deref(), client.redirect_uris.as_slice()) {
        (Some(uri), _) if client.redirect_uris.iter().any(|r| r == uri) => uri.to_string(),
        (Some(uri), _) => return Err(show(format!("redirect_uri: {uri} is not one the client registered"))),
        (None, [only]) => only.clone(),
        (None, _) => return Err(show("redirect_uri: required (the client registered several)".into())),
    };
    let back = |error: &str, description: String| {
        AuthorizeRefusal::Redirect(answer_url(
            &redirect_uri,
            &[("error", error), ("error_description", &description)],
            q.state.as_deref(),
        ))
    };
    if q.response_type.as_deref() != Some("code") {
        return Err(back("unsupported_response_type", "response_type: only code is supported".into()));
    }
    let Some(challenge) = q.code_challenge.as_deref().filter(|c| (43..=128).contains(&c.len())) else {
        return Err(back("invalid_request", "code_challenge: required, 43 to 128 characters (PKCE)".into()));
    };
    if q.code_challenge_method.as_deref() != Some("S256") {
        return Err(back("invalid_request", "code_challenge_method: only S256 is supported".into()));
    }
    if let Some(asked) = q.resource.as_deref().filter(|r| r.trim_end_matches('/') != resource) {
        return Err(back("invalid_target", format!("resource: {asked} is not served here; ask for {resource}")));
    }
    Ok(Authorization {
        client,
        redirect_uri,
        code_challenge: challenge.to_string(),
        state: q.state.clone(),
        resource: resource.to_string(),
    })
}

/// `redirect_uri` with `params` (and `state`, when given) added to its query.
fn answer_url(redirect_uri: &str, params: &[(&str, &str)], state: Option<&str>) -> String {
    match Url::parse(redirect_uri) {
        Ok(mut url) => {
            {
                let mut query = url.query_pairs_mut();
                for (k, v) in params {
                    query.append_pair(k, v);
                }
                if let Some(state) = state {
                    query.append_pair("state", state);
                }
            }
            url.to_string()
        }
        Err(_) => redirect_uri.to_string(),
    }
}

/// Grants `authorization` as `actor` chose: the grant and a code for it;
/// answers where to send the person (the client's redirect URI with the
/// code and `iss`, RFC 9207). Only a person signed in to the back-office
/// grants, never above their own group, in a site and environment they
/// may use.
pub async fn consent(
    store: &Store,
    actor: &Actor,
    issuer: &str,
    authorization: &Authorization,
    consent: Consent,
) -> AppResult<String> {
    authorize(actor, Permission::GrantAccess(consent.group))?;
    if !TOOL_MODES.iter().any(|(m, _)| *m == consent.tools) {
        return Err(AppError::invalid("tools", format!("tools: {} is not all, readonly or discover", consent.tools)));
    }
    let Some(user_id) = actor.user_id() else {
        return Err(AppError::forbidden("access is granted by a person signed in to the back-office"));
    };
    let person = store.user(user_id).await?;
    let place = person
        .sites
        .iter()
        .find(|s| {
            (s.slug == consent.site || s.site_id == consent.site) && s.environments.contains(&consent.environment)
        })
        .ok_or_else(|| {
            AppError::invalid(
                "place",
                format!("place: {}/{} is not a site and environment you may use", consent.site, consent.environment),
            )
        })?;
    let code = store
        .grant_oauth(NewGrant {
            client: authorization.client.clone(),
            user_id: user_id.to_string(),
            group: consent.group,
            site_id: place.site_id.clone(),
            environment: consent.environment,
            tools: consent.tools,
            redirect_uri: authorization.redirect_uri.clone(),
            code_challenge: authorization.code_challenge.clone(),
            resource: authorization.resource.clone(),
        })
        .await?;
    Ok(answer_url(&authorization.redirect_uri, &[("code", &code), ("iss", issuer)], authorization.state.as_deref()))
}

/// Where the person is sent when they refuse.
pub fn denied(authorization: &Authorization) -> String {
    let refused = [("error", "access_denied"), ("error_description", "the person refused access")];
    answer_url(&authorization.redirect_uri, &refused, authorization.state.as_deref())
}

/// A client's registration (RFC 7591), as its body names it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Registration {
    /// Where its codes may go.
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    /// Its name, for people.
    pub client_name: Option<String>,
    /// Must be `none` (a public client) when given.
    pub token_endpoint_auth_method: Option<String>,
    /// A subset of `authorization_code` and `refresh_token`.
    pub grant_types: Option<Vec<String>>,
    /// `code` only.
    pub response_types: Option<Vec<String>>,
}

/// Registers a public client; refuses, in RFC 7591's words, what cannot be
/// served (`invalid_redirect_uri`, `invalid_client_metadata`).
pub async fn register(store: &Store, r: Registration) -> Result<OAuthClient, OAuthRefusal> {
    let metadata = |d: String| OAuthRefusal { error: "invalid_client_metadata", description: d };
    if r.redirect_uris.is_empty() || r.redirect_uris.len() > 10 {
        return Err(OAuthRefusal {
            error: "invalid_redirect_uri",
            description: "redirect_uris: one to ten are required".into(),
        });
    }
    for uri in &r.redirect_uris {
        check_redirect(uri).map_err(|d| OAuthRefusal { error: "invalid_redirect_uri", description: d })?;
    }
    if let Some(method) = r.token_endpoint_auth_method.as_deref().filter(|m| *m != "none") {
        return Err(metadata(format!("token_endpoint_auth_method: {method} is not supported; use none (PKCE)")));
    }
    if let Some(bad) =
        r.grant_types.iter().flatten().find(|g| !matches!(g.as_str(), "authorization_code" | "refresh_token"))
    {
        return Err(metadata(format!("grant_types: {bad} is not supported")));
    }
    if let Some(bad) = r.response_types.iter().flatten().find(|t| *t != "code") {
        return Err(metadata(format!("response_types: {bad} is not supported")));
    }
    let name = r.client_name.as_deref().map(str::trim).filter(|n| !n.is_empty()).unwrap_or("An MCP client");
    if name.chars().count() > 120 || name.chars().any(char::is_control) {
        return Err(metadata("client_name: at most 120 characters, on one line".into()));
    }
    store
        .register_oauth_client(name, r.redirect_uris)
        .await
        .map_err(|e| OAuthRefusal { error: "invalid_client_metadata", description: e.to_string() })
}

/// Whether `uri` may receive codes: an absolute URL without a fragment,
/// over https, or http to this machine (a native app's loopback, RFC 8252),
/// or an app's own scheme; never a scheme a browser runs.
fn check_redirect(uri: &str) -> Result<(), String> {
    let url = Url::parse(uri).map_err(|e| format!("redirect_uris: {uri} is not an absolute URL ({e})"))?;
    if url.fragment().is_some() {
        return Err(format!("redirect_uris: {uri} has a fragment"));
    }
    let loopback = matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        "http" => Err(format!("redirect_uris: {uri} must use https (http only to localhost)")),
        "javascript" | "data" | "file" | "blob" | "about" | "vbscript" => {
            Err(format!("redirect_uris: the scheme of {uri} is not allowed"))
        }
        _ => Ok(()),
    }
}

/// A token request (RFC 6749 §4.1.3 and §6), form-encoded.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct TokenRequest {
    /// `authorization_code` or `refresh_token`.
    pub grant_type: Option<String>,
    /// The code, for `authorization_code`.
    pub code: Option<String>,
    /// The redirect URI the code was sent to.
    pub redirect_uri: Option<String>,
    /// The client.
    pub client_id: Option<String>,
    /// The PKCE verifier.
    pub code_verifier: Option<String>,
    /// The refresh token, for `refresh_token`.
    pub refresh_token: Option<String>,
    /// The resource the tokens are for.
    pub resource: Option<String>,
}

/// Answers a token request.
pub async fn token(store: &Store, r: TokenRequest) -> Result<OAuthTokens, OAuthRefusal> {
    let missing = |field: &str| OAuthRefusal { error: "invalid_request", description: format!("{field}: required") };
    let client_id = r.client_id.as_deref().ok_or_else(|| missing("client_id"))?;
    let known = store.oauth_client(client_id).await.map_err(internal)?;
    if known.is_none() {
        return Err(OAuthRefusal { error: "invalid_client", description: format!("client_id: no client {client_id}") });
    }
    let resource = r.resource.as_deref().map(|r| r.trim_end_matches('/'));
    let answer = match r.grant_type.as_deref() {
        Some("authorization_code") => {
            let code = r.code.as_deref().ok_or_else(|| missing("code"))?;
            let redirect_uri = r.redirect_uri.as_deref().ok_or_else(|| missing("redirect_uri"))?;
            let verifier = r.code_verifier.as_deref().ok_or_else(|| missing("code_verifier"))?;
            store.exchange_oauth_code(client_id, code, redirect_uri, verifier, resource).await
        }
        Some("refresh_token") => {
            let refresh = r.refresh_token.as_deref().ok_or_else(|| missing("refresh_token"))?;
            store.refresh_oauth(client_id, refresh, resource).await
        }
        Some(other) => {
            return Err(OAuthRefusal {
                error: "unsupported_grant_type",
                description: format!("grant_type: {other} is not supported"),
            });
        }
        None => return Err(missing("grant_type")),
    };
    answer.map_err(internal)?
}

fn internal(e: quire_store::StoreError) -> OAuthRefusal {
    tracing::error!(error = %e, "oauth: the store failed");
    OAuthRefusal { error: "server_error", description: "the server failed; try again".into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_are_https_loopback_or_an_apps_own_scheme() {
        assert!(check_redirect("https://claude.ai/api/mcp/auth_callback").is_ok());
        assert!(check_redirect("http://127.0.0.1:33418/callback").is_ok());
        assert!(check_redirect("http://localhost/cb").is_ok());
        assert!(check_redirect("cursor://anysphere.cursor-mcp/oauth/callback").is_ok());
        assert!(check_redirect("http://example.com/cb").is_err());
        assert!(check_redirect("https://example.com/cb#frag").is_err());
        assert!(check_redirect("javascript:alert(1)").is_err());
        assert!(check_redirect("/relative").is_err());
    }

    #[test]
    fn an_answer_keeps_the_redirects_query_and_adds_state() {
        let url = answer_url("https://app.example/cb?x=1", &[("code", "c 1")], Some("s&t"));
        assert_eq!(url, "https://app.example/cb?x=1&code=c+1&state=s%26t");
    }
}
