//! Sign-in links printed by `quire user create` and `quire user link` name
//! where the server is reached: `public_url`, else the configured `addr`;
//! with neither, the command says the address is unknown instead of
//! guessing one.

mod support;
use support::*;

/// Runs `quire user ...` with only `envs` of the address settings.
fn user(data: &str, envs: &[(&str, &str)], args: &[&str]) -> (String, String) {
    let out = quire()
        .env_remove("QUIRE_ADDR")
        .env_remove("QUIRE_PUBLIC_URL")
        .env_remove("QUIRE_CONFIG")
        .envs(envs.iter().copied())
        .arg("user")
        .args(args)
        .args(["--data", data])
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    (stdout, stderr.into_owned())
}

/// The link `quire user create` printed.
fn created_link(data: &str, envs: &[(&str, &str)], email: &str) -> (String, String) {
    let (out, err) = user(data, envs, &["create", "--email", email, "--group", "editor"]);
    let line = out.lines().find(|l| l.starts_with("sign-in link")).unwrap_or_else(|| panic!("no link: {out}"));
    (line.rsplit(' ').next().unwrap().to_string(), err)
}

#[test]
fn sign_in_links_name_the_configured_address_or_say_it_is_unknown() {
    let dir = seeded();
    let data = dir.path().to_str().unwrap();

    // Neither set: no made-up port, and the command says why.
    let (link, note) = created_link(data, &[], "a@example.org");
    assert!(link.starts_with("/sign-in/link/"), "{link}");
    assert!(note.contains("address is not configured") && note.contains("public_url"), "{note}");

    let (link, note) = created_link(data, &[("QUIRE_ADDR", "127.0.0.1:9137")], "b@example.org");
    assert!(link.starts_with("http://127.0.0.1:9137/sign-in/link/"), "{link}");
    assert!(!note.contains("note:"), "{note}");

    let both = [("QUIRE_ADDR", "127.0.0.1:9137"), ("QUIRE_PUBLIC_URL", "https://cms.example.com/")];
    let (link, _) = created_link(data, &both, "c@example.org");
    assert!(link.starts_with("https://cms.example.com/sign-in/link/"), "{link}");

    // `user link` too, with the address from the configuration file; one
    // that listens everywhere names no host people could use.
    let config = dir.path().join("quire.toml");
    std::fs::write(&config, "addr = \"0.0.0.0:9138\"\n").unwrap();
    let (out, note) = user(data, &[("QUIRE_CONFIG", config.to_str().unwrap())], &["link", "a@example.org"]);
    assert!(out.trim().starts_with("http://localhost:9138/sign-in/link/"), "{out}");
    assert!(note.contains("every address") && note.contains("public_url"), "{note}");
}
