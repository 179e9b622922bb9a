//! Finding things: the dashboard a person lands on after signing in, the
//! search across the site (`/search`, which the header's search field
//! opens — `/` or Ctrl+K with the script), and bulk actions on the pages'
//! and entries' lists. Searching is `quire_app::search`, the tools' own
//! ranking; bulk publishing is `Content::publish` per document, and bulk
//! archiving is one `Content::archive` (all or none, as REST's `DELETE`
//! is decided), asked first with what goes along.

use crate::Person;
use crate::error::{WebError, refusal};
use crate::frame::{Frame, Who};
use crate::names::{Records, noun, screen_of};
use crate::removal::Confirm;
use crate::screen::{Head, answered};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::content::ChangeFilter;
use quire_app::dashboard::Unpublished;
use quire_app::search::Found;
use quire_core::access::Permission;
use quire_core::model::{EntityKind, Image};
use quire_server::AppState;
use serde::Deserialize;

/// Rows each part of the dashboard shows.
const SHOWN: usize = 8;

/// Hits of each kind the search screen shows.
const PER_KIND: u32 = 10;

/// A change as the dashboard lists it.
pub struct ChangeLine {
    pub id: i64,
    pub action: String,
    pub noun: &'static str,
    pub label: String,
    pub href: Option<String>,
    pub by: String,
    /// When, RFC 3339 and as shown.
    pub at: String,
    pub at_shown: String,
}

/// A pending approval as the dashboard lists it.
pub struct PendingLine {
    pub tool: String,
    pub message: String,
    pub by: String,
}

/// An unpublished draft with its screen.
pub struct DraftLine {
    pub draft: Unpublished,
    pub noun: &'static str,
    pub href: String,
}

#[derive(Template)]
#[template(path = "dashboard.html")]
struct Dashboard {
    head: Head,
    frame: Frame,
    pending: Vec<PendingLine>,
    mine: Vec<ChangeLine>,
    everyone: Vec<ChangeLine>,
    drafts: Vec<DraftLine>,
    no_alt: Vec<crate::card::Card>,
    /// The History screen of the person's own changes.
    my_history: String,
    /// The agent's actions over the whole site.
    actions: Vec<crate::actions::Offered>,
    languages: Vec<(String, String)>,
}

/// The latest changes matching `filter`, named.
async fn changes(person: &Person, filter: &ChangeFilter) -> Result<Vec<ChangeLine>, WebError> {
    let listed = person.content.change_summaries(filter, SHOWN as u32, None).await?.items;
    let who = Who::named(person, listed.iter().map(|c| c.change.actor.as_str())).await;
    let records = Records::of(person, listed.iter().map(|c| (c.change.entity, c.change.entity_id.as_str()))).await;
    Ok(listed
        .into_iter()
        .map(|s| {
            let c = s.change;
            let named = records.named(c.entity, &c.entity_id);
            ChangeLine {
                id: c.id,
                action: c.action.to_string(),
                noun: named.noun,
                label: named.label,
                href: named.href,
                by: who.name(&c.actor),
                at: c.at.to_rfc3339(),
                at_shown: c.at.format("%Y-%m-%d %H:%M").to_string(),
            }
        })
        .collect())
}

/// `GET /`: pending approvals, recent changes (the person's and
/// everyone's), drafts not on the site, images without alt text.
pub async fn dashboard(State(state): State<AppState>, person: Person) -> Result<Html<String>, WebError> {
    let mine_filter = ChangeFilter { actor: Some(person.actor().id.clone()), ..Default::default() };
    let pending = quire_app::approvals::pending(state.runtime(), person.actor()).await;
    let mine = changes(&person, &mine_filter).await;
    let everyone = changes(&person, &ChangeFilter::default()).await;
    let drafts = person.content.unpublished_drafts(SHOWN).await;
    let no_alt = person.content.images_without_alt(SHOWN).await;
    // Approvals are for those who may answer them; others see none.
    let pending = pending.unwrap_or_default();
    let who = Who::named(&person, pending.iter().map(|c| c.requested_by.as_str())).await;
    let mut lines = Vec::new();
    for c in pending.into_iter().take(SHOWN) {
        let items = c.preview.get("items").cloned().unwrap_or_default();
        let (message, _, _) = crate::sidebar::asked_in_words(&person, &c.tool, &c.args, &items).await;
        lines.push(PendingLine { message, by: who.name(&c.requested_by), tool: c.tool });
    }
    let pending = lines;
    let drafts = drafts?
        .into_iter()
        .map(|d| DraftLine { noun: noun(d.entity), href: screen_of(d.entity, &d.id).unwrap_or_default(), draft: d })
        .collect();
    let languages = crate::actions::languages(&person.content).await;
    let writes = person.require(quire_core::access::Permission::Write(quire_core::model::EntityKind::Page)).is_ok();
    let what = "every page, post and entry of the site, and each menu's labels";
    let page = Dashboard {
        actions: crate::actions::translate_missing(what, writes, &languages),
        languages,
        head: Head::new(),
        frame: Frame::new(&person, "/"),
        pending,
        mine: mine?,
        everyone: everyone?,
        drafts,
        no_alt: no_alt?.into_iter().map(crate::card::Card::of).collect(),
        my_history: format!("/history?actor={}", crate::error::urlencode(&person.actor().id)),
    };
    Ok(Html(page.render()?))
}

#[derive(Deserialize)]
pub struct SearchQuery {
    #[serde(default)]
    q: String,
}

/// A screen of the back-office a search names.
pub struct ScreenHit {
    pub path: &'static str,
    pub name: &'static str,
}

#[derive(Template)]
#[template(path = "search.html")]
struct SearchPage {
    head: Head,
    frame: Frame,
    q: String,
    found: Found,
    screens: Vec<ScreenHit>,
    /// Why the query was refused.
    error: Option<String>,
}

impl SearchPage {
    fn image_label(&self, image: &Image) -> String {
        image.alt.clone().filter(|a| !a.trim().is_empty()).unwrap_or_else(|| image.filename.clone())
    }
}

/// `GET /search?q=`: pages, entries, images, notes and screens matching.
pub async fn search(State(state): State<AppState>, person: Person, Query(q): Query<SearchQuery>) -> Response {
    let frame = Frame::new(&person, "/search");
    let query = q.q.trim().to_string();
    let words = query.to_lowercase();
    let screens = if words.is_empty() {
        Vec::new()
    } else {
        frame
            .nav
            .iter()
            .filter(|(_, name, _)| name.to_lowercase().contains(&words))
            .map(|(path, name, _)| ScreenHit { path, name })
            .collect()
    };
    let (found, error, status) = if query.is_empty() {
        (Found::default(), None, StatusCode::OK)
    } else {
        match quire_app::search::everything(state.registry(), person.actor(), &query, PER_KIND).await {
            Ok(found) => (found, None, StatusCode::OK),
            Err(e) => {
                let (status, message) = refusal(&e);
                (Found::default(), Some(message), status)
            }
        }
    };
    answered(status, Ok(SearchPage { head: Head::new(), frame, q: query, found, screens, error }))
}

/// A bulk action's form: the action and the chosen ids.
pub struct Bulk {
    action: String,
    ids: Vec<String>,
    confirmed: bool,
}

impl Bulk {
    fn of(pairs: &[(String, String)]) -> Self {
        let value = |k: &str| pairs.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone()).unwrap_or_default();
        let mut ids: Vec<String> = pairs.iter().filter(|(k, _)| k == "ids").map(|(_, v)| v.clone()).collect();
        ids.dedup();
        Bulk { action: value("action"), ids, confirmed: value("confirmed") == "yes" }
    }
}

/// Runs a bulk action on documents of `kind` and answers where to go:
/// `back` with what was done, or the archive's question first.
async fn act(person: &Person, kind: EntityKind, bulk: Bulk, back: &str, action_url: &str) -> Response {
    let plural = if kind == EntityKind::Entry { "entries" } else { "pages" };
    if bulk.ids.is_empty() {
        return Redirect::to(&format!("{back}{}bulk=none", sep(back))).into_response();
    }
    match bulk.action.as_str() {
        "publish" | "unpublish" => {
            let (mut done, mut failed) = (0, Vec::new());
            for id in &bulk.ids {
                let result = if bulk.action == "publish" {
                    person.content.publish(kind, id).await
                } else {
                    person.content.unpublish(kind, id).await
                };
                match result {
                    Ok(_) => done += 1,
                    Err(e) if e.failure == quire_app::Failure::Forbidden => return WebError::from(e).into_response(),
                    Err(_) => failed.push(id.clone()),
                }
            }
            let to = format!("{back}{}bulk={}&done={done}&failed={}", sep(back), bulk.action, failed.len());
            Redirect::to(&to).into_response()
        }
        "archive" if bulk.confirmed => match person.content.archive(kind, &bulk.ids).await {
            Ok(archived) => Redirect::to(&format!("{back}{}bulk=archive&done={}&failed=0", sep(back), archived.len()))
                .into_response(),
            Err(e) => {
                let (status, message) = refusal(&e);
                answered(
                    status,
                    archive_question(person, kind, &bulk, back, action_url, plural).await.map(|mut c| {
                        c.error = Some(message);
                        c
                    }),
                )
            }
        },
        "archive" => answered(StatusCode::OK, archive_question(person, kind, &bulk, back, action_url, plural).await),
        other => WebError::Status(
            StatusCode::BAD_REQUEST,
            format!("action \"{other}\" is not one of publish, unpublish, archive"),
        )
        .into_response(),
    }
}

fn sep(url: &str) -> char {
    if url.contains('?') { '&' } else { '?' }
}

/// "Archive 3 pages and their 4 sections?", with each named.
async fn archive_question(
    person: &Person,
    kind: EntityKind,
    bulk: &Bulk,
    back: &str,
    action_url: &str,
    plural: &str,
) -> Result<Confirm, WebError> {
    person.require(Permission::Delete(kind))?;
    let previews = crate::removal::named(person, person.content.archive_preview(kind, &bulk.ids).await?).await;
    let roots: Vec<String> = previews.iter().filter_map(|p| p.first()).map(|i| format!("“{}”", i.label)).collect();
    let along: Vec<String> =
        previews.iter().flat_map(|p| p.iter().skip(1)).map(|i| format!("{} “{}”", noun(i.entity), i.label)).collect();
    let question = if roots.len() == 1 {
        crate::removal::archive_question(&previews[0])
    } else {
        format!("Archive {} {plural}: {}?", roots.len(), roots.join(", "))
    };
    let mut fields: Vec<(String, String)> = bulk.ids.iter().map(|id| ("ids".to_string(), id.clone())).collect();
    fields.push(("action".into(), "archive".into()));
    fields.push(("confirmed".into(), "yes".into()));
    Ok(Confirm::asking(
        person,
        question,
        along,
        action_url.to_string(),
        format!("Archive the {plural}"),
        back.into(),
        fields,
    ))
}

/// `POST /pages/bulk`: publish, unpublish or archive the chosen pages.
pub async fn pages(person: Person, crate::form::Form(pairs): crate::form::Form<Vec<(String, String)>>) -> Response {
    let back = pairs.iter().find(|(k, _)| k == "back").map(|(_, v)| v.as_str()).unwrap_or("");
    let back =
        if back.is_empty() { "/pages".to_string() } else { format!("/pages?parent={}", crate::error::urlencode(back)) };
    act(&person, EntityKind::Page, Bulk::of(&pairs), &back, "/pages/bulk").await
}

/// `POST /collections/{slug}/bulk`: the same for a collection's entries.
pub async fn entries(
    person: Person,
    Path(slug): Path<String>,
    crate::form::Form(pairs): crate::form::Form<Vec<(String, String)>>,
) -> Response {
    let slug = crate::error::urlencode(&slug);
    act(
        &person,
        EntityKind::Entry,
        Bulk::of(&pairs),
        &format!("/collections/{slug}"),
        &format!("/collections/{slug}/bulk"),
    )
    .await
}
