//! Who is calling: the bearer token decides the caller's group and the
//! (site, environment) every read and write is confined to.

use crate::AppState;
use crate::error::ApiError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use quire_core::access::{Action, Group, allows};
use quire_core::model::{ChangeContext, Surface};
use quire_store::{Scope, TokenInfo};

/// Header that picks one of the token's environments (default: its first).
pub const ENV_HEADER: &str = "x-quire-env";

/// An authenticated caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The token presented.
    pub token: TokenInfo,
    /// The scope every operation runs in; never taken from the body.
    pub scope: Scope,
}

impl Caller {
    /// The caller's group.
    pub fn group(&self) -> Group {
        self.token.group
    }

    /// Fails with 403 unless the caller's group allows `action`.
    pub fn require(&self, action: Action) -> Result<(), ApiError> {
        if allows(self.token.group, action) {
            Ok(())
        } else {
            let what = match action {
                Action::Read => "read".to_string(),
                Action::Write(kind) => format!("create or change {kind} records"),
                Action::Delete(kind) => format!("archive or restore {kind} records"),
                Action::Administer => "administer the site".to_string(),
            };
            Err(ApiError::forbidden(format!("group {} may not {what}", self.token.group.as_str())))
        }
    }

    /// The change-log context of this caller's writes.
    pub fn ctx(&self) -> ChangeContext {
        ChangeContext {
            actor: format!("token:{}", self.token.id),
            surface: Surface::Rest,
            session_id: None,
            turn_id: None,
        }
    }
}

/// The bearer secret of a request, if any.
pub fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(axum::http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let Some(secret) = bearer(parts) else {
            return Err(ApiError::unauthorized("a bearer token is required: Authorization: Bearer <token>"));
        };
        let grant = state.authenticate(secret).await?;
        let Some(grant) = grant else {
            return Err(ApiError::unauthorized("the token is not valid"));
        };
        if grant.expired {
            return Err(ApiError::unauthorized("the token has expired"));
        }
        let env = match parts.headers.get(ENV_HEADER) {
            None => None,
            Some(v) => Some(v.to_str().map_err(|_| ApiError::bad_field(ENV_HEADER, "is not readable text"))?),
        };
        let Some(scope) = grant.scope(env) else {
            return Err(ApiError::forbidden(format!(
                "the token may not use environment \"{}\"",
                env.unwrap_or_default()
            )));
        };
        // The environment must exist for the token's site.
        let scope = state.site_scope(&scope.site_id, &scope.env).await.map_err(|_| {
            ApiError::forbidden(format!("environment \"{}\" does not exist for this token's site", scope.env))
        })?;
        Ok(Caller { token: grant.token, scope })
    }
}
