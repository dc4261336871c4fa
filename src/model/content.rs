//! Content blocks: what tools return, prompts hold and sampling exchanges.
//!
//! Version differences: `audio` appears in 2025-03-26; `resource_link` in 2025-06-18;
//! `tool_use` and `tool_result` (sampling only) in 2025-11-25. `_meta` on blocks appears in
//! 2025-06-18; older peers ignore it as an unknown member.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Annotations, Extra, Meta, ProtocolVersion};

/// A text block. (`Deserialize` is hand-written in `flatten.rs`: unknown members are read
/// straight into `extra`.)
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extra,
}

mcp_object! {
    /// An image or audio block: base64 data and its MIME type.
    #[derive(Default)]
    pub struct MediaContent {
        /// Base64-encoded bytes.
        pub data: String,
        /// The MIME type, e.g. `image/png` or `audio/wav`.
        pub mime_type: String,
        /// Display hints.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub annotations: Option<Annotations>,
    }
    meta: "Metadata."
}

mcp_object! {
    /// A resource embedded in a message.
    pub struct EmbeddedResource {
        /// The resource's contents.
        pub resource: super::ResourceContents,
        /// Display hints.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub annotations: Option<Annotations>,
    }
    meta: "Metadata."
}

/// A block of content in tool results, prompts and embedded messages, tagged by `type`.
/// (`Deserialize` is hand-written in `tagged.rs`: it reads a leading tag without buffering.)
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// `text`.
    Text(TextContent),
    /// `image`.
    Image(MediaContent),
    /// `audio` (2025-03-26).
    Audio(MediaContent),
    /// `resource_link` (2025-06-18).
    ResourceLink(super::Resource),
    /// `resource`: an embedded resource.
    Resource(EmbeddedResource),
    /// Any block, written verbatim (a kind, or a form, the typed variants do not cover).
    /// Reading never gives it: known kinds are read into their variants, others refused.
    #[serde(untagged)]
    Json(Value),
}

impl ContentBlock {
    /// The first revision whose schema has this kind of block; a peer on an older revision
    /// cannot read it (e.g. send text instead of audio to a 2024-11-05 client).
    pub fn since(&self) -> ProtocolVersion {
        match self {
            ContentBlock::Text(_) | ContentBlock::Image(_) | ContentBlock::Resource(_) => {
                ProtocolVersion::V2024_11_05
            }
            ContentBlock::Audio(_) => ProtocolVersion::V2025_03_26,
            ContentBlock::ResourceLink(_) => ProtocolVersion::V2025_06_18,
            ContentBlock::Json(block) => match block.get("type").and_then(Value::as_str) {
                Some("audio") => ProtocolVersion::V2025_03_26,
                Some("resource_link") => ProtocolVersion::V2025_06_18,
                _ => ProtocolVersion::V2024_11_05,
            },
        }
    }

    /// A text block with no annotations.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent {
            text: text.into(),
            ..Default::default()
        })
    }
}

mcp_object! {
    /// A model's request to call a tool, in sampling (2025-11-25).
    #[derive(Default)]
    pub struct ToolUseContent {
        /// Id that the matching `tool_result` refers to.
        pub id: String,
        /// The tool's name.
        pub name: String,
        /// The arguments.
        pub input: Map<String, Value>,
    }
    meta: "Metadata."
}

mcp_object! {
    /// The result of a tool call, given back to the model in sampling (2025-11-25).
    #[derive(Default)]
    pub struct ToolResultContent {
        /// The `id` of the `tool_use` this answers.
        pub tool_use_id: String,
        /// The unstructured result.
        pub content: Vec<ContentBlock>,
        /// The structured result.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub structured_content: Option<Map<String, Value>>,
        /// Whether the call failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub is_error: Option<bool>,
    }
    meta: "Metadata."
}

/// A block of a sampling message: text, image, audio, or (2025-11-25) tool use and result.
/// (`Deserialize` is hand-written in `tagged.rs`, as for [`ContentBlock`].)
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SamplingContent {
    /// `text`.
    Text(TextContent),
    /// `image`.
    Image(MediaContent),
    /// `audio` (2025-03-26).
    Audio(MediaContent),
    /// `tool_use` (2025-11-25).
    ToolUse(ToolUseContent),
    /// `tool_result` (2025-11-25).
    ToolResult(ToolResultContent),
}

impl SamplingContent {
    /// The first revision whose schema has this kind of block.
    pub fn since(&self) -> ProtocolVersion {
        match self {
            SamplingContent::Text(_) | SamplingContent::Image(_) => ProtocolVersion::V2024_11_05,
            SamplingContent::Audio(_) => ProtocolVersion::V2025_03_26,
            SamplingContent::ToolUse(_) | SamplingContent::ToolResult(_) => {
                ProtocolVersion::V2025_11_25
            }
        }
    }

    /// A text block with no annotations.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingContent::Text(TextContent {
            text: text.into(),
            ..Default::default()
        })
    }
}

impl SamplingContentList {
    /// The first revision whose schema can carry this content (arrays need 2025-11-25).
    pub fn since(&self) -> ProtocolVersion {
        match self {
            SamplingContentList::One(block) => block.since(),
            SamplingContentList::Many(_) => ProtocolVersion::V2025_11_25,
        }
    }
}

/// Sampling content: one block, or (2025-11-25) an array of blocks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
// The single-block variant is the common case; boxing it would cost an allocation per message
// to save stack space on a value that only lives while a request is built or read.
#[allow(clippy::large_enum_variant)]
pub enum SamplingContentList {
    /// A single block (every revision).
    One(SamplingContent),
    /// Several blocks (2025-11-25).
    Many(Vec<SamplingContent>),
}
