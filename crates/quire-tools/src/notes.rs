//! Vault tools: readNote, writeNote, updateNote, listFolder, createFolder,
//! moveItem, copyNote, archiveItem, openNote, searchNotes. Every write goes
//! into the change log with the note's content before and after, so it can
//! be reverted like any other change ([`undo_note_change`], [`restore_note_revision`]).

use crate::catalog::{
    ListFolderArgs, MoveArgs, PathArgs, ReadNoteArgs, SearchNotesArgs, UpdateNoteArgs, WriteNoteArgs,
};
use crate::scope::limit;
use crate::services::Services;
use crate::tool::*;
use quire_core::model::{Change as LoggedChange, ChangeAction, ChangeContext, Surface};
use quire_store::Scope;
use quire_vault::{Change, ChangeOp, ErrorKind, SearchHit, Vault, VaultError};
use serde_json::{Value, json};
use std::sync::Arc;

/// A vault error as a tool error: the message names the parameter.
pub fn vault_error(e: VaultError) -> ToolError {
    let message = e.to_string();
    match e.kind() {
        ErrorKind::InvalidInput => ToolError::new(
            ErrorCode::Validation,
            message,
            "Fix the named parameter and call again; nothing was changed.",
        ),
        ErrorKind::NotFound => {
            ToolError::new(ErrorCode::NotFound, message, "Use listFolder or searchNotes to find the path.")
        }
        ErrorKind::Conflict => ToolError::new(
            ErrorCode::Conflict,
            message,
            "Nothing was changed. Choose another path, or pass overwrite: true if replacing is intended.",
        ),
        ErrorKind::Io => {
            tracing::error!(error = %message, "vault i/o failed");
            ToolError::new(
                ErrorCode::Internal,
                "the vault could not be read or written",
                "Try again; the server log has details.",
            )
        }
    }
}

async fn vault(call: &Call<'_>) -> Result<Arc<Vault>, ToolError> {
    call.services.vaults.of(call.store(), call.scope()).await
}

/// Runs a vault operation off the async threads.
async fn blocking<T: Send + 'static>(
    vault: Arc<Vault>,
    f: impl FnOnce(&Vault) -> Result<T, VaultError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(move || f(&vault))
        .await
        .map_err(|e| ToolError::new(ErrorCode::Internal, e.to_string(), ""))?
        .map_err(vault_error)
}

/// Runs a change off the async threads on the caller's vault and logs it:
/// the change and the id of its log record.
async fn logged(
    call: &Call<'_>,
    op: impl FnOnce(&Vault) -> Result<Change, VaultError> + Send + 'static,
) -> Result<(Change, i64), ToolError> {
    let change = blocking(vault(call).await?, op).await?;
    let id = log(call.store(), &call.ctx.change_context(), call.scope(), &change).await?;
    Ok((change, id))
}

/// What a change answers: `{ success, item, changeId, message }`.
fn changed(item: Value, id: i64, message: String) -> ToolResult {
    Ok(json!({ "success": true, "item": item, "changeId": id, "message": message }))
}

fn state(path: &str, content: &Option<String>, folder: bool) -> Value {
    if folder { json!({ "path": path, "folder": true }) } else { json!({ "path": path, "content": content }) }
}

fn op_name(op: ChangeOp) -> ChangeAction {
    match op {
        ChangeOp::Write => ChangeAction::Write,
        ChangeOp::Update => ChangeAction::Update,
        ChangeOp::CreateFolder => ChangeAction::CreateFolder,
        ChangeOp::Move => ChangeAction::Move,
        ChangeOp::Copy => ChangeAction::Copy,
        ChangeOp::Archive => ChangeAction::Archive,
        ChangeOp::Restore => ChangeAction::Restore,
    }
}

/// Logs a vault change: path, and the note's state before and after.
async fn log(
    store: &quire_store::Store,
    ctx: &ChangeContext,
    scope: &Scope,
    change: &Change,
) -> Result<i64, ToolError> {
    let folder = change.op == ChangeOp::CreateFolder || (change.before.is_none() && change.after.is_none());
    let op = op_name(change.op);
    let (before, after) = match change.op {
        ChangeOp::Write | ChangeOp::Update | ChangeOp::Restore => (
            change.before.as_ref().map(|_| state(&change.path, &change.before, false)),
            Some(state(&change.path, &change.after, false)),
        ),
        ChangeOp::CreateFolder => (None, Some(state(&change.path, &None, true))),
        ChangeOp::Copy => {
            let target = change.new_path.clone().unwrap_or_default();
            (
                change.before.as_ref().map(|_| state(&target, &change.before, false)),
                Some(state(&target, &change.after, false)),
            )
        }
        ChangeOp::Move => (
            Some(state(&change.path, &change.before, folder)),
            Some(state(change.new_path.as_deref().unwrap_or_default(), &change.after, folder)),
        ),
        ChangeOp::Archive => (
            Some(state(&change.path, &change.before, folder)),
            Some(state(
                change.archived_to.as_deref().or(change.new_path.as_deref()).unwrap_or_default(),
                &change.after,
                folder,
            )),
        ),
    };
    let entity = match change.op {
        ChangeOp::Copy => change.new_path.clone().unwrap_or_default(),
        _ => change.path.clone(),
    };
    Ok(store.log_note_change(ctx, scope, &entity, op, before, after).await?.id)
}

pub(crate) async fn read_note(call: &Call<'_>, a: ReadNoteArgs) -> ToolResult {
    let v = vault(call).await?;
    let lines = blocking(v, move |v| v.read(&a.path, a.start_line, a.end_line)).await?;
    Ok(json!({
        "success": true,
        "item": { "path": lines.path, "startLine": lines.start_line, "endLine": lines.end_line, "totalLines": lines.total_lines },
        "content": lines.numbered(),
    }))
}

pub(crate) async fn write_note(call: &Call<'_>, a: WriteNoteArgs) -> ToolResult {
    let (change, id) = logged(call, move |v| v.write(&a.path, &a.content, a.overwrite.unwrap_or(false))).await?;
    let verb = if change.before.is_some() { "Replaced" } else { "Created" };
    changed(json!({ "path": change.path }), id, format!("{verb} {}", change.path))
}

pub(crate) async fn update_note(call: &Call<'_>, a: UpdateNoteArgs) -> ToolResult {
    let (change, id) = logged(call, move |v| v.update(&a.path, &a.content, a.start_line, a.end_line)).await?;
    let lines = change.after.as_deref().map(|t| t.lines().count()).unwrap_or(0);
    let message =
        format!("Updated {}; it now has {lines} lines. Read it again before the next line edit.", change.path);
    changed(json!({ "path": change.path, "totalLines": lines }), id, message)
}

pub(crate) async fn list_folder(call: &Call<'_>, a: ListFolderArgs) -> ToolResult {
    let v = vault(call).await?;
    let items =
        blocking(v, move |v| v.list(a.path.as_deref(), a.filter.as_deref(), a.include_hidden.unwrap_or(false))).await?;
    let items: Vec<Value> = items.into_iter().map(|i| serde_json::to_value(i).unwrap_or_default()).collect();
    Ok(items_result(items, None))
}

pub(crate) async fn create_folder(call: &Call<'_>, a: PathArgs) -> ToolResult {
    let (change, id) = logged(call, move |v| v.create_folder(&a.path)).await?;
    changed(json!({ "path": change.path, "kind": "folder" }), id, format!("Created folder {}", change.path))
}

pub(crate) async fn move_item(call: &Call<'_>, a: MoveArgs) -> ToolResult {
    let v = vault(call).await?;
    let change = blocking(v, move |v| v.move_item(&a.path, &a.new_path, a.overwrite.unwrap_or(false))).await?;
    let ctx = call.ctx.change_context();
    let new_path = change.new_path.clone().unwrap_or_default();
    if let Some(archived) = &change.archived_to {
        // The note the move replaced went to the archive first.
        let replaced = Change {
            op: ChangeOp::Archive,
            path: new_path.clone(),
            new_path: Some(archived.clone()),
            archived_to: Some(archived.clone()),
            before: None,
            after: None,
        };
        log(call.store(), &ctx, call.scope(), &replaced).await?;
    }
    let id = log(call.store(), &ctx, call.scope(), &change).await?;
    let mut message = format!("Moved {} to {new_path}", change.path);
    if let Some(archived) = &change.archived_to {
        message.push_str(&format!("; the note it replaced is in {archived}"));
    }
    changed(json!({ "path": new_path, "from": change.path }), id, message)
}

pub(crate) async fn copy_note(call: &Call<'_>, a: MoveArgs) -> ToolResult {
    let (change, id) = logged(call, move |v| v.copy_note(&a.path, &a.new_path, a.overwrite.unwrap_or(false))).await?;
    let new_path = change.new_path.clone().unwrap_or_default();
    changed(json!({ "path": new_path, "from": change.path }), id, format!("Copied {} to {new_path}", change.path))
}

pub(crate) async fn archive_item(call: &Call<'_>, a: PathArgs) -> ToolResult {
    let (change, id) = logged(call, move |v| v.archive(&a.path)).await?;
    let to = change.archived_to.clone().or(change.new_path.clone()).unwrap_or_default();
    let message = format!("Archived {} to {to}; moveItem brings it back", change.path);
    changed(json!({ "path": change.path, "archivedTo": to }), id, message)
}

pub(crate) async fn open_note(call: &Call<'_>, a: PathArgs) -> ToolResult {
    let v = vault(call).await?;
    let path = a.path.clone();
    let exists = blocking(v, move |v| v.exists_note(&a.path)).await?;
    if !exists {
        return Err(ToolError::new(
            ErrorCode::NotFound,
            format!("path: \"{path}\" is not a note in the vault"),
            "Use listFolder or searchNotes to find the path.",
        ));
    }
    let message = match call.ctx.surface {
        Surface::Agent => format!("Asked the user's screen to open {path}."),
        other => {
            format!("No screen is attached to the {other} surface, so nothing was opened; the note exists at {path}.")
        }
    };
    Ok(
        json!({ "success": true, "item": { "path": path }, "opened": call.ctx.surface == Surface::Agent, "message": message }),
    )
}

pub(crate) async fn search_notes(call: &Call<'_>, a: SearchNotesArgs) -> ToolResult {
    let n = limit(a.limit, 20, 100)? as usize;
    let v = vault(call).await?;
    let include_archive = a.include_archive.unwrap_or(false);
    let Some(embedder) = call.services.embedder.clone() else {
        let hits = blocking(v, move |v| v.search(&a.query, a.path.as_deref(), n, include_archive)).await?;
        return Ok(ranked_hits(hits, "fulltext"));
    };
    // Hybrid: the notes full text ranks (hits of a note share its score)
    // fused by reciprocal rank with the notes nearest in meaning, among the
    // same notes (the folder asked, the archive only when asked).
    let pool = crate::embed::POOL;
    let (query, path) = (a.query.clone(), a.path.clone());
    let fulltext = blocking(Arc::clone(&v), move |v| {
        v.search_among(&query, path.as_deref(), (n * 4).max(pool * 4), include_archive)
    });
    let meaning = crate::embed::query_vector(embedder.as_ref(), &a.query);
    let (fulltext, meaning) = tokio::join!(fulltext, meaning);
    let (hits, searched) = fulltext?;
    let similar = match meaning {
        Ok(q) => {
            let searched: std::collections::HashSet<String> = searched.into_iter().collect();
            let site = &call.scope().site_id;
            let model = embedder.model();
            call.store()
                .similar_notes(site, model, &q, pool, crate::embed::MIN_SIMILARITY, &searched)
                .await
                .map_err(|e| e.to_string())
        }
        Err(e) => Err(e),
    };
    let similar = match similar {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!(error = %e, "semantic search of notes unavailable; full text alone answers");
            return Ok(ranked_hits(hits.into_iter().take(n).collect(), "fulltext"));
        }
    };
    let mut by_words: Vec<String> = Vec::new();
    for h in &hits {
        if by_words.last() != Some(&h.path) && !by_words.contains(&h.path) {
            by_words.push(h.path.clone());
        }
    }
    by_words.truncate(pool);
    let by_meaning: Vec<String> = similar.into_iter().map(|(p, _)| p).collect();
    let ranked = crate::embed::fuse(&[by_words, by_meaning], pool);
    let out = blocking(v, move |v| {
        let mut out = Vec::new();
        for (rank, path) in ranked.iter().enumerate() {
            if out.len() >= n {
                break;
            }
            // Higher is better, as the full-text scores: by fused rank.
            let score = (ranked.len() - rank) as f32;
            let lines: Vec<&SearchHit> = hits.iter().filter(|h| &h.path == path).collect();
            if lines.is_empty() {
                // Found by meaning alone: its first line of text.
                let Some(content) = v.read_all(path)? else { continue };
                let (line, snippet) = first_line(&content);
                out.push(SearchHit { path: path.clone(), line, snippet, score });
            } else {
                out.extend(lines.into_iter().map(|h| SearchHit { score, ..h.clone() }));
            }
        }
        out.truncate(n);
        Ok(out)
    })
    .await?;
    Ok(ranked_hits(out, "hybrid"))
}

/// Hits as the tool's answer, saying which ranking answered.
fn ranked_hits(hits: Vec<SearchHit>, ranking: &str) -> Value {
    let items: Vec<Value> = hits.into_iter().map(|h| serde_json::to_value(h).unwrap_or_default()).collect();
    let mut out = items_result(items, None);
    out["ranking"] = json!(ranking);
    out
}

/// The first line of a note with text (1-based) and that text, trimmed and
/// cut to about 160 characters; line 1 and nothing for an empty note.
fn first_line(content: &str) -> (usize, String) {
    let Some((i, line)) = content.lines().enumerate().find(|(_, l)| !l.trim().is_empty()) else {
        return (1, String::new());
    };
    let line = line.trim();
    let mut snippet: String = line.chars().take(160).collect();
    if line.chars().count() > 160 {
        snippet.push('…');
    }
    (i + 1, snippet)
}

/// What the change log holds about a note at one moment.
struct NoteState {
    path: String,
    content: Option<String>,
    folder: bool,
}

fn note_state(v: &Option<Value>) -> Option<NoteState> {
    let v = v.as_ref()?;
    Some(NoteState {
        path: v.get("path")?.as_str()?.to_string(),
        content: v.get("content").and_then(Value::as_str).map(str::to_string),
        folder: v.get("folder").and_then(Value::as_bool).unwrap_or(false),
    })
}

/// Checks that a logged note change can be undone: the note is still as the
/// change left it. Changes nothing.
pub async fn check_note_undo(vault: Arc<Vault>, change: &LoggedChange) -> Result<(), ToolError> {
    let after = note_state(&change.after);
    let label = change.entity_id.clone();
    blocking(vault, move |v| {
        let Some(after) = after else { return Ok(()) };
        if after.folder {
            return Ok(());
        }
        let now = v.read_all(&after.path)?;
        if now != after.content {
            return Err(VaultError::Conflict {
                field: quire_vault::Param::Path,
                message: format!("\"{label}\" changed since; nothing was undone"),
            });
        }
        Ok(())
    })
    .await
}

/// Undoes one logged note change (back to its `before`): content is put
/// back, a created note or folder is archived, a move or an archive is moved
/// back. Refuses when the note changed since.
pub async fn undo_note_change(vault: Arc<Vault>, change: &LoggedChange) -> Result<Change, ToolError> {
    check_note_undo(Arc::clone(&vault), change).await?;
    let before = note_state(&change.before);
    let after = note_state(&change.after);
    let action = change.action;
    blocking(vault, move |v| match (before, after) {
        (None, Some(after)) => v.archive(&after.path),
        (Some(before), Some(after)) if before.path != after.path => v.move_item(&after.path, &before.path, false),
        (Some(before), Some(_)) => match before.content {
            Some(content) => v.restore_content(&before.path, &content),
            None => Err(VaultError::Conflict {
                field: quire_vault::Param::Path,
                message: format!("the {action} of \"{}\" kept no content to go back to", before.path),
            }),
        },
        (_, None) => Err(VaultError::Conflict {
            field: quire_vault::Param::Path,
            message: format!("a {action} without an after state cannot be undone"),
        }),
    })
    .await
}

/// Puts a note back to the revision a logged change left (its `after`).
pub async fn restore_note_revision(
    services: &Services,
    ctx: &ChangeContext,
    scope: &Scope,
    change: &LoggedChange,
) -> Result<LoggedChange, ToolError> {
    let Some(after) = note_state(&change.after).filter(|a| !a.folder && a.content.is_some()) else {
        return Err(ToolError::invalid(
            format!("change {} left no note content to restore; move the note back with moveItem instead", change.id),
            "Pick a write or update change.",
        ));
    };
    let vault = services.vaults.of(&services.store, scope).await?;
    let content = after.content.clone().unwrap_or_default();
    let path = after.path.clone();
    let restored = blocking(vault, move |v| v.restore_content(&path, &content)).await?;
    if restored.before == restored.after {
        return Err(ToolError::new(
            ErrorCode::Conflict,
            format!("\"{}\" is already at that revision", after.path),
            "Nothing to do.",
        ));
    }
    let id = log(&services.store, ctx, scope, &Change { op: ChangeOp::Restore, ..restored }).await?;
    Ok(services.store.change(scope, id).await?)
}

/// Undoes every note change of an agent turn (newest first), after checking
/// all of them can be; answers the changes it logged.
pub async fn undo_note_changes(
    services: &Services,
    ctx: &ChangeContext,
    scope: &Scope,
    changes: &[LoggedChange],
) -> Result<Vec<LoggedChange>, ToolError> {
    if changes.is_empty() {
        return Ok(Vec::new());
    }
    let vault = services.vaults.of(&services.store, scope).await?;
    let mut logged = Vec::new();
    for change in changes {
        let done = undo_note_change(Arc::clone(&vault), change).await?;
        let id = log(&services.store, ctx, scope, &done).await?;
        logged.push(services.store.change(scope, id).await?);
    }
    Ok(logged)
}

/// Checks that the note changes of a turn (newest first) can be undone:
/// the newest change of each path must match the note as it is now (older
/// ones are checked as the undo goes back). Changes nothing.
pub async fn check_note_changes(services: &Services, scope: &Scope, changes: &[LoggedChange]) -> Result<(), ToolError> {
    if changes.is_empty() {
        return Ok(());
    }
    let vault = services.vaults.of(&services.store, scope).await?;
    let mut seen: Vec<String> = Vec::new();
    for change in changes {
        let paths: Vec<String> =
            [&change.before, &change.after].into_iter().filter_map(note_state).map(|s| s.path).collect();
        if paths.iter().any(|p| seen.contains(p)) {
            seen.extend(paths);
            continue;
        }
        check_note_undo(Arc::clone(&vault), change).await?;
        seen.extend(paths);
    }
    Ok(())
}

/// The demo vault: a few notes in two folders, written when the vault is empty.
pub async fn seed_demo_vault(services: &Services, scope: &Scope) -> Result<usize, ToolError> {
    let vault = services.vaults.of(&services.store, scope).await?;
    blocking(vault, |v| {
        if !v.list(None, None, true)?.is_empty() {
            return Ok(0);
        }
        let notes = [
            ("Welcome.md", "# Welcome\n\nThis vault holds the team's notes. Folders: projects, meetings.\n"),
            (
                "projects/site-relaunch.md",
                "# Site relaunch\n\n## Goals\n- Faster pages\n- A clearer pricing page\n\n## Open questions\n- Which testimonials go on the home page?\n",
            ),
            ("projects/content-calendar.md", "# Content calendar\n\n- Week 1: launch post\n- Week 2: customer story\n- Week 3: pricing update\n"),
            (
                "meetings/2026-11-02 kickoff.md",
                "# Kickoff\n\nAttendees: Ana, Bo, Chen\n\n- Agreed on the relaunch scope\n- Chen drafts the pricing copy\n",
            ),
        ];
        for (path, content) in notes {
            v.write(path, content, false)?;
        }
        Ok(notes.len())
    })
    .await
}
