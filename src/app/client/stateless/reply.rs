//! Reading one reply to a 2026-07-28 request: the JSON-RPC response with the request's id,
//! found in a JSON body, an SSE body or an ndjson line, and sorted into complete,
//! input-required or error. `resultType` missing means complete (the revision's default).

use serde_json::Value;

use crate::framing::{SseDecoder, SseItem};
use crate::jsonrpc::ErrorObject;
use crate::model::stateless::InputRequests;

/// Largest SSE event accepted in a response body.
pub const MAX_SSE_EVENT: usize = 4 * 1024 * 1024;

/// What the server answered to one request.
#[derive(Clone, Debug)]
pub(crate) enum Reply {
    /// A final result (`resultType` `complete` or absent), as sent (with `resultType`,
    /// `ttlMs`, `cacheScope` and `_meta`, kept as data); also a tasks-extension
    /// `CreateTaskResult` (`resultType` `task`), which `TaskHandle::from_create_result` reads as a
    /// task handle.
    Complete(Value),
    /// `resultType: "input_required"`: the server needs these inputs, then a retry.
    InputRequired {
        /// The embedded requests, by key.
        requests: InputRequests,
        /// The opaque state to echo byte for byte (`None`: send none).
        request_state: Option<String>,
    },
    /// A JSON-RPC error.
    Error(ErrorObject),
}

/// Why no reply could be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ReplyError {
    /// The body held no response with the request's id.
    NoResponse,
    /// The response was not a JSON-RPC response (or a result not an object, or an unknown
    /// `resultType`).
    Malformed(String),
}

/// Reads the response to request `id` from one JSON-RPC message.
/// `Ok(None)` when the message is something else (a notification, another id).
pub(crate) fn reply_from_message(message: &Value, id: i64) -> Result<Option<Reply>, ReplyError> {
    if message.get("method").is_some() || message.get("id").and_then(Value::as_i64) != Some(id) {
        return Ok(None);
    }
    if let Some(error) = message.get("error") {
        let error: ErrorObject = serde_json::from_value(error.clone())
            .map_err(|e| ReplyError::Malformed(format!("error object: {e}")))?;
        return Ok(Some(Reply::Error(error)));
    }
    let Some(result) = message.get("result") else {
        return Err(ReplyError::Malformed("neither result nor error".into()));
    };
    if !result.is_object() {
        return Err(ReplyError::Malformed("the result is not an object".into()));
    }
    match result.get("resultType").map(|t| t.as_str()) {
        None | Some(Some("complete" | "task")) => Ok(Some(Reply::Complete(result.clone()))),
        Some(Some("input_required")) => {
            let requests = match result.get("inputRequests") {
                None | Some(Value::Null) => InputRequests::new(),
                Some(v) => serde_json::from_value(v.clone())
                    .map_err(|e| ReplyError::Malformed(format!("inputRequests: {e}")))?,
            };
            let request_state = match result.get("requestState") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => {
                    return Err(ReplyError::Malformed("requestState is not a string".into()))
                }
            };
            Ok(Some(Reply::InputRequired {
                requests,
                request_state,
            }))
        }
        Some(other) => Err(ReplyError::Malformed(format!(
            "unknown resultType {other:?}"
        ))),
    }
}

/// Whether a response's `Content-Type` is `text/event-stream` (any case, parameters allowed).
pub(super) fn is_event_stream(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|c| {
        c.trim_start()
            .get(..17)
            .is_some_and(|head| head.eq_ignore_ascii_case("text/event-stream"))
    })
}

/// Reads the response to request `id` from a whole HTTP body: JSON (`application/json`) or
/// server-sent events (`text/event-stream`, every event's data one message; notifications
/// before the response are skipped).
pub(crate) fn reply_from_http_body(
    content_type: Option<&str>,
    body: &[u8],
    id: i64,
) -> Result<Reply, ReplyError> {
    if !is_event_stream(content_type) {
        let message: Value = serde_json::from_slice(body)
            .map_err(|e| ReplyError::Malformed(format!("body is not JSON: {e}")))?;
        return reply_from_message(&message, id)?.ok_or(ReplyError::NoResponse);
    }
    let mut decoder = SseDecoder::new(MAX_SSE_EVENT);
    decoder.push(body);
    decoder.finish();
    while let Some(item) = decoder.poll_item() {
        let Ok(SseItem::Event(event)) = item else {
            continue;
        };
        let Ok(message) = serde_json::from_slice::<Value>(&event.data) else {
            continue;
        };
        if let Some(reply) = reply_from_message(&message, id)? {
            return Ok(reply);
        }
    }
    Err(ReplyError::NoResponse)
}
