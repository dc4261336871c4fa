//! Sampling: params and result of `sampling/createMessage` (server asks the client's model).
//!
//! Version differences: `audio` content (2025-03-26); `tools`, `toolChoice`, array content,
//! `tool_use`/`tool_result` blocks and the `task` param (2025-11-25).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use super::{Role, SamplingContentList, TaskMetadata, Tool};

mcp_object! {
    /// One message of a sampling conversation.
    pub struct SamplingMessage {
        /// Who speaks.
        pub role: Role,
        /// One block, or (2025-11-25) several.
        pub content: SamplingContentList,
    }
    meta: "Metadata (2025-11-25)."
}

mcp_object! {
    /// A hint naming a model or model family.
    #[derive(Default)]
    pub struct ModelHint {
        /// A (sub)string of a model name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub name: Option<String>,
    }
}

mcp_object! {
    /// What the server prefers in a model; priorities range 0 to 1.
    #[derive(Default)]
    pub struct ModelPreferences {
        /// Model name hints, in order of preference.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub hints: Option<Vec<ModelHint>>,
        /// How much cost matters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub cost_priority: Option<Number>,
        /// How much speed matters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub speed_priority: Option<Number>,
        /// How much capability matters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub intelligence_priority: Option<Number>,
    }
}

/// Which MCP servers' context to include (soft-deprecated beyond `none` in 2025-11-25).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// No server context.
    None,
    /// This server's context.
    ThisServer,
    /// Every connected server's context.
    AllServers,
}

mcp_object! {
    /// How the model may use tools (2025-11-25).
    #[derive(Default)]
    pub struct ToolChoice {
        /// `auto`, `required` or `none`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub mode: Option<ToolChoiceMode>,
    }
}

/// The mode of a [`ToolChoice`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolChoiceMode {
    /// The model decides.
    Auto,
    /// The model must use a tool.
    Required,
    /// The model must not use tools.
    None,
}

mcp_object! {
    /// Params of `sampling/createMessage`.
    pub struct CreateMessageParams {
        /// The conversation.
        pub messages: Vec<SamplingMessage>,
        /// Model preferences.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub model_preferences: Option<ModelPreferences>,
        /// A system prompt.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub system_prompt: Option<String>,
        /// Which context to include.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub include_context: Option<IncludeContext>,
        /// Sampling temperature, kept exactly as written.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub temperature: Option<Number>,
        /// The most tokens to sample.
        pub max_tokens: u64,
        /// Sequences that stop sampling.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub stop_sequences: Option<Vec<String>>,
        /// Provider-specific metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata: Option<Map<String, Value>>,
        /// Tools the model may call (2025-11-25).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tools: Option<Vec<Tool>>,
        /// How the model may use the tools (2025-11-25).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tool_choice: Option<ToolChoice>,
        /// Run as a task (2025-11-25).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub task: Option<TaskMetadata>,
    }
    meta: "Request metadata."
}

mcp_object! {
    /// Result of `sampling/createMessage`.
    pub struct CreateMessageResult {
        /// Who speaks (normally the assistant).
        pub role: Role,
        /// What the model said.
        pub content: SamplingContentList,
        /// The model that answered.
        pub model: String,
        /// Why sampling stopped: `endTurn`, `stopSequence`, `maxTokens`, `toolUse` or other.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub stop_reason: Option<String>,
    }
    meta: "Result metadata."
}
