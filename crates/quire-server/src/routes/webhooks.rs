//! `/api/v1/webhooks`: the site's webhook subscriptions, for its admins
//! ([decision 0049]): subscribe (the signing secret answered once), list,
//! read and archive them, rotate the secret, read the delivery log, and
//! send a delivery again.
//!
//! [decision 0049]: ../../../../docs/decisions/0049-webhooks-outbox.md

use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath};
use crate::routes::{ListResponse, Paging};
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use quire_app::webhooks::{self, Subscribe};
use quire_store::{Delivery, Webhook};
use serde::{Deserialize, Serialize};

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/webhooks", get(list).post(create))
        .route("/api/v1/webhooks/{id}", get(read).delete(archive))
        .route("/api/v1/webhooks/{id}/secrets", post(rotate).delete(retire))
        .route("/api/v1/webhooks/{id}/deliveries", get(deliveries))
        .route("/api/v1/webhook-deliveries/{id}/redeliver", post(redeliver))
}

/// A subscription to make.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateWebhook {
    /// Where deliveries are POSTed: an http or https URL (private addresses
    /// only when the operator allows them, `[http] allow`).
    #[schema(min_length = 1, format = "uri")]
    pub url: String,
    /// One environment of the site; omitted: every one.
    pub env: Option<String>,
    /// Events to receive; omitted or empty: all.
    #[serde(default)]
    #[schema(value_type = Vec<WebhookEvent>)]
    pub events: Vec<String>,
    /// Kinds to receive, of record (`page`, `entry`, …) or of event
    /// (`release`, `schedule`, `turn`, `approval`); omitted or empty: all.
    #[serde(default)]
    #[schema(value_type = Vec<WebhookKind>)]
    pub kinds: Vec<String>,
    /// What it is for.
    pub description: Option<String>,
}

/// An event a subscription may receive (the document's names of
/// `quire_store::WEBHOOK_EVENTS`; the body is read as text and checked by
/// the use case, so a wrong name is a 422 naming the field).
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
pub enum WebhookEvent {
    /// A record was made.
    Created,
    /// A record changed.
    Updated,
    /// A document was published.
    Published,
    /// A document was taken off the site.
    Unpublished,
    /// A record was archived.
    Archived,
    /// A record came back from the archive.
    Restored,
    /// A record was set back to a revision, or a turn was undone.
    Reverted,
    /// A schedule ran (done or failed).
    Ran,
    /// An agent's turn finished.
    Finished,
    /// An approval waits for a person.
    Waiting,
}

/// A kind a subscription may receive: a record kind, or one of
/// `quire_store::WEBHOOK_KINDS` (events that are not a record's change).
pub struct WebhookKind;

impl utoipa::PartialSchema for WebhookKind {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        let records = quire_core::model::EntityKind::ALL.iter().map(|k| k.as_str());
        let names: Vec<&str> = records.chain(quire_store::WEBHOOK_KINDS).collect();
        utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::Type::String).enum_values(Some(names)).into()
    }
}

impl utoipa::ToSchema for WebhookKind {}

/// A subscription with a secret shown this once.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookWithSecret {
    /// The subscription.
    #[serde(flatten)]
    pub webhook: Webhook,
    /// The signing secret (`whsec_…`) for the `standardwebhooks` libraries; not shown again.
    pub secret: String,
}

/// The site's webhook subscriptions, oldest first.
#[utoipa::path(get, path = "/api/v1/webhooks", operation_id = "listWebhooks", tag = "webhooks", security(("bearer" = [])),
    responses((status = 200, description = "The site's subscriptions (never their secrets)", body = ListResponse<Webhook>)))]
pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<ListResponse<Webhook>>> {
    let items = webhooks::list(state.registry().services(), &caller.acting()).await?;
    Ok(Json(ListResponse { count: items.len(), items, next_cursor: None }))
}

/// Subscribes an address to the site's events; answers its secret once.
#[utoipa::path(post, path = "/api/v1/webhooks", operation_id = "createWebhook", tag = "webhooks", request_body = CreateWebhook,
    security(("bearer" = [])), responses((status = 201, description = "The subscription and its secret, shown this once", body = WebhookWithSecret),
        (status = 422, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<CreateWebhook>,
) -> ApiResult<(StatusCode, Json<WebhookWithSecret>)> {
    let subscribe = Subscribe {
        url: body.url,
        env: body.env,
        events: body.events,
        kinds: body.kinds,
        description: body.description,
    };
    let (webhook, secret) = webhooks::subscribe(state.registry().services(), &caller.acting(), subscribe).await?;
    Ok((StatusCode::CREATED, Json(WebhookWithSecret { webhook, secret })))
}

/// One subscription of the site.
#[utoipa::path(get, path = "/api/v1/webhooks/{id}", operation_id = "getWebhook", tag = "webhooks", params(("id" = String, Path, description = "Webhook id")),
    security(("bearer" = [])), responses((status = 200, description = "The subscription", body = Webhook), (status = 404, body = ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Webhook>> {
    Ok(Json(webhooks::get(state.registry().services(), &caller.acting(), &id).await?))
}

/// Archives a subscription: nothing more is sent to it; its log is kept.
#[utoipa::path(delete, path = "/api/v1/webhooks/{id}", operation_id = "archiveWebhook", tag = "webhooks", params(("id" = String, Path, description = "Webhook id")),
    security(("bearer" = [])), responses((status = 200, description = "The archived subscription", body = Webhook), (status = 404, body = ErrorBody)))]
pub async fn archive(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Webhook>> {
    Ok(Json(webhooks::archive(state.registry().services(), &caller.acting(), &id).await?))
}

/// Starts a secret rotation: a new secret signs beside the old ones until
/// they are retired; answers the new one once.
#[utoipa::path(post, path = "/api/v1/webhooks/{id}/secrets", operation_id = "rotateWebhookSecret", tag = "webhooks", params(("id" = String, Path, description = "Webhook id")),
    security(("bearer" = [])), responses((status = 201, description = "The subscription and its new secret, shown this once", body = WebhookWithSecret), (status = 404, body = ErrorBody)))]
pub async fn rotate(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<(StatusCode, Json<WebhookWithSecret>)> {
    let (webhook, secret) = webhooks::rotate_secret(state.registry().services(), &caller.acting(), &id).await?;
    Ok((StatusCode::CREATED, Json(WebhookWithSecret { webhook, secret })))
}

/// Ends a rotation: only the newest secret signs from now on.
#[utoipa::path(delete, path = "/api/v1/webhooks/{id}/secrets", operation_id = "retireWebhookSecrets", tag = "webhooks", params(("id" = String, Path, description = "Webhook id")),
    security(("bearer" = [])), responses((status = 200, description = "The subscription, signed by one secret", body = Webhook), (status = 404, body = ErrorBody)))]
pub async fn retire(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Webhook>> {
    Ok(Json(webhooks::retire_secrets(state.registry().services(), &caller.acting(), &id).await?))
}

/// A subscription's deliveries, newest first, with their last attempt.
#[utoipa::path(get, path = "/api/v1/webhooks/{id}/deliveries", operation_id = "listWebhookDeliveries", tag = "webhooks",
    params(("id" = String, Path, description = "Webhook id"), Paging), security(("bearer" = [])),
    responses((status = 200, description = "The delivery log", body = ListResponse<Delivery>), (status = 404, body = ErrorBody)))]
pub async fn deliveries(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    crate::extract::ApiQuery(paging): crate::extract::ApiQuery<Paging>,
) -> ApiResult<Json<ListResponse<Delivery>>> {
    let items = webhooks::deliveries(state.registry().services(), &caller.acting(), &id, paging.limit()?).await?;
    Ok(Json(ListResponse { count: items.len(), items, next_cursor: None }))
}

/// Sends a delivery again now, with the same id and payload (receivers
/// that remember ids see a duplicate, as the specification allows).
#[utoipa::path(post, path = "/api/v1/webhook-deliveries/{id}/redeliver", operation_id = "redeliverWebhook", tag = "webhooks",
    params(("id" = String, Path, description = "Delivery id (its webhook-id)")), security(("bearer" = [])),
    responses((status = 200, description = "The delivery, due now", body = Delivery), (status = 404, body = ErrorBody)))]
pub async fn redeliver(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Delivery>> {
    Ok(Json(webhooks::redeliver(state.registry().services(), &caller.acting(), &id).await?))
}
