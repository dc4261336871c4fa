//! Prompts: templates the server offers, and the params and results of `prompts/list` and
//! `prompts/get`.
//!
//! Version differences: `title` (2025-06-18), `icons` (2025-11-25).

use serde_json::Map;

use super::{ContentBlock, Extra, Icon, Role, TextContent};

mcp_object! {
    /// A prompt template.
    #[derive(Default)]
    pub struct Prompt {
        /// Programmatic name.
        pub name: String,
        /// Display name (2025-06-18).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
        /// What the prompt does.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
        /// The arguments the template takes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub arguments: Option<Vec<PromptArgument>>,
        /// Icons (2025-11-25).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub icons: Option<Vec<Icon>>,
    }
    meta: "Metadata."
}

mcp_object! {
    /// An argument of a prompt template.
    #[derive(Default)]
    pub struct PromptArgument {
        /// Programmatic name.
        pub name: String,
        /// Display name (2025-06-18).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
        /// What the argument is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
        /// Whether it must be given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub required: Option<bool>,
    }
}

mcp_object! {
    /// One message of a prompt.
    pub struct PromptMessage {
        /// Who speaks.
        pub role: Role,
        /// What is said.
        pub content: ContentBlock,
    }
}

page_result! {
    /// Result of `prompts/list`.
    ListPromptsResult {
        /// One page of prompts.
        prompts: Prompt
    }
}

mcp_object! {
    /// Params of `prompts/get`.
    #[derive(Default)]
    pub struct GetPromptParams {
        /// The prompt's name.
        pub name: String,
        /// Argument values by name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub arguments: Option<Map<String, serde_json::Value>>,
    }
    meta: "Request metadata."
}

mcp_object! {
    /// Result of `prompts/get`.
    #[derive(Default)]
    pub struct GetPromptResult {
        /// What the prompt is for.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
        /// The filled-in messages.
        pub messages: Vec<PromptMessage>,
    }
    meta: "Result metadata."
}

impl GetPromptResult {
    /// One user message with one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        GetPromptResult {
            messages: vec![PromptMessage {
                role: Role::User,
                content: ContentBlock::Text(TextContent {
                    text: text.into(),
                    ..Default::default()
                }),
                extra: Extra::new(),
            }],
            ..Default::default()
        }
    }
}
