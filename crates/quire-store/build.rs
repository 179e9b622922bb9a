//! Embeds the migrations: writes `migrations.rs` into `OUT_DIR`, the list of
//! every `migrations/<sqlite|postgres>/<version>_<description>.sql` in
//! version order, one per database, and rebuilds the crate when one is added.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let mut out = String::new();
    for (name, folder) in [("SQLITE", "sqlite"), ("POSTGRES", "postgres")] {
        list(&mut out, name, folder);
    }
    let target = Path::new(&std::env::var("OUT_DIR").unwrap()).join("migrations.rs");
    std::fs::write(target, out).unwrap();
}

fn list(out: &mut String, name: &str, folder: &str) {
    // Read when the script runs, not when it was compiled: one compiled
    // script may serve checkouts in other places (a shared target folder).
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo names the crate's folder");
    let dir = Path::new(&manifest).join("../../migrations").join(folder);
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut found: Vec<(i64, String, String)> = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the migrations folder is readable") {
        let path = entry.expect("a migration's entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let Some(stem) = name.strip_suffix(".sql") else { continue };
        let (version, description) = stem.split_once('_').expect("a migration is named <version>_<description>.sql");
        let version: i64 = version.parse().expect("a migration's version is a number");
        found.push((version, description.replace('_', " "), path.canonicalize().unwrap().display().to_string()));
    }
    found.sort();
    writeln!(out, "/// Every migration of {folder}: version, description, SQL; in version order.").unwrap();
    writeln!(out, "pub(crate) const {name}: &[(i64, &str, &str)] = &[").unwrap();
    for (version, description, path) in found {
        writeln!(out, "    ({version}, {description:?}, include_str!({path:?})),").unwrap();
    }
    out.push_str("];\n");
}
