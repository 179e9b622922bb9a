//! The People screen, for the site's administrators: who may sign in to
//! the site, in which group and environments, and when each last signed
//! in; invite someone (their one-time sign-in link shown to pass on),
//! change a person's group and environments, disable and enable them, take
//! the site from someone who works on others, and send an invitation
//! again. `quire_app::users` decides what may be done to whom.

use crate::Person;
use crate::error::{WebError, refusal, urlencode};
use crate::form::{self, Errors, Form};
use crate::frame::Frame;
use crate::removal::Confirm;
use crate::screen::DoneQuery;
use crate::screen::{Head, answered};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::users::{self, Change, Invitation, UserInfo};
use quire_app::{AppError, Failure};
use quire_core::access::Group;
use quire_server::AppState;

/// A person as a row of the screen shows them.
struct Row {
    user: UserInfo,
    /// The site's environments they may use here.
    environments: Vec<String>,
    /// The other sites they work on (their group and account are then the
    /// instance administrator's to change).
    elsewhere: Vec<String>,
    /// Whether it is the person looking.
    me: bool,
}

impl Row {
    fn may_use(&self, env: &str) -> bool {
        self.environments.iter().any(|e| e == env)
    }
}

#[derive(Template)]
#[template(path = "users.html")]
struct PeoplePage {
    head: Head,
    frame: Frame,
    rows: Vec<Row>,
    groups: [Group; 4],
    /// The environments the person looking may grant.
    environments: Vec<String>,
    done: &'static str,
    /// A sign-in link just made: (for whom, the link).
    link: Option<(String, String)>,
    /// Why a row's action was refused.
    error: Option<String>,
    /// Why the invitation was refused, by input ("" for the form).
    errors: Errors,
    /// What the invitation's form held: email, name, group.
    typed: (String, String, String),
}

async fn people_page(
    state: &AppState,
    person: &Person,
    done: Option<&str>,
    link: Option<(String, String)>,
    error: Option<String>,
    errors: Errors,
    typed: (String, String, String),
) -> Result<PeoplePage, WebError> {
    let site = person.actor().scope.site_id.clone();
    let rows = users::list(state.store(), person.actor())
        .await?
        .into_iter()
        .map(|user| Row {
            environments: user
                .sites
                .iter()
                .find(|s| s.site_id == site)
                .map(|s| s.environments.clone())
                .unwrap_or_default(),
            elsewhere: user.sites.iter().filter(|s| s.site_id != site).map(|s| s.name.clone()).collect(),
            me: user.id == person.session.user.id,
            user,
        })
        .collect();
    let environments = person
        .session
        .user
        .sites
        .iter()
        .find(|s| s.site_id == site)
        .map(|s| s.environments.clone())
        .unwrap_or_default();
    let done = match done {
        Some("changed") => "Saved.",
        Some("disabled") => "Disabled: their sessions have ended and the tokens they made are revoked.",
        Some("enabled") => "Enabled: they can sign in again.",
        Some("removed") => "They no longer work on this site; their account and their other sites stay.",
        Some("added") => "They had an account already: they now work on this site too, and sign in as before.",
        _ => "",
    };
    Ok(PeoplePage {
        head: Head::new(),
        frame: Frame::new(person, "/users"),
        rows,
        groups: Group::ALL,
        environments,
        done,
        link,
        error,
        errors,
        typed,
    })
}

/// `GET /users`: the site's people (admins).
pub async fn list(
    State(state): State<AppState>,
    person: Person,
    Query(q): Query<DoneQuery>,
) -> Result<Html<String>, WebError> {
    let page = people_page(&state, &person, q.done.as_deref(), None, None, Errors::new(), Default::default()).await?;
    Ok(Html(page.render()?))
}

/// The environments ticked on a form: `None` when every one the person
/// looking may grant is ticked (every environment, those made later too).
fn ticked(person: &Person, pairs: &[(String, String)]) -> Option<Vec<String>> {
    let ticked = form::values(pairs, "env");
    let site = &person.actor().scope.site_id;
    let mine = person.session.user.sites.iter().find(|s| &s.site_id == site).map(|s| s.environments.clone());
    match mine {
        Some(mine) if mine.iter().all(|e| ticked.contains(e)) => None,
        _ => Some(ticked),
    }
}

fn group_of(pairs: &[(String, String)]) -> Result<Group, AppError> {
    let group = form::value(pairs, "group");
    Group::parse(group).map_err(|m| AppError::invalid("group", format!("group: {m}")))
}

/// `POST /users`: invites someone, and shows their sign-in link once.
pub async fn invite(
    State(state): State<AppState>,
    person: Person,
    headers: HeaderMap,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let email = form::value(&pairs, "email").trim().to_string();
    let name = form::value(&pairs, "name").to_string();
    let result = async {
        let invitation = Invitation {
            email: email.clone(),
            name: form::optional(&name),
            group: group_of(&pairs)?,
            environments: ticked(&person, &pairs),
        };
        users::invite(state.store(), person.actor(), invitation).await
    }
    .await;
    match result {
        Ok(made) => match made.link {
            Some(secret) => {
                let link = format!("{}/sign-in/link/{secret}", state.base_url(&headers));
                let page = people_page(
                    &state,
                    &person,
                    None,
                    Some((made.user.email, link)),
                    None,
                    Errors::new(),
                    Default::default(),
                )
                .await;
                answered(StatusCode::OK, page)
            }
            None => Redirect::to("/users?done=added").into_response(),
        },
        Err(e) if matches!(e.failure, Failure::Internal) => WebError::from(e).into_response(),
        Err(e) => {
            let mut errors = Errors::new();
            for (field, message) in form::errors_of(&e, "") {
                let field =
                    if ["email", "group", "displayName"].contains(&field.as_str()) { field } else { String::new() };
                errors.entry(field).or_insert(message);
            }
            if errors.is_empty() {
                errors.insert(String::new(), refusal(&e).1);
            }
            let typed = (email, name, form::value(&pairs, "group").to_string());
            answered(refusal(&e).0, people_page(&state, &person, None, None, None, errors, typed).await)
        }
    }
}

/// The list again with why a row's action was refused.
async fn row_refused(state: &AppState, person: &Person, e: AppError) -> Response {
    if matches!(e.failure, Failure::Internal) {
        return WebError::from(e).into_response();
    }
    let (status, message) = refusal(&e);
    answered(status, people_page(state, person, None, None, Some(message), Errors::new(), Default::default()).await)
}

/// `POST /users/{id}`: changes a person's group and environments here.
pub async fn update(
    State(state): State<AppState>,
    person: Person,
    Path(id): Path<String>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let result = async {
        let change =
            Change { group: Some(group_of(&pairs)?), environments: Some(ticked(&person, &pairs)), disabled: None };
        users::change(state.store(), person.actor(), &id, change).await
    }
    .await;
    match result {
        Ok(_) => Redirect::to("/users?done=changed").into_response(),
        Err(e) => row_refused(&state, &person, e).await,
    }
}

/// The question disabling a person asks.
async fn disable_screen(state: &AppState, person: &Person, id: &str) -> Result<Confirm, WebError> {
    let user = users::person(state.store(), person.actor(), id).await?;
    Ok(Confirm::about(
        person,
        "/users",
        format!("Disable {} ({})?", user.display_name, user.email),
        format!("/users/{}/disable", urlencode(id)),
        "Disable".into(),
        "/users".into(),
        "Their sessions end at once and the tokens they made are revoked; everything they did stays. Enable \
         brings the account back (their tokens stay revoked).",
    ))
}

/// `GET /users/{id}/disable`: disabling a person, to confirm.
pub async fn confirm_disable(State(state): State<AppState>, person: Person, Path(id): Path<String>) -> Response {
    answered(StatusCode::OK, disable_screen(&state, &person, &id).await)
}

/// `POST /users/{id}/disable`.
pub async fn disable(State(state): State<AppState>, person: Person, Path(id): Path<String>) -> Response {
    let change = Change { disabled: Some(true), ..Change::default() };
    match users::change(state.store(), person.actor(), &id, change).await {
        Ok(_) => {
            state.forget_tokens();
            Redirect::to("/users?done=disabled").into_response()
        }
        Err(e) if matches!(e.failure, Failure::NotFound) => WebError::from(e).into_response(),
        Err(e) => {
            let (status, message) = refusal(&e);
            let screen = disable_screen(&state, &person, &id).await.map(|mut s| {
                s.error = Some(message);
                s
            });
            answered(status, screen)
        }
    }
}

/// `POST /users/{id}/enable`.
pub async fn enable(State(state): State<AppState>, person: Person, Path(id): Path<String>) -> Response {
    let change = Change { disabled: Some(false), ..Change::default() };
    match users::change(state.store(), person.actor(), &id, change).await {
        Ok(_) => Redirect::to("/users?done=enabled").into_response(),
        Err(e) => row_refused(&state, &person, e).await,
    }
}

/// The question taking the site from a person asks.
async fn remove_screen(state: &AppState, person: &Person, id: &str) -> Result<Confirm, WebError> {
    let user = users::person(state.store(), person.actor(), id).await?;
    Ok(Confirm::about(
        person,
        "/users",
        format!("Take this site from {} ({})?", user.display_name, user.email),
        format!("/users/{}/remove", urlencode(id)),
        "Take the site away".into(),
        "/users".into(),
        "Their sessions on this site end and the tokens they made for it are revoked; their account, their other \
         sites and everything they did stay. Inviting them again gives the site back.",
    ))
}

/// `GET /users/{id}/remove`: taking the site from a person, to confirm.
pub async fn confirm_remove(State(state): State<AppState>, person: Person, Path(id): Path<String>) -> Response {
    answered(StatusCode::OK, remove_screen(&state, &person, &id).await)
}

/// `POST /users/{id}/remove`.
pub async fn remove(State(state): State<AppState>, person: Person, Path(id): Path<String>) -> Response {
    match users::remove(state.store(), person.actor(), &id).await {
        Ok(_) => {
            state.forget_tokens();
            Redirect::to("/users?done=removed").into_response()
        }
        Err(e) if matches!(e.failure, Failure::NotFound) => WebError::from(e).into_response(),
        Err(e) => {
            let (status, message) = refusal(&e);
            let screen = remove_screen(&state, &person, &id).await.map(|mut s| {
                s.error = Some(message);
                s
            });
            answered(status, screen)
        }
    }
}

/// `POST /users/{id}/link`: the invitation again, with a new sign-in link
/// shown once.
pub async fn link(
    State(state): State<AppState>,
    person: Person,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let result = async {
        let user = users::person(state.store(), person.actor(), &id).await?;
        let secret = users::sign_in_link(state.store(), person.actor(), &id).await?;
        Ok::<_, AppError>((user.email, format!("{}/sign-in/link/{secret}", state.base_url(&headers))))
    }
    .await;
    match result {
        Ok(link) => answered(
            StatusCode::OK,
            people_page(&state, &person, None, Some(link), None, Errors::new(), Default::default()).await,
        ),
        Err(e) => row_refused(&state, &person, e).await,
    }
}
