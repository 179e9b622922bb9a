//! Webhooks of a site ([decision 0049]), for its administrators:
//! subscribe an address to events (its signing secret shown once), list
//! and archive subscriptions, rotate the secret, read the delivery log and
//! send a delivery again. What is sent, and when, is the outbox's
//! (`quire_store`) and the sender's (`quire_tools::webhooks`).
//!
//! [decision 0049]: ../../../docs/decisions/0049-webhooks-outbox.md

use crate::{Actor, AppError, AppResult, Permission, authorize};
use quire_core::model::EntityKind;
use quire_store::NewWebhook;
pub use quire_store::{Delivery, WEBHOOK_EVENTS, WEBHOOK_KINDS, Webhook};
use quire_tools::Services;

/// A subscription to make.
#[derive(Debug, Clone, Default)]
pub struct Subscribe {
    /// Where deliveries go: an http(s) URL the guarded client may reach.
    pub url: String,
    /// One environment of the site; none: every one.
    pub env: Option<String>,
    /// Events (see [`WEBHOOK_EVENTS`]); empty: all.
    pub events: Vec<String>,
    /// Record kinds, or kinds of event (see [`WEBHOOK_KINDS`]); empty: all.
    pub kinds: Vec<String>,
    /// What it is for.
    pub description: Option<String>,
}

/// Subscribes the actor's site; answers the subscription and its secret,
/// shown this once.
pub async fn subscribe(services: &Services, actor: &Actor, s: Subscribe) -> AppResult<(Webhook, String)> {
    authorize(actor, Permission::Administer)?;
    services.external.net.check_url(&s.url).map_err(|e| AppError::invalid("url", format!("url: {e}")))?;
    if let Some(bad) = s.events.iter().find(|e| !WEBHOOK_EVENTS.contains(&e.as_str())) {
        return Err(AppError::invalid("events", format!("events: {bad} is not one of {}", WEBHOOK_EVENTS.join(", "))));
    }
    for kind in s.kinds.iter().filter(|k| !WEBHOOK_KINDS.contains(&k.as_str())) {
        EntityKind::parse("kinds", kind)
            .map_err(|e| AppError::invalid("kinds", format!("{e}, or one of {}", WEBHOOK_KINDS.join(", "))))?;
    }
    if let Some(env) = &s.env {
        let site = services.store.site(&actor.scope.site_id).await?;
        if !site.environments.contains(env) {
            return Err(AppError::invalid("env", format!("env: the site has no environment {env}")));
        }
    }
    let description = s.description.unwrap_or_default();
    if !description.is_empty() {
        quire_core::text::check_line("description", &description, 200)
            .map_err(|e| AppError::invalid("description", e.to_string()))?;
    }
    let secret = quire_tools::webhooks::new_secret().map_err(|e| AppError::new(crate::Failure::Internal, e))?;
    let new = NewWebhook {
        env: s.env,
        url: s.url.trim().to_string(),
        events: s.events,
        kinds: s.kinds,
        description,
        secret: secret.clone(),
    };
    let webhook = services.store.create_webhook(&actor.change_context(), &actor.scope, new).await?;
    tracing::info!(webhook = %webhook.id, by = %actor.id, "webhook subscribed");
    Ok((webhook, secret))
}

/// The site's subscriptions.
pub async fn list(services: &Services, actor: &Actor) -> AppResult<Vec<Webhook>> {
    authorize(actor, Permission::Administer)?;
    Ok(services.store.webhooks(&actor.scope).await?)
}

/// One subscription of the site.
pub async fn get(services: &Services, actor: &Actor, id: &str) -> AppResult<Webhook> {
    authorize(actor, Permission::Administer)?;
    Ok(services.store.webhook(&actor.scope, id).await?)
}

/// Archives a subscription (its log is kept; what waits is not sent).
pub async fn archive(services: &Services, actor: &Actor, id: &str) -> AppResult<Webhook> {
    authorize(actor, Permission::Administer)?;
    Ok(services.store.archive_webhook(&actor.scope, id).await?)
}

/// Starts a rotation: a new secret signs beside the older ones until they
/// are retired; answers the new secret, shown this once.
pub async fn rotate_secret(services: &Services, actor: &Actor, id: &str) -> AppResult<(Webhook, String)> {
    authorize(actor, Permission::Administer)?;
    let secret = quire_tools::webhooks::new_secret().map_err(|e| AppError::new(crate::Failure::Internal, e))?;
    let webhook = services.store.add_webhook_secret(&actor.scope, id, &secret).await?;
    Ok((webhook, secret))
}

/// Ends a rotation: only the newest secret signs.
pub async fn retire_secrets(services: &Services, actor: &Actor, id: &str) -> AppResult<Webhook> {
    authorize(actor, Permission::Administer)?;
    Ok(services.store.retire_webhook_secrets(&actor.scope, id).await?)
}

/// A subscription's deliveries, newest first.
pub async fn deliveries(services: &Services, actor: &Actor, id: &str, limit: u32) -> AppResult<Vec<Delivery>> {
    authorize(actor, Permission::Administer)?;
    Ok(services.store.webhook_deliveries(&actor.scope, id, limit).await?)
}

/// Sends a delivery again, with its id and payload.
pub async fn redeliver(services: &Services, actor: &Actor, delivery: &str) -> AppResult<Delivery> {
    authorize(actor, Permission::Administer)?;
    Ok(services.store.redeliver(&actor.scope, delivery).await?)
}
