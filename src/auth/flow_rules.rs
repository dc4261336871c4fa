//! Small decisions of the flow: which client authentication method to register, when to add
//! `offline_access`, how step-up merges scopes, how a token error or a refused status reads
//! (a redirect quotes its `Location`), and when a 401's challenge could not be read.

use super::challenge::BearerChallenge;
use super::metadata::AuthorizationServerMetadata;
use super::request::ClientAuthMethod;
use crate::outgoing::ReceivedResponse;

/// Prefers a confidential method when the server offers one; RFC 8414 says an absent list
/// means `client_secret_basic`.
pub(super) fn choose_auth_method(supported: Option<&[String]>) -> ClientAuthMethod {
    let Some(supported) = supported else {
        return ClientAuthMethod::ClientSecretBasic;
    };
    [
        ClientAuthMethod::ClientSecretBasic,
        ClientAuthMethod::ClientSecretPost,
        ClientAuthMethod::None,
    ]
    .into_iter()
    .find(|m| supported.iter().any(|s| s == m.as_str()))
    .unwrap_or(ClientAuthMethod::None)
}

/// SEP-2207: ask for `offline_access` only when the server lists it and the refresh grant.
pub(super) fn with_offline_access(
    scope: Option<String>,
    meta: &AuthorizationServerMetadata,
) -> Option<String> {
    let lists =
        |v: &Option<Vec<String>>, x: &str| v.as_ref().is_some_and(|v| v.iter().any(|s| s == x));
    let wanted = lists(&meta.scopes_supported, "offline_access")
        && lists(&meta.grant_types_supported, "refresh_token");
    match scope {
        Some(s) if wanted && !s.split(' ').any(|x| x == "offline_access") => {
            Some(format!("{s} offline_access"))
        }
        None if wanted => Some("offline_access".into()),
        other => other,
    }
}

pub(super) fn union_scopes(current: Option<&str>, added: Option<&str>) -> String {
    let mut scopes: Vec<&str> = Vec::new();
    for s in current
        .into_iter()
        .chain(added)
        .flat_map(str::split_whitespace)
    {
        if !scopes.contains(&s) {
            scopes.push(s);
        }
    }
    scopes.join(" ")
}

pub(super) fn token_error(response: &ReceivedResponse) -> String {
    let code = serde_json::from_slice::<serde_json::Value>(&response.body)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned));
    match code {
        Some(code) => format!("{}: {code}", status_text(response)),
        None => status_text(response),
    }
}

/// `status N`; for a redirect, which the flow never follows, with its `Location` quoted
/// (bounded, control characters escaped).
pub(super) fn status_text(response: &ReceivedResponse) -> String {
    let status = response.status;
    let location = response.header_values("location").next();
    match location.filter(|_| (300..400).contains(&status)) {
        Some(location) => format!(
            "status {status}, a redirect to {} (not followed)",
            crate::http::quote_peer_text(location)
        ),
        None => format!("status {status}"),
    }
}

/// A 401's `WWW-Authenticate` values (joined, quoted) when they are present but held no
/// Bearer challenge `found` could be read from; `None` when one was read, or there was none.
pub(super) fn unreadable_challenge(
    response: &ReceivedResponse,
    found: Option<&BearerChallenge>,
) -> Option<String> {
    if response.status != 401 || found.is_some() {
        return None;
    }
    let values: Vec<&str> = response.header_values("www-authenticate").collect();
    if values.iter().all(|v| v.trim().is_empty()) {
        return None;
    }
    Some(crate::http::quote_peer_text(&values.join(", ")))
}
