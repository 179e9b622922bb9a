//! Records as a person knows them: by name or title, with a link to their
//! screen while they are live, read once for a whole screen
//! (`quire_app`'s `record_names`) rather than once per row.

use crate::Person;
use crate::error::urlencode;
use quire_app::names::{RecordName, RecordRef};
use quire_core::model::EntityKind;
use std::collections::HashMap;

/// The names of the records a screen shows.
#[derive(Default)]
pub struct Records {
    names: HashMap<RecordRef, RecordName>,
}

/// A record named, with its screen when it has one and is live.
pub struct Named {
    /// What kind of record it is, in words ("page", "menu item").
    pub noun: &'static str,
    /// Its name, title or path.
    pub label: String,
    /// Its screen, while it is live.
    pub href: Option<String>,
    /// Whether it is archived (or gone).
    pub archived: bool,
}

impl Records {
    /// The names of `records`, read at once. A failure leaves them
    /// unnamed: names are a comfort, the screen still works.
    pub async fn of<'a>(person: &Person, records: impl IntoIterator<Item = (EntityKind, &'a str)>) -> Records {
        let mut asked: Vec<RecordRef> = records.into_iter().map(|(k, id)| (k, id.to_string())).collect();
        asked.sort_by(|a, b| (a.0.as_str(), &a.1).cmp(&(b.0.as_str(), &b.1)));
        asked.dedup();
        if asked.is_empty() {
            return Records::default();
        }
        Records { names: person.content.record_names(&asked).await.unwrap_or_default() }
    }

    /// Record `id` of `kind` as a screen names it.
    pub fn named(&self, kind: EntityKind, id: &str) -> Named {
        let noun = noun(kind);
        match self.names.get(&(kind, id.to_string())) {
            Some(n) => Named {
                noun,
                label: n.label.clone(),
                href: match &n.translates {
                    _ if !n.live => None,
                    Some((kind, id, locale)) => translation_screen(*kind, id, locale),
                    None => screen_of(kind, id),
                },
                archived: !n.live,
            },
            None => Named { noun, label: format!("a {noun} no longer here"), href: None, archived: true },
        }
    }
}

/// A kind of record in words.
pub fn noun(kind: impl std::borrow::Borrow<EntityKind>) -> &'static str {
    match kind.borrow() {
        EntityKind::Page => "page",
        EntityKind::Section => "section",
        EntityKind::SectionTemplate => "template",
        EntityKind::Collection => "collection",
        EntityKind::Entry => "entry",
        EntityKind::Image => "image",
        EntityKind::Navigation => "menu",
        EntityKind::NavItem => "menu item",
        EntityKind::Agent => "agent",
        EntityKind::Note => "note",
        EntityKind::Translation => "translation",
        EntityKind::Context => "context",
        EntityKind::Workspace => "workspace",
    }
}

/// The screen that shows record `id` of `kind`, if it has one.
pub fn screen_of(kind: EntityKind, id: &str) -> Option<String> {
    let id_part = urlencode(id);
    Some(match kind {
        EntityKind::Page => format!("/pages/{id_part}"),
        EntityKind::Section => format!("/sections/{id_part}"),
        EntityKind::Entry => format!("/entries/{id_part}"),
        EntityKind::Image => format!("/media/{id_part}"),
        EntityKind::Navigation => format!("/navigation/{id_part}"),
        EntityKind::NavItem => format!("/nav-items/{id_part}"),
        EntityKind::Collection => format!("/collections/{id_part}"),
        EntityKind::Agent => format!("/agents/{id_part}"),
        EntityKind::Note => format!("/notes/edit?path={id_part}"),
        // Templates, translations (shown with their document), contexts and
        // workspaces (the agent's) have none.
        EntityKind::SectionTemplate | EntityKind::Translation | EntityKind::Context | EntityKind::Workspace => {
            return None;
        }
    })
}

/// The screen of document `id`'s translation into `locale`: side by side
/// for pages and entries, the menu itself for a navigation.
fn translation_screen(kind: EntityKind, id: &str, locale: &str) -> Option<String> {
    match kind {
        EntityKind::Page | EntityKind::Entry => {
            Some(format!("{}/translations/{}", screen_of(kind, id)?, urlencode(locale)))
        }
        _ => screen_of(kind, id),
    }
}

/// The History screen filtered to record `id` of `kind`.
pub fn history_of(kind: EntityKind, id: &str) -> String {
    format!("/history?entity={}&entity_id={}", kind.as_str(), urlencode(id))
}

/// `GET /names?r=KIND:ID&r=…`: records named for the sidebar's script (the
/// records an agent's turn changed), as JSON: `[{ entity, id, noun, label,
/// href }]`, `href` null unless the record is live and has a screen.
pub async fn lookup(
    person: Person,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> axum::Json<Vec<serde_json::Value>> {
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(query.as_deref().unwrap_or_default()).unwrap_or_default();
    let asked: Vec<(EntityKind, String)> = pairs
        .into_iter()
        .filter(|(k, _)| k == "r")
        .filter_map(|(_, v)| {
            let (kind, id) = v.split_once(':')?;
            Some((EntityKind::parse("entity", kind).ok()?, id.to_string()))
        })
        .take(50)
        .collect();
    let records = Records::of(&person, asked.iter().map(|(k, id)| (*k, id.as_str()))).await;
    let named = asked
        .iter()
        .map(|(kind, id)| {
            let n = records.named(*kind, id);
            serde_json::json!({ "entity": kind.as_str(), "id": id, "noun": n.noun, "label": n.label, "href": n.href })
        })
        .collect();
    axum::Json(named)
}
