//! The Sites screen, for the instance's administrator alone
//! (`quire_app::sites` decides who that is; the navigation offers the
//! screen to them only): every site of the instance, and the forms that
//! make one (empty or with the demo content), rename, archive and restore
//! it.

use crate::Person;
use crate::error::{WebError, refusal, urlencode};
use crate::form::{self, Errors, Form};
use crate::frame::Frame;
use crate::removal::Confirm;
use crate::screen::DoneQuery;
use crate::screen::{Head, answered};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::sites::{self, NewSite, Start};
use quire_app::{AppError, Failure};
use quire_core::model::Site;
use quire_server::AppState;
use serde::Deserialize;

#[derive(Template)]
#[template(path = "sites.html")]
struct SitesPage {
    head: Head,
    frame: Frame,
    sites: Vec<Site>,
    /// The site the person works in (it cannot be archived from here).
    current: String,
    done: &'static str,
    /// Why a row's action was refused.
    error: Option<String>,
    /// Why the new site's form was refused, by input ("" for the form).
    errors: Errors,
    /// What that form held: slug, name, start.
    typed: (String, String, String),
}

async fn sites_page(
    state: &AppState,
    person: &Person,
    done: Option<&str>,
    error: Option<String>,
    errors: Errors,
    typed: (String, String, String),
) -> Result<SitesPage, WebError> {
    let sites = sites::list(state.registry().services(), person.actor()).await?;
    let done = match done {
        Some("created") => "Site made. People reach it once they are given it (quire user create --site).",
        Some("renamed") => "Renamed.",
        Some("archived") => "Archived: its tokens stop and nothing of it is delivered; everything it holds is kept.",
        Some("restored") => "Restored, with its tokens and content.",
        _ => "",
    };
    Ok(SitesPage {
        head: Head::new(),
        frame: Frame::new(person, "/sites"),
        sites,
        current: person.actor().scope.site_id.clone(),
        done,
        error,
        errors,
        typed,
    })
}

/// `GET /sites`: the instance's sites.
pub async fn list(
    State(state): State<AppState>,
    person: Person,
    Query(q): Query<DoneQuery>,
) -> Result<Html<String>, WebError> {
    Ok(Html(sites_page(&state, &person, q.done.as_deref(), None, Errors::new(), Default::default()).await?.render()?))
}

/// The new site's form.
#[derive(Deserialize)]
pub struct NewSiteForm {
    slug: String,
    name: String,
    /// `empty`, `demo`, or `copy:<site slug>`.
    #[serde(default)]
    start: String,
}

/// `POST /sites`: makes a site.
pub async fn create(State(state): State<AppState>, person: Person, Form(f): Form<NewSiteForm>) -> Response {
    let start = match f.start.as_str() {
        "demo" => Start::Demo,
        other => match other.strip_prefix("copy:") {
            Some(from) => Start::Copy(from.to_string()),
            None => Start::Empty,
        },
    };
    let new =
        NewSite { slug: f.slug.trim().to_string(), name: f.name.trim().to_string(), environments: Vec::new(), start };
    match sites::create(state.registry().services(), person.actor(), new).await {
        Ok(_) => Redirect::to("/sites?done=created").into_response(),
        Err(e) if matches!(e.failure, Failure::Forbidden | Failure::Internal) => WebError::from(e).into_response(),
        Err(e) => {
            let mut errors = Errors::new();
            for (field, message) in form::errors_of(&e, "") {
                let field = if ["slug", "name"].contains(&field.as_str()) { field } else { String::new() };
                errors.entry(field).or_insert(message);
            }
            if errors.is_empty() {
                errors.insert(String::new(), refusal(&e).1);
            }
            let status = refusal(&e).0;
            answered(status, sites_page(&state, &person, None, None, errors, (f.slug, f.name, f.start)).await)
        }
    }
}

/// The list again with why a row's action was refused, or the error page
/// for a refusal to the person.
async fn row_refused(state: &AppState, person: &Person, e: AppError) -> Response {
    if matches!(e.failure, Failure::Forbidden | Failure::Internal) {
        return WebError::from(e).into_response();
    }
    let (status, message) = refusal(&e);
    answered(status, sites_page(state, person, None, Some(message), Errors::new(), Default::default()).await)
}

/// `POST /sites/{id}`: renames a site.
pub async fn rename(
    State(state): State<AppState>,
    person: Person,
    Path(id): Path<String>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let name = form::value(&pairs, "name").trim();
    match sites::rename(state.registry().services(), person.actor(), &id, name).await {
        Ok(_) => Redirect::to("/sites?done=renamed").into_response(),
        Err(e) => row_refused(&state, &person, e).await,
    }
}

/// The question archiving site `id` asks.
async fn archive_screen(state: &AppState, person: &Person, id: &str) -> Result<Confirm, WebError> {
    let all = sites::list(state.registry().services(), person.actor()).await?;
    let site =
        all.into_iter().find(|s| s.id == id).ok_or_else(|| WebError::NotFound("there is no such site".into()))?;
    Ok(Confirm::about(
        person,
        "/sites",
        format!("Archive the site {}?", site.name),
        format!("/sites/{}/archive", urlencode(id)),
        "Archive the site".into(),
        "/sites".into(),
        "Its tokens stop and nothing of it is delivered; everything it holds is kept, and Restore brings it back.",
    ))
}

/// `GET /sites/{id}/archive`: archiving a site, to confirm.
pub async fn confirm_archive(State(state): State<AppState>, person: Person, Path(id): Path<String>) -> Response {
    answered(StatusCode::OK, archive_screen(&state, &person, &id).await)
}

/// `POST /sites/{id}/archive`.
pub async fn archive(State(state): State<AppState>, person: Person, Path(id): Path<String>) -> Response {
    match sites::archive(state.registry().services(), person.actor(), &id).await {
        Ok(_) => Redirect::to("/sites?done=archived").into_response(),
        Err(e) if matches!(e.failure, Failure::Forbidden | Failure::NotFound) => WebError::from(e).into_response(),
        Err(e) => {
            let (status, message) = refusal(&e);
            let screen = archive_screen(&state, &person, &id).await.map(|mut s| {
                s.error = Some(message);
                s
            });
            answered(status, screen)
        }
    }
}

/// `POST /sites/{id}/restore`.
pub async fn restore(State(state): State<AppState>, person: Person, Path(id): Path<String>) -> Response {
    match sites::restore(state.registry().services(), person.actor(), &id).await {
        Ok(_) => Redirect::to("/sites?done=restored").into_response(),
        Err(e) => row_refused(&state, &person, e).await,
    }
}
