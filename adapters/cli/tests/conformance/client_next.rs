//! Conformance 0.2.0-alpha.12 runs its 7 non-auth 2026-07-28 client scenarios against
//! `mcp-sansio conformance-client` (`--spec-version 2026-07-28`: the suite sets
//! `MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28`, and the client speaks statelessly), one at a
//! time, each in its own process group under a watchdog; every expected check must be present
//! and SUCCESS (no FAILURE, no WARNING).
//! Needs the peers of scripts/install-peers (`source .ci-cache/env`): skipped locally without
//! them, a failure under `CI`.

use crate::conformance_suite;
use conformance_suite::NEXT;

fn run_scenario(scenario: &str, expected: &[&str]) {
    NEXT.run(scenario, expected);
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
