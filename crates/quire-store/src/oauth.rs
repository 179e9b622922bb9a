//! OAuth 2.1 for remote MCP clients ([decision 0048]): clients that
//! registered themselves, the codes a person's consent makes, and the
//! tokens a code or a refresh token is exchanged for.
//!
//! A **grant** is an API token row (`oauth_client_id` set) whose own
//! secret is never shown: it carries the site, environment, group and
//! person the consent chose, is listed and revoked with the other tokens,
//! and revoking it ends every token it issued. A code lives a minute and
//! is used once (a second use revokes the grant); an access token lives an
//! hour and is bound to the resource it was asked for; a refresh token is
//! used once and replaced (a second use revokes the grant, as RFC 9700
//! advises). PKCE is S256 only. Every secret is stored hashed.
//!
//! [decision 0048]: ../../../docs/decisions/0048-oauth-for-remote-mcp.md

use crate::auth::{NewToken, hash_secret};
use crate::db::{self, Conn};
use crate::{Result, Store, StoreError};
use base64::Engine;
use chrono::{DateTime, Duration, Utc};
use quire_core::access::Group;
use sha2::{Digest, Sha256};

/// How long a code may wait to be exchanged.
pub const CODE_LIFETIME: Duration = Duration::seconds(60);
/// How long an access token works.
pub const ACCESS_LIFETIME: Duration = Duration::hours(1);
/// How long a refresh token may wait to be used.
pub const REFRESH_LIFETIME: Duration = Duration::days(30);

/// A client that registered itself (RFC 7591).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthClient {
    /// Its `client_id`.
    pub id: String,
    /// The name people see on the consent screen.
    pub name: String,
    /// Where its codes may be sent, exactly.
    pub redirect_uris: Vec<String>,
    /// When it registered.
    pub created_at: DateTime<Utc>,
}

/// What a person consented to: the grant a code stands for.
#[derive(Debug, Clone)]
pub struct NewGrant {
    /// The client.
    pub client: OAuthClient,
    /// The person consenting (their id): disabling them revokes the grant.
    pub user_id: String,
    /// The group the client acts as, no higher than the person's.
    pub group: Group,
    /// The site (id).
    pub site_id: String,
    /// The one environment it may use.
    pub environment: String,
    /// Which tools MCP offers it: `all`, `readonly` or `discover`.
    pub tools: String,
    /// Where the code goes (one of the client's).
    pub redirect_uri: String,
    /// The client's PKCE challenge (S256).
    pub code_challenge: String,
    /// The resource (the MCP endpoint's URL) its tokens are bound to.
    pub resource: String,
}

/// What a code or a refresh token is exchanged for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthTokens {
    /// The access token (a bearer secret).
    pub access_token: String,
    /// Seconds it works for.
    pub expires_in: i64,
    /// The refresh token that replaces the one used, if any.
    pub refresh_token: String,
    /// The resource the tokens are bound to.
    pub resource: String,
}

/// A refusal of the token endpoint, in OAuth's words (RFC 6749 §5.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthRefusal {
    /// `invalid_grant`, `invalid_client`, `invalid_target` or `invalid_request`.
    pub error: &'static str,
    /// What is wrong, for people.
    pub description: String,
}

impl OAuthRefusal {
    fn grant(description: impl Into<String>) -> Self {
        Self { error: "invalid_grant", description: description.into() }
    }
}

/// A code or a token: a prefix and 256 random bits.
fn secret(prefix: &str) -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| StoreError::Corrupt(format!("no randomness: {e}")))?;
    Ok(format!("{prefix}{}", hex::encode(bytes)))
}

/// Whether `verifier` answers the S256 `challenge` (RFC 7636 §4.6).
pub fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    let shaped = (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    let digest = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    shaped && digest == challenge
}

/// Issues an access token and a refresh token of grant `token_id` for
/// `resource`.
fn issue(conn: &Conn, token_id: &str, resource: &str) -> Result<OAuthTokens> {
    let now = Utc::now();
    let (access, refresh) = (secret("qa_")?, secret("qr_")?);
    for (secret, kind, expires) in [(&access, "access", ACCESS_LIFETIME), (&refresh, "refresh", REFRESH_LIFETIME)] {
        db::query("INSERT INTO oauth_tokens (hash, token_id, kind, resource, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)")
            .bind(hash_secret(secret))
            .bind(token_id)
            .bind(kind)
            .bind(resource)
            .bind(now + expires)
            .execute(conn)?;
    }
    let expires_in = ACCESS_LIFETIME.num_seconds();
    Ok(OAuthTokens { access_token: access, expires_in, refresh_token: refresh, resource: resource.to_string() })
}

/// Revokes grant `token_id` (a code or refresh token used twice: someone
/// else may hold it).
fn revoke_grant(conn: &Conn, token_id: &str) -> Result<()> {
    db::query("UPDATE api_tokens SET revoked_at = ?1 WHERE id = ?2 AND revoked_at IS NULL")
        .bind(Utc::now())
        .bind(token_id)
        .execute(conn)?;
    Ok(())
}

/// Whether grant `token_id` still works (not revoked).
fn grant_live(conn: &Conn, token_id: &str) -> Result<bool> {
    let live: Option<String> = db::query_scalar("SELECT id FROM api_tokens WHERE id = ?1 AND revoked_at IS NULL")
        .bind(token_id)
        .fetch_optional(conn)?;
    Ok(live.is_some())
}

impl Store {
    /// Registers a client (RFC 7591): a name and the exact URIs its codes
    /// may be sent to.
    pub async fn register_oauth_client(&self, name: &str, redirect_uris: Vec<String>) -> Result<OAuthClient> {
        let client = OAuthClient {
            id: format!("qc_{}", crate::log::new_id()),
            name: name.to_string(),
            redirect_uris,
            created_at: Utc::now(),
        };
        db::query("INSERT INTO oauth_clients (id, name, redirect_uris, created_at) VALUES (?1, ?2, ?3, ?4)")
            .bind(&client.id)
            .bind(&client.name)
            .bind(crate::record::to_json(&client.redirect_uris))
            .bind(client.created_at)
            .write(&self.db)
            .await?;
        Ok(client)
    }

    /// A registered client, if `id` names one.
    pub async fn oauth_client(&self, id: &str) -> Result<Option<OAuthClient>> {
        let row = db::query("SELECT * FROM oauth_clients WHERE id = ?1").bind(id).read_optional(&self.db).await?;
        row.map(|row| {
            Ok(OAuthClient {
                id: row.try_get("id")?,
                name: row.try_get("name")?,
                redirect_uris: crate::record::json_col(&row, "redirect_uris")?,
                created_at: row.try_get("created_at")?,
            })
        })
        .transpose()
    }

    /// Makes the grant a person consented to and a code for it; answers
    /// the code (shown once, in the redirect).
    pub async fn grant_oauth(&self, grant: NewGrant) -> Result<String> {
        let name = format!("{} (OAuth)", grant.client.name.chars().take(100).collect::<String>());
        let new = NewToken {
            environments: Some(vec![grant.environment.clone()]),
            user_id: Some(grant.user_id.clone()),
            ..NewToken::new(name, grant.group, grant.site_id.clone())
        };
        let (token, _) = self.create_token(new).await?;
        let code = secret("qo_")?;
        let hash = hash_secret(&code);
        self.db
            .write(move |c| {
                db::query("UPDATE api_tokens SET oauth_client_id = ?1, mcp_tools = ?2 WHERE id = ?3")
                    .bind(&grant.client.id)
                    .bind(&grant.tools)
                    .bind(&token.id)
                    .execute(c)?;
                db::query(
                    "INSERT INTO oauth_codes (hash, client_id, token_id, redirect_uri, code_challenge, resource, expires_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .bind(&hash)
                .bind(&grant.client.id)
                .bind(&token.id)
                .bind(&grant.redirect_uri)
                .bind(&grant.code_challenge)
                .bind(&grant.resource)
                .bind(Utc::now() + CODE_LIFETIME)
                .execute(c)?;
                Ok(())
            })
            .await?;
        Ok(code)
    }

    /// Exchanges a code for tokens (RFC 6749 §4.1.3 with PKCE): it must be
    /// unused and unexpired, and come from the client it was given to, with
    /// the same redirect URI, the verifier of its challenge, and (if named)
    /// the same resource. A code used twice revokes its grant.
    pub async fn exchange_oauth_code(
        &self,
        client_id: &str,
        code: &str,
        redirect_uri: &str,
        verifier: &str,
        resource: Option<&str>,
    ) -> Result<std::result::Result<OAuthTokens, OAuthRefusal>> {
        let (hash, client_id, redirect_uri, verifier, resource) = (
            hash_secret(code),
            client_id.to_string(),
            redirect_uri.to_string(),
            verifier.to_string(),
            resource.map(str::to_string),
        );
        self.db
            .write(move |c| {
                let row = db::query("SELECT * FROM oauth_codes WHERE hash = ?1").bind(&hash).fetch_optional(c)?;
                let Some(row) = row else { return Ok(Err(OAuthRefusal::grant("the code is unknown"))) };
                let token_id: String = row.try_get("token_id")?;
                let used: Option<DateTime<Utc>> = row.try_get("used_at")?;
                if used.is_some() {
                    revoke_grant(c, &token_id)?;
                    return Ok(Err(OAuthRefusal::grant("the code was used already; its grant is revoked")));
                }
                db::query("UPDATE oauth_codes SET used_at = ?1 WHERE hash = ?2")
                    .bind(Utc::now())
                    .bind(&hash)
                    .execute(c)?;
                let expires: DateTime<Utc> = row.try_get("expires_at")?;
                let (owner, sent_to, challenge, bound): (String, String, String, String) = (
                    row.try_get("client_id")?,
                    row.try_get("redirect_uri")?,
                    row.try_get("code_challenge")?,
                    row.try_get("resource")?,
                );
                let refused = if expires <= Utc::now() {
                    Some(OAuthRefusal::grant("the code expired; authorize again"))
                } else if owner != client_id {
                    Some(OAuthRefusal::grant("the code was given to another client"))
                } else if sent_to != redirect_uri {
                    Some(OAuthRefusal::grant("redirect_uri is not the one the code was sent to"))
                } else if !pkce_matches(&verifier, &challenge) {
                    Some(OAuthRefusal::grant("code_verifier does not match the code_challenge"))
                } else if resource.as_ref().is_some_and(|r| *r != bound) {
                    Some(OAuthRefusal {
                        error: "invalid_target",
                        description: format!("resource: the code was given for {bound}"),
                    })
                } else if !grant_live(c, &token_id)? {
                    Some(OAuthRefusal::grant("the grant was revoked"))
                } else {
                    None
                };
                match refused {
                    // The code stays used: a refused exchange is not retried.
                    Some(refusal) => Ok(Err(refusal)),
                    None => Ok(Ok(issue(c, &token_id, &bound)?)),
                }
            })
            .await
    }

    /// Exchanges a refresh token for new tokens, once: the one used stops
    /// working, and a second use of it revokes the grant.
    pub async fn refresh_oauth(
        &self,
        client_id: &str,
        refresh_token: &str,
        resource: Option<&str>,
    ) -> Result<std::result::Result<OAuthTokens, OAuthRefusal>> {
        let (hash, client_id, resource) =
            (hash_secret(refresh_token), client_id.to_string(), resource.map(str::to_string));
        self.db
            .write(move |c| {
                let row = db::query(
                    "SELECT t.token_id, t.resource, t.expires_at, t.used_at, a.oauth_client_id, a.revoked_at
                     FROM oauth_tokens t JOIN api_tokens a ON a.id = t.token_id
                     WHERE t.hash = ?1 AND t.kind = 'refresh'",
                )
                .bind(&hash)
                .fetch_optional(c)?;
                let Some(row) = row else { return Ok(Err(OAuthRefusal::grant("the refresh token is unknown"))) };
                let token_id: String = row.try_get("token_id")?;
                let used: Option<DateTime<Utc>> = row.try_get("used_at")?;
                let revoked: Option<DateTime<Utc>> = row.try_get("revoked_at")?;
                if revoked.is_some() {
                    return Ok(Err(OAuthRefusal::grant("the grant was revoked")));
                }
                if used.is_some() {
                    revoke_grant(c, &token_id)?;
                    return Ok(Err(OAuthRefusal::grant("the refresh token was used already; its grant is revoked")));
                }
                let owner: Option<String> = row.try_get("oauth_client_id")?;
                if owner.as_deref() != Some(client_id.as_str()) {
                    return Ok(Err(OAuthRefusal::grant("the refresh token was given to another client")));
                }
                let expires: DateTime<Utc> = row.try_get("expires_at")?;
                if expires <= Utc::now() {
                    return Ok(Err(OAuthRefusal::grant("the refresh token expired; authorize again")));
                }
                let bound: String = row.try_get("resource")?;
                if resource.as_ref().is_some_and(|r| *r != bound) {
                    return Ok(Err(OAuthRefusal {
                        error: "invalid_target",
                        description: format!("resource: the grant is for {bound}"),
                    }));
                }
                db::query("UPDATE oauth_tokens SET used_at = ?1 WHERE hash = ?2")
                    .bind(Utc::now())
                    .bind(&hash)
                    .execute(c)?;
                Ok(Ok(issue(c, &token_id, &bound)?))
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An access token past its hour authenticates as expired, and its
    /// grant's refresh token still renews it.
    #[tokio::test]
    async fn an_access_token_expires_after_its_hour_and_the_refresh_token_renews_it() {
        let dir = tempfile::tempdir().unwrap();
        let (store, scope) = crate::testing::demo(dir.path()).await.unwrap();
        let uri = "http://127.0.0.1:9/cb".to_string();
        let client = store.register_oauth_client("Clock", vec![uri.clone()]).await.unwrap();
        let user = store
            .create_user(crate::users::NewUser {
                email: "clock@example.com".into(),
                display_name: None,
                group: Group::Editor,
                sites: vec![("demo".into(), None)],
                password: None,
            })
            .await
            .unwrap();
        let verifier = "v".repeat(43);
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let code = store
            .grant_oauth(NewGrant {
                client: client.clone(),
                user_id: user.id,
                group: Group::Viewer,
                site_id: scope.site_id.clone(),
                environment: scope.env.clone(),
                tools: "readonly".into(),
                redirect_uri: uri.clone(),
                code_challenge: challenge,
                resource: "http://127.0.0.1/mcp".into(),
            })
            .await
            .unwrap();
        let tokens = store.exchange_oauth_code(&client.id, &code, &uri, &verifier, None).await.unwrap().unwrap();
        let live = store.authenticate(&tokens.access_token).await.unwrap().unwrap();
        assert!(!live.expired);
        assert_eq!(live.resource.as_deref(), Some("http://127.0.0.1/mcp"));
        assert_eq!((live.token.group, live.token.mcp_tools.as_deref()), (Group::Viewer, Some("readonly")));
        let hash = hash_secret(&tokens.access_token);
        store
            .db
            .write(move |c| {
                db::query("UPDATE oauth_tokens SET expires_at = ?1 WHERE hash = ?2")
                    .bind(Utc::now() - Duration::seconds(1))
                    .bind(&hash)
                    .execute(c)
                    .map(drop)
            })
            .await
            .unwrap();
        assert!(store.authenticate(&tokens.access_token).await.unwrap().unwrap().expired, "past its hour");
        let renewed = store.refresh_oauth(&client.id, &tokens.refresh_token, None).await.unwrap().unwrap();
        assert!(!store.authenticate(&renewed.access_token).await.unwrap().unwrap().expired);
        // A grant's own secret is never a credential.
        assert_eq!(store.oauth_client("qc_nobody").await.unwrap(), None);
    }

    #[test]
    fn pkce_s256_matches_rfc_7636s_example() {
        // RFC 7636, appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert!(pkce_matches(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(!pkce_matches(
            "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXj",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        ));
        assert!(!pkce_matches("short", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
    }
}
