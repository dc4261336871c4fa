//! Our requests to the peer: id allocation, the pending table keyed by exact id, deadlines,
//! progress tokens, cancellation, and tombstones that let late responses be dropped quietly.
//!
//! Deadlines: the pending table's ring holds requests in deadline order (one timeout, sent in
//! order: see [`Outbound::insert`]), so its front is its earliest deadline; only the entries in
//! the table's map have an entry in the deadline set.
//!
//! Bounds: the pending table holds at most `max_pending_outbound` entries (plus the handshake
//! and one keep-alive ping); the deadline set mirrors its map; tombstones hold
//! `tombstone_capacity`.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::pending::{PendingTable, Place};
use super::timer::Deadlines;
use super::tombstones::Tombstones;
use super::{
    CloseReason, Event, FrameError, Outcome, RequestOptions, Role, SendError, Session, State,
};
use crate::jsonrpc::{
    self as m, ErrorObject, Message, Method, Notification, RawJson, Request, RequestId, Response,
};

/// Why the session sent a request: the application's, or its own bookkeeping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// The application's: ends with `Event::Completed`.
    App,
    /// The handshake's `initialize`: never cancellable; failure closes the session.
    Initialize,
    /// A keep-alive ping: silent on success, closes the session on timeout.
    KeepAlive,
}

#[derive(Debug)]
pub(crate) struct Pending {
    pub(crate) purpose: Purpose,
    started: Instant,
    deadline: Instant,
    timeout: Duration,
    progress: bool,
}

/// The outbound half of the session's tables.
#[derive(Debug)]
pub(crate) struct Outbound {
    role: Role,
    next_id: u64,
    /// Set on a restored server session: its ids read `s-<prefix>-<n>`, so they never
    /// collide with the ids other instances sent in the same session.
    prefix: Option<Box<str>>,
    pending: PendingTable<Pending>,
    deadlines: Deadlines,
    tombstones: Tombstones,
    keep_alive: Option<RequestId>,
}

impl Outbound {
    pub(crate) fn new(role: Role, tombstone_capacity: usize) -> Self {
        Outbound {
            role,
            next_id: 0,
            prefix: None,
            pending: PendingTable::default(),
            deadlines: Deadlines::default(),
            tombstones: Tombstones::new(tombstone_capacity),
            keep_alive: None,
        }
    }

    /// A fresh id. Clients use integers, servers strings prefixed `s-`, so ids of the two
    /// directions never collide even when both sides are this engine.
    fn allocate(&mut self) -> RequestId {
        let n = self.next_id;
        self.next_id += 1;
        match self.role {
            Role::Client => RequestId::unsigned(n),
            Role::Server => match &self.prefix {
                None => server_id(n),
                Some(prefix) => RequestId::string(format!("s-{prefix}-{n}")),
            },
        }
    }

    /// The number the next id will carry.
    pub(crate) fn next_number(&self) -> u64 {
        self.next_id
    }

    /// Continues a moved session's numbering under `prefix` (see [`Outbound::allocate`]).
    pub(crate) fn continue_from(&mut self, next: u64, prefix: &str) {
        self.next_id = next;
        self.prefix = Some(prefix.into());
    }

    pub(crate) fn len(&self) -> usize {
        self.pending.len()
    }

    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        let ring = self.pending.ring_front().map(|(_, p)| p.deadline);
        match (ring, self.deadlines.first()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Registers a request. It joins the table's ring when its deadline keeps the ring in
    /// deadline order: the same timeout as the ring's last request and a deadline no earlier
    /// (the usual case: one timeout, a clock that does not go back). Otherwise its deadline
    /// goes to the deadline set.
    fn insert(&mut self, id: RequestId, pending: Pending) {
        let (deadline, timeout) = (pending.deadline, pending.timeout);
        let keeps_order = |last: Option<&Pending>| {
            last.is_none_or(|last| last.timeout == timeout && last.deadline <= deadline)
        };
        if let Some(Place::Map) = self.pending.insert(id.clone(), pending, keeps_order) {
            self.deadlines.insert(deadline, timeout, id);
        }
    }

    fn remove(&mut self, id: &RequestId) -> Option<Pending> {
        let (pending, place) = self.pending.remove(id)?;
        if place == Place::Map {
            self.deadlines.remove(pending.deadline, id);
        }
        if self.keep_alive.as_ref() == Some(id) {
            self.keep_alive = None;
        }
        Some(pending)
    }

    /// The id of the earliest request due at `now`, its deadline entry (if any) removed. On a
    /// tie the deadline set's entry comes first.
    fn pop_due(&mut self, now: Instant) -> Option<RequestId> {
        let ring = self
            .pending
            .ring_front()
            .filter(|(_, p)| p.deadline <= now)
            .map(|(id, p)| (id, p.deadline));
        match (ring, self.deadlines.first()) {
            (Some((id, at)), other) if other.is_none_or(|other| at < other) => Some(id),
            _ => self.deadlines.pop_due(now),
        }
    }

    /// Moves the deadline of pending request `id` to `now` plus its timeout, capped at `cap`
    /// after it started, never earlier than it was. A moved deadline leaves the ring's order:
    /// the request is kept in the table's map, its deadline in the deadline set.
    fn extend_deadline(&mut self, id: &RequestId, now: Instant, cap: Duration) {
        let Some((mut pending, place)) = self.pending.remove(id) else {
            return;
        };
        let old = pending.deadline;
        if place == Place::Map {
            self.deadlines.remove(old, id);
        }
        pending.deadline = (now + pending.timeout).min(pending.started + cap).max(old);
        let (new, timeout) = (pending.deadline, pending.timeout);
        self.pending.insert(id.clone(), pending, |_| false);
        self.deadlines.insert(new, timeout, id.clone());
    }

    /// Ends every pending request (session closing); returns the application's ids.
    pub(crate) fn drain_app(&mut self) -> Vec<RequestId> {
        self.deadlines.clear();
        self.keep_alive = None;
        let mut ids: Vec<RequestId> = self
            .pending
            .drain()
            .into_iter()
            .filter(|(_, p)| p.purpose != Purpose::KeepAlive)
            .map(|(id, _)| id)
            .collect();
        ids.sort();
        ids
    }
}

/// A server's request id: `s-<n>`. Servers seldom send requests (sampling, elicitation):
/// the formatting stays out of `start_request` (instruction cache).
#[cold]
#[inline(never)]
fn server_id(n: u64) -> RequestId {
    RequestId::string(format!("s-{n}"))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CancelledOut<'a> {
    request_id: &'a RequestId,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProgressIn {
    progress_token: RequestId,
    progress: f64,
    #[serde(default)]
    total: Option<f64>,
    #[serde(default)]
    message: Option<String>,
}

impl Session {
    /// Sends a request; the session allocates its id. It ends with exactly one
    /// `Event::Completed`.
    pub fn send_request(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<RawJson>,
        opts: RequestOptions,
    ) -> Result<RequestId, SendError> {
        self.check_send_request(method)?;
        super::sending::check_structured(params.as_ref())?;
        if self.outbound.pending.len() >= self.config.max_pending_outbound {
            return Err(SendError::TooManyPending);
        }
        if self.queue.len() >= self.config.max_outbound_queue {
            return Err(SendError::QueueFull);
        }
        let method = m::intern_method(method);
        self.start_request(now, method, params, opts, Purpose::App)
    }

    /// Registers and queues a request that passed every check.
    pub(crate) fn start_request(
        &mut self,
        now: Instant,
        method: Method,
        params: Option<RawJson>,
        opts: RequestOptions,
        purpose: Purpose,
    ) -> Result<RequestId, SendError> {
        let id = self.outbound.allocate();
        let params = if opts.progress {
            Some(with_progress_token(params.as_ref(), &id)?)
        } else {
            params
        };
        let timeout = opts.timeout.unwrap_or(self.config.request_timeout);
        let deadline = now + timeout;
        let pending = Pending {
            purpose,
            started: now,
            deadline,
            timeout,
            progress: opts.progress,
        };
        self.outbound.insert(id.clone(), pending);
        let request = Request {
            id: id.clone(),
            method,
            params,
        };
        self.enqueue(Message::Request(request), opts.related_to);
        Ok(id)
    }

    /// Cancels one of our pending requests: it completes with `Outcome::Cancelled` and the
    /// peer gets `notifications/cancelled`. A late response is dropped and counted.
    pub fn cancel(
        &mut self,
        now: Instant,
        id: &RequestId,
        reason: Option<String>,
    ) -> Result<(), SendError> {
        let _ = now;
        if self.state == State::Closed {
            return Err(SendError::Closed);
        }
        match self.outbound.pending.get(id).map(|p| p.purpose) {
            None | Some(Purpose::KeepAlive) => Err(SendError::UnknownRequest),
            Some(Purpose::Initialize) => Err(SendError::NotCancellable),
            Some(Purpose::App) => {
                self.outbound.remove(id);
                self.abandon(id, reason.as_deref().or(Some("cancelled")));
                self.push_event(
                    Event::Completed {
                        id: id.clone(),
                        outcome: Outcome::Cancelled,
                    },
                    false,
                );
                Ok(())
            }
        }
    }

    /// Remembers the id of an abandoned request and tells the peer to stop.
    fn abandon(&mut self, id: &RequestId, reason: Option<&str>) {
        self.outbound.tombstones.insert(id.clone());
        let params = RawJson::from_serialize(&CancelledOut {
            request_id: id,
            reason,
        });
        let Ok(params) = params else { return };
        let n = Notification {
            method: m::intern_method(m::NOTIFICATIONS_CANCELLED),
            params: Some(params),
        };
        if self
            .enqueue_command(Message::Notification(n), None)
            .is_err()
        {
            self.stats.replies_dropped += 1;
        }
    }

    /// A response from the peer: matched by exact id against the pending table.
    pub(crate) fn handle_response(&mut self, now: Instant, response: Response) {
        let Some(id) = response.id else {
            self.stats.id_less_errors_dropped += 1;
            return;
        };
        let Some(pending) = self.outbound.remove(&id) else {
            return self.drop_unmatched(&id);
        };
        let outcome = match response.outcome {
            Ok(result) => Outcome::Result(result),
            Err(error) => Outcome::Error(error),
        };
        self.finish_pending(now, id, pending.purpose, outcome);
    }

    /// Ends pending request `id`, just taken out of the table, with `outcome`.
    fn finish_pending(&mut self, now: Instant, id: RequestId, purpose: Purpose, outcome: Outcome) {
        match purpose {
            Purpose::App => {
                self.push_event(Event::Completed { id, outcome }, false);
            }
            Purpose::Initialize => self.handle_initialize_outcome(now, id, outcome),
            Purpose::KeepAlive => {}
        }
    }

    /// A response that matches no pending request: late (we gave up on it) or unknown. An
    /// unknown one is reported ([`Event::UnmatchedResponse`]).
    #[cold]
    #[inline(never)]
    fn drop_unmatched(&mut self, id: &RequestId) {
        if self.outbound.tombstones.contains(id) {
            self.stats.late_responses_dropped += 1;
            return;
        }
        self.stats.unknown_responses_dropped += 1;
        let pending_other_type =
            other_type(id).filter(|other| self.outbound.pending.get(other).is_some());
        let event = Event::UnmatchedResponse {
            id: id.clone(),
            pending_other_type,
        };
        self.push_event(event, true);
    }

    /// A response too long to read (`error` is `FrameError::TooLong` with a response head):
    /// the pending request its id names fails at once with an error naming the limit, instead
    /// of waiting for its deadline.
    #[cold]
    #[inline(never)]
    pub(crate) fn fail_oversized_response(&mut self, now: Instant, error: &FrameError) {
        let FrameError::TooLong { limit, len, head } = error else {
            return;
        };
        let Some(id) = head.id.clone() else {
            return;
        };
        let Some(pending) = self.outbound.remove(&id) else {
            return self.drop_unmatched(&id);
        };
        let text = super::describe_too_long("response", *limit, *len);
        let outcome = Outcome::Error(ErrorObject::internal(format!("{text}; it was discarded")));
        self.finish_pending(now, id, pending.purpose, outcome);
    }

    /// Ends pending request `id` with `error` (an answer this side made up: the peer's could
    /// not be taken). An id not pending is left alone: it is reported when nothing answers.
    pub(crate) fn fail_pending_with(&mut self, now: Instant, id: RequestId, error: ErrorObject) {
        if let Some(pending) = self.outbound.remove(&id) {
            self.finish_pending(now, id, pending.purpose, Outcome::Error(error));
        }
    }

    /// Ends every request whose deadline passed.
    pub(crate) fn expire_requests(&mut self, now: Instant) {
        while let Some(id) = self.outbound.pop_due(now) {
            let Some((pending, _)) = self.outbound.pending.remove(&id) else {
                continue;
            };
            match pending.purpose {
                Purpose::App => {
                    self.abandon(&id, Some("request timed out"));
                    let outcome = Outcome::TimedOut;
                    self.push_event(Event::Completed { id, outcome }, false);
                }
                Purpose::Initialize => {
                    // `initialize` is never cancelled: no notification, the session closes.
                    let outcome = Outcome::TimedOut;
                    self.push_event(Event::Completed { id, outcome }, false);
                    self.close_with(CloseReason::InitializeTimedOut);
                }
                Purpose::KeepAlive => {
                    self.outbound.keep_alive = None;
                    self.close_with(CloseReason::KeepAliveTimedOut);
                }
            }
        }
    }

    /// When the next keep-alive ping is due.
    pub(crate) fn next_keep_alive(&self) -> Option<Instant> {
        let interval = self.config.keep_alive_interval?;
        if self.state != State::Ready || self.input_ended || self.outbound.keep_alive.is_some() {
            return None;
        }
        Some(self.last_heard + interval)
    }

    pub(crate) fn keep_alive(&mut self, now: Instant) {
        if self.next_keep_alive().is_some_and(|at| at <= now) {
            let method = m::intern_method(m::PING);
            let opts = RequestOptions::default();
            if let Ok(id) = self.start_request(now, method, None, opts, Purpose::KeepAlive) {
                self.outbound.keep_alive = Some(id);
            }
        }
    }

    /// `notifications/progress` from the peer for one of our requests.
    pub(crate) fn handle_progress(&mut self, now: Instant, params: Option<RawJson>) {
        let parsed = params.as_ref().and_then(|p| p.parse::<ProgressIn>().ok());
        let Some(p) = parsed else {
            self.stats.progress_dropped += 1;
            return;
        };
        let id = p.progress_token;
        let reset = self.config.reset_timeout_on_progress;
        let cap = self.config.max_request_timeout;
        let Some(pending) = self.outbound.pending.get(&id) else {
            self.stats.progress_dropped += 1;
            return;
        };
        if !pending.progress || pending.purpose != Purpose::App {
            self.stats.progress_dropped += 1;
            return;
        }
        if reset {
            self.outbound.extend_deadline(&id, now, cap);
        }
        let event = Event::Progress {
            id,
            progress: p.progress,
            total: p.total,
            message: p.message,
        };
        if !self.push_event(event, true) {
            self.stats.progress_dropped += 1;
        }
    }
}

/// The same id as the other JSON type: `"1"` for `1`, `1` for `"1"` (`None` when the string
/// is not an integer written canonically).
fn other_type(id: &RequestId) -> Option<RequestId> {
    if let Some(n) = id.as_number() {
        return Some(RequestId::string(n.to_string()));
    }
    let text = id.as_str()?;
    let n: i128 = text.parse().ok()?;
    (n.to_string() == text)
        .then(|| RequestId::from_i128(n))
        .flatten()
}

/// `params` with `_meta.progressToken` set to `token`.
fn with_progress_token(params: Option<&RawJson>, token: &RequestId) -> Result<RawJson, SendError> {
    let mut object: Map<String, Value> = match params {
        None => Map::new(),
        Some(p) => p.parse().map_err(|_| SendError::InvalidParams)?,
    };
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(meta) = meta else {
        return Err(SendError::InvalidParams);
    };
    let token = serde_json::to_value(token).map_err(|_| SendError::InvalidParams)?;
    meta.insert("progressToken".to_owned(), token);
    RawJson::from_serialize(&object).map_err(|_| SendError::InvalidParams)
}
