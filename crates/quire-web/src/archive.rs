//! The archive: what was archived, by whom, and everything that went with
//! it; restoring brings it all back, or says which slug was reused since.

use crate::Person;
use crate::error::{WebError, refusal};
use crate::frame::Frame;
use crate::pages::{Head, answered};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::restore::restore_archive;
use quire_core::model::Archive;
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
}

#[derive(Deserialize)]
pub struct ArchiveQuery {
    cursor: Option<String>,
}

async fn page(person: &Person, cursor: Option<&str>, error: Option<(String, String)>) -> Result<ArchivePage, WebError> {
    let listing = person.content.archives(None, 30, cursor).await.map_err(WebError::listing)?;
    Ok(ArchivePage {
        head: Head::new(),
        frame: Frame::new(person, "/archive"),
        archives: listing.items,
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
