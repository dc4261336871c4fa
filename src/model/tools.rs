//! Tools: descriptions, annotations, and the params and results of `tools/list` and
//! `tools/call`.
//!
//! `inputSchema` and `outputSchema` are kept verbatim as [`RawJson`]. Version differences:
//! `annotations` (2025-03-26), `title`, `outputSchema`, `structuredContent` (2025-06-18),
//! `icons`, `execution` and the `task` param (2025-11-25).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ContentBlock, Extra, Icon, Meta, TaskMetadata};
use crate::jsonrpc::RawJson;

mcp_object! {
    /// A tool the server offers.
    pub struct Tool {
        /// Programmatic name.
        pub name: String,
        /// Display name (2025-06-18).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
        /// What the tool does.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
        /// JSON Schema of the arguments, verbatim.
        pub input_schema: RawJson,
        /// JSON Schema of `structuredContent`, verbatim (2025-06-18).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub output_schema: Option<RawJson>,
        /// Behaviour hints (2025-03-26).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub annotations: Option<ToolAnnotations>,
        /// Icons (2025-11-25).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub icons: Option<Vec<Icon>>,
        /// Execution properties such as task support (2025-11-25).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub execution: Option<ToolExecution>,
    }
    meta: "Metadata."
}

impl Tool {
    /// A tool with a name and an input schema; the schema text is checked and kept as is.
    pub fn new(name: impl Into<String>, input_schema: &str) -> Result<Self, serde_json::Error> {
        Ok(Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema: RawJson::from_text(input_schema.to_owned())?,
            output_schema: None,
            annotations: None,
            icons: None,
            execution: None,
            meta: None,
            extra: Extra::new(),
        })
    }
}

mcp_object! {
    /// Untrusted hints about a tool's behaviour (2025-03-26).
    #[derive(Default)]
    pub struct ToolAnnotations {
        /// Display name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
        /// The tool does not change its environment.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub read_only_hint: Option<bool>,
        /// The tool may destroy data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub destructive_hint: Option<bool>,
        /// Calling twice with the same arguments has no extra effect.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub idempotent_hint: Option<bool>,
        /// The tool talks to an open world (e.g. the web).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub open_world_hint: Option<bool>,
    }
}

/// Whether a tool may, must or must not be run as a task (2025-11-25).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TaskSupport {
    /// Never as a task (the default): always a synchronous result.
    #[default]
    Forbidden,
    /// Either way: a task for clients declaring the tasks extension, a synchronous result for
    /// the others.
    Optional,
    /// Only as a task: clients not declaring the extension get -32021.
    Required,
}

mcp_object! {
    /// Execution properties of a tool (2025-11-25).
    #[derive(Default)]
    pub struct ToolExecution {
        /// Task support; absent means forbidden.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub task_support: Option<TaskSupport>,
    }
}

page_result! {
    /// Result of `tools/list`.
    ListToolsResult {
        /// One page of tools.
        tools: Tool
    }
}

mcp_object! {
    /// Params of `tools/call`.
    #[derive(Default)]
    pub struct CallToolParams {
        /// The tool's name.
        pub name: String,
        /// The arguments.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub arguments: Option<Map<String, Value>>,
        /// Run as a task (2025-11-25): the result is then a `CreateTaskResult`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub task: Option<TaskMetadata>,
    }
    meta: "Request metadata (`progressToken`)."
}

/// Result of `tools/call`.
///
/// 2024-11-05 and 2025-03-26 require `content`; 2025-06-18 adds `structuredContent`.
/// (`Deserialize` is hand-written in `flatten.rs`, as for [`TextContent`](super::TextContent).)
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// The unstructured result.
    pub content: Vec<ContentBlock>,
    /// The structured result, matching `outputSchema` (2025-06-18): an object up to
    /// 2025-11-25, any JSON value in 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed (a tool error, not a protocol error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extra,
}

impl CallToolResult {
    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(text)],
            ..Default::default()
        }
    }

    /// A tool failure with one text block (`isError: true`).
    pub fn error(text: impl Into<String>) -> Self {
        CallToolResult {
            is_error: Some(true),
            ..CallToolResult::text(text)
        }
    }

    /// Structured output, with its JSON text as the text block (for older clients).
    pub fn structured(value: Value) -> Self {
        CallToolResult {
            structured_content: Some(value.clone()),
            ..CallToolResult::text(value.to_string())
        }
    }
}
