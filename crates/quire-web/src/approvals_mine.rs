//! My approvals: the signed-in person's own approval preferences on the
//! site, linked from the header beside their name. A select per category
//! (where tools reach, then what they work on) and, folded, one per tool,
//! each "as the wider choice" until set. Destructive calls and outgoing
//! sends always ask (the floor), so they are named, never offered.
//! `quire_app::preferences` checks and keeps them.

use crate::Person;
use crate::error::WebError;
use crate::form::Form;
use crate::frame::Frame;
use crate::screen::{Head, answered};
use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::preferences;
use quire_core::model::{ApprovalMode, ApprovalPreferences};
use quire_server::AppState;
use serde::Deserialize;
use std::collections::BTreeMap;

/// One select of the form.
struct Choice {
    /// The form field (`default`, `c.page`, `t.updatePage`).
    field: String,
    /// Its id (`f-c-page`).
    id: String,
    /// What it is about, in words.
    label: String,
    /// A hint under the label.
    hint: String,
    /// The chosen mode ("" for as the wider choice).
    chosen: &'static str,
}

/// A mode as a select offers it.
struct Mode {
    value: &'static str,
    words: &'static str,
}

const MODES: [Mode; 3] = [
    Mode { value: "always", words: "Always ask me" },
    Mode { value: "destructive", words: "Ask only for destructive calls" },
    Mode { value: "never", words: "No need to ask for reads and reversible changes" },
];

#[derive(Template)]
#[template(path = "my_approvals.html")]
struct MyApprovals {
    head: Head,
    frame: Frame,
    modes: &'static [Mode],
    default: Choice,
    reaches: Vec<Choice>,
    subjects: Vec<Choice>,
    tools: Vec<Choice>,
    /// How many tools have a choice of their own.
    tools_set: usize,
    /// What always asks, whatever is chosen.
    floor: Vec<&'static str>,
    saved: bool,
    error: Option<String>,
    /// When they were last changed, and by whom, in words.
    changed: Option<String>,
}

/// A category in words.
fn category_words(key: &str) -> (&'static str, &'static str) {
    match key {
        "internal" => ("Everything on this site", "Pages, posts, images, menus, notes, releases and the archive."),
        "external" => {
            ("Everything that reaches the internet", "Web search, fetched pages, stock photos, HTTP requests.")
        }
        "page" => ("Pages", "Reading, creating and changing pages."),
        "section" => ("Sections", "A page's sections."),
        "sectionTemplate" => ("Section templates", "Reading the templates sections are made from."),
        "image" => ("Images", "The media library."),
        "post" => ("Posts", "Reading, creating and changing posts."),
        "navItem" => ("Menus", "Menu items."),
        "entry" => ("Collection entries", "Entries of collections other than posts."),
        "release" => ("Releases", "Putting documents together to publish at once."),
        "archive" => ("The archive", "Reading what was archived."),
        "note" => ("Notes", "Reading and writing notes."),
        "folder" => ("Note folders", "Listing, making and moving folders of notes."),
        "webResult" => ("Web search", "Searching the web."),
        "webPage" => ("Fetched web pages", "Reading a page from the web."),
        "stockPhoto" => ("Stock photos", "Browsing and importing stock photos."),
        "httpResponse" => ("HTTP requests", "GET requests to outside servers."),
        _ => ("Other tools", ""),
    }
}

fn chosen(mode: Option<&ApprovalMode>) -> &'static str {
    mode.map_or("", |m| m.as_str())
}

impl MyApprovals {
    async fn new(state: &AppState, person: &Person, saved: bool, error: Option<String>) -> Result<Self, WebError> {
        let stored = preferences::read(state.store(), person.actor()).await?;
        let prefs: ApprovalPreferences = stored.preferences;
        let choices = preferences::choices(state.registry());
        let choice = |kind: &str, key: &str, mode: Option<&ApprovalMode>| {
            let (label, hint) = category_words(key);
            Choice {
                field: format!("{kind}.{key}"),
                id: format!("f-{kind}-{key}"),
                label: label.to_string(),
                hint: hint.to_string(),
                chosen: chosen(mode),
            }
        };
        let (reaches, subjects): (Vec<&str>, Vec<&str>) =
            choices.offered.iter().copied().partition(|c| *c == "internal" || *c == "external");
        let reaches = reaches.iter().map(|c| choice("c", c, prefs.categories.get(*c))).collect();
        let subjects = subjects.iter().map(|c| choice("c", c, prefs.categories.get(*c))).collect();
        let tools: Vec<Choice> = choices
            .above_floor
            .iter()
            .map(|&(name, subject, reads)| Choice {
                field: format!("t.{name}"),
                id: format!("f-t-{name}"),
                label: name.to_string(),
                hint: format!("{} · {}", category_words(subject).0, if reads { "reads" } else { "changes" }),
                chosen: chosen(prefs.tools.get(name)),
            })
            .collect();
        let changed = match (stored.updated_at, stored.updated_by.as_deref()) {
            (Some(at), Some(by)) => {
                let through = if by.starts_with("token:") { " with one of your API tokens" } else { "" };
                Some(format!("Last changed {}{through}.", at.format("%Y-%m-%d %H:%M UTC")))
            }
            _ => None,
        };
        Ok(MyApprovals {
            head: Head::new(),
            frame: Frame::new(person, "/me/approvals"),
            modes: &MODES,
            default: Choice {
                field: "default".into(),
                id: "f-default".into(),
                label: "Everything no other choice names".into(),
                hint: String::new(),
                chosen: prefs.default.as_str(),
            },
            tools_set: tools.iter().filter(|t| !t.chosen.is_empty()).count(),
            reaches,
            subjects,
            tools,
            floor: choices.floor,
            saved,
            error,
            changed,
        })
    }
}

/// Whether the screen was just saved.
#[derive(Deserialize)]
pub struct SavedQuery {
    #[serde(default)]
    saved: Option<String>,
}

/// `GET /me/approvals`: the person's own approval preferences.
pub async fn show(
    State(state): State<AppState>,
    person: Person,
    Query(q): Query<SavedQuery>,
) -> Result<Html<String>, WebError> {
    Ok(Html(MyApprovals::new(&state, &person, q.saved.is_some(), None).await?.render()?))
}

/// `POST /me/approvals`: replaces them with the form's choices (an empty
/// select: as the wider choice).
pub async fn update(
    State(state): State<AppState>,
    person: Person,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let mut default = None;
    let mut categories = BTreeMap::new();
    let mut tools = BTreeMap::new();
    for (key, value) in pairs {
        if value.is_empty() {
            continue;
        }
        if key == "default" {
            default = Some(value);
        } else if let Some(c) = key.strip_prefix("c.") {
            categories.insert(c.to_string(), value);
        } else if let Some(t) = key.strip_prefix("t.") {
            tools.insert(t.to_string(), value);
        }
    }
    let parsed = preferences::parse(state.registry(), default.as_deref(), &categories, &tools);
    let saved = match parsed {
        Ok(prefs) => preferences::set(state.store(), person.actor(), &prefs).await,
        Err(e) => Err(e),
    };
    match saved {
        Ok(_) => Redirect::to("/me/approvals?saved=1").into_response(),
        Err(e) if e.failure == quire_app::Failure::Invalid => answered(
            StatusCode::UNPROCESSABLE_ENTITY,
            MyApprovals::new(&state, &person, false, Some(e.message.clone())).await,
        ),
        Err(e) => WebError::from(e).into_response(),
    }
}
