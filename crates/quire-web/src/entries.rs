//! Collections and their entries; posts are the entries of a `posts`
//! collection, so one editor serves both: the entry's own fields (title,
//! slug, status, author, category, tags, excerpt, featured image) and its
//! content, a form generated from the collection's field definitions.

use crate::error::WebError;
use crate::form::Form;
use crate::form::{self, Errors};
use crate::frame::Frame;
use crate::pages::{Head, SavedQuery, library, refused};
use crate::publishing::Outcome;
use crate::{Person, actions};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::AppError;
use quire_app::content::{Content, EntryFilter, EntryView};
use quire_core::access::Permission;
use quire_core::fields::{FieldDef, FieldKind, is_upload_url};
use quire_core::input::{EntryPatch, NewEntry};
use quire_core::model::{Collection, CollectionKind, EntityKind, Entry, EntryStatus};
use quire_core::templates::POST_COVER;
use quire_server::AppState;
use serde::Deserialize;
use serde_json::Value;

/// Entries listed per screen.
const PER_SCREEN: u32 = 50;

#[derive(Template)]
#[template(path = "collections.html")]
struct CollectionsPage {
    head: Head,
    frame: Frame,
    collections: Vec<Collection>,
    next: Option<String>,
}

#[derive(Deserialize, Default)]
pub struct CursorQuery {
    cursor: Option<String>,
    status: Option<String>,
    /// Only the entries with no translation into this locale.
    #[serde(default)]
    missing: String,
    /// Words or meaning to find entries by (the tools' search).
    #[serde(default)]
    q: String,
    #[serde(flatten)]
    done: crate::bulk::BulkDone,
}

/// Entries a search shows.
const FOUND: u32 = 50;

/// A value as the raw JSON a list row carries (the list never reads it).
fn raw<T: serde::Serialize>(value: &T) -> Box<serde_json::value::RawValue> {
    serde_json::value::to_raw_value(value).unwrap_or_default()
}

/// An entry as a list shows it.
fn view_of(e: Entry) -> EntryView {
    EntryView {
        content: raw(&e.content),
        tags: raw(&e.tags),
        id: e.id,
        collection_id: e.collection_id,
        slug: e.slug,
        title: e.title,
        status: e.status,
        author: e.author,
        category: e.category,
        excerpt: e.excerpt,
        featured_image: e.featured_image,
        published_at: e.published_at,
        version: e.version,
        created_at: e.created_at,
        updated_at: e.updated_at,
    }
}

/// `GET /collections`: every collection, posts first.
pub async fn list(person: Person, Query(q): Query<CursorQuery>) -> Result<Html<String>, WebError> {
    let listing = person.content.collections(PER_SCREEN, q.cursor.as_deref()).await?;
    let mut collections = listing.items;
    collections.sort_by_key(|c| (c.kind != CollectionKind::Posts, c.name.to_lowercase()));
    let page = CollectionsPage {
        head: Head::new(),
        frame: Frame::new(&person, "/collections"),
        collections,
        next: listing.next_cursor,
    };
    Ok(Html(page.render()?))
}

#[derive(Template)]
#[template(path = "entries.html")]
struct EntriesPage {
    head: Head,
    frame: Frame,
    collection: Collection,
    /// What one entry is called here: "post" or "entry".
    noun: &'static str,
    /// The rows, with content passed through undecoded (the list does
    /// not show it).
    entries: Vec<EntryView>,
    next: Option<String>,
    status: String,
    statuses: &'static [EntryStatus],
    new_title: String,
    new_slug: String,
    /// Inputs of the content fields a new entry needs.
    fields: String,
    errors: Errors,
    /// The search the rows answer ("": the newest).
    query: String,
    /// What a bulk action just did.
    notice: String,
    /// The locale the rows lack a translation into ("": any).
    missing: String,
    /// The agent's actions over the whole collection.
    actions: Vec<actions::Offered>,
    languages: Vec<(String, String)>,
}

fn noun(c: &Collection) -> &'static str {
    if c.kind == CollectionKind::Posts { "post" } else { "entry" }
}

/// Parses an entry's status from a form or a filter ("": none).
fn entry_status(value: &str) -> Result<Option<EntryStatus>, AppError> {
    form::choice(value, |s| EntryStatus::parse("status", s))
}

async fn entries_page(
    person: &Person,
    slug: &str,
    q: CursorQuery,
    new: (String, String),
    content: Value,
    errors: Errors,
) -> Result<EntriesPage, WebError> {
    let collection = person.content.collection(slug).await?;
    let notice = q.done.notice(if noun(&collection) == "post" { "posts" } else { "entries" });
    let status = q.status.unwrap_or_default();
    let missing = q.missing.trim().to_string();
    let filter = EntryFilter {
        status: entry_status(&status)?,
        missing_locale: Some(missing.clone()).filter(|m| !m.is_empty()),
        ..Default::default()
    };
    let listing = person
        .content
        .entry_views(&collection.id, &filter, PER_SCREEN, q.cursor.as_deref())
        .await
        .map_err(WebError::listing)?;
    let fields = form::render(&required(&collection), &content, &errors, &[]);
    let languages = actions::languages(&person.content).await;
    let what = format!("every entry of the collection {} (slug {})", collection.name, collection.slug);
    let writes = person.require(Permission::Write(EntityKind::Entry)).is_ok();
    Ok(EntriesPage {
        missing,
        actions: actions::translate_missing(&what, writes, &languages),
        languages,
        head: Head::new(),
        frame: Frame::new(person, "/collections"),
        fields,
        noun: noun(&collection),
        collection,
        entries: listing.items,
        next: listing.next_cursor,
        status,
        statuses: EntryStatus::ALL,
        new_title: new.0,
        new_slug: new.1,
        errors,
        query: String::new(),
        notice,
    })
}

/// `GET /collections/{slug}`: a collection's entries, newest first.
pub async fn entries(
    State(state): State<AppState>,
    person: Person,
    Path(slug): Path<String>,
    Query(mut q): Query<CursorQuery>,
) -> Result<Html<String>, WebError> {
    let query = std::mem::take(&mut q.q).trim().to_string();
    let mut page = entries_page(&person, &slug, q, Default::default(), Value::Null, Errors::new()).await?;
    if !query.is_empty() {
        let found =
            quire_app::search::entries(state.registry(), person.actor(), Some(&page.collection.id), &query, FOUND)
                .await?;
        page.entries = found.into_iter().map(view_of).collect();
        page.next = None;
        page.query = query;
    }
    Ok(Html(page.render()?))
}

/// The content fields a new entry cannot be created without.
fn required(c: &Collection) -> Vec<FieldDef> {
    shown_fields(c).into_iter().filter(|f| f.required).collect()
}

/// Whether the collection keeps a copy of the featured image in its
/// content: a posts collection's cover. The featured image is the post's
/// one image; the editor shows it alone and writes the cover from it.
fn copies_featured_image(c: &Collection) -> bool {
    c.kind == CollectionKind::Posts && c.fields.iter().any(|f| f.name == POST_COVER && f.kind == FieldKind::Image)
}

/// The content fields the entry's form shows, labelled: the collection's,
/// but a post's cover, which follows its featured image.
fn shown_fields(c: &Collection) -> Vec<FieldDef> {
    let copy = copies_featured_image(c);
    form::collection_fields(c).into_iter().filter(|f| !(copy && f.name == POST_COVER)).collect()
}

/// The URL of an image field's value (a URL, or `{ url, … }`).
fn image_url(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(url) => Some(url.clone()),
        Value::Object(m) => m.get("url").and_then(Value::as_str).map(str::to_string),
        _ => None,
    }
    .filter(|u| !u.trim().is_empty())
}

/// The entry's featured image as its editor shows it: its own, or else
/// the cover of a post that has one (kept in its content before the
/// featured image was the post's one image), so saving makes it so.
fn featured_image(c: &Collection, e: &Entry) -> Option<String> {
    let cover = || copies_featured_image(c).then(|| image_url(e.content.get(POST_COVER))).flatten();
    e.featured_image.clone().or_else(cover)
}

/// The merge patch of an entry's content from its form: every field shown,
/// and a post's cover set to its featured image (or removed with it).
fn content_patch(c: &Collection, read: serde_json::Map<String, Value>, featured: Option<&str>) -> Value {
    let mut patch = form::patch(&shown_fields(c), read);
    if copies_featured_image(c) {
        // An image the featured image's rule refuses is refused there, once.
        let cover = featured.filter(|url| is_upload_url(url)).map_or(Value::Null, |url| Value::String(url.into()));
        patch[POST_COVER] = cover;
    }
    patch
}

/// `POST /collections/{slug}`: creates a draft and opens it.
pub async fn create(person: Person, Path(slug): Path<String>, Form(pairs): Form<Vec<(String, String)>>) -> Response {
    let (title, entry_slug) = (own(&pairs, "title").to_string(), own(&pairs, "slug").to_string());
    let mut content = Value::Null;
    let result = async {
        person.require(Permission::Write(EntityKind::Entry))?;
        let collection = person.content.collection(&slug).await?;
        content = Value::Object(form::read(&required(&collection), &pairs));
        let input = NewEntry {
            title: title.clone(),
            slug: entry_slug.clone(),
            content: Some(content.clone()),
            ..Default::default()
        };
        Ok::<_, WebError>(person.content.create_entry(&slug, input).await)
    }
    .await;
    match result {
        Ok(Ok(entry)) => Redirect::to(&format!("/entries/{}", entry.id)).into_response(),
        Ok(Err(e)) => {
            let errors = entry_errors(&e);
            let q = CursorQuery::default();
            refused(entries_page(&person, &slug, q, (title, entry_slug), content, errors).await)
        }
        Err(e) => e.into_response(),
    }
}

#[derive(Template)]
#[template(path = "entry.html")]
struct EntryPage {
    head: Head,
    frame: Frame,
    collection: Collection,
    noun: &'static str,
    /// The entry as stored: the heading and the meta line name it, even
    /// when the form shows a refused edit.
    stored: Entry,
    /// The entry as the form shows it.
    entry: Entry,
    /// The entry's own text fields, in form order.
    own: Vec<OwnField>,
    fields: String,
    statuses: &'static [EntryStatus],
    publishing: crate::publishing::Panel,
    errors: Errors,
    saved: bool,
    actions: Vec<actions::Offered>,
    languages: Vec<(String, String)>,
    /// The media library's newest images, for the featured image.
    library: Vec<form::LibraryImage>,
    /// The language switcher (empty on a site of one locale).
    locale_links: Vec<crate::translations::LocaleLink>,
    current_locale: String,
}

impl EntryPage {
    /// The error of the entry's own field `name`.
    fn error(&self, name: &str) -> Option<&String> {
        self.errors.get(&format!("entry.{name}"))
    }

    async fn new(
        person: &Person,
        collection: Collection,
        stored: Entry,
        entry: Entry,
        shown: Shown,
    ) -> Result<Self, WebError> {
        let library = library(person).await;
        let fields = form::render(&shown_fields(&collection), &entry.content, &shown.errors, &library);
        let noun = noun(&collection);
        let publishing = crate::publishing::Panel::of(
            person,
            EntityKind::Entry,
            &stored.id,
            format!("/entries/{}/publishing", stored.id),
        )
        .await?
        .previewed(person, EntityKind::Entry, &stored.id)
        .await?
        .after(shown.done.as_deref(), shown.release.as_deref());
        let languages = actions::languages(&person.content).await;
        let locale_links = crate::translations::switcher(person, "entries", EntityKind::Entry, &entry.id).await;
        let current_locale =
            locale_links.iter().find(|l| l.state == "default").map(|l| l.tag.clone()).unwrap_or_default();
        Ok(EntryPage {
            locale_links,
            current_locale,
            head: Head::new(),
            frame: Frame::new(person, "/collections"),
            own: OwnField::all(&entry, featured_image(&collection, &entry)),
            noun,
            collection,
            stored,
            entry,
            fields,
            statuses: EntryStatus::ALL,
            publishing,
            errors: shown.errors,
            saved: shown.saved,
            actions: actions::offered(noun, person.require(Permission::Write(EntityKind::Entry)).is_ok(), &languages),
            languages,
            library,
        })
    }

    /// The featured image picker's choices: the library's newest images,
    /// with the current one first when they do not hold it.
    fn image_choices(&self, value: &str) -> Vec<form::LibraryImage> {
        let (other, library) = form::LibraryImage::choices(&self.library, value);
        other.into_iter().chain(library.iter().cloned()).collect()
    }

    /// The thumbnail of the featured image chosen.
    fn thumb(&self, value: &str) -> Option<String> {
        form::LibraryImage::thumb_of(&self.library, value)
    }
}

/// One of the entry's own text inputs.
struct OwnField {
    /// Its name (`entry.<name>` in the form) and the field errors name.
    name: &'static str,
    label: &'static str,
    value: String,
    /// Whether it is an image, chosen from the media library.
    image: bool,
}

impl OwnField {
    fn all(e: &Entry, featured: Option<String>) -> Vec<OwnField> {
        let text = |o: &Option<String>| o.clone().unwrap_or_default();
        let f = |name, label, value| OwnField { name, label, value, image: false };
        vec![
            f("title", "Title", e.title.clone()),
            f("slug", "Slug", e.slug.clone()),
            f("author", "Author", text(&e.author)),
            f("category", "Category", text(&e.category)),
            f("tags", "Tags (separated by commas)", e.tags.join(", ")),
            OwnField { image: true, ..f("featuredImage", "Featured image", featured.unwrap_or_default()) },
        ]
    }
}

/// What an entry form shows besides the entry: errors, and whether it was
/// just saved.
struct Shown {
    errors: Errors,
    saved: bool,
    /// What the publishing panel just did.
    done: Option<String>,
    /// The release it just added the entry to.
    release: Option<String>,
}

/// `GET /entries/{id}`: the entry (or post) editor.
pub async fn edit(person: Person, Path(id): Path<String>, Query(q): Query<SavedQuery>) -> Response {
    let screen = async {
        let (entry, collection) = entry_in_place(&person.content, &id).await?;
        let shown = Shown { errors: Errors::new(), saved: q.saved.is_some(), done: q.done, release: q.release };
        Ok(Html(EntryPage::new(&person, collection, entry.clone(), entry, shown).await?.render()?))
    }
    .await;
    crate::removal::or_archived(&person, EntityKind::Entry, &id, screen).await
}

/// `POST /entries/{id}/publishing`: the publishing panel's forms, then
/// back to the editor; refused, the editor again with the reason in its
/// panel.
pub async fn publishing(person: Person, Path(id): Path<String>, Form(pairs): Form<Vec<(String, String)>>) -> Response {
    let refused = match crate::publishing::act(&person, EntityKind::Entry, &id, pairs).await {
        Outcome::Done(query) => return Redirect::to(&format!("/entries/{id}?{query}")).into_response(),
        Outcome::Failed(response) => return response,
        Outcome::Refused(shown) => shown,
    };
    let status = refused.status;
    let page = async {
        let (entry, collection) = entry_in_place(&person.content, &id).await?;
        let shown = Shown { errors: Errors::new(), saved: false, done: None, release: None };
        let mut page = EntryPage::new(&person, collection, entry.clone(), entry, shown).await?;
        page.publishing = refused.on(page.publishing);
        Ok(page)
    }
    .await;
    crate::pages::answered(status, page)
}

/// An entry with its collection.
async fn entry_in_place(content: &Content, id: &str) -> Result<(Entry, Collection), WebError> {
    let entry = content.entry(id).await?;
    let collection = content.collection(&entry.collection_id).await?;
    Ok((entry, collection))
}

/// The entry's own fields, named `entry.<field>` so a content field of
/// the same name cannot collide with them.
fn own<'a>(pairs: &'a [(String, String)], name: &str) -> &'a str {
    form::value(pairs, &format!("entry.{name}"))
}

/// The entry's own fields, as the store names them in errors.
const OWN: [&str; 8] = ["title", "slug", "status", "author", "category", "tags", "excerpt", "featuredImage"];

/// The errors of a refused entry write, keyed as the form names its
/// inputs: a content field by its path inside the content, the entry's
/// own fields as `entry.<field>` (`tags.3` names the tags), and anything
/// else under "" (shown at the top of the form), so every error shows.
fn entry_errors(e: &AppError) -> Errors {
    let mut out = Errors::new();
    for (key, message) in form::errors_of(e, "") {
        let target = match key.strip_prefix("content.") {
            Some(inner) => inner.to_string(),
            None => {
                let base = key.split(['.', '[']).next().unwrap_or_default();
                if OWN.contains(&base) { format!("entry.{base}") } else { String::new() }
            }
        };
        out.entry(target).or_insert(message);
    }
    out
}

/// `POST /entries/{id}`: saves the entry.
pub async fn update(person: Person, Path(id): Path<String>, Form(pairs): Form<Vec<(String, String)>>) -> Response {
    let prepared = async {
        person.require(Permission::Write(EntityKind::Entry))?;
        entry_in_place(&person.content, &id).await
    }
    .await;
    let (entry, collection) = match prepared {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    let read = form::read(&shown_fields(&collection), &pairs);
    let featured = form::optional(own(&pairs, "featuredImage"));
    let result = match (form::stale(&pairs, entry.version), entry_status(own(&pairs, "status"))) {
        (Some(e), _) | (None, Err(e)) => Err(e),
        (None, Ok(status)) => {
            // The status is sent when it changes: setting it publishes or
            // unpublishes; saving the rest changes the draft only.
            let status = status.filter(|s| *s != entry.status);
            let patch = EntryPatch {
                slug: Some(own(&pairs, "slug").to_string()),
                title: Some(own(&pairs, "title").to_string()),
                content: Some(content_patch(&collection, read.clone(), featured.as_deref())),
                status,
                author: Some(form::optional(own(&pairs, "author"))),
                category: Some(form::optional(own(&pairs, "category"))),
                tags: Some(form::tags(own(&pairs, "tags"))),
                excerpt: Some(form::optional(own(&pairs, "excerpt"))),
                featured_image: Some(featured.clone()),
            };
            person.content.update_entry(&id, patch).await
        }
    };
    match result {
        Ok(e) => Redirect::to(&format!("/entries/{}?saved=1", e.id)).into_response(),
        Err(e) => {
            let errors = entry_errors(&e);
            // Show what was typed, not what is stored.
            let mut typed = entry.clone();
            if let Ok(Some(status)) = entry_status(own(&pairs, "status")) {
                typed.status = status;
            }
            typed.title = own(&pairs, "title").to_string();
            typed.slug = own(&pairs, "slug").to_string();
            typed.author = form::optional(own(&pairs, "author"));
            typed.category = form::optional(own(&pairs, "category"));
            typed.tags = form::tags(own(&pairs, "tags"));
            typed.excerpt = form::optional(own(&pairs, "excerpt"));
            typed.featured_image = form::optional(own(&pairs, "featuredImage"));
            typed.content = Value::Object(read);
            let shown = Shown { errors, saved: false, done: None, release: None };
            refused(EntryPage::new(&person, collection, entry, typed, shown).await)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_land_on_the_input_that_names_them() {
        let e = form::refusal_of(&[
            ("content.author", "required"),
            ("author", "too long"),
            ("tags.3", "too long"),
            ("version", "moved on"),
        ]);
        let errors = entry_errors(&e);
        assert_eq!(errors["author"], "required");
        assert_eq!(errors["entry.author"], "too long");
        assert_eq!(errors["entry.tags"], "too long");
        assert_eq!(errors[""], "moved on");
    }

    #[test]
    fn own_fields_do_not_collide_with_content_fields() {
        let pairs = vec![("title".to_string(), "content".to_string()), ("entry.title".to_string(), "own".to_string())];
        assert_eq!(own(&pairs, "title"), "own");
        assert_eq!(own(&pairs, "author"), "");
    }
}
