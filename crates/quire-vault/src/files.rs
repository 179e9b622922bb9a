//! File system helpers below the vault's operations: atomic writes, bounded reads, and directory listings that hide
//! what callers must not see.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::sandbox::{ARCHIVE_DIR, TEMP_PREFIX};

/// The largest note read or edited as text: 8 MiB.
pub const MAX_NOTE_BYTES: u64 = 8 * 1024 * 1024;

/// Replaces `target` with `bytes` so that readers see either the old or the new content, never a mix: the bytes go
/// to a temporary file in the same folder (named `.quire-tmp-…`), which is then renamed over the target. A symbolic
/// link at `target` is replaced, never followed. An existing target's permissions are kept.
pub fn write_atomically(target: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_with(target, |file| file.write_all(bytes))
}

/// Copies `source` to `target` the same way as [`write_atomically`], streaming the bytes.
pub fn copy_atomically(source: &Path, target: &Path) -> io::Result<()> {
    let mut reader = File::open(source)?;
    replace_with(target, |file| io::copy(&mut reader, file).map(|_| ()))
}

fn replace_with(target: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    let folder = target.parent().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no parent folder"))?;
    let (temp_path, mut file) = create_temp_file(folder)?;
    let result = (|| {
        fill(&mut file)?;
        if let Ok(existing) = fs::metadata(target)
            && existing.is_file()
        {
            file.set_permissions(existing.permissions())?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&temp_path, target)
    })();
    if result.is_err() {
        // The temporary file is ours alone; failing to remove it leaves a hidden file, which is harmless.
        let _ = fs::remove_file(&temp_path);
    }
    result
}

/// Creates a new, empty temporary file in `folder`; `create_new` refuses to open anything that already exists,
/// a symbolic link included.
fn create_temp_file(folder: &Path) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut last_error = None;
    for _ in 0..32 {
        let name = format!("{TEMP_PREFIX}{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        let path = folder.join(name);
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => last_error = Some(error),
            Err(error) => return Err(error),
        }
    }
    Err(last_error.unwrap_or_else(|| io::Error::other("could not create a temporary file")))
}

/// Why a file could not be read as a note.
#[derive(Debug)]
pub enum ReadTextError {
    /// Larger than [`MAX_NOTE_BYTES`]; holds the size seen.
    TooLarge(u64),
    /// Not valid UTF-8.
    NotText,
    /// The file system failed.
    Io(io::Error),
}

/// Reads a file as UTF-8 text, refusing files larger than [`MAX_NOTE_BYTES`] without reading them whole.
pub fn read_text(path: &Path) -> Result<String, ReadTextError> {
    let file = File::open(path).map_err(ReadTextError::Io)?;
    let size = file.metadata().map_err(ReadTextError::Io)?.len();
    if size > MAX_NOTE_BYTES {
        return Err(ReadTextError::TooLarge(size));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(MAX_NOTE_BYTES + 1).read_to_end(&mut bytes).map_err(ReadTextError::Io)?;
    if bytes.len() as u64 > MAX_NOTE_BYTES {
        return Err(ReadTextError::TooLarge(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|_| ReadTextError::NotText)
}

/// Which hidden entries a listing shows. Temporary files of atomic writes are never shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Show {
    /// No name starting with a dot.
    Visible,
    /// `.archive` at the vault root, but no other name starting with a dot.
    Archive,
    /// Every name starting with a dot.
    All,
}

/// One visible entry of a folder.
#[derive(Debug)]
pub struct Entry {
    /// The entry's name.
    pub name: String,
    /// Vault-relative path, `/` separated.
    pub rel: String,
    /// Where to reach it on disk.
    pub abs: PathBuf,
    /// Its metadata, with a symbolic link followed to its target.
    pub meta: fs::Metadata,
    /// Whether the entry is a symbolic link (to somewhere inside the vault).
    pub is_link: bool,
}

/// The visible entries of the folder at `dir_abs`, named below `dir_rel`.
///
/// Hidden: temporary files, names that are not UTF-8 (no path parameter can name them), names starting with a dot
/// unless `show` allows them, and symbolic links that lead outside `root` or nowhere. Entries that vanish while
/// being read are skipped.
pub fn children(root: &Path, dir_abs: &Path, dir_rel: &str, show: Show) -> io::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for entry in fs::read_dir(dir_abs)? {
        let Ok(entry) = entry else { continue };
        let Ok(name) = entry.file_name().into_string() else { continue };
        if !shown(&name, dir_rel.is_empty(), show) {
            continue;
        }
        let Ok(file_type) = entry.file_type() else { continue };
        let abs = entry.path();
        let is_link = file_type.is_symlink();
        if is_link && !fs::canonicalize(&abs).is_ok_and(|target| target.starts_with(root)) {
            continue;
        }
        let Ok(meta) = fs::metadata(&abs) else { continue };
        let rel = if dir_rel.is_empty() { name.clone() } else { format!("{dir_rel}/{name}") };
        entries.push(Entry { name, rel, abs, meta, is_link });
    }
    Ok(entries)
}

fn shown(name: &str, at_root: bool, show: Show) -> bool {
    if name.starts_with(TEMP_PREFIX) {
        return false;
    }
    if !name.starts_with('.') {
        return true;
    }
    match show {
        Show::All => true,
        Show::Archive => at_root && name.eq_ignore_ascii_case(ARCHIVE_DIR),
        Show::Visible => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.md");
        write_atomically(&target, b"one").unwrap();
        write_atomically(&target, b"two").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "two");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["a.md"]);
    }

    #[cfg(unix)]
    #[test]
    fn atomic_write_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.md");
        fs::write(&target, "x").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomically(&target, b"y").unwrap();
        assert_eq!(fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o640);
    }

    #[test]
    fn read_text_refuses_binary() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("x.png");
        fs::write(&target, [0x89, b'P', b'N', b'G', 0xff, 0xfe]).unwrap();
        assert!(matches!(read_text(&target), Err(ReadTextError::NotText)));
    }

    #[test]
    fn hidden_names() {
        assert!(shown("a.md", true, Show::Visible));
        assert!(!shown(".obsidian", true, Show::Visible));
        assert!(!shown(".obsidian", true, Show::Archive));
        assert!(shown(".archive", true, Show::Archive));
        assert!(!shown(".archive", false, Show::Archive));
        assert!(shown(".obsidian", true, Show::All));
        assert!(!shown(".quire-tmp-1-2", true, Show::All));
    }
}
