//! Schedules ([decision 0046]): a release, or one document, published (or
//! a document taken off the site) at a time. A schedule is a row of `jobs`
//! of a publishing kind, due at its time, so it has what every job has: it
//! survives a restart, one due while every process was stopped runs at the
//! next start (and says how late), and with several replicas each is
//! claimed by one of them (decision 0036).
//!
//! Running one is one transaction: the publish, and the end of the attempt
//! fenced on the attempt, so an attempt whose lease another took over
//! commits nothing and each schedule takes effect exactly once. A schedule
//! that cannot publish (a conflict) fails with the reason, and its release
//! is open again.
//!
//! [decision 0046]: ../../../docs/decisions/0046-drafts-and-releases.md

use crate::db::{self, Conn, Row};
use crate::log::new_id;
use crate::media::millis;
use crate::publishing::{PublishAction, document_kind, publish_in, resolve};
use crate::record::{enum_col, json_col};
use crate::releases::{load, lock, publish_release_in, require_state, touch};
use crate::{Result, Scope, Store, StoreError};
use chrono::{DateTime, TimeZone, Utc};
use quire_core::model::{ChangeContext, EntityKind, JobKind, JobStatus, Publishing, ReleaseState, Surface};
use serde::Serialize;
use serde_json::{Value, json};
use std::time::Duration;

/// A scheduled publish: of a release, or of one document.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    /// Identifier.
    pub id: String,
    /// What it publishes: `release`, or a document's kind (page, entry, navigation).
    pub target: String,
    /// The release's or the document's id.
    pub target_id: String,
    /// `publish`, or `unpublish` (a document taken off the site).
    pub action: String,
    /// When it is due.
    pub at: DateTime<Utc>,
    /// queued (waiting), running, done, failed or cancelled.
    pub status: JobStatus,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// How long after its time it ran, in milliseconds, once it ran.
    pub late_ms: Option<i64>,
    /// Who scheduled it.
    pub created_by: String,
    /// When it was scheduled.
    pub created_at: DateTime<Utc>,
}

/// What to schedule.
#[derive(Debug, Clone)]
pub enum ScheduleTarget {
    /// An open release, published whole.
    Release(String),
    /// A document (by id, a page's slug, a navigation's key), published
    /// as its draft is then, or taken off the site.
    Document {
        /// Its kind: page, entry or navigation.
        entity: EntityKind,
        /// Its id or key.
        name: String,
        /// Publish or unpublish (discard is not scheduled).
        action: PublishAction,
    },
}

fn schedule_from_row(row: &Row) -> Result<Schedule> {
    let payload: Value = json_col(row, "payload")?;
    let run_after: i64 = row.try_get("run_after")?;
    Ok(Schedule {
        id: row.try_get("id")?,
        target: payload["target"].as_str().unwrap_or_default().to_string(),
        target_id: row.try_get("subject_id")?,
        action: payload["action"].as_str().unwrap_or("publish").to_string(),
        at: Utc.timestamp_millis_opt(run_after).single().unwrap_or_default(),
        status: enum_col(row, "status", JobStatus::parse)?,
        error: row.try_get("error")?,
        late_ms: row.try_get("late_ms")?,
        created_by: payload["by"].as_str().unwrap_or_default().to_string(),
        created_at: row.try_get("created_at")?,
    })
}

/// The kinds of job a schedule is.
fn kinds() -> String {
    JobKind::SCHEDULES.iter().map(|k| format!("'{k}'")).collect::<Vec<_>>().join(", ")
}

fn load_schedule(conn: &Conn, scope: &Scope, id: &str) -> Result<Schedule> {
    let sql = format!("SELECT * FROM jobs WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND kind IN ({})", kinds());
    let row = db::query(sql).bind(id).bind_scope(scope).fetch_optional(conn)?;
    schedule_from_row(&row.ok_or_else(|| StoreError::not_found("schedule", id))?)
}

/// Queues the job of a schedule, due at `at`.
fn queue(
    conn: &Conn,
    kind: JobKind,
    scope: &Scope,
    subject: &str,
    payload: Value,
    at: DateTime<Utc>,
) -> Result<String> {
    let (id, now) = (new_id(), Utc::now());
    db::query(
        "INSERT INTO jobs (id, kind, site_id, env, subject_id, payload, status, attempts, max_attempts, run_after,
         created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', 0, 3, ?7, ?8, ?8)",
    )
    .bind(&id)
    .bind(kind.as_str())
    .bind_scope(scope)
    .bind(subject)
    .bind(payload.to_string())
    .bind(millis(at))
    .bind(now)
    .execute(conn)?;
    Ok(id)
}

/// Ends this attempt of schedule `job` (attempt `attempts`) as `status`;
/// false when another attempt holds it now.
fn finish(conn: &Conn, job: &Schedule, attempts: i64, status: JobStatus, error: Option<&str>) -> Result<bool> {
    let late = (Utc::now() - job.at).num_milliseconds().max(0);
    let done = db::query(
        "UPDATE jobs SET status = ?3, error = ?4, lease_until = NULL, updated_at = ?5, stage = NULL, late_ms = ?6,
         progress = 100 WHERE id = ?1 AND attempts = ?2 AND status = 'running'",
    )
    .bind(&job.id)
    .bind(attempts)
    .bind(status.as_str())
    .bind(error)
    .bind(Utc::now())
    .bind(late)
    .execute(conn)?;
    Ok(done.rows_affected() == 1)
}

/// How long a schedule the database failed waits, per attempt made,
/// before it is tried again.
pub const RETRY: Duration = Duration::from_secs(5);

/// Whether `e` is the database failing rather than a rule of the content:
/// the same publish may succeed when tried again.
fn transient(e: &StoreError) -> bool {
    matches!(e, StoreError::Database(_)) && !e.is_unique_violation()
}

/// Puts schedule `job` (attempt `attempts`) back in the queue, due at
/// `after`, with why this attempt failed; false when another attempt holds
/// it now.
fn retry(conn: &Conn, job: &Schedule, attempts: i64, after: DateTime<Utc>, error: &str) -> Result<bool> {
    let queued = db::query(
        "UPDATE jobs SET status = 'queued', error = ?3, lease_until = NULL, run_after = ?4, updated_at = ?5,
         stage = NULL WHERE id = ?1 AND attempts = ?2 AND status = 'running'",
    )
    .bind(&job.id)
    .bind(attempts)
    .bind(error)
    .bind(millis(after))
    .bind(Utc::now())
    .execute(conn)?;
    Ok(queued.rows_affected() == 1)
}

/// Cancels the queued schedule `id`; a release it would have published is
/// open again.
fn cancel_in(conn: &Conn, scope: &Scope, id: &str) -> Result<Schedule> {
    let schedule = load_schedule(conn, scope, id)?;
    if schedule.target == "release" {
        // The release before the job, as a publish of it takes them.
        lock(conn, scope, &schedule.target_id)?;
    }
    let not_waiting = |status: JobStatus| {
        StoreError::conflict(Some("status"), format!("schedule {id} is {status}, so it cannot be cancelled"))
    };
    if schedule.status != JobStatus::Queued {
        return Err(not_waiting(schedule.status));
    }
    let cancelled = db::query(
        "UPDATE jobs SET status = 'cancelled', updated_at = ?2 WHERE id = ?1 AND site_id = ?3 AND env = ?4
         AND status = 'queued'",
    )
    .bind(id)
    .bind(Utc::now())
    .bind_scope(scope)
    .execute(conn)?;
    // Claimed by a scheduler since it was read (another replica): it runs,
    // and its release stays scheduled.
    if cancelled.rows_affected() == 0 {
        return Err(not_waiting(load_schedule(conn, scope, id)?.status));
    }
    if schedule.target == "release" {
        reopen(conn, scope, &schedule.target_id)?;
    }
    load_schedule(conn, scope, id)
}

/// A scheduled release back to open.
fn reopen(conn: &Conn, scope: &Scope, release: &str) -> Result<()> {
    lock(conn, scope, release)?;
    let (found, _) = load(conn, scope, release)?;
    if found.state == ReleaseState::Scheduled {
        touch(conn, scope, release, "state = ?5, publish_at = NULL", vec![ReleaseState::Open.as_str().into()])?;
    }
    Ok(())
}

/// Does what schedule `job` says, as the person who scheduled it.
fn run_in(conn: &Conn, job: &Schedule) -> Result<()> {
    let scope = &scope_of(conn, &job.id)?;
    let ctx = ChangeContext {
        actor: job.created_by.clone(),
        surface: Surface::System,
        session_id: None,
        turn_id: None,
        publishing: Publishing::ByStatus,
    };
    if job.target == "release" {
        return publish_release_in(conn, &ctx, scope, &job.target_id, None, &[ReleaseState::Scheduled]);
    }
    let kind = EntityKind::parse("target", &job.target).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    // The document's lock is taken by the publish itself, after its rows as
    // a write of the draft takes it: taken first, a person's write of the
    // draft on another replica and this run would each wait for the other.
    match job.action.as_str() {
        "unpublish" => crate::publishing::unpublish_in(conn, &ctx, scope, kind, &job.target_id),
        _ => publish_in(conn, &ctx, scope, kind, &job.target_id),
    }
}

/// Tells subscribers schedule `job` ran: done, or failed for `reason`.
fn announce_run(conn: &Conn, scope: &Scope, job: &Schedule, failed: Option<&str>) -> Result<()> {
    let data = serde_json::json!({
        "target": job.target,
        "targetId": job.target_id,
        "action": job.action,
        "outcome": if failed.is_some() { "failed" } else { "done" },
        "reason": failed,
    });
    crate::webhooks::announce(conn, scope, &job.created_by, "schedule", "ran", &job.id, data)
}

fn scope_of(conn: &Conn, job: &str) -> Result<Scope> {
    let (site_id, env): (String, String) =
        db::query_as("SELECT site_id, env FROM jobs WHERE id = ?1").bind(job).fetch_one(conn)?;
    Ok(Scope { site_id, env })
}

impl Store {
    /// Schedules `target` for `at`: a release becomes scheduled (and can
    /// no longer change until it is unscheduled); a document is published
    /// (or taken off the site) as its draft is at that time.
    pub async fn schedule(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        target: ScheduleTarget,
        at: DateTime<Utc>,
    ) -> Result<Schedule> {
        let (ctx, scope) = (ctx.clone(), scope.clone());
        self.db
            .write(move |c| {
                let id = match &target {
                    ScheduleTarget::Release(release) => {
                        lock(c, &scope, release)?;
                        let (found, items) = load(c, &scope, release)?;
                        require_state(&found, &[ReleaseState::Open], "scheduled")?;
                        if items.is_empty() {
                            return Err(StoreError::conflict(
                                None,
                                format!("release \"{}\" has no documents to publish", found.name),
                            ));
                        }
                        touch(
                            c,
                            &scope,
                            release,
                            "state = ?5, publish_at = ?6",
                            vec![ReleaseState::Scheduled.as_str().into(), at.into()],
                        )?;
                        let payload = json!({ "target": "release", "action": "publish", "by": ctx.actor });
                        queue(c, JobKind::PublishRelease, &scope, release, payload, at)?
                    }
                    ScheduleTarget::Document { entity, name, action } => {
                        document_kind(*entity)?;
                        let action = match action {
                            PublishAction::Publish => "publish",
                            PublishAction::Unpublish => "unpublish",
                            PublishAction::Discard => {
                                return Err(StoreError::invalid(
                                    "action",
                                    "a discard is not scheduled: publish or unpublish",
                                ));
                            }
                        };
                        let doc = resolve(c, &scope, *entity, name)?;
                        let payload = json!({ "target": entity.as_str(), "action": action, "by": ctx.actor });
                        queue(c, JobKind::PublishDocument, &scope, &doc, payload, at)?
                    }
                };
                load_schedule(c, &scope, &id)
            })
            .await
    }

    /// The scope's schedules, soonest first: those waiting (and running),
    /// or with `all`, those done, failed and cancelled too (newest first
    /// after the waiting ones).
    pub async fn schedules(&self, scope: &Scope, all: bool) -> Result<Vec<Schedule>> {
        let filter = if all { "" } else { " AND status IN ('queued', 'running')" };
        let sql = format!(
            "SELECT * FROM jobs WHERE site_id = ?1 AND env = ?2 AND kind IN ({}){filter}
             ORDER BY CASE WHEN status IN ('queued', 'running') THEN 0 ELSE 1 END,
                      CASE WHEN status IN ('queued', 'running') THEN run_after ELSE -run_after END, id
             LIMIT 500",
            kinds()
        );
        let rows = db::query(sql).bind_scope(scope).read_all(&self.db).await?;
        rows.iter().map(schedule_from_row).collect()
    }

    /// Schedule `id`.
    pub async fn schedule_of(&self, scope: &Scope, id: &str) -> Result<Schedule> {
        let (scope, id) = (scope.clone(), id.to_string());
        self.db.read(move |c| load_schedule(c, &scope, &id)).await
    }

    /// Cancels a schedule that has not run; a release it would have
    /// published is open again.
    pub async fn cancel_schedule(&self, scope: &Scope, id: &str) -> Result<Schedule> {
        let (scope, id) = (scope.clone(), id.to_string());
        self.db.write(move |c| cancel_in(c, &scope, &id)).await
    }

    /// Cancels the schedule of release `id`; it is open again.
    pub async fn unschedule_release(&self, scope: &Scope, id: &str) -> Result<Schedule> {
        let (scope, id) = (scope.clone(), id.to_string());
        self.db
            .write(move |c| {
                let job: Option<String> = db::query_scalar(
                    "SELECT id FROM jobs WHERE kind = ?1 AND subject_id = ?2 AND site_id = ?3 AND env = ?4
                     AND status = 'queued' ORDER BY created_at DESC LIMIT 1",
                )
                .bind(JobKind::PublishRelease.as_str())
                .bind(&id)
                .bind_scope(&scope)
                .fetch_optional(c)?;
                let job = job.ok_or_else(|| {
                    StoreError::conflict(Some("state"), format!("release {id} is not waiting for a schedule"))
                })?;
                cancel_in(c, &scope, &job)
            })
            .await
    }

    /// When the next schedule waiting is due, if one is.
    pub async fn next_schedule_due(&self) -> Result<Option<DateTime<Utc>>> {
        let sql = format!("SELECT min(run_after) FROM jobs WHERE status = 'queued' AND kind IN ({})", kinds());
        let at: Option<i64> = db::query_scalar(sql).read_one(&self.db).await?;
        Ok(at.and_then(|ms| Utc.timestamp_millis_opt(ms).single()))
    }

    /// Claims the next schedule due (one claimed by a process whose lease
    /// ran out too) and, unless `allowed` answers why not (the person who
    /// scheduled it may no longer publish what it publishes), runs it: its publish and the end
    /// of its attempt in one transaction. Answers it as it ended, or none
    /// when nothing was due. A publish that cannot happen, or that
    /// `allowed` refuses, fails the schedule with the reason (its release
    /// is open again); one the database failed (a lost connection, a lock
    /// waited out) waits [`RETRY`] per attempt made and is tried again, up
    /// to the job's most attempts. An attempt another process took over
    /// meanwhile changes nothing.
    pub async fn run_due_schedule(
        &self,
        lease: Duration,
        allowed: impl AsyncFnOnce(&Scope, &Schedule) -> Result<Option<String>>,
    ) -> Result<Option<Schedule>> {
        let Some(job) = self.claim_job(JobKind::SCHEDULES, lease).await? else { return Ok(None) };
        let (attempts, scope, id) = (job.attempts, job.scope.clone(), job.id.clone());
        let schedule = {
            let (scope, id) = (scope.clone(), id.clone());
            self.db.read(move |c| load_schedule(c, &scope, &id)).await?
        };
        let outcome = match allowed(&scope, &schedule).await {
            Err(e) => Err(e),
            Ok(Some(refused)) => Err(StoreError::conflict(None, refused)),
            Ok(None) => {
                self.db
                    .write({
                        let (scope, id) = (scope.clone(), id.clone());
                        move |c| {
                            let schedule = load_schedule(c, &scope, &id)?;
                            if finish(c, &schedule, attempts, JobStatus::Done, None)? {
                                run_in(c, &schedule)?;
                                announce_run(c, &scope, &schedule, None)?;
                            }
                            Ok(())
                        }
                    })
                    .await
            }
        };
        if let Err(e) = outcome {
            let reason = e.to_string();
            let again = transient(&e) && attempts < job.max_attempts;
            self.db
                .write({
                    let (scope, id) = (scope.clone(), id.clone());
                    move |c| {
                        let schedule = load_schedule(c, &scope, &id)?;
                        if again {
                            let after = Utc::now() + RETRY * attempts as u32;
                            retry(c, &schedule, attempts, after, &reason)?;
                        } else if finish(c, &schedule, attempts, JobStatus::Failed, Some(&reason))? {
                            if schedule.target == "release" {
                                reopen(c, &scope, &schedule.target_id)?;
                            }
                            announce_run(c, &scope, &schedule, Some(&reason))?;
                        }
                        Ok(())
                    }
                })
                .await?;
        }
        let (scope, id) = (scope.clone(), id.clone());
        Ok(Some(self.db.read(move |c| load_schedule(c, &scope, &id)).await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{demo, person};

    /// The database failing during a run (here its change log gone for a
    /// moment) puts the schedule back in the queue with the error; tried
    /// again, it publishes once. After its last attempt it fails.
    #[tokio::test]
    async fn a_schedule_the_database_failed_is_tried_again_until_its_last_attempt() {
        let dir = tempfile::tempdir().unwrap();
        let (store, scope) = demo(dir.path()).await.unwrap();
        let page = store.page_by_slug(&scope, "team").await.unwrap();
        let target = ScheduleTarget::Document {
            entity: EntityKind::Page,
            name: page.id.clone(),
            action: PublishAction::Unpublish,
        };
        let made =
            store.schedule(&person(), &scope, target, Utc::now() + chrono::Duration::milliseconds(20)).await.unwrap();
        let break_log = async |_: &Scope, _: &Schedule| {
            store.db.write(|c| c.batch("ALTER TABLE changes RENAME TO changes_away")).await?;
            Ok(None)
        };
        let mend = || store.db.write(|c| c.batch("ALTER TABLE changes_away RENAME TO changes"));
        let due_now = |id: String| {
            store
                .db
                .write(move |c| db::query("UPDATE jobs SET run_after = 0 WHERE id = ?1").bind(&id).execute(c).map(drop))
        };
        tokio::time::sleep(Duration::from_millis(40)).await;
        let first = store.run_due_schedule(LEASE_FOR_TESTS, break_log).await.unwrap().expect("due");
        mend().await.unwrap();
        assert_eq!(first.status, JobStatus::Queued, "{first:?}");
        assert!(first.error.as_deref().is_some_and(|e| e.contains("changes")), "{first:?}");
        assert!(store.delivery_page(&scope, "team").await.is_ok(), "nothing was taken off the site");
        // Not due again before its wait.
        assert!(store.run_due_schedule(LEASE_FOR_TESTS, async |_, _| Ok(None)).await.unwrap().is_none());
        due_now(made.id.clone()).await.unwrap();
        let second = store.run_due_schedule(LEASE_FOR_TESTS, async |_, _| Ok(None)).await.unwrap().expect("due");
        assert_eq!(second.status, JobStatus::Done, "{second:?}");
        assert!(store.delivery_page(&scope, "team").await.is_err(), "taken off the site once");

        // Three attempts failed: the schedule fails for good.
        let page = store.page_by_slug(&scope, "about").await.unwrap();
        let target =
            ScheduleTarget::Document { entity: EntityKind::Page, name: page.id, action: PublishAction::Unpublish };
        let made =
            store.schedule(&person(), &scope, target, Utc::now() + chrono::Duration::milliseconds(20)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(40)).await;
        let mut statuses = Vec::new();
        for _ in 0..3 {
            let break_log = async |_: &Scope, _: &Schedule| {
                store.db.write(|c| c.batch("ALTER TABLE changes RENAME TO changes_away")).await?;
                Ok(None)
            };
            let ran = store.run_due_schedule(LEASE_FOR_TESTS, break_log).await.unwrap().expect("due");
            mend().await.unwrap();
            statuses.push(ran.status);
            due_now(made.id.clone()).await.unwrap();
        }
        assert_eq!(statuses, [JobStatus::Queued, JobStatus::Queued, JobStatus::Failed]);
        assert!(store.delivery_page(&scope, "about").await.is_ok());
    }

    const LEASE_FOR_TESTS: Duration = Duration::from_secs(30);
}
