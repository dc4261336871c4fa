//! The 2026-07-28 client: stateless requests whose `_meta` carries the protocol version, the
//! client's capabilities and its info; replies read as complete, input-required (answered by
//! the same sampling/elicitation/roots handlers as the stateful [`super::Client`], then
//! retried) or errors; the HTTP headers of each request; the era probe's verdict.
//!
//! Sans-IO like the rest of the core: [`StatelessClient`] holds who the client is and what it
//! learned (versions, tool header annotations, cached results); [`StatelessMachine`] runs calls
//! with it as a poll machine (`start_*`, `handle_*`, `poll_*`, time passed in), and an adapter
//! only moves the bytes. See docs/stateless.md.

mod cache;
mod call;
mod era;
mod headers;
mod inputs;
mod listen;
mod machine;
mod ops;
mod reply;
mod tasks;

pub(crate) use cache::ResultCache;
pub use cache::{MAX_CACHED_RESULTS, MAX_TTL};
pub use call::MAX_INPUT_ROUNDS;
pub(crate) use call::{CallStep, StatelessCall};
pub use era::{era_from_probe, Era};
pub use headers::{
    header_params, header_value, needs_base64, request_headers, InvalidHeaderAnnotation,
    MAX_HEADER_NAME, MAX_HEADER_PARAMS,
};
pub(crate) use listen::ListenReader;
pub use listen::{
    listen_cancel_notification, listen_event_from_message, ListenEvent, ListenFilter,
    MAX_PENDING_EVENTS,
};
pub use machine::{
    CallId, StatelessEvent, StatelessMachine, Wire, DEFAULT_REQUEST_TIMEOUT, MAX_CALLS_IN_FLIGHT,
    MAX_QUEUED_EVENTS, MAX_REPLY_BODY,
};
pub use reply::MAX_SSE_EVENT;
pub(crate) use reply::{reply_from_http_body, reply_from_message, Reply, ReplyError};
pub(crate) use tasks::TaskStep;
pub use tasks::{
    TaskHandle, TaskOutcome, DEFAULT_POLL_INTERVAL, MAX_POLL_INTERVAL, MAX_TASK_POLLS,
};

use std::collections::{HashMap, HashSet};

use bytes::Bytes;

use serde_json::{json, Map, Value};

use super::builder::Handlers;
use super::{ClientBuilder, ClientError};
use crate::http::{HttpMethod, HttpText};
use crate::model::stateless::RequestMeta;
use crate::model::{ClientCapabilities, Implementation, ProtocolVersion};
use crate::outgoing::{ExchangeId, OutgoingRequest};
use crate::stateless::ParamHeader;

/// Tools whose header annotations are remembered at most (past it, calls to further tools
/// carry no `Mcp-Param-*` headers).
pub const MAX_KNOWN_TOOLS: usize = 10_000;

/// Pages of `tools/list` followed at most when learning tool annotations.
pub const MAX_TOOL_PAGES: usize = 1_000;

/// A stateless 2026-07-28 client: who it is, what it can do, which version it speaks, and
/// what it learned of the server's tools (their `Mcp-Param-*` headers).
pub struct StatelessClient {
    info: Implementation,
    capabilities: ClientCapabilities,
    handlers: Handlers,
    pub(crate) version: String,
    supported_versions: Vec<String>,
    next_id: i64,
    max_input_rounds: u32,
    tool_headers: HashMap<String, Vec<ParamHeader>>,
    tools_learned: bool,
    /// Tools dropped for invalid annotations (never called), bounded like `tool_headers`.
    dropped: HashSet<String>,
    /// Cacheable results by method and params ([`StatelessMachine::start_cached_call`]).
    cache: ResultCache,
}

impl StatelessClient {
    /// A client with the identity and the handlers of `builder` (the same registrations as
    /// the stateful client; capabilities derive from them).
    pub fn new(builder: &ClientBuilder) -> Self {
        let (info, capabilities, handlers) = builder.stateless_parts();
        let version = ProtocolVersion::V2026_07_28.as_str().to_owned();
        StatelessClient {
            info,
            capabilities,
            handlers,
            supported_versions: vec![version.clone()],
            version,
            next_id: 1,
            max_input_rounds: MAX_INPUT_ROUNDS,
            tool_headers: HashMap::new(),
            tools_learned: false,
            dropped: HashSet::new(),
            cache: ResultCache::new(),
        }
    }

    /// Caps the input rounds of one call (default [`MAX_INPUT_ROUNDS`]).
    pub fn set_max_input_rounds(&mut self, rounds: u32) {
        self.max_input_rounds = rounds;
    }

    /// The protocol version requests carry (changes after a -32022 retry).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The capabilities every request declares.
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    /// A call of `method` with `params` (an object or nothing).
    pub(super) fn call(&self, method: &str, params: Option<Value>) -> StatelessCall {
        StatelessCall::new(method, params)
    }

    /// The next attempt of `call` as exchange `exchange`: a new JSON-RPC id (returned), the
    /// `_meta` fields, the inputs and state of the last round, and the HTTP headers.
    pub(super) fn next_request(
        &mut self,
        call: &mut StatelessCall,
        exchange: ExchangeId,
    ) -> (i64, OutgoingRequest) {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        call.current_id = Some(id);
        let mut params = call.params.clone();
        let mut meta = match params.remove("_meta") {
            Some(Value::Object(meta)) => meta,
            _ => Map::new(),
        };
        let typed = RequestMeta::new(
            self.version.clone(),
            self.capabilities.clone(),
            Some(self.info.clone()),
        );
        for (key, value) in typed.to_meta() {
            meta.insert(key, value);
        }
        params.insert("_meta".into(), Value::Object(meta));
        if let Some(responses) = &call.retry_inputs {
            params.insert("inputResponses".into(), json!(responses));
        }
        if let Some(state) = &call.retry_state {
            params.insert("requestState".into(), Value::String(state.clone()));
        }
        let tool = (call.method == "tools/call")
            .then(|| params.get("name").and_then(Value::as_str))
            .flatten();
        let empty = Vec::new();
        let tool_params = tool
            .and_then(|t| self.tool_headers.get(t))
            .unwrap_or(&empty);
        let pairs = request_headers(&self.version, &call.method, &params, tool_params);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": call.method, "params": params});
        let body = serde_json::to_vec(&body).unwrap_or_default();
        (id, post(exchange, pairs, body))
    }

    /// Sorts the reply to `call`'s attempt in flight into the next step.
    pub(super) fn handle_reply(
        &mut self,
        call: &mut StatelessCall,
        reply: Result<Reply, ReplyError>,
    ) -> CallStep {
        call.handle_reply(self, reply)
    }

    /// Remembers the header annotations of the tools in a `tools/list` result and removes the
    /// tools whose annotations are invalid (they must not be called). Returns the removed
    /// names with the reason.
    pub fn learn_tools(&mut self, result: &mut Value) -> Vec<(String, InvalidHeaderAnnotation)> {
        let mut dropped = Vec::new();
        let Some(Value::Array(tools)) = result.get_mut("tools") else {
            return dropped;
        };
        tools.retain(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
            let schema = tool.get("inputSchema").unwrap_or(&Value::Null);
            match header_params(schema) {
                Ok(params) => {
                    self.dropped.remove(name);
                    if self.tool_headers.len() < MAX_KNOWN_TOOLS
                        || self.tool_headers.contains_key(name)
                    {
                        self.tool_headers.insert(name.to_owned(), params);
                    }
                    true
                }
                Err(why) => {
                    self.tool_headers.remove(name);
                    if self.dropped.len() < MAX_KNOWN_TOOLS {
                        self.dropped.insert(name.to_owned());
                    }
                    dropped.push((name.to_owned(), why));
                    false
                }
            }
        });
        self.tools_learned = true;
        dropped
    }

    /// Whether `tool` is known from a listing (and may be called).
    pub fn knows_tool(&self, tool: &str) -> bool {
        self.tool_headers.contains_key(tool)
    }

    /// Takes in an event from a listen stream: a list change or resource update makes the
    /// matching cached results stale (and a tool list change forgets the learned tools, so
    /// the next call lists them again). Returns how many cached results were dropped.
    pub fn handle_listen_event(&mut self, event: &ListenEvent) -> usize {
        if *event == ListenEvent::ToolsListChanged {
            self.tools_learned = false;
        }
        self.cache.invalidate(event)
    }

    /// The result cache (to inspect or clear it).
    #[cfg(test)]
    pub(crate) fn cache_mut(&mut self) -> &mut ResultCache {
        &mut self.cache
    }

    /// Why `tool` must not be called (its annotations were invalid in the last listing).
    pub(super) fn refuses_tool(&self, tool: &str) -> Option<ClientError> {
        self.dropped.contains(tool).then(|| {
            ClientError::Input(format!(
                "the tool `{tool}` has invalid x-mcp-header annotations"
            ))
        })
    }

    /// Whether a call of `tool` must list the tools first (to learn its headers).
    pub(super) fn must_list_before(&self, tool: &str) -> bool {
        !self.knows_tool(tool) && !self.tools_learned
    }
}

/// A 2026-07-28 POST: `Content-Type`, `Accept`, and the request's MCP headers (those with a
/// fixed name as constants, `Mcp-Param-*` as named fields).
fn post(id: ExchangeId, pairs: Vec<(String, String)>, body: Vec<u8>) -> OutgoingRequest {
    let mut headers: Vec<(&'static str, HttpText)> = vec![
        ("Content-Type", HttpText::from_static("application/json")),
        (
            "Accept",
            HttpText::from_static("application/json, text/event-stream"),
        ),
    ];
    let mut named_headers = Vec::new();
    for (name, value) in pairs {
        match constant_name(&name) {
            Some(name) => headers.push((name, value.into())),
            None => named_headers.push((name.into(), value.into())),
        }
    }
    OutgoingRequest {
        id,
        method: HttpMethod::Post,
        url: None,
        headers,
        named_headers,
        body: Bytes::from(body),
    }
}

/// The header names of [`request_headers`] that are fixed.
fn constant_name(name: &str) -> Option<&'static str> {
    ["MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"]
        .into_iter()
        .find(|n| *n == name)
}

#[cfg(test)]
mod listen_tests;
#[cfg(test)]
mod reply_props;
#[cfg(test)]
mod tests;
