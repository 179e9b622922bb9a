//! The catalog itself: same tools as docs/TOOLS.md, schemas that every
//! provider accepts (snapshotted), descriptions within budget, guidance.

use quire_tools::{Category, Risk, catalog, full_schema};
use serde_json::Value;
use std::collections::BTreeSet;

/// Tool names in the tables of docs/TOOLS.md, for the groups this registry implements.
fn contract_tools() -> BTreeSet<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/TOOLS.md");
    let text = std::fs::read_to_string(path).unwrap();
    let mut names = BTreeSet::new();
    let mut in_scope = false;
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            in_scope = [
                "Default tools",
                "Pages",
                "Sections",
                "Images",
                "Posts",
                "Navigation",
                "Entries",
                "Publishing",
                "Releases",
                "Archive",
                "Vault",
                "Agents and their memory",
                "External",
            ]
            .iter()
            .any(|h| heading.starts_with(h));
            continue;
        }
        if in_scope && line.starts_with("| ") {
            let first = line.trim_start_matches('|').split('|').next().unwrap().trim();
            if !first.is_empty() && first != "tool" && !first.starts_with("---") {
                names.insert(first.to_string());
            }
        }
    }
    names
}

#[test]
fn registry_matches_the_contract() {
    let registry: BTreeSet<String> = catalog().iter().map(|t| t.name.to_string()).collect();
    let contract = contract_tools();
    assert_eq!(contract.len(), 68, "{contract:?}");
    assert_eq!(registry, contract);
}

fn walk(v: &Value, path: &str, f: &mut impl FnMut(&str, &Value)) {
    f(path, v);
    match v {
        Value::Object(m) => m.iter().for_each(|(k, v)| walk(v, &format!("{path}.{k}"), f)),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| walk(v, &format!("{path}[{i}]"), f)),
        _ => {}
    }
}

#[test]
fn schemas_are_inline_strict_and_described() {
    for tool in catalog() {
        let schema = full_schema(&tool);
        assert_eq!(schema["type"], "object", "{}", tool.name);
        assert_eq!(schema["additionalProperties"], false, "{} must reject unknown parameters", tool.name);
        walk(&schema, tool.name, &mut |path, v| {
            if let Value::Object(m) = v {
                assert!(!m.contains_key("$ref") && !m.contains_key("$defs"), "{path} uses $ref");
            }
        });
        let props = schema["properties"].as_object().unwrap();
        for (name, prop) in props {
            let described = prop.get("description").and_then(Value::as_str).is_some_and(|d| !d.is_empty());
            assert!(described, "{}.{name} has no description", tool.name);
        }
        insta::assert_json_snapshot!(format!("schema_{}", tool.name), schema);
    }
}

/// Sentences: runs of text ending in . ! or ? followed by a space or the end.
fn sentences(text: &str) -> usize {
    let bytes: Vec<char> = text.chars().collect();
    let mut n = 0;
    for i in 0..bytes.len() {
        if matches!(bytes[i], '.' | '!' | '?') && (i + 1 == bytes.len() || bytes[i + 1] == ' ') {
            n += 1;
        }
    }
    n
}

#[test]
fn metadata_is_consistent() {
    for tool in catalog() {
        let s = sentences(tool.description);
        assert!((1..=2).contains(&s), "{}: description has {s} sentences: {}", tool.name, tool.description);
        assert!(!tool.guidance.is_empty(), "{} has no guidance", tool.name);
        assert!(tool.guidance.split_whitespace().count() <= 30, "{} guidance is long", tool.name);
        if tool.destructive {
            assert_eq!(tool.risk, Risk::High, "{}", tool.name);
            assert!(tool.preview.is_some(), "{} needs a preview", tool.name);
            assert!(!tool.read_only && !tool.idempotent, "{}", tool.name);
        } else {
            assert!(tool.preview.is_none(), "{}", tool.name);
        }
        if tool.read_only {
            assert_eq!(tool.risk, Risk::Safe, "{}", tool.name);
        }
        let changes_the_site = [
            "restoreArchive",
            "httpPost",
            "publishContent",
            "unpublishContent",
            "discardDraft",
            "publishRelease",
            "revertRelease",
            // An agent's settings decide what runs without a person.
            "createAgent",
            "updateAgent",
            "archiveAgent",
        ];
        assert_eq!(
            tool.name.starts_with("delete") || changes_the_site.contains(&tool.name),
            tool.destructive,
            "{}",
            tool.name
        );
        // CMS reads are get*; the vault keeps the seed's own verbs (readNote,
        // listFolder, ...), and picking saved work up has its own (loadWorkspace).
        if !tool.tags.contains(&"vault") && tool.name != "loadWorkspace" {
            assert_eq!(
                tool.name.starts_with("get"),
                tool.read_only && tool.category == Category::Internal,
                "{}",
                tool.name
            );
        }
        if tool.category != Category::Default {
            assert!(!tool.tags.is_empty() && !tool.phrases.is_empty(), "{} needs tags and phrases", tool.name);
        }
    }
}

#[test]
fn guidance_block_for_a_sample_active_set() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = rt.block_on(quire_store::testing::open(dir.path())).unwrap();
    let registry = quire_tools::Registry::new(quire_tools::Services::new(store, dir.path()));
    let active = [
        "searchTools",
        "acknowledgeRequest",
        "finalAnswer",
        "getPage",
        "createSection",
        "updatePost",
        "deletePost",
        "noSuchTool",
        "getPage",
    ];
    let block = quire_tools::render_guidance(&registry, &active);
    insta::assert_snapshot!("guidance_sample", format!("{}\n\n{}", quire_tools::all_rules(), block));
    assert_eq!(quire_tools::render_guidance(&registry, &[]), "");
}

/// Token counts (o200k_base) of every definition as a provider receives it:
/// name + description + JSON schema. Run with --nocapture to see the table.
#[test]
fn token_budget() {
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let mut total = 0;
    let mut rows = Vec::new();
    for tool in catalog() {
        let text = format!("{}\n{}\n{}", tool.name, tool.description, full_schema(&tool));
        let n = bpe.encode_with_special_tokens(&text).len();
        let guidance = bpe.encode_with_special_tokens(tool.guidance).len();
        assert!(n <= 450, "{} costs {n} tokens", tool.name);
        assert!(guidance <= 40, "{} guidance costs {guidance} tokens", tool.name);
        total += n;
        rows.push(format!("| {} | {n} | {guidance} |", tool.name));
    }
    let rules = bpe.encode_with_special_tokens(&quire_tools::all_rules()).len();
    println!("| tool | definition tokens | guidance tokens |\n| --- | --- | --- |\n{}", rows.join("\n"));
    println!("catalog total: {total} tokens; rules block: {rules} tokens");
    // The locale argument of the fifteen tools that read and write pages,
    // sections, posts, entries and menus costs about 300 of these; the twelve
    // tools of agents, contexts and workspaces about 1,900, proposeFormValues
    // about 110. A tool costs a turn only while it is active.
    assert!(total <= 10250, "the catalog costs {total} tokens");
    assert!(rules <= 250, "rules cost {rules} tokens");
}

/// Every tool the rules name (camelCase words, and `prefix*` families)
/// is in the registry: the rules never point the model at a missing tool.
#[test]
fn the_rules_name_only_real_tools() {
    let names: Vec<&str> = catalog().iter().map(|t| t.name).collect();
    // Parameter names (includeContent) are camelCase too.
    let params: BTreeSet<String> = catalog()
        .iter()
        .flat_map(|t| full_schema(t)["properties"].as_object().unwrap().keys().cloned().collect::<Vec<_>>())
        .collect();
    let rules = quire_tools::all_rules();
    let mut named = 0;
    for word in rules.split(|c: char| !(c.is_ascii_alphanumeric() || c == '*')) {
        if let Some(family) = word.strip_suffix('*') {
            assert!(names.iter().any(|n| n.starts_with(family)), "the rules name {word}, no such tools");
            named += 1;
        } else if word.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && word.chars().any(|c| c.is_ascii_uppercase())
            && !params.contains(word)
        {
            assert!(names.contains(&word), "the rules name {word}, which is no tool of the registry");
            named += 1;
        }
    }
    assert!(named >= 4, "{rules}");
    for external in ["browseImages", "importImage"] {
        assert!(rules.contains(external), "the rules should mention {external}");
    }
}

/// No rule says that destructive tools only preview: each one's description
/// does, for every client.
#[test]
fn each_destructive_tool_says_that_a_person_approves() {
    for tool in catalog().iter().filter(|t| t.destructive) {
        let d = tool.description;
        assert!(d.contains("only previews") && d.contains("a person"), "{}: {d}", tool.name);
    }
}
