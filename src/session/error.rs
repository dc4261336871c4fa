//! Errors the session returns to the application for commands it refuses.

use std::fmt;

use crate::framing::FrameError;
use crate::jsonrpc::{ErrorObject, HeadKind};

/// Why the session refused to send something (a request, a notification, progress, a
/// cancellation or a response). Nothing went on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendError {
    /// The session is closed.
    Closed,
    /// Lifecycle gating: this cannot be sent in the current state (e.g. a request other than
    /// `ping` before the handshake finished).
    NotInitialized,
    /// The command does not fit this side (e.g. `initialize` on a server, or a second
    /// `initialize`).
    WrongRole,
    /// The method belongs to the other direction (e.g. a client sending `roots/list`).
    WrongDirection {
        /// The refused method.
        method: String,
    },
    /// The peer (for requests) or this side (for notifications) did not declare the capability
    /// the method needs.
    CapabilityNotDeclared {
        /// The refused method.
        method: String,
        /// The missing capability, e.g. `"tools"` or `"resources.subscribe"`.
        capability: &'static str,
    },
    /// The session sends this itself (`initialize`, `notifications/initialized`,
    /// `notifications/cancelled`, `notifications/progress`); use the dedicated command.
    Reserved {
        /// The refused method.
        method: String,
    },
    /// `max_pending_outbound` reached.
    TooManyPending,
    /// `max_outbound_queue` reached: drain `poll_transmit` first.
    QueueFull,
    /// No such request (pending outbound for `cancel`, in flight inbound for progress and
    /// `respond`: already answered, or never received).
    UnknownRequest,
    /// `initialize` is never cancellable.
    NotCancellable,
    /// Params must be a JSON object or array (JSON-RPC 2.0); `progress: true` needs an object
    /// (or absent params); progress values must be finite numbers.
    InvalidParams,
    /// `respond_serialize`: the result failed to serialise; `respond_with`: the writer was
    /// misused or the value left unfinished. Nothing was sent; the request is still in flight.
    InvalidResult,
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::Closed => f.write_str("session closed"),
            SendError::NotInitialized => f.write_str("not allowed before initialization"),
            SendError::WrongRole => f.write_str("not allowed for this side of the session"),
            SendError::WrongDirection { method } => {
                write!(f, "{method} is not sent in this direction")
            }
            SendError::CapabilityNotDeclared { method, capability } => {
                write!(f, "{method} needs capability {capability}, not declared")
            }
            SendError::Reserved { method } => write!(f, "{method} is sent by the session itself"),
            SendError::TooManyPending => f.write_str("too many pending requests"),
            SendError::QueueFull => f.write_str("outbound queue full"),
            SendError::UnknownRequest => f.write_str("no such request"),
            SendError::NotCancellable => f.write_str("initialize cannot be cancelled"),
            SendError::InvalidParams => f.write_str("params must be a JSON object or array"),
            SendError::InvalidResult => f.write_str("the result was not one valid JSON value"),
        }
    }
}

impl std::error::Error for SendError {}

impl FrameError {
    /// The error response the peer gets for this frame.
    pub(crate) fn to_error_object(&self) -> ErrorObject {
        match self {
            FrameError::TooLong { limit, len, head } => {
                let what = match head.kind {
                    HeadKind::Response => "response",
                    HeadKind::Request | HeadKind::Unknown => "request",
                };
                ErrorObject::invalid_request(format!(
                    "Invalid Request: {}",
                    describe_too_long(what, *limit, *len)
                ))
            }
            FrameError::Malformed(why) => ErrorObject::parse_error(format!("Parse error: {why}")),
        }
    }
}

/// "request of 8388608 bytes exceeds the 4 MiB limit" (`len` known) or "request exceeds the
/// 4 MiB limit (4194304 bytes)".
pub fn describe_too_long(what: &str, limit: usize, len: Option<u64>) -> String {
    let shown = describe_limit(limit);
    match len {
        Some(len) => format!("{what} of {len} bytes exceeds the {shown} limit"),
        None if shown.ends_with(" bytes") => format!("{what} exceeds the {shown} limit"),
        None => format!("{what} exceeds the {shown} limit ({limit} bytes)"),
    }
}

/// A byte limit as people write it: "16 MiB", "64 KiB", "100 bytes".
pub fn describe_limit(limit: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    if limit >= MIB && limit % MIB == 0 {
        format!("{} MiB", limit / MIB)
    } else if limit >= KIB && limit % KIB == 0 {
        format!("{} KiB", limit / KIB)
    } else {
        format!("{limit} bytes")
    }
}
