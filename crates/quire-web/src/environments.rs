//! The Environments screen (decision 0051): the site's environments with,
//! for its administrators, the forms that make one (empty or as a copy of
//! another), rename, lock and archive it; and the comparison of two,
//! record by record and field by field, with the form that promotes the
//! chosen records (each conflict settled for one side) and the promotions
//! into the target, each with its Undo. Everything goes through
//! `quire_app::environments`, which decides who may.

use crate::Person;
use crate::error::{WebError, refusal, urlencode};
use crate::form::{self, Errors, Form};
use crate::frame::{Frame, Who};
use crate::history::{FieldDiff, shown};
use crate::names::noun;
use crate::releases::{RecordDiff, part_title};
use crate::removal::Confirm;
use crate::screen::DoneQuery;
use crate::screen::{Head, answered};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::content::Content;
use quire_app::environments::{
    self as envs, ChangedIn, EnvChange, EnvDifference, Environment, Promotion, PromotionRequest, Resolution,
};
use quire_app::names::{RecordName, RecordRef};
use quire_app::{AppError, Failure, Permission};
use quire_core::diff::Change;
use quire_server::AppState;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

/// What a screen was told was done, in words.
fn done_words(done: Option<&str>) -> &'static str {
    match done {
        Some("created") => "Environment made.",
        Some("renamed") => "Renamed.",
        Some("locked") => "Locked: content reaches it only by promotion.",
        Some("unlocked") => "Unlocked: it can be written directly again.",
        Some("archived") => "Archived: its tokens stop; what it holds is kept.",
        Some("restored") => "Restored.",
        Some("promoted") => "Promoted: the chosen records were written as one change set.",
        Some("undone") => "Undone: the environment holds again what it held before the promotion.",
        _ => "",
    }
}

#[derive(Template)]
#[template(path = "environments.html")]
struct ListPage {
    head: Head,
    frame: Frame,
    environments: Vec<Environment>,
    done: &'static str,
    /// Why a row's action was refused.
    error: Option<String>,
    /// Why the new environment's form was refused, by input ("" for the form).
    errors: Errors,
    /// What that form held: key, name, from.
    typed: (String, String, String),
}

async fn list_page(
    state: &AppState,
    person: &Person,
    done: Option<&str>,
    error: Option<String>,
    errors: Errors,
    typed: (String, String, String),
) -> Result<ListPage, WebError> {
    let environments = envs::list(state.registry().services(), person.actor()).await?;
    Ok(ListPage {
        head: Head::new(),
        frame: Frame::new(person, "/environments"),
        environments,
        done: done_words(done),
        error,
        errors,
        typed,
    })
}

/// `GET /environments`: the site's environments and, for its
/// administrators, the forms that change them.
pub async fn list(
    State(state): State<AppState>,
    person: Person,
    Query(q): Query<DoneQuery>,
) -> Result<Html<String>, WebError> {
    Ok(Html(list_page(&state, &person, q.done.as_deref(), None, Errors::new(), Default::default()).await?.render()?))
}

/// The new environment's form.
#[derive(Deserialize)]
pub struct NewEnvironment {
    key: String,
    #[serde(default)]
    name: String,
    /// The environment copied; empty: an empty one.
    #[serde(default)]
    from: String,
}

/// `POST /environments`: makes one, empty or as a copy.
pub async fn create(State(state): State<AppState>, person: Person, Form(f): Form<NewEnvironment>) -> Response {
    let key = f.key.trim();
    let name = form::optional(&f.name);
    let from = form::optional(&f.from);
    match envs::create(state.registry().services(), person.actor(), key, name.as_deref(), from.as_deref()).await {
        Ok(_) => Redirect::to("/environments?done=created").into_response(),
        Err(e) if e.failure == Failure::Forbidden => WebError::from(e).into_response(),
        Err(e) => {
            let status = refusal(&e).0;
            let errors = placed(&e, &["key", "name", "from"]);
            answered(status, list_page(&state, &person, None, None, errors, (f.key, f.name, f.from)).await)
        }
    }
}

/// A refusal's errors by the inputs of a form that has `inputs`; any other
/// (an environment's key is `environments` to the store) under "".
fn placed(e: &AppError, inputs: &[&str]) -> Errors {
    let mut errors = Errors::new();
    for (field, message) in form::errors_of(e, "") {
        let field = match field.as_str() {
            "environments" | "env" => "key".to_string(),
            f if inputs.contains(&f) => field,
            _ => String::new(),
        };
        errors.entry(field).or_insert(message);
    }
    if errors.is_empty() {
        errors.insert(String::new(), refusal(e).1);
    }
    errors
}

/// The list again with why a row's action was refused, or the error page
/// for a refusal to the person.
async fn row_refused(state: &AppState, person: &Person, e: AppError) -> Response {
    if matches!(e.failure, Failure::Forbidden | Failure::Internal) {
        return WebError::from(e).into_response();
    }
    let (status, message) = refusal(&e);
    answered(status, list_page(state, person, None, Some(message), Errors::new(), Default::default()).await)
}

/// `POST /environments/{key}`: renames it (`name`), or locks or unlocks it
/// (`locked`: true or false).
pub async fn update(
    State(state): State<AppState>,
    person: Person,
    Path(key): Path<String>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let services = state.registry().services();
    let (result, done) = match form::checked(&pairs, "locked") {
        Some(locked) => (
            envs::update(services, person.actor(), &key, None, Some(locked)).await,
            if locked { "locked" } else { "unlocked" },
        ),
        None => {
            let name = form::value(&pairs, "name").trim();
            (envs::update(services, person.actor(), &key, Some(name), None).await, "renamed")
        }
    };
    match result {
        Ok(_) => Redirect::to(&format!("/environments?done={done}")).into_response(),
        Err(e) => row_refused(&state, &person, e).await,
    }
}

/// The question archiving environment `key` asks.
async fn archive_screen(state: &AppState, person: &Person, key: &str) -> Result<Confirm, WebError> {
    person.require(Permission::Administer)?;
    let env = envs::get(state.registry().services(), person.actor(), key).await?;
    Ok(Confirm::about(
        person,
        "/environments",
        format!("Archive the environment {}?", env.name),
        format!("/environments/{}/archive", urlencode(key)),
        "Archive the environment".into(),
        "/environments".into(),
        "Its tokens stop working and no one can switch to it; what it holds is kept, and Restore brings it back.",
    ))
}

/// `GET /environments/{key}/archive`: archiving it, to confirm.
pub async fn confirm_archive(State(state): State<AppState>, person: Person, Path(key): Path<String>) -> Response {
    answered(StatusCode::OK, archive_screen(&state, &person, &key).await)
}

/// `POST /environments/{key}/archive`.
pub async fn archive(State(state): State<AppState>, person: Person, Path(key): Path<String>) -> Response {
    match envs::archive(state.registry().services(), person.actor(), &key, true).await {
        Ok(_) => Redirect::to("/environments?done=archived").into_response(),
        Err(e) if matches!(e.failure, Failure::Forbidden | Failure::NotFound) => WebError::from(e).into_response(),
        Err(e) => {
            let (status, message) = refusal(&e);
            let screen = archive_screen(&state, &person, &key).await.map(|mut s| {
                s.error = Some(message);
                s
            });
            answered(status, screen)
        }
    }
}

/// `POST /environments/{key}/restore`: brings an archived one back.
pub async fn restore(State(state): State<AppState>, person: Person, Path(key): Path<String>) -> Response {
    match envs::archive(state.registry().services(), person.actor(), &key, false).await {
        Ok(_) => Redirect::to("/environments?done=restored").into_response(),
        Err(e) => row_refused(&state, &person, e).await,
    }
}

/// A record that differs, as the comparison shows it.
pub struct DiffView {
    /// Its lineage: what the promote form names it by.
    pub lineage: String,
    pub noun: &'static str,
    /// Its name (a page's name, where the store's label is its slug).
    pub label: String,
    /// The label the store's own words use for it.
    store_label: String,
    /// added, removed or changed.
    pub change: &'static str,
    /// What promoting it does, in a sentence.
    pub does: String,
    /// Which side changed it, in words.
    pub side: String,
    pub conflict: bool,
    /// How the published copies differ, in words ("" when they agree).
    pub published: String,
    pub records: Vec<RecordDiff>,
    /// Whether the promote form ticks it.
    pub chosen: bool,
    /// The side its conflict is settled for ("", source, target).
    pub resolution: String,
}

fn diff_view(d: EnvDifference, name: Option<&str>, from: &str, to: &str) -> DiffView {
    let noun = noun(d.entity);
    let store_label = d.label.clone();
    let label = name.map_or(d.label.clone(), str::to_string);
    let (change, does) = match d.change {
        EnvChange::Added => ("added", format!("{from} has it and {to} does not: promoting makes it in {to}.")),
        EnvChange::Removed => ("removed", format!("{to} has it and {from} does not: promoting archives it in {to}.")),
        EnvChange::Changed => ("changed", format!("Promoting writes {from}'s copy over {to}'s.")),
    };
    let side = match d.changed_in {
        ChangedIn::Source => format!("Changed in {from}"),
        ChangedIn::Target => format!("Changed in {to} only"),
        ChangedIn::Both => format!("Changed in both {from} and {to}"),
    };
    let published = match (d.published_in_source, d.published_in_target) {
        (true, false) => format!("On {from}'s public site only."),
        (false, true) => format!("On {to}'s public site only."),
        (true, true) if d.published_differs => "Their published copies differ too.".into(),
        _ => String::new(),
    };
    let records = d
        .differences
        .iter()
        .map(|r| RecordDiff {
            title: match r.part {
                false => format!("{} “{label}”", capitalised(noun)),
                true => part_title(r),
            },
            change: match r.change {
                Change::Added => "new",
                Change::Removed => "removed",
                Change::Changed => "changed",
            },
            fields: r
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
    DiffView {
        lineage: d.lineage,
        noun,
        label,
        store_label,
        change,
        does,
        side,
        conflict: d.conflict,
        published,
        records,
        chosen: true,
        resolution: String::new(),
    }
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// The names records of `refs` have in environment `env` (one the person's
/// credential reaches, checked by the use case that answered the ids): a
/// page by its name rather than its slug. A failure leaves them unnamed.
async fn names_in(
    state: &AppState,
    person: &Person,
    env: &str,
    refs: Vec<RecordRef>,
) -> HashMap<RecordRef, RecordName> {
    if refs.is_empty() {
        return HashMap::new();
    }
    let mut actor = person.actor().clone();
    actor.scope.env = env.to_string();
    Content::new(state.store().clone(), actor).record_names(&refs).await.unwrap_or_default()
}

/// What a promotion did, one line per record, named as `to` has them now.
async fn promoted_lines(state: &AppState, person: &Person, to: &str, p: &Promotion) -> Vec<String> {
    let refs = p.items.iter().map(|i| (i.entity, i.target_id.clone())).collect();
    let names = names_in(state, person, to, refs).await;
    p.items
        .iter()
        .map(|i| {
            let label = names.get(&(i.entity, i.target_id.clone())).map_or(i.label.as_str(), |n| n.label.as_str());
            format!("{} “{label}” {}", noun(i.entity), change_word(i.change))
        })
        .collect()
}

/// A promotion into the target, as the comparison lists it.
pub struct PromotionView {
    pub promotion: Promotion,
    pub by: String,
    pub undone_by: String,
    /// What it did, one line per record.
    pub lines: Vec<String>,
}

#[derive(Template)]
#[template(path = "compare.html")]
struct ComparePage {
    head: Head,
    frame: Frame,
    /// The live environments, to choose from.
    choices: Vec<Environment>,
    from: String,
    to: String,
    /// Whether two were compared.
    compared: bool,
    differences: Vec<DiffView>,
    conflicts: usize,
    promotions: Vec<PromotionView>,
    done: &'static str,
    error: Option<String>,
}

/// The comparison asked for.
#[derive(Deserialize, Default)]
pub struct CompareQuery {
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    done: Option<String>,
}

/// What a refused promote form held: the records ticked and the sides
/// chosen, by lineage.
type Chosen = (Vec<String>, BTreeMap<String, Resolution>);

async fn compare_page(
    state: &AppState,
    person: &Person,
    q: CompareQuery,
    error: Option<String>,
    chosen: Option<Chosen>,
) -> Result<ComparePage, WebError> {
    let services = state.registry().services();
    let actor = person.actor();
    let choices: Vec<Environment> =
        envs::list(services, actor).await?.into_iter().filter(|e| e.archived_at.is_none()).collect();
    let to = if q.to.is_empty() { actor.scope.env.clone() } else { q.to };
    let from = q.from;
    let mut error = error;
    let compared = !from.is_empty() && from != to;
    if !from.is_empty() && from == to {
        error.get_or_insert_with(|| "Choose two different environments.".into());
    }
    let mut differences = Vec::new();
    if compared {
        let found = envs::compare(services, actor, Some(&from), &to).await?;
        let refs = |side: fn(&EnvDifference) -> Option<&String>| {
            found.iter().filter_map(|d| side(d).map(|id| (d.entity, id.clone()))).collect::<Vec<_>>()
        };
        let in_source = names_in(state, person, &from, refs(|d| d.source_id.as_ref())).await;
        let in_target = names_in(state, person, &to, refs(|d| d.target_id.as_ref())).await;
        for d in found {
            let named = |names: &HashMap<RecordRef, RecordName>, id: &Option<String>| {
                id.as_ref().and_then(|id| names.get(&(d.entity, id.clone()))).map(|n| n.label.clone())
            };
            let name = named(&in_source, &d.source_id).or_else(|| named(&in_target, &d.target_id));
            differences.push(diff_view(d, name.as_deref(), &from, &to));
        }
    }
    if let Some((items, resolutions)) = chosen {
        for d in &mut differences {
            d.chosen = items.contains(&d.lineage);
            d.resolution = match resolutions.get(&d.lineage) {
                Some(Resolution::Source) => "source".into(),
                Some(Resolution::Target) => "target".into(),
                None => String::new(),
            };
        }
    }
    // The store names each record by its label and lineage; the screen by its label.
    let error = error.map(|m| {
        let m = differences
            .iter()
            .fold(m, |m, d| m.replace(&format!("{} ({})", d.store_label, d.lineage), &format!("“{}”", d.label)));
        m.replace(" (resolutions: source or target)", "")
    });
    let promotions = envs::promotions(services, actor, &to).await?;
    let actors: Vec<String> =
        promotions.iter().flat_map(|p| std::iter::once(p.actor.clone()).chain(p.undone_by.clone())).collect();
    let who = Who::named(person, actors.iter().map(String::as_str)).await;
    let mut views = Vec::new();
    for p in promotions {
        views.push(PromotionView {
            by: who.name(&p.actor),
            undone_by: p.undone_by.as_deref().map(|a| who.name(a)).unwrap_or_default(),
            lines: promoted_lines(state, person, &to, &p).await,
            promotion: p,
        });
    }
    let promotions = views;
    Ok(ComparePage {
        head: Head::new(),
        frame: Frame::new(person, "/environments"),
        choices,
        conflicts: differences.iter().filter(|d| d.conflict).count(),
        from,
        to,
        compared,
        differences,
        promotions,
        done: done_words(q.done.as_deref()),
        error,
    })
}

fn change_word(change: EnvChange) -> &'static str {
    match change {
        EnvChange::Added => "added",
        EnvChange::Removed => "removed",
        EnvChange::Changed => "changed",
    }
}

/// `GET /environments/compare?from=…&to=…`: what differs, the promote
/// form for administrators, and the promotions into `to` (by default the
/// environment the person works in).
pub async fn compare(
    State(state): State<AppState>,
    person: Person,
    Query(q): Query<CompareQuery>,
) -> Result<Html<String>, WebError> {
    Ok(Html(compare_page(&state, &person, q, None, None).await?.render()?))
}

/// `POST /environments/{to}/promote`: promotes the ticked records (`item`,
/// by lineage) from `from`, each conflict settled by its
/// `resolve-<lineage>` (source or target); refused whole, and shown again
/// with the reason, while a conflict is unsettled.
pub async fn promote(
    State(state): State<AppState>,
    person: Person,
    Path(to): Path<String>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let from = form::value(&pairs, "from").to_string();
    let items = form::values(&pairs, "item");
    let resolutions: BTreeMap<String, Resolution> = pairs
        .iter()
        .filter_map(|(k, v)| {
            let lineage = k.strip_prefix("resolve-")?;
            let side = match v.as_str() {
                "source" => Resolution::Source,
                "target" => Resolution::Target,
                _ => return None,
            };
            Some((lineage.to_string(), side))
        })
        .collect();
    let result = if items.is_empty() {
        Err(AppError::invalid("items", "Choose at least one record to promote."))
    } else {
        let request = PromotionRequest { items: Some(items.clone()), resolutions: resolutions.clone() };
        envs::promote(state.registry().services(), person.actor(), &from, &to, request).await
    };
    let back =
        |done: &str| format!("/environments/compare?from={}&to={}&done={done}", urlencode(&from), urlencode(&to));
    match result {
        Ok(_) => Redirect::to(&back("promoted")).into_response(),
        Err(e) if matches!(e.failure, Failure::Forbidden | Failure::Internal) => WebError::from(e).into_response(),
        Err(e) => {
            let (status, message) = refusal(&e);
            let message = message.strip_prefix("items: ").map(str::to_string).unwrap_or(message);
            let q = CompareQuery { from: from.clone(), to: to.clone(), done: None };
            answered(status, compare_page(&state, &person, q, Some(message), Some((items, resolutions))).await)
        }
    }
}

/// The question undoing promotion `id` into `to` asks.
async fn undo_screen(state: &AppState, person: &Person, to: &str, id: &str) -> Result<Confirm, WebError> {
    person.require(Permission::Administer)?;
    let promotions = envs::promotions(state.registry().services(), person.actor(), to).await?;
    let Some(p) = promotions.into_iter().find(|p| p.id == id) else {
        return Err(WebError::NotFound(format!("there is no such promotion into {to}")));
    };
    let at = p.created_at.format("%Y-%m-%d %H:%M UTC");
    let mut screen = Confirm::about(
        person,
        "/environments",
        format!("Undo the promotion from {} into {to} of {at}?", p.source),
        format!("/environments/{}/promotions/{}/undo", urlencode(to), urlencode(id)),
        "Undo the promotion".into(),
        format!("/environments/compare?from={}&to={}", urlencode(&p.source), urlencode(to)),
        "Each record goes back to what it was before the promotion; the undo is logged like any change.",
    );
    screen.along_with(promoted_lines(state, person, to, &p).await);
    Ok(screen)
}

/// `GET /environments/{to}/promotions/{id}/undo`: undoing it, to confirm.
pub async fn confirm_undo(
    State(state): State<AppState>,
    person: Person,
    Path((to, id)): Path<(String, String)>,
) -> Response {
    answered(StatusCode::OK, undo_screen(&state, &person, &to, &id).await)
}

/// `POST /environments/{to}/promotions/{id}/undo`.
pub async fn undo(State(state): State<AppState>, person: Person, Path((to, id)): Path<(String, String)>) -> Response {
    match envs::undo_promotion(state.registry().services(), person.actor(), &id).await {
        Ok(p) => Redirect::to(&format!(
            "/environments/compare?from={}&to={}&done=undone",
            urlencode(&p.source),
            urlencode(&p.target)
        ))
        .into_response(),
        Err(e) if matches!(e.failure, Failure::Forbidden | Failure::NotFound) => WebError::from(e).into_response(),
        Err(e) => {
            let (status, message) = refusal(&e);
            let screen = undo_screen(&state, &person, &to, &id).await.map(|mut s| {
                s.error = Some(message);
                s
            });
            answered(status, screen)
        }
    }
}
