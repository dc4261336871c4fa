//! Shared by the interop tests of the root package and of the CLI package (included with
//! `#[path]`): whether the external peers are installed, a bounded wait for a child, and peer
//! servers on loopback ports.
// Each test binary uses a part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A server child at a loopback URL, killed (by its PID, through `Child`) and reaped when
/// dropped.
pub struct PeerServer {
    pub child: Child,
    pub url: String,
}

impl Drop for PeerServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port that was free a moment ago (the listener is closed at once, so start one
/// peer at a time).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("local address").port()
}

/// Spawns `command` (which serves `http://127.0.0.1:{port}/mcp`; its stdio discarded) and waits
/// until the port accepts, at most `limit`.
pub fn serve_on_port(mut command: Command, port: u16, limit: Duration) -> PeerServer {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the peer server");
    let peer = PeerServer {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < limit, "the peer never listened");
        std::thread::sleep(Duration::from_millis(50));
    }
    peer
}

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

/// Spawns `command`, a server that binds a port of its own and prints `listening on URL` on
/// stderr, and waits at most `limit` for that line (stdin is held open: some peers exit when
/// it closes; the rest of stderr is passed through to the test's).
pub fn serve_announced(mut command: Command, limit: Duration) -> PeerServer {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the peer server");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            match line.strip_prefix("listening on ") {
                Some(url) => drop(tx.send(url.trim().to_owned())),
                None => eprintln!("peer: {line}"),
            }
        }
    });
    let mut peer = PeerServer {
        child,
        url: String::new(),
    };
    // Set once `peer` exists, so a peer that never announces is still killed on drop.
    peer.url = rx
        .recv_timeout(limit)
        .expect("the peer announced its URL in time");
    assert!(peer.url.starts_with("http://127.0.0.1:"), "{}", peer.url);
    peer
}
