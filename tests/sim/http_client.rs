//! The HTTP client world: the real client stack, a client `Session` over the sans-IO HTTP
//! client transport (`mcp_sansio::http::client::HttpClient`), against the Streamable HTTP
//! endpoint with the simulated worker behind it. This file is the network: every exchange the
//! transport asks for travels on its own connection with its own latency (so requests and
//! their SSE streams overtake each other, while the chunks of one body keep their order and are
//! cut at random places), and the faults: a connection reset in the middle of an SSE stream, a
//! stream the server closes early (SEP-1699), a server restart that loses every session
//! followed by a window where connections are refused, and a partition long enough for the
//! session to expire. The transport resumes, retries and re-initializes on its own; the world
//! only starts a new client when the transport reports the session lost for good. The script
//! and the end-of-run properties are in `http_client_run.rs`; the checks in `check.rs`
//! (requests) and `judge.rs` (SSE streams).

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::http::client::{HttpClient, HttpClientConfig, TransportEvent};
use mcp_sansio::http::EventId;
use mcp_sansio::http::{Body, Endpoint, HttpMethod, HttpRequestHead, StreamChunk, StreamId};
use mcp_sansio::jsonrpc::{self, Message, RawJson, RequestId};
use mcp_sansio::outgoing::{Action, ExchangeId, OutgoingRequest};
use mcp_sansio::session::{Event, Session, State};

use super::check::{Ledger, Tally};
use super::http::Sabotage;
use super::judge::Judge;
use super::rng::Rng;
use super::timeline::Timeline;
use super::worker::Worker;
use super::world::{self, ClientSide, HttpSetup, Wire, World};

/// The numbered notification the server sends the client now and then.
const TICK: &str = "notifications/sim/tick";

/// What a run did, for the summary line.
#[derive(Debug, Default)]
pub struct Report {
    /// Requests sent over all client sessions.
    pub requests: u64,
    /// How they ended.
    pub tally: Tally,
    /// SSE events with data that reached the client.
    pub events: u64,
    /// Server notifications that reached the client (each at most once).
    pub notifications: u64,
    /// Connections reset by the network in the middle of an SSE stream.
    pub drops: u64,
    /// SSE streams the server closed early (SEP-1699).
    pub server_closes: u64,
    /// Resuming GETs the transport sent (`Last-Event-ID`).
    pub resumes: u64,
    /// Resumptions refused because the replay budget had evicted the events (409).
    pub resume_refused: u64,
    /// Connections refused (server down after a restart, or partitioned).
    pub refused: u64,
    /// Server restarts.
    pub restarts: u64,
    /// 404s the transport took for an expired session (`SessionExpired`).
    pub expired: u64,
    /// New sessions the transport set up after them (`Reinitialized`).
    pub reinitialized: u64,
    /// Clients started over (handshake failed, or the transport lost the session for good).
    pub started_over: u64,
    /// Most exchanges the transport held at once.
    pub max_exchanges: usize,
    /// Most sessions the endpoint held at once.
    pub max_sessions: usize,
}

/// Things travelling through the network, by arrival time. `gen` is the client incarnation
/// whose transport sent the exchange (exchange numbers start over with each one).
#[derive(Debug)]
pub(super) enum Arrival {
    /// An HTTP request reaching the endpoint.
    Request {
        gen: u64,
        ex: ExchangeId,
        head: HttpRequestHead,
        body: Bytes,
    },
    /// A response head reaching the client.
    Head {
        ex: ExchangeId,
        status: u16,
        headers: Vec<(String, String)>,
    },
    /// Body bytes reaching the client.
    Chunk { ex: ExchangeId, bytes: Bytes },
    /// The end of a body.
    End { ex: ExchangeId },
    /// The connection broke (reset, refused) before the body ended.
    Failed {
        ex: ExchangeId,
        reason: &'static str,
    },
}

impl Arrival {
    /// The exchange of an arrival travelling to the client.
    fn to_client(&self) -> Option<ExchangeId> {
        match self {
            Arrival::Request { .. } => None,
            Arrival::Head { ex, .. }
            | Arrival::Chunk { ex, .. }
            | Arrival::End { ex }
            | Arrival::Failed { ex, .. } => Some(*ex),
        }
    }
}

/// One exchange of the current transport, as the network sees it.
#[derive(Debug, Default)]
pub(super) struct Link {
    /// The `Mcp-Session-Id` the request carried, or the one its answer issued.
    session: Option<String>,
    /// The request a POST carried.
    request: Option<RequestId>,
    /// The `Last-Event-ID` a GET carried (as the transport wrote it).
    resume_from: Option<EventId>,
    /// The request reached the server.
    served: bool,
    /// The endpoint body being pulled for it.
    conn: Option<StreamId>,
    /// Its head reached the client and announced an SSE stream.
    sse: bool,
}

/// The world of one seed.
pub struct HttpClientWorld {
    pub(super) rng: Rng,
    pub(super) now: Instant,
    wire: Wire,
    pub(super) ep: Endpoint<Worker>,
    pub(super) setup: HttpSetup,
    /// Connections are refused until then (the server is coming back up).
    down_until: Option<Instant>,
    /// Every connection is refused (a partition).
    pub(super) partitioned: bool,
    /// Endpoint bodies being pulled: their exchange and when their last chunk lands.
    pulling: BTreeMap<StreamId, (ExchangeId, Instant)>,
    pub(super) net: Timeline<Arrival>,
    /// The client incarnation (bumped when the world starts a new client).
    gen: u64,
    pub(super) session: Session,
    pub(super) http: HttpClient,
    http_config: HttpClientConfig,
    links: BTreeMap<ExchangeId, Link>,
    pub(super) judge: Judge,
    pub(super) ledger: Ledger,
    pub(super) report: Report,
    /// A `SessionExpired` not yet followed by `Reinitialized` or `SessionLost`.
    pub(super) awaiting_reinit: bool,
    /// Requests the transport handed an answer for (this client).
    answered: HashSet<RequestId>,
    /// Numbered server notifications sent, and those the client got.
    ticks_sent: u64,
    ticks_seen: HashSet<u64>,
    /// The transport reported `SessionLost`: start a new client.
    lost: bool,
    /// The transport reported `Closed`.
    pub(super) closed: bool,
    buf: Vec<u8>,
    /// A deliberate bug (see [`Sabotage`]).
    pub sabotage: Sabotage,
}

impl HttpClientWorld {
    /// A world for `seed`: latency, jitter, version, response mode, replay budget and the
    /// transport's retry settings drawn from it.
    pub fn new(seed: u64) -> HttpClientWorld {
        let mut rng = Rng::new(seed);
        let now = Instant::now();
        let setup = HttpSetup::draw(&mut rng, true);
        let http_config = HttpClientConfig {
            // Small limits on some seeds, so requests are refused at them too.
            max_exchanges: if rng.chance(20) {
                3 + rng.below(6) as usize
            } else {
                64
            },
            max_held: if rng.chance(20) {
                1 + rng.below(4) as usize
            } else {
                64
            },
            default_retry: Duration::from_millis(100 + rng.below(2000)),
            max_retry: Duration::from_secs(10),
            max_resume_attempts: 1 + rng.below(5) as u32,
            open_standalone_stream: rng.chance(60),
            reinitialize: true,
            max_reinitializations: 1 + rng.below(6) as u32,
            ..HttpClientConfig::default()
        };
        let mut world = HttpClientWorld {
            wire: Wire::draw(&mut rng, 300),
            rng,
            now,
            ep: setup.endpoint(),
            session: setup.client(now),
            setup,
            down_until: None,
            partitioned: false,
            pulling: BTreeMap::new(),
            net: Timeline::default(),
            gen: 0,
            http: HttpClient::new(http_config.clone()),
            http_config,
            links: BTreeMap::new(),
            judge: Judge::default(),
            ledger: Ledger::default(),
            report: Report::default(),
            awaiting_reinit: false,
            answered: HashSet::new(),
            ticks_sent: 0,
            ticks_seen: HashSet::new(),
            lost: false,
            closed: false,
            buf: Vec::new(),
            sabotage: Sabotage::None,
        };
        world::handshake(world.client_side());
        world
    }

    fn wire_delay(&mut self) -> Duration {
        self.wire.delay(&mut self.rng)
    }

    fn unreachable(&self) -> bool {
        self.partitioned || self.down_until.is_some_and(|t| self.now < t)
    }

    /// Moves everything between the client session and the transport, and the transport's
    /// actions onto the network, until nothing moves.
    pub(super) fn pump(&mut self) -> Result<bool, String> {
        let mut any = false;
        for _ in 0..10_000 {
            let mut moved = false;
            loop {
                self.buf.clear();
                let Some(t) = self.session.poll_transmit(&mut self.buf) else {
                    break;
                };
                moved = true;
                let frame = Bytes::copy_from_slice(&self.buf);
                self.http.handle_transmit(self.now, frame, t.kind);
            }
            while let Some(action) = self.http.poll_action() {
                moved = true;
                self.act(action);
            }
            while let Some((frame, _)) = self.http.poll_frame() {
                moved = true;
                self.count_answer(&frame)?;
                self.session.handle_input(self.now, frame);
            }
            while let Some(event) = self.http.poll_event() {
                moved = true;
                self.transport_event(event)?;
            }
            while let Some(event) = self.session.poll_event() {
                moved = true;
                self.ledger.event(&event)?;
                self.tick_seen(&event)?;
            }
            if !moved {
                return Ok(any);
            }
            any = true;
        }
        Err("the client and its transport kept moving at one instant (livelock)".into())
    }

    /// The transport hands the session at most one answer per request (a real response or
    /// a synthesized transport error, never both, never two).
    fn count_answer(&mut self, frame: &Bytes) -> Result<(), String> {
        if let Ok(Message::Response(r)) = jsonrpc::decode_message(frame) {
            if let Some(id) = r.id {
                if !self.answered.insert(id.clone()) {
                    return Err(format!(
                        "the transport answered {id} twice: {}",
                        String::from_utf8_lossy(frame)
                    ));
                }
            }
        }
        Ok(())
    }

    /// Fault-free traffic the other way: the server sends a numbered notification on the
    /// client's session (it travels on the standalone stream, when there is one).
    pub(super) fn server_notify(&mut self) {
        let Some(sid) = self.http.session_id().map(str::to_string) else {
            return;
        };
        let Some(worker) = self.ep.machine_mut(&sid) else {
            return;
        };
        self.ticks_sent += 1;
        let params = format!("{{\"seq\":{}}}", self.ticks_sent);
        let params = RawJson::from_text(params).expect("valid JSON");
        let _ = worker.session.notify(TICK, Some(params));
    }

    /// A numbered server notification reaches the client at most once, whatever the
    /// resumptions replayed.
    fn tick_seen(&mut self, event: &Event) -> Result<(), String> {
        let Event::Notification { method, params } = event else {
            return Ok(());
        };
        if method != TICK {
            return Ok(());
        }
        let seq = params
            .as_ref()
            .and_then(|p| serde_json::from_slice::<serde_json::Value>(p.as_bytes()).ok())
            .and_then(|v| v.get("seq")?.as_u64())
            .ok_or("a tick without its number")?;
        if !self.ticks_seen.insert(seq) {
            return Err(format!("server notification {seq} delivered twice"));
        }
        self.report.notifications += 1;
        Ok(())
    }

    fn transport_event(&mut self, event: TransportEvent) -> Result<(), String> {
        match event {
            TransportEvent::SessionExpired => {
                if self.awaiting_reinit {
                    return Err("SessionExpired twice without a new session between".into());
                }
                self.report.expired += 1;
                self.awaiting_reinit = true;
            }
            TransportEvent::Reinitialized { session_id } => {
                if !self.awaiting_reinit {
                    return Err("Reinitialized without SessionExpired".into());
                }
                if session_id.is_none() {
                    return Err("re-initialized without a session id".into());
                }
                self.report.reinitialized += 1;
                self.awaiting_reinit = false;
            }
            TransportEvent::SessionLost { .. } => {
                self.awaiting_reinit = false;
                self.lost = true;
            }
            TransportEvent::StandaloneStreamUnavailable { .. } => {}
            TransportEvent::Closed(_) => self.closed = true,
            TransportEvent::Detected(_)
            | TransportEvent::Ready { .. }
            | TransportEvent::PostFailed { .. }
            | TransportEvent::EventTooLarge { .. } => {
                return Err(format!("the Streamable client reported {event:?}"));
            }
        }
        Ok(())
    }

    /// The network takes one action of the transport.
    fn act(&mut self, action: Action) {
        match action {
            Action::Send(request) => self.send(request),
            Action::Abort(ex) => self.abort(ex),
        }
    }

    fn send(&mut self, request: OutgoingRequest) {
        let mut head =
            HttpRequestHead::new(request.method, "/mcp").header("Host", "127.0.0.1:8080");
        let resume_from = request.header("Last-Event-ID").and_then(EventId::parse);
        for (name, value) in &request.headers {
            let mut value = value.as_str().to_owned();
            if name.eq_ignore_ascii_case("last-event-id")
                && self.sabotage == Sabotage::ResumeFromStart
            {
                if let Some(mut id) = resume_from {
                    id.seq = 0;
                    id.write(&mut value);
                }
            }
            head = head.header(*name, value);
        }
        let link = Link {
            session: request.header("Mcp-Session-Id").map(str::to_string),
            request: match jsonrpc::decode_message(&request.body) {
                Ok(Message::Request(r)) if request.method == HttpMethod::Post => Some(r.id),
                _ => None,
            },
            resume_from,
            ..Link::default()
        };
        self.links.insert(request.id, link);
        let at = self.now + self.wire_delay();
        let (gen, ex, body) = (self.gen, request.id, request.body);
        self.net.schedule(
            at,
            Arrival::Request {
                gen,
                ex,
                head,
                body,
            },
        );
    }

    /// The transport dropped exchange `ex`: its connection closes; the request may still reach
    /// the server (it was on the wire), but nobody reads the answer.
    fn abort(&mut self, ex: ExchangeId) {
        let Some(link) = self.links.remove(&ex) else {
            return;
        };
        self.net.retain(|a| a.to_client() != Some(ex));
        if let Some(conn) = link.conn {
            self.hang_up(conn);
        }
        self.judge.client_closed(ex);
    }

    /// The client side of endpoint connection `conn` is gone.
    fn hang_up(&mut self, conn: StreamId) {
        self.ep.stream_closed(conn);
        self.pulling.remove(&conn);
        self.judge.server_closed(conn);
    }

    /// A request reaches the server, which answers; the head travels back.
    fn serve(&mut self, gen: u64, ex: ExchangeId, head: HttpRequestHead, body: Bytes) {
        let live = gen == self.gen && self.links.contains_key(&ex);
        if self.unreachable() {
            self.report.refused += 1;
            if live {
                let at = self.now + self.wire_delay();
                let reason = "connection refused";
                self.net.schedule(at, Arrival::Failed { ex, reason });
            }
            return;
        }
        let random = self.rng.bytes16();
        let resp = self.ep.handle_request(self.now, &head, body, random);
        if !live {
            // An aborted exchange, or one of a client given up: nobody reads the answer.
            if let Body::Stream(conn) = resp.body {
                self.ep.stream_closed(conn);
            }
            return;
        }
        let at = self.now + self.wire_delay();
        let session = head
            .get("mcp-session-id")
            .or(resp.get("mcp-session-id"))
            .map(str::to_string);
        let sse = resp.get("content-type") == Some("text/event-stream");
        let link = self.links.get_mut(&ex).expect("live");
        link.served = true;
        if link.session.is_none() {
            link.session = session.clone();
        }
        let status = resp.status;
        let headers = resp
            .headers
            .into_iter()
            .map(|(n, v)| (n.into(), v.into()))
            .collect();
        self.net.schedule(
            at,
            Arrival::Head {
                ex,
                status,
                headers,
            },
        );
        match resp.body {
            Body::Stream(conn) => {
                self.links.get_mut(&ex).expect("live").conn = Some(conn);
                self.pulling.insert(conn, (ex, at));
                if let (true, Some(session)) = (sse, session) {
                    self.judge.server_opened(conn, session);
                }
            }
            Body::Full(bytes) => {
                self.send_pieces(ex, at, &bytes);
                self.net.schedule(at, Arrival::End { ex });
            }
            Body::Empty => self.net.schedule(at, Arrival::End { ex }),
        }
    }

    /// Body bytes travel cut in up to three pieces at random places, in order.
    fn send_pieces(&mut self, ex: ExchangeId, at: Instant, bytes: &[u8]) {
        let mut rest = bytes;
        for _ in 0..2 {
            if rest.len() < 2 || self.rng.chance(50) {
                break;
            }
            let cut = 1 + self.rng.below(rest.len() as u64 - 1) as usize;
            let (piece, tail) = rest.split_at(cut);
            let bytes = Bytes::copy_from_slice(piece);
            self.net.schedule(at, Arrival::Chunk { ex, bytes });
            rest = tail;
        }
        if !rest.is_empty() {
            let bytes = Bytes::copy_from_slice(rest);
            self.net.schedule(at, Arrival::Chunk { ex, bytes });
        }
    }

    /// Pulls every open response body; chunks of one connection keep their order.
    pub(super) fn pull_streams(&mut self) -> Result<bool, String> {
        let mut any = false;
        let conns: Vec<StreamId> = self.pulling.keys().copied().collect();
        for conn in conns {
            for _ in 0..10_000 {
                self.buf.clear();
                let Some(chunk) = self.ep.poll_stream(conn, &mut self.buf) else {
                    break;
                };
                any = true;
                let (ex, last) = self.pulling[&conn];
                let at = last.max(self.now + self.wire_delay());
                self.pulling.insert(conn, (ex, at));
                match chunk {
                    StreamChunk::Data { .. } => {
                        let bytes = std::mem::take(&mut self.buf);
                        self.judge.server_chunk(conn, &bytes)?;
                        if self.sabotage == Sabotage::LoseChunks && self.rng.chance(10) {
                            continue;
                        }
                        self.send_pieces(ex, at, &bytes);
                    }
                    StreamChunk::End => {
                        self.pulling.remove(&conn);
                        self.judge.server_closed(conn);
                        if let Some(link) = self.links.get_mut(&ex) {
                            link.conn = None;
                        }
                        self.net.schedule(at, Arrival::End { ex });
                        break;
                    }
                }
            }
        }
        Ok(any)
    }

    pub(super) fn arrive(&mut self, arrival: Arrival) -> Result<(), String> {
        if let Some(ex) = arrival.to_client() {
            if !self.links.contains_key(&ex) {
                return Err(format!(
                    "{arrival:?} for an exchange the client no longer has"
                ));
            }
        }
        let now = self.now;
        match arrival {
            Arrival::Request {
                gen,
                ex,
                head,
                body,
            } => self.serve(gen, ex, head, body),
            Arrival::Head {
                ex,
                status,
                headers,
            } => self.on_head(ex, status, &headers),
            Arrival::Chunk { ex, bytes } => {
                self.judge.client_chunk(ex, &bytes)?;
                self.http.handle_response_body(now, ex, bytes.clone());
            }
            Arrival::End { ex } => {
                self.forget(ex);
                self.http.handle_response_end(now, ex);
            }
            Arrival::Failed { ex, reason } => {
                self.forget(ex);
                self.http.handle_response_failed(now, ex, reason);
            }
        }
        Ok(())
    }

    fn on_head(&mut self, ex: ExchangeId, status: u16, headers: &[(String, String)]) {
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        };
        let link = self.links.get_mut(&ex).expect("checked by arrive");
        if status == 409 && link.resume_from.is_some() {
            self.report.resume_refused += 1;
        }
        let sse =
            (200..300).contains(&status) && header("content-type") == Some("text/event-stream");
        if sse {
            link.sse = true;
            if let Some(session) = link.session.clone() {
                let (request, from) = (link.request.clone(), link.resume_from);
                self.judge.client_opened(ex, session, request, from);
            }
        }
        let fields = headers.iter().map(|(n, v)| (n.as_str(), v.as_str()));
        self.http.handle_response_head(self.now, ex, status, fields);
    }

    /// Exchange `ex` is over for the network.
    fn forget(&mut self, ex: ExchangeId) {
        if let Some(Link {
            conn: Some(conn), ..
        }) = self.links.remove(&ex)
        {
            self.hang_up(conn);
        }
        self.judge.client_closed(ex);
    }

    /// Cuts the connection of every exchange the server has seen: whatever was on its way
    /// back is lost and the client sees a reset.
    fn cut_served(&mut self) {
        let served: Vec<ExchangeId> = self
            .links
            .iter()
            .filter(|(_, l)| l.served)
            .map(|(ex, _)| *ex)
            .collect();
        for ex in served {
            self.cut(ex);
        }
    }

    /// Resets the connection of exchange `ex`.
    fn cut(&mut self, ex: ExchangeId) {
        self.net.retain(|a| a.to_client() != Some(ex));
        if let Some(conn) = self.links.get_mut(&ex).and_then(|l| l.conn.take()) {
            self.hang_up(conn);
        }
        let at = self.now + self.rng.millis(20);
        let reason = "connection reset";
        self.net.schedule(at, Arrival::Failed { ex, reason });
    }

    /// Fault: the network resets a connection in the middle of an SSE stream.
    pub(super) fn drop_stream(&mut self) {
        let live: Vec<ExchangeId> = self
            .links
            .iter()
            .filter(|(_, l)| l.sse && l.conn.is_some())
            .map(|(ex, _)| *ex)
            .collect();
        if live.is_empty() {
            return;
        }
        let ex = live[self.rng.below(live.len() as u64) as usize];
        self.report.drops += 1;
        self.cut(ex);
    }

    /// Fault: the server closes an SSE stream early (SEP-1699; 2025-11-25 sessions only), so
    /// the client must resume it by GET.
    pub(super) fn server_close_stream(&mut self) {
        let live: Vec<StreamId> = self.pulling.keys().copied().collect();
        if live.is_empty() {
            return;
        }
        let conn = live[self.rng.below(live.len() as u64) as usize];
        if self.ep.close_stream(conn) {
            self.report.server_closes += 1;
        }
    }

    /// Fault: the server process restarts (every session, stream and replay buffer is gone)
    /// and refuses connections for a while. Requests on their way in reach the new process.
    pub(super) fn restart_server(&mut self) {
        self.report.restarts += 1;
        self.cut_served();
        self.ep = self.setup.endpoint();
        self.pulling.clear();
        self.judge.server_restarted();
        self.down_until = Some(self.now + self.rng.millis(3000));
    }

    /// Fault: a partition; every connection breaks and new ones are refused until it heals.
    pub(super) fn partition(&mut self) {
        self.partitioned = true;
        self.cut_served();
    }

    /// Closes the client session (ending every pending request), drops its transport and
    /// starts a new client, as an application does when the transport gives up.
    fn start_over(&mut self) -> Result<(), String> {
        self.report.started_over += 1;
        self.session.close(self.now);
        world::drain_events(&mut self.session, &mut self.ledger)?;
        self.finish_incarnation()?;
        for (_, link) in std::mem::take(&mut self.links) {
            if let Some(conn) = link.conn {
                self.hang_up(conn);
            }
        }
        self.net.retain(|a| a.to_client().is_none());
        self.judge.client_restarted();
        self.gen += 1;
        self.lost = false;
        self.awaiting_reinit = false;
        self.answered.clear();
        self.session = self.setup.client(self.now);
        self.http = HttpClient::new(self.http_config.clone());
        world::handshake(self.client_side());
        Ok(())
    }

    /// Adds the ledger of the client that ends to the report; none of its requests may be
    /// left hanging.
    pub(super) fn finish_incarnation(&mut self) -> Result<(), String> {
        let ledger = world::take_ledger(&mut self.ledger)?;
        self.report.requests += ledger.sent;
        self.report.tally.add(&ledger.tally);
        self.report.resumes += self.http.stats().resumes;
        Ok(())
    }

    /// Invariant 5, as far as the public API shows it.
    fn check_budgets(&mut self) -> Result<(), String> {
        let exchanges = self.http.exchanges_in_flight();
        self.report.max_exchanges = self.report.max_exchanges.max(exchanges);
        let sessions = self.ep.session_count();
        self.report.max_sessions = self.report.max_sessions.max(sessions);
        if sessions > 2 {
            return Err(format!("{sessions} server sessions held for one client"));
        }
        if exchanges > self.http_config.max_exchanges {
            return Err(format!(
                "{exchanges} HTTP exchanges in flight (max_exchanges {})",
                self.http_config.max_exchanges
            ));
        }
        if self.session.pending_outbound() > self.setup.client_config.max_pending_outbound + 1 {
            return Err("client pending table over budget".into());
        }
        Ok(())
    }
}

impl World for HttpClientWorld {
    /// Everything due at the current instant; whether anything moved.
    fn step(&mut self) -> Result<bool, String> {
        let now = self.now;
        let mut progressed = false;
        if self.session.poll_timeout().is_some_and(|t| t <= now) {
            self.session.handle_timeout(now);
            progressed = true;
        }
        if self.http.poll_timeout().is_some_and(|t| t <= now) {
            self.http.handle_timeout(now);
            progressed = true;
        }
        if self.ep.poll_timeout().is_some_and(|t| t <= now) {
            self.ep.handle_timeout(now);
            progressed = true;
        }
        progressed |= self.pump()?;
        while let Some(arrival) = self.net.pop_due(now) {
            progressed = true;
            self.arrive(arrival)?;
            progressed |= self.pump()?;
        }
        progressed |= self.pull_streams()?;
        progressed |= self.pump()?;
        if self.lost || self.session.state() == State::Closed {
            // The handshake failed, or the transport could not get a new session.
            self.start_over()?;
            progressed = true;
        }
        self.check_budgets()?;
        Ok(progressed)
    }

    fn next_wakeup(&self) -> Option<Instant> {
        [
            self.net.next_at(),
            self.session.poll_timeout(),
            self.http.poll_timeout(),
            self.ep.poll_timeout(),
            self.down_until.filter(|t| *t > self.now),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    world::client_side_of!(session);
}
