//! The official conformance suite (0.1.16) runs its 22 `auth/*` client scenarios against
//! `mcp-sansio conformance-client` (OAuth through the HTTP adapter's authorizer and the core
//! `AuthFlow`), one at a time, each in its own process group under a watchdog; every expected
//! check must be present and SUCCESS (no FAILURE, no WARNING), and the suite must pass
//! (`scope-retry-limit` and `resource-mismatch` let the client exit non-zero).
//! Needs the peers of scripts/install-peers (`source .ci-cache/env`): skipped locally without
//! them, a failure under `CI`.

use crate::conformance_suite;
use conformance_suite::CLASSIC;

fn run_scenario(scenario: &str, expected: &[&str]) {
    CLASSIC.run(scenario, expected);
}

/// The checks of every authorization-code scenario with dynamic registration.
const CODE_FLOW: [&str; 9] = [
    "authorization-server-metadata",
    "client-registration",
    "authorization-request",
    "token-request",
    "pkce-code-challenge-sent",
    "pkce-s256-method-used",
    "pkce-code-verifier-sent",
    "pkce-verifier-matches-challenge",
    "valid-bearer-token",
];

fn with_code_flow(extra: &[&'static str]) -> Vec<&'static str> {
    CODE_FLOW.iter().chain(extra).copied().collect()
}

#[test]
fn metadata_default() {
    run_scenario(
        "auth/metadata-default",
        &with_code_flow(&["prm-pathbased-requested"]),
    );
}

#[test]
fn metadata_var1() {
    run_scenario(
        "auth/metadata-var1",
        &with_code_flow(&["prm-pathbased-requested"]),
    );
}

#[test]
fn metadata_var2() {
    run_scenario(
        "auth/metadata-var2",
        &with_code_flow(&["prm-pathbased-requested"]),
    );
}

#[test]
fn metadata_var3() {
    run_scenario(
        "auth/metadata-var3",
        &with_code_flow(&["prm-pathbased-requested"]),
    );
}

#[test]
fn basic_cimd() {
    run_scenario(
        "auth/basic-cimd",
        &[
            "cimd-client-id-used",
            "authorization-request",
            "token-request",
            "valid-bearer-token",
        ],
    );
}

#[test]
fn scope_from_www_authenticate() {
    run_scenario(
        "auth/scope-from-www-authenticate",
        &with_code_flow(&["scope-from-www-authenticate"]),
    );
}

#[test]
fn scope_from_scopes_supported() {
    run_scenario(
        "auth/scope-from-scopes-supported",
        &with_code_flow(&["scope-from-scopes-supported"]),
    );
}

#[test]
fn scope_omitted_when_undefined() {
    run_scenario(
        "auth/scope-omitted-when-undefined",
        &with_code_flow(&["scope-omitted-when-undefined"]),
    );
}

#[test]
fn scope_step_up() {
    run_scenario(
        "auth/scope-step-up",
        &with_code_flow(&["scope-step-up-initial", "scope-step-up-escalation"]),
    );
}

#[test]
fn scope_retry_limit() {
    run_scenario(
        "auth/scope-retry-limit",
        &[
            "scope-retry-limit",
            "authorization-request",
            "token-request",
        ],
    );
}

/// `token-endpoint-auth-method` and the four RFC 8707 `resource` checks.
const AUTH_METHOD: [&str; 5] = [
    "token-endpoint-auth-method",
    "resource-parameter-consistency",
    "resource-parameter-in-authorization",
    "resource-parameter-in-token",
    "resource-parameter-valid-uri",
];

#[test]
fn token_endpoint_auth_basic() {
    run_scenario(
        "auth/token-endpoint-auth-basic",
        &with_code_flow(&AUTH_METHOD),
    );
}

#[test]
fn token_endpoint_auth_post() {
    run_scenario(
        "auth/token-endpoint-auth-post",
        &with_code_flow(&AUTH_METHOD),
    );
}

#[test]
fn token_endpoint_auth_none() {
    run_scenario(
        "auth/token-endpoint-auth-none",
        &with_code_flow(&AUTH_METHOD),
    );
}

#[test]
fn pre_registration() {
    run_scenario(
        "auth/pre-registration",
        &[
            "pre-registration-auth",
            "authorization-request",
            "token-request",
            "valid-bearer-token",
        ],
    );
}

#[test]
fn oauth_metadata_backcompat_2025_03_26() {
    run_scenario("auth/2025-03-26-oauth-metadata-backcompat", &CODE_FLOW);
}

#[test]
fn oauth_endpoint_fallback_2025_03_26() {
    run_scenario(
        "auth/2025-03-26-oauth-endpoint-fallback",
        &[
            "client-registration",
            "authorization-request",
            "token-request",
            "valid-bearer-token",
        ],
    );
}

#[test]
fn resource_mismatch() {
    run_scenario("auth/resource-mismatch", &["resource-mismatch-rejected"]);
}

#[test]
fn offline_access_scope() {
    run_scenario(
        "auth/offline-access-scope",
        &[
            "sep-2207-offline-access-requested",
            "token-request",
            "valid-bearer-token",
        ],
    );
}

#[test]
fn offline_access_not_supported() {
    run_scenario(
        "auth/offline-access-not-supported",
        &with_code_flow(&["sep-2207-offline-access-not-requested"]),
    );
}

#[test]
fn client_credentials_jwt() {
    run_scenario(
        "auth/client-credentials-jwt",
        &[
            "client-credentials-jwt-verified",
            "token-request",
            "valid-bearer-token",
        ],
    );
}

#[test]
fn client_credentials_basic() {
    run_scenario(
        "auth/client-credentials-basic",
        &[
            "client-credentials-basic-auth",
            "token-request",
            "valid-bearer-token",
        ],
    );
}

#[test]
fn cross_app_access_complete_flow() {
    run_scenario(
        "auth/cross-app-access-complete-flow",
        &[
            "complete-flow-token-exchange",
            "complete-flow-jwt-bearer",
            "valid-bearer-token",
        ],
    );
}

/// `mcp-sansio client URL tools list` with no OAuth flag: discovery, dynamic registration and
/// the no-browser code step happen on the 401, as in `conformance-client`.
#[test]
fn client_url_command_authorizes_on_its_own() {
    // The suite appends the URL last; the shell puts it before the operation.
    let command = format!(
        "sh -c 'exec {} client \"$0\" tools list'",
        env!("CARGO_BIN_EXE_mcp-sansio")
    );
    CLASSIC.run_command(
        "auth/metadata-default",
        &command,
        &with_code_flow(&["prm-pathbased-requested"]),
    );
}
