//! Running the binary in tests: a command with the caller's own settings
//! removed, and a server started on a free port.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The `quire` binary with no inherited model, data or token settings.
pub fn quire() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_quire"));
    cmd.env_remove("QUIRE_BOOTSTRAP_TOKEN").env("QUIRE_LOG", "warn");
    // The caller's own model and data settings must not leak into the tests.
    for var in [
        "QUIRE_DATA",
        "QUIRE_DATABASE_URL",
        "QUIRE_TOKEN",
        "QUIRE_LLM_PROVIDER",
        "QUIRE_LLM_MODEL",
        "QUIRE_LLM_BASE_URL",
        "QUIRE_LLM_API_KEY",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "NO_COLOR",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs the binary to its end: (success, stdout, stderr).
pub fn run(args: &[&str]) -> (bool, String, String) {
    outcome(quire().args(args))
}

/// A fresh data directory with the demo site seeded in it.
pub fn seeded() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = run(&["seed", "--data", dir.path().to_str().unwrap()]);
    assert!(ok, "{err}");
    dir
}

/// Runs `cmd` to its end: whether it succeeded, its stdout and its stderr.
pub fn outcome(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// A running `quire serve`; killed when dropped.
pub struct Server {
    pub child: Child,
    pub addr: String,
    pub stdout: String,
    /// What it has logged on stderr since it started listening.
    pub log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Server {
    /// What the server has logged so far, for a failing assertion's message.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `quire serve` on a free port over `data`; answers once it listens,
/// with what it printed on stdout (the admin token on a first start).
pub fn start(data: &str, bootstrap: Option<&str>) -> Server {
    start_with(data, bootstrap, &[])
}

/// [`start`] with more environment variables.
pub fn start_with(data: &str, bootstrap: Option<&str>, envs: &[(&str, &str)]) -> Server {
    let mut cmd = quire();
    cmd.envs(envs.iter().copied());
    cmd.args(["serve", "--addr", "127.0.0.1:0", "--data", data]).stdout(Stdio::piped()).stderr(Stdio::piped());
    if let Some(token) = bootstrap {
        cmd.env("QUIRE_BOOTSTRAP_TOKEN", token);
    }
    let mut child = cmd.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    let addr = loop {
        assert!(Instant::now() < deadline, "server did not start");
        let line = lines.next().expect("server exited").unwrap();
        if let Some(rest) = line.split("listening on http://").nth(1) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let kept = log.clone();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let mut log = kept.lock().unwrap();
            log.push_str(&line);
            log.push('\n');
        }
    });
    let out = child.stdout.take().unwrap();
    // stdout is written before the listener starts: collect what arrives.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            if tx.send(line.unwrap_or_default()).is_err() {
                break;
            }
        }
    });
    let mut stdout = String::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_millis(300)) {
        stdout.push_str(&line);
        stdout.push('\n');
    }
    Server { child, addr, stdout, log }
}
