//! Small pieces of the endpoint that need none of its state: error responses, the stand-in
//! handshake of sessionless mode, and reading `notifications/cancelled`.

use std::time::Instant;

use bytes::Bytes;
use serde_json::json;

use super::machine::SessionMachine;
use super::types::{Body, HttpResponse};
use crate::jsonrpc::{ErrorObject, Message, RequestId};
use crate::model::ProtocolVersion;

const JSON: &str = "application/json";

/// Feeds `machine` an `initialize` and `initialized` for `version` and discards the answer
/// (sessionless mode has no handshake of its own).
pub(crate) fn handshake<M: SessionMachine>(
    machine: &mut M,
    now: Instant,
    version: ProtocolVersion,
) {
    let init = json!({"jsonrpc": "2.0", "id": "stateless-init", "method": "initialize",
        "params": {"protocolVersion": version.as_str(), "capabilities": {},
                   "clientInfo": {"name": "stateless", "version": "0"}}});
    machine.handle_input(now, Bytes::from(init.to_string()));
    let mut buf = Vec::new();
    while machine.poll_transmit(&mut buf).is_some() {
        buf.clear();
    }
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    machine.handle_input(now, Bytes::from(done.to_string()));
}

/// The request a `notifications/cancelled` names, if `message` is one.
pub(crate) fn cancelled_id(message: &Message) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "requestId")]
        request_id: RequestId,
    }
    match message {
        Message::Notification(n) if n.method == "notifications/cancelled" => n
            .params
            .as_ref()?
            .parse::<Params>()
            .ok()
            .map(|p| p.request_id),
        _ => None,
    }
}

/// The message of the `-32603` error a request still being handled gets when the server
/// shuts down.
pub(crate) const SHUTTING_DOWN: &str = "Internal error: the server is shutting down";

pub(crate) fn method_not_allowed() -> HttpResponse {
    error(405, "Method Not Allowed").with_header("Allow", "GET, POST, DELETE")
}

/// An HTTP error with a JSON-RPC error body (id null), as the TS SDK answers.
pub(crate) fn error(status: u16, message: &str) -> HttpResponse {
    rpc_error(status, -32000, message)
}

/// An HTTP error with a JSON-RPC error body whose id is null: for refusals made before the
/// body is read, or of a body that holds no single request.
pub(crate) fn rpc_error(status: u16, code: i64, message: &str) -> HttpResponse {
    rpc_error_with_id(status, None, &ErrorObject::new(code, message))
}

/// A refusal decided from the headers and the endpoint's tables (unknown session, full
/// tables, an unsupported version header): the HTTP status, the JSON-RPC error and an
/// optional `Retry-After`. It becomes a response once the caller knows which request it
/// refuses, so a body holding one request is answered with that request's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) status: u16,
    code: i64,
    message: &'static str,
    retry_after: Option<u64>,
}

impl Refusal {
    pub(crate) const fn new(status: u16, code: i64, message: &'static str) -> Self {
        Refusal {
            status,
            code,
            message,
            retry_after: None,
        }
    }

    /// The same refusal with a `Retry-After` of `secs`.
    pub(crate) const fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }

    /// The response, naming `id` (the refused request's; `None` writes null).
    pub(crate) fn answer(self, id: Option<&RequestId>) -> HttpResponse {
        let error = ErrorObject::new(self.code, self.message);
        let resp = rpc_error_with_id(self.status, id, &error);
        match self.retry_after {
            Some(secs) => resp.with_header_value("Retry-After", secs.to_string()),
            None => resp,
        }
    }
}

/// 413 for a POST body over `limit` (`body` holds at least its first bytes): the JSON-RPC
/// error names the limit and carries the request's id when those first bytes show it.
pub(crate) fn too_large(body: &[u8], limit: usize) -> HttpResponse {
    let head = crate::jsonrpc::FrameHead::scan(body);
    let id = head.id.clone();
    let error = crate::framing::FrameError::TooLong {
        limit,
        len: None,
        head,
    }
    .to_error_object();
    rpc_error_with_id(413, id.as_ref(), &error)
}

/// `503 Service Unavailable` for the request whose body is `body`, when the driver cannot
/// serve it now (its shared store did not answer, too many requests wait for other
/// instances): the JSON-RPC error -32000 `Service Unavailable: {reason}`, with the request's
/// id when `body` shows one (`null` for a batch, a notification or a body without an id).
pub fn service_unavailable(body: &[u8], reason: &str) -> HttpResponse {
    let id = crate::jsonrpc::FrameHead::scan(body).id;
    let error = crate::jsonrpc::ErrorObject::new(-32000, format!("Service Unavailable: {reason}"));
    rpc_error_with_id(503, id.as_ref(), &error)
}

/// 400 for a body that is not a valid message: the JSON-RPC error carries the id the decoder
/// recovered (a request cut short or with a bad byte still shows it), `null` otherwise.
pub(crate) fn undecodable(error: &crate::jsonrpc::DecodeError) -> HttpResponse {
    rpc_error_with_id(400, error.id.as_ref(), &error.to_error_object())
}

/// `status` with a JSON-RPC error body for `id` (`"id": null` without one).
pub(crate) fn rpc_error_with_id(
    status: u16,
    id: Option<&crate::jsonrpc::RequestId>,
    error: &crate::jsonrpc::ErrorObject,
) -> HttpResponse {
    let mut buf = Vec::new();
    crate::jsonrpc::encode_error(&mut buf, id, error, crate::jsonrpc::MissingId::Null);
    let mut resp = HttpResponse::status(status).with_header("Content-Type", JSON);
    resp.body = Body::Full(Bytes::from(buf));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(resp: &HttpResponse) -> serde_json::Value {
        match &resp.body {
            Body::Full(bytes) => serde_json::from_slice(bytes).expect("a JSON body"),
            _ => panic!("not a whole body"),
        }
    }

    #[test]
    fn service_unavailable_answers_the_request_by_its_id() {
        let resp = service_unavailable(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#, "down");
        assert_eq!(resp.status, 503);
        let reply = json(&resp);
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["error"]["code"], -32000);
        assert_eq!(reply["error"]["message"], "Service Unavailable: down");
        let text_id = br#"{"method":"tools/call","id":"a-1","jsonrpc":"2.0","params":{}}"#;
        assert_eq!(json(&service_unavailable(text_id, "down"))["id"], "a-1");
    }

    #[test]
    fn service_unavailable_without_a_request_id_says_null() {
        let bodies: [&[u8]; 4] = [
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            b"not json",
            b"",
        ];
        for body in bodies {
            let resp = service_unavailable(body, "down");
            assert_eq!(resp.status, 503);
            assert_eq!(json(&resp)["id"], serde_json::Value::Null);
        }
    }
}
