//! Interop with the official MCP SDKs (see tests/interop/README.md). Runs the SDK-written fixture
//! clients (TypeScript and Python) against the TypeScript reference fixture server, and checks
//! that the other external peers start. The same clients against our own `mcp-sansio serve
//! --stdio` run in adapters/cli/tests/interop/sdk.rs, where Cargo provides the binary. Needs the
//! peers of scripts/install-peers (`.ci-cache/env`).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::harness::{finish, peers_ready};
use crate::SERIAL;

/// Longest a single client run may take; the clients have their own 120 s watchdog.
const RUN_LIMIT: Duration = Duration::from_secs(180);

/// Page size handed to the servers so that the clients' pagination checks see several pages.
const PAGE_SIZE: &str = "2";

struct Peers {
    node22: PathBuf,
    python: PathBuf,
    server_everything: PathBuf,
}

/// The installed peers, or `None` (test skipped) outside CI when they are not installed.
fn peers() -> Option<Peers> {
    if !peers_ready() {
        return None;
    }
    let path =
        |var: &str| PathBuf::from(std::env::var(var).unwrap_or_else(|_| panic!("{var} unset")));
    Some(Peers {
        node22: path("MCP_NODE22"),
        python: path("MCP_PYTHON"),
        server_everything: path("MCP_SERVER_EVERYTHING"),
    })
}

fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop")
}

/// Runs a fixture client (`program script`) against `server` and asserts it reports no failure.
fn run_client(program: &Path, script: &str, server: &[&str]) {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let child = Command::new(program)
        .arg(interop_dir().join(script))
        .arg("--")
        .args(server)
        .env("MCP_SANSIO_PAGE_SIZE", PAGE_SIZE)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", program.display()));
    let (success, output) = finish(child, RUN_LIMIT);
    let summary = output.lines().last().unwrap_or("");
    let clean = summary.ends_with(" passed, 0 failed") && !summary.starts_with("0 passed");
    assert!(
        success && clean,
        "{script} against {server:?} failed:\n{output}"
    );
}

fn reference_server(peers: &Peers) -> Vec<String> {
    let script = interop_dir().join("ts/reference_fixture_server.mjs");
    vec![
        peers.node22.display().to_string(),
        script.display().to_string(),
    ]
}

fn as_strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[test]
fn ts_sdk_client_passes_against_the_ts_reference_fixture() {
    let Some(peers) = peers() else { return };
    let server = reference_server(&peers);
    run_client(&peers.node22, "ts/fixture_client.mjs", &as_strs(&server));
}

#[test]
fn python_sdk_client_passes_against_the_ts_reference_fixture() {
    let Some(peers) = peers() else { return };
    let server = reference_server(&peers);
    run_client(&peers.python, "py/fixture_client.py", &as_strs(&server));
}

#[test]
fn python_sdk_server_serves_the_python_sdk_client() {
    let Some(peers) = peers() else { return };
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let child = Command::new(&peers.python)
        .arg(interop_dir().join("py/sdk_server_smoke.py"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the smoke check");
    let (success, output) = finish(child, RUN_LIMIT);
    assert!(
        success && output.ends_with(" passed, 0 failed\n"),
        "smoke check failed:\n{output}"
    );
}

#[test]
fn server_everything_answers_initialize_over_stdio() {
    let Some(peers) = peers() else { return };
    let mut child = Command::new(&peers.node22)
        .arg(&peers.server_everything)
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn server-everything");
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"interop","version":"0"}}}"#;
    let mut stdin = child.stdin.take().expect("piped stdin");
    writeln!(stdin, "{initialize}").expect("write initialize");
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().expect("piped stdout");
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_default();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let reply: serde_json::Value =
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    assert_eq!(reply["id"], 1, "{reply}");
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
    assert!(reply["result"]["serverInfo"]["name"].is_string(), "{reply}");
}
