//! Conformance 0.2.0-alpha.12 runs its 25 required `auth/*` client scenarios at 2026-07-28
//! (`--spec-version 2026-07-28`) against `mcp-sansio conformance-client`: OAuth in front of a
//! stateless endpoint, through the same authorizer as the stateful transports, plus the
//! revision's additions (SEP-837 `application_type`, RFC 9207 `iss` checks, metadata issuer
//! validation, re-registration when the authorization server moves, SEP-2207
//! `offline_access`). Every check the scenario makes must be SUCCESS (no FAILURE, no WARNING),
//! each listed one present. Needs the peers of scripts/install-peers: skipped locally
//! without them, a failure under `CI`.

use crate::conformance_suite;
use conformance_suite::NEXT;

fn run_scenario(scenario: &str, expected: &[&str]) {
    NEXT.run(scenario, expected);
}

/// The checks of a completed authorization-code flow (discovery, PKCE, token, Bearer).
const CODE_FLOW: [&str; 9] = [
    "prm-pathbased-requested",
    "authorization-server-metadata",
    "authorization-request",
    "pkce-code-challenge-sent",
    "pkce-s256-method-used",
    "token-request",
    "pkce-code-verifier-sent",
    "pkce-verifier-matches-challenge",
    "valid-bearer-token",
];

/// The checks of dynamic registration at 2026-07-28 (SEP-837 `application_type` included).
const REGISTRATION: [&str; 2] = ["client-registration", "sep-837-application-type-present"];

/// The checks up to the authorization request, for scenarios that must stop there (an `iss`
/// to refuse).
const UP_TO_AUTHORIZATION: [&str; 7] = [
    "prm-pathbased-requested",
    "authorization-server-metadata",
    "client-registration",
    "sep-837-application-type-present",
    "authorization-request",
    "pkce-code-challenge-sent",
    "pkce-s256-method-used",
];

/// The RFC 8707 `resource` checks of the metadata and token-endpoint scenarios.
const RESOURCE_PARAMETER: [&str; 5] = [
    "resource-parameter-in-authorization",
    "resource-parameter-in-token",
    "resource-parameter-valid-uri",
    "resource-parameter-consistency",
    "resource-parameter-matches-prm",
];

/// A completed flow with dynamic registration, then `extra`.
fn registered_flow(extra: &[&'static str]) -> Vec<&'static str> {
    with(&with(&CODE_FLOW, &REGISTRATION), extra)
}

/// `base` followed by `extra`.
fn with(base: &[&'static str], extra: &[&'static str]) -> Vec<&'static str> {
    base.iter().chain(extra).copied().collect()
}

#[test]
fn metadata_default() {
    run_scenario(
        "auth/metadata-default",
        &registered_flow(&RESOURCE_PARAMETER),
    );
}

#[test]
fn metadata_var1() {
    run_scenario("auth/metadata-var1", &registered_flow(&RESOURCE_PARAMETER));
}

#[test]
fn metadata_var2() {
    run_scenario("auth/metadata-var2", &registered_flow(&RESOURCE_PARAMETER));
}

#[test]
fn metadata_var3() {
    run_scenario("auth/metadata-var3", &registered_flow(&RESOURCE_PARAMETER));
}

#[test]
fn basic_cimd() {
    run_scenario(
        "auth/basic-cimd",
        &with(&CODE_FLOW, &["cimd-client-id-used"]),
    );
}

#[test]
fn scope_from_www_authenticate() {
    run_scenario(
        "auth/scope-from-www-authenticate",
        &registered_flow(&["scope-from-www-authenticate"]),
    );
}

#[test]
fn scope_from_scopes_supported() {
    run_scenario(
        "auth/scope-from-scopes-supported",
        &registered_flow(&["scope-from-scopes-supported"]),
    );
}

#[test]
fn scope_omitted_when_undefined() {
    run_scenario(
        "auth/scope-omitted-when-undefined",
        &registered_flow(&["scope-omitted-when-undefined"]),
    );
}

#[test]
fn scope_step_up() {
    run_scenario(
        "auth/scope-step-up",
        &registered_flow(&[
            "scope-step-up-initial",
            "scope-step-up-escalation",
            "sep-2350-scope-union-on-reauth",
        ]),
    );
}

#[test]
fn scope_retry_limit() {
    run_scenario(
        "auth/scope-retry-limit",
        &with(
            &UP_TO_AUTHORIZATION,
            &[
                "token-request",
                "pkce-code-verifier-sent",
                "pkce-verifier-matches-challenge",
                "scope-retry-limit",
            ],
        ),
    );
}

#[test]
fn token_endpoint_auth_basic() {
    run_scenario(
        "auth/token-endpoint-auth-basic",
        &with(
            &registered_flow(&RESOURCE_PARAMETER),
            &["token-endpoint-auth-method"],
        ),
    );
}

#[test]
fn token_endpoint_auth_post() {
    run_scenario(
        "auth/token-endpoint-auth-post",
        &with(
            &registered_flow(&RESOURCE_PARAMETER),
            &["token-endpoint-auth-method"],
        ),
    );
}

#[test]
fn token_endpoint_auth_none() {
    run_scenario(
        "auth/token-endpoint-auth-none",
        &with(
            &registered_flow(&RESOURCE_PARAMETER),
            &["token-endpoint-auth-method"],
        ),
    );
}

#[test]
fn pre_registration() {
    run_scenario(
        "auth/pre-registration",
        &with(&CODE_FLOW, &["pre-registration-auth"]),
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
        &with(&CODE_FLOW, &["sep-2207-offline-access-requested"]),
    );
}

#[test]
fn offline_access_not_supported() {
    run_scenario(
        "auth/offline-access-not-supported",
        &registered_flow(&["sep-2207-offline-access-not-requested"]),
    );
}

#[test]
fn authorization_server_migration() {
    run_scenario(
        "auth/authorization-server-migration",
        &registered_flow(&[
            "sep-2352-reregister-on-as-change",
            "sep-2352-no-reuse-on-as-change",
            "sep-2352-no-cross-as-credential-reuse",
        ]),
    );
}

#[test]
fn iss_supported() {
    run_scenario(
        "auth/iss-supported",
        &registered_flow(&["sep-2468-client-compare-iss-supported"]),
    );
}

#[test]
fn iss_not_advertised() {
    run_scenario(
        "auth/iss-not-advertised",
        &registered_flow(&["sep-2468-client-proceed-no-iss"]),
    );
}

#[test]
fn iss_supported_missing() {
    run_scenario(
        "auth/iss-supported-missing",
        &with(
            &UP_TO_AUTHORIZATION,
            &["sep-2468-client-reject-missing-iss"],
        ),
    );
}

#[test]
fn iss_wrong_issuer() {
    run_scenario(
        "auth/iss-wrong-issuer",
        &with(
            &UP_TO_AUTHORIZATION,
            &["sep-2468-client-compare-iss-supported"],
        ),
    );
}

#[test]
fn iss_unexpected() {
    run_scenario(
        "auth/iss-unexpected",
        &with(
            &UP_TO_AUTHORIZATION,
            &["sep-2468-client-compare-iss-unadvertised"],
        ),
    );
}

#[test]
fn iss_normalized() {
    run_scenario(
        "auth/iss-normalized",
        &with(&UP_TO_AUTHORIZATION, &["sep-2468-client-no-normalization"]),
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
