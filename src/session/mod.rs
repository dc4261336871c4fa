//! One MCP conversation of the stateful era (2024-11-05 … 2025-11-25), client side or server
//! side, as a sans-IO state machine: frames and time in, frames, events and deadlines out.
//!
//! The session owns the protocol's bookkeeping (handshake, capability gating, request ids,
//! deadlines, cancellation, progress, ping) so the application only sees [`Event`]s and issues
//! commands. See `docs/session-api.md` for the contract.
//!
//! ## Answering a request
//!
//! Four ways, the same rules (unknown, cancelled and closed cases) for each:
//!
//! - [`Session::respond`] with a [`RawJson`] the application already holds (a result built
//!   elsewhere, a cached one): its bytes are copied into the message.
//! - [`Session::respond_serialize`] with any `Serialize` value: serde_json writes it straight
//!   into the outbound queue. The choice for typed results (the `model` structs) and for
//!   values whose shape is only known at run time.
//! - [`Session::respond_with`] with a closure that writes the result through a
//!   [`JsonWriter`](crate::jsonrpc::JsonWriter) (objects, arrays, keys, strings, numbers,
//!   embedded `RawJson`): no serde, the cheapest way for a small result whose shape the code
//!   knows (a tool's text content). The writer refuses calls that would make invalid JSON, and
//!   the request stays answerable.
//! - [`Session::respond_error`] with an [`ErrorObject`].
//!
//! `respond_serialize` and `respond_with` send the bytes `respond` would send for the same
//! value; when the result is invalid they queue nothing and return
//! [`SendError::InvalidResult`], and the request stays in flight.

mod encoded;
mod error;
mod event;
mod gating;
pub(crate) mod idhash;
mod inbound;
mod inflight;
mod lifecycle;
mod outbound;
mod pending;
mod sending;
mod snapshot;
mod timer;
mod tombstones;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::config::Config;
use crate::jsonrpc::{
    self, ErrorObject, FrameHead, HeadKind, Incoming, Message, MissingId, RawJson, RequestId,
};
use crate::model::{ClientCapabilities, Implementation, ProtocolVersion, ServerCapabilities};

pub use crate::framing::FrameError;
pub use error::{describe_limit, describe_too_long, SendError};
pub use event::{CloseReason, Event, Outcome, Stats};
pub use snapshot::{RestoreError, SessionSnapshot, MAX_ID_PREFIX};

/// Which side of the conversation a session plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Sends `initialize`; calls tools, reads resources.
    Client,
    /// Answers `initialize`; serves tools, resources, prompts.
    Server,
}

/// The lifecycle state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// No `initialize` exchanged yet.
    NotInitialized,
    /// Client: `initialize` sent, no result yet. Server: result sent, waiting for
    /// `notifications/initialized`.
    Initializing,
    /// Handshake done; everything the capabilities allow may flow.
    Ready,
    /// Closed; inputs are ignored and commands refused.
    Closed,
}

/// What a client announces in `initialize`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientSetup {
    /// Who the client is.
    pub info: Implementation,
    /// What the client can do.
    pub capabilities: ClientCapabilities,
    /// The version the client asks for.
    pub protocol_version: ProtocolVersion,
}

/// What a server announces in its `initialize` result.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerSetup {
    /// Who the server is.
    pub info: Implementation,
    /// What the server can do.
    pub capabilities: ServerCapabilities,
    /// Hints for the model.
    pub instructions: Option<String>,
}

/// Per-call options of `send_request`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestOptions {
    /// Overrides `Config::request_timeout`.
    pub timeout: Option<Duration>,
    /// Attach a unique `_meta.progressToken` (the request's own id) so the peer can report
    /// progress. Requires object (or absent) params.
    pub progress: bool,
    /// The inbound request this one belongs to (HTTP stream routing), e.g. a sampling request
    /// a server sends while handling `tools/call`.
    pub related_to: Option<RequestId>,
}

/// What kind of message a [`Transmit`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransmitKind {
    /// A request.
    Request,
    /// A notification.
    Notification,
    /// A response (result or error).
    Response,
}

/// One message written by `poll_transmit`, and where it belongs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// Bytes appended to the caller's buffer.
    pub len: usize,
    /// The kind of message.
    pub kind: TransmitKind,
    /// The inbound request it answers or belongs to, for transports with several streams.
    pub related: Option<RequestId>,
}

/// Whether every raw payload of `message` is known to hold no raw CR or LF (its envelope
/// never does: `encode_with` escapes what it writes itself).
fn payloads_one_line(message: &Message) -> bool {
    let params = match message {
        Message::Request(r) => r.params.as_ref(),
        Message::Notification(n) => n.params.as_ref(),
        Message::Response(r) => match &r.outcome {
            Ok(result) => Some(result),
            Err(error) => error.data.as_ref(),
        },
    };
    params.is_none_or(RawJson::is_one_line)
}

/// Turns every raw CR and LF of `written` into a space (insignificant whitespace in valid
/// JSON). Rare (a payload built by hand with line breaks): kept out of `poll_transmit`.
#[cold]
#[inline(never)]
fn blank_line_breaks(written: &mut [u8]) {
    if memchr::memchr2(b'\n', b'\r', written).is_some() {
        for b in written.iter_mut().filter(|b| matches!(**b, b'\n' | b'\r')) {
            *b = b' ';
        }
    }
}

/// A message waiting for `poll_transmit`.
#[derive(Debug)]
struct Queued {
    payload: Payload,
    related: Option<RequestId>,
}

/// What a queued message holds: a message to encode, or one encoded already.
#[derive(Debug)]
enum Payload {
    Message(Message),
    /// The next `len` bytes of the session's `encoded` buffer (`respond_serialize`).
    Encoded {
        len: usize,
        kind: TransmitKind,
    },
}

impl Queued {
    fn message(message: Message, related: Option<RequestId>) -> Self {
        Queued {
            payload: Payload::Message(message),
            related,
        }
    }
}

/// One MCP conversation, client or server side. See the module docs.
#[derive(Debug)]
pub struct Session {
    role: Role,
    state: State,
    config: Config,
    /// Boxed, as the fields below that one role never sets: they would make every server
    /// session (thousands in one HTTP endpoint) larger by a few KiB.
    client_setup: Option<Box<ClientSetup>>,
    /// Shared: every session of one server factory declares the same.
    server_setup: Option<Arc<ServerSetup>>,
    version: Option<ProtocolVersion>,
    peer_info: Option<Implementation>,
    peer_client_caps: Option<ClientCapabilities>,
    peer_server_caps: Option<Box<ServerCapabilities>>,
    instructions: Option<String>,
    outbound: outbound::Outbound,
    inbound: inbound::Inbound,
    /// Everything to send, in production order (one stream order: docs/fuzzing.md, invariant 3).
    queue: VecDeque<Queued>,
    /// Messages encoded when queued, in queue order (see [`Payload::Encoded`]).
    encoded: encoded::EncodedBuf,
    events: VecDeque<Event>,
    stats: Stats,
    /// When the peer last sent anything (keep-alive reference).
    last_heard: Instant,
    /// Inside `handle_batch`: replies the session makes itself are queued past
    /// `max_outbound_queue` (a batch's replies are bounded by its size).
    in_batch: bool,
    /// The peer's input ended ([`Session::handle_input_end`]): no new request goes out.
    input_ended: bool,
    /// Frames in a row whose id could not be read (reset by a readable frame): only the first
    /// [`MAX_UNREADABLE_ANSWERED`] are answered.
    unreadable_in_a_row: u32,
}

impl Session {
    /// A client session; call [`Session::initialize`] to start the handshake.
    pub fn client(config: Config, setup: ClientSetup, now: Instant) -> Session {
        Self::new(Role::Client, config, Some(Box::new(setup)), None, now)
    }

    /// A server session, waiting for `initialize`.
    pub fn server(config: Config, setup: ServerSetup, now: Instant) -> Session {
        Self::server_shared(config, Arc::new(setup), now)
    }

    /// A server session whose setup is shared with other sessions of the same server.
    pub(crate) fn server_shared(config: Config, setup: Arc<ServerSetup>, now: Instant) -> Session {
        Self::new(Role::Server, config, None, Some(setup), now)
    }

    fn new(
        role: Role,
        config: Config,
        client_setup: Option<Box<ClientSetup>>,
        server_setup: Option<Arc<ServerSetup>>,
        now: Instant,
    ) -> Session {
        Session {
            role,
            state: State::NotInitialized,
            outbound: outbound::Outbound::new(role, config.tombstone_capacity),
            inbound: inbound::Inbound::new(config.tombstone_capacity),
            config,
            client_setup,
            server_setup,
            version: None,
            peer_info: None,
            peer_client_caps: None,
            peer_server_caps: None,
            instructions: None,
            queue: VecDeque::new(),
            encoded: encoded::EncodedBuf::default(),
            events: VecDeque::new(),
            stats: Stats::default(),
            last_heard: now,
            in_batch: false,
            input_ended: false,
            unreadable_in_a_row: 0,
        }
    }

    /// The lifecycle state.
    pub fn state(&self) -> State {
        self.state
    }

    /// The negotiated version (server: from the moment it answered `initialize`).
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.version
    }

    /// The peer's `clientInfo`/`serverInfo`.
    pub fn peer_info(&self) -> Option<&Implementation> {
        self.peer_info.as_ref()
    }

    /// Server side: the client's declared capabilities.
    pub fn peer_client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.peer_client_caps.as_ref()
    }

    /// Client side: the server's declared capabilities.
    pub fn peer_server_capabilities(&self) -> Option<&ServerCapabilities> {
        self.peer_server_caps.as_deref()
    }

    /// Client side: the server's `instructions`.
    pub fn server_instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// Counters of dropped and refused messages.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Outbound requests awaiting a response.
    pub fn pending_outbound(&self) -> usize {
        self.outbound.len()
    }

    /// Inbound requests the application has not answered yet.
    pub fn inflight_inbound(&self) -> usize {
        self.inbound.len()
    }

    /// Feeds one frame: one JSON text (an ndjson line without its newline, an HTTP body).
    pub fn handle_input(&mut self, now: Instant, frame: Bytes) {
        if self.state == State::Closed {
            return;
        }
        self.last_heard = now;
        if frame.len() > self.config.max_frame_len {
            return self.handle_oversized(now, &frame);
        }
        match jsonrpc::decode(&frame) {
            Ok(incoming) => self.handle_incoming(now, incoming),
            Err(e) => self.handle_invalid(now, e, &frame),
        }
    }

    /// A frame longer than `max_frame_len`, whole in hand: only its first bytes are scanned.
    #[cold]
    #[inline(never)]
    fn handle_oversized(&mut self, now: Instant, frame: &[u8]) {
        let mut head = FrameHead::scan(frame);
        // Only a request can be answered. A frame without `"method"` is a response (often
        // the peer's own error about our oversized frame): answering it would ping-pong
        // forever between two peers with small limits.
        if head.kind == HeadKind::Unknown && memchr::memmem::find(frame, b"\"method\"").is_some() {
            head.kind = HeadKind::Request;
        }
        let (limit, len) = (self.config.max_frame_len, Some(frame.len() as u64));
        self.handle_too_long(now, FrameError::TooLong { limit, len, head }, false);
    }

    /// An oversized frame: counted; a request is answered (with its id when its first bytes
    /// showed it), a response fails the pending request it answers. `answer_unknown`: whether
    /// a frame of unknown kind is answered as a request.
    #[cold]
    #[inline(never)]
    fn handle_too_long(&mut self, now: Instant, error: FrameError, answer_unknown: bool) {
        self.stats.oversized_frames += 1;
        let FrameError::TooLong { head, .. } = &error else {
            return;
        };
        match head.kind {
            HeadKind::Response => self.fail_oversized_response(now, &error),
            HeadKind::Unknown if !answer_unknown => {}
            HeadKind::Request | HeadKind::Unknown => {
                let id = head.id.clone();
                self.reply_error(id, error.to_error_object());
            }
        }
    }

    /// [`Session::handle_input`] for a frame the transport already decoded (`incoming` is
    /// `jsonrpc::decode(frame)`'s result): the same rules, without decoding it a second time.
    pub fn handle_decoded(&mut self, now: Instant, frame: &Bytes, incoming: Incoming) {
        if self.state == State::Closed {
            return;
        }
        if frame.len() > self.config.max_frame_len {
            return self.handle_input(now, frame.clone());
        }
        self.last_heard = now;
        self.handle_incoming(now, incoming);
    }

    /// A frame that decoded: one message or a batch.
    fn handle_incoming(&mut self, now: Instant, incoming: Incoming) {
        self.unreadable_in_a_row = 0;
        match incoming {
            Incoming::Single(message) => self.handle_message(now, message),
            Incoming::Batch(items) => self.handle_batch(now, items),
        }
    }

    /// Reports a frame the transport could not deliver whole (e.g. an over-long line).
    pub fn handle_decode_error(&mut self, now: Instant, error: FrameError) {
        if self.state == State::Closed {
            return;
        }
        self.last_heard = now;
        if matches!(error, FrameError::TooLong { .. }) {
            return self.handle_too_long(now, error, true);
        }
        self.reply_unreadable(error.to_error_object());
    }

    /// Fires every deadline due at `now`: request timeouts and keep-alive pings.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.state == State::Closed {
            return;
        }
        self.expire_requests(now);
        self.keep_alive(now);
    }

    // Batches only exist in 2025-03-26: kept out of the per-message path (instruction cache).
    #[cold]
    #[inline(never)]
    fn handle_batch(&mut self, now: Instant, items: Vec<Result<Message, jsonrpc::DecodeError>>) {
        if !self.version.is_some_and(ProtocolVersion::allows_batches) {
            return self.refuse_batch(items);
        }
        // Every item gets its reply, however many: the batch is bounded by the frame limit.
        self.in_batch = true;
        let mut seen = std::collections::HashSet::new();
        for item in items {
            if self.state == State::Closed {
                break;
            }
            match item {
                Ok(Message::Request(request)) if !seen.insert(request.id.clone()) => {
                    self.refuse_repeated_id(&request.id);
                }
                Ok(message) => self.handle_message(now, message),
                Err(e) => self.handle_invalid(now, e, &[]),
            }
        }
        self.in_batch = false;
    }

    /// A batch in a revision without batches: each request in it is refused with its own id
    /// (the first of a repeated id only), so no caller waits for an answer that will not come;
    /// notifications and responses in it are dropped. A batch with no readable request id gets
    /// one id-less refusal.
    #[cold]
    #[inline(never)]
    fn refuse_batch(&mut self, items: Vec<Result<Message, jsonrpc::DecodeError>>) {
        self.stats.batches_refused += 1;
        let error = ErrorObject::invalid_request(
            "Invalid Request: batches are not allowed in this protocol version",
        );
        let mut seen = std::collections::HashSet::new();
        self.in_batch = true;
        for item in items {
            let id = match item {
                Ok(Message::Request(request)) => Some(request.id),
                Ok(Message::Response(response)) => {
                    self.fail_batched_response(response);
                    None
                }
                Err(e) if e.wants_reply() => e.id,
                _ => None,
            };
            if let Some(id) = id.filter(|id| seen.insert(id.clone())) {
                self.reply_error(Some(id), error.clone());
            }
        }
        if seen.is_empty() {
            self.reply_error(None, error);
        }
        self.in_batch = false;
    }

    /// A request whose id an earlier request of the same batch already used: refused with an
    /// id-less error (a second response for that id would read as the answer to the first).
    #[cold]
    #[inline(never)]
    fn refuse_repeated_id(&mut self, id: &RequestId) {
        self.stats.requests_refused += 1;
        let error = ErrorObject::invalid_request(format!(
            "Invalid Request: id {id} repeats an earlier request of this batch; only the first \
             is served"
        ));
        self.reply_error(None, error);
    }

    fn handle_message(&mut self, now: Instant, message: Message) {
        match message {
            Message::Request(request) => self.handle_request(now, request),
            Message::Notification(n) => self.handle_notification(now, n),
            Message::Response(response) => self.handle_response(now, response),
        }
    }

    #[cold]
    #[inline(never)]
    fn handle_invalid(&mut self, now: Instant, e: jsonrpc::DecodeError, frame: &[u8]) {
        if let Some(id) = e.response_id(frame) {
            self.stats.invalid_responses_dropped += 1;
            return self.fail_invalid_response(now, id, &e);
        }
        if e.wants_reply() && e.id.is_none() && !self.in_batch {
            self.reply_unreadable(e.to_error_object());
        } else if e.wants_reply() {
            self.stats.invalid_frames += 1;
            self.reply_error(e.id.clone(), e.to_error_object());
        } else {
            self.stats.invalid_responses_dropped += 1;
        }
    }

    /// Answers a frame whose id cannot be read with an id-less error, the first
    /// [`MAX_UNREADABLE_ANSWERED`] in a row only: such an error fails no request, and a peer
    /// that writes garbage without reading would otherwise fill the pipe back to it with one
    /// error per line. The last one answered says that what follows is not.
    #[cold]
    #[inline(never)]
    fn reply_unreadable(&mut self, mut error: ErrorObject) {
        self.stats.invalid_frames += 1;
        self.unreadable_in_a_row = self.unreadable_in_a_row.saturating_add(1);
        match self.unreadable_in_a_row.cmp(&MAX_UNREADABLE_ANSWERED) {
            std::cmp::Ordering::Less => self.reply_error(None, error),
            std::cmp::Ordering::Equal => {
                error.message.push_str(&format!(
                    " ({MAX_UNREADABLE_ANSWERED} unreadable frames in a row: the next ones are \
                     not answered until a readable one arrives)"
                ));
                self.reply_error(None, error);
            }
            std::cmp::Ordering::Greater => self.stats.invalid_frames_unanswered += 1,
        }
    }

    /// A response whose first bytes name a pending request but which cannot be read (not
    /// UTF-8, not JSON, not a valid response): that request fails at once, naming the reason.
    #[cold]
    #[inline(never)]
    fn fail_invalid_response(&mut self, now: Instant, id: RequestId, e: &jsonrpc::DecodeError) {
        let text = e.unreadable_response_reason();
        self.fail_pending_with(now, id, ErrorObject::internal(text));
    }

    /// A response inside a batch where this revision has no batches: the request it answers
    /// fails at once (its answer is not taken), so it does not wait for its deadline.
    #[cold]
    #[inline(never)]
    fn fail_batched_response(&mut self, response: jsonrpc::Response) {
        let Some(id) = response.id else {
            return;
        };
        let text = "the response came in a batch, which this protocol version does not allow";
        self.fail_pending_with(self.last_heard, id, ErrorObject::internal(text));
    }

    /// Writes the next message into `buf` (appended; compact JSON without a raw `\n` or `\r`
    /// and without a trailing newline).
    #[must_use]
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit> {
        let Queued { payload, related } = self.queue.pop_front()?;
        let message = match payload {
            Payload::Message(message) => message,
            Payload::Encoded { len, kind } => {
                buf.extend_from_slice(self.encoded.take(len));
                return Some(Transmit { len, kind, related });
            }
        };
        let start = buf.len();
        message.encode_with(buf, self.missing_id());
        // Raw payloads are valid JSON, where a raw CR/LF can only be insignificant whitespace.
        // The envelope is written escaped, so only a payload not known to be on one line is
        // a reason to look.
        if !payloads_one_line(&message) {
            if let Some(written) = buf.get_mut(start..) {
                blank_line_breaks(written);
            }
        }
        let kind = match message {
            Message::Request(_) => TransmitKind::Request,
            Message::Notification(_) => TransmitKind::Notification,
            Message::Response(_) => TransmitKind::Response,
        };
        Some(Transmit {
            len: buf.len() - start,
            kind,
            related,
        })
    }

    /// The next event for the application.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Gives back the memory of drained queues and buffers past a small floor (room for four
    /// entries, an encoding buffer of a few hundred bytes), so the next exchange does not
    /// grow them again. A driver holding many idle sessions (an HTTP endpoint) calls it once
    /// a session has nothing left to hand out; a session driven alone keeps its capacity for
    /// the next message instead.
    pub fn release_spare_capacity(&mut self) {
        release_spare(&mut self.queue, QUEUE_FLOOR);
        release_spare(&mut self.events, QUEUE_FLOOR);
        self.encoded.release_if_drained();
    }

    /// When `handle_timeout` must be called next.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.state == State::Closed {
            return None;
        }
        let requests = self.outbound.next_deadline();
        let keep_alive = self.next_keep_alive();
        match (requests, keep_alive) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether there is something to transmit.
    pub fn has_transmit(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Whether an event waits for [`Session::poll_event`].
    pub fn has_event(&self) -> bool {
        !self.events.is_empty()
    }

    /// How an error response with an unreadable id is spelled: per the negotiated version, or
    /// before negotiation per the version this side would speak (client: the one it offers;
    /// server: its latest supported).
    fn missing_id(&self) -> MissingId {
        let version = self.version.unwrap_or_else(|| match &self.client_setup {
            Some(setup) => setup.protocol_version,
            None => self.config.latest_supported(),
        });
        if version.omits_missing_error_id() {
            MissingId::Omit
        } else {
            MissingId::Null
        }
    }

    /// Queues a message produced by an application command (bounded by `max_outbound_queue`).
    fn enqueue_command(
        &mut self,
        message: Message,
        related: Option<RequestId>,
    ) -> Result<(), SendError> {
        if self.queue.len() >= self.config.max_outbound_queue {
            return Err(SendError::QueueFull);
        }
        self.queue.push_back(Queued::message(message, related));
        Ok(())
    }

    /// Queues a message unconditionally (responses to in-flight requests, handshake messages:
    /// bounded by their own tables).
    fn enqueue(&mut self, message: Message, related: Option<RequestId>) {
        self.queue.push_back(Queued::message(message, related));
    }

    /// Queues an error reply the session generates itself; dropped and counted when the
    /// outbound queue is full, except inside a batch.
    #[cold]
    #[inline(never)]
    fn reply_error(&mut self, id: Option<RequestId>, error: ErrorObject) {
        if self.queue.len() >= self.config.max_outbound_queue && !self.in_batch {
            self.stats.replies_dropped += 1;
            return;
        }
        let message = Message::Response(jsonrpc::Response::error(id.clone(), error));
        self.queue.push_back(Queued::message(message, id));
    }

    /// Queues a result reply the session generates itself (bounded like `reply_error`).
    fn reply_result(&mut self, id: RequestId, result: RawJson) {
        if self.queue.len() >= self.config.max_outbound_queue && !self.in_batch {
            self.stats.replies_dropped += 1;
            return;
        }
        let message = Message::Response(jsonrpc::Response::result(id.clone(), result));
        self.queue.push_back(Queued::message(message, Some(id)));
    }

    /// Queues an event; `droppable` ones are dropped and counted past `max_queued_events`.
    fn push_event(&mut self, event: Event, droppable: bool) -> bool {
        if droppable && self.events.len() >= self.config.max_queued_events {
            return false;
        }
        self.events.push_back(event);
        true
    }
}

/// Entries a drained queue of the request path (outbound messages, events) keeps room for
/// in [`Session::release_spare_capacity`]: the first allocation a queue of small entries
/// makes, so one request at a time never regrows it.
pub(crate) const QUEUE_FLOOR: usize = 4;

/// Frames in a row whose id cannot be read that still get an id-less error; the ones after
/// are counted ([`Stats::invalid_frames_unanswered`]) and not answered.
pub const MAX_UNREADABLE_ANSWERED: u32 = 16;

/// Shrinks a drained queue's storage to room for `floor` entries (0 frees it; see
/// [`Session::release_spare_capacity`]).
pub(crate) fn release_spare<T>(queue: &mut VecDeque<T>, floor: usize) {
    if queue.is_empty() && queue.capacity() > floor {
        queue.shrink_to(floor);
    }
}
