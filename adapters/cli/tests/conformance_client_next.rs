//! Conformance 0.2.0-alpha.12 runs its 7 non-auth 2026-07-28 client scenarios against
//! `mcp-sansio conformance-client` (`--spec-version 2026-07-28`: the suite sets
//! `MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28`, and the client speaks statelessly), one at a
//! time, each in its own process group under a watchdog; every expected check must be present
//! and SUCCESS (no FAILURE, no WARNING).
//! Needs the peers of scripts/install-peers (`source .ci-cache/env`): skipped locally without
//! them, a failure under `CI`.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "../../../tests/interop/harness.rs"]
#[allow(dead_code)] // `finish` is for tests that read a child's stdout.
mod harness;
use harness::peers_ready;

/// The machine is shared: one scenario at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Longest one scenario run may take (the suite's own client timeout is 30 s).
const RUN_LIMIT: Duration = Duration::from_secs(90);

fn run_scenario(scenario: &str, expected: &[&str]) {
    if !peers_ready() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let node = std::env::var("MCP_NODE22").expect("MCP_NODE22");
    let suite = std::env::var("MCP_CONFORMANCE_NEXT").expect("MCP_CONFORMANCE_NEXT");
    let out = std::env::temp_dir().join(format!(
        "mcp-sansio-conformance-next-{}-{scenario}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&out);
    let preload =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/listen_loopback.cjs");
    let command = format!("{} conformance-client", env!("CARGO_BIN_EXE_mcp-sansio"));
    let mut child = Command::new(node)
        .arg(suite)
        .args([
            "client",
            "--command",
            &command,
            "--scenario",
            scenario,
            "--spec-version",
            "2026-07-28",
            "-o",
        ])
        .arg(&out)
        .env("NODE_OPTIONS", format!("--require {}", preload.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("spawn the conformance suite");
    let group = child.id();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if started.elapsed() > RUN_LIMIT {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // The suite leaves grandchildren on timeout: end the whole group, by its id. The `--` is
    // load-bearing: procps-ng 4.0's kill reads `-KILL -<pgid>` as `kill(-1, SIGKILL)`, which
    // kills every process the user may signal (it took down the machine's process supervisor).
    let _ = Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{group}")])
        .stderr(Stdio::null())
        .status();
    let output = child.wait_with_output().expect("collect output");
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(status.is_some(), "{scenario}: timed out\n{log}");
    let checks = read_checks(&out, scenario);
    let _ = std::fs::remove_dir_all(&out);
    for check in &checks {
        let status = check["status"].as_str().unwrap_or("");
        assert!(
            !matches!(status, "FAILURE" | "WARNING"),
            "{scenario}: {check}\n{log}"
        );
    }
    for id in expected {
        let found = checks
            .iter()
            .any(|c| c["id"] == *id && c["status"] == "SUCCESS");
        assert!(found, "{scenario}: no SUCCESS check `{id}`\n{log}");
    }
    assert!(
        status.unwrap().success(),
        "{scenario}: the suite failed\n{log}"
    );
}

/// The checks of the single run under `out` (`<scenario>-<timestamp>/checks.json`).
fn read_checks(out: &Path, scenario: &str) -> Vec<Value> {
    let runs: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap_or_else(|e| panic!("{scenario}: no results in {}: {e}", out.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(runs.len(), 1, "{scenario}: {runs:?}");
    let text = std::fs::read_to_string(runs[0].join("checks.json")).expect("checks.json");
    match serde_json::from_str(&text).expect("checks.json is JSON") {
        Value::Array(checks) => checks,
        other => panic!("{scenario}: checks.json is not an array: {other}"),
    }
}

#[test]
fn tools_call() {
    run_scenario("tools_call", &["tool-add-numbers"]);
}

#[test]
fn request_metadata() {
    run_scenario(
        "request-metadata",
        &[
            "sep-2575-http-client-sends-version-header",
            "sep-2575-client-populates-meta",
            "sep-2575-client-sends-client-info",
            "sep-2575-http-version-header-matches-meta",
            "sep-2575-client-declares-elicitation-capability",
            "sep-2575-client-retry-supported-version",
        ],
    );
}

#[test]
fn sep_2322_client_request_state() {
    run_scenario(
        "sep-2322-client-request-state",
        &[
            "sep-2322-client-request-state-echoed",
            "sep-2322-client-jsonrpc-id-different",
            "sep-2322-client-no-state-omitted",
            "sep-2322-client-parallel-isolation",
            "sep-2322-default-result-type-complete",
        ],
    );
}

#[test]
fn http_standard_headers() {
    run_scenario(
        "http-standard-headers",
        &["sep-2243-client-includes-standard-headers"],
    );
}

#[test]
fn http_custom_headers() {
    run_scenario(
        "http-custom-headers",
        &[
            "sep-2243-client-supports-custom-headers",
            "sep-2243-client-mirrors-designated-params",
            "sep-2243-client-encode-values",
            "sep-2243-client-base64-unsafe",
            "sep-2243-client-omit-null",
        ],
    );
}

#[test]
fn http_invalid_tool_headers() {
    run_scenario(
        "http-invalid-tool-headers",
        &["sep-2243-client-reject-invalid-tool"],
    );
}

#[test]
fn json_schema_ref_no_deref() {
    run_scenario(
        "json-schema-ref-no-deref",
        &["sep-2106-no-network-ref-deref"],
    );
}
