//! The archive: what was archived, by whom, and everything that went with
//! it; restoring brings it all back, or says which slug was reused since.

use crate::Person;
use crate::error::{WebError, refusal};
use crate::frame::{Frame, Who};
use crate::names::Records;
use crate::pages::{Head, answered};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::restore::restore_archive;
use quire_core::model::{Archive, EntityKind};
use quire_server::AppState;
use serde::Deserialize;

#[derive(Template)]
#[template(path = "archive.html")]
struct ArchivePage {
    head: Head,
    frame: Frame,
    archives: Vec<Archive>,
    next: Option<String>,
    error: Option<(String, String)>,
    who: Who,
    records: Records,
}

impl ArchivePage {
    /// Where the archived record's screen is, once it is restored and live.
    fn screen(&self, a: &Archive) -> Option<String> {
        self.records.named(a.entity, &a.entity_id).href
    }

    /// The archived record's history.
    fn history(&self, a: &Archive) -> String {
        crate::names::history_of(a.entity, &a.entity_id)
    }
}

#[derive(Deserialize)]
pub struct ArchiveQuery {
    cursor: Option<String>,
}

async fn page(person: &Person, cursor: Option<&str>, error: Option<(String, String)>) -> Result<ArchivePage, WebError> {
    let listing = person.content.archives(None, 30, cursor).await.map_err(WebError::listing)?;
    let archives = listing.items;
    let mut actors: Vec<&str> = archives.iter().map(|a| a.archived_by.as_str()).collect();
    actors.extend(archives.iter().filter_map(|a| a.restored_by.as_deref()));
    let who = Who::named(person, actors).await;
    // Only restored records can be live: the others need no name read.
    let restored: Vec<(EntityKind, &str)> =
        archives.iter().filter(|a| a.restored_at.is_some()).map(|a| (a.entity, a.entity_id.as_str())).collect();
    let records = Records::of(person, restored).await;
    Ok(ArchivePage {
        head: Head::new(),
        frame: Frame::new(person, "/archive"),
        who,
        records,
        archives,
        next: listing.next_cursor,
        error,
    })
}

/// `GET /archive`.
pub async fn list(person: Person, Query(q): Query<ArchiveQuery>) -> Result<Html<String>, WebError> {
    Ok(Html(page(&person, q.cursor.as_deref(), None).await?.render()?))
}

/// `POST /archive/{id}/restore`.
pub async fn restore(State(state): State<AppState>, person: Person, Path(id): Path<String>) -> Response {
    match restore_archive(state.registry(), person.actor(), &id).await {
        Ok(_) => Redirect::to("/archive").into_response(),
        Err(e) => {
            let (status, message) = refusal(&e);
            answered(status, page(&person, None, Some((id, message))).await)
        }
    }
}
