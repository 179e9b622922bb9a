//! Embeds the migrations: writes `migrations.rs` into `OUT_DIR`, a list of
//! every `migrations/sqlite/<version>_<description>.sql` in version order,
//! and rebuilds the crate when one is added.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations/sqlite");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut found: Vec<(i64, String, String)> = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("migrations/sqlite is readable") {
        let path = entry.expect("a migration's entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let Some(stem) = name.strip_suffix(".sql") else { continue };
        let (version, description) = stem.split_once('_').expect("a migration is named <version>_<description>.sql");
        let version: i64 = version.parse().expect("a migration's version is a number");
        found.push((version, description.replace('_', " "), path.canonicalize().unwrap().display().to_string()));
    }
    found.sort();
    let mut out = String::from("/// Every migration: version, description, SQL; in version order.\n");
    out.push_str("pub(crate) const MIGRATIONS: &[(i64, &str, &str)] = &[\n");
    for (version, description, path) in found {
        writeln!(out, "    ({version}, {description:?}, include_str!({path:?})),").unwrap();
    }
    out.push_str("];\n");
    let target = Path::new(&std::env::var("OUT_DIR").unwrap()).join("migrations.rs");
    std::fs::write(target, out).unwrap();
}
