//! The arrows ARCHITECTURE.md draws between crates, held: each crate's
//! dependencies on the others (from its Cargo.toml) are among those its
//! layer allows, the crates that must do no I/O or speak no protocol
//! depend on nothing that does, and the imports and calls the map forbids
//! appear in no source file of the crate (or folder) that must not make
//! them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The names under `[dependencies]` of a crate's manifest (not dev- or build-).
fn dependencies(krate: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(crates_dir().join(krate).join("Cargo.toml")).unwrap();
    let mut out = BTreeSet::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if inside && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['=', '.', ' ']).next().unwrap().trim();
            out.insert(name.to_string());
        }
    }
    out
}

/// Every Rust source file of `place`: a crate's `src/`, or a folder or
/// file under `crates/` (`quire-server/src/routes`).
fn sources(place: &str) -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path, text));
            }
        }
    }
    let mut out = Vec::new();
    let path = match place.contains('/') {
        true => crates_dir().join(place),
        false => crates_dir().join(place).join("src"),
    };
    if path.is_dir() {
        walk(&path, &mut out);
    } else {
        out.push((path.clone(), std::fs::read_to_string(&path).unwrap()));
    }
    out
}

/// The Quire crates each crate may depend on: the layers below it.
const ALLOWED: &[(&str, &[&str])] = &[
    ("quire-core", &[]),
    ("quire-net", &[]),
    ("quire-media", &[]),
    ("quire-vault", &["quire-core"]),
    ("quire-store", &["quire-core"]),
    ("quire-tools", &["quire-core", "quire-store", "quire-vault", "quire-media", "quire-net"]),
    ("quire-agent", &["quire-core", "quire-store", "quire-tools"]),
    ("quire-app", &["quire-core", "quire-store", "quire-tools", "quire-agent"]),
    ("quire-mcp", &["quire-core", "quire-tools", "quire-app"]),
    ("quire-server", &["quire-core", "quire-store", "quire-tools", "quire-agent", "quire-app", "quire-mcp"]),
    ("quire-web", &["quire-core", "quire-tools", "quire-agent", "quire-app", "quire-server"]),
];

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    let on_disk: BTreeSet<String> = std::fs::read_dir(crates_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("quire"))
        .collect();
    let listed: BTreeSet<String> = ALLOWED.iter().map(|(k, _)| k.to_string()).chain(["quire".to_string()]).collect();
    assert_eq!(on_disk, listed, "every crate has its place in the table");
    for (krate, allowed) in ALLOWED {
        let quire: BTreeSet<String> = dependencies(krate).into_iter().filter(|d| d.starts_with("quire")).collect();
        let extra: Vec<&String> = quire.iter().filter(|d| !allowed.contains(&d.as_str())).collect();
        assert!(extra.is_empty(), "{krate} must not depend on {extra:?}");
    }
}

#[test]
fn the_core_does_no_io_and_the_use_cases_speak_no_protocol() {
    let io = ["tokio", "rusqlite", "postgres", "reqwest", "object_store", "axum", "rmcp"];
    let core = dependencies("quire-core");
    assert!(io.iter().all(|d| !core.contains(*d)), "quire-core: {core:?}");
    let app = dependencies("quire-app");
    let surfaces = ["axum", "http", "rmcp", "askama", "clap", "tower", "tower-http"];
    assert!(surfaces.iter().all(|d| !app.contains(*d)), "quire-app: {app:?}");
}

/// What a crate's sources (or those of a folder of it) must not hold:
/// (crate or folder, forbidden import or call, why).
const FORBIDDEN: &[(&str, &str, &str)] = &[
    ("quire-mcp", "quire_store", "MCP reads through the registry and the use cases"),
    ("quire-web", "quire_server::routes", "the back-office calls use cases, not REST handlers"),
    ("quire-web", "quire_server::auth::call_context", "the back-office acts as the use cases' Actor"),
    ("quire-web", "quire_store", "the back-office reads and writes through the use cases"),
    ("quire-web", "services().store", "the back-office reads and writes through the use cases"),
    ("quire-store", "quire_tools", "the store knows nothing of tools"),
    ("quire-tools", "quire_agent", "tools know nothing of the agent"),
    (
        "quire-server/src/routes",
        ".store()",
        "handlers reach records through quire-app, which decides who may and keeps to the caller's scope",
    ),
];

/// Files a rule of [`FORBIDDEN`] passes over, and why.
const EXEMPT: &[(&str, &str)] = &[
    ("quire-server/src/routes/uploads.rs", "serves a stored file by its path to anyone: there is no actor"),
    ("quire-server/src/routes/tokens.rs", "hands the store to quire_app::tokens, which decides"),
    ("quire-server/src/routes/users.rs", "hands the store to quire_app::users, which decides"),
    ("quire-server/src/routes/preferences.rs", "hands the store to quire_app::preferences, which decides"),
    (
        "quire-server/src/routes/oauth.rs",
        "hands the store to quire_app::oauth, which decides: its callers have no actor yet",
    ),
];

/// Crates (or folders) that may name the store only to hand it to a use
/// case (`tokens::list(state.store(), …)`, `Content::new(state.store().clone(), …)`),
/// and why: they call none of its methods.
const STORE_HANDED_ON: &[(&str, &str)] = &[("quire-web", "the back-office reads and writes through the use cases")];

#[test]
fn the_store_is_only_handed_to_the_use_cases() {
    for (place, why) in STORE_HANDED_ON {
        for (file, text) in sources(place) {
            // The code without comments or whitespace, so that a call on
            // the next line (`state\n.store()\n.page(…)`) shows too.
            let code: String = text.lines().flat_map(|l| l.split("//").next().unwrap().split_whitespace()).collect();
            for (at, call) in code.match_indices(".store()") {
                let rest = &code[at + call.len()..];
                let handed = rest.strip_prefix(".clone()").unwrap_or(rest).starts_with([')', ',']);
                let before: String = code[..at].chars().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect();
                let after: String = rest.chars().take(40).collect();
                assert!(handed, "{}: a call on the store in `{before}{call}{after}` ({why})", file.display());
            }
        }
    }
}

#[test]
fn no_source_holds_an_import_or_call_its_layer_forbids() {
    for (place, path, why) in FORBIDDEN {
        for (file, text) in sources(place) {
            if EXEMPT.iter().any(|(exempt, _)| file.ends_with(exempt)) {
                continue;
            }
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap();
                assert!(!code.contains(path), "{}:{}: {path} ({why})", file.display(), n + 1);
            }
        }
    }
}
