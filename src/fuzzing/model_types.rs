//! Fuzz body for every MCP model type: arbitrary bytes decoded as each type never panic, and
//! whatever decodes survives a round trip (encode, decode, encode gives the same JSON), so no
//! field is lost, renamed or duplicated on the way out.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::model::*;

/// Decodes `data` as `T`; if that works, checks that encoding and decoding again is stable.
fn round_trip<T: DeserializeOwned + Serialize>(name: &str, data: &[u8]) {
    let Ok(first) = serde_json::from_slice::<T>(data) else {
        return;
    };
    let encoded: Value = match serde_json::to_value(&first) {
        Ok(v) => v,
        Err(e) => panic!("{name}: a decoded value does not encode: {e}"),
    };
    let second: T = match serde_json::from_value(encoded.clone()) {
        Ok(v) => v,
        Err(e) => panic!("{name}: our own encoding {encoded} does not decode: {e}"),
    };
    let again = serde_json::to_value(&second).expect("encoded once already");
    assert_eq!(encoded, again, "{name}: the round trip is not stable");
}

macro_rules! every_type {
    ($data:expr; $($ty:ty),* $(,)?) => {
        $( round_trip::<$ty>(stringify!($ty), $data); )*
    };
}

/// Every model type (params, results, content, capabilities, tasks) on the same input.
pub fn model_types(data: &[u8]) {
    every_type!(data;
        Role, Annotations,
        CompletionReference, CompleteParams, CompleteResult,
        TextContent, MediaContent, EmbeddedResource, ContentBlock, ToolUseContent,
        ToolResultContent, SamplingContent,
        ElicitParams, ElicitResult, ElicitationCompleteParams,
        Icon, Implementation, ClientCapabilities, ServerCapabilities,
        InitializeParams, InitializeResult,
        LoggingLevel, SetLevelParams, LoggingMessageParams,
        CancelledParams, ProgressParams,
        Prompt, PromptMessage, ListPromptsResult, GetPromptParams, GetPromptResult,
        Resource, ResourceTemplate, ResourceContents, ListResourcesResult,
        ListResourceTemplatesResult, ReadResourceResult,
        Root, ListRootsResult,
        SamplingMessage, ModelPreferences, ToolChoice, CreateMessageParams, CreateMessageResult,
        Task, TaskMetadata, CreateTaskResult, TaskResult, ListTasksResult,
        Tool, ToolAnnotations, ListToolsResult, CallToolParams, CallToolResult,
    );
}
