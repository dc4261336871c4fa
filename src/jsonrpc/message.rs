//! The JSON-RPC 2.0 envelopes: request, notification, response, and batches of them.

use std::borrow::Cow;

use super::{DecodeError, ErrorObject, RawJson, RequestId};

/// A method name. Well-known MCP method names are interned (no allocation per message).
pub(crate) type Method = Cow<'static, str>;

/// A request: it has an id and expects exactly one response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The requestor's id for this request.
    pub id: RequestId,
    /// The method to invoke.
    pub method: Method,
    /// The params, unparsed (`None` when absent or `null`).
    pub params: Option<RawJson>,
}

/// A notification: no id, no response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    /// The notification's method.
    pub method: Method,
    /// The params, unparsed (`None` when absent or `null`).
    pub params: Option<RawJson>,
}

/// A response: a result or an error for an earlier request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The id of the request this answers. `None` only for an error response whose request id
    /// could not be read (sent as `null` or omitted).
    pub id: Option<RequestId>,
    /// The result, or the error.
    pub outcome: Result<RawJson, ErrorObject>,
}

/// One JSON-RPC message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response (result or error).
    Response(Response),
}

/// One decoded frame: a single message or a batch (a JSON array).
///
/// Whether a batch is acceptable is the session's decision (only 2025-03-26 allows them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Incoming {
    /// A single message.
    Single(Message),
    /// A non-empty batch; each element decoded on its own.
    Batch(Vec<Result<Message, DecodeError>>),
}

impl Message {
    /// The method, for requests and notifications.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            Message::Response(_) => None,
        }
    }

    /// The id, for requests and responses.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Message::Request(r) => Some(&r.id),
            Message::Notification(_) => None,
            Message::Response(r) => r.id.as_ref(),
        }
    }
}

impl Response {
    /// A success response.
    pub fn result(id: RequestId, result: RawJson) -> Self {
        Response {
            id: Some(id),
            outcome: Ok(result),
        }
    }

    /// An error response.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Response {
            id,
            outcome: Err(error),
        }
    }
}

/// Interns a method name: the MCP method names of every revision map to static strings.
pub fn intern_method(name: &str) -> Method {
    // The last byte first, as the decoder's `parse_method` does: names of one length often
    // share their start (`tools/list`, `tools/call`), and each full comparison is a call.
    let last = name.as_bytes().last();
    for known in super::KNOWN_METHODS {
        if known.as_bytes().last() == last && *known == name {
            return Cow::Borrowed(known);
        }
    }
    Cow::Owned(name.to_owned())
}
