//! The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16, installed by
//! scripts/install-peers) against `mcp-sansio serve --http` on a loopback port: every server
//! scenario, active and pending (32), must pass with no FAILURE and no WARNING check, and
//! `server-sse-polling` must really exercise SEP-1699 (priming event, retry, resume).
//! Skips without the peers locally; fails under `CI`.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::harness;
use crate::http_fixture;
use crate::server_results;
use harness::{finish, peers_ready};
use http_fixture::HttpFixture;
use server_results::{read_results, scratch_dir};

/// The whole suite takes ~20 s; this bounds a hang.
const SUITE_LIMIT: Duration = Duration::from_secs(300);
/// Active (30) + pending (2) server scenarios of 0.1.16.
const SCENARIOS: usize = 32;

fn status_of<'a>(checks: &'a [Value], id: &str) -> Option<&'a str> {
    checks
        .iter()
        .find(|c| c["id"] == id)
        .and_then(|c| c["status"].as_str())
}

#[test]
fn every_conformance_server_scenario_passes_against_serve_http() {
    if !peers_ready() {
        return;
    }
    let node = std::env::var("MCP_NODE22").expect("MCP_NODE22");
    let suite = std::env::var("MCP_CONFORMANCE").expect("MCP_CONFORMANCE");
    let fixture = HttpFixture::start(&[]);
    let dir = scratch_dir("server");
    let child = Command::new(node)
        .arg(suite)
        .args(["server", "--url", &fixture.url, "--suite", "all", "-o"])
        .arg(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the conformance suite");
    let (exit_ok, output) = finish(child, SUITE_LIMIT);
    let results = read_results(&dir);
    let mut failures = Vec::new();
    for (scenario, checks) in &results {
        let count = |status: &str| checks.iter().filter(|c| c["status"] == status).count();
        let (ok, bad, warn) = (count("SUCCESS"), count("FAILURE"), count("WARNING"));
        let verdict = if bad == 0 && warn == 0 && ok > 0 {
            "PASS"
        } else {
            "FAIL"
        };
        println!("{verdict} {scenario}: {ok} passed, {bad} failed, {warn} warnings");
        if verdict == "FAIL" {
            let bad: Vec<String> = checks
                .iter()
                .filter(|c| c["status"] == "FAILURE" || c["status"] == "WARNING")
                .map(|c| format!("{} ({}): {}", c["id"], c["status"], c["errorMessage"]))
                .collect();
            failures.push(format!("{scenario}: {bad:?}"));
        }
    }
    let polling = results
        .get("server-sse-polling")
        .expect("server-sse-polling ran");
    for id in [
        "server-sse-priming-event",
        "server-sse-retry-field",
        "server-sse-disconnect-resume",
    ] {
        assert_eq!(
            status_of(polling, id),
            Some("SUCCESS"),
            "{id} in server-sse-polling: {polling:#?}"
        );
    }
    assert!(
        failures.is_empty(),
        "failing scenarios:\n{}\n\nsuite output:\n{output}",
        failures.join("\n")
    );
    assert_eq!(
        results.len(),
        SCENARIOS,
        "scenarios with results: {:?}\n{output}",
        results.keys()
    );
    assert!(exit_ok, "the suite exited non-zero:\n{output}");
    let _ = std::fs::remove_dir_all(&dir);
}
