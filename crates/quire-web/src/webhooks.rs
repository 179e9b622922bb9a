//! The Webhooks screen, for the site's administrators (decision 0049):
//! the subscriptions with the form that makes one (its signing secret
//! shown once), and one subscription's delivery log with each delivery's
//! response and its "send again", a secret rotation and archiving it.
//! Everything goes through `quire_app::webhooks`, as REST's
//! `/api/v1/webhooks` does.

use crate::Person;
use crate::error::{WebError, refusal, urlencode};
use crate::form::{self, Errors, Form};
use crate::frame::{Frame, Who};
use crate::names::noun;
use crate::removal::Confirm;
use crate::screen::DoneQuery;
use crate::screen::{Head, answered};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::webhooks::{self, Delivery, Subscribe, WEBHOOK_EVENTS, WEBHOOK_KINDS, Webhook};
use quire_app::{Failure, Permission};
use quire_core::model::EntityKind;
use quire_server::AppState;

/// How many deliveries the log shows.
const LOG: u32 = 50;

/// The kinds a subscription may name: (wire name, in words).
fn kinds() -> Vec<(&'static str, &'static str)> {
    let records = EntityKind::ALL.iter().map(|k| (k.as_str(), noun(*k)));
    let events = WEBHOOK_KINDS.iter().map(|k| (*k, if *k == "turn" { "agent turn" } else { k }));
    records.chain(events).collect()
}

/// What the new subscription's form held.
#[derive(Default)]
pub struct Typed {
    url: String,
    env: String,
    events: Vec<String>,
    kinds: Vec<String>,
    description: String,
}

impl Typed {
    /// Whether the form ticked `value` among `name`'s choices.
    fn ticked(&self, name: &str, value: &str) -> bool {
        let list = if name == "events" { &self.events } else { &self.kinds };
        list.iter().any(|v| v == value)
    }
}

/// A subscription as the list shows it.
pub struct Row {
    pub webhook: Webhook,
    pub by: String,
}

#[derive(Template)]
#[template(path = "webhooks.html")]
struct ListPage {
    head: Head,
    frame: Frame,
    rows: Vec<Row>,
    /// The site's environments, to choose one.
    environments: Vec<String>,
    events: [&'static str; 10],
    kinds: Vec<(&'static str, &'static str)>,
    /// The subscription just made, with its secret shown this once.
    created: Option<(Webhook, String)>,
    done: &'static str,
    errors: Errors,
    typed: Typed,
}

async fn list_page(
    state: &AppState,
    person: &Person,
    created: Option<(Webhook, String)>,
    done: Option<&str>,
    errors: Errors,
    typed: Typed,
) -> Result<ListPage, WebError> {
    let services = state.registry().services();
    let all = webhooks::list(services, person.actor()).await?;
    let who = Who::named(person, all.iter().map(|w| w.created_by.as_str())).await;
    let environments = quire_app::environments::list(services, person.actor())
        .await?
        .into_iter()
        .filter(|e| e.archived_at.is_none())
        .map(|e| e.key)
        .collect();
    Ok(ListPage {
        head: Head::new(),
        frame: Frame::new(person, "/webhooks"),
        rows: all.into_iter().map(|webhook| Row { by: who.name(&webhook.created_by), webhook }).collect(),
        environments,
        events: WEBHOOK_EVENTS,
        kinds: kinds(),
        created,
        done: match done {
            Some("archived") => "Archived: nothing more is sent to it; its log is kept.",
            _ => "",
        },
        errors,
        typed,
    })
}

/// `GET /webhooks`: the site's subscriptions and the form to make one.
pub async fn list(
    State(state): State<AppState>,
    person: Person,
    Query(q): Query<DoneQuery>,
) -> Result<Html<String>, WebError> {
    let page = list_page(&state, &person, None, q.done.as_deref(), Errors::new(), Typed::default()).await?;
    Ok(Html(page.render()?))
}

/// `POST /webhooks`: subscribes an address; shows its secret this once.
pub async fn create(
    State(state): State<AppState>,
    person: Person,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let typed = Typed {
        url: form::value(&pairs, "url").trim().to_string(),
        env: form::value(&pairs, "env").to_string(),
        events: form::values(&pairs, "events"),
        kinds: form::values(&pairs, "kinds"),
        description: form::value(&pairs, "description").trim().to_string(),
    };
    let subscribe = Subscribe {
        url: typed.url.clone(),
        env: form::optional(&typed.env),
        events: typed.events.clone(),
        kinds: typed.kinds.clone(),
        description: form::optional(&typed.description),
    };
    match webhooks::subscribe(state.registry().services(), person.actor(), subscribe).await {
        Ok(made) => answered(
            StatusCode::OK,
            list_page(&state, &person, Some(made), None, Errors::new(), Typed::default()).await,
        ),
        Err(e) if matches!(e.failure, Failure::Forbidden | Failure::Internal) => WebError::from(e).into_response(),
        Err(e) => {
            let mut errors = Errors::new();
            for (field, message) in form::errors_of(&e, "") {
                let known = ["url", "env", "events", "kinds", "description"].contains(&field.as_str());
                let message = message.strip_prefix(&format!("{field}: ")).map(str::to_string).unwrap_or(message);
                errors.entry(if known { field } else { String::new() }).or_insert(message);
            }
            if errors.is_empty() {
                errors.insert(String::new(), refusal(&e).1);
            }
            answered(refusal(&e).0, list_page(&state, &person, None, None, errors, typed).await)
        }
    }
}

#[derive(Template)]
#[template(path = "webhook.html")]
struct WebhookPage {
    head: Head,
    frame: Frame,
    webhook: Webhook,
    deliveries: Vec<Delivery>,
    /// A new secret, shown this once.
    secret: Option<String>,
    done: &'static str,
    error: Option<String>,
}

async fn webhook_page(
    state: &AppState,
    person: &Person,
    id: &str,
    secret: Option<String>,
    done: Option<&str>,
    error: Option<String>,
) -> Result<WebhookPage, WebError> {
    let services = state.registry().services();
    let webhook = webhooks::get(services, person.actor(), id).await?;
    let deliveries = webhooks::deliveries(services, person.actor(), id, LOG).await?;
    Ok(WebhookPage {
        head: Head::new(),
        frame: Frame::new(person, "/webhooks"),
        webhook,
        deliveries,
        secret,
        done: match done {
            Some("sent") => "Sent again: the delivery is due now, with the same id and payload.",
            Some("retired") => "Only the newest secret signs from now on.",
            _ => "",
        },
        error,
    })
}

/// `GET /webhooks/{id}`: a subscription and its delivery log.
pub async fn show(
    State(state): State<AppState>,
    person: Person,
    Path(id): Path<String>,
    Query(q): Query<DoneQuery>,
) -> Result<Html<String>, WebError> {
    Ok(Html(webhook_page(&state, &person, &id, None, q.done.as_deref(), None).await?.render()?))
}

/// `POST /webhooks/{id}/secrets`: `action` rotate (a new secret signs
/// beside the older ones; shown this once) or retire (only the newest signs).
pub async fn secrets(
    State(state): State<AppState>,
    person: Person,
    Path(id): Path<String>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let services = state.registry().services();
    match form::value(&pairs, "action") {
        "rotate" => match webhooks::rotate_secret(services, person.actor(), &id).await {
            Ok((_, secret)) => {
                answered(StatusCode::OK, webhook_page(&state, &person, &id, Some(secret), None, None).await)
            }
            Err(e) => WebError::from(e).into_response(),
        },
        _ => match webhooks::retire_secrets(services, person.actor(), &id).await {
            Ok(_) => Redirect::to(&format!("/webhooks/{}?done=retired", urlencode(&id))).into_response(),
            Err(e) => WebError::from(e).into_response(),
        },
    }
}

/// The question archiving subscription `id` asks.
async fn archive_screen(state: &AppState, person: &Person, id: &str) -> Result<Confirm, WebError> {
    person.require(Permission::Administer)?;
    let webhook = webhooks::get(state.registry().services(), person.actor(), id).await?;
    Ok(Confirm::about(
        person,
        "/webhooks",
        format!("Stop sending to {}?", webhook.url),
        format!("/webhooks/{}/archive", urlencode(id)),
        "Archive the subscription".into(),
        format!("/webhooks/{}", urlencode(id)),
        "Nothing more is sent to it, not even what waits; its delivery log is kept.",
    ))
}

/// `GET /webhooks/{id}/archive`: archiving a subscription, to confirm.
pub async fn confirm_archive(State(state): State<AppState>, person: Person, Path(id): Path<String>) -> Response {
    answered(StatusCode::OK, archive_screen(&state, &person, &id).await)
}

/// `POST /webhooks/{id}/archive`.
pub async fn archive(State(state): State<AppState>, person: Person, Path(id): Path<String>) -> Response {
    match webhooks::archive(state.registry().services(), person.actor(), &id).await {
        Ok(_) => Redirect::to("/webhooks?done=archived").into_response(),
        Err(e) => WebError::from(e).into_response(),
    }
}

/// `POST /webhooks/{id}/deliveries/{delivery}/again`: sends a delivery again.
pub async fn again(
    State(state): State<AppState>,
    person: Person,
    Path((id, delivery)): Path<(String, String)>,
) -> Response {
    match webhooks::redeliver(state.registry().services(), person.actor(), &delivery).await {
        Ok(_) => Redirect::to(&format!("/webhooks/{}?done=sent", urlencode(&id))).into_response(),
        Err(e) if matches!(e.failure, Failure::Forbidden | Failure::NotFound) => WebError::from(e).into_response(),
        Err(e) => {
            let (status, message) = refusal(&e);
            answered(status, webhook_page(&state, &person, &id, None, None, Some(message)).await)
        }
    }
}
