//! Attempts to reach outside the vault through every operation. A sentinel folder next to the vault holds a secret;
//! after every attempt nothing outside the vault may have been created or changed, and no output may contain the
//! secret.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use quire_vault::{ErrorKind, Vault, VaultError};

const SECRET: &str = "TOP-SECRET-6f1d0c";

struct Fixture {
    _base: tempfile::TempDir,
    base: PathBuf,
    vault_dir: PathBuf,
    outside: PathBuf,
    vault: Vault,
}

/// Every path below `base` except the vault, with what it is and holds.
type Snapshot = BTreeMap<PathBuf, String>;

impl Fixture {
    fn new() -> Fixture {
        let base_dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(base_dir.path()).unwrap();
        let vault_dir = base.join("vault");
        let outside = base.join("outside");
        fs::create_dir_all(outside.join("sub")).unwrap();
        fs::write(outside.join("secret.txt"), SECRET).unwrap();
        fs::write(outside.join("secret.md"), SECRET).unwrap();
        fs::write(outside.join("sub/deep.md"), SECRET).unwrap();

        let vault = Vault::open(&vault_dir).unwrap();
        vault.write("notes/a.md", "hello\n", false).unwrap();
        vault.create_folder(".archive").unwrap_err();
        fs::create_dir_all(vault_dir.join(".archive/old")).unwrap();
        symlink(&outside, vault_dir.join("link_out")).unwrap();
        symlink(outside.join("secret.md"), vault_dir.join("secret_link.md")).unwrap();
        symlink(vault_dir.join("chain2"), vault_dir.join("chain1")).unwrap();
        symlink(&outside, vault_dir.join("chain2")).unwrap();
        symlink("../../outside", vault_dir.join("notes/deep_out")).unwrap();
        symlink(outside.join("not-yet.md"), vault_dir.join("dangle.md")).unwrap();
        symlink(vault_dir.join("notes"), vault_dir.join("inner_link")).unwrap();
        symlink(vault_dir.join(".archive"), vault_dir.join("sneaky")).unwrap();
        symlink(vault_dir.join("loop_b"), vault_dir.join("loop_a")).unwrap();
        symlink(vault_dir.join("loop_a"), vault_dir.join("loop_b")).unwrap();
        symlink(vault_dir.join("link_out"), vault_dir.join("notes/via_link")).unwrap();
        Fixture { _base: base_dir, base, vault_dir, outside, vault }
    }

    fn snapshot(&self) -> Snapshot {
        let mut seen = BTreeMap::new();
        walk(&self.base, &self.vault_dir, &mut seen);
        seen
    }
}

fn walk(dir: &Path, skip: &Path, seen: &mut Snapshot) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path == skip {
            continue;
        }
        let meta = fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            seen.insert(path.clone(), "folder".to_owned());
            walk(&path, skip, seen);
        } else {
            let content = fs::read_to_string(&path).unwrap_or_default();
            seen.insert(path.clone(), format!("{} bytes, {:?}: {content}", meta.len(), meta.modified().ok()));
        }
    }
}

/// Runs one attempt, checks that nothing outside changed and the secret did not come back, and returns the result.
fn attempt<T: std::fmt::Debug>(
    fx: &Fixture,
    name: &str,
    run: impl FnOnce(&Vault) -> Result<T, VaultError>,
) -> Result<T, VaultError> {
    let before = fx.snapshot();
    let result = run(&fx.vault);
    let after = fx.snapshot();
    assert_eq!(before, after, "{name}: something outside the vault changed");
    assert!(!format!("{result:?}").contains(SECRET), "{name}: the secret leaked: {result:?}");
    assert_eq!(fs::read_to_string(fx.outside.join("secret.txt")).unwrap(), SECRET);
    result
}

/// An attempt that must be refused as invalid input.
fn refused<T: std::fmt::Debug>(fx: &Fixture, name: &str, run: impl FnOnce(&Vault) -> Result<T, VaultError>) -> String {
    match attempt(fx, name, run) {
        Ok(value) => panic!("{name}: expected a refusal, got {value:?}"),
        Err(error) => {
            assert_eq!(error.kind(), ErrorKind::InvalidInput, "{name}: {error}");
            assert!(error.field().is_some(), "{name}: {error}");
            error.to_string()
        }
    }
}

#[test]
fn spelled_traversals_are_refused() {
    let fx = Fixture::new();
    let secret_abs = fx.outside.join("secret.txt").display().to_string();
    let long_path = "a/".repeat(700);
    let long_name = "n".repeat(300);
    let attempts: Vec<(&str, &str)> = vec![
        ("parent", "../outside/secret.txt"),
        ("parent after a folder", "a/../../outside/secret.txt"),
        ("parent at the end", "notes/.."),
        ("dot then parent", "notes/./../../outside/secret.txt"),
        ("deep parent", "a/b/../../../outside/secret.txt"),
        ("absolute", "/etc/passwd"),
        ("absolute to the secret", &secret_abs),
        ("drive with backslash", "C:\\Windows\\win.ini"),
        ("drive with slash", "C:/x"),
        ("drive relative", "C:x"),
        ("unc", "\\\\server\\share\\x"),
        ("backslash parents", "..\\..\\outside\\secret.txt"),
        ("backslash inside", "notes\\a.md"),
        ("nul", "notes/\0/../x"),
        ("nul at the end", "notes/a.md\0.txt"),
        ("control character", "notes/\u{1b}[2J.md"),
        ("newline", "notes/a\n.md"),
        ("home", "~/secret.txt"),
        ("home alone", "~"),
        ("only dots", ".../x"),
        ("dots and spaces", ". ./x"),
        ("very long path", &long_path),
        ("very long name", &long_name),
        ("empty", ""),
    ];
    for (name, path) in &attempts {
        let path: &str = path;
        refused(&fx, &format!("read {name}"), |v| v.read(path, 1, None));
        refused(&fx, &format!("read_all {name}"), |v| v.read_all(path));
        refused(&fx, &format!("exists {name}"), |v| v.exists_note(path));
        refused(&fx, &format!("write {name}"), |v| v.write(path, "x", true));
        refused(&fx, &format!("update {name}"), |v| v.update(path, "x", -1, None));
        refused(&fx, &format!("restore {name}"), |v| v.restore_content(path, "x"));
        refused(&fx, &format!("create_folder {name}"), |v| v.create_folder(path));
        refused(&fx, &format!("move source {name}"), |v| v.move_item(path, "moved.md", true));
        refused(&fx, &format!("move target {name}"), |v| v.move_item("notes/a.md", path, true));
        refused(&fx, &format!("copy source {name}"), |v| v.copy_note(path, "copied.md", true));
        refused(&fx, &format!("copy target {name}"), |v| v.copy_note("notes/a.md", path, true));
        refused(&fx, &format!("archive {name}"), |v| v.archive(path));
        if !path.is_empty() {
            refused(&fx, &format!("list {name}"), |v| v.list(Some(path), None, true));
            refused(&fx, &format!("search {name}"), |v| v.search("secret", Some(path), 10, true));
        }
    }
    assert_eq!(fx.vault.read_all("notes/a.md").unwrap().as_deref(), Some("hello\n"));
}

#[test]
fn refusals_explain_themselves() {
    let fx = Fixture::new();
    assert_eq!(refused(&fx, "parent", |v| v.read("../x", 1, None)), "path: \"../x\" leaves the vault (\"..\")");
    assert_eq!(
        refused(&fx, "absolute", |v| v.read("/etc/passwd", 1, None)),
        "path: must be relative to the vault, not absolute"
    );
    assert_eq!(refused(&fx, "nul", |v| v.read("a\0b", 1, None)), "path: contains a NUL byte");
    assert_eq!(refused(&fx, "empty", |v| v.read("", 1, None)), "path: is empty");
    assert_eq!(
        refused(&fx, "link", |v| v.read("link_out/secret.txt", 1, None)),
        "path: leads outside the vault through a symbolic link"
    );
    assert_eq!(
        refused(&fx, "new path", |v| v.move_item("notes/a.md", "../b.md", false)),
        "newPath: \"../b.md\" leaves the vault (\"..\")"
    );
    assert!(refused(&fx, "backslash", |v| v.read("a\\b", 1, None)).contains("backslash"));
}

#[test]
fn symbolic_links_out_of_the_vault_are_refused_everywhere() {
    let fx = Fixture::new();
    let through = [
        "link_out/secret.txt",
        "link_out/sub/deep.md",
        "secret_link.md",
        "chain1/secret.txt",
        "notes/deep_out/secret.txt",
        "notes/via_link/secret.txt",
        "inner_link/deep_out/secret.txt",
    ];
    for path in through {
        refused(&fx, &format!("read {path}"), |v| v.read(path, 1, None));
        refused(&fx, &format!("read_all {path}"), |v| v.read_all(path));
        refused(&fx, &format!("exists {path}"), |v| v.exists_note(path));
        refused(&fx, &format!("overwrite {path}"), |v| v.write(path, "pwned", true));
        refused(&fx, &format!("update {path}"), |v| v.update(path, "pwned", 1, None));
        refused(&fx, &format!("restore {path}"), |v| v.restore_content(path, "pwned"));
        refused(&fx, &format!("copy from {path}"), |v| v.copy_note(path, "stolen.md", false));
        refused(&fx, &format!("move from {path}"), |v| v.move_item(path, "stolen.md", false));
        refused(&fx, &format!("archive {path}"), |v| v.archive(path));
    }
    let new_files = ["link_out/new.md", "chain1/new.md", "notes/deep_out/new.md", "link_out/sub/new/deeper.md"];
    for path in new_files {
        refused(&fx, &format!("write {path}"), |v| v.write(path, "pwned", false));
        refused(&fx, &format!("create_folder {path}"), |v| v.create_folder(path));
        refused(&fx, &format!("copy to {path}"), |v| v.copy_note("notes/a.md", path, true));
        refused(&fx, &format!("move to {path}"), |v| v.move_item("notes/a.md", path, true));
    }
    for folder in ["link_out", "chain1", "chain2", "notes/deep_out", "link_out/sub"] {
        refused(&fx, &format!("list {folder}"), |v| v.list(Some(folder), None, true));
        refused(&fx, &format!("search in {folder}"), |v| v.search("secret", Some(folder), 10, true));
        refused(&fx, &format!("move {folder}"), |v| v.move_item(folder, "elsewhere", false));
        refused(&fx, &format!("archive {folder}"), |v| v.archive(folder));
    }
    refused(&fx, "write through a dangling link", |v| v.write("dangle.md", "pwned", true));
    refused(&fx, "restore through a dangling link", |v| v.restore_content("dangle.md", "pwned"));
    refused(&fx, "copy onto a dangling link", |v| v.copy_note("notes/a.md", "dangle.md", true));
    refused(&fx, "symlink loop", |v| v.read("loop_a/x.md", 1, None));
    refused(&fx, "write into a symlink loop", |v| v.write("loop_a/x.md", "x", false));
    assert!(!fx.outside.join("not-yet.md").exists());
    assert!(!fx.outside.join("new.md").exists());
}

#[test]
fn listings_and_search_do_not_follow_links_out() {
    let fx = Fixture::new();
    for include_hidden in [false, true] {
        let listed = attempt(&fx, "list root", |v| v.list(None, None, include_hidden)).unwrap();
        let paths: Vec<&str> = listed.iter().map(|item| item.path.as_str()).collect();
        for hidden in ["link_out", "secret_link.md", "chain1", "chain2", "dangle.md", "loop_a"] {
            assert!(!paths.contains(&hidden), "{hidden} listed: {paths:?}");
        }
        assert!(paths.contains(&"notes") && paths.contains(&"inner_link"), "{paths:?}");
        let everything = attempt(&fx, "list all", |v| v.list(None, Some("**"), include_hidden)).unwrap();
        assert!(everything.iter().all(|item| !item.path.contains("secret") && !item.path.contains("deep")));
        let hits = attempt(&fx, "search everything", |v| v.search(SECRET, None, 100, true)).unwrap();
        assert!(hits.is_empty(), "{hits:?}");
        let hits = attempt(&fx, "search words", |v| v.search("top secret", Some("/"), 100, include_hidden)).unwrap();
        assert!(hits.is_empty(), "{hits:?}");
    }
    let listed = attempt(&fx, "list slash", |v| v.list(Some("/"), None, false)).unwrap();
    assert!(listed.iter().any(|item| item.path == "notes"));
}

#[test]
fn links_inside_the_vault_work_and_stay_links() {
    let fx = Fixture::new();
    let lines = attempt(&fx, "read through inner link", |v| v.read("inner_link/a.md", 1, None)).unwrap();
    assert_eq!(lines.numbered(), "1: hello");
    attempt(&fx, "update through inner link", |v| v.update("inner_link/a.md", "more", -1, None)).unwrap();
    assert_eq!(fs::read_to_string(fx.vault_dir.join("notes/a.md")).unwrap(), "hello\nmore\n");
    assert!(fs::symlink_metadata(fx.vault_dir.join("inner_link")).unwrap().file_type().is_symlink());

    symlink(fx.vault_dir.join("notes/a.md"), fx.vault_dir.join("alias.md")).unwrap();
    attempt(&fx, "overwrite through a file link", |v| v.write("alias.md", "via alias\n", true)).unwrap();
    assert!(fs::symlink_metadata(fx.vault_dir.join("alias.md")).unwrap().file_type().is_symlink());
    assert_eq!(fs::read_to_string(fx.vault_dir.join("notes/a.md")).unwrap(), "via alias\n");
}

#[test]
fn the_archive_is_written_only_by_archive() {
    let fx = Fixture::new();
    for path in [".archive/x.md", ".archive/old/x.md", ".ARCHIVE/x.md", "./.archive/x.md", ".archive", "sneaky/x.md"] {
        let message = refused(&fx, &format!("write {path}"), |v| v.write(path, "x", true));
        assert!(message.contains("is inside .archive"), "{message}");
        refused(&fx, &format!("restore {path}"), |v| v.restore_content(path, "x"));
        refused(&fx, &format!("create_folder {path}"), |v| v.create_folder(path));
        refused(&fx, &format!("copy to {path}"), |v| v.copy_note("notes/a.md", path, true));
        refused(&fx, &format!("move to {path}"), |v| v.move_item("notes/a.md", path, true));
        refused(&fx, &format!("archive {path}"), |v| v.archive(path));
    }
    assert_eq!(
        refused(&fx, "write", |v| v.write(".archive/old/x.md", "x", false)),
        "path: \".archive/old/x.md\" is inside .archive; only archiveItem writes there"
    );
    fs::write(fx.vault_dir.join(".archive/old/kept.md"), "one\n").unwrap();
    let message = refused(&fx, "update", |v| v.update(".archive/old/kept.md", "x", -1, None));
    assert!(message.contains("is inside .archive"), "{message}");
    refused(&fx, "move the archive", |v| v.move_item(".archive", "not-archive", false));
    assert!(fx.vault_dir.join(".archive/old/kept.md").exists());
    assert!(!fx.vault_dir.join(".archive/x.md").exists());
    assert!(!fx.vault_dir.join(".archive/old/x.md").exists());
}

#[test]
fn harmless_lookalikes_stay_inside() {
    let fx = Fixture::new();
    for path in ["%2e%2e/x.md", "%2e%2e%2fsecret.md", "．．/x.md", "..%2f..%2fx.md", "…/x.md", "a‥b/x.md", "a..b/x.md"]
    {
        let change = attempt(&fx, path, |v| v.write(path, "inside", false)).unwrap();
        assert_eq!(change.path, path.trim_start_matches("./"));
        assert_eq!(fs::read_to_string(fx.vault_dir.join(path)).unwrap(), "inside");
        assert_eq!(attempt(&fx, path, |v| v.read_all(path)).unwrap().as_deref(), Some("inside"));
    }
    let change = attempt(&fx, "dot slash", |v| v.write("./notes//b.md", "b", false)).unwrap();
    assert_eq!(change.path, "notes/b.md");
    assert!(fx.vault_dir.join("notes/b.md").exists());
}

#[test]
fn moving_a_folder_with_links_does_not_open_a_way_out() {
    let fx = Fixture::new();
    attempt(&fx, "move notes", |v| v.move_item("notes", "moved/deeper/notes", false)).unwrap();
    // The relative link `deep_out` moved along and now points somewhere else; it must still be refused.
    refused(&fx, "read moved link", |v| v.read("moved/deeper/notes/deep_out/secret.txt", 1, None));
    refused(&fx, "write moved link", |v| v.write("moved/deeper/notes/deep_out/x.md", "x", false));
}
