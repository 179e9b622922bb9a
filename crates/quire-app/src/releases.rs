//! Releases as one actor may make and publish them: a named set of
//! documents published together, in one transaction, and reverted together.
//!
//! Reading needs [`Permission::Read`]. Making, renaming and discarding a
//! release needs the right to publish some kind of document; staging a
//! document needs the right to publish its kind (and to archive it, for an
//! archive); publishing or reverting a release needs those rights for every
//! document it holds, checked before anything is written.

use crate::content::Content;
use crate::{AppResult, Permission, authorize};
use quire_core::model::{EntityKind, ReleaseAction, ReleaseState};
use quire_store::Fingerprint;
pub use quire_store::{ItemReview, Release, ReleaseItem, ReleasePatch, ReleaseReview, Stage};

/// The kinds a release holds.
const DOCUMENTS: [EntityKind; 3] = [EntityKind::Page, EntityKind::Entry, EntityKind::Navigation];

impl Content {
    /// The site's releases, newest first, in `state` if given.
    pub async fn releases(&self, state: Option<ReleaseState>) -> AppResult<Vec<Release>> {
        authorize(self.actor(), Permission::Read)?;
        Ok(self.store().releases(&self.actor().scope, state).await?)
    }

    /// A release with each document's differences and conflicts, and what
    /// an approval of its publish or revert is checked against.
    pub async fn release_review(&self, id: &str) -> AppResult<(ReleaseReview, Fingerprint)> {
        authorize(self.actor(), Permission::Read)?;
        Ok(self.store().release_review(&self.actor().scope, id).await?)
    }

    /// The releases the turns of session `session` (one the actor may see)
    /// staged their changes in, as (turn, release id), in turn order.
    pub async fn session_releases(&self, session: &str) -> AppResult<Vec<(i64, String)>> {
        self.session(session).await?;
        Ok(self.store().staged_releases(&self.actor().scope, session).await?)
    }

    /// Makes an open release.
    pub async fn create_release(&self, name: &str, description: Option<&str>) -> AppResult<Release> {
        self.may_publish_something()?;
        let actor = self.actor();
        Ok(self.store().create_release(&actor.change_context(), &actor.scope, name, description).await?)
    }

    /// Renames or redescribes a release not yet published.
    pub async fn update_release(&self, id: &str, patch: ReleasePatch) -> AppResult<Release> {
        self.may_publish_something()?;
        let actor = self.actor();
        Ok(self.store().update_release(&actor.change_context(), &actor.scope, id, patch).await?)
    }

    /// Gives up a release without publishing it (it is kept, discarded).
    pub async fn discard_release(&self, id: &str) -> AppResult<Release> {
        self.may_publish_something()?;
        let actor = self.actor();
        Ok(self.store().discard_release(&actor.change_context(), &actor.scope, id).await?)
    }

    /// Puts a document into an open release.
    pub async fn stage(&self, id: &str, stage: Stage) -> AppResult<Release> {
        self.may_do(stage.entity, stage.action)?;
        let actor = self.actor();
        Ok(self.store().stage(&actor.change_context(), &actor.scope, id, stage).await?)
    }

    /// Takes a document out of an open release.
    /// With `locale`, its translation into that locale.
    pub async fn unstage(
        &self,
        id: &str,
        kind: EntityKind,
        document: &str,
        locale: Option<&str>,
    ) -> AppResult<Release> {
        authorize(self.actor(), Permission::Publish(kind))?;
        let actor = self.actor();
        Ok(self.store().unstage(&actor.change_context(), &actor.scope, id, kind, document, locale).await?)
    }

    /// Publishes an open release, all of it or nothing; with `expected`,
    /// only if it still holds what that preview showed.
    pub async fn publish_release(&self, id: &str, expected: Option<&Fingerprint>) -> AppResult<Release> {
        // What was checked is what publishes: a document staged meanwhile
        // makes the publish refuse.
        let checked = self.may_publish_release(id).await?;
        let expected = expected.unwrap_or(&checked);
        let actor = self.actor();
        Ok(self.store().publish_release(&actor.change_context(), &actor.scope, id, Some(expected)).await?)
    }

    /// Sets a published release back as one unit.
    pub async fn revert_release(&self, id: &str, expected: Option<&Fingerprint>) -> AppResult<Release> {
        let checked = self.may_publish_release(id).await?;
        let expected = expected.unwrap_or(&checked);
        let actor = self.actor();
        Ok(self.store().revert_release(&actor.change_context(), &actor.scope, id, Some(expected)).await?)
    }

    /// Refuses unless the actor may publish pages, entries or navigations.
    fn may_publish_something(&self) -> AppResult<()> {
        let refusals: Vec<_> =
            DOCUMENTS.iter().map(|kind| authorize(self.actor(), Permission::Publish(*kind))).collect();
        match refusals.iter().any(Result::is_ok) {
            true => Ok(()),
            false => refusals.into_iter().find(Result::is_err).unwrap_or(Ok(())),
        }
    }

    /// Refuses unless the actor may do `action` to documents of `kind`.
    fn may_do(&self, kind: EntityKind, action: ReleaseAction) -> AppResult<()> {
        authorize(self.actor(), Permission::Publish(kind))?;
        if action == ReleaseAction::Archive {
            authorize(self.actor(), Permission::Delete(kind))?;
        }
        Ok(())
    }

    /// Refuses unless the actor may do what release `id` does to each of
    /// its documents; answers what was checked, for the write to hold to.
    pub(crate) async fn may_publish_release(&self, id: &str) -> AppResult<Fingerprint> {
        self.may_publish_something()?;
        let (review, fingerprint) = self.store().release_review(&self.actor().scope, id).await?;
        for item in &review.items {
            self.may_do(item.entity, item.action)?;
        }
        Ok(fingerprint)
    }
}
