//! The HTTP world: a scripted Streamable HTTP client (a client `Session` for the messages, this
//! file for the transport) against `mcp_sansio::http::Endpoint` with the simulated worker
//! behind it. Every POST travels on its own connection with its own latency, so POSTs and the
//! SSE streams they open overtake each other; chunks of one stream keep their order. Faults: a
//! connection dropped in the middle of an SSE stream (chunks in flight are lost) and resumed by
//! GET with `Last-Event-ID`, a server restart that loses every session and connection, and the
//! session expiring while the client is idle (after a restart or an expiry the next POST gets
//! 404 and the client initializes again).
//!
//! This world's client transport is hand-rolled on purpose (it judges the endpoint alone);
//! `http_client.rs` drives the real client transport against the same endpoint.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::framing::SseDecoder;
use mcp_sansio::http::EventId;
use mcp_sansio::http::{
    Body, Endpoint, HttpMethod, HttpRequestHead, HttpResponse, StreamChunk, StreamId,
};
use mcp_sansio::jsonrpc::{self, Incoming, Message, RequestId};
use mcp_sansio::session::{Session, State};
use serde_json::Value;

use super::check::{Ledger, Tally};
use super::rng::Rng;
use super::timeline::Timeline;
use super::worker::Worker;
use super::world::{self, ClientSide, HttpSetup, Wire, World};

/// A deliberate transport bug, to prove the checks catch one (never set in the real runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sabotage {
    /// None: a correct client.
    None,
    /// Resume from the start of the stream instead of the last event seen (duplicates).
    ResumeFromStart,
    /// Lose one in ten SSE chunks without resuming (a silent gap).
    LoseChunks,
}

/// What a run did, for the summary line.
#[derive(Debug, Default)]
pub struct Report {
    /// Requests sent over all client sessions.
    pub requests: u64,
    /// How they ended.
    pub tally: Tally,
    /// SSE connections dropped mid-stream.
    pub drops: u64,
    /// Resumptions answered with the missed events.
    pub resumed: u64,
    /// Resumptions refused because the replay budget had evicted the events (409).
    pub resume_refused: u64,
    /// SSE events received.
    pub events: u64,
    /// 404s after session expiry or a restart (each followed by a new handshake).
    pub not_found: u64,
    /// Server restarts.
    pub restarts: u64,
    /// Handshakes that failed and were tried again.
    pub handshake_retries: u64,
}

/// What an HTTP request in flight is, for the client when its answer arrives.
#[derive(Clone, Debug)]
enum Sent {
    /// A POST carrying one message; `request` is its id when it is a request.
    Post { request: Option<RequestId> },
    /// A resuming GET for the stream `expect` describes.
    Resume { expect: Expect },
}

/// What may arrive on one SSE stream: its logical stream, the last event seen, and the
/// requests it carries.
#[derive(Clone, Debug, Default)]
struct Expect {
    stream: Option<u64>,
    last: Option<EventId>,
    requests: Vec<RequestId>,
}

/// One response body being received.
struct Conn {
    /// The session it belongs to (its chunks are ignored once the client moved on).
    sid: Option<String>,
    sse: bool,
    decoder: SseDecoder,
    json: Vec<u8>,
    expect: Expect,
}

/// Things travelling through the network, by arrival time.
enum Arrival {
    /// An HTTP request reaching the endpoint.
    Request {
        head: HttpRequestHead,
        body: Bytes,
        sent: Sent,
    },
    /// A response head reaching the client; `sid` is the session the request named.
    Head {
        resp: HttpResponse,
        sent: Sent,
        sid: Option<String>,
    },
    /// Body bytes reaching the client.
    Chunk { conn: StreamId, bytes: Bytes },
    /// The end of a body.
    End { conn: StreamId },
}

/// The world of one seed.
pub struct HttpWorld {
    rng: Rng,
    now: Instant,
    wire: Wire,
    ep: Endpoint<Worker>,
    setup: HttpSetup,
    /// Endpoint connections whose body is still being pulled, and when their last chunk lands.
    pulling: BTreeMap<StreamId, Instant>,
    net: Timeline<Arrival>,
    client: Session,
    sid: Option<String>,
    ledger: Ledger,
    conns: HashMap<StreamId, Conn>,
    report: Report,
    buf: Vec<u8>,
    /// What `Endpoint::touched_streams` listed before the last pull of every body.
    touched: Vec<StreamId>,
    /// A deliberate bug (see [`Sabotage`]).
    pub sabotage: Sabotage,
}

impl HttpWorld {
    /// A world for `seed`: latency, jitter, version, response mode and replay budget drawn
    /// from it.
    pub fn new(seed: u64) -> HttpWorld {
        let mut rng = Rng::new(seed);
        let now = Instant::now();
        let setup = HttpSetup::draw(&mut rng, false);
        let mut world = HttpWorld {
            wire: Wire::draw(&mut rng, 300),
            rng,
            now,
            ep: setup.endpoint(),
            client: setup.client(now),
            setup,
            pulling: BTreeMap::new(),
            net: Timeline::default(),
            sid: None,
            ledger: Ledger::default(),
            conns: HashMap::new(),
            report: Report::default(),
            buf: Vec::new(),
            touched: Vec::new(),
            sabotage: Sabotage::None,
        };
        world::handshake(world.client_side());
        world
    }

    fn wire_delay(&mut self) -> Duration {
        self.wire.delay(&mut self.rng)
    }

    fn head(&self, method: HttpMethod) -> HttpRequestHead {
        self.setup.head(method, self.sid.as_deref())
    }

    /// Client transport: every message the client session writes is one POST.
    fn post_all(&mut self) -> bool {
        let mut any = false;
        while let Some((body, request)) = world::next_post(&mut self.client, &mut self.buf) {
            any = true;
            let head = self.head(HttpMethod::Post);
            let at = self.now + self.wire_delay();
            let sent = Sent::Post { request };
            self.net.schedule(at, Arrival::Request { head, body, sent });
        }
        any
    }

    /// The endpoint answers one request; the head travels back on that connection.
    fn serve(&mut self, head: HttpRequestHead, body: Bytes, sent: Sent) {
        let random = self.rng.bytes16();
        let sid = head.get("mcp-session-id").map(str::to_string);
        let resp = self.ep.handle_request(self.now, &head, body, random);
        let at = self.now + self.wire_delay();
        if let Body::Stream(conn) = resp.body {
            self.pulling.insert(conn, at);
        }
        self.net.schedule(at, Arrival::Head { resp, sent, sid });
    }

    /// Pulls every open response body; chunks of one connection keep their order.
    ///
    /// Checks what a driver waking only the listed bodies relies on: a body that had nothing
    /// at its last pull and has something now (bytes or its end) is on a stream the endpoint
    /// listed in `touched_streams` since (this world's machines change only through the
    /// endpoint: no jobs, no handles).
    fn pull_streams(&mut self) -> Result<bool, String> {
        let mut any = false;
        self.touched.clear();
        let complete = self.ep.touched_streams(&mut self.touched);
        let conns: Vec<StreamId> = self.pulling.keys().copied().collect();
        for conn in conns {
            for pull in 0..10_000 {
                self.buf.clear();
                let Some(chunk) = self.ep.poll_stream(conn, &mut self.buf) else {
                    break;
                };
                if pull == 0 && complete && !self.touched.contains(&conn) {
                    return Err(format!(
                        "stream {conn:?} had {chunk:?} for its body, but the endpoint did not list it"
                    ));
                }
                any = true;
                let last = self.pulling[&conn];
                let at = last.max(self.now + self.wire_delay());
                match chunk {
                    StreamChunk::Data { .. } => {
                        self.pulling.insert(conn, at);
                        let bytes = Bytes::copy_from_slice(&self.buf);
                        self.net.schedule(at, Arrival::Chunk { conn, bytes });
                    }
                    StreamChunk::End => {
                        self.pulling.remove(&conn);
                        self.net.schedule(at, Arrival::End { conn });
                        break;
                    }
                }
            }
        }
        Ok(any)
    }

    fn on_head(
        &mut self,
        resp: HttpResponse,
        sent: Sent,
        sid: Option<String>,
    ) -> Result<(), String> {
        if sid.is_some() && sid != self.sid {
            return Ok(()); // an answer for a session this client already gave up
        }
        let sid = sid.or_else(|| resp.get("mcp-session-id").map(str::to_string));
        if self.sid.is_none() {
            self.sid = sid.clone();
        }
        match (resp.status, &sent) {
            (404, _) => return self.session_lost(),
            (409, Sent::Resume { .. }) => {
                // Past the replay budget: an explicit refusal, never a silent gap. The
                // stream's requests end by their timeouts.
                self.report.resume_refused += 1;
                return Ok(());
            }
            (200, Sent::Resume { .. }) => self.report.resumed += 1,
            (200 | 202, _) => {}
            (status, _) => {
                return Err(format!(
                    "unexpected {status} for {sent:?}: {}",
                    resp.body_text()
                ))
            }
        }
        match resp.body {
            Body::Full(bytes) => self.deliver(&bytes, &[]),
            Body::Empty => Ok(()),
            Body::Stream(conn) => {
                let expect = match sent {
                    Sent::Post { request } => Expect {
                        requests: request.into_iter().collect(),
                        ..Expect::default()
                    },
                    Sent::Resume { expect } => expect,
                };
                let sse = resp.get("content-type") == Some("text/event-stream");
                let conn_state = Conn {
                    sid,
                    sse,
                    decoder: SseDecoder::new(1 << 20),
                    json: Vec::new(),
                    expect,
                };
                self.conns.insert(conn, conn_state);
                Ok(())
            }
        }
    }

    /// The session is gone (expired): close the client session, which ends every pending
    /// request, and start over with a new handshake.
    fn session_lost(&mut self) -> Result<(), String> {
        if self.sid.is_none() {
            return Ok(()); // a stale answer for the old session; already handled
        }
        self.report.not_found += 1;
        self.start_over()
    }

    /// Closes the client session (ending every pending request) and initializes a new one.
    fn start_over(&mut self) -> Result<(), String> {
        self.sid = None;
        self.client.close(self.now);
        self.drain_client()?;
        self.finish_incarnation()?;
        self.client = self.setup.client(self.now);
        world::handshake(self.client_side());
        Ok(())
    }

    fn on_chunk(&mut self, conn: StreamId, bytes: &[u8]) -> Result<(), String> {
        let Some(c) = self.conns.get_mut(&conn) else {
            return Err(format!(
                "a chunk for {conn:?}, which has no head or was dropped"
            ));
        };
        if c.sid != self.sid {
            return Ok(());
        }
        if !c.sse {
            c.json.extend_from_slice(bytes);
            return Ok(());
        }
        if self.sabotage == Sabotage::LoseChunks && self.rng.chance(10) {
            return Ok(());
        }
        c.decoder.push(bytes);
        let expect = &mut c.expect;
        let messages = world::sse_messages(&mut c.decoder, |id| check_event_id(expect, id))?;
        let requests = c.expect.requests.clone();
        for data in messages {
            self.report.events += 1;
            self.deliver(&data, &requests)?;
        }
        Ok(())
    }

    fn on_end(&mut self, conn: StreamId) -> Result<(), String> {
        let Some(c) = self.conns.remove(&conn) else {
            return Ok(());
        };
        if !c.sse && !c.json.is_empty() && c.sid == self.sid {
            let requests = c.expect.requests.clone();
            self.deliver(&c.json, &requests)?;
        }
        Ok(())
    }

    /// Hands one server message to the client session, after checking it belongs on the
    /// stream it came on (`requests` empty: any stream).
    fn deliver(&mut self, data: &[u8], requests: &[RequestId]) -> Result<(), String> {
        if !requests.is_empty() {
            if let Some(owner) = related_request(data) {
                if !requests.contains(&owner) {
                    return Err(format!(
                        "a message of {owner} arrived on the stream of {requests:?}"
                    ));
                }
            }
        }
        self.client
            .handle_input(self.now, Bytes::copy_from_slice(data));
        Ok(())
    }

    /// The fault: a live SSE connection that has seen an event id is cut; what is in flight
    /// on it is lost, and the client resumes with a GET carrying `Last-Event-ID`.
    fn drop_stream(&mut self) {
        let mut candidates: Vec<StreamId> = self
            .conns
            .iter()
            .filter(|(_, c)| c.sse && c.expect.last.is_some())
            .map(|(id, _)| *id)
            .collect();
        if candidates.is_empty() {
            return;
        }
        candidates.sort();
        let conn = candidates[self.rng.below(candidates.len() as u64) as usize];
        let expect = self.conns[&conn].expect.clone();
        self.report.drops += 1;
        self.conns.remove(&conn);
        self.ep.stream_closed(conn);
        self.pulling.remove(&conn);
        // What was on the wire for it is lost with the connection.
        self.net.retain(|a| match a {
            Arrival::Chunk { conn: c, .. } | Arrival::End { conn: c } => *c != conn,
            _ => true,
        });
        let mut last = expect.last.expect("candidates have seen an id");
        if self.sabotage == Sabotage::ResumeFromStart {
            last.seq = 0;
        }
        let mut text = String::new();
        last.write(&mut text);
        let head = self
            .head(HttpMethod::Get)
            .header("Last-Event-ID", text.as_str());
        let at = self.now + self.rng.millis(1000) + self.wire_delay();
        let sent = Sent::Resume { expect };
        self.net.schedule(
            at,
            Arrival::Request {
                head,
                body: Bytes::new(),
                sent,
            },
        );
    }

    /// The server process restarts: every session, stream and replay buffer is gone, and so
    /// is every response on the wire. Requests on their way in reach the new process.
    fn restart_server(&mut self) {
        self.report.restarts += 1;
        self.ep = self.setup.endpoint();
        self.pulling.clear();
        self.conns.clear();
        self.net.retain(|a| matches!(a, Arrival::Request { .. }));
    }

    fn send_call(&mut self) -> Result<(), String> {
        world::send_random_call(self.client_side(), world::HTTP_CALL_TIMEOUTS)
    }

    fn drain_client(&mut self) -> Result<bool, String> {
        world::drain_events(&mut self.client, &mut self.ledger)
    }

    fn finish_incarnation(&mut self) -> Result<(), String> {
        let ledger = world::take_ledger(&mut self.ledger)?;
        self.report.requests += ledger.sent;
        self.report.tally.add(&ledger.tally);
        Ok(())
    }

    /// Invariant 5, as far as the public API shows it.
    fn check_budgets(&self) -> Result<(), String> {
        if self.ep.session_count() > 2 {
            return Err(format!(
                "{} sessions held for one client",
                self.ep.session_count()
            ));
        }
        if self.client.pending_outbound() > self.setup.client_config.max_pending_outbound + 1 {
            return Err("client pending table over budget".into());
        }
        Ok(())
    }

    fn quiet(w: &HttpWorld) -> bool {
        w.ledger.outstanding() == 0 && w.net.is_empty() && w.client.state() == State::Ready
    }

    /// The whole scripted run for this world's seed.
    pub fn run(mut self) -> Result<Report, String> {
        let ops = 20 + self.rng.below(60);
        for _ in 0..ops {
            match self.rng.below(10) {
                0..=4 => self.send_call()?,
                5 => world::cancel_random(self.client_side()),
                6 | 7 => self.drop_stream(),
                8 if self.rng.chance(10) => self.restart_server(),
                _ => {
                    let until = self.now + self.rng.millis(3000);
                    world::run_until(&mut self, until, world::never)?;
                }
            }
        }
        // Calm: every request must end.
        world::calm(&mut self, Self::quiet)?;
        // Idle past the expiry: the session goes, the next call gets 404, the client
        // initializes again and the call after that gets its result.
        let expired = self.ep.stats().sessions_expired;
        // Zero when a restart already took the client's session and the client has not
        // noticed yet (its next call gets 404 either way).
        let held = self.ep.session_count();
        let not_found = self.report.not_found;
        let until = self.now + self.setup.idle_timeout + Duration::from_secs(1);
        world::run_until(&mut self, until, world::never)?;
        // (Orphans count too: sessions an abandoned handshake created after a restart.)
        if self.ep.stats().sessions_expired != expired + held as u64 || self.ep.session_count() != 0
        {
            return Err(format!(
                "the idle session did not expire: {} expired before, {} now, {} held",
                expired,
                self.ep.stats().sessions_expired,
                self.ep.session_count()
            ));
        }
        self.send_call()?;
        let until = self.now + Duration::from_secs(60);
        world::run_until(&mut self, until, |w| w.sid.is_some() && Self::quiet(w))?;
        if self.report.not_found != not_found + 1 {
            return Err("a call on the expired session did not get 404".into());
        }
        world::call_after_reinitializing(&mut self, Self::quiet)?;
        self.finish_incarnation()?;
        Ok(self.report)
    }
}

impl World for HttpWorld {
    fn step(&mut self) -> Result<bool, String> {
        let now = self.now;
        let mut progressed = false;
        if self.client.poll_timeout().is_some_and(|t| t <= now) {
            self.client.handle_timeout(now);
            progressed = true;
        }
        if self.ep.poll_timeout().is_some_and(|t| t <= now) {
            self.ep.handle_timeout(now);
            progressed = true;
        }
        progressed |= self.post_all();
        while let Some(arrival) = self.net.pop_due(now) {
            progressed = true;
            match arrival {
                Arrival::Request { head, body, sent } => self.serve(head, body, sent),
                Arrival::Head { resp, sent, sid } => self.on_head(resp, sent, sid)?,
                Arrival::Chunk { conn, bytes } => self.on_chunk(conn, &bytes)?,
                Arrival::End { conn } => self.on_end(conn)?,
            }
        }
        progressed |= self.pull_streams()?;
        progressed |= self.drain_client()?;
        if self.client.state() == State::Closed {
            // The handshake failed (its answer was lost in a restart and it timed out): a
            // client tries again.
            self.report.handshake_retries += 1;
            self.start_over()?;
            progressed = true;
        }
        self.check_budgets()?;
        Ok(progressed)
    }

    fn next_wakeup(&self) -> Option<Instant> {
        [
            self.net.next_at(),
            self.client.poll_timeout(),
            self.ep.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    world::client_side_of!(client);
}

/// Event ids on one stream name that stream and strictly increase: a replayed duplicate or an
/// event of another stream fails here.
fn check_event_id(expect: &mut Expect, text: &str) -> Result<(), String> {
    if text.is_empty() {
        return Ok(());
    }
    let id = EventId::parse(text).ok_or_else(|| format!("bad event id {text:?}"))?;
    match expect.stream {
        Some(stream) if stream != id.stream => {
            return Err(format!("event {text} on the stream of {stream}"))
        }
        _ => expect.stream = Some(id.stream),
    }
    if let Some(last) = expect.last {
        if id.seq <= last.seq {
            return Err(format!(
                "event {text} after {}-{} (duplicate or reordered)",
                last.stream, last.seq
            ));
        }
    }
    expect.last = Some(id);
    Ok(())
}

/// The client request a server message belongs to: a response's id or a progress token.
fn related_request(data: &[u8]) -> Option<RequestId> {
    match jsonrpc::decode(&Bytes::copy_from_slice(data)).ok()? {
        Incoming::Single(Message::Response(r)) => r.id,
        Incoming::Single(Message::Notification(n)) if n.method == "notifications/progress" => {
            let params: Value = serde_json::from_slice(n.params?.as_bytes()).ok()?;
            serde_json::from_value(params.get("progressToken")?.clone()).ok()
        }
        _ => None,
    }
}
