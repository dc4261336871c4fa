//! The official SDKs' fixture clients (tests/interop: TypeScript and Python) against our own
//! `mcp-sansio serve --stdio` and `mcp-sansio serve --http` (on loopback: Streamable HTTP, and
//! the HTTP+SSE pair through the SDKs' SSE client transports). Lives in the CLI package so that Cargo builds the binary first
//! and hands us its path (`CARGO_BIN_EXE_mcp-sansio`): it can never be missing here. Needs the
//! peers of scripts/install-peers (`source .ci-cache/env`); without them the tests skip with a
//! message, except under `CI`, where they fail.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use crate::harness;
use crate::http_fixture;
use harness::{finish, peers_ready};
use http_fixture::HttpFixture;

/// The clients check latencies (cancel, ping, log delivery): run one client at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Longest a single client run may take; the clients have their own 120 s watchdog.
const RUN_LIMIT: Duration = Duration::from_secs(180);

/// Small pages, so the clients' pagination checks see several of them.
const PAGE_SIZE: &str = "2";

/// The program (Node 22 or the venv's Python) from `.ci-cache/env`, or `None` (skip) outside CI.
fn peer(var: &str) -> Option<PathBuf> {
    if !peers_ready() {
        return None;
    }
    Some(PathBuf::from(
        std::env::var(var).unwrap_or_else(|_| panic!("{var} unset")),
    ))
}

fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop")
}

/// Runs a fixture client against `mcp-sansio serve --stdio` on each stdio driver (the poll
/// driver, the default, and the smol driver); every one of its checks must pass.
fn run_client(program: &Path, script: &str) {
    for driver in ["poll", "smol"] {
        run_client_on(program, script, driver);
    }
}

fn run_client_on(program: &Path, script: &str, driver: &str) {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let child = Command::new(program)
        .arg(interop_dir().join(script))
        .arg("--")
        .args([env!("CARGO_BIN_EXE_mcp-sansio"), "serve", "--stdio"])
        .env("MCP_SANSIO_PAGE_SIZE", PAGE_SIZE)
        .env("MCP_SANSIO_STDIO_DRIVER", driver)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", program.display()));
    let (success, output) = finish(child, RUN_LIMIT);
    let summary = output.lines().last().unwrap_or("");
    let clean = summary.ends_with(" passed, 0 failed") && !summary.starts_with("0 passed");
    assert!(
        success && clean,
        "{script} on the {driver} driver failed:\n{output}"
    );
}

#[test]
fn ts_sdk_client_passes_against_our_stdio_server() {
    let Some(node) = peer("MCP_NODE22") else {
        return;
    };
    run_client(&node, "ts/fixture_client.mjs");
}

#[test]
fn python_sdk_client_passes_against_our_stdio_server() {
    let Some(python) = peer("MCP_PYTHON") else {
        return;
    };
    run_client(&python, "py/fixture_client.py");
}

/// Runs a fixture client with `flag URL` against `mcp-sansio serve --http` on a loopback port
/// (`url_of` picks the Streamable or the HTTP+SSE URL) and returns its output once every check
/// it ran passed.
fn run_over_http(
    program: &Path,
    script: &str,
    flag: &str,
    url_of: fn(&HttpFixture) -> &str,
) -> String {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let server = HttpFixture::start(&[("MCP_SANSIO_PAGE_SIZE", PAGE_SIZE)]);
    let child = Command::new(program)
        .arg(interop_dir().join(script))
        .args([flag, url_of(&server)])
        .env("MCP_SANSIO_PAGE_SIZE", PAGE_SIZE)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", program.display()));
    let (success, output) = finish(child, RUN_LIMIT);
    let summary = output.lines().last().unwrap_or("");
    let clean = summary.ends_with(" passed, 0 failed") && !summary.starts_with("0 passed");
    assert!(success && clean, "{script} {flag} failed:\n{output}");
    output
}

/// Runs a fixture client in HTTP mode against `mcp-sansio serve --http` on a loopback port.
fn run_http_client(program: &Path, script: &str) {
    let output = run_over_http(program, script, "--url", |server| &server.url);
    assert!(
        output.contains("PASS sse-resume-test_reconnection"),
        "the resumption check did not run:\n{output}"
    );
}

#[test]
fn ts_sdk_client_passes_against_our_http_server() {
    let Some(node) = peer("MCP_NODE22") else {
        return;
    };
    run_http_client(&node, "ts/fixture_client.mjs");
}

#[test]
fn python_sdk_client_passes_against_our_http_server() {
    let Some(python) = peer("MCP_PYTHON") else {
        return;
    };
    run_http_client(&python, "py/fixture_client.py");
}

/// Runs a fixture client over the HTTP+SSE transport (the TS SDK's
/// `SSEClientTransport`, the Python SDK's `sse_client`) against `serve --http`'s `/sse`.
fn run_sse_client(program: &Path, script: &str) {
    let output = run_over_http(program, script, "--sse", |server| &server.sse_url);
    for check in [
        "PASS sse-transport-endpoint",
        "PASS tools-call-sampling",
        "PASS tools-call-elicitation",
        "PASS resources-updated",
    ] {
        assert!(output.contains(check), "{check} missing:\n{output}");
    }
}

#[test]
fn ts_sdk_sse_client_passes_against_our_sse_transport_endpoint() {
    let Some(node) = peer("MCP_NODE22") else {
        return;
    };
    run_sse_client(&node, "ts/fixture_client.mjs");
}

#[test]
fn python_sdk_sse_client_passes_against_our_sse_transport_endpoint() {
    let Some(python) = peer("MCP_PYTHON") else {
        return;
    };
    run_sse_client(&python, "py/fixture_client.py");
}
