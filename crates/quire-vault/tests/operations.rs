//! The vault's operations through its public API: reading and editing by line, overwrite rules, archive, listing.

mod common;

use common::{vault, vault_of};

use std::fs;
use std::path::Path;

use quire_vault::{ChangeOp, ErrorKind, ItemKind, MAX_NOTE_BYTES, Vault, VaultError};

fn numbered(lines: usize) -> String {
    (1..=lines).map(|n| format!("line {n}\n")).collect()
}

fn content(vault: &Vault, path: &str) -> String {
    vault.read_all(path).unwrap().unwrap()
}

fn error_of<T: std::fmt::Debug>(result: Result<T, VaultError>) -> VaultError {
    result.unwrap_err()
}

#[test]
fn open_creates_and_canonicalizes_the_root() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("file"), "x").unwrap();
    assert_eq!(Vault::open(dir.path().join("file")).unwrap_err().kind(), ErrorKind::Io);
    let vault = Vault::open(dir.path().join("a/b/c")).unwrap();
    assert!(vault.root().is_dir());
    assert_eq!(vault.root(), fs::canonicalize(dir.path().join("a/b/c")).unwrap());
}

#[test]
fn read_ranges_and_numbering() {
    let (_dir, vault) = vault_of(&[("notes/a.md", &numbered(12))]);
    let all = vault.read("notes/a.md", 1, None).unwrap();
    assert_eq!((all.start_line, all.end_line, all.total_lines, all.lines.len()), (1, 12, 12, 12));
    let part = vault.read("notes/a.md", 10, Some(40)).unwrap();
    assert_eq!(part.numbered(), "10: line 10\n11: line 11\n12: line 12");
    assert_eq!(part.end_line, 12);
    let one = vault.read("notes/a.md", 5, Some(5)).unwrap();
    assert_eq!(one.lines, [(5, "line 5".to_owned())]);
}

#[test]
fn read_errors() {
    let (_dir, vault) = vault_of(&[("notes/a.md", &numbered(12))]);
    let error = error_of(vault.read("notes/a.md", 40, None));
    assert_eq!(error.to_string(), "startLine: 40 is past the end; \"notes/a.md\" has 12 lines");
    assert_eq!((error.kind(), error.field()), (ErrorKind::InvalidInput, Some("startLine")));
    let error = error_of(vault.read("notes/a.md", 5, Some(3)));
    assert_eq!(error.to_string(), "endLine: 3 is before startLine 5");
    assert_eq!(error.field(), Some("endLine"));
    assert_eq!(error_of(vault.read("notes/a.md", 0, None)).to_string(), "startLine: must be 1 or more");
    let error = error_of(vault.read("notes/b.md", 1, None));
    assert_eq!(error.to_string(), "path: \"notes/b.md\" does not exist");
    assert_eq!((error.kind(), error.field()), (ErrorKind::NotFound, Some("path")));
    let error = error_of(vault.read("notes", 1, None));
    assert_eq!(error.to_string(), "path: \"notes\" is a folder, not a note");
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(error_of(vault.read(".", 1, None)).to_string().contains("vault root"));
}

#[test]
fn empty_notes() {
    let (_dir, vault) = vault_of(&[("empty.md", "")]);
    let lines = vault.read("empty.md", 1, None).unwrap();
    assert_eq!((lines.start_line, lines.end_line, lines.total_lines), (1, 0, 0));
    assert!(lines.lines.is_empty());
    assert_eq!(lines.numbered(), "");
    assert!(error_of(vault.read("empty.md", 2, None)).to_string().contains("has 0 lines"));
    vault.update("empty.md", "first", -1, None).unwrap();
    assert_eq!(content(&vault, "empty.md"), "first\n");
}

#[test]
fn seed_examples_of_update() {
    let (_dir, vault) = vault();
    let path = "note.md";
    let original = numbered(12);
    let original_lines: Vec<String> = original.lines().map(str::to_owned).collect();
    let lines_of = |vault: &Vault| -> Vec<String> { content(vault, path).lines().map(str::to_owned).collect() };

    vault.write(path, &original, false).unwrap();
    let change = vault.update(path, "inserted text\n", 5, None).unwrap();
    assert_eq!(change.op, ChangeOp::Update);
    assert_eq!(change.before.as_deref(), Some(original.as_str()));
    let mut expected = original_lines.clone();
    expected.insert(4, "inserted text".to_owned());
    assert_eq!(lines_of(&vault), expected);
    assert_eq!(change.after.unwrap(), content(&vault, path));

    vault.write(path, &original, true).unwrap();
    vault.update(path, "\n## New Section", -1, None).unwrap();
    assert_eq!(content(&vault, path), format!("{original}\n## New Section\n"));

    vault.write(path, &original, true).unwrap();
    vault.update(path, "# Title\n\n", 1, None).unwrap();
    assert_eq!(content(&vault, path), format!("# Title\n\n{original}"));

    vault.write(path, &original, true).unwrap();
    vault.update(path, "replacement text", 5, Some(10)).unwrap();
    let mut expected = original_lines.clone();
    expected.splice(4..10, ["replacement text".to_owned()]);
    assert_eq!(lines_of(&vault), expected);

    vault.write(path, &original, true).unwrap();
    vault.update(path, "", 5, Some(10)).unwrap();
    let mut expected = original_lines.clone();
    expected.drain(4..10);
    assert_eq!(lines_of(&vault), expected);
    assert_eq!(vault.read(path, 1, None).unwrap().total_lines, 6);
}

#[test]
fn update_errors() {
    let (_dir, vault) = vault_of(&[("a.md", &numbered(12))]);
    let message = |result: Result<_, VaultError>| error_of(result).to_string();
    assert_eq!(
        message(vault.update("a.md", "x", 40, None)),
        "startLine: 40 is past the end; \"a.md\" has 12 lines (use 13 or -1 to append)"
    );
    assert_eq!(
        message(vault.update("a.md", "x", 13, Some(13))),
        "startLine: 13 is past the end; \"a.md\" has 12 lines"
    );
    assert_eq!(message(vault.update("a.md", "x", 5, Some(15))), "endLine: 15 is past the end; \"a.md\" has 12 lines");
    assert_eq!(message(vault.update("a.md", "x", 5, Some(3))), "endLine: 3 is before startLine 5");
    assert_eq!(message(vault.update("a.md", "", 5, None)), "content: is empty; nothing to insert");
    assert_eq!(message(vault.update("a.md", "x", 0, None)), "startLine: must be 1 or more (or -1 to append)");
    assert_eq!(message(vault.update("a.md", "x", -2, None)), "startLine: must be 1 or more (or -1 to append)");
    assert!(message(vault.update("a.md", "x", -1, Some(3))).starts_with("endLine: 3 cannot be combined"));
    assert_eq!(message(vault.update("missing.md", "x", 1, None)), "path: \"missing.md\" does not exist");
    assert_eq!(error_of(vault.update("missing.md", "x", 1, None)).kind(), ErrorKind::NotFound);
    assert_eq!(content(&vault, "a.md"), numbered(12));
    vault.update("a.md", "x", 13, None).unwrap();
    assert!(content(&vault, "a.md").ends_with("line 12\nx\n"));
}

#[test]
fn update_keeps_crlf_and_missing_final_newline() {
    let (_dir, vault) = vault_of(&[("crlf.md", "a\r\nb\r\nc\r\n")]);
    vault.update("crlf.md", "x\ny\n", 2, None).unwrap();
    assert_eq!(content(&vault, "crlf.md"), "a\r\nx\r\ny\r\nb\r\nc\r\n");
    vault.update("crlf.md", "z", -1, None).unwrap();
    vault.update("crlf.md", "", 1, Some(1)).unwrap();
    assert_eq!(content(&vault, "crlf.md"), "x\r\ny\r\nb\r\nc\r\nz\r\n");
    assert_eq!(vault.read("crlf.md", 1, Some(1)).unwrap().lines, [(1, "x".to_owned())]);

    vault.write("bare.md", "a\nb", false).unwrap();
    vault.update("bare.md", "c", -1, None).unwrap();
    assert_eq!(content(&vault, "bare.md"), "a\nb\nc");
    vault.update("bare.md", "C", 3, Some(3)).unwrap();
    assert_eq!(content(&vault, "bare.md"), "a\nb\nC");
    vault.update("bare.md", "0", 1, None).unwrap();
    assert_eq!(content(&vault, "bare.md"), "0\na\nb\nC");
    vault.update("bare.md", "", 4, Some(4)).unwrap();
    assert_eq!(content(&vault, "bare.md"), "0\na\nb");

    vault.write("crlf-bare.md", "a\r\nb", false).unwrap();
    vault.update("crlf-bare.md", "c", -1, None).unwrap();
    assert_eq!(content(&vault, "crlf-bare.md"), "a\r\nb\r\nc");
}

#[test]
fn write_overwrite_rules() {
    let (_dir, vault) = vault();
    let change = vault.write("deep/er/a.md", "one", false).unwrap();
    assert_eq!((change.op, change.path.as_str()), (ChangeOp::Write, "deep/er/a.md"));
    assert_eq!((change.before, change.after.as_deref()), (None, Some("one")));
    let error = error_of(vault.write("deep/er/a.md", "two", false));
    assert_eq!(error.to_string(), "path: \"deep/er/a.md\" already exists; pass overwrite: true to replace it");
    assert_eq!(error.kind(), ErrorKind::Conflict);
    assert_eq!(content(&vault, "deep/er/a.md"), "one");
    let change = vault.write("deep/er/a.md", "two", true).unwrap();
    assert_eq!((change.before.as_deref(), change.after.as_deref()), (Some("one"), Some("two")));
    assert_eq!(content(&vault, "deep/er/a.md"), "two");
    let error = error_of(vault.write("deep/er", "x", true));
    assert_eq!(error.to_string(), "path: \"deep/er\" is a folder, not a note");
    let error = error_of(vault.write("deep/er/a.md/b.md", "x", false));
    assert!(error.to_string().contains("\"deep/er/a.md\" is a note, not a folder"), "{error}");
    vault.write("crlf.md", "a\r\nb", false).unwrap();
    assert_eq!(fs::read(vault.root().join("crlf.md")).unwrap(), b"a\r\nb");
}

#[test]
fn writes_leave_no_temporary_files() {
    let (_dir, vault) = vault();
    for round in 0..5 {
        vault.write("a.md", &format!("round {round}\n"), true).unwrap();
        vault.update("a.md", "more", -1, None).unwrap();
        vault.copy_note("a.md", "b.md", true).unwrap();
    }
    let names: Vec<String> =
        fs::read_dir(vault.root()).unwrap().map(|entry| entry.unwrap().file_name().into_string().unwrap()).collect();
    assert!(names.iter().all(|name| !name.starts_with(".quire-tmp-")), "{names:?}");
}

#[test]
fn temporary_files_are_hidden_and_reserved() {
    let (_dir, vault) = vault();
    fs::write(vault.root().join(".quire-tmp-123-4"), "half written").unwrap();
    fs::write(vault.root().join("a.md"), "a").unwrap();
    let all = vault.list(None, None, true).unwrap();
    assert_eq!(all.iter().map(|item| item.path.as_str()).collect::<Vec<_>>(), ["a.md"]);
    assert!(error_of(vault.read(".quire-tmp-123-4", 1, None)).to_string().contains("reserved"));
}

#[test]
fn move_rules() {
    let (_dir, vault) = vault_of(&[("inbox/note.md", "note\n")]);
    let change = vault.move_item("inbox/note.md", "projects/x/note.md", false).unwrap();
    assert_eq!(change.op, ChangeOp::Move);
    assert_eq!((change.path.as_str(), change.new_path.as_deref()), ("inbox/note.md", Some("projects/x/note.md")));
    assert_eq!((change.before.as_deref(), change.after.as_deref()), (Some("note\n"), Some("note\n")));
    assert!(!vault.exists_note("inbox/note.md").unwrap());
    assert!(vault.exists_note("projects/x/note.md").unwrap());

    vault.write("draft.md", "draft", false).unwrap();
    vault.write("final.md", "final", false).unwrap();
    let error = error_of(vault.move_item("draft.md", "final.md", false));
    assert_eq!(error.to_string(), "newPath: \"final.md\" already exists; pass overwrite: true to replace it");
    assert_eq!((error.kind(), error.field()), (ErrorKind::Conflict, Some("newPath")));
    let change = vault.move_item("draft.md", "final.md", true).unwrap();
    assert_eq!(content(&vault, "final.md"), "draft");
    let archived = change.archived_to.expect("the replaced note is archived");
    assert!(archived.starts_with(".archive/") && archived.ends_with("/final.md"), "{archived}");
    assert_eq!(content(&vault, &archived), "final");

    let error = error_of(vault.move_item("missing.md", "x.md", false));
    assert_eq!((error.kind(), error.field()), (ErrorKind::NotFound, Some("path")));
    let error = error_of(vault.move_item("final.md", "final.md", true));
    assert_eq!(error.field(), Some("newPath"));
}

#[test]
fn move_folders() {
    let (_dir, vault) = vault_of(&[("old/a.md", "a"), ("old/sub/b.md", "b")]);
    vault.create_folder("taken").unwrap();
    vault.write("taken.md", "t", false).unwrap();

    let error = error_of(vault.move_item("old", "old/sub/inner", false));
    assert!(error.to_string().contains("cannot be moved into itself"), "{error}");
    let error = error_of(vault.move_item("old", "taken", true));
    assert_eq!(error.kind(), ErrorKind::Conflict);
    assert!(error.to_string().contains("folders are never replaced"), "{error}");
    let error = error_of(vault.move_item("old", "taken.md", true));
    assert_eq!(error.kind(), ErrorKind::Conflict);
    let error = error_of(vault.move_item("taken.md", "taken", true));
    assert_eq!(error.kind(), ErrorKind::Conflict);

    let change = vault.move_item("old", "archive-like/new", false).unwrap();
    assert_eq!((change.before, change.after), (None, None));
    assert_eq!(content(&vault, "archive-like/new/sub/b.md"), "b");
    assert!(!vault.root().join("old").exists());
    vault.move_item("archive-like/new", "renamed", false).unwrap();
    assert_eq!(content(&vault, "renamed/a.md"), "a");
}

#[test]
fn copy_rules() {
    let (_dir, vault) = vault_of(&[("templates/meeting.md", "# Meeting\n")]);
    let change = vault.copy_note("templates/meeting.md", "meetings/2024-01-15.md", false).unwrap();
    assert_eq!(change.op, ChangeOp::Copy);
    assert_eq!((change.before, change.after.as_deref()), (None, Some("# Meeting\n")));
    assert_eq!(content(&vault, "meetings/2024-01-15.md"), "# Meeting\n");
    assert_eq!(content(&vault, "templates/meeting.md"), "# Meeting\n");

    let error = error_of(vault.copy_note("templates/meeting.md", "meetings/2024-01-15.md", false));
    assert_eq!(
        error.to_string(),
        "newPath: \"meetings/2024-01-15.md\" already exists; pass overwrite: true to replace it"
    );
    vault.update("meetings/2024-01-15.md", "notes", -1, None).unwrap();
    let change = vault.copy_note("templates/meeting.md", "meetings/2024-01-15.md", true).unwrap();
    assert_eq!(change.before.as_deref(), Some("# Meeting\nnotes\n"));
    assert_eq!(content(&vault, "meetings/2024-01-15.md"), "# Meeting\n");

    let error = error_of(vault.copy_note("templates", "copy", false));
    assert!(error.to_string().contains("only notes (files) can be copied"), "{error}");
    let error = error_of(vault.copy_note("templates/meeting.md", "meetings", true));
    assert_eq!(error.kind(), ErrorKind::Conflict);
    let error = error_of(vault.copy_note("templates/meeting.md", "templates/meeting.md", true));
    assert_eq!(error.field(), Some("newPath"));
    let error = error_of(vault.copy_note("nothing.md", "x.md", false));
    assert_eq!(error.kind(), ErrorKind::NotFound);
}

#[test]
fn copy_binary_files() {
    let (_dir, vault) = vault();
    let bytes = [0x89, b'P', b'N', b'G', 0, 0xff, 0xfe];
    fs::write(vault.root().join("x.png"), bytes).unwrap();
    let change = vault.copy_note("x.png", "images/y.png", false).unwrap();
    assert_eq!(change.after, None);
    assert_eq!(fs::read(vault.root().join("images/y.png")).unwrap(), bytes);
    let error = error_of(vault.copy_note("a-note-that-is-missing.md", "x.png", true));
    assert_eq!(error.kind(), ErrorKind::NotFound);
    vault.write("text.md", "t", false).unwrap();
    let error = error_of(vault.copy_note("text.md", "x.png", true));
    assert_eq!(error.to_string(), "newPath: \"x.png\" is not a UTF-8 text file");
}

#[test]
fn non_utf8_and_large_files_are_refused() {
    let (_dir, vault) = vault();
    fs::write(vault.root().join("x.png"), [0x89, b'P', b'N', b'G', 0xff]).unwrap();
    let error = error_of(vault.read("x.png", 1, None));
    assert_eq!(error.to_string(), "path: \"x.png\" is not a UTF-8 text file");
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(vault.update("x.png", "x", -1, None).is_err());
    assert!(vault.write("x.png", "x", true).is_err());
    assert!(vault.read_all("x.png").is_err());
    assert_eq!(fs::read(vault.root().join("x.png")).unwrap(), [0x89, b'P', b'N', b'G', 0xff]);

    let big = "x".repeat(MAX_NOTE_BYTES as usize + 1);
    fs::write(vault.root().join("big.md"), &big).unwrap();
    let error = error_of(vault.read("big.md", 1, Some(1)));
    assert!(error.to_string().contains("notes larger than 8 MiB are refused"), "{error}");
    assert!(error_of(vault.update("big.md", "x", -1, None)).to_string().contains("8 MiB"));
    let error = error_of(vault.write("other.md", &big, false));
    assert_eq!(error.field(), Some("content"));
    vault.write("edge.md", &"y".repeat(MAX_NOTE_BYTES as usize - 2), false).unwrap();
    let error = error_of(vault.update("edge.md", "zz", -1, None));
    assert_eq!(error.field(), Some("content"));
}

#[test]
fn archive_moves_into_timestamped_folders() {
    let (_dir, vault) = vault_of(&[("old-notes/deprecated.md", "old\n")]);
    let change = vault.archive("old-notes/deprecated.md").unwrap();
    assert_eq!(change.op, ChangeOp::Archive);
    let to = change.new_path.clone().unwrap();
    assert_eq!(change.archived_to.as_deref(), Some(to.as_str()));
    assert_eq!((change.before.as_deref(), change.after.as_deref()), (Some("old\n"), Some("old\n")));
    let stamp = to.strip_prefix(".archive/").unwrap().strip_suffix("/old-notes/deprecated.md").unwrap();
    assert!(chrono::NaiveDateTime::parse_from_str(stamp, "%Y-%m-%d_%H-%M-%S").is_ok(), "{stamp}");
    assert!(!vault.exists_note("old-notes/deprecated.md").unwrap());
    assert_eq!(content(&vault, &to), "old\n");
    assert!(vault.list(Some("old-notes"), None, false).unwrap().is_empty());
}

#[test]
fn archiving_the_same_path_twice_at_once_keeps_both() {
    let (_dir, vault) = vault_of(&[("a.md", "first")]);
    let first = vault.archive("a.md").unwrap().archived_to.unwrap();
    vault.write("a.md", "second", false).unwrap();
    let second = vault.archive("a.md").unwrap().archived_to.unwrap();
    assert_ne!(first, second);
    let folder = |path: &str| path.rsplit_once('/').unwrap().0.to_owned();
    assert_ne!(folder(&first), folder(&second));
    assert_eq!(content(&vault, &first), "first");
    assert_eq!(content(&vault, &second), "second");
}

#[test]
fn archiving_a_folder_keeps_its_structure() {
    let (_dir, vault) = vault_of(&[("projects/cancelled/plan.md", "plan"), ("projects/cancelled/notes/n1.md", "n1")]);
    vault.create_folder("projects/cancelled/empty").unwrap();
    let change = vault.archive("projects/cancelled").unwrap();
    assert_eq!((change.before, change.after), (None, None));
    let to = change.archived_to.unwrap();
    assert!(to.ends_with("/projects/cancelled"), "{to}");
    assert_eq!(content(&vault, &format!("{to}/plan.md")), "plan");
    assert_eq!(content(&vault, &format!("{to}/notes/n1.md")), "n1");
    assert!(vault.root().join(&to).join("empty").is_dir());
    assert!(!vault.root().join("projects/cancelled").exists());
    assert!(vault.root().join("projects").is_dir());
}

#[test]
fn archive_refusals() {
    let (_dir, vault) = vault();
    assert!(error_of(vault.archive(".")).to_string().contains("vault root"));
    assert!(error_of(vault.archive("/")).to_string().contains("not absolute"));
    assert_eq!(error_of(vault.archive("missing.md")).kind(), ErrorKind::NotFound);
    vault.write("a.md", "a", false).unwrap();
    let to = vault.archive("a.md").unwrap().archived_to.unwrap();
    let error = error_of(vault.archive(&to));
    assert!(error.to_string().contains("already archived"), "{error}");
    assert!(error_of(vault.archive(".archive")).to_string().contains("inside .archive"));
}

#[test]
fn restoring_out_of_the_archive() {
    let (_dir, vault) = vault_of(&[("notes/a.md", "keep me")]);
    let to = vault.archive("notes/a.md").unwrap().archived_to.unwrap();
    assert_eq!(vault.read(&to, 1, None).unwrap().numbered(), "1: keep me");
    let change = vault.move_item(&to, "notes/a.md", false).unwrap();
    assert_eq!(change.path, to);
    assert_eq!(content(&vault, "notes/a.md"), "keep me");
    vault.archive("notes/a.md").unwrap();
    let archived = vault.list(Some(".archive"), Some("**/*.md"), false).unwrap();
    assert_eq!(archived.len(), 1);
    vault.copy_note(&archived[0].path, "copy.md", false).unwrap();
    assert_eq!(content(&vault, "copy.md"), "keep me");
}

#[test]
fn listing_order_kinds_and_hidden_entries() {
    let (_dir, vault) = vault_of(&[("b.md", "bb"), ("A.md", "a"), ("notes.txt", "n")]);
    vault.create_folder("zeta").unwrap();
    vault.create_folder("Alpha").unwrap();
    vault.write("Alpha/inner.md", "i", false).unwrap();
    fs::create_dir(vault.root().join(".obsidian")).unwrap();
    fs::write(vault.root().join(".hidden.md"), "h").unwrap();
    vault.write("gone.md", "g", false).unwrap();
    vault.archive("gone.md").unwrap();

    let items = vault.list(None, None, false).unwrap();
    let paths: Vec<&str> = items.iter().map(|item| item.path.as_str()).collect();
    assert_eq!(paths, ["Alpha", "zeta", "A.md", "b.md", "notes.txt"]);
    assert_eq!(items[0].kind, ItemKind::Folder);
    assert_eq!(items[0].size, None);
    assert_eq!(items[3].kind, ItemKind::File);
    assert_eq!(items[3].size, Some(2));
    assert!(items[3].modified.is_some());

    let with_hidden = vault.list(None, None, true).unwrap();
    let paths: Vec<&str> = with_hidden.iter().map(|item| item.path.as_str()).collect();
    assert_eq!(paths, [".archive", ".obsidian", "Alpha", "zeta", ".hidden.md", "A.md", "b.md", "notes.txt"]);

    let inner = vault.list(Some("Alpha"), None, false).unwrap();
    assert_eq!(inner.iter().map(|item| item.path.as_str()).collect::<Vec<_>>(), ["Alpha/inner.md"]);
    assert_eq!(vault.list(Some("/"), None, false).unwrap().len(), 5);
    assert_eq!(vault.list(Some("."), None, false).unwrap().len(), 5);
    assert_eq!(vault.list(Some(""), None, false).unwrap().len(), 5);

    let error = error_of(vault.list(Some("b.md"), None, false));
    assert_eq!(error.to_string(), "path: \"b.md\" is a note, not a folder");
    assert_eq!(error_of(vault.list(Some("nowhere"), None, false)).kind(), ErrorKind::NotFound);
}

#[test]
fn listing_filters() {
    let (_dir, vault) = vault();
    for path in ["a.md", "b.txt", "todo-list.md", "notes/c.md", "notes/deep/d.md", "notes/deep/e.txt", "x/todo.md"] {
        vault.write(path, "x", false).unwrap();
    }
    let paths = |path: Option<&str>, filter: &str| -> Vec<String> {
        vault.list(path, Some(filter), false).unwrap().into_iter().map(|item| item.path).collect()
    };
    assert_eq!(paths(None, "*.md"), ["a.md", "todo-list.md"]);
    assert_eq!(paths(None, "*.MD"), ["a.md", "todo-list.md"]);
    assert_eq!(paths(None, "[ab].*"), ["a.md", "b.txt"]);
    assert_eq!(paths(None, "?.txt"), ["b.txt"]);
    assert_eq!(paths(None, "todo"), ["todo-list.md"]);
    assert_eq!(paths(None, "**/*.md"), ["a.md", "notes/c.md", "notes/deep/d.md", "todo-list.md", "x/todo.md"]);
    assert_eq!(paths(None, "notes/*"), ["notes/deep", "notes/c.md"]);
    assert_eq!(paths(Some("notes"), "**/*.txt"), ["notes/deep/e.txt"]);
    assert_eq!(paths(Some("notes"), "deep/*.md"), ["notes/deep/d.md"]);
    assert_eq!(paths(Some("notes"), "*.md"), ["notes/c.md"]);
    assert!(paths(None, "*.pdf").is_empty());
    assert_eq!(paths(None, "").len(), 5);
    let error = error_of(vault.list(None, Some("[abc"), false));
    assert_eq!(error.field(), Some("filter"));
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
}

#[test]
fn create_folder_rules() {
    let (_dir, vault) = vault();
    let change = vault.create_folder("projects/new-project").unwrap();
    assert_eq!((change.op, change.path.as_str()), (ChangeOp::CreateFolder, "projects/new-project"));
    assert!(vault.root().join("projects/new-project").is_dir());
    let error = error_of(vault.create_folder("projects/new-project"));
    assert_eq!(error.kind(), ErrorKind::Conflict);
    assert!(error.to_string().contains("already exists as a folder"));
    vault.write("note.md", "n", false).unwrap();
    assert!(error_of(vault.create_folder("note.md")).to_string().contains("already exists as a note"));
    assert!(error_of(vault.create_folder("note.md/sub")).to_string().contains("is a note, not a folder"));
}

#[test]
fn read_all_exists_and_restore() {
    let (_dir, vault) = vault();
    assert_eq!(vault.read_all("a.md").unwrap(), None);
    assert!(!vault.exists_note("a.md").unwrap());
    let written = vault.write("a.md", "one\n", false).unwrap();
    vault.update("a.md", "two", -1, None).unwrap();
    assert!(vault.exists_note("a.md").unwrap());
    vault.create_folder("folder").unwrap();
    assert!(!vault.exists_note("folder").unwrap());
    assert!(vault.read_all("folder").is_err());

    let change = vault.restore_content("a.md", written.after.as_deref().unwrap()).unwrap();
    assert_eq!(change.op, ChangeOp::Restore);
    assert_eq!((change.before.as_deref(), change.after.as_deref()), (Some("one\ntwo\n"), Some("one\n")));
    assert_eq!(content(&vault, "a.md"), "one\n");

    let change = vault.restore_content("brought/back.md", "again").unwrap();
    assert_eq!(change.before, None);
    assert_eq!(content(&vault, "brought/back.md"), "again");
    assert!(vault.restore_content("folder", "x").is_err());
}

#[test]
fn changes_and_items_serialize_in_camel_case() {
    let (_dir, vault) = vault_of(&[("a.md", "a\nb\n")]);
    let change = vault.move_item("a.md", "b.md", false).unwrap();
    let json = serde_json::to_value(&change).unwrap();
    assert_eq!(json["op"], "move");
    assert_eq!(json["newPath"], "b.md");
    assert!(json.get("archivedTo").is_some());
    let json = serde_json::to_value(vault.create_folder("f").unwrap()).unwrap();
    assert_eq!(json["op"], "createFolder");
    let json = serde_json::to_value(vault.read("b.md", 2, None).unwrap()).unwrap();
    assert_eq!(json["startLine"], 2);
    assert_eq!(json["totalLines"], 2);
    assert_eq!(json["lines"], serde_json::json!([[2, "b"]]));
    let json = serde_json::to_value(vault.list(None, None, false).unwrap()).unwrap();
    assert_eq!(json[0]["kind"], "folder");
    assert_eq!(json[1]["kind"], "file");
}

#[test]
fn a_vault_is_shared_between_threads() {
    let (_dir, vault) = vault_of(&[("shared.md", "start\n")]);
    std::thread::scope(|scope| {
        for worker in 0..8 {
            let vault = &vault;
            scope.spawn(move || {
                vault.write(&format!("w{worker}.md"), "x", false).unwrap();
                vault.archive(&format!("w{worker}.md")).unwrap();
                vault.search("start", None, 5, false).unwrap();
            });
        }
    });
    let archived = vault.list(Some(".archive"), Some("**/*.md"), false).unwrap();
    assert_eq!(archived.len(), 8);
}

#[test]
fn paths_in_results_use_forward_slashes() {
    let (_dir, vault) = vault_of(&[("a/b/c.md", "c")]);
    let items = vault.list(Some("a/b"), None, false).unwrap();
    assert_eq!(items[0].path, "a/b/c.md");
    assert!(Path::new(vault.root()).join("a/b/c.md").exists());
}
