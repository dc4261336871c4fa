//! The official conformance suite (0.1.16) runs its 4 core client scenarios against
//! `mcp-sansio conformance-client`, one at a time, each in its own process group under a
//! watchdog; every expected check must be present and SUCCESS (no FAILURE, no WARNING).
//! Needs the peers of scripts/install-peers (`source .ci-cache/env`): skipped locally without
//! them, a failure under `CI`.

use crate::conformance_suite;
use conformance_suite::CLASSIC;

fn run_scenario(scenario: &str, expected: &[&str]) {
    CLASSIC.run(scenario, expected);
}

#[test]
fn initialize() {
    run_scenario("initialize", &["mcp-client-initialization"]);
}

#[test]
fn tools_call() {
    run_scenario("tools_call", &["tool-add-numbers"]);
}

#[test]
fn elicitation_sep1034_client_defaults() {
    run_scenario(
        "elicitation-sep1034-client-defaults",
        &[
            "client-elicitation-sep1034-string-default",
            "client-elicitation-sep1034-integer-default",
            "client-elicitation-sep1034-number-default",
            "client-elicitation-sep1034-enum-default",
            "client-elicitation-sep1034-boolean-default",
        ],
    );
}

#[test]
fn sse_retry() {
    run_scenario(
        "sse-retry",
        &[
            "client-sse-graceful-reconnect",
            "client-sse-retry-timing",
            "client-sse-last-event-id",
        ],
    );
}
