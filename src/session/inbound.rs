//! The peer's requests to us: the in-flight table, gating of what arrives, admission control,
//! cancellation by the peer, and the application's responses and progress reports.
//!
//! Bounds: the in-flight table holds at most `max_inflight_inbound` entries (past it the
//! session answers `-32603` itself); cancelled ids are remembered up to `tombstone_capacity`.

use std::sync::LazyLock;
use std::time::Instant;

use memchr::memmem;

use serde::{Deserialize, Serialize};

use super::encoded::EncodedBuf;
use super::gating;
use super::inflight::InFlightTable;
use super::tombstones::Tombstones;
use super::{Event, Payload, Queued, Role, SendError, Session, State, TransmitKind};
use crate::jsonrpc::{
    self as m, code, ErrorObject, JsonWriter, Message, Notification, RawJson, Request, RequestId,
    Response,
};

/// One request the application has not answered yet.
#[derive(Debug)]
struct InFlight {
    /// The peer's `_meta.progressToken`, if it asked for progress.
    progress_token: Option<RequestId>,
}

/// Why `handle_request` refuses a request (unless it is a duplicate, which is dropped).
#[derive(Debug, Clone, Copy)]
enum Refusal {
    /// A request only our own role may send: method not found.
    WrongDirection,
    /// A request (other than `initialize` and `ping`) before the handshake ended.
    NotInitialized,
    /// A request for a capability this side did not declare: method not found.
    Undeclared(gating::Capability),
    /// A request past `max_inflight_inbound`: answered busy, counted apart.
    Busy,
}

/// The inbound half of the session's tables.
#[derive(Debug)]
pub(crate) struct Inbound {
    table: InFlightTable<InFlight>,
    cancelled: Tombstones,
}

impl Inbound {
    pub(crate) fn new(tombstone_capacity: usize) -> Self {
        Inbound {
            table: InFlightTable::default(),
            cancelled: Tombstones::new(tombstone_capacity),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    pub(crate) fn clear(&mut self) {
        self.table.clear();
    }

    /// The ids of the requests not answered yet, sorted.
    pub(crate) fn ids(&self) -> Vec<RequestId> {
        let mut ids = self.table.ids();
        ids.sort();
        ids
    }
}

#[derive(Deserialize)]
struct MetaOnly {
    #[serde(rename = "_meta", default)]
    meta: Option<ProgressMeta>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProgressMeta {
    #[serde(default)]
    progress_token: Option<RequestId>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CancelledIn {
    request_id: RequestId,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProgressOut<'a> {
    progress_token: &'a RequestId,
    progress: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

fn progress_token(params: Option<&RawJson>) -> Option<RequestId> {
    let params = params?;
    // Only parse when a token can be there: most requests carry none. The searcher is built
    // once; building it per request cost more than the search.
    static TOKEN: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"progressToken"));
    TOKEN.find(params.as_bytes())?;
    let parsed: MetaOnly = params.parse().ok()?;
    parsed.meta?.progress_token
}

impl Session {
    fn peer_role(&self) -> Role {
        match self.role {
            Role::Client => Role::Server,
            Role::Server => Role::Client,
        }
    }

    /// A request from the peer.
    ///
    /// A request whose id is already in flight is dropped before any other rule. The accepting
    /// path finds that out from its one insertion (one search of the table, not a lookup then an
    /// insertion); every other path looks the id up first.
    pub(crate) fn handle_request(&mut self, _now: Instant, request: Request) {
        if request.method == m::INITIALIZE && self.role == Role::Server {
            if self.dropped_as_duplicate(&request.id) {
                return;
            }
            return self.handle_initialize(request);
        }
        if request.method == m::PING {
            if self.dropped_as_duplicate(&request.id) {
                return;
            }
            self.stats.pings_answered += 1;
            return self.reply_result(request.id, RawJson::empty_object());
        }
        let rule = gating::request_rule(&request.method);
        if let Some((sender, _)) = rule {
            if !sender.allows(self.peer_role()) {
                return self.refuse_request(request, Refusal::WrongDirection);
            }
        }
        if self.state != State::Ready {
            return self.refuse_request(request, Refusal::NotInitialized);
        }
        if let Some((_, Some(cap))) = rule {
            if !self.self_declared(cap) {
                return self.refuse_request(request, Refusal::Undeclared(cap));
            }
        }
        if self.inbound.table.len() >= self.config.max_inflight_inbound {
            return self.refuse_request(request, Refusal::Busy);
        }
        let entry = InFlight {
            progress_token: progress_token(request.params.as_ref()),
        };
        if !self.inbound.table.insert_new(request.id.clone(), entry) {
            return self.drop_duplicate();
        }
        let event = Event::Request {
            id: request.id,
            method: request.method,
            params: request.params,
        };
        self.push_event(event, false);
    }

    /// Whether a request with this id is in flight, and so dropped (and counted) as a
    /// duplicate: the paths other than accepting ask this first, since a duplicate is dropped
    /// whatever else the request would have met.
    #[inline]
    fn dropped_as_duplicate(&mut self, id: &RequestId) -> bool {
        if !self.inbound.table.contains(id) {
            return false;
        }
        self.drop_duplicate();
        true
    }

    /// A request whose id is already in flight: dropped and counted.
    #[cold]
    #[inline(never)]
    fn drop_duplicate(&mut self) {
        self.stats.duplicate_requests_dropped += 1;
    }

    /// The refusals of `handle_request`: dropped instead if the id is in flight (a duplicate),
    /// else answered with the refusal's error and counted. Out of line so that the accepting
    /// path stays compact (instruction cache): the error texts are built only when one happens.
    #[cold]
    #[inline(never)]
    fn refuse_request(&mut self, request: Request, refusal: Refusal) {
        if self.dropped_as_duplicate(&request.id) {
            return;
        }
        let error = match refusal {
            Refusal::WrongDirection => ErrorObject::method_not_found(&request.method),
            Refusal::NotInitialized => {
                ErrorObject::invalid_request("Invalid Request: session not initialized")
            }
            Refusal::Undeclared(cap) => ErrorObject::new(
                code::METHOD_NOT_FOUND,
                format!(
                    "Method not found: {} (capability {cap} not declared)",
                    request.method
                ),
            ),
            Refusal::Busy => {
                self.stats.requests_refused_busy += 1;
                let error = ErrorObject::internal("server busy: too many requests in flight");
                return self.reply_error(Some(request.id), error);
            }
        };
        self.stats.requests_refused += 1;
        self.reply_error(Some(request.id), error);
    }

    /// A notification from the peer.
    // Not on the request/response path: kept out of `handle_message` (instruction cache).
    #[inline(never)]
    pub(crate) fn handle_notification(&mut self, now: Instant, n: Notification) {
        match n.method.as_ref() {
            m::NOTIFICATIONS_CANCELLED => return self.handle_cancelled(n.params),
            m::NOTIFICATIONS_PROGRESS => return self.handle_progress(now, n.params),
            m::NOTIFICATIONS_INITIALIZED if self.role == Role::Server => {
                return self.handle_initialized()
            }
            _ => {}
        }
        let wrong_way = gating::notification_rule(&n.method)
            .is_some_and(|(sender, _)| !sender.allows(self.peer_role()));
        // Before the handshake ends only log messages (server to client) may arrive.
        let early_log = n.method == m::NOTIFICATIONS_MESSAGE && self.role == Role::Client;
        if wrong_way || (self.state != State::Ready && !early_log) {
            self.stats.notifications_dropped += 1;
            return;
        }
        let event = Event::Notification {
            method: n.method,
            params: n.params,
        };
        if !self.push_event(event, true) {
            self.stats.notifications_dropped += 1;
        }
    }

    /// `notifications/cancelled`: the peer gives up on one of its in-flight requests.
    fn handle_cancelled(&mut self, params: Option<RawJson>) {
        let parsed = params.as_ref().and_then(|p| p.parse::<CancelledIn>().ok());
        let Some(c) = parsed else {
            self.stats.cancellations_ignored += 1;
            return;
        };
        // `initialize` is answered synchronously and never enters the table: never cancellable.
        if self.inbound.table.remove(&c.request_id).is_none() {
            self.stats.cancellations_ignored += 1;
            return;
        }
        self.inbound.cancelled.insert(c.request_id.clone());
        let event = Event::Cancelled {
            id: c.request_id,
            reason: c.reason,
        };
        self.push_event(event, false);
    }

    /// Answers an inbound request with a result.
    pub fn respond(&mut self, id: &RequestId, result: RawJson) -> Result<(), SendError> {
        self.finish_inbound(id, Ok(result))
    }

    /// Answers an inbound request with `result`, serialised straight into the outbound queue:
    /// the same bytes on the wire as `respond(id, RawJson::from_serialize(result)?)`, without
    /// the intermediate [`RawJson`] (its allocation and its copy into the message).
    ///
    /// If `result` fails to serialise, nothing is queued, the request stays in flight and the
    /// error is [`SendError::InvalidResult`].
    pub fn respond_serialize<T: Serialize + ?Sized>(
        &mut self,
        id: &RequestId,
        result: &T,
    ) -> Result<(), SendError> {
        self.respond_encoded(id, |encoded| encoded.push_result(id, result).ok())
    }

    /// Answers an inbound request with a result that `write` writes, without serde, straight
    /// into the outbound queue: `write` gets a [`JsonWriter`] and makes one JSON value with it
    /// (objects, arrays, keys, strings, numbers, booleans, null, embedded [`RawJson`]). The
    /// bytes are those serde_json's compact output (and so `respond_serialize`) gives the same
    /// value.
    ///
    /// The writer checks its calls as they come: if `write` misuses it (a key outside an
    /// object, a value where a key belongs, an unmatched close, a non-finite float, a second
    /// value) or leaves the value unfinished, nothing is queued, the request stays in flight
    /// and the error is [`SendError::InvalidResult`].
    pub fn respond_with(
        &mut self,
        id: &RequestId,
        write: impl FnOnce(&mut JsonWriter<'_>),
    ) -> Result<(), SendError> {
        self.respond_encoded(id, |encoded| encoded.push_result_with(id, write))
    }

    /// Answers an inbound request with a response `encode` appends to the encoded buffer
    /// (returning its length, `None` on failure, when it keeps nothing).
    fn respond_encoded(
        &mut self,
        id: &RequestId,
        encode: impl FnOnce(&mut EncodedBuf) -> Option<usize>,
    ) -> Result<(), SendError> {
        if self.state == State::Closed {
            return Err(SendError::Closed);
        }
        // One lookup: the entry is taken out first and put back if the result fails.
        let Some((key, in_flight)) = self.inbound.table.remove(id) else {
            return self.respond_unknown(id);
        };
        let Some(len) = encode(&mut self.encoded) else {
            return self.keep_unanswered(key, in_flight);
        };
        let payload = Payload::Encoded {
            len,
            kind: TransmitKind::Response,
        };
        self.queue.push_back(Queued {
            payload,
            related: Some(key),
        });
        Ok(())
    }

    /// The answer to a request not in flight: suppressed when the peer cancelled it, refused
    /// otherwise.
    #[cold]
    #[inline(never)]
    fn respond_unknown(&mut self, id: &RequestId) -> Result<(), SendError> {
        if self.inbound.cancelled.remove(id) {
            self.stats.responses_suppressed += 1;
            return Ok(());
        }
        Err(SendError::UnknownRequest)
    }

    /// A result that failed to encode: the request goes back in flight.
    #[cold]
    #[inline(never)]
    fn keep_unanswered(&mut self, key: RequestId, in_flight: InFlight) -> Result<(), SendError> {
        self.inbound.table.insert_new(key, in_flight);
        Err(SendError::InvalidResult)
    }

    /// Answers an inbound request with an error.
    pub fn respond_error(&mut self, id: &RequestId, error: ErrorObject) -> Result<(), SendError> {
        self.finish_inbound(id, Err(error))
    }

    fn finish_inbound(
        &mut self,
        id: &RequestId,
        outcome: Result<RawJson, ErrorObject>,
    ) -> Result<(), SendError> {
        if self.state == State::Closed {
            return Err(SendError::Closed);
        }
        if self.inbound.table.remove(id).is_none() {
            return self.respond_unknown(id);
        }
        let response = Response {
            id: Some(id.clone()),
            outcome,
        };
        self.enqueue(Message::Response(response), Some(id.clone()));
        Ok(())
    }

    /// Reports progress on an inbound request, with the token the peer gave. `Ok` and nothing
    /// sent when the peer asked for no progress or cancelled the request.
    pub fn notify_progress(
        &mut self,
        inbound: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), SendError> {
        if self.state == State::Closed {
            return Err(SendError::Closed);
        }
        let Some(entry) = self.inbound.table.get(inbound) else {
            if self.inbound.cancelled.contains(inbound) {
                return Ok(());
            }
            return Err(SendError::UnknownRequest);
        };
        let Some(token) = &entry.progress_token else {
            return Ok(());
        };
        // JSON has no NaN or infinity: they would go out as `null` and break the schema.
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            return Err(SendError::InvalidParams);
        }
        let params = ProgressOut {
            progress_token: token,
            progress,
            total,
            message,
        };
        let params = RawJson::from_serialize(&params).map_err(|_| SendError::InvalidParams)?;
        let n = Notification {
            method: m::intern_method(m::NOTIFICATIONS_PROGRESS),
            params: Some(params),
        };
        self.enqueue_command(Message::Notification(n), Some(inbound.clone()))
    }
}
