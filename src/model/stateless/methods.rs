//! The method table of 2026-07-28: the ten client requests and eight notifications the
//! revision has (all server-to-client but `notifications/cancelled`, which goes both ways),
//! and what each needs (cache hints, input-required, `Mcp-Name`).
//!
//! Rows of the same [`crate::model::MethodInfo`] type as [`crate::model::methods::METHODS`], in
//! a table of their own because directions change in this revision (progress becomes
//! server-to-client only) while the stateful table must keep describing the older revisions
//! exactly.

use crate::jsonrpc::{
    self as m, NOTIFICATIONS_PROMPTS_LIST_CHANGED as PROMPTS_CHANGED,
    NOTIFICATIONS_RESOURCES_LIST_CHANGED as RESOURCES_CHANGED,
    NOTIFICATIONS_RESOURCES_UPDATED as RESOURCE_UPDATED,
    NOTIFICATIONS_TOOLS_LIST_CHANGED as TOOLS_CHANGED,
};
use crate::model::methods::info;
use crate::model::{
    MethodDirection::{ClientToServer as CS, Either as EI, ServerToClient as SC},
    MethodInfo,
    MethodKind::{Notification as N, Request as R},
    ProtocolVersion::V2026_07_28 as V5,
    ServerCapabilityKey as S,
};

const fn request(name: &'static str, gate: Option<S>, cacheable: bool) -> MethodInfo {
    MethodInfo {
        cacheable,
        ..info(name, CS, R, gate, None, V5)
    }
}

const fn with_input(method: MethodInfo, name_param: &'static str) -> MethodInfo {
    MethodInfo {
        may_require_input: true,
        name_param: Some(name_param),
        ..method
    }
}

const fn notification(name: &'static str, gate: Option<S>) -> MethodInfo {
    info(name, SC, N, gate, None, V5)
}

/// Every method of 2026-07-28, with its directions per the schema's unions. The server
/// capability gates are the ones `server_capability_for` gives for this revision.
pub const STATELESS_METHODS: &[MethodInfo] = &[
    request(m::SERVER_DISCOVER, None, true),
    request(m::SUBSCRIPTIONS_LISTEN, None, false),
    request(m::TOOLS_LIST, Some(S::Tools), true),
    with_input(request(m::TOOLS_CALL, Some(S::Tools), false), "name"),
    request(m::PROMPTS_LIST, Some(S::Prompts), true),
    with_input(request(m::PROMPTS_GET, Some(S::Prompts), false), "name"),
    request(m::RESOURCES_LIST, Some(S::Resources), true),
    request(m::RESOURCES_TEMPLATES_LIST, Some(S::Resources), true),
    with_input(request(m::RESOURCES_READ, Some(S::Resources), true), "uri"),
    request(m::COMPLETION_COMPLETE, Some(S::Completions), false),
    notification(m::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED, None),
    // Clients cancel requests; servers use it only to end a listen stream.
    MethodInfo {
        direction: EI,
        ..notification(m::NOTIFICATIONS_CANCELLED, None)
    },
    notification(m::NOTIFICATIONS_PROGRESS, None),
    notification(m::NOTIFICATIONS_MESSAGE, Some(S::Logging)),
    notification(TOOLS_CHANGED, Some(S::ToolsListChanged)),
    notification(PROMPTS_CHANGED, Some(S::PromptsListChanged)),
    notification(RESOURCES_CHANGED, Some(S::ResourcesListChanged)),
    notification(RESOURCE_UPDATED, Some(S::ResourcesSubscribe)),
];

/// What 2026-07-28 says about `method`, or `None` when the revision has no such method.
pub fn stateless_method(method: &str) -> Option<&'static MethodInfo> {
    STATELESS_METHODS.iter().find(|i| i.name == method)
}

/// Whether a notification may only travel on a `subscriptions/listen` stream (and so must
/// carry `io.modelcontextprotocol/subscriptionId`).
pub fn is_subscription_notification(method: &str) -> bool {
    matches!(
        method,
        m::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED
            | m::NOTIFICATIONS_TOOLS_LIST_CHANGED
            | m::NOTIFICATIONS_PROMPTS_LIST_CHANGED
            | m::NOTIFICATIONS_RESOURCES_LIST_CHANGED
            | m::NOTIFICATIONS_RESOURCES_UPDATED
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::server_capability_for;

    #[test]
    fn gates_are_the_method_tables_ones() {
        for info in STATELESS_METHODS {
            assert!(info.exists_in(V5), "{}", info.name);
            assert_eq!(
                info.server_capability,
                server_capability_for(info.name, V5),
                "{}",
                info.name
            );
        }
    }
}
