//! Health, the caller's own identity, and the landing page.

use crate::AppState;
use crate::auth::Caller;
use axum::Json;
use axum::Router;
use axum::response::Html;
use axum::routing::get;
use quire_core::access::Group;
use serde::Serialize;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new().route("/", get(index)).route("/healthz", get(health)).route("/api/v1/me", get(me))
}

async fn index() -> Html<&'static str> {
    Html(
        "<!doctype html><meta charset=utf-8><title>Quire</title>\
         <h1>Quire is running</h1>\
         <p>REST API: <a href=/api/docs>/api/docs</a> · OpenAPI: <a href=/api/openapi.json>/api/openapi.json</a> · \
         Delivery: <a href=/api/v1/delivery/pages/home>/api/v1/delivery/pages/home</a></p>",
    )
}

async fn health() -> &'static str {
    "ok"
}

/// Who the token belongs to and where it works.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Me {
    /// Token id.
    pub token_id: String,
    /// Token name.
    pub name: String,
    /// Group.
    pub group: Group,
    /// Site id of the current scope.
    pub site_id: String,
    /// Environment of the current scope.
    pub environment: String,
}

/// The caller's token and scope.
#[utoipa::path(get, path = "/api/v1/me", operation_id = "getMe", tag = "system", security(("bearer" = [])),
    responses((status = 200, description = "The caller's token and scope", body = Me)))]
pub async fn me(caller: Caller) -> Json<Me> {
    Json(Me {
        token_id: caller.token.id.clone(),
        name: caller.token.name.clone(),
        group: caller.token.group,
        site_id: caller.scope.site_id.clone(),
        environment: caller.scope.env.clone(),
    })
}
