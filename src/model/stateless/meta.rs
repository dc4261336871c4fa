//! The per-request and per-result `_meta` fields of 2026-07-28: protocol version, client
//! capabilities, client and server info, log level and subscription id.
//!
//! The stateless revision has no handshake, so what `initialize` used to establish travels in
//! every request's `_meta`. [`RequestMeta`] is a typed view of those keys; every other key
//! (`progressToken`, `traceparent`, vendor keys) stays in `extra`.

use serde::{Deserialize, Serialize};

use crate::jsonrpc::RequestId;
use crate::model::{ClientCapabilities, Extra, Implementation, LoggingLevel, Meta};

/// `_meta` key of the protocol version a request uses (required on every request).
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities relevant to a request (required on every request).
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client's name and version (clients SHOULD send it).
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the least severe log level the server may emit for this request.
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the server's name and version on a result (servers SHOULD send it).
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key tying a notification (or the closing result) to its `subscriptions/listen`.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// The protocol fields of a 2026-07-28 request's `_meta`, typed.
///
/// Both required fields are `Option` so that a request missing them still parses: the
/// stateless validator turns their absence into the -32602 the revision asks for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestMeta {
    /// The protocol version the request uses (required).
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub protocol_version: Option<String>,
    /// The client capabilities relevant to this request (required).
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_capabilities: Option<ClientCapabilities>,
    /// The client's name and version (SHOULD).
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// The least severe level of `notifications/message` wanted for this request; none are
    /// sent when absent.
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
    /// Every other key (`progressToken`, `traceparent`, vendor keys), kept as is.
    #[serde(flatten)]
    pub extra: Extra,
}

impl RequestMeta {
    /// The `_meta` a client sends: version, capabilities and (optionally) its info.
    pub fn new(
        protocol_version: impl Into<String>,
        client_capabilities: ClientCapabilities,
        client_info: Option<Implementation>,
    ) -> Self {
        RequestMeta {
            protocol_version: Some(protocol_version.into()),
            client_capabilities: Some(client_capabilities),
            client_info,
            log_level: None,
            extra: Extra::new(),
        }
    }

    /// Reads the typed view out of a params `_meta` object; `Err` when a protocol key has
    /// the wrong type (e.g. a number as the version).
    pub fn from_meta(meta: &Meta) -> Result<Self, serde_json::Error> {
        // The typed keys are few and small; cloning the map keeps `Meta` the shared type.
        serde_json::from_value(serde_json::Value::Object(meta.clone()))
    }

    /// This view as a plain `_meta` object, for params that keep `_meta` untyped.
    pub fn to_meta(&self) -> Meta {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => Meta::new(),
        }
    }
}

/// Puts `io.modelcontextprotocol/serverInfo` into a result's `_meta`, creating it if needed.
pub fn set_server_info(meta: &mut Option<Meta>, info: &Implementation) {
    if let Ok(value) = serde_json::to_value(info) {
        meta.get_or_insert_with(Meta::new)
            .insert(SERVER_INFO_KEY.to_owned(), value);
    }
}

/// The `io.modelcontextprotocol/serverInfo` of a result's `_meta`, when present and well-formed.
pub fn server_info(meta: Option<&Meta>) -> Option<Implementation> {
    serde_json::from_value(meta?.get(SERVER_INFO_KEY)?.clone()).ok()
}

/// Tags a notification's (or the closing listen result's) `_meta` with the id of the
/// `subscriptions/listen` request it belongs to.
pub fn set_subscription_id(meta: &mut Option<Meta>, id: &RequestId) {
    if let Ok(value) = serde_json::to_value(id) {
        meta.get_or_insert_with(Meta::new)
            .insert(SUBSCRIPTION_ID_KEY.to_owned(), value);
    }
}

/// The `io.modelcontextprotocol/subscriptionId` of a `_meta`, when present and well-formed.
pub fn subscription_id(meta: Option<&Meta>) -> Option<RequestId> {
    serde_json::from_value(meta?.get(SUBSCRIPTION_ID_KEY)?.clone()).ok()
}
