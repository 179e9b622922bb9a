//! Publishing from the editors: `POST /pages/{id}/publishing`,
//! `/entries/{id}/publishing` and `/navigation/{id}/publishing` publish the
//! draft, take the document off the site, or give the draft up; put the
//! document into a release (an open one, or a new one named there);
//! schedule its publish or unpublish; or cancel one of its schedules
//! (`action`), then go back to the editor (each editor's route calls
//! [`act`]). Saving an editor's form changes the draft only. A refused
//! action shows the editor again, the reason in the panel beside the
//! control that was used.

use crate::error::refusal;
use crate::form::{self, Errors};
use crate::frame::Who;
use crate::{Person, error::WebError};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use quire_app::content::{Publication, PublishAction};
use quire_app::releases::{Release, Stage};
use quire_app::schedules::{Schedule, ScheduleTarget};
use quire_app::{AppError, Failure};
use quire_core::model::{EntityKind, ReleaseAction, ReleaseState};

/// A release that holds the document, as the panel names it.
pub struct Holding {
    /// The release's id (its screen's address).
    pub id: String,
    /// Its name.
    pub name: String,
    /// Where it stands: open or scheduled.
    pub state: &'static str,
    /// What it does to the document, in words.
    pub does: &'static str,
}

/// A schedule of the document, as the panel lists it.
pub struct Waiting {
    /// The schedule.
    pub schedule: Schedule,
    /// Publish or unpublish, in words.
    pub does: &'static str,
    /// Who scheduled it.
    pub who: String,
}

/// The publishing panel of an editor: where the document stands, where
/// its forms post, the releases it can join or is in, its schedules, and
/// what was just done (`?done=`) or refused.
pub struct Panel {
    /// Where the forms post.
    pub action: String,
    /// Where the document stands.
    pub state: Publication,
    /// What was just done, said to the person; empty when nothing was.
    pub done: String,
    /// The release just added to, as (id, name), to link to.
    pub done_release: Option<(String, String)>,
    /// Where the draft can be seen as it would be published; empty when
    /// nowhere.
    pub preview: String,
    /// Whether that is the site's own front end (else the delivery API).
    pub preview_on_site: bool,
    /// The open releases the document can be put into: (id, name).
    pub open: Vec<(String, String)>,
    /// The open or scheduled releases that hold it.
    pub holding: Vec<Holding>,
    /// Its schedules waiting to run.
    pub waiting: Vec<Waiting>,
    /// Why a form of the panel was refused, by the control it names:
    /// `release`, `release_name`, `schedule`, `at`, or "" (the buttons).
    pub errors: Errors,
    /// What a refused form held, shown again.
    pub typed: Vec<(String, String)>,
}

/// What a release does to a document, in an editor's words.
pub fn does(action: ReleaseAction) -> &'static str {
    match action {
        ReleaseAction::Publish => "publishes it",
        ReleaseAction::Unpublish => "takes it off the site",
        ReleaseAction::Archive => "archives it",
    }
}

impl Panel {
    /// The panel of the document `id` of `kind`, posting to `action`.
    pub async fn of(person: &Person, kind: EntityKind, id: &str, action: String) -> Result<Panel, WebError> {
        let content = &person.content;
        let state = content.publication(kind, id).await?;
        let releases = content.releases(None).await?;
        let pending = |r: &&Release| matches!(r.state, ReleaseState::Open | ReleaseState::Scheduled);
        let holding = releases
            .iter()
            .filter(pending)
            .filter_map(|r| {
                let item = r.items.iter().find(|i| i.entity == kind && i.id == id)?;
                Some(Holding {
                    id: r.id.clone(),
                    name: r.name.clone(),
                    state: r.state.as_str(),
                    does: does(item.action),
                })
            })
            .collect();
        let open = releases.into_iter().filter(|r| r.state == ReleaseState::Open).map(|r| (r.id, r.name)).collect();
        let schedules = content.schedules(false).await?;
        let this_document = |s: &&quire_app::schedules::Schedule| s.target == kind.as_str() && s.target_id == id;
        let who = Who::named(person, schedules.iter().filter(this_document).map(|s| s.created_by.as_str())).await;
        let waiting = schedules
            .into_iter()
            .filter(|s| s.target == kind.as_str() && s.target_id == id)
            .map(|schedule| Waiting {
                does: if schedule.action == "unpublish" { "Unpublish" } else { "Publish" },
                who: who.name(&schedule.created_by),
                schedule,
            })
            .collect();
        Ok(Panel {
            action,
            state,
            done: String::new(),
            done_release: None,
            preview: String::new(),
            preview_on_site: false,
            open,
            holding,
            waiting,
            errors: Errors::new(),
            typed: Vec::new(),
        })
    }

    /// The panel with a link to the draft of `id` as it would be
    /// published, where the site shows drafts: a route of the back-office
    /// that makes the preview link when it is followed.
    pub async fn previewed(mut self, person: &Person, kind: EntityKind, id: &str) -> Result<Panel, WebError> {
        self.preview_on_site = person.content.site().await?.preview_url.is_some();
        self.preview = match kind {
            EntityKind::Entry => format!("/entries/{id}/preview"),
            _ => format!("/pages/{id}/preview"),
        };
        Ok(self)
    }

    /// The panel saying what `done` (an editor's `?done=`) was; `release`
    /// names the release a document was just added to.
    pub fn after(mut self, done: Option<&str>, release: Option<&str>) -> Panel {
        self.done = match done {
            Some("published") => "Published.",
            Some("unpublished") => "Taken off the site.",
            Some("discarded") => "Changes discarded: the draft is what is published.",
            Some("staged") => "Added to the release",
            Some("scheduled") => "Scheduled.",
            Some("cancelled") => "Schedule cancelled.",
            _ => "",
        }
        .to_string();
        if done == Some("staged") {
            self.done_release =
                release.and_then(|r| self.holding.iter().find(|h| h.id == r)).map(|h| (h.id.clone(), h.name.clone()));
            // The template names the release after these words, when it is known.
            if self.done_release.is_none() {
                self.done.push('.');
            }
        }
        self
    }

    /// The panel showing why its form was refused, with what it held.
    pub fn refused(mut self, errors: Errors, typed: Vec<(String, String)>) -> Panel {
        self.errors = errors;
        self.typed = typed;
        self
    }

    /// What the refused form held in `name`.
    pub fn typed(&self, name: &str) -> &str {
        form::value(&self.typed, name)
    }
}

/// A refused action of the panel: the use case's reason, and the control
/// it is shown beside.
struct Refused {
    error: AppError,
    control: &'static str,
}

impl Refused {
    fn at(control: &'static str) -> impl FnOnce(AppError) -> Refused {
        move |error| Refused { error, control }
    }
}

/// Runs the panel's action `action` on the document `id` of `kind`; answers
/// the editor's query that says what was done.
async fn run(person: &Person, kind: EntityKind, id: &str, pairs: &[(String, String)]) -> Result<String, Refused> {
    let content = &person.content;
    let get = |k: &str| form::value(pairs, k).trim();
    match get("action") {
        "publish" => content.publish(kind, id).await.map(|_| "done=published".into()).map_err(Refused::at("")),
        "unpublish" => content.unpublish(kind, id).await.map(|_| "done=unpublished".into()).map_err(Refused::at("")),
        "discard" => content.discard_draft(kind, id).await.map(|_| "done=discarded".into()).map_err(Refused::at("")),
        "stage" => {
            let action = ReleaseAction::parse("action", get("release_action"))
                .map_err(|e| Refused { error: form::invalid(e), control: "release" })?;
            let release = match get("release") {
                "" => content
                    .create_release(get("release_name"), None)
                    .await
                    .map_err(Refused::at("release_name"))?
                    .id
                    .clone(),
                chosen => chosen.to_string(),
            };
            let stage = Stage { entity: kind, name: id.to_string(), action, keep: false, locale: None };
            content.stage(&release, stage).await.map_err(Refused::at("release"))?;
            Ok(format!("done=staged&release={}", crate::error::urlencode(&release)))
        }
        "schedule" => {
            let action = match get("schedule_action") {
                "unpublish" => PublishAction::Unpublish,
                "publish" => PublishAction::Publish,
                other => {
                    let e = AppError::invalid("action", format!("\"{other}\" is not one of publish, unpublish"));
                    return Err(Refused { error: e, control: "schedule" });
                }
            };
            let at = form::time(pairs).map_err(Refused::at("at"))?;
            let target = ScheduleTarget::Document { entity: kind, name: id.to_string(), action };
            content.schedule(target, at).await.map_err(|e| {
                let control = if e.field.as_deref() == Some("at") { "at" } else { "schedule" };
                Refused { error: e, control }
            })?;
            Ok("done=scheduled".into())
        }
        "cancel_schedule" => {
            content.cancel_schedule(get("schedule")).await.map_err(Refused::at(""))?;
            Ok("done=cancelled".into())
        }
        other => Err(Refused {
            error: AppError::invalid(
                "action",
                format!("\"{other}\" is not one of publish, unpublish, discard, stage, schedule, cancel_schedule"),
            ),
            control: "",
        }),
    }
}

/// The words a refusal is shown in beside its control: the rule alone
/// when it names the field.
fn reason(e: &AppError) -> String {
    let message = refusal(e).1;
    match e.field.as_deref() {
        Some(field) => message.strip_prefix(field).and_then(|m| m.strip_prefix(": ")).unwrap_or(&message).to_string(),
        None => message,
    }
}

/// What an editor's `POST …/publishing` comes to: the editor's query that
/// says what was done, or a refusal the editor shows in its panel, or
/// one answered on its own (an error page).
pub enum Outcome {
    /// Done: go back to the editor with this query.
    Done(String),
    /// Refused: the editor again, saying why in its panel.
    Refused(Shown),
    /// The person may not, or the document is not there.
    Failed(Response),
}

/// Runs the chosen action of a publishing panel's form (`pairs`) on the
/// document `id` of `kind`. Each editor's route calls it, then goes back
/// to the editor or shows it again with the refusal.
pub async fn act(person: &Person, kind: EntityKind, id: &str, pairs: Vec<(String, String)>) -> Outcome {
    match run(person, kind, id, &pairs).await {
        Ok(query) => Outcome::Done(query),
        Err(Refused { error, .. }) if matches!(error.failure, Failure::Forbidden | Failure::NotFound) => {
            Outcome::Failed(WebError::from(error).into_response())
        }
        Err(Refused { error, control }) => {
            let status = match refusal(&error).0 {
                StatusCode::INTERNAL_SERVER_ERROR => return Outcome::Failed(WebError::from(error).into_response()),
                status => status,
            };
            let errors = Errors::from([(control.to_string(), reason(&error))]);
            let typed = pairs.into_iter().filter(|(k, _)| k != crate::CSRF_FIELD).collect();
            Outcome::Refused(Shown { status, errors, typed })
        }
    }
}

/// A refused form of the panel, for the editor to show again.
pub struct Shown {
    /// The status the editor is answered with.
    pub status: StatusCode,
    /// The reason, by control.
    pub errors: Errors,
    /// What the form held.
    pub typed: Vec<(String, String)>,
}

impl Shown {
    /// `panel` showing this refusal.
    pub fn on(self, panel: Panel) -> Panel {
        panel.refused(self.errors, self.typed)
    }
}
