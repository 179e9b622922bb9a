//! The notes vault: folders and a markdown editor. Writes go through the
//! vault tools of the registry (`writeNote`, `createFolder`, `archiveItem`)
//! as the person, so they are checked, logged and undoable exactly as when
//! the agent or an MCP client makes them.

use crate::Person;
use crate::error::WebError;
use crate::form::Form;
use crate::frame::Frame;
use crate::pages::{Head, refused, render};
use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::Failure;
use quire_core::access::Permission;
use quire_core::model::EntityKind;
use quire_server::AppState;
use serde::Deserialize;
use serde_json::{Value, json};

/// A listed file or folder.
pub struct Item {
    pub path: String,
    pub name: String,
    pub folder: bool,
    pub size: Option<u64>,
}

#[derive(Template)]
#[template(path = "notes.html")]
struct FolderPage {
    head: Head,
    frame: Frame,
    /// The folder on screen ("" for the vault's root).
    path: String,
    /// Its ancestors: (path, name).
    trail: Vec<(String, String)>,
    items: Vec<Item>,
    error: Option<String>,
}

#[derive(Deserialize)]
pub struct PathQuery {
    #[serde(default)]
    path: String,
}

/// Runs a vault tool as the person: its answer, or its error message.
async fn tool(state: &AppState, person: &Person, name: &str, args: Value) -> Result<Value, String> {
    let ctx = person.actor().call_context();
    let answer = state.registry().call(&ctx, name, args).await;
    if answer.get("success").and_then(Value::as_bool) == Some(false) {
        return Err(answer.get("error").and_then(Value::as_str).unwrap_or("the vault refused").to_string());
    }
    Ok(answer)
}

fn trail(path: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut at = String::new();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        if !at.is_empty() {
            at.push('/');
        }
        at.push_str(part);
        out.push((at.clone(), part.to_string()));
    }
    out
}

async fn folder_page(
    state: &AppState,
    person: &Person,
    path: String,
    error: Option<String>,
) -> Result<FolderPage, WebError> {
    let args = if path.is_empty() { json!({}) } else { json!({ "path": path }) };
    let listed =
        tool(state, person, "listFolder", args).await.map_err(|e| WebError::Status(StatusCode::NOT_FOUND, e))?;
    let items = listed
        .get("items")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|i| {
                    let path = i.get("path")?.as_str()?.to_string();
                    Some(Item {
                        name: path.rsplit('/').next().unwrap_or(&path).to_string(),
                        folder: i.get("kind").and_then(Value::as_str) == Some("folder"),
                        size: i.get("size").and_then(Value::as_u64),
                        path,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(FolderPage { head: Head::new(), frame: Frame::new(person, "/notes"), trail: trail(&path), path, items, error })
}

/// `GET /notes?path=FOLDER`: a folder of the vault.
pub async fn folder(
    State(state): State<AppState>,
    person: Person,
    Query(q): Query<PathQuery>,
) -> Result<Html<String>, WebError> {
    Ok(Html(folder_page(&state, &person, q.path, None).await?.render()?))
}

#[derive(Deserialize)]
pub struct NewForm {
    #[serde(default)]
    folder: String,
    name: String,
    kind: String,
}

/// Joins a folder and a name typed in a form.
fn join(folder: &str, name: &str) -> String {
    let name = name.trim().trim_matches('/');
    if folder.is_empty() { name.to_string() } else { format!("{folder}/{name}") }
}

/// `POST /notes`: a new note (opened for editing) or folder.
pub async fn create(State(state): State<AppState>, person: Person, Form(f): Form<NewForm>) -> Response {
    if let Err(e) = person.require(Permission::Write(EntityKind::Note)) {
        return e.into_response();
    }
    let mut path = join(&f.folder, &f.name);
    let made = if f.kind == "folder" {
        tool(&state, &person, "createFolder", json!({ "path": path })).await
    } else {
        if !path.contains('.') {
            path.push_str(".md");
        }
        tool(&state, &person, "writeNote", json!({ "path": path, "content": "" })).await
    };
    match made {
        Ok(answer) => {
            let made_path = answer.pointer("/item/path").and_then(Value::as_str).unwrap_or(&path).to_string();
            let to = if f.kind == "folder" { "/notes?path=" } else { "/notes/edit?path=" };
            Redirect::to(&format!("{to}{}", crate::error::urlencode(&made_path))).into_response()
        }
        Err(message) => refused(folder_page(&state, &person, f.folder, Some(message)).await),
    }
}

#[derive(Template)]
#[template(path = "note.html")]
struct NotePage {
    head: Head,
    frame: Frame,
    path: String,
    folder: String,
    content: String,
    /// The fingerprint of the stored text the form was opened on.
    version: String,
    error: Option<String>,
    saved: bool,
}

#[derive(Deserialize)]
pub struct EditQuery {
    path: String,
    saved: Option<String>,
}

fn folder_of(path: &str) -> String {
    path.rsplit_once('/').map(|(f, _)| f.to_string()).unwrap_or_default()
}

/// `GET /notes/edit?path=NOTE`: the note in an editor.
pub async fn edit(
    State(state): State<AppState>,
    person: Person,
    Query(q): Query<EditQuery>,
) -> Result<Html<String>, WebError> {
    let (path, content) = note_text(&state, &person, &q.path).await?;
    let page = NotePage {
        head: Head::new(),
        frame: Frame::new(&person, "/notes"),
        folder: folder_of(&path),
        version: fingerprint(&content),
        path,
        content,
        error: None,
        saved: q.saved.is_some(),
    };
    Ok(Html(page.render()?))
}

#[derive(Deserialize)]
pub struct NoteForm {
    content: String,
    /// The fingerprint of the text the editor was opened on.
    #[serde(rename = "_version", default)]
    version: String,
}

/// A fingerprint of a note's text: a save is refused when the note no
/// longer has the text the editor was opened on.
fn fingerprint(text: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    text.hash(&mut h);
    format!("{:016x}", h.finish())
}

/// The whole text of a note, as the editor shows it: (its path, its text).
/// A note that is not there is not found; a vault that cannot be opened
/// is unavailable.
async fn note_text(state: &AppState, person: &Person, path: &str) -> Result<(String, String), WebError> {
    match quire_app::notes::note_text(state.registry(), person.actor(), path).await {
        Ok(note) => Ok((note.path, note.text)),
        Err(e) if matches!(e.failure, Failure::NotFound | Failure::Forbidden) => Err(e.into()),
        Err(e) => Err(WebError::Status(StatusCode::SERVICE_UNAVAILABLE, e.message)),
    }
}

/// `POST /notes/edit?path=NOTE`: saves the note (the whole text).
pub async fn save(
    State(state): State<AppState>,
    person: Person,
    Query(q): Query<EditQuery>,
    Form(f): Form<NoteForm>,
) -> Response {
    if let Err(e) = person.require(Permission::Write(EntityKind::Note)) {
        return e.into_response();
    }
    // Browsers send CRLF line breaks; the vault keeps the note's own.
    let content = f.content.replace("\r\n", "\n");
    let stored = match note_text(&state, &person, &q.path).await {
        Ok((_, text)) => text,
        Err(e) => return e.into_response(),
    };
    let written = if fingerprint(&stored) != f.version {
        Err("it changed since you opened it (someone, or the agent, saved it meanwhile): reload to see their \
             changes, or save again to replace them with your text"
            .to_string())
    } else {
        let args = json!({ "path": q.path, "content": content, "overwrite": true });
        tool(&state, &person, "writeNote", args).await
    };
    match written {
        Ok(_) => {
            Redirect::to(&format!("/notes/edit?path={}&saved=1", crate::error::urlencode(&q.path))).into_response()
        }
        Err(message) => {
            let page = NotePage {
                head: Head::new(),
                frame: Frame::new(&person, "/notes"),
                folder: folder_of(&q.path),
                path: q.path,
                content,
                version: fingerprint(&stored),
                error: Some(message),
                saved: false,
            };
            render(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
    }
}

/// `POST /notes/archive?path=ITEM`: moves a note or folder into the
/// vault's archive (undoable from history).
pub async fn archive(State(state): State<AppState>, person: Person, Query(q): Query<PathQuery>) -> Response {
    if let Err(e) = person.require(Permission::Delete(EntityKind::Note)) {
        return e.into_response();
    }
    match tool(&state, &person, "archiveItem", json!({ "path": q.path })).await {
        Ok(_) => Redirect::to(&format!("/notes?path={}", crate::error::urlencode(&folder_of(&q.path)))).into_response(),
        Err(message) => WebError::Status(StatusCode::UNPROCESSABLE_ENTITY, message).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_and_split_into_a_trail() {
        assert_eq!(join("", " ideas.md "), "ideas.md");
        assert_eq!(join("work/q3", "/plan/"), "work/q3/plan");
        assert_eq!(trail("work/q3"), vec![("work".into(), "work".into()), ("work/q3".into(), "q3".into())]);
        assert_eq!(folder_of("work/q3/plan.md"), "work/q3");
        assert_eq!(folder_of("plan.md"), "");
    }
}
