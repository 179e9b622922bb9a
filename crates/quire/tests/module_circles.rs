//! No module circles inside a crate: reads each module's paths into the
//! crate (`use crate::…`, `crate::…` and `super::…` in code, tests left
//! out) and fails when modules reach each other in a circle. A module
//! reaching its own parent (`super::ListResponse`) is not counted: the
//! parent declares it, and that is the tree, not a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The `.rs` files under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source folder") {
        let path = entry.expect("readable entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file: `routes::tools` for `src/routes/tools.rs`,
/// `routes` for `src/routes/mod.rs`, empty for `lib.rs` or `main.rs`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("file under src").with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|l| matches!(l.as_str(), "mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The code of a file without its unit tests and comments.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// Every path that starts with `prefix` (`crate::` or `super::`), with a
/// `{a, b::c}` group spread into one path per member.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let mut head = Vec::new();
        let mut chars = rest;
        loop {
            let ident: String = chars.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if ident.is_empty() {
                break;
            }
            chars = &chars[ident.len()..];
            head.push(ident);
            match chars.strip_prefix("::") {
                Some(next) => chars = next,
                None => break,
            }
        }
        if let Some(group) = chars.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or_default();
            for member in group.split(',') {
                let mut path = head.clone();
                path.extend(member.split("::").map(|s| s.trim().to_string()).filter(|s| !s.is_empty()));
                found.push(path);
            }
        } else {
            found.push(head);
        }
    }
    found
}

/// The modules of the crate at `src` and the modules each one reaches.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let texts: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|f| (module_of(src, f), code(&std::fs::read_to_string(f).expect("readable source"))))
        .collect();
    // What the crate root re-exports (`pub use tool::{Tool, …}`): a path
    // `crate::Tool` reaches the module that defines it.
    let mut reexports = BTreeMap::new();
    if let Some(root) = texts.get(&Vec::new()) {
        for path in paths_after(&root.replace("pub use ", "pub use crate::"), "crate::") {
            if let (Some(first), Some(last)) = (path.first(), path.last())
                && texts.contains_key(&vec![first.clone()])
            {
                reexports.insert(last.clone(), first.clone());
            }
        }
    }
    let resolve = |path: &[String]| -> Option<Vec<String>> {
        let mut path = path.to_vec();
        if let Some(first) = path.first()
            && !texts.contains_key(&vec![first.clone()])
            && let Some(module) = reexports.get(first)
        {
            path[0] = module.clone();
        }
        (1..=path.len()).rev().map(|n| path[..n].to_vec()).find(|m| texts.contains_key(m))
    };
    let mut edges = BTreeMap::new();
    for (module, text) in &texts {
        let mut reached = BTreeSet::new();
        let mut targets: Vec<Vec<String>> = paths_after(text, "crate::");
        for path in paths_after(text, "super::") {
            let mut parent = module.clone();
            parent.pop();
            parent.extend(path);
            targets.push(parent);
        }
        for target in targets {
            if let Some(to) = resolve(&target)
                && to != *module
                && !module.starts_with(&to)
                && !to.is_empty()
            {
                reached.insert(to.join("::"));
            }
        }
        edges.insert(module.join("::"), reached);
    }
    edges
}

/// A circle among the modules, if there is one.
fn circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut found = stack[at..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, edges, stack, done) {
                return Some(found);
            }
        }
        stack.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges.keys().find_map(|start| visit(start, edges, &mut Vec::new(), &mut done))
}

/// The modules of `edges` that lie on a circle (reach themselves).
fn on_circles(edges: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let reaches = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&str> = edges.get(from).into_iter().flatten().map(String::as_str).collect();
        while let Some(next) = todo.pop() {
            if seen.insert(next.to_string()) {
                todo.extend(edges.get(next).into_iter().flatten().map(String::as_str));
            }
        }
        seen
    };
    edges.keys().filter(|m| reaches(m).contains(*m)).cloned().collect()
}

/// The crate `name`'s sources, next to this one's.
fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name).join("src")
}

/// Every crate, found on disk so that a new one is held too. In quire-tools,
/// for one, arrows point one way: the registry and the tool modules use
/// `tool.rs`, which uses `services.rs`, whose parts (`settings.rs`,
/// `embed.rs`, `vaults.rs`, …) use `error.rs`; searchTools reaches the
/// registry through `tool::ToolSearch`.
#[test]
fn no_crate_has_a_module_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let (mut checked, mut circles) = (0, Vec::new());
    for entry in std::fs::read_dir(&root).expect("the crates folder") {
        let name = entry.expect("an entry").file_name().to_string_lossy().into_owned();
        if name.starts_with("quire") && crate_src(&name).is_dir() {
            let edges = graph(&crate_src(&name));
            assert!(edges.len() > 1, "{name}: no module found; is the source folder right?");
            if let Some(found) = circle(&edges) {
                circles.push(format!("{name}: {}", found.join(" → ")));
            }
            checked += 1;
        }
    }
    assert!(checked >= 12, "only {checked} crates checked");
    assert!(circles.is_empty(), "modules on a circle:\n{}", circles.join("\n"));
}

#[test]
fn a_circle_is_found() {
    let edges = BTreeMap::from([
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::from(["c".to_string()])),
        ("c".to_string(), BTreeSet::from(["a".to_string()])),
        ("d".to_string(), BTreeSet::from(["a".to_string()])),
    ]);
    assert_eq!(circle(&edges), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    assert_eq!(on_circles(&edges), BTreeSet::from(["a".into(), "b".into(), "c".into()]));
    let paths = paths_after("use crate::tool::{Tool, ToolError};\nlet x = crate::media::settle(a);", "crate::");
    assert_eq!(paths[0], ["tool", "Tool"]);
    assert_eq!(paths[2], ["media", "settle"]);
}
