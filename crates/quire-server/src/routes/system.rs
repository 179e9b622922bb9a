//! Health and the caller's own identity.

use crate::AppState;
use crate::auth::{Caller, Who};
use axum::Json;
use axum::Router;
use axum::routing::get;
use quire_core::access::Group;
use serde::Serialize;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new().route("/healthz", get(health)).route("/api/v1/me", get(me))
}

async fn health() -> &'static str {
    "ok"
}

/// Who the token belongs to and where it works.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Me {
    /// Token id, when the caller is a token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_id: Option<String>,
    /// User id, when the caller is a signed-in person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// The token's name, or the person's display name.
    pub name: String,
    /// Group.
    pub group: Group,
    /// Site id of the current scope.
    pub site_id: String,
    /// Environment of the current scope.
    pub environment: String,
}

/// The caller (token or signed-in person) and scope.
#[utoipa::path(get, path = "/api/v1/me", operation_id = "getMe", tag = "system", security(("bearer" = [])),
    responses((status = 200, description = "The caller's token and scope", body = Me)))]
pub async fn me(caller: Caller) -> Json<Me> {
    Json(Me {
        token_id: caller.token().map(|t| t.id.clone()),
        user_id: match &caller.who {
            Who::Person(s) => Some(s.user.id.clone()),
            Who::Token(_) => None,
        },
        name: match &caller.who {
            Who::Token(t) => t.name.clone(),
            Who::Person(s) => s.user.display_name.clone(),
        },
        group: caller.group(),
        site_id: caller.scope.site_id.clone(),
        environment: caller.scope.env.clone(),
    })
}
