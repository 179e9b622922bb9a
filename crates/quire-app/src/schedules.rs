//! Schedules: a release, or one document, published (or a document taken
//! off the site) at a time — as one actor asks for them, and the
//! [`Scheduler`] each serving process runs to carry them out.
//!
//! Scheduling a document needs the right to publish its kind; scheduling a
//! release, the rights its publish needs. Reading needs
//! [`Permission::Read`]; cancelling, the right to publish what it would
//! have published.

use crate::content::Content;
use crate::{Actor, AppError, AppResult, Failure, Permission, authorize};
use chrono::{DateTime, Utc};
use quire_core::access::Group;
use quire_core::model::{EntityKind, Surface};
pub use quire_store::{Schedule, ScheduleTarget};
use quire_store::{Scope, Store};
use std::time::Duration;

/// How long a scheduler holds a schedule it runs before another may take
/// it over (a process stopped mid-run).
const LEASE: Duration = Duration::from_secs(30);

/// The longest a scheduler sleeps between looks at what is due.
const POLL: Duration = Duration::from_millis(500);

impl Content {
    /// Schedules `target` for `at`, which must be in the future.
    pub async fn schedule(&self, target: ScheduleTarget, at: DateTime<Utc>) -> AppResult<Schedule> {
        if at <= Utc::now() {
            return Err(AppError::invalid("at", "must be in the future"));
        }
        self.may_schedule(&target).await?;
        let actor = self.actor();
        Ok(self.store().schedule(&actor.change_context(), &actor.scope, target, at).await?)
    }

    /// The site's schedules waiting, soonest first; with `all`, those that
    /// ran, failed or were cancelled too.
    pub async fn schedules(&self, all: bool) -> AppResult<Vec<Schedule>> {
        authorize(self.actor(), Permission::Read)?;
        Ok(self.store().schedules(&self.actor().scope, all).await?)
    }

    /// One schedule.
    pub async fn schedule_of(&self, id: &str) -> AppResult<Schedule> {
        authorize(self.actor(), Permission::Read)?;
        Ok(self.store().schedule_of(&self.actor().scope, id).await?)
    }

    /// Cancels a schedule that has not run; a release it would have
    /// published is open again.
    pub async fn cancel_schedule(&self, id: &str) -> AppResult<Schedule> {
        let schedule = self.schedule_of(id).await?;
        let target = match schedule.target.as_str() {
            "release" => ScheduleTarget::Release(schedule.target_id.clone()),
            kind => {
                let entity = quire_core::model::EntityKind::parse("target", kind)
                    .map_err(|e| AppError::invalid("target", e.to_string()))?;
                let action = quire_store::PublishAction::Publish;
                ScheduleTarget::Document { entity, name: schedule.target_id.clone(), action }
            }
        };
        self.may_schedule(&target).await?;
        Ok(self.store().cancel_schedule(&self.actor().scope, id).await?)
    }

    async fn may_schedule(&self, target: &ScheduleTarget) -> AppResult<()> {
        match target {
            ScheduleTarget::Release(id) => self.may_publish_release(id).await.map(drop),
            ScheduleTarget::Document { entity, .. } => authorize(self.actor(), Permission::Publish(*entity)),
        }
    }
}

/// Carries out the schedules that fall due, in each serving process: with
/// several replicas, each schedule is claimed and run by one of them.
pub struct Scheduler {
    store: Store,
}

impl Scheduler {
    /// A scheduler over `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Runs every schedule due now; answers how many were tried (done,
    /// failed, or waiting to be tried again).
    pub async fn run_due(&self) -> AppResult<usize> {
        let mut ran = 0;
        while self
            .store
            .run_due_schedule(LEASE, async |scope, schedule| self.refusal(scope, schedule).await)
            .await?
            .is_some()
        {
            ran += 1;
        }
        Ok(ran)
    }

    /// Why `schedule` may not run, if it may not: it runs as the person who
    /// made it, with their rights as they are now, decided by [`authorize`]
    /// as a request of theirs would be. A token revoked or expired since,
    /// a person disabled, or one whose group no longer publishes what it
    /// publishes, fails it with the reason.
    async fn refusal(&self, scope: &Scope, schedule: &Schedule) -> quire_store::Result<Option<String>> {
        let who = &schedule.created_by;
        // Anyone but a token or a person (the local admin) keeps its group.
        let Some(group) = self.store.live_actor_group(who, Group::Admin).await? else {
            return Ok(Some(format!("{who}, who scheduled it, may no longer act here (revoked or disabled)")));
        };
        let actor = Actor { group, surface: Surface::System, ..Actor::local_admin(scope.clone()) };
        let actor = Actor { id: who.clone(), ..actor };
        let refused = match schedule.target.as_str() {
            "release" => match Content::new(self.store.clone(), actor).may_publish_release(&schedule.target_id).await {
                Ok(_) => None,
                Err(e) if e.failure == Failure::Forbidden => Some(e.message),
                // Anything else (a conflict, a release gone) the publish names.
                Err(_) => None,
            },
            kind => {
                let kind =
                    EntityKind::parse("target", kind).map_err(|e| quire_store::StoreError::Corrupt(e.to_string()))?;
                authorize(&actor, Permission::Publish(kind)).err().map(|e| e.message)
            }
        };
        Ok(refused.map(|why| format!("{who}, who scheduled it, may no longer do it: {why}")))
    }

    /// Runs schedules as they fall due, until the task is dropped: sleeps
    /// until the next one is due, at most [`POLL`], so a schedule made by
    /// another process runs within that of its time. A failure to reach
    /// the database is logged and tried again.
    pub async fn run(self) {
        loop {
            if let Err(e) = self.run_due().await {
                tracing::warn!(error = %e, "schedules could not run; trying again");
            }
            let next = self.store.next_schedule_due().await.ok().flatten();
            let wait = next.and_then(|at| (at - Utc::now()).to_std().ok()).map_or(POLL, |until| until.min(POLL));
            tokio::time::sleep(wait).await;
        }
    }
}
