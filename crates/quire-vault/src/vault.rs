//! The vault and its operations: the `read`, `write`, `update`, `list`, `createFolder`, `move`, `copy`, `archive`
//! and search tools, each a method of [`Vault`].

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::error::{Param, VaultError};
use crate::files::{self, MAX_NOTE_BYTES, ReadTextError, Show};
use crate::glob::Glob;
use crate::lines::{self, LineEdit, Text};
use crate::sandbox::{self, ARCHIVE_DIR, Resolved, in_archive};
use crate::search::{self, NoteFile, SearchHit, SearchIndex};

/// How many archive folders one second can get (`…-2`, `…-3`, …) before archiving gives up.
const MAX_ARCHIVES_PER_SECOND: usize = 1000;

/// A folder of notes on disk that every operation is confined to.
///
/// All methods are synchronous and do plain file system calls; an async caller runs them on a blocking thread.
/// A `Vault` can be shared between threads: the search index sits behind a mutex, and moves and archives are
/// serialized so two of them cannot pick the same archive folder.
#[derive(Debug)]
pub struct Vault {
    /// Canonical path of the vault folder.
    root: PathBuf,
    index: Mutex<SearchIndex>,
    /// Held by operations that move entries into `.archive`.
    moving: Mutex<()>,
}

/// A note and what tells its versions apart, as returned by [`Vault::note_stamps`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteStamp {
    /// The note, relative to the vault.
    pub path: String,
    /// Modification time (nanoseconds) and size in bytes.
    pub stamp: String,
}

/// Lines of a note, as returned by [`Vault::read`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NoteLines {
    /// The note, relative to the vault.
    pub path: String,
    /// The first line returned (1-based).
    pub start_line: usize,
    /// The last line returned (inclusive); `start_line - 1` when no line is returned (an empty note).
    pub end_line: usize,
    /// How many lines the whole note has.
    pub total_lines: usize,
    /// The lines returned with their numbers, without line breaks.
    pub lines: Vec<(usize, String)>,
}

impl NoteLines {
    /// The lines as text for a model: one line per note line, `number: text`, numbers not padded
    /// (`"9: last of the nine\n10: first of the tens"`), joined by `\n` without a trailing newline.
    pub fn numbered(&self) -> String {
        let mut out = String::new();
        for (index, (number, text)) in self.lines.iter().enumerate() {
            if index > 0 {
                out.push('\n');
            }
            out.push_str(&format!("{number}: {text}"));
        }
        out
    }
}

/// Whether a listed item is a note (any file) or a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ItemKind {
    /// A file.
    File,
    /// A folder.
    Folder,
}

/// One entry of a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// Relative to the vault, `/` separated.
    pub path: String,
    /// File or folder.
    pub kind: ItemKind,
    /// Size in bytes, for files.
    pub size: Option<u64>,
    /// Last modification, when the file system records it.
    pub modified: Option<DateTime<Utc>>,
}

/// Which operation a [`Change`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ChangeOp {
    /// [`Vault::write`]
    Write,
    /// [`Vault::update`]
    Update,
    /// [`Vault::create_folder`]
    CreateFolder,
    /// [`Vault::move_item`]
    Move,
    /// [`Vault::copy_note`]
    Copy,
    /// [`Vault::archive`]
    Archive,
    /// [`Vault::restore_content`]
    Restore,
}

/// What an operation changed, for the change log and for undoing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// The operation.
    pub op: ChangeOp,
    /// The note or folder operated on (the source of a move or copy), relative to the vault.
    pub path: String,
    /// The destination of a move or copy, or where an archived item now is.
    pub new_path: Option<String>,
    /// Where an item went inside `.archive`: the archived item itself for [`ChangeOp::Archive`], or the note that a
    /// move with `overwrite: true` replaced.
    pub archived_to: Option<String>,
    /// The whole text of the note written before the operation: the replaced note of a write, update, copy or
    /// restore (`None` when there was none), the moved or archived note. `None` for folders and for files that
    /// are not UTF-8 text or larger than 8 MiB.
    pub before: Option<String>,
    /// The whole text after the operation, with the same exceptions.
    pub after: Option<String>,
}

impl Change {
    fn new(op: ChangeOp, path: &str) -> Change {
        Change { op, path: path.to_owned(), new_path: None, archived_to: None, before: None, after: None }
    }
}

impl Vault {
    /// Opens the vault at `root`, creating the folder (and its parents) when missing.
    pub fn open(root: impl AsRef<Path>) -> Result<Vault, VaultError> {
        let root = root.as_ref();
        fs::create_dir_all(root).map_err(|error| VaultError::io(None, "could not create the vault folder", error))?;
        let root =
            fs::canonicalize(root).map_err(|error| VaultError::io(None, "could not open the vault folder", error))?;
        Ok(Vault { root, index: Mutex::new(SearchIndex::default()), moving: Mutex::new(()) })
    }

    /// The vault folder, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Reads lines `start_line..=end_line` (1-based) of a note.
    ///
    /// `end_line` defaults to the last line and is clamped to it; `start_line` past the end is refused with the
    /// note's line count, except `1` on an empty note, which returns no lines.
    pub fn read(&self, path: &str, start_line: i64, end_line: Option<i64>) -> Result<NoteLines, VaultError> {
        let note = self.resolve(path, Param::Path)?;
        let text = Text::parse(&self.read_note(&note, Param::Path)?);
        let (start, end) = lines::read_range(text.len(), start_line, end_line)
            .map_err(|error| VaultError::invalid(error.param(), error.describe(&note.rel)))?;
        let lines =
            (start..=end).filter_map(|number| text.line(number).map(|line| (number, line.to_owned()))).collect();
        Ok(NoteLines { path: note.rel, start_line: start, end_line: end, total_lines: text.len(), lines })
    }

    /// Writes a whole note, creating missing parent folders. An existing note is replaced only with `overwrite`,
    /// and only when it is UTF-8 text of at most 8 MiB (its old text goes into [`Change::before`]). The content is
    /// written as given, byte for byte.
    pub fn write(&self, path: &str, content: &str, overwrite: bool) -> Result<Change, VaultError> {
        self.put(path, content, overwrite, ChangeOp::Write)
    }

    /// The whole-note write behind [`Vault::write`] and [`Vault::restore_content`].
    fn put(&self, path: &str, content: &str, overwrite: bool, op: ChangeOp) -> Result<Change, VaultError> {
        let note = self.resolve_target(path, Param::Path)?;
        check_content_size(content)?;
        let before = if note.exists {
            if self.is_folder(&note, Param::Path)? {
                return Err(VaultError::invalid(Param::Path, format!("{:?} is a folder, not a note", note.rel)));
            }
            if !overwrite {
                return Err(already_exists(Param::Path, &note.rel));
            }
            Some(self.read_note(&note, Param::Path)?)
        } else {
            None
        };
        self.create_parents(&note, Param::Path)?;
        files::write_atomically(&note.real, content.as_bytes())
            .map_err(|error| VaultError::io(Some(Param::Path), format!("could not write {:?}", note.rel), error))?;
        self.forget(&note);
        Ok(Change { before, after: Some(content.to_owned()), ..Change::new(op, &note.rel) })
    }

    /// Edits a note by line (see [`LineEdit::from_params`]): `start_line` alone inserts the content before that
    /// line (one past the last appends), `-1` appends, `start_line` with `end_line` replaces that inclusive range,
    /// and empty content with a range deletes it. Line endings and the final newline are kept.
    pub fn update(
        &self,
        path: &str,
        content: &str,
        start_line: i64,
        end_line: Option<i64>,
    ) -> Result<Change, VaultError> {
        let note = self.resolve_target(path, Param::Path)?;
        check_content_size(content)?;
        let line_error = |error: lines::LineError| VaultError::invalid(error.param(), error.describe(&note.rel));
        let edit = LineEdit::from_params(start_line, end_line, content).map_err(line_error)?;
        let before = self.read_note(&note, Param::Path)?;
        let mut text = Text::parse(&before);
        text.apply(edit).map_err(line_error)?;
        let after = text.render();
        if after.len() as u64 > MAX_NOTE_BYTES {
            return Err(VaultError::invalid(
                Param::Content,
                format!(
                    "would make {:?} {}; notes larger than 8 MiB are refused",
                    note.rel,
                    mebibytes(after.len() as u64)
                ),
            ));
        }
        files::write_atomically(&note.real, after.as_bytes())
            .map_err(|error| VaultError::io(Some(Param::Path), format!("could not write {:?}", note.rel), error))?;
        self.forget(&note);
        Ok(Change { before: Some(before), after: Some(after), ..Change::new(ChangeOp::Update, &note.rel) })
    }

    /// Lists a folder (the vault root when `path` is `None`, `""`, `"."` or `"/"`): folders first, then files,
    /// each sorted by name.
    ///
    /// `filter` is a glob (see [`crate::glob`]; `""` means none) matched against each child's name; a filter containing `/` or `**`
    /// lists the whole tree below the folder instead and keeps the items whose path, either relative to the vault
    /// or relative to the listed folder, matches. Names starting with a dot (`.archive`, `.obsidian`, …) are left
    /// out unless `include_hidden`; temporary files of atomic writes are always left out, and so are symbolic
    /// links leading outside the vault. Symbolic links to folders are listed but not descended into.
    pub fn list(
        &self,
        path: Option<&str>,
        filter: Option<&str>,
        include_hidden: bool,
    ) -> Result<Vec<Item>, VaultError> {
        let folder = self.resolve_folder_or_root(path)?;
        let glob = filter
            .filter(|filter| !filter.is_empty())
            .map(|filter| Glob::new(filter).map_err(|message| VaultError::invalid(Param::Filter, message)))
            .transpose()?;
        let show = if include_hidden { Show::All } else { Show::Visible };
        let listing_error =
            |error: io::Error| VaultError::io(Some(Param::Path), format!("could not list {:?}", folder.rel), error);
        let mut items = Vec::new();
        match glob {
            Some(glob) if glob.matches_paths() => {
                let prefix = if folder.rel.is_empty() { String::new() } else { format!("{}/", folder.rel) };
                let mut pending = vec![(folder.real.clone(), folder.rel.clone())];
                let mut first = true;
                while let Some((dir_abs, dir_rel)) = pending.pop() {
                    let entries = match files::children(&self.root, &dir_abs, &dir_rel, show) {
                        Ok(entries) => entries,
                        Err(error) if first => return Err(listing_error(error)),
                        Err(_) => continue,
                    };
                    first = false;
                    for entry in entries {
                        let inner = entry.rel.strip_prefix(&prefix).unwrap_or(&entry.rel);
                        if entry.meta.is_dir() && !entry.is_link {
                            pending.push((entry.abs.clone(), entry.rel.clone()));
                        }
                        if glob.is_match(&entry.rel) || glob.is_match(inner) {
                            items.push(item(&entry));
                        }
                    }
                }
            }
            glob => {
                let entries = files::children(&self.root, &folder.real, &folder.rel, show).map_err(listing_error)?;
                items.extend(
                    entries
                        .iter()
                        .filter(|entry| glob.as_ref().is_none_or(|glob| glob.is_match(&entry.name)))
                        .map(item),
                );
            }
        }
        items.sort_by(|a, b| {
            (a.kind != ItemKind::Folder)
                .cmp(&(b.kind != ItemKind::Folder))
                .then_with(|| a.path.to_lowercase().cmp(&b.path.to_lowercase()))
                .then_with(|| a.path.cmp(&b.path))
        });
        Ok(items)
    }

    /// Creates a folder and any missing parents. An existing folder or note at `path` is a conflict.
    pub fn create_folder(&self, path: &str) -> Result<Change, VaultError> {
        let folder = self.resolve_target(path, Param::Path)?;
        if folder.exists {
            let what = if self.is_folder(&folder, Param::Path)? { "folder" } else { "note" };
            return Err(VaultError::conflict(Param::Path, format!("{:?} already exists as a {what}", folder.rel)));
        }
        self.create_parents(&folder, Param::Path)?;
        fs::create_dir(&folder.real).map_err(|error| match error.kind() {
            io::ErrorKind::AlreadyExists => {
                VaultError::conflict(Param::Path, format!("{:?} already exists", folder.rel))
            }
            _ => VaultError::io(Some(Param::Path), format!("could not create {:?}", folder.rel), error),
        })?;
        Ok(Change::new(ChangeOp::CreateFolder, &folder.rel))
    }

    /// Moves or renames a note or folder, creating missing parents of the destination.
    ///
    /// An existing destination is a conflict unless `overwrite`; then a note replaces a note, after the replaced
    /// note has been archived ([`Change::archived_to`]) so nothing is lost. A folder is never replaced, nor is a
    /// note replaced by a folder. A folder cannot move into itself. Moving out of `.archive` (a restore) is
    /// allowed; moving into it is not (use [`Vault::archive`]). A symbolic link is moved as a link.
    pub fn move_item(&self, path: &str, new_path: &str, overwrite: bool) -> Result<Change, VaultError> {
        let _moving = self.lock_moving();
        let source = self.resolve(path, Param::Path)?;
        if !source.exists {
            return Err(does_not_exist(Param::Path, &source.rel));
        }
        if source.rel.eq_ignore_ascii_case(ARCHIVE_DIR) || source.real_rel.eq_ignore_ascii_case(ARCHIVE_DIR) {
            return Err(VaultError::invalid(
                Param::Path,
                format!("{:?} is the archive itself; move the items inside it instead", source.rel),
            ));
        }
        let target = self.resolve_target(new_path, Param::NewPath)?;
        if target.rel == source.rel {
            return Err(VaultError::invalid(Param::NewPath, format!("{:?} is the same as path", target.rel)));
        }
        let source_is_folder = self.is_folder(&source, Param::Path)?;
        let inside_source = |resolved: &Resolved, of: &Resolved| {
            resolved.rel.starts_with(&format!("{}/", of.rel)) || resolved.real.starts_with(&of.real)
        };
        if source_is_folder && inside_source(&target, &source) {
            return Err(VaultError::invalid(
                Param::NewPath,
                format!("{:?} is inside {:?}; a folder cannot be moved into itself", target.rel, source.rel),
            ));
        }
        let mut archived_to = None;
        let same_entry = target.exists && target.real == source.real;
        if target.exists && !same_entry {
            if !overwrite {
                return Err(already_exists(Param::NewPath, &target.rel));
            }
            if self.is_folder(&target, Param::NewPath)? {
                return Err(VaultError::conflict(
                    Param::NewPath,
                    format!(
                        "{:?} is an existing folder; folders are never replaced, even with overwrite: true",
                        target.rel
                    ),
                ));
            }
            if source_is_folder {
                return Err(VaultError::conflict(
                    Param::NewPath,
                    format!("{:?} is an existing note; a folder cannot replace it", target.rel),
                ));
            }
            archived_to = Some(self.archive_entry(&target, Utc::now(), Param::NewPath)?);
        }
        let content = if source_is_folder { None } else { files::read_text(&source.real).ok() };
        self.create_parents(&target, Param::NewPath)?;
        fs::rename(&source.abs, &target.abs).map_err(|error| {
            VaultError::io(Some(Param::NewPath), format!("could not move {:?} to {:?}", source.rel, target.rel), error)
        })?;
        self.forget(&source);
        self.forget(&target);
        Ok(Change {
            new_path: Some(target.rel.clone()),
            archived_to,
            before: content.clone(),
            after: content,
            ..Change::new(ChangeOp::Move, &source.rel)
        })
    }

    /// Copies a file (any file, not only text) to `new_path`, creating missing parents. An existing destination
    /// is replaced only with `overwrite`, and only when it is a UTF-8 text note of at most 8 MiB (its old text goes
    /// into [`Change::before`]). Copying out of `.archive` is allowed; copying into it is not.
    pub fn copy_note(&self, path: &str, new_path: &str, overwrite: bool) -> Result<Change, VaultError> {
        let source = self.resolve(path, Param::Path)?;
        if !source.exists {
            return Err(does_not_exist(Param::Path, &source.rel));
        }
        if self.is_folder(&source, Param::Path)? {
            return Err(VaultError::invalid(
                Param::Path,
                format!("{:?} is a folder; only notes (files) can be copied", source.rel),
            ));
        }
        let target = self.resolve_target(new_path, Param::NewPath)?;
        if target.rel == source.rel || target.real == source.real {
            return Err(VaultError::invalid(Param::NewPath, format!("{:?} is the same note as path", target.rel)));
        }
        let before = if target.exists {
            if !overwrite {
                return Err(already_exists(Param::NewPath, &target.rel));
            }
            if self.is_folder(&target, Param::NewPath)? {
                return Err(VaultError::conflict(
                    Param::NewPath,
                    format!("{:?} is an existing folder; a note cannot replace it", target.rel),
                ));
            }
            Some(self.read_note(&target, Param::NewPath)?)
        } else {
            None
        };
        self.create_parents(&target, Param::NewPath)?;
        let copy_error = |error| {
            VaultError::io(Some(Param::NewPath), format!("could not copy {:?} to {:?}", source.rel, target.rel), error)
        };
        let after = match files::read_text(&source.real) {
            Ok(text) => {
                files::write_atomically(&target.real, text.as_bytes()).map_err(copy_error)?;
                Some(text)
            }
            Err(ReadTextError::NotText | ReadTextError::TooLarge(_)) => {
                files::copy_atomically(&source.real, &target.real).map_err(copy_error)?;
                None
            }
            Err(ReadTextError::Io(error)) => return Err(copy_error(error)),
        };
        self.forget(&target);
        Ok(Change { new_path: Some(target.rel.clone()), before, after, ..Change::new(ChangeOp::Copy, &source.rel) })
    }

    /// Moves a note or folder to `.archive/YYYY-MM-DD_HH-mm-ss/<path>` (UTC), keeping its path below that folder.
    /// When that place is taken (two archives of one path within a second), the folder gets a suffix: `…-2`,
    /// `…-3`, …. The vault root and anything already inside `.archive` cannot be archived.
    pub fn archive(&self, path: &str) -> Result<Change, VaultError> {
        self.archive_at(path, Utc::now())
    }

    /// [`Vault::archive`] with the time that names the archive folder given.
    pub(crate) fn archive_at(&self, path: &str, now: DateTime<Utc>) -> Result<Change, VaultError> {
        let _moving = self.lock_moving();
        let item = self.resolve(path, Param::Path)?;
        if in_archive(&item.rel) || in_archive(&item.real_rel) {
            return Err(VaultError::invalid(
                Param::Path,
                format!("{:?} is inside .archive; it is already archived", item.rel),
            ));
        }
        if !item.exists {
            return Err(does_not_exist(Param::Path, &item.rel));
        }
        let content = if self.is_folder(&item, Param::Path)? { None } else { files::read_text(&item.real).ok() };
        let archived_to = self.archive_entry(&item, now, Param::Path)?;
        self.forget(&item);
        Ok(Change {
            new_path: Some(archived_to.clone()),
            archived_to: Some(archived_to),
            before: content.clone(),
            after: content,
            ..Change::new(ChangeOp::Archive, &item.rel)
        })
    }

    /// Whether `path` is an existing note (file); `false` for folders and missing paths.
    pub fn exists_note(&self, path: &str) -> Result<bool, VaultError> {
        let note = self.resolve(path, Param::Path)?;
        Ok(note.exists && fs::metadata(&note.real).is_ok_and(|meta| meta.is_file()))
    }

    /// The whole text of a note, or `None` when nothing exists at `path`. Folders, files that are not UTF-8 and
    /// files larger than 8 MiB are refused.
    pub fn read_all(&self, path: &str) -> Result<Option<String>, VaultError> {
        let note = self.resolve(path, Param::Path)?;
        if !note.exists {
            return Ok(None);
        }
        self.read_note(&note, Param::Path).map(Some)
    }

    /// Writes `content` as the whole note, replacing whatever text is there and creating missing parents; used to
    /// undo a change. Like [`Vault::write`], it refuses `.archive`, folders and notes that are not UTF-8 text.
    pub fn restore_content(&self, path: &str, content: &str) -> Result<Change, VaultError> {
        self.put(path, content, true, ChangeOp::Restore)
    }

    /// Searches the notes (`.md`, `.markdown` and `.txt` files) in the vault, or below `path` (a folder or a
    /// note), and returns at most `limit` hits, best notes first, each note's matching lines in line order.
    ///
    /// The query is split into words (runs of Unicode letters and digits, case ignored). A query word matches a
    /// word of a note that equals it or, for query words of three characters or more, starts with it (`meet` finds
    /// `meeting`). A note matches when it contains every query word in its text or file name; only when no note
    /// does are notes with some of the words returned, ranked lower. Notes are ranked by BM25, plus a bonus for
    /// words in the file name or in a Markdown heading.
    ///
    /// The index is brought up to date first: notes whose modification time or size changed are read again and
    /// deleted ones dropped, so edits made outside Quire are found. `.archive` is searched only with
    /// `include_archive` or when `path` is inside it; other names starting with a dot are never searched, and
    /// symbolic links are not followed.
    pub fn search(
        &self,
        query: &str,
        path: Option<&str>,
        limit: usize,
        include_archive: bool,
    ) -> Result<Vec<SearchHit>, VaultError> {
        Ok(self.search_among(query, path, limit, include_archive)?.0)
    }

    /// [`Vault::search`], also answering the path of every note it searched (matching or not), so a caller can
    /// rank those notes another way too (by meaning) and keep to the same ones.
    pub fn search_among(
        &self,
        query: &str,
        path: Option<&str>,
        limit: usize,
        include_archive: bool,
    ) -> Result<(Vec<SearchHit>, Vec<String>), VaultError> {
        let terms = search::query_terms(query)?;
        let scope = self.resolve_folder_or_root_or_note(path)?;
        let include_archive = include_archive || in_archive(&scope.rel) || in_archive(&scope.real_rel);
        let show = if include_archive { Show::Archive } else { Show::Visible };
        let notes = self.note_files(&scope, show)?;
        let mut index = self.lock_index();
        index.refresh(&scope.rel, &notes);
        let hits = index.search(&notes, &terms, limit);
        Ok((hits, notes.into_iter().map(|n| n.rel).collect()))
    }

    /// Every note outside `.archive`, each with a stamp (its modification time and size) that changes whenever
    /// the note does: what a copy derived from the notes (their vectors) is kept current by, without reading
    /// notes that did not change.
    pub fn note_stamps(&self) -> Result<Vec<NoteStamp>, VaultError> {
        let root = self.resolve_folder_or_root(None)?;
        let notes = self.note_files(&root, Show::Visible)?;
        Ok(notes
            .into_iter()
            .map(|n| {
                let nanos =
                    n.modified.and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
                NoteStamp { path: n.rel, stamp: format!("{nanos}:{}", n.size) }
            })
            .collect())
    }

    /// Every note at or below `scope`, not following symbolic links.
    fn note_files(&self, scope: &Resolved, show: Show) -> Result<Vec<NoteFile>, VaultError> {
        let meta = fs::metadata(&scope.real)
            .map_err(|error| VaultError::io(Some(Param::Path), format!("could not read {:?}", scope.rel), error))?;
        let note_file = |rel: String, abs: PathBuf, meta: &fs::Metadata| NoteFile {
            rel,
            abs,
            modified: meta.modified().ok(),
            size: meta.len(),
        };
        if meta.is_file() {
            let notes = if search::is_note_name(&scope.rel) {
                vec![note_file(scope.rel.clone(), scope.real.clone(), &meta)]
            } else {
                Vec::new()
            };
            return Ok(notes);
        }
        let mut notes = Vec::new();
        let mut pending = vec![(scope.real.clone(), scope.rel.clone())];
        let mut first = true;
        while let Some((dir_abs, dir_rel)) = pending.pop() {
            let entries = match files::children(&self.root, &dir_abs, &dir_rel, show) {
                Ok(entries) => entries,
                Err(error) if first => {
                    return Err(VaultError::io(Some(Param::Path), format!("could not search {:?}", scope.rel), error));
                }
                Err(_) => continue,
            };
            first = false;
            for entry in entries {
                if entry.is_link {
                    continue;
                }
                if entry.meta.is_dir() {
                    pending.push((entry.abs, entry.rel));
                } else if entry.meta.is_file() && search::is_note_name(&entry.name) {
                    notes.push(note_file(entry.rel, entry.abs, &entry.meta));
                }
            }
        }
        Ok(notes)
    }

    /// Checks a path parameter that must name something inside the vault (not the root).
    fn resolve(&self, raw: &str, param: Param) -> Result<Resolved, VaultError> {
        let rel = sandbox::normalize(raw, param)?;
        if rel.is_empty() {
            return Err(VaultError::invalid(
                param,
                format!("{raw:?} is the vault root; name a note or folder inside it"),
            ));
        }
        sandbox::confine(&self.root, &rel, param)
    }

    /// Checks a path parameter that something will be written to: like [`Vault::resolve`], and not inside
    /// `.archive`, whether named so or reached through a symbolic link.
    fn resolve_target(&self, raw: &str, param: Param) -> Result<Resolved, VaultError> {
        let target = self.resolve(raw, param)?;
        if in_archive(&target.rel) || in_archive(&target.real_rel) {
            let how = if in_archive(&target.rel) { "" } else { " (through a symbolic link)" };
            return Err(VaultError::invalid(
                param,
                format!("{:?} is inside .archive{how}; only archiveItem writes there", target.rel),
            ));
        }
        Ok(target)
    }

    /// Checks an optional `path` that names a folder; missing, `""`, `"."` and `"/"` name the root.
    fn resolve_folder_or_root(&self, raw: Option<&str>) -> Result<Resolved, VaultError> {
        let folder = self.resolve_folder_or_root_or_note(raw)?;
        if !self.is_folder(&folder, Param::Path)? {
            return Err(VaultError::invalid(Param::Path, format!("{:?} is a note, not a folder", folder.rel)));
        }
        Ok(folder)
    }

    /// Checks an optional `path` that names an existing folder or note; missing, `""`, `"."` and `"/"` name the
    /// root.
    fn resolve_folder_or_root_or_note(&self, raw: Option<&str>) -> Result<Resolved, VaultError> {
        let rel = match raw {
            None | Some("" | "/") => String::new(),
            Some(raw) => sandbox::normalize(raw, Param::Path)?,
        };
        let resolved = sandbox::confine(&self.root, &rel, Param::Path)?;
        if !resolved.exists {
            return Err(does_not_exist(Param::Path, &resolved.rel));
        }
        Ok(resolved)
    }

    /// Reads an existing note as text, with the errors of a missing, folder, binary or oversized note.
    fn read_note(&self, note: &Resolved, param: Param) -> Result<String, VaultError> {
        if !note.exists {
            return Err(does_not_exist(param, &note.rel));
        }
        if self.is_folder(note, param)? {
            return Err(VaultError::invalid(param, format!("{:?} is a folder, not a note", note.rel)));
        }
        files::read_text(&note.real).map_err(|error| match error {
            ReadTextError::TooLarge(size) => VaultError::invalid(
                param,
                format!("{:?} is {}; notes larger than 8 MiB are refused", note.rel, mebibytes(size)),
            ),
            ReadTextError::NotText => VaultError::invalid(param, format!("{:?} is not a UTF-8 text file", note.rel)),
            ReadTextError::Io(error) => VaultError::io(Some(param), format!("could not read {:?}", note.rel), error),
        })
    }

    fn is_folder(&self, resolved: &Resolved, param: Param) -> Result<bool, VaultError> {
        fs::metadata(&resolved.real)
            .map(|meta| meta.is_dir())
            .map_err(|error| VaultError::io(Some(param), format!("could not look up {:?}", resolved.rel), error))
    }

    /// Creates the missing folders above `resolved`, refusing when one of them is a note.
    fn create_parents(&self, resolved: &Resolved, param: Param) -> Result<(), VaultError> {
        let mut prefix = String::new();
        let parts: Vec<&str> = resolved.rel.split('/').collect();
        for part in &parts[..parts.len() - 1] {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            match fs::metadata(self.root.join(&prefix)) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => {
                    return Err(VaultError::invalid(
                        param,
                        format!("{:?} cannot be created: {prefix:?} is a note, not a folder", resolved.rel),
                    ));
                }
                Err(_) => break,
            }
        }
        let Some(parent) = resolved.real.parent() else { return Ok(()) };
        fs::create_dir_all(parent).map_err(|error| {
            VaultError::io(Some(param), format!("could not create the folders of {:?}", resolved.rel), error)
        })
    }

    /// Moves the entry of `item` into a fresh archive folder named after `now`; returns its vault-relative path.
    /// The caller holds the `moving` lock.
    fn archive_entry(&self, item: &Resolved, now: DateTime<Utc>, param: Param) -> Result<String, VaultError> {
        let stamp = now.format("%Y-%m-%d_%H-%M-%S").to_string();
        for attempt in 1..=MAX_ARCHIVES_PER_SECOND {
            let folder = if attempt == 1 { stamp.clone() } else { format!("{stamp}-{attempt}") };
            let rel = format!("{ARCHIVE_DIR}/{folder}/{}", item.rel);
            let target = sandbox::confine(&self.root, &rel, param)?;
            if !in_archive(&target.real_rel) {
                return Err(VaultError::invalid(
                    param,
                    format!("cannot archive {:?}: {ARCHIVE_DIR} leads elsewhere through a symbolic link", item.rel),
                ));
            }
            if target.exists || fs::symlink_metadata(&target.abs).is_ok() {
                continue;
            }
            self.create_parents(&target, param)?;
            fs::rename(&item.abs, &target.abs)
                .map_err(|error| VaultError::io(Some(param), format!("could not archive {:?}", item.rel), error))?;
            return Ok(rel);
        }
        Err(VaultError::conflict(param, format!("could not find a free archive folder for {stamp}")))
    }

    /// Drops what the search index holds for `resolved`, so the next search reads it again even when its
    /// modification time and size look unchanged.
    fn forget(&self, resolved: &Resolved) {
        let mut index = self.lock_index();
        index.forget(&resolved.rel);
        index.forget(&resolved.real_rel);
    }

    /// The search index. A panic while it was held may have left it half updated; it is only a cache, so it is
    /// emptied and rebuilt by the next search.
    fn lock_index(&self) -> MutexGuard<'_, SearchIndex> {
        match self.index.lock() {
            Ok(index) => index,
            Err(poisoned) => {
                let mut index = poisoned.into_inner();
                *index = SearchIndex::default();
                self.index.clear_poison();
                index
            }
        }
    }

    fn lock_moving(&self) -> MutexGuard<'_, ()> {
        // The guarded value is `()`, so a panic in another holder leaves nothing inconsistent behind.
        self.moving.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn item(entry: &files::Entry) -> Item {
    let is_folder = entry.meta.is_dir();
    Item {
        path: entry.rel.clone(),
        kind: if is_folder { ItemKind::Folder } else { ItemKind::File },
        size: if is_folder { None } else { Some(entry.meta.len()) },
        modified: entry.meta.modified().ok().map(DateTime::<Utc>::from),
    }
}

fn check_content_size(content: &str) -> Result<(), VaultError> {
    if content.len() as u64 > MAX_NOTE_BYTES {
        return Err(VaultError::invalid(
            Param::Content,
            format!("is {}; notes larger than 8 MiB are refused", mebibytes(content.len() as u64)),
        ));
    }
    Ok(())
}

fn mebibytes(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn does_not_exist(param: Param, rel: &str) -> VaultError {
    VaultError::not_found(param, format!("{rel:?} does not exist"))
}

fn already_exists(param: Param, rel: &str) -> VaultError {
    VaultError::conflict(param, format!("{rel:?} already exists; pass overwrite: true to replace it"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn archive_in_the_same_second_gets_numbered_folders() {
        let dir = tempfile::tempdir().unwrap();
        let vault = Vault::open(dir.path()).unwrap();
        let now = Utc.with_ymd_and_hms(2026, 11, 22, 13, 14, 19).unwrap();
        let mut archived = Vec::new();
        for round in 0..3 {
            vault.write("notes/a.md", &format!("round {round}"), false).unwrap();
            archived.push(vault.archive_at("notes/a.md", now).unwrap().archived_to.unwrap());
        }
        assert_eq!(
            archived,
            [
                ".archive/2026-11-22_13-14-19/notes/a.md",
                ".archive/2026-11-22_13-14-19-2/notes/a.md",
                ".archive/2026-11-22_13-14-19-3/notes/a.md",
            ]
        );
        for (round, path) in archived.iter().enumerate() {
            assert_eq!(vault.read_all(path).unwrap().unwrap(), format!("round {round}"));
        }
    }

    #[test]
    fn archiving_a_folder_after_a_note_inside_it_uses_a_new_folder() {
        let dir = tempfile::tempdir().unwrap();
        let vault = Vault::open(dir.path()).unwrap();
        let now = Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap();
        vault.write("notes/a.md", "a", false).unwrap();
        vault.write("notes/b.md", "b", false).unwrap();
        let first = vault.archive_at("notes/a.md", now).unwrap();
        let second = vault.archive_at("notes", now).unwrap();
        assert_eq!(first.archived_to.as_deref(), Some(".archive/2026-01-02_03-04-05/notes/a.md"));
        assert_eq!(second.archived_to.as_deref(), Some(".archive/2026-01-02_03-04-05-2/notes"));
        assert_eq!(vault.read_all(".archive/2026-01-02_03-04-05-2/notes/b.md").unwrap().as_deref(), Some("b"));
    }

    #[test]
    fn numbered_output_is_plain() {
        let lines = NoteLines {
            path: "a.md".to_owned(),
            start_line: 9,
            end_line: 10,
            total_lines: 10,
            lines: vec![(9, "nine".to_owned()), (10, String::new())],
        };
        assert_eq!(lines.numbered(), "9: nine\n10: ");
    }
}
