//! Removing, asked first: archiving a page, section, entry, image or menu
//! item from its editor, restoring an archive, restoring a revision and revoking a token
//! each open a confirmation screen (a plain `GET`, so it works without the
//! script) that says what will happen — "Archive the page Contact and its
//! 2 sections?" — and whose form does it. Archiving goes through
//! `Content::archive`, the function and `authorize` REST's `DELETE` goes
//! through; its preview is the store's own cascade, read by the use case.
//!
//! A record no longer live (a page, section, entry, image or menu item)
//! answers its editor's URL with a screen that says it was archived, when
//! and by whom, with the way to the Archive.

use crate::Person;
use crate::error::{WebError, refusal};
use crate::frame::{Frame, Who};
use crate::names::{Records, noun};
use crate::screen::{Head, answered};
use askama::Template;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::removal::taken_along;
use quire_core::access::Permission;
use quire_core::model::{Archive, ArchivedItem, EntityKind};
use quire_server::AppState;

/// A confirmation screen: the question, what goes along, and the form
/// that does it.
#[derive(Template)]
#[template(path = "confirm.html")]
pub struct Confirm {
    head: Head,
    frame: Frame,
    /// The heading: the question asked.
    question: String,
    /// What goes along, one line each.
    along: Vec<String>,
    /// What it means, in a sentence.
    note: String,
    /// Where the form posts.
    action: String,
    /// The button's words.
    button: String,
    /// Where Cancel goes.
    back: String,
    /// Why the last try was refused.
    pub error: Option<String>,
    /// Hidden fields the form sends again (a bulk action's ids).
    fields: Vec<(String, String)>,
}

impl Confirm {
    fn new(person: &Person, section: &str, question: String, action: String, button: &str, back: String) -> Self {
        Confirm {
            head: Head::new(),
            frame: Frame::new(person, section),
            question,
            along: Vec::new(),
            note: String::new(),
            action,
            button: button.to_string(),
            back,
            error: None,
            fields: Vec::new(),
        }
    }

    /// A question on the screen under `section` (a navigation path): the
    /// form's target and button, where Cancel goes, and what it means.
    pub fn about(
        person: &Person,
        section: &str,
        question: String,
        action: String,
        button: String,
        back: String,
        note: &str,
    ) -> Self {
        let mut screen = Confirm::new(person, section, question, action, "", back);
        screen.button = button;
        screen.note = note.to_string();
        screen
    }

    /// Lists what the question is about, one line each.
    pub fn along_with(&mut self, lines: impl IntoIterator<Item = String>) {
        self.along.extend(lines);
    }

    /// A question about several records: what goes along, the form's
    /// target and button, where Cancel goes and the fields sent again.
    pub fn asking(
        person: &Person,
        question: String,
        along: Vec<String>,
        action: String,
        button: String,
        back: String,
        fields: Vec<(String, String)>,
    ) -> Self {
        let mut screen = Confirm::new(person, "/pages", question, action, "", back);
        screen.button = button;
        screen.along = along;
        screen.fields = fields;
        screen.note = "Nothing is deleted: the Archive can bring them back.".into();
        screen
    }
}

/// A kind of record counted, in words: "2 sections", "1 child page".
fn counted(kind: EntityKind, n: usize, root: EntityKind) -> String {
    let word = match (kind, root) {
        (EntityKind::Page, EntityKind::Page) => "child page",
        (EntityKind::Entry, _) => {
            return format!("{n} {}", if n == 1 { "entry" } else { "entries" });
        }
        (EntityKind::NavItem, EntityKind::NavItem) => "item under it",
        _ => noun(kind),
    };
    let plural = if n == 1 { word.to_string() } else { plural(word) };
    format!("{n} {plural}")
}

fn plural(word: &str) -> String {
    match word.split_once(' ') {
        Some((first, rest)) => format!("{first}s {rest}"),
        None => format!("{word}s"),
    }
}

/// "Archive the page Contact and its 2 sections?"
pub fn archive_question(items: &[ArchivedItem]) -> String {
    let Some(root) = items.first() else { return "Archive it?".into() };
    let along: Vec<String> = taken_along(items).into_iter().map(|(kind, n)| counted(kind, n, root.entity)).collect();
    let mut q = format!("Archive the {} {}", noun(root.entity), root.label);
    if !along.is_empty() {
        q.push_str(" and its ");
        q.push_str(&join(&along));
    }
    q.push('?');
    q
}

/// "a", "a and b", "a, b and c".
fn join(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Where a record of `kind` is archived from, and where its screen goes
/// back to: the editor, or for a section its page.
fn editor_of(kind: EntityKind, id: &str) -> Result<(&'static str, String), WebError> {
    let part = crate::error::urlencode(id);
    Ok(match kind {
        EntityKind::Page => ("/pages", format!("/pages/{part}")),
        EntityKind::Section => ("/pages", format!("/sections/{part}")),
        EntityKind::Entry => ("/collections", format!("/entries/{part}")),
        EntityKind::Image => ("/media", format!("/media/{part}")),
        EntityKind::NavItem => ("/navigation", format!("/nav-items/{part}")),
        other => {
            return Err(WebError::NotFound(format!("a {} is not archived from here", noun(other))));
        }
    })
}

/// The records of archive previews as a person knows them: a page by its
/// name (an archive records its slug), a section as its template on its
/// page; one read for them all.
pub async fn named(person: &Person, previews: Vec<Vec<ArchivedItem>>) -> Vec<Vec<ArchivedItem>> {
    let records = Records::of(person, previews.iter().flatten().map(|i| (i.entity, i.id.as_str()))).await;
    previews
        .into_iter()
        .map(|items| {
            items
                .into_iter()
                .map(|i| {
                    let n = records.named(i.entity, &i.id);
                    let label = if n.archived { i.label } else { n.label };
                    ArchivedItem { label, ..i }
                })
                .collect()
        })
        .collect()
}

/// The confirmation of archiving record `id` of `kind`.
async fn archive_screen(person: &Person, kind: EntityKind, id: &str) -> Result<Confirm, WebError> {
    let (section, editor) = editor_of(kind, id)?;
    let mut previews = named(person, person.content.archive_preview(kind, &[id.to_string()]).await?).await;
    let items = if previews.is_empty() { Vec::new() } else { previews.remove(0) };
    let mut screen =
        Confirm::new(person, section, archive_question(&items), format!("{editor}/archive"), "Archive", editor);
    screen.button = format!("Archive the {}", noun(kind));
    screen.along = items.iter().skip(1).map(|i| format!("{} “{}”", noun(i.entity), i.label)).collect();
    screen.note =
        "Nothing is deleted: it leaves the drafts and the site, and the Archive can bring it all back.".into();
    Ok(screen)
}

/// `GET /pages/{id}/archive`, `/sections/{id}/archive`, `/entries/{id}/archive`:
/// what archiving the record would take along, to confirm.
pub async fn confirm_archive(person: Person, kind: EntityKind, id: String) -> Response {
    match archive_screen(&person, kind, &id).await {
        Ok(screen) => answered(StatusCode::OK, Ok(screen)),
        Err(WebError::NotFound(_)) => archived_screen(&person, kind, &id).await,
        Err(e) => e.into_response(),
    }
}

/// `POST /pages/{id}/archive` (and sections', entries'): archives the
/// record with what goes along, then shows where it was: a page's level of
/// the tree, a section's page, an entry's collection.
pub async fn archive(person: Person, kind: EntityKind, id: String) -> Response {
    let result = async {
        person.require(Permission::Delete(kind))?;
        let back = match kind {
            EntityKind::Section => format!("/pages/{}#sections-h", person.content.section(&id).await?.page_id),
            // The lists say what was done (`bulk::BulkDone`).
            EntityKind::Entry => {
                let entry = person.content.entry(&id).await?;
                let slug = person.content.collection(&entry.collection_id).await?.slug;
                format!("/collections/{}?bulk=archived", crate::error::urlencode(&slug))
            }
            _ => match person.content.page(&id).await?.parent_id {
                Some(parent) => format!("/pages?parent={}&bulk=archived", crate::error::urlencode(&parent)),
                None => "/pages?bulk=archived".to_string(),
            },
        };
        Ok::<_, WebError>((back, person.content.archive_one(kind, id.clone()).await))
    }
    .await;
    match result {
        Ok((back, Ok(_))) => Redirect::to(&back).into_response(),
        Ok((_, Err(e))) => {
            let (status, message) = refusal(&e);
            let screen = archive_screen(&person, kind, &id).await.map(|mut s| {
                s.error = Some(message);
                s
            });
            answered(status, screen)
        }
        Err(e) => e.into_response(),
    }
}

/// The screen of a record that is no longer live: archived (when, by
/// whom, with what, and the Archive's link), or not there at all.
#[derive(Template)]
#[template(path = "archived.html")]
struct ArchivedScreen {
    head: Head,
    frame: Frame,
    noun: &'static str,
    /// The record's name, as its archive recorded it.
    label: String,
    /// The record archived with it when it went along with another.
    with_root: Option<String>,
    archive: Archive,
    by: String,
}

/// What an editor's URL answers for record `id` of `kind` that it could
/// not read: 410 with its archive when one holds it, else not found.
pub async fn archived_screen(person: &Person, kind: EntityKind, id: &str) -> Response {
    let section = editor_of(kind, id).map(|(s, _)| s).unwrap_or("/archive");
    match person.content.archive_holding(kind, id).await {
        Ok(Some(archive)) => {
            let by = Who::named(person, [archive.archived_by.as_str()]).await.name(&archive.archived_by);
            let label = name_before_archive(person, kind, id)
                .await
                .or_else(|| archive.items.iter().find(|i| i.id == id).map(|i| i.label.clone()))
                .unwrap_or_else(|| archive.label.clone());
            let with_root = if archive.entity_id == id {
                None
            } else {
                let root = name_before_archive(person, archive.entity, &archive.entity_id).await;
                Some(format!("the {} “{}”", noun(archive.entity), root.unwrap_or_else(|| archive.label.clone())))
            };
            let screen = ArchivedScreen {
                head: Head::new(),
                frame: Frame::new(person, section),
                noun: noun(kind),
                label,
                with_root,
                archive,
                by,
            };
            answered(StatusCode::GONE, Ok(screen))
        }
        Ok(None) => WebError::NotFound(format!("there is no {} {id} here", noun(kind))).into_response(),
        Err(e) => WebError::from(e).into_response(),
    }
}

/// The name or title record `id` of `kind` had when it was archived (an
/// archive records a page by its slug): its last change's record before.
async fn name_before_archive(person: &Person, kind: EntityKind, id: &str) -> Option<String> {
    let filter =
        quire_app::content::ChangeFilter { entity: Some(kind), entity_id: Some(id.to_string()), ..Default::default() };
    let last = person.content.changes(&filter, 1, None).await.ok()?.items.pop()?;
    let before = last.before.or(last.after)?;
    ["name", "title", "label", "alt", "filename"]
        .iter()
        .find_map(|k| before.get(*k).and_then(|v| v.as_str()).filter(|v| !v.trim().is_empty()).map(str::to_string))
}

/// An editor's screen, or for a record that is no longer live the screen
/// that says where it went.
pub async fn or_archived(
    person: &Person,
    kind: EntityKind,
    id: &str,
    screen: Result<Html<String>, WebError>,
) -> Response {
    match screen {
        Ok(html) => html.into_response(),
        Err(WebError::NotFound(_)) => archived_screen(person, kind, id).await,
        Err(e) => e.into_response(),
    }
}

/// `GET /archive/{id}/restore`: what restoring an archive brings back, to confirm.
pub async fn confirm_restore(person: Person, Path(id): Path<String>) -> Result<Html<String>, WebError> {
    let archive = person.content.archive_record(&id).await?;
    let label = name_before_archive(&person, archive.entity, &archive.entity_id).await;
    let what = format!("the {} {}", noun(archive.entity), label.unwrap_or_else(|| archive.label.clone()));
    let question = if archive.items.len() > 1 {
        format!("Restore {what} and what was archived with it?")
    } else {
        format!("Restore {what}?")
    };
    let mut screen = Confirm::new(
        &person,
        "/archive",
        question,
        format!("/archive/{}/restore", crate::error::urlencode(&id)),
        "Restore",
        format!("/archive#ar-{id}"),
    );
    screen.button = format!("Restore the {}", noun(archive.entity));
    screen.along = archive
        .items
        .iter()
        .filter(|i| i.id != archive.entity_id)
        .map(|i| format!("{} “{}”", noun(i.entity), i.label))
        .collect();
    screen.note = "It comes back as a draft where it was, with its history.".into();
    Ok(Html(screen.render()?))
}

/// `GET /history/{id}/restore`: what restoring a revision puts back, to confirm.
pub async fn confirm_revision(person: Person, Path(id): Path<i64>) -> Result<Html<String>, WebError> {
    let change = person.content.change(id).await?;
    let record = Records::of(&person, [(change.entity, change.entity_id.as_str())])
        .await
        .named(change.entity, &change.entity_id);
    let at = change.at.format("%Y-%m-%d %H:%M");
    let question = format!("Restore the {} {} as it was after the change of {at}?", record.noun, record.label);
    let mut screen = Confirm::new(
        &person,
        "/history",
        question,
        format!("/history/{id}/restore"),
        "Restore",
        format!("/history/{id}"),
    );
    screen.button = "Restore this revision".into();
    screen.note = if change.entity == EntityKind::Page {
        "Its sections come back as they were then too: those changed since are put back, those added since are \
         archived, those archived since are restored. Each step is a change of its own in History."
            .into()
    } else {
        "The restore is a change of its own: History can undo it the same way.".into()
    };
    Ok(Html(screen.render()?))
}

/// `GET /tokens/{id}/revoke`: revoking a token, to confirm.
pub async fn confirm_revoke(
    State(state): State<AppState>,
    person: Person,
    Path(id): Path<String>,
) -> Result<Html<String>, WebError> {
    let token = quire_app::tokens::token(state.store(), person.actor(), &id).await?;
    let mut screen = Confirm::new(
        &person,
        "/tokens",
        format!("Revoke the API token {}?", token.name),
        format!("/tokens/{}/revoke", crate::error::urlencode(&id)),
        "Revoke",
        "/tokens".into(),
    );
    screen.button = "Revoke the token".into();
    screen.note = "Programs using it stop working at once; this cannot be undone (make a new token instead).".into();
    Ok(Html(screen.render()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(entity: EntityKind, label: &str) -> ArchivedItem {
        ArchivedItem { entity, id: label.into(), label: label.into() }
    }

    #[test]
    fn the_question_names_the_record_and_counts_what_goes_along() {
        let page =
            [item(EntityKind::Page, "Contact"), item(EntityKind::Section, "Hero"), item(EntityKind::Section, "Form")];
        assert_eq!(archive_question(&page), "Archive the page Contact and its 2 sections?");
        let tree = [
            item(EntityKind::Page, "About"),
            item(EntityKind::Section, "Hero"),
            item(EntityKind::Page, "Team"),
            item(EntityKind::Section, "Text"),
        ];
        assert_eq!(archive_question(&tree), "Archive the page About and its 2 sections and 1 child page?");
        assert_eq!(archive_question(&[item(EntityKind::Section, "Hero on Home")]), "Archive the section Hero on Home?");
        assert_eq!(
            archive_question(&[item(EntityKind::Collection, "Blog"), item(EntityKind::Entry, "Hello")]),
            "Archive the collection Blog and its 1 entry?"
        );
    }
}
