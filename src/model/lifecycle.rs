//! The `initialize` handshake: implementation info, client and server capabilities, and the
//! params and result of `initialize` (2024-11-05 to 2025-11-25).
//!
//! Capabilities are an open set ("any client can define its own"): every struct keeps unknown
//! members in `extra`, so they survive a decode/encode round trip.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Unknown members of an object, kept in order of appearance for round trips (serde_json is
/// built with `preserve_order`).
pub(crate) type Extra = Map<String, Value>;

mcp_object! {
    /// An icon for an implementation, tool, prompt or resource (2025-11-25).
    #[derive(Default)]
    pub struct Icon {
        /// An `https:` or `data:` URI.
        pub src: String,
        /// The MIME type, when the URI does not make it clear.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub mime_type: Option<String>,
        /// Sizes such as `"48x48"` or `"any"`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub sizes: Option<Vec<String>>,
        /// `"light"` or `"dark"`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub theme: Option<String>,
    }
}

mcp_object! {
    /// The name and version of an MCP implementation (`clientInfo`, `serverInfo`).
    #[derive(Default)]
    pub struct Implementation {
        /// Programmatic name.
        pub name: String,
        /// Display name (2025-06-18).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
        /// Version string.
        pub version: String,
        /// Human-readable description (2025-11-25).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
        /// Icons (2025-11-25).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub icons: Option<Vec<Icon>>,
        /// Website (2025-11-25).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub website_url: Option<String>,
    }
}

impl Implementation {
    /// An implementation with just a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            ..Default::default()
        }
    }
}

mcp_object! {
    /// A capability flag object whose only known member is `listChanged`.
    #[derive(Default)]
    pub struct ListChangedCapability {
        /// Whether `notifications/*/list_changed` will be sent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub list_changed: Option<bool>,
    }
}

mcp_object! {
    /// The server's `resources` capability.
    #[derive(Default)]
    pub struct ResourcesCapability {
        /// Whether `resources/subscribe` is supported.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub subscribe: Option<bool>,
        /// Whether `notifications/resources/list_changed` will be sent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub list_changed: Option<bool>,
    }
}

mcp_object! {
    /// The client's `sampling` capability.
    #[derive(Default)]
    pub struct SamplingCapability {
        /// Support for `includeContext` other than `none` (soft-deprecated).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub context: Option<Value>,
        /// Support for `tools` and `toolChoice` in sampling requests (2025-11-25).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tools: Option<Value>,
    }
}

mcp_object! {
    /// The client's `elicitation` capability. `{}` means form mode only.
    #[derive(Default)]
    pub struct ElicitationCapability {
        /// Form mode support (2025-11-25).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub form: Option<Value>,
        /// URL mode support (2025-11-25).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub url: Option<Value>,
    }
}

impl ElicitationCapability {
    /// Whether form mode is supported (declared, or implied by an empty object).
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// Whether URL mode is supported.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

mcp_object! {
    /// What a client can do.
    #[derive(Default)]
    pub struct ClientCapabilities {
        /// `roots/list` support.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub roots: Option<ListChangedCapability>,
        /// `sampling/createMessage` support.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub sampling: Option<SamplingCapability>,
        /// `elicitation/create` support (2025-06-18).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub elicitation: Option<ElicitationCapability>,
        /// Task support (2025-11-25), kept as raw JSON.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tasks: Option<Value>,
        /// Experimental, non-standard capabilities.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub experimental: Option<Map<String, Value>>,
        /// Extensions (2026-07-28).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub extensions: Option<Map<String, Value>>,
    }
}

mcp_object! {
    /// What a server can do.
    #[derive(Default)]
    pub struct ServerCapabilities {
        /// `notifications/message` and `logging/setLevel`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub logging: Option<Map<String, Value>>,
        /// `completion/complete` (2025-03-26).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub completions: Option<Map<String, Value>>,
        /// Prompts.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub prompts: Option<ListChangedCapability>,
        /// Resources.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub resources: Option<ResourcesCapability>,
        /// Tools.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tools: Option<ListChangedCapability>,
        /// Task support (2025-11-25), kept as raw JSON.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tasks: Option<Value>,
        /// Experimental, non-standard capabilities.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub experimental: Option<Map<String, Value>>,
        /// Extensions (2026-07-28).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub extensions: Option<Map<String, Value>>,
    }
}

/// Params of `initialize`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The version the client wants (kept as a string: it may be one we do not know).
    pub protocol_version: String,
    /// What the client can do.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Result of `initialize`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The version the server chose.
    pub protocol_version: String,
    /// What the server can do.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// Hints for the model on how to use this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extra,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_capabilities_survive_a_round_trip() {
        let text =
            r#"{"roots":{"listChanged":true,"x-future":1},"sampling":{},"custom":{"a":[1]}}"#;
        let caps: ClientCapabilities = serde_json::from_str(text).unwrap();
        assert_eq!(caps.roots.as_ref().unwrap().list_changed, Some(true));
        let back = serde_json::to_value(&caps).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn empty_elicitation_means_form_only() {
        let e: ElicitationCapability = serde_json::from_str("{}").unwrap();
        assert!(e.supports_form() && !e.supports_url());
        let e: ElicitationCapability = serde_json::from_str(r#"{"url":{}}"#).unwrap();
        assert!(!e.supports_form() && e.supports_url());
    }
}
