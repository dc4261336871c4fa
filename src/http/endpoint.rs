//! The Streamable HTTP server endpoint: POST/GET/DELETE on one path, the session table
//! (ids from caller-supplied random bytes, idle expiry, a handshake grace, a session cap whose
//! un-initialized sessions make room for new ones), the table of stateless exchanges in flight
//! (its own cap), header rules, and the streams each response body is pulled from.

use std::time::Instant;

use bytes::Bytes;

use super::admission::{self, KnownFields};
use super::body_budget::BodyBudget;
use super::config::{EndpointConfig, EndpointStats, ResponseMode};
use super::headers::accepts_json_and_sse;
use super::listen_slots::ListenSlots;
use super::machine::{ExchangeMachine, SessionMachine};
use super::peer::{Peer, PeerCounts};
use super::reply::{
    cancelled_id, error, method_not_allowed, rpc_error, too_large, undecodable, Refusal,
};
use super::session_table::{Expiry, Lapse, SessionTable};
use super::streams::{LogicalStream, Mode, Released, SessionState, StreamChunk};
use crate::session::idhash::IdMap;
use keepalive::KeepAlives;
#[cfg(test)]
#[path = "endpoint_deadline_tests.rs"]
mod deadline_tests;
#[path = "endpoint_get.rs"]
mod get;
#[path = "endpoint_keepalive.rs"]
mod keepalive;
#[path = "endpoint_log.rs"]
mod log;
#[cfg(test)]
#[path = "endpoint_log_tests.rs"]
mod log_tests;
#[path = "endpoint_relay.rs"]
mod relay;
#[path = "endpoint_share.rs"]
mod share;
#[cfg(test)]
#[path = "endpoint_share_tests.rs"]
mod share_tests;
pub use share::SessionChange;
pub use state_claim::StateClaim;
pub use task_route::TaskRequest;
#[path = "endpoint_shutdown.rs"]
mod shutdown;
#[cfg(test)]
#[path = "endpoint_shutdown_tests.rs"]
mod shutdown_tests;
#[path = "endpoint_state_claim.rs"]
mod state_claim;
#[path = "endpoint_stateless.rs"]
mod stateless;
#[path = "endpoint_task_route.rs"]
mod task_route;

use super::types::{Body, HttpRequestHead, HttpResponse, StreamId};
use super::HttpMethod;
use crate::jsonrpc::{decode, Incoming, Message, RequestId};
use crate::model::ProtocolVersion;
use crate::runtime::Job;
use crate::session::TransmitKind;
use crate::stateless::ListenChange;

const JSON: &str = "application/json";
const SSE: &str = "text/event-stream";

/// What a response connection is attached to: a stateful session (by id) or a stateless
/// exchange (by serial).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Owner {
    Session(String),
    Exchange(u64),
}

/// The server endpoint, generic over the per-session machine `M` built by a factory.
pub struct Endpoint<M> {
    config: EndpointConfig,
    factory: Box<dyn FnMut(Instant) -> M + Send>,
    sessions: SessionTable<String, M>,
    /// Stateless exchanges in flight (sessionless 2025 POSTs and 2026-07-28 requests whose
    /// answer is still streaming): never counted against `max_sessions`.
    exchanges: SessionTable<u64, M>,
    /// Attached connection → (owner, logical stream).
    conns: IdMap<StreamId, (Owner, u64)>,
    next_conn: u64,
    next_exchange: u64,
    /// The 2026-07-28 exchanges holding a `subscriptions/listen` stream, with their peers.
    listeners: ListenSlots,
    /// Jobs that outlive their stateless exchange (a task's handler keeps running after the
    /// `CreateTaskResult` answered the request), for the driver.
    pub(super) detached_jobs: std::collections::VecDeque<Job>,
    /// Connections of removed sessions since the driver last asked (see
    /// [`Endpoint::touched_streams`]).
    released: Released<4096>,
    /// Live sessions per peer key (when a `peer_limit` is set).
    peers: PeerCounts,
    stats: EndpointStats,
    /// The last instant handed in (see the keep-alive module).
    clock: Option<Instant>,
    /// When each SSE response's keep-alive comment may be due.
    keep_alives: KeepAlives,
    /// Session changes for the driver to store (only with an `instance_id`).
    changes: std::collections::VecDeque<share::Noted>,
    /// Serial of the next request-id prefix handed to a session (only with an `instance_id`).
    prefixes: u64,
    /// What logged streams wrote, for the driver to store (see the log module).
    stream_log: log::StreamLog,
    /// Changes 2026-07-28 exchanges made, for the driver to hand to other instances (only
    /// with an `instance_id`).
    listen_out: std::collections::VecDeque<ListenChange>,
    /// Sessions ended since the driver last asked (only with `report_ended_sessions`).
    ended: std::collections::VecDeque<String>,
    /// GET streams moved between instances: what to tell them (see the relay module).
    relays: relay::Relays,
    /// Bytes of bodies whose requests are still being answered.
    pub(super) bodies: BodyBudget,
    /// The server is shutting down (see the shutdown module).
    shutting_down: bool,
}

impl<M: SessionMachine + ExchangeMachine> Endpoint<M> {
    /// An endpoint whose sessions are built by `factory(now)`.
    pub fn new(config: EndpointConfig, factory: impl FnMut(Instant) -> M + Send + 'static) -> Self {
        let config_max_bodies = config.max_body_bytes_in_flight;
        Endpoint {
            sessions: SessionTable::new(Expiry {
                idle: Some(config.idle_timeout),
                handshake: Some(config.handshake_grace),
            }),
            exchanges: SessionTable::new(Expiry {
                idle: None,
                handshake: None,
            }),
            config,
            factory: Box::new(factory),
            conns: IdMap::default(),
            next_conn: 0,
            next_exchange: 0,
            listeners: ListenSlots::default(),
            detached_jobs: std::collections::VecDeque::new(),
            released: Released::default(),
            peers: PeerCounts::default(),
            stats: EndpointStats::default(),
            clock: None,
            keep_alives: KeepAlives::default(),
            changes: std::collections::VecDeque::new(),
            prefixes: 0,
            stream_log: log::StreamLog::default(),
            listen_out: std::collections::VecDeque::new(),
            ended: std::collections::VecDeque::new(),
            relays: relay::Relays::default(),
            bodies: BodyBudget::new(config_max_bodies),
            shutting_down: false,
        }
    }

    /// Stateful sessions held now.
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// Stateless exchanges in flight now (their answers still streaming).
    pub fn exchange_count(&self) -> usize {
        self.exchanges.len()
    }

    /// Bytes of POST bodies whose requests are still being answered (bounded by
    /// `max_body_bytes_in_flight`).
    pub fn body_bytes_in_flight(&self) -> usize {
        self.bodies.held()
    }

    /// Counters.
    pub fn stats(&self) -> &EndpointStats {
        &self.stats
    }

    /// Messages of session `id` that had no stream to go on.
    pub fn dropped_messages(&self, id: &str) -> Option<u64> {
        self.sessions.get(id).map(|s| s.dropped)
    }

    /// The machine of session `id` (to send server-initiated messages through it).
    pub fn machine_mut(&mut self, id: &str) -> Option<&mut M> {
        self.sessions.get_mut(id).map(|s| &mut s.machine)
    }

    /// One HTTP request. `random` seeds the session id if this is an `initialize`.
    pub fn handle_request(
        &mut self,
        now: Instant,
        head: &HttpRequestHead,
        body: Bytes,
        random: [u8; 16],
    ) -> HttpResponse {
        self.clock = Some(now);
        let resp = self.serve_request(now, head, body, random);
        if self.config.instance_id.is_some() {
            self.note_changes(head, &resp);
        }
        self.flush();
        resp
    }

    fn serve_request(
        &mut self,
        now: Instant,
        head: &HttpRequestHead,
        body: Bytes,
        random: [u8; 16],
    ) -> HttpResponse {
        let fields = KnownFields::of(head);
        if let Err(resp) = admission::check_fields(&self.config, &fields) {
            return resp;
        }
        if self.shutting_down {
            return super::reply::service_unavailable(&body, "the server is shutting down");
        }
        if Self::is_stateless(&fields) {
            return self.handle_stateless(now, head, body);
        }
        match head.method {
            HttpMethod::Post => self.handle_post(now, &head.peer, &fields, body, random),
            HttpMethod::Get => self.handle_get(now, &fields),
            HttpMethod::Delete => self.handle_delete(now, &fields),
            HttpMethod::Other => method_not_allowed(),
        }
    }

    fn handle_post(
        &mut self,
        now: Instant,
        peer: &Peer,
        fields: &KnownFields<'_>,
        body: Bytes,
        random: [u8; 16],
    ) -> HttpResponse {
        let accept = fields.accept.unwrap_or("");
        if !accepts_json_and_sse(accept) {
            return error(
                406,
                "Not Acceptable: Accept must allow application/json and text/event-stream",
            );
        }
        if let Err(resp) = admission::check_json_body(&self.config, fields, body.len()) {
            if resp.status == 413 {
                return too_large(&body, self.config.max_body);
            }
            return resp;
        }
        let incoming = match decode(&body) {
            Ok(incoming) => incoming,
            Err(e) => {
                if e.response_id(&body).is_some() {
                    self.hand_unreadable_answer(now, fields.session_id, body);
                }
                return undecodable(&e);
            }
        };
        // The ids of the requests in the body, walked where needed rather than collected:
        // almost every POST carries one message, and a `Vec` of it would be an allocation.
        let requests = || {
            messages(&incoming).filter_map(|m| match m {
                Message::Request(r) => Some(&r.id),
                _ => None,
            })
        };
        let cancelled: Vec<RequestId> = messages(&incoming).filter_map(cancelled_id).collect();
        let is_init =
            matches!(&incoming, Incoming::Single(Message::Request(r)) if r.method == "initialize");
        let is_batch = matches!(incoming, Incoming::Batch(_));
        // The id a refusal names: the request's when the body is one request, else null.
        let id = match &incoming {
            Incoming::Single(Message::Request(r)) => Some(&r.id),
            _ => None,
        };
        if self.config.sessionless {
            let requests = requests().cloned().collect();
            return self.handle_sessionless(now, fields, body, requests, is_batch);
        }
        // Checked now (it reads only the header), reported after the session lookup: an
        // unknown session is a 404 whatever the version header says.
        let version = if is_init {
            Ok(())
        } else {
            self.check_version(fields).map(drop)
        };
        // The id as the client sent it (borrowed from the head), or the new one.
        let new_sid;
        let (sid, created) = if is_init && fields.session_id.is_none() {
            match self.create_session(now, peer, random) {
                Ok(sid) => {
                    new_sid = sid;
                    (new_sid.as_str(), true)
                }
                Err(refusal) => return refusal.answer(id),
            }
        } else {
            match required_session_id(fields) {
                Ok(sid) => (sid, false),
                Err(refusal) => return refusal.answer(id),
            }
        };
        // One lookup finds the session and proves it exists.
        let Some(session) = self.sessions.get_mut(sid) else {
            return SESSION_NOT_FOUND.answer(id);
        };
        if let Err(refusal) = version {
            return refusal.answer(id);
        }
        session.last_activity = now;
        if is_batch && session.machine.protocol_version() != Some(ProtocolVersion::V2025_03_26) {
            return rpc_error(
                400,
                -32600,
                "Invalid Request: batches are only allowed in 2025-03-26",
            );
        }
        if requests().next().is_some() && !self.bodies.admits(body.len()) {
            self.stats.bodies_refused += 1;
            return BODIES_IN_FLIGHT.answer(id);
        }
        let key = session.next_stream;
        let Some(request_count) = session.claim_request_ids(key, requests()) else {
            return Refusal::new(400, -32600, "Invalid Request: request id already in flight")
                .answer(id);
        };
        if request_count == 0 {
            session.machine.handle_decoded(now, body, incoming);
            session.pump();
            cancelled
                .iter()
                .for_each(|id| session.request_cancelled(id));
            return HttpResponse::status(202);
        }
        session.next_stream += 1;
        let charge = self.bodies.charge(body.len());
        session.streams.insert(
            key,
            LogicalStream::new(Mode::Undecided, request_count).charged(charge),
        );
        session.machine.handle_decoded(now, body, incoming);
        session.pump();
        cancelled
            .iter()
            .for_each(|id| session.request_cancelled(id));
        let mode = self.config.response_mode;
        // Decided once, on the session in hand: the common answer, whole at once, needs no
        // second lookup of the session by id; a streamed one is opened in the mode decided.
        let mut resp = match decide(session, key, mode, is_batch) {
            Decision::Whole(resp) => resp,
            Decision::Stream { json } => {
                let conn = self.new_conn();
                self.open_stream(Owner::Session(sid.to_owned()), key, conn, json)
            }
        };
        if created {
            resp = resp.with_header_value("Mcp-Session-Id", sid);
        }
        resp
    }

    /// Decides JSON or SSE for stream `key` of exchange `xid` once the machine ran, and
    /// builds the head (a stateful POST decides on the session in hand).
    fn open_response(
        &mut self,
        xid: u64,
        key: u64,
        conn: StreamId,
        mode: ResponseMode,
        batch: bool,
    ) -> HttpResponse {
        let exchange = self.exchanges.get_mut(&xid).expect("present");
        match decide(exchange, key, mode, batch) {
            Decision::Whole(resp) => resp,
            Decision::Stream { json } => self.open_stream(Owner::Exchange(xid), key, conn, json),
        }
    }

    /// The state of `owner`, marked touched.
    fn state_mut(&mut self, owner: &Owner) -> Option<&mut SessionState<M>> {
        match owner {
            Owner::Session(sid) => self.sessions.get_mut(sid.as_str()),
            Owner::Exchange(xid) => self.exchanges.get_mut(xid),
        }
    }

    /// Attaches response `conn` to stream `key` of `owner`, which answers in JSON (`json`,
    /// once its response comes) or SSE, and builds the head.
    fn open_stream(&mut self, owner: Owner, key: u64, conn: StreamId, json: bool) -> HttpResponse {
        if let (Owner::Session(sid), false) = (&owner, json) {
            self.stream_log.watch(sid, self.sessions.get(sid.as_str()));
        }
        let session = self.state_mut(&owner).expect("present");
        let stream = session.streams.get_mut(&key).expect("just inserted");
        stream.conn = Some(conn);
        if json {
            stream.mode = Mode::Json;
            let raw = std::mem::take(&mut stream.raw);
            for (kind, data) in raw {
                session.emit(key, kind, data);
            }
        } else {
            session.start_sse(key);
        }
        self.conns.insert(conn, (owner, key));
        if !json {
            self.track_keep_alive(conn);
        }
        let ct = if json { JSON } else { SSE };
        let mut resp = HttpResponse::status(200).with_header("Content-Type", ct);
        if !json {
            resp = resp.with_header("Cache-Control", "no-cache");
        }
        resp.body = Body::Stream(conn);
        resp
    }

    /// Pulls the next bytes of response body `conn`. `None`: nothing now (call again after
    /// the next input or wake-up).
    #[must_use]
    pub fn poll_stream(&mut self, conn: StreamId, buf: &mut Vec<u8>) -> Option<StreamChunk> {
        let chunk = match self.pull_stream(conn, buf) {
            None => self.end_at_shutdown(conn),
            chunk => chunk,
        };
        self.flush();
        chunk
    }

    /// Whether [`Endpoint::poll_stream`] would hand out nothing for response `conn` now: its
    /// stream is attached to it, has no bytes queued, is neither finished nor closing, and its
    /// session's machine has nothing waiting to be routed ([`SessionMachine::is_quiet`]). A driver
    /// holding response bodies open polls, after an input, only the ones not quiet, instead
    /// of every open stream of every session. `false` whenever unsure (an unknown `conn`, a
    /// stateless exchange's stream).
    #[must_use]
    pub fn stream_quiet(&self, conn: StreamId) -> bool {
        let Some((Owner::Session(sid), key)) = self.conns.get(&conn) else {
            return false;
        };
        let Some(session) = self.sessions.get(sid.as_str()) else {
            return false;
        };
        let Some(stream) = session.streams.get(key) else {
            return false;
        };
        !self.shutting_down
            && stream.conn == Some(conn)
            && stream.queue.is_empty()
            && !stream.finished
            && !stream.close_requested
            && session.machine.is_quiet()
    }

    /// Appends to `out` the response streams whose output can have changed through the
    /// endpoint since the last call: the streams attached to a session it touched (a
    /// request, a timer, a body's pull, a listen event), and the connections that stopped
    /// serving a stream (replaced by a newer GET or resume, cut loose, their session ended),
    /// whose bodies must be polled once more to end. A driver holding many response bodies
    /// open looks, after an input, at these (asking [`Endpoint::stream_quiet`] of each)
    /// instead of at every open body: the cost follows the sessions an input touched, not the
    /// streams held open.
    ///
    /// Returns `false` when the list is incomplete (more releases between two calls than the
    /// endpoint keeps): the driver then checks every body it holds.
    ///
    /// A machine can also get output from outside the endpoint: a handler job finishing on
    /// the driver's executor, or a handle on another thread, pushes to its outbox and calls
    /// the wake hook. No session is touched then, so after a wake-up the driver checks every
    /// body it holds.
    pub fn touched_streams(&mut self, out: &mut Vec<StreamId>) -> bool {
        let mut complete = self.released.drain_into(out);
        let mut visit = |session: &mut SessionState<M>| {
            out.extend(session.streams.values().filter_map(|stream| stream.conn));
            complete &= session.released.drain_into(out);
        };
        self.sessions.drain_touched(&mut visit);
        self.exchanges.drain_touched(&mut visit);
        complete
    }

    fn pull_stream(&mut self, conn: StreamId, buf: &mut Vec<u8>) -> Option<StreamChunk> {
        let Some((owner, key)) = self.conns.get(&conn).cloned() else {
            return Some(StreamChunk::End);
        };
        let Some(session) = self.state_mut(&owner) else {
            self.conns.remove(&conn);
            return Some(StreamChunk::End);
        };
        session.pump();
        if let Owner::Exchange(xid) = owner {
            self.fan_out(xid);
        }
        let clock = self.clock;
        let Some(session) = self.state_mut(&owner) else {
            return Some(StreamChunk::End);
        };
        let Some(stream) = session.streams.get_mut(&key) else {
            self.conns.remove(&conn);
            return Some(StreamChunk::End);
        };
        if stream.conn != Some(conn) {
            self.conns.remove(&conn);
            return Some(StreamChunk::End);
        }
        if let Some(chunk) = stream.queue.pop_front() {
            stream.last_written = clock;
            buf.extend_from_slice(&chunk);
            return Some(StreamChunk::Data { len: chunk.len() });
        }
        if stream.finished {
            session.streams.remove(&key);
            self.conns.remove(&conn);
            self.keep_alives.forget(conn);
            if let Owner::Exchange(xid) = owner {
                self.exchanges.remove(&xid);
            }
            return Some(StreamChunk::End);
        }
        if stream.close_requested {
            // SEP-1699: the handler closed it; the client resumes by GET with Last-Event-ID.
            self.detach(conn);
            return Some(StreamChunk::End);
        }
        None
    }

    /// The client went away from response `conn`. Not a cancellation: the request keeps
    /// running and what it sends is kept for resumption.
    pub fn stream_closed(&mut self, conn: StreamId) {
        self.detach(conn);
        self.flush();
    }

    /// Ends response `conn` early without ending its stream (SEP-1699): only for 2025-11-25
    /// sessions, whose priming event carried an id and `retry`, so the client resumes by GET.
    /// Returns whether it was closed.
    pub fn close_stream(&mut self, conn: StreamId) -> bool {
        let primes = match self.conns.get(&conn) {
            Some((Owner::Session(sid), _)) => {
                self.sessions.get(sid.as_str()).is_some_and(|s| s.primes())
            }
            _ => false,
        };
        if primes {
            self.detach(conn);
            self.flush();
        }
        primes
    }

    fn detach(&mut self, conn: StreamId) {
        self.keep_alives.forget(conn);
        let Some((owner, key)) = self.conns.remove(&conn) else {
            return;
        };
        let Some(session) = self.state_mut(&owner) else {
            return;
        };
        if let Some(stream) = session.streams.get_mut(&key) {
            if stream.conn == Some(conn) {
                stream.conn = None;
                stream.queue.clear();
                if stream.finished {
                    session.streams.remove(&key);
                }
            }
        }
        // A body still parked on it (a stream ended early by `close_stream`) must be polled
        // once more to end.
        session.release(conn);
        if let Owner::Exchange(xid) = owner {
            if !session.has_attached() {
                self.exchanges.remove(&xid);
            }
        }
    }

    /// Fires machine timers, expires idle sessions and sessions whose handshake grace ran
    /// out, and queues due SSE keep-alive comments. Only the sessions and exchanges whose
    /// deadline has come are touched.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.clock = Some(now);
        self.flush();
        let mut expired = Vec::new();
        for sid in self.sessions.due(now) {
            let Some(s) = self.sessions.get_mut(sid.as_str()) else {
                continue;
            };
            if s.machine.poll_timeout().is_some_and(|t| t <= now) {
                s.machine.handle_timeout(now);
                s.pump();
            }
            if let Some(lapse) = self.sessions.lapse(sid.as_str(), now) {
                expired.push((sid, lapse));
            }
        }
        let mut fired = Vec::new();
        for xid in self.exchanges.due(now) {
            let Some(s) = self.exchanges.get_mut(&xid) else {
                continue;
            };
            if s.machine.poll_timeout().is_some_and(|t| t <= now) {
                s.machine.handle_timeout(now);
                s.pump();
                fired.push(xid);
            }
        }
        for xid in fired {
            self.fan_out(xid);
        }
        for (sid, lapse) in expired {
            match lapse {
                Lapse::Idle => self.stats.sessions_expired += 1,
                Lapse::Handshake => self.stats.handshakes_expired += 1,
            }
            self.terminate(now, &sid);
        }
        self.fire_keep_alives(now);
        self.flush();
    }

    /// The earliest deadline: a machine timer, a session's idle expiry, or an SSE response's
    /// keep-alive. From the deadline indexes: no walk over the sessions or streams.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let sessions = self.sessions.next_deadline();
        sessions
            .into_iter()
            .chain(self.exchanges.next_deadline())
            .chain(self.keep_alives.next())
            .min()
    }

    /// A pending handler future of any session, for the driver to run. Only sessions touched
    /// since their machine last had none are asked.
    #[must_use]
    pub fn poll_job(&mut self) -> Option<Job> {
        if let Some(job) = self.detached_jobs.pop_front() {
            return Some(job);
        }
        let job = match self.sessions.poll_job() {
            Some(job) => Some(job),
            None => self.exchanges.poll_job(),
        };
        self.flush();
        job
    }

    /// Re-files the sessions and exchanges touched since the last flush.
    fn flush(&mut self) {
        self.sessions.flush();
        self.exchanges.flush();
    }

    /// The next session that ended (by DELETE, expiry, eviction or an end announced by
    /// another instance) since the last call, oldest first; only with
    /// `EndpointConfig::report_ended_sessions`. New ones appear after any `handle_*` call.
    #[must_use]
    pub fn poll_ended_session(&mut self) -> Option<String> {
        self.ended.pop_front()
    }

    fn terminate(&mut self, now: Instant, sid: &str) {
        if let Some(mut s) = self.sessions.remove(sid) {
            s.machine.close(now);
            if self.config.report_ended_sessions {
                if self.ended.len() >= self.config.max_sessions.max(1) {
                    self.ended.pop_front();
                }
                self.ended.push_back(sid.to_owned());
            }
        }
        self.peers.ended(sid);
        let released = &mut self.released;
        self.conns.retain(|&conn, (owner, _)| {
            if !matches!(owner, Owner::Session(owner) if owner == sid) {
                return true;
            }
            // Its body ends at its next poll, which the driver must make happen.
            released.push(conn);
            false
        });
    }

    /// A new session for an `initialize`. When the table is full, the oldest session whose
    /// handshake is not done makes room; with none, 503.
    fn create_session(
        &mut self,
        now: Instant,
        peer: &Peer,
        random: [u8; 16],
    ) -> Result<String, Refusal> {
        let peer_key = self.admit_peer(peer)?;
        self.make_room(now)?;
        let sid: String = random.iter().map(|b| format!("{b:02x}")).collect();
        if self.sessions.contains_key(sid.as_str()) {
            return Err(Refusal::new(
                503,
                -32000,
                "Service Unavailable: session id already in use",
            ));
        }
        let mut machine = (self.factory)(now);
        let prefix = self.next_id_prefix();
        if let Some(prefix) = &prefix {
            machine.number_requests_under(prefix);
        }
        let mut state = SessionState::new(
            machine,
            now,
            self.config.replay_budget,
            self.config.retry_ms,
        );
        self.equip(&sid, &mut state, prefix);
        self.sessions.insert(sid.clone(), state);
        if let Some(key) = peer_key {
            self.peers.opened(&sid, key);
        }
        Ok(sid)
    }

    /// Room for one more session: when the table is full, the oldest session whose handshake
    /// is not done is ended; with none such, 503.
    fn make_room(&mut self, now: Instant) -> Result<(), Refusal> {
        if self.sessions.len() >= self.config.max_sessions {
            match self.sessions.oldest_unready().cloned() {
                Some(victim) => {
                    self.stats.handshakes_evicted += 1;
                    self.terminate(now, &victim);
                }
                None => {
                    self.stats.sessions_refused += 1;
                    return Err(Refusal::new(
                        503,
                        -32000,
                        "Service Unavailable: too many sessions",
                    ));
                }
            }
        }
        Ok(())
    }

    /// The `peer_limit`'s key for `peer` (`None`: not limited), or 429 with `Retry-After`
    /// when the limit refuses it one more session.
    fn admit_peer(&mut self, peer: &Peer) -> Result<Option<String>, Refusal> {
        let admitted = self.peers.admit(self.config.peer_limit.as_deref(), peer);
        if admitted.is_err() {
            self.stats.peers_refused += 1;
        }
        admitted
    }

    /// A POSTed answer that cannot be read (an invalid response, or JSON cut short) but whose
    /// first bytes name a request the session sent: the session fails that request at once
    /// (`the response could not be read: ...`) instead of letting it wait for its deadline.
    /// The POST itself gets 400.
    #[cold]
    #[inline(never)]
    fn hand_unreadable_answer(&mut self, now: Instant, sid: Option<&str>, body: Bytes) {
        let Some(session) = sid.and_then(|sid| self.sessions.get_mut(sid)) else {
            return;
        };
        session.last_activity = now;
        session.machine.handle_input(now, body);
        session.pump();
    }

    /// A serial for a new stateless exchange, or 503 when `max_exchanges` are in flight.
    fn claim_exchange(&mut self) -> Result<u64, Refusal> {
        if self.exchanges.len() >= self.config.max_exchanges {
            self.stats.exchanges_refused += 1;
            return Err(Refusal::new(
                503,
                -32000,
                "Service Unavailable: too many exchanges in flight",
            ));
        }
        let xid = self.next_exchange;
        self.next_exchange += 1;
        Ok(xid)
    }

    fn lookup<'a>(&self, fields: &KnownFields<'a>) -> Result<&'a str, Refusal> {
        let sid = required_session_id(fields)?;
        if !self.sessions.contains_key(sid) {
            return Err(SESSION_NOT_FOUND);
        }
        Ok(sid)
    }

    /// The `MCP-Protocol-Version` header: absent means 2025-03-26; unsupported is 400. Any
    /// supported value is accepted, even one other than the negotiated version (the
    /// conformance suite sends 2025-03-26 on 2025-11-25 sessions).
    fn check_version(&self, fields: &KnownFields<'_>) -> Result<ProtocolVersion, Refusal> {
        admission::header_version(&self.config, fields)
            .map(|v| v.unwrap_or(ProtocolVersion::V2025_03_26))
    }

    fn new_conn(&mut self) -> StreamId {
        self.next_conn += 1;
        StreamId(self.next_conn)
    }
}

/// The `Mcp-Session-Id` header, or the 400 for a request without one.
fn required_session_id<'a>(fields: &KnownFields<'a>) -> Result<&'a str, Refusal> {
    fields.session_id.ok_or(Refusal::new(
        400,
        -32000,
        "Bad Request: Mcp-Session-Id header is required",
    ))
}

/// The 404 for a session id the endpoint does not hold.
const SESSION_NOT_FOUND: Refusal = Refusal::new(404, -32001, "Session not found");
pub(super) const BODIES_IN_FLIGHT: Refusal = Refusal::new(
    503,
    -32000,
    "Service Unavailable: too many request bytes in flight",
);

/// Whether POST stream `key` of `session` answers in JSON (else SSE), now that the machine
/// ran: a batch has several responses, so it always streams.
fn answers_json<M: SessionMachine>(
    session: &SessionState<M>,
    key: u64,
    mode: ResponseMode,
    batch: bool,
) -> bool {
    let only_result = session
        .streams
        .get(&key)
        .is_some_and(|s| s.finished && s.raw.len() == 1);
    !batch
        && match mode {
            ResponseMode::AlwaysJson => true,
            ResponseMode::AlwaysSse => false,
            ResponseMode::Auto => only_result,
        }
}

/// How a POST stream answers, decided once its machine ran.
enum Decision {
    /// In JSON, all there already: the whole response (the stream is done with and removed).
    Whole(HttpResponse),
    /// Streamed: in JSON once its response comes (`json`), else in SSE.
    Stream {
        /// Whether the stream answers in JSON.
        json: bool,
    },
}

/// How POST stream `key` of `session` answers (see [`Decision`]).
fn decide<M: SessionMachine>(
    session: &mut SessionState<M>,
    key: u64,
    mode: ResponseMode,
    batch: bool,
) -> Decision {
    let json = answers_json(session, key, mode, batch);
    if json {
        if let Some(resp) = finished_json(session, key) {
            return Decision::Whole(resp);
        }
    }
    Decision::Stream { json }
}

/// The JSON response of POST stream `key`, which answers in JSON, when its answer is all
/// there already (the stream is done with and removed); `None` otherwise.
fn finished_json<M: SessionMachine>(
    session: &mut SessionState<M>,
    key: u64,
) -> Option<HttpResponse> {
    let stream = session.streams.get_mut(&key).filter(|s| s.finished)?;
    let raw = std::mem::take(&mut stream.raw);
    session.streams.remove(&key);
    let mut body = None;
    for (kind, data) in raw {
        match kind {
            TransmitKind::Response if body.is_none() => body = Some(data),
            _ => session.dropped += 1,
        }
    }
    let mut resp = HttpResponse::status(200).with_header("Content-Type", JSON);
    resp.body = body.map_or(Body::Empty, Body::Full);
    Some(resp)
}

/// The well-formed messages of a POST body, in order (a batch's malformed items left out).
pub(crate) fn messages(incoming: &Incoming) -> impl Iterator<Item = &Message> {
    let (single, batch) = match incoming {
        Incoming::Single(m) => (Some(m), &[][..]),
        Incoming::Batch(items) => (None, &items[..]),
    };
    single
        .into_iter()
        .chain(batch.iter().filter_map(|r| r.as_ref().ok()))
}
