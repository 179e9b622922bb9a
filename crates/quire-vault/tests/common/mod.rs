//! The vault the tests work in.

#![allow(dead_code)]

use quire_vault::Vault;

/// A fresh, empty vault in a folder of its own (the folder goes with the
/// first value).
pub fn vault() -> (tempfile::TempDir, Vault) {
    let dir = tempfile::tempdir().unwrap();
    let vault = Vault::open(dir.path().join("vault")).unwrap();
    (dir, vault)
}

/// A vault holding these notes (path, text).
pub fn vault_of(notes: &[(&str, &str)]) -> (tempfile::TempDir, Vault) {
    let (dir, vault) = vault();
    for (path, text) in notes {
        vault.write(path, text, false).unwrap();
    }
    (dir, vault)
}
