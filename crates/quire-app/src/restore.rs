//! Bring back what was: a record as it was after a change (notes and
//! records alike), or an archive with everything that went along.

use crate::{Actor, AppResult, Permission, authorize};
use quire_core::model::{Archive, Change, EntityKind};
use quire_tools::Registry;

/// Puts a record (or a note) back to its state right after change `id`;
/// the revert is itself logged, so it can be undone the same way.
pub async fn restore_revision(registry: &Registry, actor: &Actor, id: i64) -> AppResult<Change> {
    let store = &registry.services().store;
    // Reading the change says what it is; the kind decides the rest.
    authorize(actor, Permission::Read)?;
    let change = store.change(&actor.scope, id).await?;
    authorize(actor, Permission::RestoreRevision(change.entity))?;
    if change.entity == EntityKind::Note {
        let services = registry.services();
        return Ok(
            quire_tools::notes::restore_note_revision(services, &actor.change_context(), &actor.scope, &change).await?
        );
    }
    Ok(store.restore_revision(&actor.change_context(), &actor.scope, id).await?)
}

/// Restores archives together, all or none.
pub async fn restore_archives(registry: &Registry, actor: &Actor, ids: &[String]) -> AppResult<Vec<Archive>> {
    let store = &registry.services().store;
    authorize(actor, Permission::Read)?;
    for id in ids {
        let archive = store.archive_record(&actor.scope, id).await?;
        authorize(actor, Permission::RestoreArchive(archive.entity))?;
    }
    Ok(store.restore(&actor.change_context(), &actor.scope, ids).await?)
}

/// Restores one archive and what it took along.
pub async fn restore_archive(registry: &Registry, actor: &Actor, id: &str) -> AppResult<Archive> {
    let mut restored = restore_archives(registry, actor, &[id.to_string()]).await?;
    Ok(restored.remove(0))
}
