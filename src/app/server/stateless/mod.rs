//! The stateless front end of the server (2026-07-28): which inbound frames it serves
//! instead of the session, and how it starts one stateless exchange (validate, answer
//! `server/discover`, check `requestState`, then dispatch to the same registries). Beside it:
//! how an exchange ends (`reply.rs`), listen streams (`listen.rs`), multi-round-trip inputs
//! (`mrtr.rs`), tasks (`tasks.rs` over the shared table in `task_table.rs`), and the
//! `x-mcp-header` annotations a tool call's headers mirror (`param_headers.rs`). It uses
//! nothing of the stateful front end (`super::stateful`).
//!
//! Era rule, per connection (stdio: the process; HTTP: one machine per exchange):
//! - before any `initialize`, a request carrying `_meta["io.modelcontextprotocol/protocolVersion"]`
//!   (or naming a method only 2026-07-28 has) is served statelessly, and from the first one
//!   that passes validation the connection is stateless: an `initialize` then gets -32022 naming
//!   the stateless versions, and unmarked requests are validated (and refused) statelessly;
//! - once `initialize` reached the session, the connection is stateful: everything goes to the
//!   session as before, except a request whose `_meta` names another protocol version, which
//!   gets -32022 naming the negotiated one (eras never mix within a session).

pub(super) mod listen;
pub(super) mod mrtr;
pub(super) mod param_headers;
mod reply;
pub(super) mod task_table;
pub(super) mod tasks;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, LazyLock};
use std::time::Instant;

use bytes::Bytes;
use memchr::memmem::Finder;
use serde_json::{Map, Value};

use crate::app::server::Server;
use crate::jsonrpc::{
    self as m, decode, ErrorObject, Incoming, Message, RawJson, Request, RequestId,
};
use crate::model::stateless::{
    unsupported_version_error, CacheHints, InputResponseFields, PROTOCOL_VERSION_KEY,
};
use crate::model::LoggingLevel;
use crate::session::{State, TransmitKind};
use crate::stateless::{
    discover_response, request_binding, validate_request, ReplayGuard, RequestStateKey,
    ServerProfile, StateError, StatelessError,
};
use listen::{Listeners, DEFAULT_MAX_LISTENERS};
use mrtr::InputState;
use task_table::Tasks;

/// Stateless exchanges in flight at most; more are refused with an internal error.
const MAX_EXCHANGES: usize = 1024;
/// Messages of stateless exchanges waiting for `poll_transmit` at most (responses always go).
const MAX_QUEUED: usize = 4096;
/// HTTP statuses of refused exchanges remembered for the transport (`stateless_status`).
const MAX_STATUSES: usize = 64;

/// The stateless side's state.
pub(crate) struct Stateless {
    /// Shared by every server of one factory.
    pub(crate) profile: Arc<ServerProfile>,
    /// Cache hints of the cacheable results (lists, `resources/read`).
    pub(crate) cache: CacheHints,
    /// The application's key for `requestState`; without it none is minted or accepted.
    pub(crate) state_key: Option<RequestStateKey>,
    /// Redeemed states, when the application wants each used once.
    pub(crate) replay_guard: Option<ReplayGuard>,
    /// `(instant, Unix ms)` from the last `handle_wall_clock`: expiry needs wall time.
    wall: (Instant, u64),
    /// A stateless request passed validation here: the connection is stateless.
    pub(crate) locked: bool,
    /// The shared task table (tasks extension), when the application enabled it.
    pub(crate) tasks: Option<Tasks>,
    pub(crate) exchanges: HashMap<RequestId, Exchange>,
    pub(crate) queue: VecDeque<Queued>,
    statuses: VecDeque<(RequestId, u16)>,
    /// Open `subscriptions/listen` streams and changes waiting for the transport.
    pub(crate) listeners: Listeners,
}

/// One stateless request being served.
pub(crate) struct Exchange {
    pub(crate) method: &'static crate::model::MethodInfo,
    /// What a minted `requestState` is bound to.
    pub(crate) binding: String,
    pub(crate) progress_token: Option<Value>,
    /// `_meta` logLevel: without it, no `notifications/message` goes out.
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) input: Option<Arc<InputState>>,
}

/// An encoded message of a stateless exchange.
pub(crate) struct Queued {
    pub(crate) bytes: Vec<u8>,
    pub(crate) kind: TransmitKind,
    pub(crate) related: RequestId,
}

impl Stateless {
    pub(crate) fn new(profile: Arc<ServerProfile>, now: Instant) -> Self {
        Stateless {
            profile,
            cache: CacheHints::NO_STORE,
            state_key: None,
            replay_guard: None,
            wall: (now, 0),
            locked: false,
            tasks: None,
            exchanges: HashMap::new(),
            queue: VecDeque::new(),
            statuses: VecDeque::new(),
            listeners: Listeners::new(DEFAULT_MAX_LISTENERS),
        }
    }

    /// Whether a 2026-07-28 request was served here (the connection is stateless).
    pub(crate) fn is_locked(&self) -> bool {
        self.locked
    }

    /// Wall time at `now`, in Unix milliseconds.
    pub(crate) fn unix_ms(&self, now: Instant) -> u64 {
        let elapsed = now.saturating_duration_since(self.wall.0).as_millis();
        self.wall
            .1
            .saturating_add(u64::try_from(elapsed).unwrap_or(u64::MAX))
    }

    pub(crate) fn push(&mut self, bytes: Vec<u8>, kind: TransmitKind, related: RequestId) {
        if kind != TransmitKind::Response && self.queue.len() >= MAX_QUEUED {
            return;
        }
        self.queue.push_back(Queued {
            bytes,
            kind,
            related,
        });
    }

    pub(crate) fn push_error(&mut self, id: RequestId, error: &ErrorObject, status: Option<u16>) {
        let mut buf = Vec::new();
        m::encode_error(&mut buf, Some(&id), error, m::MissingId::Null);
        if let Some(status) = status {
            if self.statuses.len() >= MAX_STATUSES {
                self.statuses.pop_front();
            }
            self.statuses.push_back((id.clone(), status));
        }
        self.push(buf, TransmitKind::Response, id);
    }

    fn refuse(&mut self, id: RequestId, error: &StatelessError) {
        self.push_error(id, &error.to_error_object(), Some(error.http_status()));
    }

    pub(crate) fn status(&self, id: &RequestId) -> Option<u16> {
        self.statuses
            .iter()
            .rev()
            .find(|(i, _)| i == id)
            .map(|(_, s)| *s)
    }
}

impl Server {
    /// One frame from a client the transport already knows speaks 2026-07-28 (the HTTP
    /// endpoint decides by the `MCP-Protocol-Version` header): served statelessly whatever it
    /// carries, answered through `poll_transmit`; async handlers come out of `poll_job`.
    pub fn handle_stateless_input(&mut self, now: Instant, frame: Bytes) {
        self.last_now = now;
        self.drain_outbox();
        self.stateless.locked = true;
        match decode(&frame) {
            Ok(Incoming::Single(Message::Request(request))) => self.serve_stateless(now, request),
            Ok(Incoming::Single(Message::Notification(n))) => self.stateless_notification(&n),
            Ok(_) => {}
            // Malformed JSON and batches: the session's answers are era-neutral.
            Err(_) => self.session.handle_input(now, frame),
        }
        self.process();
    }

    /// The wall-clock time now, in Unix milliseconds, for `requestState` expiry (the core
    /// reads no clock: the driver passes it, once at start is enough).
    pub fn handle_wall_clock(&mut self, now: Instant, unix_ms: u64) {
        self.stateless.wall = (now, unix_ms);
    }

    /// The HTTP status a refused stateless request `id` should get (400, or 404 for an
    /// unknown method), for transports that map errors to statuses; `None` for the others.
    pub fn stateless_status(&self, id: &RequestId) -> Option<u16> {
        self.stateless.status(id)
    }

    /// The profile the stateless side answers `server/discover` from.
    pub fn stateless_profile(&self) -> &ServerProfile {
        &self.stateless.profile
    }

    /// Serves `frame` statelessly if it belongs to the stateless era; otherwise hands it back
    /// for the session.
    pub(in crate::app::server) fn route_input(
        &mut self,
        now: Instant,
        frame: Bytes,
    ) -> Option<Bytes> {
        // The searchers are built once: building one per frame cost more than the search.
        static VERSION_KEY: LazyLock<Finder<'static>> =
            LazyLock::new(|| Finder::new(PROTOCOL_VERSION_KEY.as_bytes()));
        let marked = VERSION_KEY.find(&frame).is_some();
        if self.session.state() != State::NotInitialized {
            return if marked {
                self.refuse_mixed(frame)
            } else {
                Some(frame)
            };
        }
        if !self.stateless.locked && !marked && !names_stateless_method(&frame) {
            return Some(frame);
        }
        let Ok(Incoming::Single(message)) = decode(&frame) else {
            return Some(frame);
        };
        match message {
            Message::Request(r) if r.method == m::INITIALIZE => {
                if !self.stateless.locked {
                    return Some(frame);
                }
                let requested = r
                    .params
                    .as_ref()
                    .and_then(|p| p.parse::<Map<String, Value>>().ok())
                    .and_then(|p| p.get("protocolVersion")?.as_str().map(str::to_owned))
                    .unwrap_or_default();
                let supported = self.stateless_versions();
                let error = unsupported_version_error(&supported, &requested);
                self.stateless.push_error(r.id, &error, Some(400));
            }
            Message::Request(r) => self.serve_stateless(now, r),
            Message::Notification(n) if self.stateless.locked => self.stateless_notification(&n),
            Message::Response(_) if self.stateless.locked => {}
            _ => return Some(frame),
        }
        None
    }

    /// A request inside a stateful session whose `_meta` names a protocol version other than
    /// the negotiated one: -32022 naming the negotiated version.
    fn refuse_mixed(&mut self, frame: Bytes) -> Option<Bytes> {
        let negotiated = self.session.protocol_version();
        let Ok(Incoming::Single(Message::Request(r))) = decode(&frame) else {
            return Some(frame);
        };
        let requested = r
            .params
            .as_ref()
            .and_then(|p| p.parse::<Map<String, Value>>().ok())
            .and_then(|p| {
                p.get("_meta")?
                    .get(PROTOCOL_VERSION_KEY)?
                    .as_str()
                    .map(str::to_owned)
            });
        match (requested, negotiated) {
            (Some(requested), Some(v)) if requested != v.as_str() => {
                let error = unsupported_version_error(&[v.as_str().to_owned()], &requested);
                self.stateless.push_error(r.id, &error, Some(400));
                None
            }
            _ => Some(frame),
        }
    }

    fn stateless_versions(&self) -> Vec<String> {
        let p = &self.stateless.profile;
        p.supported_versions
            .iter()
            .filter(|v| p.serves_statelessly(**v))
            .map(|v| v.as_str().to_owned())
            .collect()
    }

    /// `notifications/cancelled` for a stateless exchange (stdio); others are ignored.
    fn stateless_notification(&mut self, n: &crate::jsonrpc::Notification) {
        let Some(id) = cancelled_request(n) else {
            return;
        };
        if self.cancel_listen(&id) {
            return;
        }
        if self.stateless.exchanges.remove(&id).is_some() {
            if let Some(token) = self.running.remove(&id) {
                token.cancel();
            }
        }
    }

    /// Validates one stateless request and starts serving it.
    fn serve_stateless(&mut self, now: Instant, request: Request) {
        let Request { id, method, params } = request;
        if self.stateless.exchanges.contains_key(&id)
            || self.running.contains_key(&id)
            || self.is_listening(&id)
        {
            let e = ErrorObject::invalid_request("request id already in flight");
            return self.stateless.push_error(id, &e, Some(400));
        }
        if self.stateless.exchanges.len() >= MAX_EXCHANGES {
            let e = ErrorObject::internal("too many stateless requests in flight");
            return self.stateless.push_error(id, &e, None);
        }
        if crate::tasks::is_task_method(&method)
            && self
                .serve_task_method(now, id.clone(), &method, params.as_ref())
                .is_some()
        {
            return;
        }
        let validated = match validate_request(&self.stateless.profile, &method, params.as_ref()) {
            Ok(v) => v,
            Err(e) => return self.stateless.refuse(id, &e),
        };
        self.stateless.locked = true;
        match validated.method.name {
            m::SERVER_DISCOVER => {
                let result = discover_response(&self.stateless.profile);
                return self.push_result(id, &result);
            }
            m::SUBSCRIPTIONS_LISTEN => {
                let params = params.as_ref().and_then(|p| p.to_value().ok());
                return self.open_listen(id, params.unwrap_or(Value::Null));
            }
            _ => {}
        }
        // Params serde cannot read (nesting past its depth limit, …) are refused here, not
        // read as no params (which would drop their input responses and request state).
        let object: Map<String, Value> = match params.as_ref().map(RawJson::parse) {
            Some(Ok(object)) => object,
            Some(Err(e)) if params.as_ref().is_some_and(RawJson::is_object) => {
                let e = super::dispatch::unreadable("params", &e);
                return self.stateless.push_error(id, &e, Some(400));
            }
            _ => Map::new(),
        };
        let mut binding = String::new();
        let mut input = None;
        if validated.method.may_require_input {
            binding = request_binding(&method, &object);
            let answers = match self.retry_answers(now, &object, &binding) {
                Ok(a) => a,
                Err(e) => return self.stateless.push_error(id, &e, Some(400)),
            };
            let caps = validated.client_capabilities.clone();
            input = Some(Arc::new(InputState::new(caps, answers)));
        }
        let log_level = validated
            .meta
            .log_level
            .and_then(|l| serde_json::to_value(l).ok())
            .and_then(|v| v.as_str().and_then(LoggingLevel::parse));
        let exchange = Exchange {
            method: validated.method,
            binding,
            progress_token: validated.meta.extra.get("progressToken").cloned(),
            log_level,
            input,
        };
        self.stateless.exchanges.insert(id.clone(), exchange);
        self.dispatch(id, &method, params);
    }

    /// The answers a retry brings: those carried by a verified `requestState`, then its
    /// `inputResponses` (which win on the same key).
    fn retry_answers(
        &self,
        now: Instant,
        params: &Map<String, Value>,
        binding: &str,
    ) -> Result<Map<String, Value>, ErrorObject> {
        let fields: InputResponseFields = serde_json::from_value(Value::Object(params.clone()))
            .map_err(|e| ErrorObject::invalid_params(format!("inputResponses: {e}")))?;
        let mut answers = Map::new();
        if let Some(state) = &fields.request_state {
            let key = self.stateless.state_key.as_ref();
            let now_ms = self.stateless.unix_ms(now);
            let verified = key
                .ok_or(StateError::Unexpected)
                .and_then(|k| k.verify_expiring(state, binding, now_ms))
                .map_err(StateError::to_error_object)?;
            if let Some(guard) = &self.stateless.replay_guard {
                guard
                    .redeem(&verified.mac, verified.expires_at_ms, now_ms)
                    .map_err(StateError::to_error_object)?;
            }
            answers = verified.answers;
        }
        for (key, value) in fields.input_responses.unwrap_or_default() {
            answers.insert(key, value);
        }
        Ok(answers)
    }

    /// Queues a complete result already in its 2026-07-28 shape.
    pub(super) fn push_result(&mut self, id: RequestId, result: &impl serde::Serialize) {
        match RawJson::from_serialize(result) {
            Ok(raw) => {
                let mut buf = Vec::new();
                m::encode_result(&mut buf, &id, &raw);
                self.stateless.push(buf, TransmitKind::Response, id);
            }
            Err(e) => {
                let e = ErrorObject::internal(e.to_string());
                self.stateless.push_error(id, &e, None);
            }
        }
    }
}

/// Whether the frame names a method only 2026-07-28 has (a probe without `_meta` must be
/// answered statelessly, with -32602).
fn names_stateless_method(frame: &[u8]) -> bool {
    static NAMES: LazyLock<[Finder<'static>; 2]> = LazyLock::new(|| {
        [m::SERVER_DISCOVER, m::SUBSCRIPTIONS_LISTEN].map(|name| Finder::new(name.as_bytes()))
    });
    NAMES.iter().any(|name| name.find(frame).is_some())
}

/// The request a `notifications/cancelled` names.
fn cancelled_request(n: &crate::jsonrpc::Notification) -> Option<RequestId> {
    if n.method != m::NOTIFICATIONS_CANCELLED {
        return None;
    }
    let params: Map<String, Value> = n.params.as_ref()?.parse().ok()?;
    serde_json::from_value(params.get("requestId")?.clone()).ok()
}
