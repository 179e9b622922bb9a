//! The archive: what was archived, by whom, and everything that went with
//! it; restoring brings it all back, or says which slug was reused since.

use crate::Person;
use crate::error::WebError;
use crate::frame::Frame;
use crate::pages::Head;
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::restore::restore_archive;
use quire_core::access::Permission;
use quire_core::model::Archive;
use quire_server::AppState;
use quire_server::error::ApiError;
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

async fn page(
    state: &AppState,
    person: &Person,
    cursor: Option<&str>,
    error: Option<(String, String)>,
) -> Result<ArchivePage, WebError> {
    person.caller.authorize(Permission::Read)?;
    let listing = state.store().archives(&person.caller.scope, None, 30, cursor).await.map_err(WebError::listing)?;
    Ok(ArchivePage {
        head: Head::new(),
        frame: Frame::new(person, "/archive"),
        archives: listing.items,
        next: listing.next_cursor,
        error,
    })
}

/// `GET /archive`.
pub async fn list(
    State(state): State<AppState>,
    person: Person,
    Query(q): Query<ArchiveQuery>,
) -> Result<Html<String>, WebError> {
    Ok(Html(page(&state, &person, q.cursor.as_deref(), None).await?.render()?))
}

/// `POST /archive/{id}/restore`.
pub async fn restore(State(state): State<AppState>, person: Person, Path(id): Path<String>) -> Response {
    match restore_archive(state.registry(), &person.caller.acting(), &id).await.map_err(ApiError::from) {
        Ok(_) => Redirect::to("/archive").into_response(),
        Err(e) => {
            let status = e.status;
            match page(&state, &person, None, Some((id, e.message))).await.and_then(|p| Ok(p.render()?)) {
                Ok(html) => (status, Html(html)).into_response(),
                Err(e) => e.into_response(),
            }
        }
    }
}
