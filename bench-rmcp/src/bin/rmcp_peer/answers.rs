//! The rmcp client's answers to what a server asks of it: roots, elicitation and sampling.
//! rmcp routes both eras here: server-to-client requests (2025-11-25 and older) and the
//! embedded requests of a 2026-07-28 `input_required` result, which rmcp's `call_tool` /
//! `get_prompt` helpers answer and retry with.
//!
//! The answers are fixed so tests can find them in the server's result: root
//! [`ROOT_URI`], sampled text [`SAMPLED_TEXT`], and a form filled from its schema (strings
//! [`FORM_TEXT`], booleans `true`, numbers `1`).

// rmcp 3.11 marks roots and sampling deprecated (SEP-2577, a later revision); every revision
// under test here still has them.
#![allow(deprecated)]

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ListRootsResult,
};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{json, Map, Value};

/// The one root the client declares.
pub const ROOT_URI: &str = "file:///tmp/rmcp-peer";
/// What the client's "model" answers to every sampling request.
pub const SAMPLED_TEXT: &str = "Paris, says rmcp";
/// What the client's "user" types into every string field of a form.
pub const FORM_TEXT: &str = "rmcp";

/// A client that declares roots, form elicitation and sampling, and answers them.
#[derive(Clone)]
pub struct PeerClient {
    pub config: ClientConfig,
}

/// The capabilities [`PeerClient`] answers for.
pub fn capabilities() -> ClientCapabilities {
    serde_json::from_value(json!({"roots": {}, "elicitation": {"form": {}}, "sampling": {}}))
        .expect("capabilities JSON matches rmcp's model")
}

/// A form's content: every property of `schema` filled by its type.
fn fill_form(schema: &Value) -> Value {
    let properties = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let filled: Map<String, Value> = properties
        .into_iter()
        .map(|(name, property)| {
            let value = match property["type"].as_str() {
                Some("boolean") => json!(true),
                Some("number" | "integer") => json!(1),
                _ => json!(FORM_TEXT),
            };
            (name, value)
        })
        .collect();
    Value::Object(filled)
}

impl ClientHandler for PeerClient {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        serde_json::from_value(json!({"roots": [{"uri": ROOT_URI, "name": "rmcp-peer"}]}))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let request = serde_json::to_value(&request)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let content = fill_form(&request["requestedSchema"]);
        serde_json::from_value(json!({"action": "accept", "content": content}))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        serde_json::from_value(json!({
            "role": "assistant",
            "content": {"type": "text", "text": SAMPLED_TEXT},
            "model": "rmcp-peer-model",
            "stopReason": "endTurn"
        }))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }
}
