//! Shared by the interop tests of the root package and of the CLI package (included with
//! `#[path]`): whether the external peers are installed, and a bounded wait for a child.

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::time::{Duration, Instant};

/// Whether scripts/install-peers ran and `.ci-cache/env` was sourced. Outside CI a missing
/// install skips the test with a message; under `CI` it fails.
pub fn peers_ready() -> bool {
    if std::env::var("MCP_PEERS_READY").as_deref() == Ok("1") {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must run scripts/install-peers and source .ci-cache/env (MCP_PEERS_READY != 1)"
    );
    eprintln!("skipped: interop peers not installed (scripts/install-peers; source .ci-cache/env)");
    false
}

/// Waits for `child` up to `limit`, killing it past that; returns its success and stdout.
pub fn finish(mut child: Child, limit: Duration) -> (bool, String) {
    let stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stdout).lines() {
            text.push_str(&line.unwrap_or_default());
            text.push('\n');
        }
        text
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for child") {
            break Some(status);
        }
        if started.elapsed() > limit {
            child.kill().expect("kill overdue child");
            child.wait().expect("reap killed child");
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = reader.join().expect("stdout reader");
    (status.is_some_and(|s| s.success()), text)
}
