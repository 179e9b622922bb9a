//! Search through the public API, including edits made behind the vault's back.

mod common;

use common::{vault, vault_of};

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

use quire_vault::{ErrorKind, SearchHit};

fn paths(hits: &[SearchHit]) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for hit in hits {
        if !seen.contains(&hit.path.as_str()) {
            seen.push(&hit.path);
        }
    }
    seen
}

/// Moves a file's modification time forward, so a change is visible even where the file system records whole
/// seconds only.
fn touch_forward(path: &Path, seconds: u64) {
    let file = File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() + Duration::from_secs(seconds)).unwrap();
}

#[test]
fn notes_written_through_the_vault_are_found() {
    let (_dir, vault) = vault_of(&[
        ("recipes/bread.md", "# Bread\n\nFlour, water, salt.\nKnead the dough.\n"),
        ("recipes/soup.md", "# Soup\n\nWater and vegetables.\n"),
    ]);
    let hits = vault.search("dough", None, 10, false).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (hits[0].path.as_str(), hits[0].line, hits[0].snippet.as_str()),
        ("recipes/bread.md", 4, "Knead the dough.")
    );
    assert!(hits[0].score > 0.0);

    let hits = vault.search("WATER", None, 10, false).unwrap();
    assert_eq!(paths(&hits).len(), 2);

    vault.update("recipes/soup.md", "Add a little dough.", -1, None).unwrap();
    let hits = vault.search("dough", None, 10, false).unwrap();
    assert_eq!(paths(&hits).len(), 2);
}

#[test]
fn all_words_must_match_unless_none_do() {
    let (_dir, vault) = vault_of(&[
        ("both.md", "alpha line\nbeta line\n"),
        ("alpha.txt", "only alpha here\n"),
        ("gamma.md", "gamma\n"),
    ]);
    let hits = vault.search("alpha beta", None, 10, false).unwrap();
    assert_eq!(paths(&hits), ["both.md"]);
    assert_eq!(hits.iter().map(|hit| hit.line).collect::<Vec<_>>(), [1, 2]);

    let hits = vault.search("alpha delta", None, 10, false).unwrap();
    assert_eq!(paths(&hits).len(), 2, "falls back to notes with some of the words: {hits:?}");
    let hits = vault.search("zeta", None, 10, false).unwrap();
    assert!(hits.is_empty());
}

#[test]
fn ranking_prefers_names_headings_and_frequency() {
    let (_dir, vault) = vault_of(&[
        ("misc.md", "we talked about the garden once\nand other things\nmore things\n"),
        ("garden.md", "plants\n"),
        ("plans.md", "# Garden plans\nsoil\n"),
        ("filler.md", "nothing relevant\n"),
    ]);
    let hits = vault.search("garden", None, 10, false).unwrap();
    let order = paths(&hits);
    assert_eq!(order.len(), 3);
    assert_eq!(order[2], "misc.md", "{hits:?}");
    let by_path = |path: &str| hits.iter().find(|hit| hit.path == path).unwrap();
    assert_eq!(by_path("garden.md").line, 1, "a match by name only points at line 1");
    assert_eq!(by_path("garden.md").snippet, "plants");
    assert!(hits.windows(2).all(|pair| pair[0].score >= pair[1].score));
}

#[test]
fn prefixes_and_unicode_words() {
    let (_dir, vault) = vault_of(&[("a.md", "Meeting with Zoë about the été schedule\n")]);
    assert_eq!(vault.search("meet", None, 10, false).unwrap().len(), 1);
    assert_eq!(vault.search("ZOË", None, 10, false).unwrap().len(), 1);
    assert_eq!(vault.search("été", None, 10, false).unwrap().len(), 1);
    assert!(vault.search("me", None, 10, false).unwrap().is_empty(), "two letters match whole words only");
}

#[test]
fn limit_caps_hits_and_best_notes_come_first() {
    let (_dir, vault) = vault();
    let many: String = (0..30).map(|n| format!("apple {n}\n")).collect();
    vault.write("apples.md", &many, false).unwrap();
    vault.write("other.md", "an apple\n", false).unwrap();
    let hits = vault.search("apple", None, 5, false).unwrap();
    assert_eq!(hits.len(), 5);
    assert!(hits.iter().all(|hit| hit.path == "apples.md"));
    assert_eq!(hits.iter().map(|hit| hit.line).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
    assert!(vault.search("apple", None, 0, false).unwrap().is_empty());
    assert_eq!(vault.search("apple", None, 100, false).unwrap().len(), 31);
}

#[test]
fn path_restricts_the_search() {
    let (_dir, vault) = vault_of(&[
        ("work/a.md", "budget\n"),
        ("work/deep/b.md", "budget\n"),
        ("home/c.md", "budget\n"),
        ("workshop/d.md", "budget\n"),
    ]);
    let mut found = paths(&vault.search("budget", Some("work"), 10, false).unwrap()).join(",");
    assert_eq!(found, "work/a.md,work/deep/b.md");
    found = paths(&vault.search("budget", Some("work/a.md"), 10, false).unwrap()).join(",");
    assert_eq!(found, "work/a.md");
    assert_eq!(paths(&vault.search("budget", None, 10, false).unwrap()).len(), 4);
    assert_eq!(paths(&vault.search("budget", None, 10, false).unwrap()).len(), 4, "a narrower search kept the rest");
    let error = vault.search("budget", Some("nowhere"), 10, false).unwrap_err();
    assert_eq!((error.kind(), error.field()), (ErrorKind::NotFound, Some("path")));
}

#[test]
fn edits_outside_the_vault_are_found() {
    let (_dir, vault) = vault();
    let root = vault.root().to_path_buf();
    vault.write("a.md", "original words\n", false).unwrap();
    assert_eq!(vault.search("original", None, 10, false).unwrap().len(), 1);

    // Same size, new content: only the modification time tells.
    fs::write(root.join("a.md"), "replaced words\n").unwrap();
    touch_forward(&root.join("a.md"), 5);
    assert!(vault.search("original", None, 10, false).unwrap().is_empty());
    assert_eq!(vault.search("replaced", None, 10, false).unwrap()[0].line, 1);

    // Appended, as by `echo >>`: the size changes.
    let mut file = OpenOptions::new().append(true).open(root.join("a.md")).unwrap();
    writeln!(file, "appended kiwi").unwrap();
    drop(file);
    let hits = vault.search("kiwi", None, 10, false).unwrap();
    assert_eq!((hits[0].path.as_str(), hits[0].line), ("a.md", 2));

    // Created and deleted behind the vault's back.
    fs::create_dir_all(root.join("new")).unwrap();
    fs::write(root.join("new/b.markdown"), "fresh mango\n").unwrap();
    assert_eq!(paths(&vault.search("mango", None, 10, false).unwrap()), ["new/b.markdown"]);
    fs::remove_file(root.join("new/b.markdown")).unwrap();
    assert!(vault.search("mango", None, 10, false).unwrap().is_empty());
    fs::remove_file(root.join("a.md")).unwrap();
    assert!(vault.search("kiwi", None, 10, false).unwrap().is_empty());
}

#[test]
fn changes_through_the_vault_are_found_even_within_one_second() {
    let (_dir, vault) = vault();
    vault.write("a.md", "first\n", false).unwrap();
    assert_eq!(vault.search("first", None, 10, false).unwrap().len(), 1);
    let mtime = fs::metadata(vault.root().join("a.md")).unwrap().modified().unwrap();
    vault.write("a.md", "other\n", true).unwrap();
    // Pretend the file system kept the old time: the vault's own write still invalidates its index entry.
    File::options().write(true).open(vault.root().join("a.md")).unwrap().set_modified(mtime).unwrap();
    assert!(vault.search("first", None, 10, false).unwrap().is_empty());
    assert_eq!(vault.search("other", None, 10, false).unwrap().len(), 1);
    vault.move_item("a.md", "b.md", false).unwrap();
    assert_eq!(paths(&vault.search("other", None, 10, false).unwrap()), ["b.md"]);
    vault.archive("b.md").unwrap();
    assert!(vault.search("other", None, 10, false).unwrap().is_empty());
}

#[test]
fn hidden_folders_and_the_archive() {
    let (_dir, vault) = vault_of(&[("old.md", "papaya\n")]);
    let archived = vault.archive("old.md").unwrap().archived_to.unwrap();
    fs::create_dir_all(vault.root().join(".obsidian")).unwrap();
    fs::write(vault.root().join(".obsidian/workspace.md"), "papaya\n").unwrap();
    fs::write(vault.root().join(".dotnote.md"), "papaya\n").unwrap();
    vault.write("visible.md", "papaya\n", false).unwrap();

    assert_eq!(paths(&vault.search("papaya", None, 10, false).unwrap()), ["visible.md"]);
    let mut with_archive =
        paths(&vault.search("papaya", None, 10, true).unwrap()).into_iter().map(str::to_owned).collect::<Vec<_>>();
    with_archive.sort();
    assert_eq!(with_archive, [archived.clone(), "visible.md".to_owned()]);
    assert_eq!(paths(&vault.search("papaya", Some(".archive"), 10, false).unwrap()), [archived.as_str()]);
    assert_eq!(paths(&vault.search("papaya", None, 10, false).unwrap()), ["visible.md"]);
}

#[test]
fn only_notes_are_searched() {
    let (_dir, vault) = vault();
    fs::write(vault.root().join("data.json"), "{\"fruit\": \"lychee\"}").unwrap();
    fs::write(vault.root().join("image.png"), [0xff, 0xfe, b'l']).unwrap();
    fs::write(vault.root().join("bad.md"), [b'l', b'y', 0xff, 0xfe]).unwrap();
    vault.write("NOTE.MD", "lychee\n", false).unwrap();
    vault.write("plain.txt", "lychee\n", false).unwrap();
    let mut found = paths(&vault.search("lychee", None, 10, false).unwrap()).join(",");
    assert_eq!(found, "NOTE.MD,plain.txt");
    fs::write(vault.root().join(".quire-tmp-1-1"), "lychee").unwrap();
    found = paths(&vault.search("lychee", None, 10, false).unwrap()).join(",");
    assert_eq!(found, "NOTE.MD,plain.txt");
}

#[test]
fn snippets_are_trimmed_and_cut_around_the_match() {
    let (_dir, vault) = vault();
    let long = format!("   {} durian {}   ", "lorem ".repeat(60), "ipsum ".repeat(60));
    vault.write("long.md", &format!("{long}\n"), false).unwrap();
    let hits = vault.search("durian", None, 10, false).unwrap();
    let snippet = &hits[0].snippet;
    assert!(snippet.contains("durian"));
    assert!(snippet.starts_with('…') && snippet.ends_with('…'));
    assert!(snippet.chars().count() <= 162);
}

#[test]
fn query_errors() {
    let (_dir, vault) = vault();
    let error = vault.search("   ", None, 10, false).unwrap_err();
    assert_eq!((error.kind(), error.field()), (ErrorKind::InvalidInput, Some("query")));
    assert_eq!(
        vault.search("?!", None, 10, false).unwrap_err().to_string(),
        "query: has no letters or digits to search for"
    );
    assert!(vault.search(&"x".repeat(2000), None, 10, false).is_err());
    assert_eq!(vault.search("x", Some("../up"), 10, false).unwrap_err().field(), Some("path"));
}

#[test]
fn hits_serialize_in_camel_case() {
    let (_dir, vault) = vault_of(&[("a.md", "cherry\n")]);
    let json = serde_json::to_value(vault.search("cherry", None, 1, false).unwrap()).unwrap();
    assert_eq!(json[0]["path"], "a.md");
    assert_eq!(json[0]["line"], 1);
    assert_eq!(json[0]["snippet"], "cherry");
    assert!(json[0]["score"].as_f64().unwrap() > 0.0);
}

#[test]
fn words_of_one_family_find_each_other() {
    let (_dir, vault) = vault_of(&[
        ("trips/alps.md", "# Mountain sunset\n\nWe watched the light go from the ridge.\n"),
        ("trips/coast.md", "# Harbour\n\nBoats and a sunset over the sea.\n"),
        ("trips/city.md", "# Museums\n\nRunning between exhibitions.\n"),
    ]);
    // "mountains" finds "Mountain"; the note with both words ranks first.
    let hits = vault.search("sunset over the mountains", None, 10, false).unwrap();
    assert_eq!(paths(&hits)[0], "trips/alps.md", "{hits:?}");
    let hits = vault.search("runs", None, 10, false).unwrap();
    assert_eq!(paths(&hits), ["trips/city.md"]);
}
