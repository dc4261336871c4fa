//! The Streamable HTTP client transport as a sans-IO state machine: it sits between a client
//! machine (`app::client::Client` or a client `Session`, which produce and consume JSON-RPC
//! frames) and an HTTP adapter, which performs the requests it asks for and feeds the responses
//! back in pieces. See docs/http.md.
//!
//! Drive loop (the crate-wide contract):
//! - every frame the client machine transmits goes to [`HttpClient::handle_transmit`];
//! - the adapter performs each [`Action`] from [`HttpClient::poll_action`] and reports the
//!   response with `handle_response_head`, `handle_response_body` (chunks as they arrive;
//!   `handle_response_body_bytes` for chunks held as `Bytes`, kept without a copy) and
//!   `handle_response_end` or `handle_response_failed`;
//! - every frame from [`HttpClient::poll_frame`] goes to the machine's `handle_input`, events
//!   from [`HttpClient::poll_event`] to the application;
//! - sleep until the earlier of new input and [`HttpClient::poll_timeout`], then
//!   [`HttpClient::handle_timeout`].
//!
//! This is the client contract of [`crate::outgoing`]; `HttpClient` implements its
//! [`ClientTransport`](crate::outgoing::ClientTransport) trait.
//!
//! What it decides: the headers of every request (`Accept`, `Content-Type`, `Mcp-Session-Id`,
//! `MCP-Protocol-Version`, `Last-Event-ID`), holding messages while the handshake is in flight,
//! reading JSON or SSE responses, resuming a broken response stream by GET after the server's
//! `retry` (bounded attempts, doubling delay), the standalone GET stream (405/400 tolerated), a
//! new session after a 404 (every request in flight ends once, with a transport error), and
//! DELETE on close. A request the transport cannot complete ends with a JSON-RPC error response
//! it synthesizes (code [`TRANSPORT_ERROR`]), so the machine sees exactly one outcome. A
//! response that cannot be read (not UTF-8, JSON cut short, an invalid response) whose first
//! bytes name the awaited request is such a case: the request ends at once with
//! `the response could not be read: ...` and the machine never sees the frame.

mod adopt;
mod exchange;
mod session;
mod types;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

pub use types::{HttpClientConfig, HttpClientStats, TransportEvent};

use exchange::{Exchange, Purpose};

use crate::http::sse_transport::TransportCloseReason;
use crate::http::{HttpMethod, HttpText};
use crate::jsonrpc::{self, ErrorObject, Incoming, Message, MissingId, RawJson, RequestId};
use crate::outgoing::{Action, ExchangeId, InboundFrame, OutgoingRequest};
use crate::session::idhash::IdBuildHasher;
use crate::session::TransmitKind;

/// The JSON-RPC error code of the error responses the transport synthesizes for requests it
/// could not complete (HTTP error status, stream lost without a way to resume, session expired,
/// a response that could not be read).
/// Their `data` holds `{"httpStatus": N}` when a status was received.
pub const TRANSPORT_ERROR: i64 = -32000;

/// The `Accept` of every POST.
const ACCEPT_BOTH: HttpText = HttpText::from_static("application/json, text/event-stream");

/// The `Content-Type` of every POST.
const JSON: HttpText = HttpText::from_static("application/json");

/// The list of completed frames kept between responses holds room for this many at most.
const MAX_KEPT_COMPLETED: usize = 64;

/// Where the transport is in the session's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Messages flow (or wait behind the handshake barrier).
    Open,
    /// The replayed `initialize` is in flight after a 404.
    Reinitializing,
    /// The session is gone for good: requests fail at once.
    Lost,
    /// The DELETE of `close` is in flight.
    Closing,
    /// Closed.
    Closed,
}

/// A reconnection waiting for its delay.
#[derive(Debug)]
struct PendingResume {
    at: Instant,
    /// `Some(id)`: the response stream of request `id`; `None`: the standalone stream.
    request: Option<RequestId>,
    last_event_id: Option<String>,
    retry: Option<Duration>,
    attempts: u32,
}

/// The Streamable HTTP client transport. See the module docs for the drive loop.
#[derive(Debug)]
pub struct HttpClient {
    config: HttpClientConfig,
    phase: Phase,
    /// Shared with the header of every request (no copy per request).
    session_id: Option<Arc<str>>,
    /// The negotiated version, sent as `MCP-Protocol-Version` once known.
    protocol_version: Option<Arc<str>>,
    next_exchange: u64,
    /// Keyed by our own sequential exchange ids: the fast id hasher.
    exchanges: HashMap<ExchangeId, Exchange, IdBuildHasher>,
    resumes: Vec<PendingResume>,
    actions: VecDeque<Action>,
    /// Frames for the machine, with their decoding when the transport made one.
    frames: VecDeque<(Bytes, Option<Incoming>)>,
    /// The frames a body chunk or a body's end completed, on their way to `frames`: kept
    /// (empty) between calls, so a response does not allocate a list of its own.
    completed: Vec<Bytes>,
    events: VecDeque<TransportEvent>,
    /// While this exchange (`initialize` or `notifications/initialized`) awaits its response
    /// head, other messages are held: the server must see the handshake first.
    barrier: Option<ExchangeId>,
    held: VecDeque<(Bytes, TransmitKind)>,
    /// When a barrier on the standalone stream's head is lifted anyway.
    barrier_deadline: Option<Instant>,
    /// The client's `initialize` and `notifications/initialized`, replayed after a 404.
    init_frame: Option<Bytes>,
    initialized_frame: Option<Bytes>,
    reinitializations: u32,
    standalone_unavailable: bool,
    stats: HttpClientStats,
}

impl HttpClient {
    /// A transport with no session yet; the first message should be the client's `initialize`.
    pub fn new(config: HttpClientConfig) -> HttpClient {
        HttpClient {
            config,
            phase: Phase::Open,
            session_id: None,
            protocol_version: None,
            next_exchange: 0,
            exchanges: HashMap::default(),
            resumes: Vec::new(),
            actions: VecDeque::new(),
            frames: VecDeque::new(),
            completed: Vec::new(),
            events: VecDeque::new(),
            barrier: None,
            held: VecDeque::new(),
            barrier_deadline: None,
            init_frame: None,
            initialized_frame: None,
            reinitializations: 0,
            standalone_unavailable: false,
            stats: HttpClientStats::default(),
        }
    }

    /// The `Mcp-Session-Id` the server issued, if any.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The negotiated protocol version (sent as `MCP-Protocol-Version`), once known.
    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_deref()
    }

    /// Counters.
    pub fn stats(&self) -> &HttpClientStats {
        &self.stats
    }

    /// Exchanges in flight (requests sent and not finished).
    pub fn exchanges_in_flight(&self) -> usize {
        self.exchanges.len()
    }

    /// Whether `close` finished.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// One message the client machine transmitted (`poll_transmit`), with its kind.
    pub fn handle_transmit(&mut self, _now: Instant, frame: Bytes, kind: TransmitKind) {
        match self.phase {
            Phase::Lost | Phase::Closing | Phase::Closed => {
                self.refuse(&frame, kind, "the HTTP session is closed or lost")
            }
            Phase::Reinitializing => self.hold(frame, kind),
            Phase::Open if self.barrier.is_some() => self.hold(frame, kind),
            Phase::Open => self.dispatch(frame, kind),
        }
    }

    /// The response head of exchange `id`: status and header fields.
    pub fn handle_response_head<'a>(
        &mut self,
        now: Instant,
        id: ExchangeId,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) {
        let Some(ex) = self.exchanges.get_mut(&id) else {
            return;
        };
        let mut content_type = "";
        let mut session = None;
        let redirect = (300..400).contains(&status);
        for (name, value) in headers {
            if name.eq_ignore_ascii_case("content-type") {
                content_type = value;
            } else if name.eq_ignore_ascii_case("mcp-session-id") {
                session = Some(value);
            } else if redirect && name.eq_ignore_ascii_case("location") {
                ex.location = Some(crate::http::quote_peer_text(value));
            }
        }
        ex.start_body(status, content_type, self.config.max_event_size);
        let expired = status == 404 && ex.with_session && ex.purpose != Purpose::Delete;
        let init = matches!(
            ex.purpose,
            Purpose::Request { init: true, .. } | Purpose::Reinit
        );
        let handshake_step = matches!(ex.purpose, Purpose::Initialized);
        if expired {
            self.session_expired();
            return;
        }
        if init && (200..300).contains(&status) {
            if let Some(sid) = session {
                self.take_session_id(sid);
            }
        }
        if self.barrier == Some(id) {
            // Requests wait for the standalone stream's head (bounded by `standalone_wait`),
            // so a server already has it when they make it send something.
            let opened =
                handshake_step && (200..300).contains(&status) && self.open_standalone(now);
            if !opened {
                self.release_barrier();
            }
        }
    }

    /// The next chunk of exchange `id`'s response body. A JSON body that arrives in one chunk
    /// (a whole answer of known length) is taken as is, not copied.
    pub fn handle_response_body(&mut self, _now: Instant, id: ExchangeId, chunk: Bytes) {
        self.take_body(id, |ex, max_body, frames| {
            ex.push_body_bytes(chunk, max_body, frames)
        });
    }

    /// Hands a body chunk to exchange `id` (`push`) and delivers the frames it completed.
    fn take_body(
        &mut self,
        id: ExchangeId,
        push: impl FnOnce(&mut Exchange, usize, &mut Vec<Bytes>),
    ) {
        let Some(ex) = self.exchanges.get_mut(&id) else {
            return;
        };
        let mut frames = std::mem::take(&mut self.completed);
        push(ex, self.config.max_body, &mut frames);
        let dropped = std::mem::take(&mut ex.dropped_events);
        let standalone = ex.purpose == Purpose::Standalone;
        self.deliver(id, frames);
        if !self.fail_if_oversized(id) && dropped > 0 {
            self.events_dropped(dropped, standalone);
        }
    }

    /// SSE events past `max_event_size` were dropped from a stream whose request they could
    /// not fail (the standalone stream, or a POST's stream that awaits no response or already
    /// has it): counted, and reported with the limit, since what they carried is lost.
    #[cold]
    fn events_dropped(&mut self, dropped: u64, standalone: bool) {
        self.stats.oversized += dropped;
        self.events.push_back(TransportEvent::EventTooLarge {
            limit: self.config.max_event_size,
            standalone,
            dropped,
        });
    }

    /// A request whose response outgrew its size limit (a JSON body past `max_body`, an SSE
    /// event past `max_event_size`) fails at once with an error naming the limit, and its exchange is aborted:
    /// the rest of the body is not waited for.
    /// Whether it failed one.
    fn fail_if_oversized(&mut self, id: ExchangeId) -> bool {
        let Some(ex) = self.exchanges.get(&id) else {
            return false;
        };
        let Some(request) = ex
            .purpose
            .awaited()
            .filter(|_| ex.oversized && !ex.answered)
        else {
            return false;
        };
        let (request, status) = (request.clone(), ex.status);
        let reason = self.oversized_reason(ex);
        self.exchanges.remove(&id);
        self.actions.push_back(Action::Abort(id));
        self.stats.oversized += 1;
        if self.barrier == Some(id) {
            self.release_barrier();
        }
        self.fail_request(&request, &reason, status);
        true
    }

    /// Why a request whose response outgrew its limit failed, naming the limit.
    fn oversized_reason(&self, ex: &Exchange) -> String {
        let (what, limit) = if ex.is_sse() {
            (
                "an event of the response stream",
                self.config.max_event_size,
            )
        } else {
            ("the response", self.config.max_body)
        };
        format!(
            "{what} exceeds the {} size limit",
            crate::session::describe_limit(limit)
        )
    }

    /// Exchange `id`'s response body is complete.
    pub fn handle_response_end(&mut self, now: Instant, id: ExchangeId) {
        self.finish(now, id, None);
    }

    /// Exchange `id` failed: no connection, or the connection broke before the body ended.
    pub fn handle_response_failed(&mut self, now: Instant, id: ExchangeId, reason: &str) {
        self.finish(now, id, Some(reason));
    }

    /// Fires due reconnections.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.phase != Phase::Open {
            return;
        }
        if self.barrier_deadline.is_some_and(|at| at <= now) {
            self.release_barrier();
        }
        let (mut due, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.resumes)
            .into_iter()
            .partition(|r| r.at <= now);
        self.resumes = waiting;
        due.sort_by_key(|r| r.at);
        for resume in due {
            self.reconnect(resume);
        }
    }

    /// Ends the session: aborts every exchange, fails what is in flight, and sends DELETE when
    /// the server issued a session id ([`TransportEvent::Closed`] once it is answered).
    pub fn close(&mut self, _now: Instant) {
        if matches!(self.phase, Phase::Closing | Phase::Closed) {
            return;
        }
        self.abort_all("the HTTP transport closed");
        for (frame, kind) in std::mem::take(&mut self.held) {
            self.refuse(&frame, kind, "the HTTP transport closed");
        }
        match self.session_id.clone() {
            Some(_) => {
                self.phase = Phase::Closing;
                let headers = self.session_headers(Vec::new());
                self.send(HttpMethod::Delete, headers, Bytes::new(), Purpose::Delete);
            }
            None => {
                self.phase = Phase::Closed;
                self.events
                    .push_back(TransportEvent::Closed(TransportCloseReason::Local));
            }
        }
    }

    /// The next request to perform or exchange to abort.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// The next frame for the client machine, with its decoding (`jsonrpc::decode(&frame)`'s
    /// result) when the transport made one to see whether it answers a request in flight:
    /// give both to the machine's `handle_decoded` so the frame is not decoded twice, or the
    /// frame alone to `handle_input` when there is none.
    #[must_use]
    pub fn poll_frame(&mut self) -> Option<InboundFrame> {
        self.frames.pop_front()
    }

    /// The next event for the application.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<TransportEvent> {
        self.events.pop_front()
    }

    /// When `handle_timeout` must be called next (the earliest reconnection).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.phase != Phase::Open {
            return None;
        }
        let resume = self.resumes.iter().map(|r| r.at).min();
        match (resume, self.barrier_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Sends one message now (no barrier in the way).
    fn dispatch(&mut self, frame: Bytes, kind: TransmitKind) {
        // A stream waiting to reconnect holds its place: its GET comes back as an exchange.
        if self.exchanges.len() + self.resumes.len() >= self.config.max_exchanges {
            return self.refuse(&frame, kind, "too many HTTP exchanges in flight");
        }
        let purpose = match kind {
            TransmitKind::Request => match request_head(&frame) {
                Some((id, init)) => {
                    if init {
                        self.init_frame = Some(kept_copy(&frame));
                    }
                    Purpose::Request { id, init }
                }
                None => Purpose::Message,
            },
            TransmitKind::Notification if is_initialized(&frame) => {
                self.initialized_frame = Some(kept_copy(&frame));
                Purpose::Initialized
            }
            _ => Purpose::Message,
        };
        let barrier = matches!(
            purpose,
            Purpose::Request { init: true, .. } | Purpose::Initialized
        );
        let id = self.post(frame, purpose);
        if barrier {
            self.barrier = Some(id);
        }
    }

    /// Queues a POST of `frame` and returns its exchange.
    fn post(&mut self, frame: Bytes, purpose: Purpose) -> ExchangeId {
        let mut headers = Vec::with_capacity(4);
        headers.push(("Accept", ACCEPT_BOTH));
        headers.push(("Content-Type", JSON));
        if !matches!(
            purpose,
            Purpose::Request { init: true, .. } | Purpose::Reinit
        ) {
            headers = self.session_headers(headers);
        }
        self.send(HttpMethod::Post, headers, frame, purpose)
    }

    /// Adds `Mcp-Session-Id` and `MCP-Protocol-Version` when known.
    fn session_headers(
        &self,
        mut headers: Vec<(&'static str, HttpText)>,
    ) -> Vec<(&'static str, HttpText)> {
        if let Some(sid) = &self.session_id {
            headers.push(("Mcp-Session-Id", sid.clone().into()));
        }
        if let Some(version) = &self.protocol_version {
            headers.push(("MCP-Protocol-Version", version.clone().into()));
        }
        headers
    }

    fn send(
        &mut self,
        method: HttpMethod,
        headers: Vec<(&'static str, HttpText)>,
        body: Bytes,
        purpose: Purpose,
    ) -> ExchangeId {
        let id = ExchangeId(self.next_exchange);
        self.next_exchange += 1;
        let with_session = headers.iter().any(|(n, _)| *n == "Mcp-Session-Id");
        self.exchanges
            .insert(id, Exchange::new(purpose, with_session));
        self.actions.push_back(Action::Send(OutgoingRequest {
            id,
            method,
            url: None,
            headers,
            named_headers: Vec::new(),
            body,
        }));
        id
    }

    /// Opens a GET stream: the standalone one, or a resumption of a request's stream.
    fn get(&mut self, purpose: Purpose, last_event_id: Option<&str>) -> ExchangeId {
        let mut headers = vec![("Accept", HttpText::from_static("text/event-stream"))];
        headers = self.session_headers(headers);
        if let Some(last) = last_event_id {
            headers.push(("Last-Event-ID", last.to_owned().into()));
        }
        self.send(HttpMethod::Get, headers, Bytes::new(), purpose)
    }

    /// Opens the standalone stream when wanted, as the barrier for held messages; whether it
    /// did.
    fn open_standalone(&mut self, now: Instant) -> bool {
        let wanted = self.config.open_standalone_stream
            && !self.standalone_unavailable
            && self.session_id.is_some()
            && !self
                .exchanges
                .values()
                .any(|e| e.purpose == Purpose::Standalone);
        if wanted {
            let id = self.get(Purpose::Standalone, None);
            self.barrier = Some(id);
            self.barrier_deadline = Some(now + self.config.standalone_wait);
        }
        wanted
    }

    /// Holds a message until the handshake step in flight is answered (bounded).
    fn hold(&mut self, frame: Bytes, kind: TransmitKind) {
        if self.held.len() >= self.config.max_held {
            return self.refuse(&frame, kind, "too many messages waiting for the handshake");
        }
        self.held.push_back((frame, kind));
    }

    fn release_barrier(&mut self) {
        self.barrier = None;
        self.barrier_deadline = None;
        while self.barrier.is_none() && self.phase == Phase::Open {
            let Some((frame, kind)) = self.held.pop_front() else {
                break;
            };
            self.dispatch(frame, kind);
        }
    }

    /// A message that cannot be sent: a request ends with a transport error, anything else is
    /// dropped and counted.
    fn refuse(&mut self, frame: &Bytes, kind: TransmitKind, reason: &str) {
        let request = (kind == TransmitKind::Request)
            .then(|| jsonrpc::decode_message(frame).ok())
            .flatten();
        match request {
            Some(Message::Request(r)) => self.fail_request(&r.id, reason, None),
            _ => self.stats.messages_dropped += 1,
        }
    }

    /// Ends request `id` with a synthesized error response.
    fn fail_request(&mut self, id: &RequestId, reason: &str, status: Option<u16>) {
        self.stats.requests_failed += 1;
        let mut error = ErrorObject::new(TRANSPORT_ERROR, reason);
        if let Some(status) = status {
            let data = format!("{{\"httpStatus\":{status}}}");
            if let Ok(raw) = RawJson::from_text(data) {
                error = error.with_data(raw);
            }
        }
        let mut buf = Vec::new();
        jsonrpc::encode_error(&mut buf, Some(id), &error, MissingId::Null);
        self.frames.push_back((Bytes::from(buf), None));
    }

    fn take_session_id(&mut self, sid: &str) {
        let visible = !sid.is_empty() && sid.bytes().all(|b| (0x21..=0x7e).contains(&b));
        if visible {
            self.session_id = Some(sid.into());
        } else {
            self.stats.invalid_session_ids += 1;
        }
    }

    /// Hands the frames of exchange `id` to the machine (or keeps the replayed `initialize`'s
    /// answer), noting whether the awaited response was among them.
    fn deliver(&mut self, id: ExchangeId, mut frames: Vec<Bytes>) {
        for frame in frames.drain(..) {
            let Some(ex) = self.exchanges.get_mut(&id) else {
                break;
            };
            if ex.purpose == Purpose::Reinit {
                self.reinit_answered(id, &frame);
                continue;
            }
            // Decoded once here, to see whether it answers the exchange; the machine takes the
            // decoding along (`poll_frame`) instead of decoding the frame again.
            let decoded = if ex.purpose.awaited().is_some() {
                match jsonrpc::decode(&frame) {
                    Ok(incoming) => {
                        ex.note_answer(&incoming);
                        Some(incoming)
                    }
                    Err(e) => {
                        // An unreadable answer ends its request here, once, naming why; the
                        // machine never sees the frame, so it never sees two endings.
                        if let Some(request) = ex.take_unreadable_answer(&e, &frame) {
                            let status = ex.status;
                            self.fail_request(&request, &e.unreadable_response_reason(), status);
                            continue;
                        }
                        None
                    }
                }
            } else {
                None
            };
            if matches!(ex.purpose, Purpose::Request { init: true, .. }) {
                self.note_version(&frame);
            }
            self.frames.push_back((frame, decoded));
        }
        // Kept for the next response, unless a chunk of many events made it large.
        if frames.capacity() <= MAX_KEPT_COMPLETED {
            self.completed = frames;
        }
    }

    /// Records the protocol version of an `initialize` result.
    fn note_version(&mut self, frame: &Bytes) {
        #[derive(serde::Deserialize)]
        struct Envelope {
            result: Option<InitResult>,
        }
        #[derive(serde::Deserialize)]
        struct InitResult {
            #[serde(rename = "protocolVersion")]
            protocol_version: String,
        }
        if let Ok(Envelope {
            result: Some(result),
        }) = serde_json::from_slice::<Envelope>(frame)
        {
            let version = result.protocol_version;
            if !version.is_empty() && version.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
                self.protocol_version = Some(version.into());
            }
        }
    }

    /// The response of exchange `id` is over (`failure`: it broke or never came).
    fn finish(&mut self, now: Instant, id: ExchangeId, failure: Option<&str>) {
        let Some(ex) = self.exchanges.get_mut(&id) else {
            return;
        };
        let mut frames = std::mem::take(&mut self.completed);
        ex.end_body(&mut frames);
        // (Dropped SSE events were counted as they were dropped.)
        if ex.oversized && !ex.is_sse() {
            self.stats.oversized += 1;
        }
        self.deliver(id, frames);
        let Some(ex) = self.exchanges.remove(&id) else {
            return;
        };
        // Only the awaited response answers a request: a JSON body holding anything else (a
        // notification, another id) ends it with a transport error below, so it never hangs.
        if self.barrier == Some(id) {
            self.release_barrier();
        }
        match ex.purpose.clone() {
            Purpose::Request { id: request, .. } | Purpose::Resume { id: request } => {
                if !ex.answered {
                    self.unanswered(now, request, ex, failure);
                }
            }
            Purpose::Reinit => {
                if self.phase == Phase::Reinitializing {
                    let reason = failure.map_or_else(
                        || format!("re-initialization failed (HTTP {:?})", ex.status),
                        |f| format!("re-initialization failed: {f}"),
                    );
                    self.session_lost(reason);
                }
            }
            Purpose::Standalone => self.standalone_ended(now, ex),
            Purpose::Delete => {
                self.phase = Phase::Closed;
                self.events
                    .push_back(TransportEvent::Closed(TransportCloseReason::Local));
            }
            Purpose::Message | Purpose::Initialized => {
                if !ex.ok() {
                    self.stats.messages_dropped += 1;
                }
            }
        }
    }

    /// A request's stream ended without its response: resume it, or end it with an error.
    fn unanswered(
        &mut self,
        now: Instant,
        request: RequestId,
        ex: Exchange,
        failure: Option<&str>,
    ) {
        if let Some(status) = ex.status.filter(|s| !(200..300).contains(s)) {
            let reason = match ex
                .location
                .as_deref()
                .filter(|_| (300..400).contains(&status))
            {
                Some(location) => redirect_reason(status, location),
                None => http_error_reason(status, ex.error_text()),
            };
            return self.fail_request(&request, &reason, Some(status));
        }
        let resumable = ex.last_event_id.is_some() && (ex.is_sse() || ex.status.is_none());
        if resumable && self.phase == Phase::Open {
            let attempts = if ex.progressed { 0 } else { ex.attempts + 1 };
            return self.schedule(now, Some(request), ex, attempts);
        }
        let reason = match (failure, ex.status) {
            (Some(f), _) => format!("the HTTP request failed: {f}"),
            (None, Some(202)) => "the server answered the request with 202 and no response".into(),
            (None, _) if ex.oversized => self.oversized_reason(&ex),
            (None, _) if ex.unreadable_type.is_some() => unreadable_type_reason(&ex),
            (None, _) => {
                "the response stream ended before the response (no event id to resume from)".into()
            }
        };
        self.fail_request(&request, &reason, ex.status);
    }

    /// Schedules a reconnection of a stream after its delay, or gives up.
    fn schedule(&mut self, now: Instant, request: Option<RequestId>, ex: Exchange, attempts: u32) {
        if attempts >= self.config.max_resume_attempts {
            let reason = format!("gave up resuming the response stream after {attempts} attempts");
            match request {
                Some(id) => self.fail_request(&id, &reason, ex.status),
                None => {
                    self.standalone_unavailable = true;
                    self.events
                        .push_back(TransportEvent::StandaloneStreamUnavailable { status: None });
                }
            }
            return;
        }
        let base = ex
            .retry
            .unwrap_or(self.config.default_retry)
            .min(self.config.max_retry);
        let factor = 1u32
            .checked_shl(attempts.saturating_sub(1))
            .unwrap_or(u32::MAX);
        let delay = if attempts == 0 {
            base
        } else {
            base.saturating_mul(factor).min(self.config.max_retry)
        };
        self.resumes.push(PendingResume {
            at: now + delay,
            request,
            last_event_id: ex.last_event_id,
            retry: ex.retry,
            attempts,
        });
    }

    /// A due reconnection: GET with `Last-Event-ID`.
    fn reconnect(&mut self, resume: PendingResume) {
        let purpose = match resume.request {
            Some(id) => {
                self.stats.resumes += 1;
                Purpose::Resume { id }
            }
            None => {
                self.stats.standalone_reopens += 1;
                Purpose::Standalone
            }
        };
        let id = self.get(purpose, resume.last_event_id.as_deref());
        if let Some(ex) = self.exchanges.get_mut(&id) {
            ex.last_event_id = resume.last_event_id;
            ex.retry = resume.retry;
            ex.attempts = resume.attempts;
        }
    }

    /// The standalone stream ended: reopen it after the delay, or note it is not offered.
    fn standalone_ended(&mut self, now: Instant, ex: Exchange) {
        if self.phase != Phase::Open {
            return;
        }
        match ex.status {
            Some(status) if !(200..300).contains(&status) => {
                self.standalone_unavailable = true;
                self.events
                    .push_back(TransportEvent::StandaloneStreamUnavailable {
                        status: Some(status),
                    });
            }
            Some(_) if !ex.is_sse() => {
                self.standalone_unavailable = true;
                self.events
                    .push_back(TransportEvent::StandaloneStreamUnavailable { status: ex.status });
            }
            _ => {
                let attempts = if ex.progressed { 0 } else { ex.attempts + 1 };
                self.schedule(now, None, ex, attempts);
            }
        }
    }
}

/// The id of a request frame the machine transmitted, and whether it is `initialize`; `None`
/// when the frame is not a request with a valid id.
fn request_head(frame: &Bytes) -> Option<(RequestId, bool)> {
    if let Some(head) = encoded_request_head(frame) {
        return Some(head);
    }
    match jsonrpc::decode_message(frame) {
        Ok(Message::Request(r)) => Some((r.id, r.method == jsonrpc::INITIALIZE)),
        _ => None,
    }
}

/// [`request_head`] read straight off a frame that starts the way the session's encoder
/// writes a request with a numeric id (`{"jsonrpc":"2.0","id":7,"method":"..."`), without a
/// second full decode of a frame that was just encoded; `None` (the full decode decides) for
/// any other shape, a string id, or an escaped method name.
fn encoded_request_head(frame: &[u8]) -> Option<(RequestId, bool)> {
    const PREFIX: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    const METHOD: &[u8] = br#","method":""#;
    let rest = frame.strip_prefix(PREFIX)?;
    let id_len = rest.iter().position(|b| !matches!(b, b'0'..=b'9' | b'-'))?;
    let (id, rest) = rest.split_at_checked(id_len)?;
    let id = RequestId::from_json_bytes(id)?;
    let method = rest.strip_prefix(METHOD)?;
    let close = memchr::memchr2(b'"', b'\\', method)?;
    let (name, tail) = method.split_at_checked(close)?;
    if tail.first() != Some(&b'"') {
        return None;
    }
    Some((id, name == jsonrpc::INITIALIZE.as_bytes()))
}

/// An owned copy of a handshake frame the session keeps for its whole life (to replay it
/// when the session must be re-initialised): a frame may be a view into a larger block of
/// the adapter's, which holding it would pin.
fn kept_copy(frame: &Bytes) -> Bytes {
    Bytes::copy_from_slice(frame)
}

/// Whether a notification frame is `notifications/initialized`.
fn is_initialized(frame: &Bytes) -> bool {
    memchr::memmem::find(frame, jsonrpc::NOTIFICATIONS_INITIALIZED.as_bytes()).is_some()
        && matches!(jsonrpc::decode_message(frame),
            Ok(Message::Notification(n)) if n.method == jsonrpc::NOTIFICATIONS_INITIALIZED)
}

/// A one-line reason for a non-2xx answer, quoting ([`crate::http::quote_peer_text`]) a
/// JSON-RPC error message when the body has one, else the body's start.
fn http_error_reason(status: u16, body: Option<&str>) -> String {
    #[derive(serde::Deserialize)]
    struct Envelope {
        error: Option<ErrorObject>,
    }
    let message = body
        .and_then(|b| serde_json::from_str::<Envelope>(b).ok())
        .and_then(|e| e.error)
        .map(|e| e.message)
        .or_else(|| body.map(str::to_owned));
    match message {
        Some(m) if !m.is_empty() => format!("HTTP {status}: {}", crate::http::quote_peer_text(&m)),
        _ => format!("HTTP {status}"),
    }
}

/// Why a request answered with a redirect failed: the transport follows none, so the
/// message quotes the `Location` (bounded, escaped) for the user to give instead.
#[cold]
fn redirect_reason(status: u16, location: &str) -> String {
    format!("HTTP {status}, a redirect to {location} (not followed: give the final URL)")
}

crate::outgoing::client_transport_by_inherent_methods!(HttpClient, TransportEvent);

/// Why a request failed whose response was of a type that cannot carry JSON-RPC.
#[cold]
#[inline(never)]
fn unreadable_type_reason(ex: &Exchange) -> String {
    match ex.unreadable_type.as_deref() {
        None | Some("") => "the response has no Content-Type (expected application/json or \
                            text/event-stream)"
            .into(),
        Some(t) => format!(
            "the response has Content-Type {t:?}, neither application/json nor text/event-stream"
        ),
    }
}

#[cfg(test)]
mod tests;
