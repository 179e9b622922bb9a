//! Pages: the tree (one level at a time, paginated), the page editor with
//! its sections, and section forms generated from their templates.

use crate::Person;
use crate::error::WebError;
use crate::form::Form;
use crate::form::{self, Errors};
use crate::frame::Frame;
use crate::publishing::Outcome;
pub(crate) use crate::screen::{Head, answered, refused, render};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::AppError;
use quire_app::content::{Content, PageFilter};
use quire_core::access::Permission;
use quire_core::fields::{FieldDef, FieldKind};
use quire_core::input::{NewPage, NewSection, PagePatch, Place, SectionPatch};
use quire_core::model::{EntityKind, ImageStatus, Page, PageSection, PublishStatus, SectionTemplate};
use quire_server::AppState;
use serde::Deserialize;
use serde_json::Value;

/// Pages listed per screen of the tree.
const PER_SCREEN: u32 = 50;

/// Most pages the parent picker offers (a larger site's rest is reached
/// from the tree, where a child page is created under its parent).
const PICKABLE: u32 = 1000;

/// A page the parent picker offers: its id, and its name indented by its
/// depth in the tree, with its slug.
pub struct Choice {
    pub id: String,
    pub label: String,
}

/// The pages that may be `page`'s parent (none: a new page's), in tree
/// order, indented by depth: every page but `page` itself and the pages
/// under it. One read.
async fn parent_choices(content: &Content, page: Option<&str>) -> Result<Vec<Choice>, WebError> {
    let filter = PageFilter::default();
    let pages = content.pages(&filter, PICKABLE, None).await.map_err(WebError::listing)?.items;
    let mut children: std::collections::HashMap<Option<&str>, Vec<&Page>> = std::collections::HashMap::new();
    let known: std::collections::HashSet<&str> = pages.iter().map(|p| p.id.as_str()).collect();
    for p in &pages {
        // A page whose parent is beyond the pages read shows at the top.
        let parent = p.parent_id.as_deref().filter(|id| known.contains(id));
        children.entry(parent).or_default().push(p);
    }
    for list in children.values_mut() {
        list.sort_by(|a, b| (a.sort_order, &a.id).cmp(&(b.sort_order, &b.id)));
    }
    let mut out = Vec::new();
    let mut stack: Vec<(&Page, usize)> =
        children.get(&None).map(|l| l.iter().rev().map(|p| (*p, 0)).collect()).unwrap_or_default();
    while let Some((p, depth)) = stack.pop() {
        if Some(p.id.as_str()) == page || depth > 64 {
            continue;
        }
        out.push(Choice { id: p.id.clone(), label: format!("{}{} (/{})", "\u{2003}".repeat(depth), p.name, p.slug) });
        if let Some(kids) = children.get(&Some(p.id.as_str())) {
            stack.extend(kids.iter().rev().map(|k| (*k, depth + 1)));
        }
    }
    Ok(out)
}

/// A page in a list, with what the row shows.
pub struct Row {
    pub page: Page,
    pub status: &'static str,
}

#[derive(Template)]
#[template(path = "pages.html")]
struct TreePage {
    head: Head,
    frame: Frame,
    parent: Option<Page>,
    trail: Vec<Page>,
    rows: Vec<Row>,
    next: Option<String>,
    /// Whether this is the level's first screen (its first row cannot go up).
    first_screen: bool,
    statuses: &'static [PublishStatus],
    new_name: String,
    new_slug: String,
    errors: Errors,
    /// The pages a new page may go under.
    parents: Vec<Choice>,
    /// The one it goes under unless another is chosen.
    new_parent: String,
    /// The search the rows answer ("": the level of the tree).
    query: String,
    /// The locale the rows lack a translation into ("": any).
    missing: String,
    /// The site's other locales, for that filter: (code, name).
    languages: Vec<(String, String)>,
    /// What a bulk action just did.
    notice: String,
}

#[derive(Deserialize)]
pub struct TreeQuery {
    parent: Option<String>,
    cursor: Option<String>,
    /// Words or meaning to find pages by (the tools' search).
    #[serde(default)]
    q: String,
    /// Only the pages with no translation into this locale, site-wide.
    #[serde(default)]
    missing: String,
    #[serde(flatten)]
    done: crate::bulk::BulkDone,
}

/// The ancestors of `page`, root first.
async fn trail(content: &Content, page: Option<&Page>) -> Result<Vec<Page>, WebError> {
    let mut out = Vec::new();
    let mut next = page.and_then(|p| p.parent_id.clone());
    while let Some(id) = next {
        if out.len() > 64 {
            break;
        }
        let p = content.page(&id).await?;
        next = p.parent_id.clone();
        out.push(p);
    }
    out.reverse();
    Ok(out)
}

async fn tree_page(
    person: &Person,
    parent_id: Option<String>,
    cursor: Option<String>,
    new: (String, String, Option<String>),
    errors: Errors,
) -> Result<TreePage, WebError> {
    let content = &person.content;
    let parent = match &parent_id {
        Some(id) => Some(content.page(id).await?),
        None => None,
    };
    let first_screen = cursor.is_none();
    let parents = if quire_app::authorize(person.actor(), Permission::Write(EntityKind::Page)).is_ok() {
        parent_choices(content, None).await?
    } else {
        Vec::new()
    };
    let new_parent = new.2.or_else(|| parent_id.clone()).unwrap_or_default();
    let filter = PageFilter { root_only: parent_id.is_none(), parent_id, ..Default::default() };
    let listing = content.pages(&filter, PER_SCREEN, cursor.as_deref()).await.map_err(WebError::listing)?;
    let mut trail = trail(content, parent.as_ref()).await?;
    if let Some(p) = &parent {
        trail.push(p.clone());
    }
    Ok(TreePage {
        head: Head::new(),
        frame: Frame::new(person, "/pages"),
        parent,
        trail,
        rows: listing.items.into_iter().map(|page| Row { status: page.status.as_str(), page }).collect(),
        next: listing.next_cursor,
        first_screen,
        statuses: PublishStatus::ALL,
        new_name: new.0,
        new_slug: new.1,
        errors,
        parents,
        new_parent,
        query: String::new(),
        missing: String::new(),
        languages: crate::actions::languages(content).await,
        notice: String::new(),
    })
}

/// Pages a search shows.
const FOUND: u32 = 50;

/// `GET /pages?parent=ID`: one level of the tree; `?q=` the pages
/// matching, best first, as the tools find them.
pub async fn tree(
    State(state): State<AppState>,
    person: Person,
    Query(q): Query<TreeQuery>,
) -> Result<Html<String>, WebError> {
    let query = q.q.trim().to_string();
    let parent = if query.is_empty() { q.parent.filter(|p| !p.is_empty()) } else { None };
    let missing = q.missing.trim().to_string();
    let parent = if missing.is_empty() { parent } else { None };
    let mut page = tree_page(&person, parent, q.cursor.clone(), Default::default(), Errors::new()).await?;
    if query.is_empty() && !missing.is_empty() {
        let filter = PageFilter { missing_locale: Some(missing.clone()), ..Default::default() };
        let listing =
            person.content.pages(&filter, PER_SCREEN, q.cursor.as_deref()).await.map_err(WebError::listing)?;
        page.rows = listing.items.into_iter().map(|page| Row { status: page.status.as_str(), page }).collect();
        page.next = listing.next_cursor;
        page.missing = missing;
    }
    if !query.is_empty() {
        let found = quire_app::search::pages(state.registry(), person.actor(), &query, FOUND).await?;
        page.rows = found.into_iter().map(|page| Row { status: page.status.as_str(), page }).collect();
        page.next = None;
        page.query = query;
    }
    page.notice = q.done.notice("pages");
    Ok(Html(page.render()?))
}

#[derive(Deserialize)]
pub struct NewPageForm {
    name: String,
    slug: String,
    #[serde(default)]
    parent_id: Option<String>,
    #[serde(default)]
    status: Option<String>,
    /// The level of the tree the form was on.
    #[serde(default)]
    back: Option<String>,
}

/// Parses a page's or section's status from a form ("": unchanged).
fn status_of(value: &str) -> Result<Option<PublishStatus>, AppError> {
    form::choice(value, |s| PublishStatus::parse("status", s))
}

/// `POST /pages`: creates a page under the parent on screen.
pub async fn create(person: Person, Form(f): Form<NewPageForm>) -> Response {
    let parent_id = f.parent_id.filter(|p| !p.is_empty());
    let result = async {
        person.require(Permission::Write(EntityKind::Page))?;
        let input = NewPage {
            name: f.name.clone(),
            slug: f.slug.clone(),
            parent_id: parent_id.clone(),
            is_protected: None,
            meta: None,
            indexing: None,
            sort_order: None,
            status: status_of(f.status.as_deref().unwrap_or_default())?,
        };
        Ok::<_, WebError>(person.content.create_page(input).await)
    }
    .await;
    match result {
        Ok(Ok(page)) => Redirect::to(&format!("/pages/{}", page.id)).into_response(),
        Ok(Err(e)) => {
            let errors = form::errors_of(&e, "");
            let back = f.back.filter(|p| !p.is_empty());
            refused(tree_page(&person, back, None, (f.name, f.slug, parent_id), errors).await)
        }
        Err(e) => e.into_response(),
    }
}

/// A section in the editor's list.
pub struct SectionRow {
    pub section: PageSection,
    pub template: String,
    pub summary: String,
}

#[derive(Template)]
#[template(path = "page.html")]
struct EditorPage {
    head: Head,
    frame: Frame,
    page: Page,
    trail: Vec<Page>,
    meta_title: String,
    meta_description: String,
    publishing: crate::publishing::Panel,
    sections: Vec<SectionRow>,
    templates: Vec<SectionTemplate>,
    errors: Errors,
    saved: bool,
    actions: Vec<crate::actions::Offered>,
    languages: Vec<(String, String)>,
    /// The pages it may be moved under.
    parents: Vec<Choice>,
    /// The language switcher (empty on a site of one locale).
    locale_links: Vec<crate::translations::LocaleLink>,
    current_locale: String,
}

/// A short line that says what a section holds: its first text value.
pub(crate) fn summary(content: &Value) -> String {
    let first = content.as_object().and_then(|m| m.values().find_map(Value::as_str)).unwrap_or("");
    let mut s: String = first.chars().take(80).collect();
    if first.chars().count() > 80 {
        s.push('…');
    }
    s
}

async fn editor(person: &Person, page: Page, errors: Errors, saved: bool) -> Result<EditorPage, WebError> {
    let content = &person.content;
    let templates = content.templates(100, None).await?.items;
    let sections = content.sections(&page.id, 100, None).await?.items;
    let sections = sections
        .into_iter()
        .map(|section| SectionRow {
            template: templates
                .iter()
                .find(|t| t.key == section.template_key)
                .map(|t| t.name.clone())
                .unwrap_or_else(|| section.template_key.clone()),
            summary: summary(&section.content),
            section,
        })
        .collect();
    let meta_text = |key: &str| page.meta.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let parents = parent_choices(content, Some(&page.id)).await?;
    let languages = crate::actions::languages(content).await;
    let locale_links = crate::translations::switcher(person, "pages", EntityKind::Page, &page.id).await;
    let current_locale = locale_links.iter().find(|l| l.state == "default").map(|l| l.tag.clone()).unwrap_or_default();
    Ok(EditorPage {
        locale_links,
        current_locale,
        head: Head::new(),
        frame: Frame::new(person, "/pages"),
        trail: trail(content, Some(&page)).await?,
        meta_title: meta_text("title"),
        meta_description: meta_text("description"),
        publishing: crate::publishing::Panel::of(
            person,
            EntityKind::Page,
            &page.id,
            format!("/pages/{}/publishing", page.id),
        )
        .await?
        .previewed(person, EntityKind::Page, &page.id)
        .await?,
        sections,
        templates,
        errors,
        saved,
        page,
        actions: crate::actions::offered(
            "page",
            person.require(Permission::Write(EntityKind::Page)).is_ok(),
            &languages,
        ),
        languages,
        parents,
    })
}

#[derive(Deserialize)]
pub struct SavedQuery {
    #[serde(default)]
    pub saved: Option<String>,
    /// What the publishing panel just did.
    #[serde(default)]
    pub done: Option<String>,
    /// The release the publishing panel just added the document to.
    #[serde(default)]
    pub release: Option<String>,
}

/// `GET /pages/{id}`: the page editor.
pub async fn edit(person: Person, Path(id): Path<String>, Query(q): Query<SavedQuery>) -> Response {
    let screen = async {
        let page = person.content.page(&id).await?;
        let mut editor = editor(&person, page, Errors::new(), q.saved.is_some()).await?;
        editor.publishing = editor.publishing.after(q.done.as_deref(), q.release.as_deref());
        Ok(Html(editor.render()?))
    }
    .await;
    crate::removal::or_archived(&person, EntityKind::Page, &id, screen).await
}

/// `POST /pages/{id}/publishing`: the publishing panel's forms, then back
/// to the editor; refused, the editor again with the reason in its panel.
pub async fn publishing(person: Person, Path(id): Path<String>, Form(pairs): Form<Vec<(String, String)>>) -> Response {
    let shown = match crate::publishing::act(&person, EntityKind::Page, &id, pairs).await {
        Outcome::Done(query) => return Redirect::to(&format!("/pages/{id}?{query}")).into_response(),
        Outcome::Failed(response) => return response,
        Outcome::Refused(shown) => shown,
    };
    let status = shown.status;
    let page = async {
        let page = person.content.page(&id).await?;
        let mut editor = editor(&person, page, Errors::new(), false).await?;
        editor.publishing = shown.on(editor.publishing);
        Ok(editor)
    }
    .await;
    answered(status, page)
}

/// `POST /pages/{id}`: saves the page's own fields.
pub async fn update(person: Person, Path(id): Path<String>, Form(pairs): Form<Vec<(String, String)>>) -> Response {
    let get = |k: &str| form::value(&pairs, k).to_string();
    let (name, slug) = (get("name"), get("slug"));
    let result = async {
        person.require(Permission::Write(EntityKind::Page))?;
        let current = person.content.page(&id).await?;
        if let Some(e) = form::stale(&pairs, current.version) {
            return Ok(Err(e));
        }
        let meta = serde_json::json!({
            "title": form::optional(form::value(&pairs, "meta_title")),
            "description": form::optional(form::value(&pairs, "meta_description")),
        });
        let patch = PagePatch {
            name: Some(name.clone()),
            slug: Some(slug.clone()),
            parent_id: Some(form::optional(form::value(&pairs, "parent_id"))),
            is_protected: form::checked(&pairs, "is_protected"),
            meta: Some(meta),
            indexing: form::checked(&pairs, "indexing"),
            sort_order: None,
            status: status_of(form::value(&pairs, "status")).map_err(WebError::from)?,
        };
        Ok::<_, WebError>(person.content.update_page(&id, patch).await)
    }
    .await;
    match result {
        Ok(Ok(page)) => Redirect::to(&format!("/pages/{}?saved=1", page.id)).into_response(),
        Ok(Err(e)) => {
            let errors = form::errors_of(&e, "");
            let page = match person.content.page(&id).await {
                Ok(mut page) => {
                    // Show what was typed, not what is stored.
                    page.name = name;
                    page.slug = slug;
                    page
                }
                Err(e) => return WebError::from(e).into_response(),
            };
            refused(editor(&person, page, errors, false).await)
        }
        Err(e) => e.into_response(),
    }
}

#[derive(Template)]
#[template(path = "section.html")]
struct SectionForm {
    head: Head,
    frame: Frame,
    page: Page,
    template: SectionTemplate,
    /// The section being edited; `None` for a new one.
    section: Option<PageSection>,
    fields: String,
    status: &'static str,
    hidden: bool,
    statuses: &'static [PublishStatus],
    errors: Errors,
    saved: bool,
}

/// What a section form shows besides its page and template: the content
/// (as stored, or as typed when refused), its settings and any errors.
struct Shown {
    content: Value,
    status: &'static str,
    hidden: bool,
    errors: Errors,
    saved: bool,
}

impl SectionForm {
    /// What the person reads for the value at `path` of the section.
    fn named(&self, path: &str) -> String {
        form::label_at(&self.template.fields, path)
    }

    /// The form of `section` (`None`: a new one) on `page`, its inputs
    /// generated from the template's fields and filled from `shown`.
    async fn new(
        person: &Person,
        page: Page,
        template: SectionTemplate,
        section: Option<PageSection>,
        shown: Shown,
    ) -> Self {
        let mut template = template;
        template.fields = form::template_fields(&template);
        let fields = form::render(&template.fields, &shown.content, &shown.errors, &library(person).await);
        SectionForm {
            head: Head::new(),
            frame: Frame::new(person, "/pages"),
            page,
            template,
            section,
            fields,
            status: shown.status,
            hidden: shown.hidden,
            statuses: PublishStatus::ALL,
            errors: shown.errors,
            saved: shown.saved,
        }
    }
}

/// Most images of the library an image field offers (the newest; the
/// script's grid and the media screen reach the rest).
const OFFERED_IMAGES: u32 = 40;

/// The media library's newest images, offered in image fields (none when
/// they cannot be read: the form still works without them).
pub(crate) async fn library(person: &Person) -> Vec<form::LibraryImage> {
    let images = match person.content.images(Some(ImageStatus::Completed), OFFERED_IMAGES, None).await {
        Ok(list) => list.items,
        Err(_) => return Vec::new(),
    };
    images
        .into_iter()
        .map(|image| {
            let card = crate::card::Card::of(image);
            let image = card.image;
            let label = image.alt.clone().filter(|a| !a.trim().is_empty()).unwrap_or_else(|| image.filename.clone());
            form::LibraryImage { thumb: card.thumb.unwrap_or_else(|| image.url.clone()), url: image.url, label }
        })
        .collect()
}

#[derive(Deserialize)]
pub struct TemplateQuery {
    template: String,
}

/// `GET /pages/{id}/sections/new?template=KEY`: an empty section form.
pub async fn new_section(
    person: Person,
    Path(id): Path<String>,
    Query(q): Query<TemplateQuery>,
) -> Result<Html<String>, WebError> {
    let (page, template) = page_and_template(&person, &id, &q.template).await?;
    let shown = Shown { content: Value::Null, status: "draft", hidden: false, errors: Errors::new(), saved: false };
    let view = SectionForm::new(&person, page, template, None, shown).await;
    Ok(Html(view.render()?))
}

/// The page a new section goes on and its template, for a person who may
/// add sections.
async fn page_and_template(person: &Person, id: &str, template: &str) -> Result<(Page, SectionTemplate), WebError> {
    person.require(Permission::Write(EntityKind::Section))?;
    Ok((person.content.page(id).await?, person.content.template(template).await?))
}

/// A section with its page and template.
async fn section_in_place(content: &Content, id: &str) -> Result<(PageSection, Page, SectionTemplate), WebError> {
    let section = content.section(id).await?;
    let page = content.page(&section.page_id).await?;
    let template = content.template(&section.template_key).await?;
    Ok((section, page, template))
}

/// The section's own settings in a form: status and hidden.
fn settings(pairs: &[(String, String)]) -> (&str, bool) {
    (form::value(pairs, "_status"), form::checked(pairs, "_hidden").unwrap_or(false))
}

/// `POST /pages/{id}/sections/new`: adds the section.
pub async fn create_section(
    person: Person,
    Path(id): Path<String>,
    Query(q): Query<TemplateQuery>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    match page_and_template(&person, &id, &q.template).await {
        Ok((page, template)) => save_section(&person, page, template, None, &pairs).await,
        Err(e) => e.into_response(),
    }
}

/// `GET /sections/{id}`: the section's form.
pub async fn edit_section(person: Person, Path(id): Path<String>, Query(q): Query<SavedQuery>) -> Response {
    let screen = async {
        let (section, page, template) = section_in_place(&person.content, &id).await?;
        let shown = Shown {
            content: section.content.clone(),
            status: section.status.as_str(),
            hidden: section.hidden,
            errors: Errors::new(),
            saved: q.saved.is_some(),
        };
        let view = SectionForm::new(&person, page, template, Some(section), shown).await;
        Ok(Html(view.render()?))
    }
    .await;
    crate::removal::or_archived(&person, EntityKind::Section, &id, screen).await
}

/// `POST /sections/{id}`: saves the section's content and settings.
pub async fn update_section(
    person: Person,
    Path(id): Path<String>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let loaded = async {
        person.require(Permission::Write(EntityKind::Section))?;
        section_in_place(&person.content, &id).await
    }
    .await;
    match loaded {
        Ok((section, page, template)) => save_section(&person, page, template, Some(section), &pairs).await,
        Err(e) => e.into_response(),
    }
}

/// Saves a section form: a new section of `template` on `page` (`section`
/// none), or the section's content (every field of the template, set or
/// removed) and settings. Refused, the form comes back with what was typed.
async fn save_section(
    person: &Person,
    page: Page,
    template: SectionTemplate,
    section: Option<PageSection>,
    pairs: &[(String, String)],
) -> Response {
    let (status, hidden) = settings(pairs);
    let read = form::read(&template.fields, pairs);
    let content = Value::Object(read.clone());
    let stale = section.as_ref().and_then(|s| form::stale(pairs, s.version));
    let saved = match (stale, status_of(status)) {
        (Some(e), _) | (None, Err(e)) => Err(e),
        (None, Ok(status)) => match &section {
            None => {
                let input = NewSection {
                    template_key: template.key.clone(),
                    content: Some(content.clone()),
                    sort_order: None,
                    status,
                    hidden: Some(hidden),
                };
                let made = person.content.create_section(&page.id, input).await;
                made.map(|s| format!("/pages/{}?saved=1#section-{}", page.id, s.id))
            }
            Some(section) => {
                let patch = SectionPatch {
                    content: Some(form::patch(&template.fields, read)),
                    sort_order: None,
                    status,
                    hidden: Some(hidden),
                };
                let saved = person.content.update_section(&section.id, patch).await;
                saved.map(|s| format!("/sections/{}?saved=1", s.id))
            }
        },
    };
    match saved {
        Ok(to) => Redirect::to(&to).into_response(),
        Err(e) => {
            // A new section shows the status chosen; a stored one its own.
            let status = match &section {
                Some(s) => s.status.as_str(),
                None => PublishStatus::parse("status", status).unwrap_or(PublishStatus::Draft).as_str(),
            };
            let shown = Shown { content, status, hidden, errors: form::errors_of(&e, "content"), saved: false };
            render(StatusCode::UNPROCESSABLE_ENTITY, &SectionForm::new(person, page, template, section, shown).await)
        }
    }
}

/// A template's schematic for the new-section chooser, drawn from its
/// field definitions: the marks in order, each a CSS class (`sk-h` a
/// heading, `sk-line` a line of text, `sk-text` a paragraph, `sk-img` an
/// image, `sk-btn` a button, `sk-items` repeated items), at most six.
pub(crate) fn sketch(template: &SectionTemplate) -> Vec<&'static str> {
    fn marks(fields: &[FieldDef], out: &mut Vec<&'static str>) {
        for f in fields {
            match f.kind {
                FieldKind::Text if out.is_empty() || ["heading", "title"].contains(&f.name.as_str()) => out.push("h"),
                FieldKind::Text => out.push("line"),
                FieldKind::Markdown => out.push("text"),
                FieldKind::Image => out.push("img"),
                FieldKind::Link => out.push("btn"),
                FieldKind::List => out.push("items"),
                FieldKind::Object => marks(&f.fields, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    marks(&template.fields, &mut out);
    out.truncate(6);
    out
}

/// A move asked for by the ↑/↓ buttons (`dir`: one place up or down) or by
/// the script's drag and drop and keys (`before` or `after` a sibling: the
/// new place at once).
#[derive(Deserialize)]
pub struct MoveForm {
    #[serde(default)]
    dir: Option<String>,
    #[serde(default)]
    before: Option<String>,
    #[serde(default)]
    after: Option<String>,
}

/// Where a [`MoveForm`] moves a record.
pub enum Moving {
    /// One place up (-1) or down (1).
    By(i64),
    /// Straight to a place.
    To(Place),
}

impl MoveForm {
    /// What the form asks for: exactly one of dir, before and after.
    pub fn moving(self) -> Result<Moving, WebError> {
        let bad = |message: String| WebError::Status(StatusCode::BAD_REQUEST, message);
        match (self.dir, self.before, self.after) {
            (Some(dir), None, None) => match dir.as_str() {
                "up" => Ok(Moving::By(-1)),
                "down" => Ok(Moving::By(1)),
                other => Err(bad(format!("dir \"{other}\" is not one of up, down"))),
            },
            (None, Some(before), None) => Ok(Moving::To(Place::Before(before))),
            (None, None, Some(after)) => Ok(Moving::To(Place::After(after))),
            _ => Err(bad("a move needs exactly one of dir, before and after".into())),
        }
    }
}

/// `POST /pages/{id}/sections/{section}/move`: moves a section one place up
/// or down, or straight before or after another section of the page (one
/// transaction either way).
pub async fn move_section(
    person: Person,
    Path((id, section_id)): Path<(String, String)>,
    Form(f): Form<MoveForm>,
) -> Result<Redirect, WebError> {
    person.require(Permission::Write(EntityKind::Section))?;
    let section = person.content.section(&section_id).await?;
    if section.page_id != id {
        return Err(WebError::NotFound(format!("section {section_id} is not on page {id}")));
    }
    match f.moving()? {
        Moving::By(by) => person.content.shift_section(&section_id, by).await?,
        Moving::To(place) => person.content.move_section(&section_id, place).await?,
    }
    Ok(Redirect::to(&format!("/pages/{id}#section-{section_id}")))
}

/// `POST /pages/{id}/move`: moves a page one place up or down among its
/// siblings in the tree, or straight before or after one of them (one
/// transaction either way).
pub async fn move_page(person: Person, Path(id): Path<String>, Form(f): Form<MoveForm>) -> Result<Redirect, WebError> {
    person.require(Permission::Write(EntityKind::Page))?;
    let page = person.content.page(&id).await?;
    match f.moving()? {
        Moving::By(by) => person.content.shift_page(&id, by).await?,
        Moving::To(place) => person.content.move_page(&id, place).await?,
    }
    let parent = page.parent_id.map(|p| format!("?parent={p}")).unwrap_or_default();
    Ok(Redirect::to(&format!("/pages{parent}#page-{id}")))
}
