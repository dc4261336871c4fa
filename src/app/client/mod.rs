//! An MCP client over a `Session`: typed async calls through a [`ClientHandle`], handlers for
//! the server's requests (sampling, elicitation, roots) run as jobs, and server notifications
//! as [`ClientEvent`]s (see docs/app-api.md). Still sans-IO.
//!
//! The drive loop is the session's (`handle_input`, `handle_timeout`, `poll_transmit`,
//! `poll_timeout`) plus `poll_job()` (handler futures still pending after their inline first
//! poll) and `poll_event()`. Handles and jobs talk to the state machine through a shared
//! outbox, drained at the start of every `handle_*` and `poll_transmit`; the wake hook tells
//! the driver to run its loop once (`handle_wake(now)`, then drain `poll_transmit`) after
//! something was pushed from outside. Calls made before the handshake finished fail with
//! [`ClientError::NotSent`]; run `ClientHandle::initialize` first.

mod admission;
mod builder;
pub mod elicitation;
mod handle;
mod inbound;
mod lineage;
mod policy;
mod rate;
pub mod stateless;
mod types;

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use bytes::Bytes;

pub use builder::ClientBuilder;
pub use handle::{ClientHandle, PendingCall, MAX_PAGES};
pub use policy::{
    Decision, ElicitationPolicy, Limit, RequestLineage, SamplingPolicy, USER_REJECTED,
};
pub use rate::RateLimit;
use types::ProgressFn;
pub use types::{describe_close, CallOptions, ClientError, ClientEvent, HandlerContext, Progress};

use admission::Admission;
use builder::Handlers;

use crate::config::Config;
use crate::jsonrpc::{self as m, ErrorObject, Incoming, RawJson, RequestId};
use crate::model::{InitializeResult, Root};
use crate::runtime::{lock, CancelToken, Job, OneshotSender, Outbox, WakeHook};
use crate::session::idhash::IdBuildHasher;
use crate::session::{
    ClientSetup, CloseReason, Event, FrameError, Outcome, RequestOptions, Session, State, Transmit,
};

/// Application events queued at most (`poll_event`); newer ones are dropped and counted.
const MAX_EVENTS: usize = 1024;

/// What handles and jobs push for the state machine.
pub(crate) enum ClientItem {
    /// `ClientHandle::initialize`.
    Initialize {
        reply: OneshotSender<Result<InitializeResult, ClientError>>,
    },
    /// A typed or raw call.
    Request {
        key: u64,
        /// Borrowed for the typed calls' constant names: no copy per call.
        method: Cow<'static, str>,
        params: Option<RawJson>,
        timeout: Option<Duration>,
        progress: Option<ProgressFn>,
        /// The server's request whose handler makes this call (`CallOptions::parent`).
        parent: Option<RequestId>,
        reply: OneshotSender<Result<RawJson, ClientError>>,
    },
    /// The caller dropped or cancelled the call with this key.
    Cancel { key: u64 },
    /// A handler's answer to the server's request `id`.
    Reply {
        id: RequestId,
        outcome: Result<RawJson, ErrorObject>,
    },
    /// `ClientHandle::set_roots`.
    SetRoots(Vec<Root>),
}

impl std::fmt::Debug for ClientItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientItem::Initialize { .. } => f.write_str("Initialize"),
            ClientItem::Request { key, method, .. } => write!(f, "Request({key}, {method})"),
            ClientItem::Cancel { key } => write!(f, "Cancel({key})"),
            ClientItem::Reply { id, .. } => write!(f, "Reply({id:?})"),
            ClientItem::SetRoots(roots) => write!(f, "SetRoots({})", roots.len()),
        }
    }
}

/// One of our calls waiting for its `Event::Completed`.
struct Call {
    key: u64,
    reply: OneshotSender<Result<RawJson, ClientError>>,
    progress: Option<ProgressFn>,
}

/// The pending `initialize`, resolved by `Initialized` or `Closed` (the session emits
/// `Completed` first, then one of those).
struct InitCall {
    id: RequestId,
    reply: OneshotSender<Result<InitializeResult, ClientError>>,
    result: Option<RawJson>,
}

/// An MCP client state machine. See the module docs for the drive loop.
pub struct Client {
    session: Session,
    handlers: Handlers,
    /// The sampling and elicitation policies, and the lineage of tool calls.
    admission: Admission,
    outbox: Outbox<ClientItem>,
    /// The outbox's items being applied, in a queue kept between rounds (it and the outbox
    /// swap storage, so a call's reply allocates no queue).
    outbox_items: VecDeque<ClientItem>,
    handle: ClientHandle,
    jobs: VecDeque<Job>,
    /// Keyed by our own request ids (no peer-chosen keys): the fast id hasher.
    calls: HashMap<RequestId, Call, IdBuildHasher>,
    /// Request ids of calls by their handle-side key (for cancellation).
    keys: HashMap<u64, RequestId, IdBuildHasher>,
    init: Option<InitCall>,
    /// Cancel tokens of the server's requests whose handler has not replied yet.
    running: HashMap<RequestId, CancelToken>,
    events: VecDeque<ClientEvent>,
    events_dropped: u64,
    /// The latest time the driver gave us (requests sent while draining in `poll_transmit`,
    /// which has no `now`, get their deadlines from it).
    last_now: Instant,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("state", &self.session.state())
            .field("calls", &self.calls.len())
            .field("jobs", &self.jobs.len())
            .finish()
    }
}

impl Client {
    fn from_parts(
        config: Config,
        setup: ClientSetup,
        handlers: Handlers,
        admission: Admission,
        now: Instant,
    ) -> Client {
        // Optional items are never pushed (every item matters), so the capacity is moot.
        let outbox = Outbox::new(0);
        Client {
            session: Session::client(config, setup, now),
            handlers,
            admission,
            handle: ClientHandle::new(outbox.clone()),
            outbox,
            outbox_items: VecDeque::new(),
            jobs: VecDeque::new(),
            calls: HashMap::default(),
            keys: HashMap::default(),
            init: None,
            running: HashMap::new(),
            events: VecDeque::new(),
            events_dropped: 0,
            last_now: now,
        }
    }

    /// The underlying session (state, negotiated version, server info, stats).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// A handle for typed calls from anywhere (Clone + Send + Sync).
    pub fn handle(&self) -> ClientHandle {
        self.handle.clone()
    }

    /// Sets the hook called when a handle or job pushed work from outside the state
    /// machine: the driver should then run its loop once (drain `poll_transmit`).
    pub fn set_waker(&mut self, hook: WakeHook) {
        self.outbox.set_wake_hook(hook);
    }

    /// One frame (one JSON text) from the server.
    pub fn handle_input(&mut self, now: Instant, frame: Bytes) {
        self.last_now = now;
        self.process();
        self.session.handle_input(now, frame);
        self.process();
    }

    /// [`Client::handle_input`] for a frame the transport already decoded (`incoming` is
    /// `jsonrpc::decode(frame)`'s result, e.g. from `HttpClient::poll_frame`).
    pub fn handle_decoded(&mut self, now: Instant, frame: &Bytes, incoming: Incoming) {
        self.last_now = now;
        self.process();
        self.session.handle_decoded(now, frame, incoming);
        self.process();
    }

    /// The framer could not produce a frame (an over-long line or body): a response too long
    /// fails the call it answers at once; see `Session::handle_decode_error`.
    pub fn handle_decode_error(&mut self, now: Instant, error: FrameError) {
        self.last_now = now;
        self.process();
        self.session.handle_decode_error(now, error);
        self.process();
    }

    /// Fires due timers (request deadlines, keep-alive).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.last_now = now;
        self.process();
        self.session.handle_timeout(now);
        self.process();
    }

    /// Drains what handles and jobs pushed, with a fresh time: call it when the wake hook
    /// fired, so deadlines of calls made since then start now rather than at the last
    /// `handle_*` (which is what `poll_transmit`, having no `now`, uses).
    pub fn handle_wake(&mut self, now: Instant) {
        self.last_now = now;
        self.process();
    }

    /// Appends one message to `buf` (see `Session::poll_transmit`).
    #[must_use]
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit> {
        self.process();
        self.session.poll_transmit(buf)
    }

    /// The next deadline.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.session.poll_timeout()
    }

    /// A handler future still pending after its first poll: run it to completion on any
    /// executor. Its reply arrives through the outbox (and the wake hook).
    #[must_use]
    pub fn poll_job(&mut self) -> Option<Job> {
        self.jobs.pop_front()
    }

    /// The next server notification or lifecycle event for the application.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.process();
        self.events.pop_front()
    }

    /// Events dropped because the application did not drain `poll_event` fast enough.
    pub fn events_dropped(&self) -> u64 {
        self.events_dropped
    }

    /// Replaces the fixed roots (if any) and sends `notifications/roots/list_changed` (once
    /// initialized). Ignored when the client declared no roots (neither a list nor a handler).
    pub fn set_roots(&mut self, roots: Vec<Root>) {
        if !self.handlers.has_roots() {
            return;
        }
        if let Some(shared) = &self.handlers.roots {
            *lock(shared) = roots;
        }
        if self.session.state() == State::Ready {
            let _ = self
                .session
                .notify(m::NOTIFICATIONS_ROOTS_LIST_CHANGED, None);
        }
    }

    /// Closes the session: every pending call fails with [`ClientError::Closed`].
    pub fn close(&mut self, now: Instant) {
        self.last_now = now;
        self.process();
        self.session.close(now);
        self.process();
    }

    /// The server ended the transport (end of its output, connection closed): every pending
    /// call fails with [`ClientError::Closed`] naming that (`CloseReason::PeerClosed`).
    pub fn handle_peer_closed(&mut self, now: Instant) {
        self.last_now = now;
        self.process();
        self.session.handle_peer_closed(now);
        self.process();
    }

    /// Handles session events and outbox items until neither has anything left.
    fn process(&mut self) {
        loop {
            let mut progressed = false;
            while let Some(event) = self.session.poll_event() {
                progressed = true;
                self.handle_event(event);
            }
            self.outbox.drain_into(&mut self.outbox_items);
            progressed |= !self.outbox_items.is_empty();
            while let Some(item) = self.outbox_items.pop_front() {
                self.apply(item);
            }
            if !progressed {
                break;
            }
        }
    }

    fn push_event(&mut self, event: ClientEvent) {
        if self.events.len() < MAX_EVENTS {
            self.events.push_back(event);
        } else {
            self.events_dropped += 1;
        }
    }

    fn handle_event(&mut self, event: Event) {
        match event {
            Event::Initialized { protocol_version } => {
                if let Some(init) = self.init.take() {
                    let result = init
                        .result
                        .ok_or_else(|| ClientError::InvalidResult("no initialize result".into()))
                        .and_then(|raw| {
                            raw.parse::<InitializeResult>()
                                .map_err(|e| ClientError::InvalidResult(e.to_string()))
                        });
                    init.reply.send(result);
                }
                self.push_event(ClientEvent::Initialized { protocol_version });
            }
            Event::Request { id, method, params } => {
                // Requests arrive only inside a `handle_*`, which set `last_now` to its `now`.
                self.dispatch(self.last_now, id, &method, params)
            }
            Event::Notification { method, params } => self.notification(&method, params),
            Event::Cancelled { id, .. } => {
                if let Some(token) = self.running.get(&id) {
                    token.cancel();
                }
            }
            Event::Progress {
                id,
                progress,
                total,
                message,
            } => {
                let progress = Progress {
                    id,
                    progress,
                    total,
                    message,
                };
                match self
                    .calls
                    .get(&progress.id)
                    .and_then(|c| c.progress.clone())
                {
                    Some(callback) => callback(progress),
                    None => self.push_event(ClientEvent::Progress(progress)),
                }
            }
            Event::Completed { id, outcome } => self.completed(id, outcome),
            Event::Closed { reason } => self.closed(reason),
            Event::UnmatchedResponse {
                id,
                pending_other_type,
            } => self.push_event(ClientEvent::UnmatchedResponse {
                id,
                pending_other_type,
            }),
        }
    }

    fn completed(&mut self, id: RequestId, outcome: Outcome) {
        if let Some(init) = self.init.as_mut().filter(|i| i.id == id) {
            // Resolved on `Initialized` or `Closed`, which the session emits next.
            if let Outcome::Result(raw) = outcome {
                init.result = Some(raw);
            }
            return;
        }
        if matches!(outcome, Outcome::Closed) {
            // The session reports why right after (`Event::Closed`): `closed` fails the call
            // then, naming the reason.
            return;
        }
        self.admission.lineages.call_done(&id);
        let Some(call) = self.calls.remove(&id) else {
            return;
        };
        self.keys.remove(&call.key);
        let result = match outcome {
            Outcome::Result(raw) => Ok(raw),
            Outcome::Error(e) => Err(ClientError::Rpc(e)),
            Outcome::TimedOut => Err(ClientError::TimedOut),
            Outcome::Cancelled => Err(ClientError::Cancelled),
            Outcome::Closed => Err(ClientError::Closed(None)),
        };
        call.reply.send(result);
    }

    fn closed(&mut self, reason: CloseReason) {
        if let Some(init) = self.init.take() {
            init.reply
                .send(Err(ClientError::Closed(Some(reason.clone()))));
        }
        for (_, call) in self.calls.drain() {
            call.reply
                .send(Err(ClientError::Closed(Some(reason.clone()))));
        }
        self.keys.clear();
        self.admission.lineages.clear();
        for (_, token) in self.running.drain() {
            token.cancel();
        }
        self.push_event(ClientEvent::Closed { reason });
    }

    fn apply(&mut self, item: ClientItem) {
        match item {
            ClientItem::Initialize { reply } => self.start_initialize(reply),
            ClientItem::Request {
                key,
                method,
                params,
                timeout,
                progress,
                parent,
                reply,
            } => {
                let opts = RequestOptions {
                    timeout,
                    progress: progress.is_some(),
                    related_to: None,
                };
                match self
                    .session
                    .send_request(self.last_now, &method, params, opts)
                {
                    Ok(id) => {
                        if method == m::TOOLS_CALL {
                            self.admission
                                .lineages
                                .call_sent(id.clone(), parent.as_ref());
                        }
                        self.keys.insert(key, id.clone());
                        let call = Call {
                            key,
                            reply,
                            progress,
                        };
                        self.calls.insert(id, call);
                    }
                    Err(e) => reply.send(Err(ClientError::NotSent(e))),
                }
            }
            ClientItem::Cancel { key } => {
                if let Some(id) = self.keys.get(&key).cloned() {
                    let reason = Some("cancelled by the caller".to_owned());
                    // Completed{Cancelled} follows from the session and resolves the call.
                    let _ = self.session.cancel(self.last_now, &id, reason);
                }
            }
            ClientItem::Reply { id, outcome } => {
                self.running.remove(&id);
                self.admission.lineages.sampling_done(&id);
                // An error means the server cancelled the request or the session closed:
                // the session suppresses the reply and counts it.
                let _ = match outcome {
                    Ok(result) => self.session.respond(&id, result),
                    Err(error) => self.session.respond_error(&id, error),
                };
            }
            ClientItem::SetRoots(roots) => self.set_roots(roots),
        }
    }

    fn start_initialize(&mut self, reply: OneshotSender<Result<InitializeResult, ClientError>>) {
        if self.init.is_some() {
            let e = crate::session::SendError::WrongRole;
            return reply.send(Err(ClientError::NotSent(e)));
        }
        match self.session.initialize(self.last_now) {
            Ok(id) => {
                self.init = Some(InitCall {
                    id,
                    reply,
                    result: None,
                })
            }
            Err(e) => reply.send(Err(ClientError::NotSent(e))),
        }
    }
}

#[cfg(test)]
mod tests;
