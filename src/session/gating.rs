//! Capability gating: which side may send each spec method, and which declared capability it
//! needs. Requests are gated by the receiver's capabilities, notifications by the sender's own.
//!
//! Methods not in this table (extensions, vendor methods) are not gated: they pass through to
//! the application, which answers `-32601` if it does not know them.

use crate::jsonrpc as m;
use crate::model::{ClientCapabilities, ProtocolVersion, ServerCapabilities};

use super::Role;

/// Who may send a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sender {
    /// Only the client.
    Client,
    /// Only the server.
    Server,
    /// Either side.
    Either,
}

impl Sender {
    pub(crate) fn allows(self, role: Role) -> bool {
        matches!(
            (self, role),
            (Sender::Either, _) | (Sender::Client, Role::Client) | (Sender::Server, Role::Server)
        )
    }
}

/// A capability a method needs, by its path in the capabilities object.
pub(crate) type Capability = &'static str;

/// The rule for a spec request: who sends it and which receiver capability it needs.
pub(crate) fn request_rule(method: &str) -> Option<(Sender, Option<Capability>)> {
    use Sender::*;
    let rule = match method {
        m::INITIALIZE => (Client, None),
        m::PING => (Either, None),
        m::TOOLS_LIST | m::TOOLS_CALL => (Client, Some("tools")),
        m::RESOURCES_LIST | m::RESOURCES_TEMPLATES_LIST | m::RESOURCES_READ => {
            (Client, Some("resources"))
        }
        m::RESOURCES_SUBSCRIBE | m::RESOURCES_UNSUBSCRIBE => (Client, Some("resources.subscribe")),
        m::PROMPTS_LIST | m::PROMPTS_GET => (Client, Some("prompts")),
        m::COMPLETION_COMPLETE => (Client, Some("completions")),
        m::LOGGING_SET_LEVEL => (Client, Some("logging")),
        m::SAMPLING_CREATE_MESSAGE => (Server, Some("sampling")),
        m::ELICITATION_CREATE => (Server, Some("elicitation")),
        m::ROOTS_LIST => (Server, Some("roots")),
        m::TASKS_GET | m::TASKS_RESULT | m::TASKS_LIST | m::TASKS_CANCEL => (Either, None),
        _ => return None,
    };
    Some(rule)
}

/// The rule for a spec notification: who sends it and which sender capability it needs.
pub(crate) fn notification_rule(method: &str) -> Option<(Sender, Option<Capability>)> {
    use Sender::*;
    let rule = match method {
        m::NOTIFICATIONS_INITIALIZED => (Client, None),
        m::NOTIFICATIONS_CANCELLED | m::NOTIFICATIONS_PROGRESS => (Either, None),
        m::NOTIFICATIONS_TASKS_STATUS => (Either, None),
        m::NOTIFICATIONS_MESSAGE => (Server, Some("logging")),
        m::NOTIFICATIONS_RESOURCES_UPDATED => (Server, Some("resources.subscribe")),
        m::NOTIFICATIONS_RESOURCES_LIST_CHANGED => (Server, Some("resources.listChanged")),
        m::NOTIFICATIONS_TOOLS_LIST_CHANGED => (Server, Some("tools.listChanged")),
        m::NOTIFICATIONS_PROMPTS_LIST_CHANGED => (Server, Some("prompts.listChanged")),
        m::NOTIFICATIONS_ELICITATION_COMPLETE => (Server, None),
        m::NOTIFICATIONS_ROOTS_LIST_CHANGED => (Client, Some("roots.listChanged")),
        _ => return None,
    };
    Some(rule)
}

/// Whether a server declared `cap`.
///
/// `completions` did not exist in 2024-11-05, where `completion/complete` was ungated.
pub(crate) fn server_has(
    caps: &ServerCapabilities,
    cap: Capability,
    version: Option<ProtocolVersion>,
) -> bool {
    let flag = |b: Option<bool>| b == Some(true);
    match cap {
        "tools" => caps.tools.is_some(),
        "tools.listChanged" => caps.tools.as_ref().is_some_and(|c| flag(c.list_changed)),
        "resources" => caps.resources.is_some(),
        "resources.subscribe" => caps.resources.as_ref().is_some_and(|c| flag(c.subscribe)),
        "resources.listChanged" => caps
            .resources
            .as_ref()
            .is_some_and(|c| flag(c.list_changed)),
        "prompts" => caps.prompts.is_some(),
        "prompts.listChanged" => caps.prompts.as_ref().is_some_and(|c| flag(c.list_changed)),
        "completions" => {
            caps.completions.is_some() || version == Some(ProtocolVersion::V2024_11_05)
        }
        "logging" => caps.logging.is_some(),
        _ => false,
    }
}

/// Whether a client declared `cap`.
pub(crate) fn client_has(caps: &ClientCapabilities, cap: Capability) -> bool {
    match cap {
        "sampling" => caps.sampling.is_some(),
        "elicitation" => caps.elicitation.is_some(),
        "roots" => caps.roots.is_some(),
        "roots.listChanged" => caps
            .roots
            .as_ref()
            .is_some_and(|c| c.list_changed == Some(true)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_gated_capability_is_checkable() {
        // A capability name in the tables that `server_has`/`client_has` does not know would
        // silently refuse the method forever; declaring everything must satisfy every rule.
        let server: ServerCapabilities = serde_json::from_str(
            r#"{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},
                "prompts":{"listChanged":true},"completions":{},"logging":{}}"#,
        )
        .unwrap();
        let client: ClientCapabilities = serde_json::from_str(
            r#"{"roots":{"listChanged":true},"sampling":{},"elicitation":{}}"#,
        )
        .unwrap();
        for method in m::KNOWN_METHODS {
            for rule in [request_rule(method), notification_rule(method)]
                .into_iter()
                .flatten()
            {
                if let (sender, Some(cap)) = rule {
                    let ok = server_has(&server, cap, None) || client_has(&client, cap);
                    assert!(ok, "{method} ({sender:?}) needs unknown capability {cap}");
                }
            }
        }
    }
}
