//! Publishing from the editors: `POST /pages/{id}/publishing`,
//! `/entries/{id}/publishing` and `/navigation/{id}/publishing` publish the
//! draft, take the document off the site, or give the draft up
//! (`action`), then go back to the editor. Saving an editor's form changes
//! the draft only.

use crate::{AppState, Person, error::WebError};
use axum::Form;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::Redirect;
use axum::routing::{MethodRouter, post};
use quire_app::content::Publication;
use quire_core::model::EntityKind;
use serde::Deserialize;

/// The publishing panel of an editor: where the document stands, where
/// its buttons post, and what was just done (`?done=`).
pub struct Panel {
    /// Where the buttons post.
    pub action: String,
    /// Where the document stands.
    pub state: Publication,
    /// What was just done, said to the person; empty when nothing was.
    pub done: &'static str,
    /// Where the draft can be seen as it would be published; empty when
    /// nowhere.
    pub preview: String,
}

impl Panel {
    /// The panel of the document `id` of `kind`, posting to `action`.
    pub async fn of(person: &Person, kind: EntityKind, id: &str, action: String) -> Result<Panel, WebError> {
        let state = person.content.publication(kind, id).await?;
        Ok(Panel { action, state, done: "", preview: String::new() })
    }

    /// The panel with a link to the draft as it would be published.
    pub fn previewed_at(mut self, preview: String) -> Panel {
        self.preview = preview;
        self
    }

    /// The panel saying what `done` (an editor's `?done=`) was.
    pub fn after(mut self, done: Option<&str>) -> Panel {
        self.done = match done {
            Some("published") => "Published.",
            Some("unpublished") => "Taken off the site.",
            Some("discarded") => "Changes discarded: the draft is what is published.",
            _ => "",
        };
        self
    }
}

/// The button pressed.
#[derive(Deserialize)]
pub struct PublishingForm {
    action: String,
}

/// `POST /pages/{id}/publishing`, `/entries/{id}/publishing` or
/// `/navigation/{id}/publishing` for documents of `kind`, whose editor is
/// at `editor` followed by the id: runs the pressed action, then goes back
/// to the editor saying what happened.
pub fn route(kind: EntityKind, editor: &'static str) -> MethodRouter<AppState> {
    post(move |person: Person, Path(id): Path<String>, Form(form): Form<PublishingForm>| async move {
        let content = &person.content;
        let done = match form.action.as_str() {
            "publish" => content.publish(kind, &id).await.map(|_| "published"),
            "unpublish" => content.unpublish(kind, &id).await.map(|_| "unpublished"),
            "discard" => content.discard_draft(kind, &id).await.map(|_| "discarded"),
            other => {
                let message = format!("action: \"{other}\" is not one of publish, unpublish, discard");
                return Err(WebError::Status(StatusCode::BAD_REQUEST, message));
            }
        }?;
        Ok::<_, WebError>(Redirect::to(&format!("{editor}/{id}?done={done}")))
    })
}
