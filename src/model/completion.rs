//! Argument completion: params and result of `completion/complete`.
//!
//! Version differences: the resource reference is named `ResourceReference` up to 2025-03-26
//! and `ResourceTemplateReference` from 2025-06-18; both are `{"type":"ref/resource","uri"}`
//! on the wire. `context.arguments` appears in 2025-06-18; `title` on a prompt reference in
//! 2025-06-18.

use serde::{Deserialize, Serialize};
use serde_json::Map;

/// What is being completed, tagged by `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionReference {
    /// `ref/prompt`: an argument of a prompt.
    #[serde(rename = "ref/prompt")]
    Prompt(PromptReference),
    /// `ref/resource`: a variable of a resource template.
    #[serde(rename = "ref/resource")]
    Resource(ResourceTemplateReference),
}

mcp_object! {
    /// A reference to a prompt by name.
    #[derive(Default)]
    pub struct PromptReference {
        /// The prompt's name.
        pub name: String,
        /// Display name (2025-06-18).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
    }
}

mcp_object! {
    /// A reference to a resource template by its URI template.
    #[derive(Default)]
    pub struct ResourceTemplateReference {
        /// The URI or URI template.
        pub uri: String,
    }
}

mcp_object! {
    /// The argument being completed.
    #[derive(Default)]
    pub struct CompletionArgument {
        /// The argument's name.
        pub name: String,
        /// What the user typed so far.
        pub value: String,
    }
}

mcp_object! {
    /// Extra context for completion (2025-06-18).
    #[derive(Default)]
    pub struct CompletionContext {
        /// Arguments already resolved.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub arguments: Option<Map<String, serde_json::Value>>,
    }
}

mcp_object! {
    /// Params of `completion/complete`.
    pub struct CompleteParams {
        /// What is being completed.
        #[serde(rename = "ref")]
        pub reference: CompletionReference,
        /// The argument being completed.
        pub argument: CompletionArgument,
        /// Already resolved arguments (2025-06-18).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub context: Option<CompletionContext>,
    }
    meta: "Request metadata."
}

mcp_object! {
    /// The suggestions of a completion.
    #[derive(Default)]
    pub struct Completion {
        /// Suggested values (at most 100).
        pub values: Vec<String>,
        /// How many suggestions exist in total.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub total: Option<u64>,
        /// Whether more exist than were sent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub has_more: Option<bool>,
    }
}

mcp_object! {
    /// Result of `completion/complete`.
    #[derive(Default)]
    pub struct CompleteResult {
        /// The suggestions.
        pub completion: Completion,
    }
    meta: "Result metadata."
}
