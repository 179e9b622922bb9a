//! Translating a page or an entry in the back-office: the language
//! switcher every editor shows on a site of several locales (each locale
//! with where the record stands in it: its own text, published, a draft,
//! stale, missing), and the screen of one locale, side by side — the
//! default locale's text beside the inputs of the locale's own, what is
//! not translated yet marked, a stale translation said so — saved as a
//! draft translation, or saved and published, through `quire_app::locales`.
//! A field left empty falls back to the default's text.

use crate::Person;
use crate::actions::language_name;
use crate::error::{WebError, refusal};
use crate::form::{self, Form};
use crate::frame::Frame;
use crate::screen::DoneQuery;
use crate::screen::{Head, answered};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use quire_app::AppError;
use quire_core::access::Permission;
use quire_core::fields::{FieldDef, FieldKind};
use quire_core::model::EntityKind;
use quire_server::AppState;
use serde_json::{Map, Value, json};

/// One of the site's locales as an editor's switcher shows it.
pub struct LocaleLink {
    /// Its tag.
    pub tag: String,
    /// Its name in words.
    pub name: String,
    /// Where the record stands in it: `default`, `published`, `draft`,
    /// `missing`.
    pub state: &'static str,
    /// Whether the default's text changed since it was translated.
    pub stale: bool,
    /// Its screen.
    pub href: String,
}

/// The kinds translated here, by the path segment of their editor.
fn kind_of(segment: &str) -> Result<EntityKind, WebError> {
    match segment {
        "pages" => Ok(EntityKind::Page),
        "entries" => Ok(EntityKind::Entry),
        other => Err(WebError::NotFound(format!("{other} are not translated here"))),
    }
}

/// The switcher of the record `id` of `kind` (`segment`: its editor's
/// path), empty on a site of one locale.
pub async fn switcher(person: &Person, segment: &str, kind: EntityKind, id: &str) -> Vec<LocaleLink> {
    let Ok(states) = person.content.translations(kind, id).await else { return Vec::new() };
    let Ok(locales) = person.content.locales().await else { return Vec::new() };
    if locales.len() < 2 {
        return Vec::new();
    }
    locales
        .iter()
        .map(|l| {
            let found = states.translations.iter().find(|t| t.translation.locale == l.tag);
            let state = match (l.is_default, found) {
                (true, _) => "default",
                (false, Some(t)) if t.published => "published",
                (false, Some(_)) => "draft",
                (false, None) => "missing",
            };
            LocaleLink {
                tag: l.tag.clone(),
                name: language_name(&l.tag),
                state,
                stale: states.stale.contains(&l.tag),
                href: if l.is_default {
                    format!("/{segment}/{id}")
                } else {
                    format!("/{segment}/{id}/translations/{}", l.tag)
                },
            }
        })
        .collect()
}

/// One value to translate: the form's name for it, its label, the
/// default's text and the locale's.
pub struct Row {
    pub name: String,
    pub label: String,
    pub source: String,
    pub value: String,
    /// Shown in a text area (markdown, or text over a line).
    pub long: bool,
}

/// A group of rows under a heading (the record, then each section).
pub struct Group {
    pub heading: String,
    pub rows: Vec<Row>,
}

#[derive(Template)]
#[template(path = "translation.html")]
struct TranslationScreen {
    head: Head,
    frame: Frame,
    /// The record's name and its editor's address.
    title: String,
    back: String,
    action: String,
    locale: String,
    language: String,
    default_language: String,
    /// Where the record stands in this locale.
    state: &'static str,
    stale: bool,
    groups: Vec<Group>,
    /// The switcher: every locale of the site, this one current.
    locale_links: Vec<LocaleLink>,
    current_locale: String,
    default_tag: String,
    can_publish: bool,
    saved: &'static str,
    error: Option<String>,
}

fn text_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// The localised fields of `defs` that are text, as rows under `prefix`.
fn rows_of(defs: &[FieldDef], prefix: &str, source: &Value, translated: &Value) -> Vec<Row> {
    defs.iter()
        .filter(|d| d.localized && matches!(d.kind, FieldKind::Text | FieldKind::Markdown))
        .map(|d| {
            let source = text_of(source.get(&d.name));
            Row {
                name: format!("{prefix}{}", d.name),
                label: d.display_label(),
                long: d.kind == FieldKind::Markdown || source.contains('\n') || source.chars().count() > 80,
                value: text_of(translated.get(&d.name)),
                source,
            }
        })
        .collect()
}

fn row(name: &str, label: &str, source: String, value: String, long: bool) -> Row {
    Row { name: name.into(), label: label.into(), source, value, long }
}

/// The screen of locale `locale` of the record `id` of `segment`.
async fn screen(
    person: &Person,
    segment: &str,
    id: &str,
    locale: &str,
    typed: Option<&[(String, String)]>,
    saved: &'static str,
    error: Option<String>,
) -> Result<TranslationScreen, WebError> {
    let kind = kind_of(segment)?;
    let content = &person.content;
    let locales = content.locales().await?;
    let default = locales.iter().find(|l| l.is_default).map(|l| l.tag.clone()).unwrap_or_default();
    if !locales.iter().any(|l| l.tag == locale && !l.is_default) {
        return Err(WebError::NotFound(format!("\"{locale}\" is not one of this site's other locales")));
    }
    let states = content.translations(kind, id).await?;
    let found = states.translations.iter().find(|t| t.translation.locale == locale);
    let fields = found.map(|t| t.translation.fields.clone()).unwrap_or(Value::Null);
    let (title, groups) = match kind {
        EntityKind::Page => {
            let page = content.page(id).await?;
            let meta = |v: &Value, key: &str| text_of(v.get("meta").and_then(|m| m.get(key)));
            let own = json!({ "meta": page.meta });
            let mut groups = vec![Group {
                heading: "The page".into(),
                rows: vec![
                    row("name", "Name", page.name.clone(), text_of(fields.get("name")), false),
                    row("slug", "Slug", page.slug.clone(), text_of(fields.get("slug")), false),
                    row("meta.title", "Meta title", meta(&own, "title"), meta(&fields, "title"), false),
                    row(
                        "meta.description",
                        "Meta description",
                        meta(&own, "description"),
                        meta(&fields, "description"),
                        true,
                    ),
                ],
            }];
            for section in content.sections(id, 100, None).await?.items {
                let template = content.template(&section.template_key).await?;
                let defs = form::template_fields(&template);
                let translated =
                    fields.get("sections").and_then(|s| s.get(&section.id)).cloned().unwrap_or(Value::Null);
                let rows = rows_of(&defs, &format!("sections.{}.", section.id), &section.content, &translated);
                if !rows.is_empty() {
                    groups.push(Group { heading: format!("Section: {}", template.name), rows });
                }
            }
            (page.name, groups)
        }
        _ => {
            let entry = content.entry(id).await?;
            let collection = content.collection(&entry.collection_id).await?;
            let defs = form::collection_fields(&collection);
            let mut rows = vec![
                row("title", "Title", entry.title.clone(), text_of(fields.get("title")), false),
                row("slug", "Slug", entry.slug.clone(), text_of(fields.get("slug")), false),
                row("excerpt", "Excerpt", text_of(Some(&json!(entry.excerpt))), text_of(fields.get("excerpt")), true),
            ];
            rows.extend(rows_of(&defs, "content.", &entry.content, fields.get("content").unwrap_or(&Value::Null)));
            let noun = if collection.kind == quire_core::model::CollectionKind::Posts { "post" } else { "entry" };
            (entry.title, vec![Group { heading: format!("The {noun}"), rows }])
        }
    };
    let mut groups = groups;
    if let Some(typed) = typed {
        for g in &mut groups {
            for r in &mut g.rows {
                r.value = form::value(typed, &r.name).to_string();
            }
        }
    }
    let state = match found {
        Some(t) if t.published => "published",
        Some(_) => "draft",
        None => "missing",
    };
    Ok(TranslationScreen {
        head: Head::new(),
        frame: Frame::new(person, if kind == EntityKind::Page { "/pages" } else { "/collections" }),
        back: format!("/{segment}/{id}"),
        action: format!("/{segment}/{id}/translations/{locale}"),
        locale: locale.to_string(),
        language: language_name(locale),
        default_language: language_name(&default),
        stale: states.stale.iter().any(|l| l == locale),
        state,
        locale_links: switcher(person, segment, kind, id).await,
        current_locale: locale.to_string(),
        default_tag: default.clone(),
        can_publish: person.require(Permission::Publish(kind)).is_ok(),
        title,
        groups,
        saved,
        error,
    })
}

/// Puts `value` at the dotted `path` of `into`, making the objects on the way.
fn put(into: &mut Map<String, Value>, path: &str, value: Value) {
    match path.split_once('.') {
        Some((head, rest)) => {
            let next = into.entry(head.to_string()).or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(next) = next {
                put(next, rest, value);
            }
        }
        None => {
            into.insert(path.to_string(), value);
        }
    }
}

/// Saves the translation as a draft (or, with `publish`, publishes it too). Empty
/// inputs are left out: the default's text shows there.
async fn save(
    state: AppState,
    person: Person,
    segment: &str,
    id: String,
    locale: String,
    pairs: Vec<(String, String)>,
) -> Response {
    let kind = match kind_of(segment) {
        Ok(kind) => kind,
        Err(e) => return e.into_response(),
    };
    let publish = form::value(&pairs, "publish") == "1";
    let mut fields = Map::new();
    for (name, value) in &pairs {
        let allowed = ["name", "slug", "title", "excerpt"].contains(&name.as_str())
            || ["meta.", "sections.", "content."].iter().any(|p| name.starts_with(p));
        if allowed && !value.trim().is_empty() {
            put(&mut fields, name, Value::String(value.clone()));
        }
    }
    let result: Result<_, AppError> = quire_app::locales::translate(
        state.registry().services(),
        person.actor(),
        kind,
        &id,
        &locale,
        Value::Object(fields),
        publish,
    )
    .await;
    match result {
        Ok(_) => {
            let done = if publish { "published" } else { "saved" };
            Redirect::to(&format!("/{segment}/{id}/translations/{locale}?done={done}")).into_response()
        }
        Err(e) if matches!(e.failure, quire_app::Failure::Forbidden | quire_app::Failure::Internal) => {
            WebError::from(e).into_response()
        }
        Err(e) => {
            let (status, message) = refusal(&e);
            answered(status, screen(&person, segment, &id, &locale, Some(&pairs), "", Some(message)).await)
        }
    }
}

/// The screen, with what was just done (`?done=`).
async fn show(person: Person, segment: &str, id: String, locale: String, q: DoneQuery) -> Response {
    let saved = match q.done.as_deref() {
        Some("saved") => "Saved as a draft translation: the public site shows it once it is published.",
        Some("published") => "Saved and published: readers of this language see it now.",
        _ => "",
    };
    answered(StatusCode::OK, screen(&person, segment, &id, &locale, None, saved, None).await)
}

/// `GET /pages/{id}/translations/{locale}`.
pub async fn page(person: Person, Path((id, locale)): Path<(String, String)>, Query(q): Query<DoneQuery>) -> Response {
    show(person, "pages", id, locale, q).await
}

/// `POST /pages/{id}/translations/{locale}`.
pub async fn save_page(
    State(state): State<AppState>,
    person: Person,
    Path((id, locale)): Path<(String, String)>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    save(state, person, "pages", id, locale, pairs).await
}

/// `GET /entries/{id}/translations/{locale}`.
pub async fn entry(person: Person, Path((id, locale)): Path<(String, String)>, Query(q): Query<DoneQuery>) -> Response {
    show(person, "entries", id, locale, q).await
}

/// `POST /entries/{id}/translations/{locale}`.
pub async fn save_entry(
    State(state): State<AppState>,
    person: Person,
    Path((id, locale)): Path<(String, String)>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    save(state, person, "entries", id, locale, pairs).await
}
