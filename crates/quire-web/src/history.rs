//! History: the change log filtered by record, person, surface and agent
//! session; one change with its before and after side by side; restoring a
//! revision (a page's with its sections as they were) and undoing an agent
//! turn, through the use cases of `quire_app` (`revisions`, `undo`).

use crate::Person;
use crate::error::{WebError, refusal};
use crate::frame::{Frame, Who};
use crate::names::{Named, Records};
use crate::pages::{Head, answered};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::AppError;
use quire_app::content::{ChangeFilter, ChangeSummary};
use quire_app::revisions::restore_document_revision;
use quire_app::undo::undo_turn;
use quire_core::model::{Change, EntityKind, Surface};
use quire_server::AppState;
use serde::Deserialize;
use serde_json::Value;

/// Changes per screen.
const PER_SCREEN: u32 = 50;

#[derive(Deserialize, Default)]
pub struct HistoryQuery {
    #[serde(default)]
    entity: String,
    #[serde(default)]
    entity_id: String,
    #[serde(default)]
    actor: String,
    #[serde(default)]
    surface: String,
    #[serde(default)]
    session: String,
    cursor: Option<String>,
}

#[derive(Template)]
#[template(path = "history.html")]
struct HistoryPage {
    head: Head,
    frame: Frame,
    q: HistoryQuery,
    changes: Vec<ChangeSummary>,
    next: Option<String>,
    entities: &'static [EntityKind],
    surfaces: &'static [Surface],
    who: Who,
    records: Records,
    /// The record the list is filtered to, named.
    record: Option<Named>,
}

impl HistoryPage {
    /// The record `change` changed, named.
    fn record_of(&self, change: &Change) -> Named {
        self.records.named(change.entity, &change.entity_id)
    }

    /// The people and tokens the "by" filter offers: those on this screen
    /// and the one filtered by.
    fn actors(&self) -> Vec<(String, String)> {
        self.who.known()
    }

    /// Whether the list is filtered to the person's own changes.
    fn mine(&self) -> bool {
        self.q.actor.strip_prefix("user:") == Some(self.frame.user_id.as_str())
    }

    /// The fields a change shows it changed: those an editor wrote, not the
    /// version and time every write bumps.
    fn fields(&self, change: &ChangeSummary) -> String {
        let shown: Vec<&str> =
            change.fields.iter().map(String::as_str).filter(|f| !matches!(*f, "version" | "updatedAt")).collect();
        shown.join(", ")
    }
}

fn nonempty(s: &str) -> Option<String> {
    Some(s.trim().to_string()).filter(|s| !s.is_empty())
}

/// `GET /history`.
pub async fn list(person: Person, Query(q): Query<HistoryQuery>) -> Result<Html<String>, WebError> {
    let bad = |field: &str, e: quire_core::FieldError| {
        WebError::Status(StatusCode::BAD_REQUEST, format!("{field}: {}", e.rule))
    };
    let filter = ChangeFilter {
        entity: nonempty(&q.entity)
            .map(|e| EntityKind::parse("entity", &e))
            .transpose()
            .map_err(|e| bad("entity", e))?,
        entity_id: nonempty(&q.entity_id),
        actor: nonempty(&q.actor),
        session_id: nonempty(&q.session),
        turn_id: None,
        surface: nonempty(&q.surface)
            .map(|s| Surface::parse("surface", &s))
            .transpose()
            .map_err(|e| bad("surface", e))?,
    };
    let listing =
        person.content.change_summaries(&filter, PER_SCREEN, q.cursor.as_deref()).await.map_err(WebError::listing)?;
    let changes = listing.items;
    let actors = changes.iter().map(|c| c.change.actor.as_str()).chain(filter.actor.as_deref());
    let who = Who::named(&person, actors).await;
    let filtered = filter.entity.zip(filter.entity_id.as_deref());
    let records =
        Records::of(&person, changes.iter().map(|c| (c.change.entity, c.change.entity_id.as_str())).chain(filtered))
            .await;
    let page = HistoryPage {
        head: Head::new(),
        frame: Frame::new(&person, "/history"),
        record: filtered.map(|(kind, id)| records.named(kind, id)),
        q,
        changes,
        next: listing.next_cursor,
        entities: EntityKind::ALL,
        surfaces: Surface::ALL,
        who,
        records,
    };
    Ok(Html(page.render()?))
}

/// One field of a change: its value before and after.
pub struct FieldDiff {
    pub key: String,
    pub before: String,
    pub after: String,
}

#[derive(Template)]
#[template(path = "change.html")]
struct ChangePage {
    head: Head,
    frame: Frame,
    change: Change,
    fields: Vec<FieldDiff>,
    before: String,
    after: String,
    message: Option<String>,
    /// Who made it, in words.
    by: String,
    /// The record it changed, named.
    record: Named,
    /// The record's history.
    history: String,
}

/// The top-level fields a change touched, with their values before and after.
fn diff(before: Option<&Value>, after: Option<&Value>) -> Vec<FieldDiff> {
    let empty = serde_json::Map::new();
    let b = before.and_then(Value::as_object).unwrap_or(&empty);
    let a = after.and_then(Value::as_object).unwrap_or(&empty);
    let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| !matches!(k.as_str(), "version" | "updatedAt") && b.get(*k) != a.get(*k))
        .map(|k| FieldDiff { key: k.clone(), before: shown(b.get(k)), after: shown(a.get(k)) })
        .collect()
}

/// A field's value as a difference shows it: text as it is, none as a
/// dash, anything else as JSON.
pub(crate) fn shown(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "—".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => serde_json::to_string_pretty(v).unwrap_or_default(),
    }
}

async fn change_page(person: &Person, id: i64, message: Option<String>) -> Result<ChangePage, WebError> {
    let change = person.content.change(id).await?;
    let by = Who::named(person, [change.actor.as_str()]).await.name(&change.actor);
    let record =
        Records::of(person, [(change.entity, change.entity_id.as_str())]).await.named(change.entity, &change.entity_id);
    let pretty =
        |v: &Option<Value>| v.as_ref().map(|v| serde_json::to_string_pretty(v).unwrap_or_default()).unwrap_or_default();
    Ok(ChangePage {
        head: Head::new(),
        frame: Frame::new(person, "/history"),
        fields: diff(change.before.as_ref(), change.after.as_ref()),
        before: pretty(&change.before),
        after: pretty(&change.after),
        history: crate::names::history_of(change.entity, &change.entity_id),
        by,
        record,
        change,
        message,
    })
}

/// `GET /history/{id}`.
pub async fn show(person: Person, Path(id): Path<i64>) -> Result<Html<String>, WebError> {
    Ok(Html(change_page(&person, id, None).await?.render()?))
}

/// `POST /history/{id}/restore`: the record as this change left it.
pub async fn restore(State(state): State<AppState>, person: Person, Path(id): Path<i64>) -> Response {
    match restore_document_revision(state.registry(), person.actor(), id).await {
        Ok(done) => match done.page {
            Some(change) => Redirect::to(&format!("/history/{}", change.id)).into_response(),
            // Only the sections moved: the page's history shows what did.
            None => Redirect::to(&format!("/history/{id}")).into_response(),
        },
        Err(e) => refused(&person, id, e).await,
    }
}

/// `POST /history/{id}/undo-turn`: undoes the agent turn this change belongs to.
pub async fn undo(State(state): State<AppState>, person: Person, Path(id): Path<i64>) -> Response {
    let change = match person.content.change(id).await {
        Ok(c) => c,
        Err(e) => return WebError::from(e).into_response(),
    };
    let (Some(session), Some(turn)) =
        (change.session_id.as_deref(), change.turn_id.as_deref().and_then(|t| t.parse().ok()))
    else {
        return WebError::Status(StatusCode::BAD_REQUEST, format!("change {id} was not made by an agent turn"))
            .into_response();
    };
    match undo_turn(state.runtime(), person.actor(), session, turn).await {
        Ok(_) => Redirect::to(&format!("/history?session={}", crate::error::urlencode(session))).into_response(),
        Err(e) => refused(&person, id, e).await,
    }
}

/// The change again, with why the use case refused, under its status.
async fn refused(person: &Person, id: i64, e: AppError) -> Response {
    let (status, message) = refusal(&e);
    answered(status, change_page(person, id, Some(message)).await)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_diff_lists_only_the_fields_that_changed() {
        let before = json!({ "name": "Old", "slug": "a", "version": 1, "meta": { "title": "T" } });
        let after = json!({ "name": "New", "slug": "a", "version": 2, "meta": { "title": "T2" }, "status": "draft" });
        let d = diff(Some(&before), Some(&after));
        let keys: Vec<&str> = d.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(keys, ["meta", "name", "status"]);
        assert_eq!((d[1].before.as_str(), d[1].after.as_str()), ("Old", "New"));
        assert_eq!(d[2].before, "—");
    }
}
