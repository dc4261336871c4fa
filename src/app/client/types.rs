//! What the client's application sees: call errors, events, per-call options and the context
//! given to handlers of server→client requests.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::jsonrpc::{code, ErrorObject, RequestId};
use crate::model::{LoggingMessageParams, ProtocolVersion};
use crate::runtime::CancelToken;
use crate::session::{CloseReason, SendError};

/// Why a client call failed, whatever the revision: a session's typed call, or a 2026-07-28
/// stateless call of [`stateless`](super::stateless).
#[derive(Clone, Debug, PartialEq)]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    Rpc(ErrorObject),
    /// No answer within the call's timeout (on a session, `notifications/cancelled` was sent).
    TimedOut,
    /// The caller cancelled the call (token or drop); `notifications/cancelled` was sent.
    Cancelled,
    /// The session closed before an answer (the reason when the session gave one).
    Closed(Option<CloseReason>),
    /// The session refused to send the request (not initialized, capability not declared,
    /// too many pending requests, …). Nothing went on the wire.
    NotSent(SendError),
    /// The server's reply could not be read, or its result did not match the method's result
    /// type.
    InvalidResult(String),
    /// The `Client` state machine was dropped while the call was pending.
    ClientGone,
    /// An HTTP status without a JSON-RPC response (404, 405, 5xx ...).
    Http {
        /// The status code.
        status: u16,
    },
    /// The server kept asking for inputs past the round limit.
    TooManyRounds(u32),
    /// An input request could not be answered (no handler, or the handler failed).
    Input(String),
    /// The transport failed (connection, closed pipe) or the stateless client closed.
    Transport(String),
    /// A limit of the stateless client was reached (reply body size, calls in flight, unread
    /// events).
    Limit(String),
}

impl ClientError {
    /// The JSON-RPC error code when the server answered with an error.
    pub fn rpc_code(&self) -> Option<i64> {
        match self {
            ClientError::Rpc(e) => Some(e.code),
            _ => None,
        }
    }

    /// Whether the server said it does not know the method (-32601).
    pub fn is_method_not_found(&self) -> bool {
        self.rpc_code() == Some(code::METHOD_NOT_FOUND)
    }

    /// Whether the server rejected the params (-32602).
    pub fn is_invalid_params(&self) -> bool {
        self.rpc_code() == Some(code::INVALID_PARAMS)
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Rpc(e) => {
                let data = e
                    .data
                    .as_ref()
                    .map(|d| format!(" (data: {})", d.get()))
                    .unwrap_or_default();
                write!(f, "JSON-RPC error {}: {}{data}", e.code, e.message)
            }
            ClientError::TimedOut => f.write_str("no answer within the timeout"),
            ClientError::Cancelled => f.write_str("the request was cancelled"),
            ClientError::Closed(None) => f.write_str("the session closed"),
            ClientError::Closed(Some(reason)) => {
                write!(f, "the session closed: {}", describe_close(reason))
            }
            ClientError::NotSent(e) => write!(f, "the request was not sent: {e}"),
            ClientError::InvalidResult(e) => write!(f, "unreadable reply: {e}"),
            ClientError::ClientGone => f.write_str("the client state machine was dropped"),
            ClientError::Http { status } => {
                write!(f, "HTTP {status} without a JSON-RPC answer")
            }
            ClientError::TooManyRounds(n) => write!(f, "the server asked for input {n} times"),
            ClientError::Input(why) => {
                write!(f, "cannot answer the server's input request: {why}")
            }
            ClientError::Transport(why) => f.write_str(why),
            ClientError::Limit(why) => write!(f, "client limit reached: {why}"),
        }
    }
}

impl std::error::Error for ClientError {}

/// A human-readable account of why a session closed.
pub fn describe_close(reason: &CloseReason) -> String {
    match reason {
        CloseReason::Local => "closed locally".to_owned(),
        CloseReason::UnsupportedVersion { server_version } => {
            format!("the server chose protocol version {server_version:?}, which this client does not support")
        }
        // The error may come from the server or from the transport under it (-32000 when an
        // HTTP transport closed or a POST failed), so it does not say who refused.
        CloseReason::InitializeFailed(e) => format!("initialize failed: {e}"),
        CloseReason::InitializeTimedOut => {
            "the server did not answer initialize in time".to_owned()
        }
        CloseReason::InvalidInitializeResult(e) => format!("invalid initialize result: {e}"),
        CloseReason::KeepAliveTimedOut => "a keep-alive ping got no answer".to_owned(),
        CloseReason::PeerClosed => "the server ended the connection".to_owned(),
    }
}

/// Progress reported by the server for one of our calls.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Our request id.
    pub id: RequestId,
    /// Progress so far.
    pub progress: f64,
    /// Total, when known.
    pub total: Option<f64>,
    /// A human-readable message.
    pub message: Option<String>,
}

/// A progress callback; runs inside the state machine, so it must be quick.
pub(crate) type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync + 'static>;

/// Per-call options of [`ClientHandle::call_tool_with`](super::ClientHandle::call_tool_with).
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Overrides the session's request timeout.
    pub timeout: Option<Duration>,
    /// Asks the server for progress (a progressToken is attached) and receives it here.
    pub progress: Option<ProgressFn>,
    /// Cancelling it abandons the call and sends `notifications/cancelled`.
    pub cancel: Option<CancelToken>,
    /// The server's sampling request whose handler makes this call
    /// ([`HandlerContext::request_id`]): a `tools/call` made so is nested in it for the
    /// [`SamplingPolicy`](super::SamplingPolicy)'s depth and token budget. Without it, a tool
    /// call made while exactly one sampling handler runs is nested in that one.
    pub parent: Option<RequestId>,
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel)
            .field("parent", &self.parent)
            .finish()
    }
}

/// Something the server told the client, for the application (`Client::poll_event`).
#[derive(Clone, Debug, PartialEq)]
pub enum ClientEvent {
    /// The handshake finished.
    Initialized {
        /// The negotiated version.
        protocol_version: ProtocolVersion,
    },
    /// `notifications/message`.
    Log(LoggingMessageParams),
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/updated` for a subscribed resource.
    ResourceUpdated {
        /// The resource that changed.
        uri: String,
    },
    /// Progress of one of our calls that has no progress callback.
    Progress(Progress),
    /// Any other server notification, verbatim (e.g. `notifications/elicitation/complete`).
    Notification {
        /// The method.
        method: String,
        /// The params as JSON (`Null` when absent or unparsable).
        params: serde_json::Value,
    },
    /// A response matched none of our calls (see `Event::UnmatchedResponse`): the server
    /// answered an id never sent, or spelled it as the other JSON type.
    UnmatchedResponse {
        /// The id the response carries.
        id: RequestId,
        /// A pending call whose id is the same text as the other JSON type, if any.
        pending_other_type: Option<RequestId>,
    },
    /// The session closed; every pending call failed with [`ClientError::Closed`].
    Closed {
        /// Why.
        reason: CloseReason,
    },
}

impl ClientEvent {
    /// A human-readable description of a `Closed` event's reason (`None` for other events).
    pub fn close_description(&self) -> Option<String> {
        match self {
            ClientEvent::Closed { reason } => Some(describe_close(reason)),
            _ => None,
        }
    }
}

/// What a handler of a server→client request gets besides the params.
#[derive(Clone, Debug)]
pub struct HandlerContext {
    pub(crate) id: RequestId,
    pub(crate) cancel: CancelToken,
}

impl HandlerContext {
    /// The server's request id.
    pub fn request_id(&self) -> &RequestId {
        &self.id
    }

    /// Whether the server cancelled the request (or the session closed).
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Resolves when the server cancels the request (or the session closes).
    pub fn cancelled(&self) -> impl std::future::Future<Output = ()> + Send + Unpin + 'static {
        self.cancel.cancelled()
    }
}
