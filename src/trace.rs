//! Protocol trace: a cheap description of one frame a machine took in or handed out, for a
//! host that wants to watch the conversation.
//!
//! A driver that has a listener builds a [`FrameTrace`] for each frame it reads or writes
//! ([`FrameTrace::new`]) and hands it, with the frame's bytes, to its [`TraceSink`]. A driver
//! without a listener builds nothing: the cost when tracing is off is one branch on an
//! `Option`. The envelope comes from the crate's JSON-RPC decoder ([`crate::jsonrpc::decode`]),
//! which keeps params and results as slices of the frame, so no payload is copied. The core
//! neither reads a clock nor writes anywhere: the time comes from the driver, and the sink
//! decides where the trace goes.

use std::time::Instant;

use bytes::Bytes;

use crate::jsonrpc::{decode, Incoming, Message, RequestId};

/// Which way a frame went, seen from the machine that traces it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Handed out to the peer.
    Send,
    /// Taken in from the peer.
    Recv,
}

impl Direction {
    /// `"send"` or `"recv"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Send => "send",
            Direction::Recv => "recv",
        }
    }
}

/// What kind of JSON-RPC envelope a frame holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnvelopeKind {
    /// A request (method and id).
    Request,
    /// A notification (method, no id).
    Notification,
    /// A success response.
    Response,
    /// An error response.
    Error,
    /// A batch (a JSON array of messages).
    Batch,
    /// Bytes the decoder refused.
    Invalid,
}

impl EnvelopeKind {
    /// The kind's name in lower case (`"request"`, `"error"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EnvelopeKind::Request => "request",
            EnvelopeKind::Notification => "notification",
            EnvelopeKind::Response => "response",
            EnvelopeKind::Error => "error",
            EnvelopeKind::Batch => "batch",
            EnvelopeKind::Invalid => "invalid",
        }
    }
}

/// One traced frame: which way it went, when, its size, and its decoded envelope (kind, method,
/// id and error code, without its payload).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameTrace {
    /// Which way it went.
    pub dir: Direction,
    /// When the driver read or wrote it (the driver's clock).
    pub at: Instant,
    /// Its size in bytes, framing (newline, SSE fields) excluded.
    pub bytes: usize,
    /// The kind of message.
    pub kind: EnvelopeKind,
    /// The method of a request or notification.
    pub method: Option<String>,
    /// The id as JSON text (`7`, `"a"`): of a request or response, or the id an invalid frame
    /// still shows.
    pub id: Option<String>,
    /// The error code of an error response, or the code an invalid frame earns.
    pub error_code: Option<i64>,
    /// The number of messages in a batch (1 otherwise).
    pub count: usize,
}

impl FrameTrace {
    /// Describes `frame`, read or written at `at`. Never fails: bytes the decoder refuses are
    /// [`EnvelopeKind::Invalid`] with the code they earn.
    pub fn new(dir: Direction, at: Instant, frame: &Bytes) -> FrameTrace {
        let mut trace = FrameTrace {
            dir,
            at,
            bytes: frame.len(),
            kind: EnvelopeKind::Invalid,
            method: None,
            id: None,
            error_code: None,
            count: 1,
        };
        match decode(frame) {
            Ok(Incoming::Single(message)) => trace.describe(&message),
            Ok(Incoming::Batch(items)) => {
                trace.kind = EnvelopeKind::Batch;
                trace.count = items.len();
            }
            Err(e) => {
                trace.id = e.id.as_ref().map(id_text);
                trace.error_code = Some(e.code());
            }
        }
        trace
    }

    /// Fills the envelope members from a single decoded message.
    fn describe(&mut self, message: &Message) {
        let (kind, error_code) = match message {
            Message::Request(_) => (EnvelopeKind::Request, None),
            Message::Notification(_) => (EnvelopeKind::Notification, None),
            Message::Response(r) => match &r.outcome {
                Ok(_) => (EnvelopeKind::Response, None),
                Err(e) => (EnvelopeKind::Error, Some(e.code)),
            },
        };
        self.kind = kind;
        self.method = message.method().map(str::to_owned);
        self.id = message.id().map(id_text);
        self.error_code = error_code;
    }
}

/// The id as JSON text: numbers bare, strings quoted.
fn id_text(id: &RequestId) -> String {
    let mut buf = Vec::new();
    id.write_json(&mut buf);
    String::from_utf8(buf).unwrap_or_default()
}

/// Where a driver sends its traces. A driver holds an `Option` of one and builds a
/// [`FrameTrace`] only when it is set.
pub trait TraceSink {
    /// One frame, with its bytes as they went over the wire (framing excluded).
    fn frame(&mut self, trace: &FrameTrace, raw: &[u8]);

    /// One HTTP message head: `start` is the request's `METHOD /path` or the response's status
    /// line, `headers` the MCP headers it carried. Ignored unless overridden.
    fn http(&mut self, _at: Instant, _dir: Direction, _start: &str, _headers: &[(&str, &str)]) {}

    /// One server-sent event's `id` and `retry` fields, when it had either. Ignored unless
    /// overridden.
    fn sse(&mut self, _at: Instant, _dir: Direction, _id: Option<&str>, _retry: Option<u64>) {}

    /// A conversation ended: `Some(id)` the HTTP session `id` (terminated by DELETE, expired,
    /// or evicted to make room), `None` every conversation the sink follows (the HTTP server
    /// shut down). Ignored unless overridden.
    fn ended(&mut self, _at: Instant, _session: Option<&str>) {}
}

/// The header names an HTTP trace shows (compared without case).
pub const TRACED_HEADERS: &[&str] = &[
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "mcp-method",
];

/// Whether an HTTP trace shows header `name`: the MCP headers and every `Mcp-Param-*`.
pub fn is_traced_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    TRACED_HEADERS.contains(&lower.as_str()) || lower.starts_with("mcp-param-")
}

#[cfg(test)]
#[path = "trace_tests.rs"]
mod tests;
