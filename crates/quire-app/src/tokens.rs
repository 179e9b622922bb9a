//! API tokens of a site: list them, create one (its secret shown once)
//! and revoke one.

use crate::{Actor, AppError, AppResult, Permission, authorize};
use chrono::{DateTime, Utc};
use quire_core::access::Group;
use quire_store::{NewToken, Store, TokenInfo};

/// A token to create on the actor's site.
#[derive(Debug, Clone)]
pub struct TokenRequest {
    /// A name to recognise it by.
    pub name: String,
    /// Its group.
    pub group: Group,
    /// Environments it may use (default: the actor's own, or all).
    pub environments: Option<Vec<String>>,
    /// When it stops working; in the future.
    pub expires_at: Option<DateTime<Utc>>,
    /// Or: days until it stops working.
    pub expires_in_days: Option<i64>,
    /// How its destructive calls are approved (default: a person approves each).
    pub approval_policy: Option<quire_core::model::ApprovalPolicy>,
}

/// Creates a token on the actor's site (admins): its expiry in the future,
/// and no environment the actor may not use itself. Answers the token and
/// its secret, which is shown this once.
pub async fn create_token(store: &Store, actor: &Actor, request: TokenRequest) -> AppResult<(TokenInfo, String)> {
    authorize(actor, Permission::Administer)?;
    let expires_at = match (request.expires_at, request.expires_in_days) {
        (Some(_), Some(_)) => {
            return Err(AppError::invalid(
                "expiresInDays",
                "expiresInDays: give either expiresAt or expiresInDays, not both",
            ));
        }
        (Some(at), None) => Some(quire_store::check_expiry("expiresAt", at)?),
        (None, Some(days)) => Some(quire_store::expiry_in_days("expiresInDays", days)?),
        (None, None) => None,
    };
    // A token limited to some environments cannot grant others.
    let environments = match (&actor.environments, request.environments) {
        (Some(mine), Some(asked)) => {
            if let Some(env) = asked.iter().find(|e| !mine.contains(e)) {
                return Err(AppError::forbidden(format!(
                    "your token may not use environment \"{env}\", so it cannot grant it"
                )));
            }
            Some(asked)
        }
        (Some(mine), None) => Some(mine.clone()),
        (None, asked) => asked,
    };
    let (token, secret) = store
        .create_token(NewToken {
            environments,
            expires_at,
            approval_policy: request.approval_policy,
            user_id: actor.user_id().map(str::to_string),
            ..NewToken::new(request.name, request.group, actor.scope.site_id.clone())
        })
        .await?;
    tracing::info!(token = %token.id, group = token.group.as_str(), by = %actor.id, "token created");
    Ok((token, secret))
}

/// The tokens of the actor's site that are not revoked (expired ones
/// included), oldest first (admins).
pub async fn list(store: &Store, actor: &Actor) -> AppResult<Vec<TokenInfo>> {
    authorize(actor, Permission::Administer)?;
    Ok(store.tokens(&actor.scope.site_id).await?)
}

/// One token of the actor's site that is not revoked (admins).
pub async fn token(store: &Store, actor: &Actor, id: &str) -> AppResult<TokenInfo> {
    authorize(actor, Permission::Administer)?;
    Ok(store.token(&actor.scope.site_id, id).await?)
}

/// Revokes a token of the actor's site (admins). Nothing is deleted: the
/// token keeps its record, marked revoked. The caller forgets any cached
/// copy of it.
pub async fn revoke_token(store: &Store, actor: &Actor, id: &str) -> AppResult<TokenInfo> {
    authorize(actor, Permission::Administer)?;
    let token = store.revoke_token(&actor.scope.site_id, id).await?;
    tracing::info!(token = %token.id, by = %actor.id, "token revoked");
    Ok(token)
}
