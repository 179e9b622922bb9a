//! Previews of drafts outside the back-office: the editors' “Preview the
//! draft” link, which makes a fresh preview link each time it is followed
//! (so a screen left open never holds an expired one) and goes where the
//! site shows drafts; and the Site screen, where administrators say where
//! that is: the site's own front end, or else the delivery API.

use crate::Person;
use crate::error::{WebError, refusal};
use crate::form::Form;
use crate::form::{self, Errors};
use crate::frame::Frame;
use crate::pages::{Head, answered};
use askama::Template;
use axum::extract::{Path, Query};
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::Failure;
use quire_core::access::Permission;
use quire_core::model::{EntityKind, Site};
use serde::Deserialize;

/// Goes to a fresh preview of the draft of `id`.
async fn preview(person: &Person, kind: EntityKind, id: &str) -> Response {
    match person.content.preview_link(kind, id).await {
        Ok(link) => Redirect::to(&link.url).into_response(),
        Err(e) => WebError::from(e).into_response(),
    }
}

/// `GET /pages/{id}/preview`: the page's draft as it would be published,
/// on the site's own front end when it has one, else through delivery.
pub async fn page(person: Person, Path(id): Path<String>) -> Response {
    preview(&person, EntityKind::Page, &id).await
}

/// `GET /entries/{id}/preview`: the entry's draft, as for a page.
pub async fn entry(person: Person, Path(id): Path<String>) -> Response {
    preview(&person, EntityKind::Entry, &id).await
}

/// The placeholders a preview URL may hold, each with what it becomes.
const PLACEHOLDERS: [(&str, &str); 5] = [
    ("{slug}", "the page's or entry's slug"),
    ("{collection}", "an entry's collection (empty for a page)"),
    ("{kind}", "page or entry"),
    ("{id}", "the page's or entry's id"),
    (
        "{token}",
        "the preview's secret, for an hour: the front end passes it to the delivery API as previewToken to read the \
         drafts",
    ),
];

#[derive(Template)]
#[template(path = "site.html")]
struct SitePage {
    head: Head,
    frame: Frame,
    site: Site,
    /// What the preview URL field holds.
    preview_url: String,
    placeholders: &'static [(&'static str, &'static str)],
    errors: Errors,
    saved: bool,
}

impl SitePage {
    async fn new(person: &Person, typed: Option<String>, errors: Errors, saved: bool) -> Result<SitePage, WebError> {
        let site = person.content.site().await?;
        Ok(SitePage {
            head: Head::new(),
            frame: Frame::new(person, "/site"),
            preview_url: typed.unwrap_or_else(|| site.preview_url.clone().unwrap_or_default()),
            site,
            placeholders: &PLACEHOLDERS,
            errors,
            saved,
        })
    }
}

/// Whether the screen was just saved.
#[derive(Deserialize)]
pub struct SavedQuery {
    #[serde(default)]
    saved: Option<String>,
}

/// `GET /site`: the site's settings (administrators).
pub async fn show(person: Person, Query(q): Query<SavedQuery>) -> Result<Html<String>, WebError> {
    person.require(Permission::Administer)?;
    Ok(Html(SitePage::new(&person, None, Errors::new(), q.saved.is_some()).await?.render()?))
}

/// The site form.
#[derive(Deserialize)]
pub struct SiteForm {
    #[serde(default)]
    preview_url: String,
}

/// `POST /site`: sets where the site's own front end shows drafts (empty:
/// the delivery API shows them).
pub async fn update(person: Person, Form(f): Form<SiteForm>) -> Response {
    match person.content.set_preview_url(Some(&f.preview_url)).await {
        Ok(_) => Redirect::to("/site?saved=1").into_response(),
        Err(e) if matches!(e.failure, Failure::Forbidden | Failure::NotFound | Failure::Internal) => {
            WebError::from(e).into_response()
        }
        Err(e) => {
            let status = refusal(&e).0;
            let mut errors = form::errors_of(&e, "");
            // The form's one field: whatever the refusal names, it is said there.
            if !errors.contains_key("previewUrl") {
                errors = Errors::from([("previewUrl".to_string(), refusal(&e).1)]);
            }
            answered(status, SitePage::new(&person, Some(f.preview_url), errors, false).await)
        }
    }
}
