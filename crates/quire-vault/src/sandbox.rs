//! The path sandbox: every path a caller gives goes through [`normalize`] and then `confine`, and nothing else
//! turns a caller's string into a file system path.
//!
//! [`normalize`] is pure. It accepts only plain relative paths with `/` separators and refuses anything that could
//! name a place outside the vault by spelling alone: absolute paths, drive letters, UNC paths, backslashes, `..`,
//! `~`, control characters. A note's name identifies it, so characters that show nothing or turn text around are
//! refused as in the names of pages (quire-core's `text` rules). `confine` then looks at the disk: it walks the path
//! one component at a time and follows every symbolic link it meets to its canonical target, refusing the path when
//! a target lies outside the vault's canonical root or does not exist.
//!
//! Architecture Invariant: the vault assumes that nobody swaps folders for symbolic links between the check and the
//! operation (the check and the use are separate system calls). It protects against paths chosen by a model or a
//! user, not against a hostile process with write access to the vault folder itself.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::error::{Param, VaultError};

/// The folder, at the vault root, that archived items are moved to.
pub const ARCHIVE_DIR: &str = ".archive";
/// The name prefix of the temporary files of atomic writes; such names are reserved and never listed.
pub const TEMP_PREFIX: &str = ".quire-tmp-";
/// The longest path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;
/// The longest single file or folder name accepted, in bytes (the limit of common file systems).
pub const MAX_NAME_BYTES: usize = 255;

/// Checks a caller's path by its spelling alone and returns it in normal form: components joined by `/`, without
/// empty or `.` components (`./a//b/` becomes `a/b`). The vault root normalizes to `""`.
pub fn normalize(raw: &str, param: Param) -> Result<String, VaultError> {
    let invalid = |message: String| VaultError::invalid(param, message);
    if raw.is_empty() {
        return Err(invalid("is empty".to_owned()));
    }
    if raw.contains('\0') {
        return Err(invalid("contains a NUL byte".to_owned()));
    }
    if let Some(control) = raw.chars().find(|c| c.is_control()) {
        return Err(invalid(format!("contains a control character (U+{:04X})", u32::from(control))));
    }
    // A note's name identifies it: one that looks like another's, but for a
    // character that shows nothing or turns text around, is refused as the
    // names of pages are.
    if let Err(refused) = quire_core::text::check_line_chars("path", raw) {
        return Err(invalid(refused.rule));
    }
    if raw.len() > MAX_PATH_BYTES {
        return Err(invalid(format!("is {} bytes long; the limit is {MAX_PATH_BYTES}", raw.len())));
    }
    if is_absolute(raw) {
        return Err(invalid("must be relative to the vault, not absolute".to_owned()));
    }
    if raw.split(['/', '\\']).any(|part| part == "..") {
        return Err(invalid(format!("{raw:?} leaves the vault (\"..\")")));
    }
    if raw.contains('\\') {
        return Err(invalid(format!("{raw:?} contains a backslash; separate folders with /")));
    }
    let parts: Vec<&str> = raw.split('/').filter(|part| !part.is_empty() && *part != ".").collect();
    if parts.first() == Some(&"~") {
        return Err(invalid(format!(
            "{raw:?} starts with ~; paths are relative to the vault, there is no home folder"
        )));
    }
    for part in &parts {
        if part.len() > MAX_NAME_BYTES {
            let shown: String = part.chars().take(24).collect();
            return Err(invalid(format!("the name \"{shown}…\" is longer than {MAX_NAME_BYTES} bytes")));
        }
        if part.trim_end_matches(['.', ' ']).is_empty() {
            return Err(invalid(format!("{raw:?} has a name made only of dots and spaces ({part:?})")));
        }
        if part.starts_with(TEMP_PREFIX) {
            return Err(invalid(format!("names starting with {TEMP_PREFIX} are reserved for temporary files")));
        }
    }
    Ok(parts.join("/"))
}

/// Whether a path is absolute on any platform: `/x`, `\x`, `\\server\share`, `C:\x`, `C:/x` or `C:x`.
fn is_absolute(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    raw.starts_with('/') || raw.starts_with('\\') || drive
}

/// Whether a normalized vault-relative path is `.archive` or inside it. Compared without regard to ASCII case, so
/// a case-insensitive file system cannot be used to write into the archive as `.ARCHIVE`.
pub fn in_archive(rel: &str) -> bool {
    rel.split('/').next().is_some_and(|first| first.eq_ignore_ascii_case(ARCHIVE_DIR))
}

/// A caller's path after both checks.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// The normalized vault-relative path, as the caller named it (`""` for the root).
    pub rel: String,
    /// `root/rel`: the directory entry the caller named. Moves and archives work on this entry, so a symbolic link
    /// is moved as a link.
    pub abs: PathBuf,
    /// Where the entry lives once symbolic links inside the vault are followed. Content is read from and written
    /// to this path, so editing a note through a link edits the linked note and keeps the link.
    pub real: PathBuf,
    /// `real` relative to the root, with `/` separators.
    pub real_rel: String,
    /// Whether the entry exists (a symbolic link counts when its target exists).
    pub exists: bool,
}

/// Checks a normalized path against the disk; see the module documentation.
pub(crate) fn confine(root: &Path, rel: &str, param: Param) -> Result<Resolved, VaultError> {
    let parts: Vec<&str> = if rel.is_empty() { Vec::new() } else { rel.split('/').collect() };
    let mut lexical = root.to_path_buf();
    let mut real = root.to_path_buf();
    let mut exists = true;
    for part in &parts {
        lexical.push(part);
        if !exists {
            real.push(part);
            continue;
        }
        match fs::symlink_metadata(&lexical) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::canonicalize(&lexical).map_err(|error| match error.kind() {
                    io::ErrorKind::NotFound => VaultError::invalid(
                        param,
                        format!("{rel:?} leads through a symbolic link whose target does not exist"),
                    ),
                    _ => VaultError::invalid(
                        param,
                        format!("{rel:?} leads through a symbolic link that cannot be followed ({error})"),
                    ),
                })?;
                if !target.starts_with(root) {
                    return Err(VaultError::invalid(param, "leads outside the vault through a symbolic link"));
                }
                real = target;
            }
            Ok(_) => real.push(part),
            Err(error) if matches!(error.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => {
                exists = false;
                real.push(part);
            }
            Err(error) => return Err(VaultError::io(Some(param), format!("could not look up {rel:?}"), error)),
        }
    }
    let real_rel = relative_to_root(root, &real)
        .ok_or_else(|| VaultError::invalid(param, "leads outside the vault through a symbolic link"))?;
    Ok(Resolved { rel: rel.to_owned(), abs: root.join(rel), real, real_rel, exists })
}

/// `path` relative to `root` with `/` separators, or `None` when it is not below the root.
pub(crate) fn relative_to_root(root: &Path, path: &Path) -> Option<String> {
    let rest = path.strip_prefix(root).ok()?;
    let mut parts = Vec::new();
    for component in rest.components() {
        match component {
            Component::Normal(name) => parts.push(name.to_str()?.to_owned()),
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(raw: &str) -> String {
        normalize(raw, Param::Path).unwrap()
    }

    fn message(raw: &str) -> String {
        normalize(raw, Param::Path).unwrap_err().to_string()
    }

    #[test]
    fn normal_forms() {
        assert_eq!(ok("a"), "a");
        assert_eq!(ok("./a"), "a");
        assert_eq!(ok("a//b/"), "a/b");
        assert_eq!(ok("a/./b"), "a/b");
        assert_eq!(ok("."), "");
        assert_eq!(ok("notes/ünïcödé ✓.md"), "notes/ünïcödé ✓.md");
        assert_eq!(ok("%2e%2e/x"), "%2e%2e/x");
        assert_eq!(ok("．．/x"), "．．/x");
        assert_eq!(ok("a~/~b"), "a~/~b");
    }

    #[test]
    fn refusals_name_the_problem() {
        assert_eq!(message(""), "path: is empty");
        assert_eq!(message("../x"), "path: \"../x\" leaves the vault (\"..\")");
        assert_eq!(message("a/../../x"), "path: \"a/../../x\" leaves the vault (\"..\")");
        assert_eq!(message("a/.."), "path: \"a/..\" leaves the vault (\"..\")");
        assert_eq!(message("/etc/passwd"), "path: must be relative to the vault, not absolute");
        assert_eq!(message("\\\\server\\share"), "path: must be relative to the vault, not absolute");
        assert_eq!(message("C:\\x"), "path: must be relative to the vault, not absolute");
        assert_eq!(message("C:/x"), "path: must be relative to the vault, not absolute");
        assert!(message("..\\..\\x").contains("leaves the vault"));
        assert!(message("a\\b").contains("contains a backslash"));
        assert_eq!(message("a\0b"), "path: contains a NUL byte");
        assert!(message("a\u{7}b").contains("control character (U+0007)"));
        assert!(message("~/x").contains("starts with ~"));
        assert!(message("~").contains("starts with ~"));
        assert!(message("a/.../b").contains("only of dots"));
        assert!(message("a/. ./b").contains("only of dots"));
        assert!(message(&"a/".repeat(600)).contains("the limit is 1024"));
        assert!(message(&"n".repeat(300)).contains("longer than 255 bytes"));
        assert!(message(".quire-tmp-1").contains("reserved"));
        for (path, code) in [("notes/pricing\u{200b}.md", "U+200B"), ("invoice\u{202e}dm.exe", "U+202E")] {
            assert!(message(path).starts_with("path: contains a"), "{}", message(path));
            assert!(message(path).contains(code), "{}", message(path));
        }
        assert_eq!(ok("notes/👩‍💻 team.md"), "notes/👩‍💻 team.md");
    }

    #[test]
    fn archive_detection_ignores_case() {
        assert!(in_archive(".archive"));
        assert!(in_archive(".archive/x"));
        assert!(in_archive(".ARCHIVE/x"));
        assert!(!in_archive("x/.archive"));
        assert!(!in_archive(".archived"));
    }
}
