//! The method table: for every MCP method, its direction, kind, the capability that gates it
//! and the revisions that have it. The session uses it to refuse ungated or unknown traffic.

use super::{ClientCapabilities, ProtocolVersion, ServerCapabilities};
use crate::jsonrpc as m;

/// Who sends a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodDirection {
    /// Client to server.
    ClientToServer,
    /// Server to client.
    ServerToClient,
    /// Either side.
    Either,
}

/// Request (expects a response) or notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodKind {
    /// A request.
    Request,
    /// A notification.
    Notification,
}

/// A server capability that must be declared before the client may send a method to it, or
/// before the server may send a notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerCapabilityKey {
    /// `logging`.
    Logging,
    /// `completions` (2025-03-26; 2024-11-05 has no such capability).
    Completions,
    /// `prompts`.
    Prompts,
    /// `prompts.listChanged`.
    PromptsListChanged,
    /// `resources`.
    Resources,
    /// `resources.subscribe`.
    ResourcesSubscribe,
    /// `resources.listChanged`.
    ResourcesListChanged,
    /// `tools`.
    Tools,
    /// `tools.listChanged`.
    ToolsListChanged,
    /// `tasks`.
    Tasks,
    /// `tasks.list`.
    TasksList,
    /// `tasks.cancel`.
    TasksCancel,
}

/// A client capability that must be declared before the server may send a method to it, or
/// before the client may send a notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientCapabilityKey {
    /// `roots`.
    Roots,
    /// `roots.listChanged`.
    RootsListChanged,
    /// `sampling`.
    Sampling,
    /// `elicitation` (form mode, or any mode when only the key is checked).
    Elicitation,
    /// `elicitation.url` (2025-11-25).
    ElicitationUrl,
    /// `tasks`.
    Tasks,
    /// `tasks.list`.
    TasksList,
    /// `tasks.cancel`.
    TasksCancel,
}

fn flag(v: Option<&serde_json::Value>) -> bool {
    v.is_some_and(|v| !v.is_null() && v != &serde_json::Value::Bool(false))
}

fn sub(v: Option<&serde_json::Value>, key: &str) -> bool {
    flag(v.and_then(|v| v.get(key)))
}

impl ServerCapabilityKey {
    /// Whether `caps` declares this capability.
    pub fn is_declared(self, caps: &ServerCapabilities) -> bool {
        use ServerCapabilityKey as K;
        let list_changed = |c: Option<&super::ListChangedCapability>| {
            c.and_then(|c| c.list_changed).unwrap_or(false)
        };
        match self {
            K::Logging => caps.logging.is_some(),
            K::Completions => caps.completions.is_some(),
            K::Prompts => caps.prompts.is_some(),
            K::PromptsListChanged => list_changed(caps.prompts.as_ref()),
            K::Resources => caps.resources.is_some(),
            K::ResourcesSubscribe => caps
                .resources
                .as_ref()
                .and_then(|r| r.subscribe)
                .unwrap_or(false),
            K::ResourcesListChanged => caps
                .resources
                .as_ref()
                .and_then(|r| r.list_changed)
                .unwrap_or(false),
            K::Tools => caps.tools.is_some(),
            K::ToolsListChanged => list_changed(caps.tools.as_ref()),
            K::Tasks => flag(caps.tasks.as_ref()),
            K::TasksList => sub(caps.tasks.as_ref(), "list"),
            K::TasksCancel => sub(caps.tasks.as_ref(), "cancel"),
        }
    }
}

impl ClientCapabilityKey {
    /// Whether `caps` declares this capability.
    pub fn is_declared(self, caps: &ClientCapabilities) -> bool {
        use ClientCapabilityKey as K;
        match self {
            K::Roots => caps.roots.is_some(),
            K::RootsListChanged => caps
                .roots
                .as_ref()
                .and_then(|r| r.list_changed)
                .unwrap_or(false),
            K::Sampling => caps.sampling.is_some(),
            K::Elicitation => caps.elicitation.is_some(),
            K::ElicitationUrl => caps.elicitation.as_ref().is_some_and(|e| e.supports_url()),
            K::Tasks => flag(caps.tasks.as_ref()),
            K::TasksList => sub(caps.tasks.as_ref(), "list"),
            K::TasksCancel => sub(caps.tasks.as_ref(), "cancel"),
        }
    }
}

/// What a method table ([`METHODS`], or 2026-07-28's
/// [`super::stateless::methods::STATELESS_METHODS`]) knows about one method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MethodInfo {
    /// The method name.
    pub name: &'static str,
    /// Who sends it.
    pub direction: MethodDirection,
    /// Request or notification.
    pub kind: MethodKind,
    /// The server capability gating it when it travels to (or is emitted by) the server.
    pub server_capability: Option<ServerCapabilityKey>,
    /// The client capability gating it when it travels to (or is emitted by) the client.
    pub client_capability: Option<ClientCapabilityKey>,
    /// The revision that introduced it.
    pub since: ProtocolVersion,
    /// The last revision that has it, when it was removed.
    pub until: Option<ProtocolVersion>,
    /// 2026-07-28: whether its result must carry `ttlMs` and `cacheScope`.
    pub cacheable: bool,
    /// 2026-07-28: whether it may answer with an input-required result.
    pub may_require_input: bool,
    /// 2026-07-28: the params member the HTTP `Mcp-Name` header repeats (`tools/call`: `name`,
    /// `resources/read`: `uri`, `prompts/get`: `name`).
    pub name_param: Option<&'static str>,
}

impl MethodInfo {
    /// Whether `version` has this method.
    pub fn exists_in(&self, version: ProtocolVersion) -> bool {
        version >= self.since && self.until.is_none_or(|u| version <= u)
    }
}

use ClientCapabilityKey as C;
use MethodDirection::{ClientToServer as CS, Either as EI, ServerToClient as SC};
use MethodKind::{Notification as N, Request as R};
use ProtocolVersion::{
    V2024_11_05 as V1, V2025_03_26 as V2, V2025_06_18 as V3, V2025_11_25 as V4, V2026_07_28 as V5,
};
use ServerCapabilityKey as S;

/// A row of a method table: the revisions from `since` on have it; no 2026-07-28 extras.
pub(super) const fn info(
    name: &'static str,
    direction: MethodDirection,
    kind: MethodKind,
    server_capability: Option<ServerCapabilityKey>,
    client_capability: Option<ClientCapabilityKey>,
    since: ProtocolVersion,
) -> MethodInfo {
    MethodInfo {
        name,
        direction,
        kind,
        server_capability,
        client_capability,
        since,
        until: None,
        cacheable: false,
        may_require_input: false,
        name_param: None,
    }
}

/// Every method of every revision. Those 2026-07-28 removed (or embedded in input-required
/// results) end at 2025-11-25; its new ones start at 2026-07-28. Directions and gates are the
/// stateful revisions' ones: see [`super::stateless::methods::STATELESS_METHODS`] for
/// 2026-07-28's.
pub const METHODS: &[MethodInfo] = &[
    MethodInfo {
        until: Some(V4),
        ..info(m::INITIALIZE, CS, R, None, None, V1)
    },
    MethodInfo {
        until: Some(V4),
        ..info(m::NOTIFICATIONS_INITIALIZED, CS, N, None, None, V1)
    },
    MethodInfo {
        until: Some(V4),
        ..info(m::PING, EI, R, None, None, V1)
    },
    info(m::NOTIFICATIONS_CANCELLED, EI, N, None, None, V1),
    info(m::NOTIFICATIONS_PROGRESS, EI, N, None, None, V1),
    info(m::TOOLS_LIST, CS, R, Some(S::Tools), None, V1),
    info(m::TOOLS_CALL, CS, R, Some(S::Tools), None, V1),
    info(
        m::NOTIFICATIONS_TOOLS_LIST_CHANGED,
        SC,
        N,
        Some(S::ToolsListChanged),
        None,
        V1,
    ),
    info(m::RESOURCES_LIST, CS, R, Some(S::Resources), None, V1),
    info(
        m::RESOURCES_TEMPLATES_LIST,
        CS,
        R,
        Some(S::Resources),
        None,
        V1,
    ),
    info(m::RESOURCES_READ, CS, R, Some(S::Resources), None, V1),
    MethodInfo {
        until: Some(V4),
        ..info(
            m::RESOURCES_SUBSCRIBE,
            CS,
            R,
            Some(S::ResourcesSubscribe),
            None,
            V1,
        )
    },
    MethodInfo {
        until: Some(V4),
        ..info(
            m::RESOURCES_UNSUBSCRIBE,
            CS,
            R,
            Some(S::ResourcesSubscribe),
            None,
            V1,
        )
    },
    info(
        m::NOTIFICATIONS_RESOURCES_UPDATED,
        SC,
        N,
        Some(S::ResourcesSubscribe),
        None,
        V1,
    ),
    info(
        m::NOTIFICATIONS_RESOURCES_LIST_CHANGED,
        SC,
        N,
        Some(S::ResourcesListChanged),
        None,
        V1,
    ),
    info(m::PROMPTS_LIST, CS, R, Some(S::Prompts), None, V1),
    info(m::PROMPTS_GET, CS, R, Some(S::Prompts), None, V1),
    info(
        m::NOTIFICATIONS_PROMPTS_LIST_CHANGED,
        SC,
        N,
        Some(S::PromptsListChanged),
        None,
        V1,
    ),
    info(
        m::COMPLETION_COMPLETE,
        CS,
        R,
        Some(S::Completions),
        None,
        V1,
    ),
    MethodInfo {
        until: Some(V4),
        ..info(m::LOGGING_SET_LEVEL, CS, R, Some(S::Logging), None, V1)
    },
    info(m::NOTIFICATIONS_MESSAGE, SC, N, Some(S::Logging), None, V1),
    MethodInfo {
        until: Some(V4),
        ..info(
            m::SAMPLING_CREATE_MESSAGE,
            SC,
            R,
            None,
            Some(C::Sampling),
            V1,
        )
    },
    MethodInfo {
        until: Some(V4),
        ..info(m::ROOTS_LIST, SC, R, None, Some(C::Roots), V1)
    },
    MethodInfo {
        until: Some(V4),
        ..info(
            m::NOTIFICATIONS_ROOTS_LIST_CHANGED,
            CS,
            N,
            None,
            Some(C::RootsListChanged),
            V1,
        )
    },
    MethodInfo {
        until: Some(V4),
        ..info(m::ELICITATION_CREATE, SC, R, None, Some(C::Elicitation), V3)
    },
    MethodInfo {
        until: Some(V4),
        ..info(
            m::NOTIFICATIONS_ELICITATION_COMPLETE,
            SC,
            N,
            None,
            Some(C::ElicitationUrl),
            V4,
        )
    },
    MethodInfo {
        until: Some(V4),
        ..info(m::TASKS_GET, EI, R, Some(S::Tasks), Some(C::Tasks), V4)
    },
    MethodInfo {
        until: Some(V4),
        ..info(m::TASKS_RESULT, EI, R, Some(S::Tasks), Some(C::Tasks), V4)
    },
    MethodInfo {
        until: Some(V4),
        ..info(
            m::TASKS_LIST,
            EI,
            R,
            Some(S::TasksList),
            Some(C::TasksList),
            V4,
        )
    },
    MethodInfo {
        until: Some(V4),
        ..info(
            m::TASKS_CANCEL,
            EI,
            R,
            Some(S::TasksCancel),
            Some(C::TasksCancel),
            V4,
        )
    },
    MethodInfo {
        until: Some(V4),
        ..info(
            m::NOTIFICATIONS_TASKS_STATUS,
            EI,
            N,
            Some(S::Tasks),
            Some(C::Tasks),
            V4,
        )
    },
    info(m::SERVER_DISCOVER, CS, R, None, None, V5),
    info(m::SUBSCRIPTIONS_LISTEN, CS, R, None, None, V5),
    info(
        m::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
        SC,
        N,
        None,
        None,
        V5,
    ),
];

/// What the table knows about `method`, or `None` for a method no revision has.
pub(crate) fn method_info(method: &str) -> Option<&'static MethodInfo> {
    METHODS.iter().find(|i| i.name == method)
}

/// Whether `method` exists in `version`.
pub fn method_exists(method: &str, version: ProtocolVersion) -> bool {
    method_info(method).is_some_and(|i| i.exists_in(version))
}

/// The server capability the server must have declared before the client sends `method`
/// (requests) or before the server sends it (notifications), in `version`.
pub(crate) fn server_capability_for(
    method: &str,
    version: ProtocolVersion,
) -> Option<ServerCapabilityKey> {
    let key = method_info(method)?.server_capability?;
    // 2024-11-05 has no `completions` capability: completion was ungated.
    if key == S::Completions && version < V2 {
        return None;
    }
    Some(key)
}

/// The client capability the client must have declared before the server sends `method`
/// (requests) or before the client sends it (notifications), in `version`.
pub fn client_capability_for(
    method: &str,
    _version: ProtocolVersion,
) -> Option<ClientCapabilityKey> {
    method_info(method)?.client_capability
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_entry_is_a_known_method_and_unique() {
        for (i, info) in METHODS.iter().enumerate() {
            assert!(m::KNOWN_METHODS.contains(&info.name), "{}", info.name);
            assert!(METHODS[..i].iter().all(|o| o.name != info.name));
            let notification = info.name.starts_with("notifications/");
            assert_eq!(notification, info.kind == MethodKind::Notification);
        }
    }

    #[test]
    fn versions_and_gates() {
        assert!(!method_exists(m::ELICITATION_CREATE, V2));
        assert!(method_exists(m::ELICITATION_CREATE, V3));
        assert!(!method_exists(m::TASKS_GET, V3));
        assert!(method_exists(m::TASKS_GET, V4));
        assert!(!method_exists(m::INITIALIZE, ProtocolVersion::V2026_07_28));
        assert_eq!(server_capability_for(m::COMPLETION_COMPLETE, V1), None);
        assert_eq!(
            server_capability_for(m::COMPLETION_COMPLETE, V2),
            Some(S::Completions)
        );
        assert_eq!(server_capability_for(m::SAMPLING_CREATE_MESSAGE, V4), None);
        assert_eq!(
            client_capability_for(m::SAMPLING_CREATE_MESSAGE, V4),
            Some(C::Sampling)
        );
        assert_eq!(method_info("nope/nope"), None);
    }

    #[test]
    fn capability_keys_read_declared_capabilities() {
        let server: ServerCapabilities = serde_json::from_str(
            r#"{"tools":{},"resources":{"subscribe":true},"tasks":{"list":{}}}"#,
        )
        .unwrap();
        assert!(S::Tools.is_declared(&server));
        assert!(!S::ToolsListChanged.is_declared(&server));
        assert!(S::ResourcesSubscribe.is_declared(&server));
        assert!(!S::ResourcesListChanged.is_declared(&server));
        assert!(S::TasksList.is_declared(&server) && !S::TasksCancel.is_declared(&server));
        assert!(!S::Logging.is_declared(&server));
        let client: ClientCapabilities =
            serde_json::from_str(r#"{"elicitation":{},"roots":{"listChanged":true}}"#).unwrap();
        assert!(C::Elicitation.is_declared(&client));
        assert!(!C::ElicitationUrl.is_declared(&client));
        assert!(C::RootsListChanged.is_declared(&client));
        assert!(!C::Sampling.is_declared(&client));
    }
}
