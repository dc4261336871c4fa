//! Conformance 0.2.0-alpha.12 runs its 25 required `auth/*` client scenarios at 2026-07-28
//! (`--spec-version 2026-07-28`) against `mcp-sansio conformance-client`: OAuth in front of a
//! stateless endpoint, through the same authorizer as the stateful transports, plus the
//! revision's additions (SEP-837 `application_type`, RFC 9207 `iss` checks, metadata issuer
//! validation, re-registration when the authorization server moves, SEP-2207
//! `offline_access`). Every check the scenario makes must be SUCCESS (no FAILURE, no WARNING),
//! each listed one present. Needs the peers of scripts/install-peers: skipped locally
//! without them, a failure under `CI`.

#[path = "../../../tests/interop/harness.rs"]
#[allow(dead_code)] // `finish` is for tests that read a child's stdout.
mod harness;
use harness::peers_ready;

#[path = "support/conformance_suite.rs"]
mod conformance_suite;
use conformance_suite::{our_client, run_and_judge, SuiteRun};

fn run_scenario(scenario: &str, expected: &[&str]) {
    if !peers_ready() {
        return;
    }
    let command = our_client();
    let run = SuiteRun {
        suite_var: "MCP_CONFORMANCE_NEXT",
        scenario,
        command: &command,
        extra_args: &["--spec-version", "2026-07-28"],
    };
    run_and_judge(&run, expected);
}

#[test]
fn metadata_default() {
    run_scenario(
        "auth/metadata-default",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
            "resource-parameter-in-authorization",
            "resource-parameter-in-token",
            "resource-parameter-valid-uri",
            "resource-parameter-consistency",
            "resource-parameter-matches-prm",
        ],
    );
}

#[test]
fn metadata_var1() {
    run_scenario(
        "auth/metadata-var1",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
            "resource-parameter-in-authorization",
            "resource-parameter-in-token",
            "resource-parameter-valid-uri",
            "resource-parameter-consistency",
            "resource-parameter-matches-prm",
        ],
    );
}

#[test]
fn metadata_var2() {
    run_scenario(
        "auth/metadata-var2",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
            "resource-parameter-in-authorization",
            "resource-parameter-in-token",
            "resource-parameter-valid-uri",
            "resource-parameter-consistency",
            "resource-parameter-matches-prm",
        ],
    );
}

#[test]
fn metadata_var3() {
    run_scenario(
        "auth/metadata-var3",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
            "resource-parameter-in-authorization",
            "resource-parameter-in-token",
            "resource-parameter-valid-uri",
            "resource-parameter-consistency",
            "resource-parameter-matches-prm",
        ],
    );
}

#[test]
fn basic_cimd() {
    run_scenario(
        "auth/basic-cimd",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "cimd-client-id-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    );
}

#[test]
fn scope_from_www_authenticate() {
    run_scenario(
        "auth/scope-from-www-authenticate",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "scope-from-www-authenticate",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    );
}

#[test]
fn scope_from_scopes_supported() {
    run_scenario(
        "auth/scope-from-scopes-supported",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "scope-from-scopes-supported",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    );
}

#[test]
fn scope_omitted_when_undefined() {
    run_scenario(
        "auth/scope-omitted-when-undefined",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "scope-omitted-when-undefined",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    );
}

#[test]
fn scope_step_up() {
    run_scenario(
        "auth/scope-step-up",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "scope-step-up-initial",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
            "scope-step-up-escalation",
            "sep-2350-scope-union-on-reauth",
        ],
    );
}

#[test]
fn scope_retry_limit() {
    run_scenario(
        "auth/scope-retry-limit",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "scope-retry-limit",
        ],
    );
}

#[test]
fn token_endpoint_auth_basic() {
    run_scenario(
        "auth/token-endpoint-auth-basic",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "token-endpoint-auth-method",
            "valid-bearer-token",
            "resource-parameter-in-authorization",
            "resource-parameter-in-token",
            "resource-parameter-valid-uri",
            "resource-parameter-consistency",
            "resource-parameter-matches-prm",
        ],
    );
}

#[test]
fn token_endpoint_auth_post() {
    run_scenario(
        "auth/token-endpoint-auth-post",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "token-endpoint-auth-method",
            "valid-bearer-token",
            "resource-parameter-in-authorization",
            "resource-parameter-in-token",
            "resource-parameter-valid-uri",
            "resource-parameter-consistency",
            "resource-parameter-matches-prm",
        ],
    );
}

#[test]
fn token_endpoint_auth_none() {
    run_scenario(
        "auth/token-endpoint-auth-none",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "token-endpoint-auth-method",
            "valid-bearer-token",
            "resource-parameter-in-authorization",
            "resource-parameter-in-token",
            "resource-parameter-valid-uri",
            "resource-parameter-consistency",
            "resource-parameter-matches-prm",
        ],
    );
}

#[test]
fn pre_registration() {
    run_scenario(
        "auth/pre-registration",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "pre-registration-auth",
            "valid-bearer-token",
        ],
    );
}

#[test]
fn resource_mismatch() {
    run_scenario(
        "auth/resource-mismatch",
        &["prm-pathbased-requested", "resource-mismatch-rejected"],
    );
}

#[test]
fn offline_access_scope() {
    run_scenario(
        "auth/offline-access-scope",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "sep-2207-offline-access-requested",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    );
}

#[test]
fn offline_access_not_supported() {
    run_scenario(
        "auth/offline-access-not-supported",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "sep-2207-offline-access-not-requested",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
        ],
    );
}

#[test]
fn authorization_server_migration() {
    run_scenario(
        "auth/authorization-server-migration",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
            "sep-2352-reregister-on-as-change",
            "sep-2352-no-reuse-on-as-change",
            "sep-2352-no-cross-as-credential-reuse",
        ],
    );
}

#[test]
fn iss_supported() {
    run_scenario(
        "auth/iss-supported",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
            "sep-2468-client-compare-iss-supported",
        ],
    );
}

#[test]
fn iss_not_advertised() {
    run_scenario(
        "auth/iss-not-advertised",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "token-request",
            "pkce-code-verifier-sent",
            "pkce-verifier-matches-challenge",
            "valid-bearer-token",
            "sep-2468-client-proceed-no-iss",
        ],
    );
}

#[test]
fn iss_supported_missing() {
    run_scenario(
        "auth/iss-supported-missing",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "sep-2468-client-reject-missing-iss",
        ],
    );
}

#[test]
fn iss_wrong_issuer() {
    run_scenario(
        "auth/iss-wrong-issuer",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "sep-2468-client-compare-iss-supported",
        ],
    );
}

#[test]
fn iss_unexpected() {
    run_scenario(
        "auth/iss-unexpected",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "sep-2468-client-compare-iss-unadvertised",
        ],
    );
}

#[test]
fn iss_normalized() {
    run_scenario(
        "auth/iss-normalized",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "sep-837-application-type-present",
            "authorization-request",
            "pkce-code-challenge-sent",
            "pkce-s256-method-used",
            "sep-2468-client-no-normalization",
        ],
    );
}

#[test]
fn metadata_issuer_mismatch() {
    run_scenario(
        "auth/metadata-issuer-mismatch",
        &[
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "sep-2468-client-validate-metadata-issuer",
        ],
    );
}
