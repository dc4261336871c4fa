//! The method table of 2026-07-28: the ten client requests and eight notifications the
//! revision has (all server-to-client but `notifications/cancelled`, which goes both ways),
//! and what each needs (cache hints, input-required, `Mcp-Name`).
//!
//! Kept apart from [`crate::model::METHODS`] because directions change in this revision
//! (progress becomes server-to-client only) while the stateful table must keep describing
//! the older revisions exactly.

use crate::jsonrpc as m;
use crate::model::{MethodDirection, MethodKind};

/// What 2026-07-28 says about one method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatelessMethod {
    /// The method name.
    pub name: &'static str,
    /// Who sends it (per the schema's unions).
    pub direction: MethodDirection,
    /// Request or notification.
    pub kind: MethodKind,
    /// Whether its result must carry `ttlMs` and `cacheScope`.
    pub cacheable: bool,
    /// Whether it may answer with an input-required result.
    pub may_require_input: bool,
    /// The params member the HTTP `Mcp-Name` header repeats (`tools/call`: `name`,
    /// `resources/read`: `uri`, `prompts/get`: `name`).
    pub name_param: Option<&'static str>,
}

const fn request(name: &'static str, cacheable: bool) -> StatelessMethod {
    StatelessMethod {
        name,
        direction: MethodDirection::ClientToServer,
        kind: MethodKind::Request,
        cacheable,
        may_require_input: false,
        name_param: None,
    }
}

const fn with_input(method: StatelessMethod, name_param: &'static str) -> StatelessMethod {
    StatelessMethod {
        may_require_input: true,
        name_param: Some(name_param),
        ..method
    }
}

const fn notification(name: &'static str) -> StatelessMethod {
    StatelessMethod {
        name,
        direction: MethodDirection::ServerToClient,
        kind: MethodKind::Notification,
        cacheable: false,
        may_require_input: false,
        name_param: None,
    }
}

/// Every method of 2026-07-28.
pub const STATELESS_METHODS: &[StatelessMethod] = &[
    request(m::SERVER_DISCOVER, true),
    request(m::SUBSCRIPTIONS_LISTEN, false),
    request(m::TOOLS_LIST, true),
    with_input(request(m::TOOLS_CALL, false), "name"),
    request(m::PROMPTS_LIST, true),
    with_input(request(m::PROMPTS_GET, false), "name"),
    request(m::RESOURCES_LIST, true),
    request(m::RESOURCES_TEMPLATES_LIST, true),
    with_input(request(m::RESOURCES_READ, true), "uri"),
    request(m::COMPLETION_COMPLETE, false),
    notification(m::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED),
    // Clients cancel requests; servers use it only to end a listen stream.
    StatelessMethod {
        direction: MethodDirection::Either,
        ..notification(m::NOTIFICATIONS_CANCELLED)
    },
    notification(m::NOTIFICATIONS_PROGRESS),
    notification(m::NOTIFICATIONS_MESSAGE),
    notification(m::NOTIFICATIONS_TOOLS_LIST_CHANGED),
    notification(m::NOTIFICATIONS_PROMPTS_LIST_CHANGED),
    notification(m::NOTIFICATIONS_RESOURCES_LIST_CHANGED),
    notification(m::NOTIFICATIONS_RESOURCES_UPDATED),
];

/// What 2026-07-28 says about `method`, or `None` when the revision has no such method.
pub fn stateless_method(method: &str) -> Option<&'static StatelessMethod> {
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
