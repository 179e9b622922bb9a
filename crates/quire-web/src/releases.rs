//! Releases and schedules: the list of releases with a form to make one
//! and the site's schedules (waiting, and with `?past=1` those that ran,
//! failed or were cancelled); one release with its documents, each one's
//! differences against the public site field by field and the conflict
//! that stops it, and what can be done to it as it stands (rename, remove
//! a document, stage one again or keep the release's copy, publish now,
//! schedule, unschedule, discard, revert).

use crate::Person;
use crate::error::{WebError, refusal};
use crate::form::Form;
use crate::form::{self, Errors};
use crate::frame::{Frame, Who, safe_back};
use crate::history::{FieldDiff, shown};
use crate::pages::{Head, answered};
use crate::publishing::does;
use crate::screen::DoneQuery;
use askama::Template;
use axum::extract::{Path, Query};
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::content::Content;
use quire_app::releases::{ItemReview, Release, ReleasePatch, Stage};
use quire_app::schedules::{Schedule, ScheduleTarget};
use quire_app::{AppError, Failure};
use quire_core::diff::{Change, Difference};
use quire_core::model::{EntityKind, JobStatus, ReleaseAction, ReleaseState};
use serde::Deserialize;
use std::collections::HashMap;

/// How late a schedule ran, in words.
fn lateness(ms: i64) -> String {
    if ms < 1_000 {
        "on time".into()
    } else if ms < 60_000 {
        format!("{} s late", ms / 1_000)
    } else if ms < 3_600_000 {
        format!("{} min late", ms / 60_000)
    } else {
        format!("{} h late", ms / 3_600_000)
    }
}

/// The editor of a document, and what one of its kind is called.
fn editor_of(kind: EntityKind, id: &str) -> (String, &'static str) {
    match kind {
        EntityKind::Page => (format!("/pages/{id}"), "Page"),
        EntityKind::Entry => (format!("/entries/{id}"), "Entry"),
        _ => (format!("/navigation/{id}"), "Menu"),
    }
}

/// A release in the list.
pub struct ReleaseRow {
    pub release: Release,
    pub by: String,
}

/// A schedule in the list.
pub struct ScheduleRow {
    pub schedule: Schedule,
    /// What it publishes, in words.
    pub what: String,
    /// Where that is edited.
    pub href: String,
    /// Publish or unpublish, in words.
    pub does: &'static str,
    pub by: String,
    /// Whether it is still to run (it can be cancelled).
    pub waiting: bool,
    /// How late it ran, once it ran.
    pub late: String,
}

#[derive(Template)]
#[template(path = "releases.html")]
struct ReleasesPage {
    head: Head,
    frame: Frame,
    rows: Vec<ReleaseRow>,
    state: String,
    states: &'static [ReleaseState],
    schedules: Vec<ScheduleRow>,
    past: bool,
    new_name: String,
    new_description: String,
    errors: Errors,
}

/// Which releases and schedules to list.
#[derive(Deserialize, Default)]
pub struct ListQuery {
    #[serde(default)]
    state: String,
    #[serde(default)]
    past: String,
}

/// The site's schedules as a list shows them: what each publishes, named.
async fn schedule_rows(
    person: &Person,
    who: &mut Who,
    all: bool,
    releases: &[Release],
) -> Result<Vec<ScheduleRow>, WebError> {
    let content = &person.content;
    let mut rows = Vec::new();
    let schedules = content.schedules(all).await?;
    who.learn(person, schedules.iter().map(|s| s.created_by.as_str())).await;
    for mut schedule in schedules {
        let (what, href) = match schedule.target.as_str() {
            "release" => {
                let release = releases.iter().find(|r| r.id == schedule.target_id);
                // Why it failed names each document with its id too; its label is enough here.
                for item in release.map(|r| r.items.as_slice()).unwrap_or_default() {
                    schedule.error = schedule.error.map(|e| e.replace(&format!(" ({})", item.id), ""));
                }
                let name = release.map(|r| r.name.clone()).unwrap_or_default();
                (format!("Release “{name}”"), format!("/releases/{}", schedule.target_id))
            }
            kind => {
                let kind = EntityKind::parse("target", kind).unwrap_or(EntityKind::Page);
                let (href, noun) = editor_of(kind, &schedule.target_id);
                let name = document_name(content, kind, &schedule.target_id).await;
                (format!("{noun} “{}”", name.unwrap_or_else(|| "(archived)".into())), href)
            }
        };
        let waiting = matches!(schedule.status, JobStatus::Queued);
        rows.push(ScheduleRow {
            what,
            href,
            does: if schedule.action == "unpublish" { "Unpublish" } else { "Publish" },
            by: who.name(&schedule.created_by),
            waiting,
            late: schedule.late_ms.map(lateness).unwrap_or_default(),
            schedule,
        });
    }
    Ok(rows)
}

/// A document's readable name as it is now; none when it is gone.
async fn document_name(content: &Content, kind: EntityKind, id: &str) -> Option<String> {
    let found = match kind {
        EntityKind::Page => content.page(id).await.map(|p| p.name),
        EntityKind::Entry => content.entry(id).await.map(|e| e.title),
        _ => content.navigation(id).await.map(|n| n.name),
    };
    found.ok()
}

async fn releases_page(
    person: &Person,
    q: ListQuery,
    typed: (String, String),
    errors: Errors,
) -> Result<ReleasesPage, WebError> {
    let content = &person.content;
    let state = form::choice(&q.state, |s| ReleaseState::parse("state", s)).map_err(WebError::listing)?;
    let all = content.releases(None).await?;
    let past = !q.past.is_empty();
    let mut who = Who::named(person, all.iter().map(|r| r.created_by.as_str())).await;
    let schedules = schedule_rows(person, &mut who, past, &all).await?;
    let rows = all
        .into_iter()
        .filter(|r| state.is_none_or(|s| r.state == s))
        .map(|release| ReleaseRow { by: who.name(&release.created_by), release })
        .collect();
    Ok(ReleasesPage {
        head: Head::new(),
        frame: Frame::new(person, "/releases"),
        rows,
        state: q.state,
        states: ReleaseState::ALL,
        schedules,
        past,
        new_name: typed.0,
        new_description: typed.1,
        errors,
    })
}

/// `GET /releases`: the releases, newest first (of one state with
/// `?state=`), the form to make one, and the schedules.
pub async fn list(person: Person, Query(q): Query<ListQuery>) -> Result<Html<String>, WebError> {
    Ok(Html(releases_page(&person, q, Default::default(), Errors::new()).await?.render()?))
}

/// The new release form.
#[derive(Deserialize)]
pub struct NewReleaseForm {
    name: String,
    #[serde(default)]
    description: String,
}

/// `POST /releases`: makes an open release and opens it.
pub async fn create(person: Person, Form(f): Form<NewReleaseForm>) -> Response {
    let description = form::optional(&f.description);
    match person.content.create_release(&f.name, description.as_deref()).await {
        Ok(release) => Redirect::to(&format!("/releases/{}?done=created", release.id)).into_response(),
        Err(e) if e.failure == Failure::Forbidden => WebError::from(e).into_response(),
        Err(e) => {
            let status = refusal(&e).0;
            let errors = form::errors_of(&e, "");
            answered(status, releases_page(&person, ListQuery::default(), (f.name, f.description), errors).await)
        }
    }
}

/// `POST /schedules/{id}/cancel`: cancels a schedule that has not run,
/// then goes `back`.
pub async fn cancel_schedule(
    person: Person,
    Path(id): Path<String>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    match person.content.cancel_schedule(&id).await {
        Ok(_) => Redirect::to(&safe_back(Some(form::value(&pairs, "back")))).into_response(),
        Err(e) if matches!(e.failure, Failure::Forbidden | Failure::NotFound) => WebError::from(e).into_response(),
        Err(e) => {
            let status = refusal(&e).0;
            let errors = Errors::from([("schedules".to_string(), refusal(&e).1)]);
            answered(status, releases_page(&person, ListQuery::default(), Default::default(), errors).await)
        }
    }
}

/// One record of a document that differs, as the release screen shows it.
pub struct RecordDiff {
    /// What the record is (`Page “Home”`, `Hero section: Welcome`).
    pub title: String,
    /// new, removed or changed.
    pub change: &'static str,
    pub fields: Vec<FieldDiff>,
}

/// A document of the release as its screen shows it.
pub struct ItemView {
    /// Its kind's wire name (page, entry, navigation).
    pub kind: &'static str,
    /// The locale of its translation the release carries, if it is one.
    pub locale: Option<String>,
    /// What one of its kind is called.
    pub noun: &'static str,
    pub id: String,
    /// Its name now.
    pub label: String,
    /// The label the release holds for it (its name when it was staged).
    staged_label: String,
    /// What the release does to it: its wire name and in words.
    pub action: &'static str,
    pub does: &'static str,
    /// Its editor.
    pub href: String,
    pub records: Vec<RecordDiff>,
    /// Why the release cannot publish (or revert) as it stands.
    pub conflict: Option<String>,
}

/// What a document's parts (a page's sections, a menu's items) are
/// called, by id, as they are now.
async fn part_names(content: &Content, kind: EntityKind, id: &str) -> HashMap<String, String> {
    let mut names = HashMap::new();
    match kind {
        EntityKind::Page => {
            let templates = content.templates(100, None).await.map(|l| l.items).unwrap_or_default();
            for s in content.sections(id, 100, None).await.map(|l| l.items).unwrap_or_default() {
                let template = templates
                    .iter()
                    .find(|t| t.key == s.template_key)
                    .map_or(s.template_key.clone(), |t| t.name.clone());
                let summary = crate::pages::summary(&s.content);
                let title = if summary.is_empty() {
                    format!("{template} section")
                } else {
                    format!("{template} section: {summary}")
                };
                names.insert(s.id, title);
            }
        }
        EntityKind::Navigation => {
            for i in content.nav_items(id, None, 100, None).await.map(|l| l.items).unwrap_or_default() {
                names.insert(i.id, format!("Menu item “{}”", i.label));
            }
        }
        _ => {}
    }
    names
}

/// What a part that is no longer there was, from its fields.
pub(crate) fn part_title(d: &Difference) -> String {
    let field = |name: &str| {
        d.fields
            .iter()
            .find(|f| f.field == name)
            .and_then(|f| f.after.as_str().or(f.before.as_str()))
            .map(str::to_string)
    };
    if let Some(template) = field("templateKey") {
        format!("Section ({template})")
    } else if let Some(label) = field("label") {
        format!("Menu item “{label}”")
    } else {
        "A part".into()
    }
}

/// A document of a release as the screens show it: named as it is now,
/// each of its records' differences field by field, and its conflict.
pub(crate) async fn item_view(content: &Content, item: ItemReview) -> ItemView {
    let (mut href, noun) = editor_of(item.entity, &item.id);
    // Named as it is now (the release holds its name when it was staged).
    let mut label = document_name(content, item.entity, &item.id).await.unwrap_or_else(|| item.label.clone());
    if let Some(locale) = &item.locale {
        label = format!("{label} ({locale})");
        if item.entity != EntityKind::Navigation {
            href = format!("{href}/translations/{locale}");
        }
    }
    let parts = if item.differences.iter().any(|d| d.part) {
        part_names(content, item.entity, &item.id).await
    } else {
        HashMap::new()
    };
    let records = item
        .differences
        .iter()
        .map(|d| RecordDiff {
            title: match d.part {
                false => format!("{noun} “{label}”"),
                true => parts.get(&d.id).cloned().unwrap_or_else(|| part_title(d)),
            },
            change: match d.change {
                Change::Added => "new",
                Change::Removed => "removed",
                Change::Changed => "changed",
            },
            fields: d
                .fields
                .iter()
                .map(|f| FieldDiff {
                    key: f.field.clone(),
                    before: shown(Some(&f.before)),
                    after: shown(Some(&f.after)),
                })
                .collect(),
        })
        .collect();
    let mut view = ItemView {
        kind: item.entity.as_str(),
        locale: item.locale,
        noun,
        label,
        staged_label: item.label,
        action: item.action.as_str(),
        does: does(item.action),
        href,
        records,
        conflict: None,
        id: item.id,
    };
    view.conflict = item.conflict.map(|c| view.named(&c));
    view
}

impl ItemView {
    /// `message` of the store, which names the document by the label it
    /// was staged with and its id, naming it as the screen does.
    fn named(&self, message: &str) -> String {
        message.replace(&format!("\"{}\" ({})", self.staged_label, self.id), &format!("“{}”", self.label))
    }
}

#[derive(Template)]
#[template(path = "release.html")]
struct ReleasePage {
    head: Head,
    frame: Frame,
    release: Release,
    items: Vec<ItemView>,
    by: String,
    published_by: String,
    reverted_by: String,
    /// Who scheduled it, while it is scheduled.
    scheduled_by: String,
    done: &'static str,
    /// Why a form was refused, by the input it names ("" for the screen).
    errors: Errors,
    /// What a refused form held.
    typed: Vec<(String, String)>,
    /// Whether any document has a conflict.
    conflicts: bool,
}

impl ReleasePage {
    /// What the refused form held in `name`, or else `stored`.
    fn typed_or<'a>(&'a self, name: &str, stored: &'a str) -> &'a str {
        if self.typed.iter().any(|(k, _)| k == name) { form::value(&self.typed, name) } else { stored }
    }

    fn is(&self, state: &str) -> bool {
        self.release.state.as_str() == state
    }
}

async fn release_page(
    person: &Person,
    id: &str,
    done: Option<&str>,
    errors: Errors,
    typed: Vec<(String, String)>,
) -> Result<ReleasePage, WebError> {
    let content = &person.content;
    let (review, _) = content.release_review(id).await?;
    let mut items = Vec::new();
    for item in review.items {
        items.push(item_view(content, item).await);
    }
    let release = review.release;
    let waiting = match release.state {
        ReleaseState::Scheduled => content
            .schedules(false)
            .await?
            .into_iter()
            .find(|s| s.target == "release" && s.target_id == release.id && s.status == JobStatus::Queued),
        _ => None,
    };
    // The store's words name a document by its staged label and id.
    let errors = errors.into_iter().map(|(k, m)| (k, items.iter().fold(m, |m, i| i.named(&m)))).collect();
    let actors = [Some(&release.created_by), release.published_by.as_ref(), release.reverted_by.as_ref()];
    let who = Who::named(
        person,
        actors.into_iter().flatten().map(String::as_str).chain(waiting.iter().map(|s| s.created_by.as_str())),
    )
    .await;
    let done = match done {
        Some("created") => "Release made: add documents from their editors' Publishing panel.",
        Some("saved") => "Saved.",
        Some("staged") => "Staged again: the release holds the draft as it is now.",
        Some("kept") => "The release keeps its copy.",
        Some("removed") => "Removed from the release.",
        Some("published") => "Published: every document of the release is on the site.",
        Some("reverted") => "Reverted: the site shows what it showed before the release.",
        Some("discarded") => "Discarded: the release will not be published.",
        Some("scheduled") => "Scheduled.",
        Some("unscheduled") => "Unscheduled: the release is open again.",
        _ => "",
    };
    Ok(ReleasePage {
        head: Head::new(),
        frame: Frame::new(person, "/releases"),
        by: who.name(&release.created_by),
        published_by: release.published_by.as_deref().map(|a| who.name(a)).unwrap_or_default(),
        reverted_by: release.reverted_by.as_deref().map(|a| who.name(a)).unwrap_or_default(),
        conflicts: items.iter().any(|i| i.conflict.is_some()),
        scheduled_by: waiting.map(|s| who.name(&s.created_by)).unwrap_or_default(),
        items,
        release,
        done,
        errors,
        typed,
    })
}

/// `GET /releases/{id}`: a release with its documents and their
/// differences.
pub async fn show(
    person: Person,
    Path(id): Path<String>,
    Query(q): Query<DoneQuery>,
) -> Result<Html<String>, WebError> {
    Ok(Html(release_page(&person, &id, q.done.as_deref(), Errors::new(), Vec::new()).await?.render()?))
}

/// `POST /releases/{id}`: renames or redescribes an open release.
pub async fn update(person: Person, Path(id): Path<String>, Form(pairs): Form<Vec<(String, String)>>) -> Response {
    let result = async {
        let (review, _) = person.content.release_review(&id).await?;
        if let Some(e) = form::stale(&pairs, review.release.version) {
            return Err(e);
        }
        let patch = ReleasePatch {
            name: Some(form::value(&pairs, "name").to_string()),
            description: Some(form::value(&pairs, "description").to_string()),
        };
        person.content.update_release(&id, patch).await
    }
    .await;
    match result {
        Ok(_) => Redirect::to(&format!("/releases/{id}?done=saved")).into_response(),
        Err(e) => {
            let errors = form::errors_of(&e, "");
            refused(&person, &id, e, errors, pairs).await
        }
    }
}

/// The release screen again with why `e` refused what was asked, under the
/// status REST gives it; a refusal to the person, or a release that is not
/// there, is the error page.
async fn refused(person: &Person, id: &str, e: AppError, mut errors: Errors, pairs: Vec<(String, String)>) -> Response {
    if matches!(e.failure, Failure::Forbidden | Failure::NotFound | Failure::Internal) {
        return WebError::from(e).into_response();
    }
    let (status, message) = refusal(&e);
    if errors.is_empty() {
        errors.insert(String::new(), message);
    }
    let typed = pairs.into_iter().filter(|(k, _)| k != crate::CSRF_FIELD).collect();
    answered(status, release_page(person, id, None, errors, typed).await)
}

/// `POST /releases/{id}/{action}`: stage (again, or keep the release's
/// copy), unstage, publish, revert, discard, schedule or unschedule, then
/// back to the release saying what was done.
pub async fn act(
    person: Person,
    Path((id, action)): Path<(String, String)>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let content = &person.content;
    let get = |k: &str| form::value(&pairs, k).trim().to_string();
    let kind = || EntityKind::parse("entity", &get("entity")).map_err(form::invalid);
    let locale = || Some(get("locale")).filter(|l| !l.is_empty());
    let result: Result<&str, AppError> = async {
        match action.as_str() {
            "stage" => {
                let keep = get("keep") == "true";
                let action = ReleaseAction::parse("action", &get("action")).map_err(form::invalid)?;
                let stage = Stage { entity: kind()?, name: get("document"), action, keep, locale: locale() };
                content.stage(&id, stage).await?;
                Ok(if keep { "kept" } else { "staged" })
            }
            "unstage" => {
                content.unstage(&id, kind()?, &get("document"), locale().as_deref()).await?;
                Ok("removed")
            }
            "publish" => content.publish_release(&id, None).await.map(|_| "published"),
            "revert" => content.revert_release(&id, None).await.map(|_| "reverted"),
            "discard" => content.discard_release(&id).await.map(|_| "discarded"),
            "schedule" => {
                let at = form::time(&pairs)?;
                content.schedule(ScheduleTarget::Release(id.clone()), at).await?;
                Ok("scheduled")
            }
            "unschedule" => {
                let waiting = content
                    .schedules(false)
                    .await?
                    .into_iter()
                    .find(|s| s.target == "release" && s.target_id == id && s.status == JobStatus::Queued);
                let Some(waiting) = waiting else {
                    return Err(AppError::conflict("this release is not waiting for a schedule"));
                };
                content.cancel_schedule(&waiting.id).await?;
                Ok("unscheduled")
            }
            other => Err(AppError::not_found(format!("a release has no action \"{other}\""))),
        }
    }
    .await;
    match result {
        Ok(done) => Redirect::to(&format!("/releases/{id}?done={done}")).into_response(),
        Err(e) => {
            let e = match (e.failure, action.as_str()) {
                // A document that is gone is said on the release screen
                // (a release that is gone cannot be shown: the error page).
                (Failure::NotFound, "stage" | "unstage") => AppError::conflict(e.message),
                _ => e,
            };
            // A time is shown beside its input; anything else at the top.
            let errors = match e.field.as_deref() {
                Some("at") => Errors::from([("at".to_string(), rule_of(&e))]),
                _ => Errors::new(),
            };
            refused(&person, &id, e, errors, pairs).await
        }
    }
}

/// The rule a refusal names its field with, without the field.
fn rule_of(e: &AppError) -> String {
    let field = e.field.as_deref().unwrap_or_default();
    e.message.strip_prefix(field).and_then(|m| m.strip_prefix(": ")).unwrap_or(&e.message).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_reads_in_the_largest_unit() {
        assert_eq!(lateness(120), "on time");
        assert_eq!(lateness(4_200), "4 s late");
        assert_eq!(lateness(125_000), "2 min late");
        assert_eq!(lateness(7_300_000), "2 h late");
    }
}
