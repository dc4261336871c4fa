//! What a handler holds while it runs: the request context, and the outbox items through
//! which it (and a `ServerHandle`) talks to the server state machine.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::handle::ServerHandle;
use super::outbox::{OutboxItem, Shared};
use super::stateless::mrtr::InputState;
use crate::jsonrpc::{self as m, ErrorObject, RawJson, RequestId};
use crate::model::stateless::{InputKind, InputRequest};
use crate::model::{ClientCapabilities, LoggingLevel};
use crate::runtime::{oneshot, CancelToken, Outbox};

/// Why a server→client request made by a handler failed.
#[derive(Clone, Debug, PartialEq)]
pub enum PeerError {
    /// The client did not declare the capability the method needs (e.g. `sampling`).
    CapabilityNotDeclared {
        /// The missing capability.
        capability: &'static str,
    },
    /// The session refused to send it (closed, too many pending, …).
    Refused(String),
    /// The client answered with a JSON-RPC error.
    Error(ErrorObject),
    /// No answer within the request timeout.
    TimedOut,
    /// The request was cancelled.
    Cancelled,
    /// The session closed first.
    Closed,
}

impl fmt::Display for PeerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerError::CapabilityNotDeclared { capability } => {
                write!(f, "the client did not declare the {capability} capability")
            }
            PeerError::Refused(why) => write!(f, "request not sent: {why}"),
            PeerError::Error(e) => write!(f, "client error: {e}"),
            PeerError::TimedOut => f.write_str("the client did not answer in time"),
            PeerError::Cancelled => f.write_str("the request was cancelled"),
            PeerError::Closed => f.write_str("the session closed"),
        }
    }
}

impl std::error::Error for PeerError {}

/// Given to every handler: who is asking, and the ways to talk back while working.
/// Clone + Send + Sync; every method is non-blocking.
#[derive(Clone)]
pub struct RequestContext {
    id: RequestId,
    cancel: CancelToken,
    outbox: Outbox<OutboxItem>,
    shared: Arc<Shared>,
    /// Set when the request is served statelessly (2026-07-28): inputs become rounds.
    input: Option<Arc<InputState>>,
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.id)
            .field("cancelled", &self.cancel.is_cancelled())
            .finish()
    }
}

impl RequestContext {
    pub(crate) fn new(
        id: RequestId,
        cancel: CancelToken,
        outbox: Outbox<OutboxItem>,
        shared: Arc<Shared>,
    ) -> Self {
        RequestContext {
            id,
            cancel,
            outbox,
            shared,
            input: None,
        }
    }

    /// Serves the request statelessly: inputs are asked through `input` rounds.
    pub(crate) fn with_input(mut self, input: Option<Arc<InputState>>) -> Self {
        self.input = input;
        self
    }

    /// Whether the request is served statelessly (2026-07-28, no session): `elicit`,
    /// `sample`, `list_roots` and `input` then end the run with an input-required result
    /// when their answer is not in the retry yet (docs/stateless.md).
    pub fn is_stateless(&self) -> bool {
        self.input.is_some()
    }

    /// The client capabilities a stateless request declared in its `_meta` (`None` in a
    /// stateful session, where the session checks them).
    pub fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.input.as_ref().map(|i| i.capabilities())
    }

    /// Asks the client for input under `key`: in a stateful session, the embedded request
    /// sent as a server→client request (the key is unused); served statelessly, the answer
    /// from the retry's `inputResponses`, or else an input-required result asking it under
    /// `key` (the handler runs again on the retry). `request.method` must be
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub fn input(
        &self,
        key: impl Into<String>,
        request: InputRequest,
    ) -> impl Future<Output = Result<Value, PeerError>> + Send {
        let kind = request.kind();
        let key = key.into();
        let method = kind.map(InputKind::method);
        self.ask(Some(key), method, request)
    }

    /// The id of the request being handled.
    pub fn request_id(&self) -> &RequestId {
        &self.id
    }

    /// Reports progress (a no-op when the client sent no progressToken). Dropped when the
    /// outbox is full.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.outbox.push(OutboxItem::Progress {
            id: self.id.clone(),
            progress,
            total,
            message,
        });
    }

    /// Sends `notifications/message` unless `level` is below the client's `logging/setLevel`.
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) {
        if !self.shared.passes(level) {
            return;
        }
        let mut params = Map::new();
        params.insert("level".to_owned(), Value::String(level.as_str().to_owned()));
        params.insert("data".to_owned(), data);
        if let Some(logger) = logger {
            params.insert("logger".to_owned(), Value::String(logger.to_owned()));
        }
        let params = Value::Object(params);
        self.outbox.push(OutboxItem::Notify {
            related: Some(self.id.clone()),
            method: m::NOTIFICATIONS_MESSAGE,
            params: RawJson::try_from(&params).ok(),
        });
    }

    /// Whether the client cancelled this request (its response will be suppressed).
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// A future that resolves when the client cancels this request.
    pub fn cancelled(&self) -> impl Future<Output = ()> + Send + Unpin + 'static {
        self.cancel.cancelled()
    }

    /// `sampling/createMessage` with `params` verbatim; resolves with the client's result.
    pub fn sample(&self, params: Value) -> impl Future<Output = Result<Value, PeerError>> + Send {
        self.peer_request(m::SAMPLING_CREATE_MESSAGE, Some(params))
    }

    /// `elicitation/create` with `params` verbatim; resolves with the client's result.
    pub fn elicit(&self, params: Value) -> impl Future<Output = Result<Value, PeerError>> + Send {
        self.peer_request(m::ELICITATION_CREATE, Some(params))
    }

    /// `roots/list`; resolves with the client's result (`{"roots": [...]}`).
    pub fn list_roots(&self) -> impl Future<Output = Result<Value, PeerError>> + Send {
        self.peer_request(m::ROOTS_LIST, None)
    }

    fn peer_request(
        &self,
        method: &'static str,
        params: Option<Value>,
    ) -> impl Future<Output = Result<Value, PeerError>> + Send {
        let request = InputRequest {
            method: method.to_owned(),
            params,
            extra: Default::default(),
        };
        self.ask(None, Some(method), request)
    }

    /// One input: a round of the stateless exchange, or a server→client request.
    fn ask(
        &self,
        key: Option<String>,
        method: Option<&'static str>,
        request: InputRequest,
    ) -> impl Future<Output = Result<Value, PeerError>> + Send {
        enum Asked {
            Answered(Value),
            Awaiting,
            Sent(crate::runtime::OneshotReceiver<Result<Value, PeerError>>),
            Parked(Option<crate::runtime::OneshotReceiver<Value>>),
            Refused,
        }
        let asked = match (&self.input, method) {
            (Some(input), _) => {
                let key = match (key, request.kind()) {
                    (Some(key), _) => key,
                    (None, Some(kind)) => input.auto_key(kind),
                    (None, None) => String::new(),
                };
                match input.park_in_task(&key, &request) {
                    Some(parked) => Asked::Parked(parked),
                    None => match input.ask(key, request) {
                        Some(answer) => Asked::Answered(answer),
                        None => Asked::Awaiting,
                    },
                }
            }
            (None, Some(method)) => Asked::Sent(self.send_peer_request(method, request.params)),
            (None, None) => Asked::Refused,
        };
        async move {
            match asked {
                Asked::Answered(answer) => Ok(answer),
                // The server ends this run with an input-required result.
                Asked::Awaiting => std::future::pending().await,
                Asked::Sent(rx) => rx.await.unwrap_or(Err(PeerError::Closed)),
                // A task's input: answered by `tasks/update` (gone when the task is).
                Asked::Parked(Some(rx)) => rx.await.ok_or(PeerError::Closed),
                Asked::Parked(None) => Err(PeerError::Refused("task input refused".to_owned())),
                Asked::Refused => Err(PeerError::Refused(
                    "not an embeddable input request".to_owned(),
                )),
            }
        }
    }

    fn send_peer_request(
        &self,
        method: &'static str,
        params: Option<Value>,
    ) -> crate::runtime::OneshotReceiver<Result<Value, PeerError>> {
        let (reply, rx) = oneshot();
        let params = params.and_then(|p| RawJson::try_from(&p).ok());
        // Required: the handler awaits the answer, so it must not be dropped. Bounded because
        // each live handler has at most one such request pending while it awaits it.
        self.outbox.push_required(OutboxItem::PeerRequest {
            related: Some(self.id.clone()),
            method,
            params,
            reply,
        });
        rx
    }

    /// Asks the transport to end this request's SSE response stream now, before the result
    /// (SEP-1699 polling: the client resumes with `Last-Event-ID` and gets the rest). Only
    /// HTTP transports act on it, and only for 2025-11-25 sessions; elsewhere it is a no-op.
    pub fn close_sse_stream(&self) {
        self.outbox.push(OutboxItem::CloseStream {
            id: self.id.clone(),
        });
    }

    /// A handle to change registrations or notify resource updates.
    pub fn server(&self) -> ServerHandle {
        ServerHandle::new(self.outbox.clone(), self.shared.clone())
    }

    /// Sends `notifications/resources/updated` for `uri` if the client subscribed to it.
    pub fn notify_resource_updated(&self, uri: impl Into<String>) {
        self.server().notify_resource_updated(uri);
    }
}
