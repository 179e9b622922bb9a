//! The approvals inbox and the site's API tokens: the same operations as
//! `/api/v1/approvals` and `/api/v1/tokens`, through the same functions.

use crate::Person;
use crate::error::{WebError, refusal};
use crate::form::{self, Form};
use crate::frame::{Frame, Who};
use crate::names::{Named, Records};
use crate::pages::{Head, answered};
use askama::Template;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::AppError;
use quire_app::approvals::{Verdict, answer};
use quire_app::content::{Confirmation, TokenInfo};
use quire_app::tokens::{TokenRequest, create_token, revoke_token};
use quire_core::access::Group;
use quire_core::model::EntityKind;
use quire_server::AppState;
use serde::Deserialize;

/// A pending call as the inbox shows it.
pub struct Pending {
    pub c: Confirmation,
    pub args: String,
    /// What the person is asked, and what approving does, in their words.
    pub question: String,
    pub consequence: &'static str,
    pub via: &'static str,
    /// Who asked, in words.
    pub by: String,
    /// The records it would change, named.
    pub records: Vec<Named>,
}

/// The records a preview lists (`items`: objects with an `entity` and an
/// `id`), in its order.
fn previewed(preview: &serde_json::Value) -> Vec<(EntityKind, String)> {
    let items = preview.get("items").and_then(|i| i.as_array()).map(Vec::as_slice).unwrap_or_default();
    items
        .iter()
        .filter_map(|i| {
            let kind = EntityKind::parse("entity", i.get("entity")?.as_str()?).ok()?;
            Some((kind, i.get("id")?.as_str()?.to_string()))
        })
        .collect()
}

#[derive(Template)]
#[template(path = "approvals.html")]
struct Inbox {
    head: Head,
    frame: Frame,
    pending: Vec<Pending>,
    error: Option<String>,
}

async fn inbox(state: &AppState, person: &Person, error: Option<String>) -> Result<Inbox, WebError> {
    let pending = quire_app::approvals::pending(state.runtime(), person.actor()).await?;
    let who = Who::named(person, pending.iter().map(|c| c.requested_by.as_str())).await;
    let listed: Vec<Vec<(EntityKind, String)>> = pending.iter().map(|c| previewed(&c.preview)).collect();
    let records = Records::of(person, listed.iter().flatten().map(|(k, id)| (*k, id.as_str()))).await;
    let mut lines = Vec::new();
    for (c, listed) in pending.into_iter().zip(&listed) {
        let items = c.preview.get("items").cloned().unwrap_or_default();
        let (question, consequence, _) = crate::sidebar::asked_in_words(person, &c.tool, &c.args, &items).await;
        lines.push(Pending {
            args: serde_json::to_string_pretty(&c.args).unwrap_or_default(),
            question,
            consequence,
            via: c.requested_via.as_str(),
            by: who.name(&c.requested_by),
            records: listed.iter().map(|(kind, id)| records.named(*kind, id)).collect(),
            c,
        });
    }
    let pending = lines;
    Ok(Inbox { head: Head::new(), frame: Frame::new(person, "/approvals"), pending, error })
}

/// `GET /approvals`: destructive calls waiting for a person.
pub async fn approvals(State(state): State<AppState>, person: Person) -> Result<Html<String>, WebError> {
    Ok(Html(inbox(&state, &person, None).await?.render()?))
}

#[derive(Deserialize)]
pub struct AnswerForm {
    verdict: String,
    #[serde(default)]
    reason: String,
}

/// `POST /approvals/{id}`: approves or rejects one.
pub async fn answer_one(
    State(state): State<AppState>,
    person: Person,
    Path(id): Path<String>,
    Form(f): Form<AnswerForm>,
) -> Response {
    let verdict = match f.verdict.as_str() {
        "approve" => Verdict::Approve,
        "reject" => Verdict::Reject(Some(f.reason.trim().to_string()).filter(|r| !r.is_empty())),
        other => {
            return WebError::Status(StatusCode::BAD_REQUEST, format!("verdict \"{other}\" is not approve or reject"))
                .into_response();
        }
    };
    match answer(state.runtime(), person.actor(), &id, verdict).await {
        Ok(_) => Redirect::to("/approvals").into_response(),
        // The inbox again with the reason, under the status REST answers
        // for the same refusal (403 for a group that may not approve).
        Err(e) => {
            let (status, message) = refusal(&e);
            answered(status, inbox(&state, &person, Some(message)).await)
        }
    }
}

#[derive(Template)]
#[template(path = "tokens.html")]
struct Tokens {
    head: Head,
    frame: Frame,
    tokens: Vec<TokenInfo>,
    groups: [Group; 4],
    /// The environments a new token may be limited to (the person's own).
    environments: Vec<String>,
    created: Option<(String, String)>,
    error: Option<(String, String)>,
}

async fn tokens_page(
    state: &AppState,
    person: &Person,
    created: Option<(String, String)>,
    error: Option<(String, String)>,
) -> Result<Tokens, WebError> {
    let tokens = quire_app::tokens::list(state.store(), person.actor()).await?;
    let environments = person.actor().environments.clone().unwrap_or_default();
    Ok(Tokens {
        head: Head::new(),
        frame: Frame::new(person, "/tokens"),
        tokens,
        groups: Group::ALL,
        environments,
        created,
        error,
    })
}

/// `GET /tokens`: the site's API tokens (admins).
pub async fn tokens(State(state): State<AppState>, person: Person) -> Result<Html<String>, WebError> {
    Ok(Html(tokens_page(&state, &person, None, None).await?.render()?))
}

/// `POST /tokens`: creates one and shows its secret this once. Its
/// environments are the ticked ones (every one, those made later too, when
/// all the person may use are ticked).
pub async fn create(
    State(state): State<AppState>,
    person: Person,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let result = async {
        let group = form::value(&pairs, "group");
        let group = Group::parse(group).map_err(|m| AppError::invalid("group", format!("group: {m}")))?;
        let days = match form::value(&pairs, "expires_in_days").trim() {
            "" => None,
            d => Some(d.parse::<i64>().map_err(|_| {
                AppError::invalid("expiresInDays", format!("expiresInDays: \"{d}\" is not a whole number of days"))
            })?),
        };
        let ticked = form::values(&pairs, "env");
        let mine = person.actor().environments.clone().unwrap_or_default();
        let environments = match form::values(&pairs, "envs").is_empty() {
            // A form without the boxes (an older page): every environment.
            true => None,
            false if mine.iter().all(|e| ticked.contains(e)) => None,
            false => Some(ticked),
        };
        let request = TokenRequest {
            name: form::value(&pairs, "name").to_string(),
            group,
            environments,
            expires_at: None,
            expires_in_days: days,
            approval_policy: None,
        };
        create_token(state.store(), person.actor(), request).await
    }
    .await;
    let page = match result {
        Ok((token, secret)) => tokens_page(&state, &person, Some((token.name, secret)), None).await,
        Err(e) => {
            let field = e.field.clone().unwrap_or_default();
            tokens_page(&state, &person, None, Some((field, refusal(&e).1))).await
        }
    };
    answered(StatusCode::OK, page)
}

/// `POST /tokens/{id}/revoke`.
pub async fn revoke(
    State(state): State<AppState>,
    person: Person,
    Path(id): Path<String>,
) -> Result<Redirect, WebError> {
    revoke_token(state.store(), person.actor(), &id).await?;
    state.forget_tokens();
    Ok(Redirect::to("/tokens"))
}
