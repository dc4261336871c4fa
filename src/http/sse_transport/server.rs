//! The HTTP+SSE server endpoint (2024-11-05): a GET opens a session whose stream starts
//! with the `endpoint` event; POSTs to that URI carry the client's messages (202) and every
//! message of the session travels back on the stream. Same Host/Origin policy, limits and
//! idle rule as the Streamable [`Endpoint`](crate::http::Endpoint), from the same config, and
//! the same handshake rule: a session whose handshake is not done within `handshake_grace`
//! ends (its open stream does not keep it), and a GET when the table is full ends the oldest
//! such session to make room. The config's `peer_limit` counts these sessions per peer as the
//! Streamable endpoint counts its own: a GET that would open one too many gets the same 429
//! with `Retry-After`, and a session gives its place back when it ends.

use std::collections::HashMap;
use std::time::Instant;

use bytes::Bytes;

use super::session::SseTransportSession;
use crate::http::accepts;
use crate::http::admission::{self, KnownFields};
use crate::http::config::{EndpointConfig, EndpointStats};
use crate::http::endpoint::messages;
use crate::http::machine::SessionMachine;
use crate::http::peer::PeerCounts;
use crate::http::reply::{cancelled_id, error, rpc_error, too_large, undecodable, SHUTTING_DOWN};
use crate::http::streams::StreamChunk;
use crate::http::types::{Body, HttpRequestHead, HttpResponse, StreamId};
use crate::http::HttpMethod;
use crate::jsonrpc::{decode, ErrorObject, Incoming, Message};
use crate::runtime::Job;

/// Stream ids of the HTTP+SSE endpoint have this bit set, so they never collide with the
/// Streamable endpoint's (which count up from 1) when both are mounted in one server.
pub const SSE_TRANSPORT_STREAM_BIT: u64 = 1 << 62;

/// The query parameter naming the session in the POST URI (the TypeScript SDK's name).
pub const SESSION_PARAM: &str = "sessionId";

/// The HTTP+SSE server endpoint, generic over the per-session machine `M`.
pub struct SseTransportEndpoint<M> {
    config: EndpointConfig,
    /// The path POSTs go to; the `endpoint` event is `<messages_path>?sessionId=<id>`.
    messages_path: String,
    factory: Box<dyn FnMut(Instant) -> M + Send>,
    sessions: HashMap<String, SseTransportSession<M>>,
    /// Live sessions per peer key (when a `peer_limit` is set).
    peers: PeerCounts,
    /// Attached GET response → its session.
    conns: HashMap<StreamId, String>,
    next_conn: u64,
    /// The latest time seen, for closing a machine from `poll_stream` (which takes none).
    now: Option<Instant>,
    stats: EndpointStats,
    /// The server is shutting down: requests get 503.
    shutting_down: bool,
}

impl<M: SessionMachine> SseTransportEndpoint<M> {
    /// An endpoint whose sessions are built by `factory(now)`, taking POSTs at
    /// `messages_path` (the `endpoint` event names `<messages_path>?sessionId=<id>`).
    ///
    /// From `config` it applies the Host/Origin policy, `max_body`, `max_sessions`,
    /// `peer_limit`, `idle_timeout`, `handshake_grace`, the versions an `MCP-Protocol-Version` header may
    /// name, and `sse_keep_alive` (a `:` comment on every open stream that often). The rest
    /// does not apply: the HTTP+SSE transport has one stream per session and no resumption.
    pub fn new(
        config: EndpointConfig,
        messages_path: impl Into<String>,
        factory: impl FnMut(Instant) -> M + Send + 'static,
    ) -> Self {
        SseTransportEndpoint {
            config,
            messages_path: messages_path.into(),
            factory: Box::new(factory),
            sessions: HashMap::new(),
            peers: PeerCounts::default(),
            conns: HashMap::new(),
            next_conn: 0,
            now: None,
            stats: EndpointStats::default(),
            shutting_down: false,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &EndpointConfig {
        &self.config
    }

    /// The path POSTs go to.
    pub fn messages_path(&self) -> &str {
        &self.messages_path
    }

    /// Sessions held now.
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// Counters.
    pub fn stats(&self) -> &EndpointStats {
        &self.stats
    }

    /// Messages of session `id` that could not be delivered.
    pub fn dropped_messages(&self, id: &str) -> Option<u64> {
        self.sessions.get(id).map(|s| s.dropped)
    }

    /// The machine of session `id` (to send server-initiated messages through it; the next
    /// `poll_stream` of its stream picks them up).
    pub fn machine_mut(&mut self, id: &str) -> Option<&mut M> {
        self.sessions.get_mut(id).map(|s| &mut s.machine)
    }

    /// One HTTP request: GET opens a session (`random` seeds its id), POST delivers a message.
    /// `head.path` must include the query string (the POST names its session there).
    pub fn handle_request(
        &mut self,
        now: Instant,
        head: &HttpRequestHead,
        body: Bytes,
        random: [u8; 16],
    ) -> HttpResponse {
        self.now = Some(now);
        let fields = KnownFields::of(head);
        if let Err(resp) = admission::check_fields(&self.config, &fields) {
            return resp;
        }
        if self.shutting_down {
            return error(503, "Service Unavailable: the server is shutting down");
        }
        match head.method {
            HttpMethod::Get => self.handle_get(now, head, random),
            HttpMethod::Post => self.handle_post(now, head, body),
            _ => error(405, "Method Not Allowed").with_header("Allow", "GET, POST"),
        }
    }

    fn handle_get(
        &mut self,
        now: Instant,
        head: &HttpRequestHead,
        random: [u8; 16],
    ) -> HttpResponse {
        // An absent Accept admits anything (RFC 9110); a present one must admit SSE.
        if head
            .get("accept")
            .is_some_and(|a| !accepts(a, "text/event-stream"))
        {
            return error(406, "Not Acceptable: Accept must allow text/event-stream");
        }
        let peer_key = match self
            .peers
            .admit(self.config.peer_limit.as_deref(), &head.peer)
        {
            Ok(key) => key,
            Err(refusal) => {
                self.stats.peers_refused += 1;
                return refusal.answer(None);
            }
        };
        if self.sessions.len() >= self.config.max_sessions {
            let victim = self
                .sessions
                .iter()
                .filter(|(_, s)| !s.ended && !s.machine.handshake_done())
                .min_by_key(|(_, s)| s.created)
                .map(|(sid, _)| sid.clone());
            let Some(victim) = victim else {
                self.stats.sessions_refused += 1;
                return error(503, "Service Unavailable: too many sessions");
            };
            self.stats.handshakes_evicted += 1;
            self.now = Some(now);
            self.end_session(&victim);
        }
        let sid: String = random.iter().map(|b| format!("{b:02x}")).collect();
        if self.sessions.contains_key(&sid) {
            return error(503, "Service Unavailable: session id collision");
        }
        self.next_conn += 1;
        let conn = StreamId(SSE_TRANSPORT_STREAM_BIT | self.next_conn);
        let uri = format!("{}?{SESSION_PARAM}={sid}", self.messages_path);
        let machine = (self.factory)(now);
        let mut session = SseTransportSession::new(machine, now, conn, &uri);
        session.next_keep_alive = self.config.sse_keep_alive.and_then(|d| now.checked_add(d));
        self.sessions.insert(sid.clone(), session);
        if let Some(key) = peer_key {
            self.peers.opened(&sid, key);
        }
        self.conns.insert(conn, sid);
        let mut resp = HttpResponse::status(200)
            .with_header("Content-Type", "text/event-stream")
            .with_header("Cache-Control", "no-cache");
        resp.body = Body::Stream(conn);
        resp
    }

    fn handle_post(&mut self, now: Instant, head: &HttpRequestHead, body: Bytes) -> HttpResponse {
        let Some(sid) = query_param(&head.path, SESSION_PARAM) else {
            return rpc_error(
                400,
                -32000,
                "Bad Request: sessionId query parameter is required",
            );
        };
        let Some(session) = self.sessions.get_mut(sid) else {
            return rpc_error(404, -32001, "Session not found");
        };
        if session.ended {
            return rpc_error(404, -32001, "Session not found");
        }
        let fields = KnownFields::of(head);
        if let Err(resp) = admission::check_json_body(&self.config, &fields, body.len()) {
            if resp.status == 413 {
                return too_large(&body, self.config.max_body);
            }
            return resp;
        }
        let incoming = match decode(&body) {
            Ok(incoming) => incoming,
            Err(e) => {
                // An answer that cannot be read but names a request the session sent: the
                // session fails that request at once instead of at its deadline.
                if e.response_id(&body).is_some() {
                    session.last_activity = now;
                    session.machine.handle_input(now, body);
                    session.pump();
                }
                return undecodable(&e);
            }
        };
        if let Err(refusal) = admission::header_version(&self.config, &fields) {
            let id = match &incoming {
                Incoming::Single(Message::Request(r)) => Some(&r.id),
                _ => None,
            };
            return refusal.answer(id);
        }
        session.last_activity = now;
        for message in messages(&incoming) {
            match message {
                Message::Request(r) => session.request_opened(&r.id),
                other => {
                    if let Some(id) = cancelled_id(other) {
                        session.request_cancelled(&id);
                    }
                }
            }
        }
        session.machine.handle_decoded(now, body, incoming);
        session.pump();
        HttpResponse::status(202)
    }

    /// Pulls the next bytes of GET response `conn`. `None`: nothing now (call again after the
    /// next input or wake-up).
    #[must_use]
    pub fn poll_stream(&mut self, conn: StreamId, buf: &mut Vec<u8>) -> Option<StreamChunk> {
        let Some(sid) = self.conns.get(&conn) else {
            return Some(StreamChunk::End);
        };
        let Some(session) = self.sessions.get_mut(sid) else {
            self.conns.remove(&conn);
            return Some(StreamChunk::End);
        };
        session.pump();
        if let Some(event) = session.queue.pop_front() {
            buf.extend_from_slice(&event);
            return Some(StreamChunk::Data { len: event.len() });
        }
        if session.ended {
            let sid = sid.clone();
            self.end_session(&sid);
            return Some(StreamChunk::End);
        }
        None
    }

    /// The client went away from GET response `conn`: its session ends (the HTTP+SSE transport
    /// has no way to reattach).
    pub fn stream_closed(&mut self, conn: StreamId) {
        if let Some(sid) = self.conns.get(&conn).cloned() {
            self.end_session(&sid);
        }
    }

    /// Ends session `id` now (e.g. at server shutdown): its stream ends after what is queued.
    /// Returns whether it existed.
    pub fn close_session(&mut self, id: &str) -> bool {
        match self.sessions.get_mut(id) {
            Some(s) => {
                s.ended = true;
                true
            }
            None => false,
        }
    }

    /// The server is shutting down (call once; later calls change nothing): on every
    /// session's stream, after what it already has, each request not answered yet gets a
    /// `-32603` error with its id (the answers of this transport travel on its one stream),
    /// then the stream ends; a handler finishing later has its answer dropped. Requests
    /// arriving from now on get 503. Returns how many requests were answered.
    pub fn begin_shutdown(&mut self, now: Instant) -> usize {
        self.now = Some(now);
        if self.shutting_down {
            return 0;
        }
        self.shutting_down = true;
        let error = ErrorObject::internal(SHUTTING_DOWN);
        self.sessions
            .values_mut()
            .map(|s| s.shut_down(&error))
            .sum()
    }

    /// Fires machine timers and expires idle sessions (no request and no open stream for
    /// `idle_timeout`, the Streamable rule; an open stream keeps an HTTP+SSE session alive) and
    /// sessions whose handshake was not done within `handshake_grace` (their stream ends).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.now = Some(now);
        let idle = self.config.idle_timeout;
        let grace = self.config.handshake_grace;
        let mut expired = Vec::new();
        for (sid, s) in self.sessions.iter_mut() {
            if s.machine.poll_timeout().is_some_and(|t| t <= now) {
                s.machine.handle_timeout(now);
                s.pump();
            }
            if s.next_keep_alive.is_some_and(|t| t <= now) {
                s.keep_alive();
                s.next_keep_alive = self.config.sse_keep_alive.and_then(|d| now.checked_add(d));
            }
            if s.handshake_deadline(grace).is_some_and(|t| t <= now) {
                self.stats.handshakes_expired += 1;
                // Ends at the stream's next poll (what is queued goes nowhere useful).
                s.queue.clear();
                s.ended = true;
                if s.conn.is_none() {
                    expired.push(sid.clone());
                }
                continue;
            }
            if s.conn.is_none() && s.last_activity.checked_add(idle).is_some_and(|t| now >= t) {
                self.stats.sessions_expired += 1;
                expired.push(sid.clone());
            }
        }
        for sid in expired {
            self.end_session(&sid);
        }
    }

    /// The earliest deadline: a machine timer, a keep-alive, a detached session's idle
    /// expiry, or a handshake grace running out.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let idle = self.config.idle_timeout;
        let grace = self.config.handshake_grace;
        self.sessions
            .values()
            .flat_map(|s| {
                let expiry = s
                    .conn
                    .is_none()
                    .then(|| s.last_activity.checked_add(idle))
                    .flatten();
                [
                    s.machine.poll_timeout(),
                    s.next_keep_alive,
                    expiry,
                    s.handshake_deadline(grace),
                ]
            })
            .flatten()
            .min()
    }

    /// A pending handler future of any session, for the driver to run.
    #[must_use]
    pub fn poll_job(&mut self) -> Option<Job> {
        self.sessions
            .values_mut()
            .find_map(|s| s.machine.poll_job())
    }

    fn end_session(&mut self, sid: &str) {
        self.peers.ended(sid);
        if let Some(mut s) = self.sessions.remove(sid) {
            if let Some(conn) = s.conn.take() {
                self.conns.remove(&conn);
            }
            s.machine.close(self.now.unwrap_or(s.last_activity));
        }
    }
}

/// The value of query parameter `name` in `path` (`/p?a=1&b=2`), taken as is (our session ids
/// are hex, so no percent-decoding is needed to match them). Empty values count as absent.
pub(crate) fn query_param<'a>(path: &'a str, name: &str) -> Option<&'a str> {
    let (_, query) = path.split_once('?')?;
    let query = query.split('#').next().unwrap_or("");
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
        .filter(|v| !v.is_empty())
}
