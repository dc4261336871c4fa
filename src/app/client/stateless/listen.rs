//! The client side of `subscriptions/listen`: the request that opens a listen stream, the
//! reading of each message on it into a [`ListenEvent`] (the acknowledgement, the
//! subscription-tagged list changes and resource updates, the closing result), and the
//! cancellation a stdio client must send to close it (on HTTP, dropping the response closes
//! it). Only messages tagged with this stream's subscription id count, so several streams can
//! share one stdio pipe.

use std::collections::VecDeque;

use serde_json::{json, Value};

use super::MAX_SSE_EVENT;
use crate::framing::{SseDecoder, SseItem};
use crate::model::stateless::{SubscriptionFilter, SUBSCRIPTION_ID_KEY};

/// One thing that happened on a listen stream.
#[derive(Clone, Debug, PartialEq)]
pub enum ListenEvent {
    /// `notifications/subscriptions/acknowledged`: the filter the server agreed to (what was
    /// asked and is supported).
    Acknowledged(SubscriptionFilter),
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated` for this URI.
    ResourceUpdated(String),
    /// Another notification tagged for this stream (a future kind), as sent.
    Other(Value),
    /// The listen request's response (a result or an error): the stream is over.
    Closed(Value),
}

impl ListenEvent {
    /// The list methods whose cached results this event makes stale (`resources/read` is
    /// handled by URI: the client drops the cached reads of the updated resource).
    pub fn stale_lists(&self) -> &'static [&'static str] {
        match self {
            ListenEvent::ToolsListChanged => &["tools/list"],
            ListenEvent::PromptsListChanged => &["prompts/list"],
            ListenEvent::ResourcesListChanged => &["resources/list", "resources/templates/list"],
            _ => &[],
        }
    }
}

/// What a client asks one listen stream to carry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListenFilter {
    /// Tool list changes.
    pub tools: bool,
    /// Prompt list changes.
    pub prompts: bool,
    /// Resource list changes.
    pub resources: bool,
    /// Updates of these resources.
    pub resource_uris: Vec<String>,
}

impl ListenFilter {
    /// The `notifications` member of the listen params.
    pub fn to_params(&self) -> Value {
        let mut filter = serde_json::Map::new();
        if self.tools {
            filter.insert("toolsListChanged".into(), Value::Bool(true));
        }
        if self.prompts {
            filter.insert("promptsListChanged".into(), Value::Bool(true));
        }
        if self.resources {
            filter.insert("resourcesListChanged".into(), Value::Bool(true));
        }
        if !self.resource_uris.is_empty() {
            filter.insert("resourceSubscriptions".into(), json!(self.resource_uris));
        }
        json!({ "notifications": filter })
    }
}

/// Reads one message seen on the wire as an event of the listen stream opened by request
/// `listen_id`. `None` when it belongs to something else (another stream, another request,
/// an untagged notification).
pub fn listen_event_from_message(message: &Value, listen_id: i64) -> Option<ListenEvent> {
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        // A response: ours only if it answers the listen request.
        if message.get("id").and_then(Value::as_i64) == Some(listen_id)
            && (message.get("result").is_some() || message.get("error").is_some())
        {
            return Some(ListenEvent::Closed(message.clone()));
        }
        return None;
    };
    if message.get("id").is_some() {
        return None;
    }
    let params = message.get("params");
    let tag = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(SUBSCRIPTION_ID_KEY))
        .and_then(Value::as_i64);
    if tag != Some(listen_id) {
        return None;
    }
    Some(match method {
        "notifications/subscriptions/acknowledged" => {
            let filter = params
                .and_then(|p| p.get("notifications"))
                .and_then(|f| serde_json::from_value(f.clone()).ok())
                .unwrap_or_default();
            ListenEvent::Acknowledged(filter)
        }
        "notifications/tools/list_changed" => ListenEvent::ToolsListChanged,
        "notifications/prompts/list_changed" => ListenEvent::PromptsListChanged,
        "notifications/resources/list_changed" => ListenEvent::ResourcesListChanged,
        "notifications/resources/updated" => {
            match params.and_then(|p| p.get("uri")).and_then(Value::as_str) {
                Some(uri) => ListenEvent::ResourceUpdated(uri.to_owned()),
                None => ListenEvent::Other(message.clone()),
            }
        }
        _ => ListenEvent::Other(message.clone()),
    })
}

/// The `notifications/cancelled` that closes the listen stream of request `listen_id` (what a
/// stdio client must send; an HTTP client closes the response instead).
pub fn listen_cancel_notification(listen_id: i64) -> Vec<u8> {
    let body = json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": listen_id, "reason": "listen stream closed by the client"},
    });
    serde_json::to_vec(&body).unwrap_or_default()
}

/// Events of one listen stream kept unread at most; older ones leave first (a reader that
/// falls that far behind only needs to know that lists changed, which later ones also say).
pub const MAX_PENDING_EVENTS: usize = 1024;

/// Reads a listen stream's HTTP response body as it arrives: server-sent events (each event
/// one message) or, when the server answered at once, one JSON response (an error, or the
/// closing result). Sans-IO: the adapter pushes body chunks and polls events.
pub(crate) struct ListenReader {
    listen_id: i64,
    sse: Option<SseDecoder>,
    json: Vec<u8>,
    events: VecDeque<ListenEvent>,
    closed: bool,
}

impl ListenReader {
    /// A reader for the response to listen request `listen_id` with this `Content-Type`.
    pub(crate) fn new(listen_id: i64, content_type: Option<&str>) -> Self {
        let is_sse = super::reply::is_event_stream(content_type);
        ListenReader {
            listen_id,
            sse: is_sse.then(|| SseDecoder::new(MAX_SSE_EVENT)),
            json: Vec::new(),
            events: VecDeque::new(),
            closed: false,
        }
    }

    /// Takes in the next chunk of the body.
    pub(crate) fn handle_body(&mut self, chunk: &[u8]) {
        match &mut self.sse {
            Some(decoder) => {
                decoder.push(chunk);
                self.drain_sse();
            }
            None if self.json.len() + chunk.len() <= MAX_SSE_EVENT => {
                self.json.extend_from_slice(chunk)
            }
            None => self.json.clear(),
        }
    }

    /// The body ended: a JSON body is read now; a stream that ended without its closing
    /// response still yields [`ListenEvent::Closed`] (with a `null` message).
    pub(crate) fn handle_end(&mut self) {
        if let Some(decoder) = &mut self.sse {
            decoder.finish();
            self.drain_sse();
        } else if let Ok(message) = serde_json::from_slice::<Value>(&self.json) {
            self.json.clear();
            self.take(&message);
        }
        if !self.closed {
            self.closed = true;
            self.push(ListenEvent::Closed(Value::Null));
        }
    }

    /// The next event read, oldest first.
    #[must_use]
    pub(crate) fn poll_event(&mut self) -> Option<ListenEvent> {
        self.events.pop_front()
    }

    /// Whether the closing response (or the end of the body) was seen.
    #[cfg(test)]
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    fn drain_sse(&mut self) {
        while let Some(item) = self.sse.as_mut().and_then(SseDecoder::poll_item) {
            let Ok(SseItem::Event(event)) = item else {
                continue;
            };
            if let Ok(message) = serde_json::from_slice::<Value>(&event.data) {
                self.take(&message);
            }
        }
    }

    fn take(&mut self, message: &Value) {
        if self.closed {
            return;
        }
        if let Some(event) = listen_event_from_message(message, self.listen_id) {
            self.closed = matches!(event, ListenEvent::Closed(_));
            self.push(event);
        }
    }

    fn push(&mut self, event: ListenEvent) {
        if self.events.len() >= MAX_PENDING_EVENTS {
            self.events.pop_front();
        }
        self.events.push_back(event);
    }
}
