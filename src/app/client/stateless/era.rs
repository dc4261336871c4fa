//! The era probe's verdict (2026-07-28 lifecycle, backward compatibility): a client that does
//! not know the server's era sends a stateless request (`server/discover` on stdio, a stateless
//! POST on HTTP); a result means the server speaks 2026-07-28, and any error, unreadable
//! answer or timeout means it does not, so the client falls back to `initialize`. Never keyed
//! to one error code: stateful servers answer unknown methods in many ways.

use serde_json::Value;

use super::ClientError;
use crate::model::ProtocolVersion;

/// Which era a server speaks, as the probe found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Era {
    /// Stateless 2026-07-28 (the version the discover result named, as agreed).
    Stateless(String),
    /// Only the `initialize` handshake (2025-11-25 and earlier); the reason, for reports.
    Stateful(String),
}

/// The verdict of a probe: its outcome (the discover result, or why it failed).
pub fn era_from_probe(outcome: &Result<Value, ClientError>, version: &str) -> Era {
    match outcome {
        Ok(result) => {
            // Only a discover result that lists the version we spoke counts: a stateful server
            // answering unknown methods with some result must not pass for a stateless one.
            let listed = result
                .get("supportedVersions")
                .and_then(Value::as_array)
                .is_some_and(|list| list.iter().any(|v| v.as_str() == Some(version)));
            let stateless = ProtocolVersion::parse(version).is_some_and(|p| !p.is_stateful());
            match (listed, stateless) {
                (true, true) => Era::Stateless(version.to_owned()),
                (false, _) => Era::Stateful(format!(
                    "server/discover does not list {version} in supportedVersions"
                )),
                (true, false) => Era::Stateful(format!("{version} is not a stateless version")),
            }
        }
        Err(error) => Era::Stateful(error.to_string()),
    }
}
