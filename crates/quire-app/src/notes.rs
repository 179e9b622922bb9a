//! Read a note of the actor's vault whole, as an editor shows it (the
//! vault tools read a range of numbered lines at a time). Writing a note
//! is the vault tools' (`writeNote`, `createFolder`, `archiveItem`),
//! called through the registry.

use crate::{Actor, AppError, AppResult, Failure, Permission, authorize};
use quire_tools::Registry;

/// A note's whole text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteText {
    /// Its path in the vault, as the vault names it.
    pub path: String,
    /// Its lines, joined by `\n`.
    pub text: String,
}

/// The whole text of the note at `path` in the vault of the actor's site.
/// Not found for a path that names no note (or leaves the vault); a vault
/// that cannot be opened is an internal failure, in the vault's words.
pub async fn note_text(registry: &Registry, actor: &Actor, path: &str) -> AppResult<NoteText> {
    authorize(actor, Permission::Read)?;
    let services = registry.services();
    let vault = services.vaults.of(&services.store, &actor.scope).await?;
    let path = path.to_string();
    let lines = tokio::task::spawn_blocking(move || vault.read(&path, 1, None))
        .await
        .map_err(|e| AppError::new(Failure::Internal, e.to_string()))?
        .map_err(|e| AppError::not_found(e.to_string()))?;
    let text = lines.lines.into_iter().map(|(_, l)| l).collect::<Vec<_>>().join("\n");
    Ok(NoteText { path: lines.path, text })
}
