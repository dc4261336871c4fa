//! The scale-out world: several endpoints (instances) behind one URL share their sessions
//! through a store this world keeps (a deterministic stand-in for the shared store: records
//! created if absent, loaded with a version, replaced, deleted; a bus carrying cancellations
//! to the other instances). The client (a client `Session`) sends every POST to the next
//! instance; each instance does what the HTTP adapter does around its endpoint: it reads the
//! session's record before serving (restoring or refreshing its copy), and writes what the
//! endpoint hands out before the answer leaves.
//!
//! Faults drawn from the seed: an instance crash (its connections are cut, and it comes back
//! empty under a new name), a slow store (every operation takes up to 400 ms) and a store
//! that is unreachable for a while (every request naming a session, and every write, gets
//! 503). The transport turns a 503, a cut connection or a refused one after trying every
//! instance into a JSON-RPC error for the request it carried (what a client resuming on
//! another instance gets once the writer is gone). The judge: every request ends exactly
//! once, its result is its own, and no request is answered twice.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::framing::SseDecoder;
use mcp_sansio::http::{
    Body, Endpoint, HttpMethod, HttpResponse, SessionChange, StreamChunk, StreamId,
};
use mcp_sansio::jsonrpc::{self, Incoming, Message, RequestId};
use mcp_sansio::session::{Session, State};

use super::check::{Ledger, Tally};
use super::rng::Rng;
use super::timeline::Timeline;
use super::worker::Worker;
use super::world::{self, ClientSide, HttpSetup, Wire, World};

/// A deliberate transport bug, to prove the judge catches one (never set in the real runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sabotage {
    /// None: a correct transport.
    None,
    /// A request refused with 503 gets its error and is sent again to the next instance.
    RetryRefused,
}

/// What a run did, for the summary line.
#[derive(Debug, Default)]
pub struct Report {
    /// Requests sent over all client sessions.
    pub requests: u64,
    /// How they ended.
    pub tally: Tally,
    /// Instances in the world.
    pub instances: u64,
    /// Instance crashes.
    pub crashes: u64,
    /// Requests served by an instance that restored or refreshed the session first.
    pub restored: u64,
    /// Answers `503` (the store unreachable).
    pub unavailable: u64,
    /// Requests failed by the transport (503, a cut or refused connection).
    pub failed: u64,
    /// 404s (the session gone), each followed by a new handshake.
    pub not_found: u64,
    /// Cancellations carried to another instance.
    pub forwarded: u64,
}

/// One instance: its endpoint and what its adapter remembers.
struct Instance {
    ep: Endpoint<Worker>,
    /// Bumped at each crash: what an older incarnation sent is lost.
    incarnation: u64,
    alive: bool,
    /// Response bodies still being pulled, and when their last chunk lands.
    pulling: BTreeMap<StreamId, Instant>,
    /// The record version each held session was last brought to.
    known: HashMap<String, u64>,
}

/// One POST: its body and the request it carries (`None`: a notification).
#[derive(Clone, Debug)]
struct Post {
    body: Bytes,
    request: Option<RequestId>,
    sid: Option<String>,
    /// Instances tried so far (a refused connection moves on to the next).
    tries: u64,
}

/// Where a response body comes from: instance, incarnation, stream.
type ConnKey = (usize, u64, Option<StreamId>);

/// Things travelling through the network or waiting on the store, by due time.
enum Arrival {
    /// A POST reaching instance `to`.
    Request { to: usize, post: Post },
    /// The store answered the read instance `to` made for `post` (its incarnation then).
    Read {
        to: usize,
        incarnation: u64,
        post: Post,
    },
    /// A response head reaching the client.
    Head {
        from: ConnKey,
        resp: HttpResponse,
        post: Post,
    },
    /// Body bytes reaching the client.
    Chunk { from: ConnKey, bytes: Bytes },
    /// The end of a body.
    End { from: ConnKey },
    /// A cancellation published on the bus reaching instance `to`.
    Bus {
        to: usize,
        sid: String,
        frame: Bytes,
    },
    /// Instance `at` comes back after a crash.
    Restart { at: usize },
}

/// One response body being received.
struct Conn {
    sid: Option<String>,
    sse: bool,
    decoder: SseDecoder,
    json: Vec<u8>,
    request: Option<RequestId>,
}

/// The world of one seed.
pub struct ScaleWorld {
    rng: Rng,
    now: Instant,
    wire: Wire,
    setup: HttpSetup,
    instances: Vec<Instance>,
    /// The instance the next POST goes to.
    next: usize,
    /// Names handed out so far (each incarnation gets a new one).
    names: u64,
    /// Crashed instances not back yet (their restarts wait in `net`).
    restarts_pending: usize,
    /// Session id → (version, snapshot).
    records: HashMap<String, (u64, Vec<u8>)>,
    /// The store's delay per operation, up to.
    store_latency_ms: u64,
    /// When the store is unreachable.
    outages: Vec<(Instant, Instant)>,
    net: Timeline<Arrival>,
    client: Session,
    sid: Option<String>,
    ledger: Ledger,
    /// Answers the client got (from an instance or the transport), per request id of the
    /// current client session: more than one is a duplicate.
    answers: HashMap<RequestId, u32>,
    conns: HashMap<ConnKey, Conn>,
    report: Report,
    buf: Vec<u8>,
    /// A deliberate bug (see [`Sabotage`]).
    pub sabotage: Sabotage,
}

impl ScaleWorld {
    /// A world for `seed`: two to four instances, latency, the store's speed and outages.
    pub fn new(seed: u64) -> ScaleWorld {
        let mut rng = Rng::new(seed);
        let now = Instant::now();
        let setup = HttpSetup::draw(&mut rng, false);
        let count = 2 + rng.below(3) as usize;
        let store_latency_ms = if rng.chance(30) { 400 } else { 5 };
        let mut outages = Vec::new();
        for _ in 0..rng.below(3) {
            let start = now + rng.millis(60_000);
            outages.push((start, start + rng.millis(5_000)));
        }
        let mut world = ScaleWorld {
            wire: Wire::draw(&mut rng, 200),
            rng,
            now,
            client: setup.client(now),
            setup,
            instances: Vec::new(),
            next: 0,
            names: 0,
            restarts_pending: 0,
            records: HashMap::new(),
            store_latency_ms,
            outages,
            net: Timeline::default(),
            sid: None,
            ledger: Ledger::default(),
            answers: HashMap::new(),
            conns: HashMap::new(),
            report: Report {
                instances: count as u64,
                ..Report::default()
            },
            buf: Vec::new(),
            sabotage: Sabotage::None,
        };
        for _ in 0..count {
            let ep = world.endpoint();
            world.instances.push(Instance {
                ep,
                incarnation: 0,
                alive: true,
                pulling: BTreeMap::new(),
                known: HashMap::new(),
            });
        }
        world::handshake(world.client_side());
        world
    }

    /// A fresh endpoint under a name no instance had.
    fn endpoint(&mut self) -> Endpoint<Worker> {
        self.names += 1;
        self.setup.instance(format!("i{}", self.names))
    }

    fn wire_delay(&mut self) -> Duration {
        self.wire.delay(&mut self.rng)
    }

    fn store_delay(&mut self) -> Duration {
        self.rng.millis(self.store_latency_ms)
    }

    fn store_down(&self) -> bool {
        let now = self.now;
        self.outages
            .iter()
            .any(|&(from, to)| from <= now && now < to)
    }

    /// Every message the client writes is one POST, to the next instance in turn.
    fn post_all(&mut self) -> bool {
        let mut any = false;
        while let Some((body, request)) = world::next_post(&mut self.client, &mut self.buf) {
            any = true;
            let post = Post {
                body,
                request,
                sid: self.sid.clone(),
                tries: 0,
            };
            let to = self.next;
            self.next = (self.next + 1) % self.instances.len();
            let at = self.now + self.wire_delay();
            self.net.schedule(at, Arrival::Request { to, post });
        }
        any
    }

    /// A POST reaches instance `to`: refused when it is down (the client tries the next), else
    /// the instance reads the session's record first (when it names one).
    fn on_request(&mut self, to: usize, mut post: Post) -> Result<(), String> {
        if !self.instances[to].alive {
            post.tries += 1;
            if post.tries >= self.instances.len() as u64 {
                return self.fail(&post, "no instance accepted the connection");
            }
            let next = (to + 1) % self.instances.len();
            let at = self.now + self.wire_delay();
            self.net.schedule(at, Arrival::Request { to: next, post });
            return Ok(());
        }
        let incarnation = self.instances[to].incarnation;
        let at = self.now
            + if post.sid.is_some() {
                self.store_delay()
            } else {
                Duration::ZERO
            };
        self.net.schedule(
            at,
            Arrival::Read {
                to,
                incarnation,
                post,
            },
        );
        Ok(())
    }

    /// The instance serves a POST whose record read is done: brings its copy of the session
    /// up to the record, hands the request to the endpoint, writes the changes, answers.
    fn serve(&mut self, to: usize, incarnation: u64, post: Post) -> Result<(), String> {
        if self.instances[to].incarnation != incarnation {
            return self.fail(&post, "the connection was cut (instance crash)");
        }
        if post.sid.is_some() && self.store_down() {
            return self.unavailable(to, post);
        }
        let head = self.setup.head(HttpMethod::Post, post.sid.as_deref());
        if let Some(sid) = &post.sid {
            self.adopt(to, sid);
        }
        let now = self.now;
        let random = self.rng.bytes16();
        let inst = &mut self.instances[to];
        let cancels = inst.ep.cancellations_elsewhere(&head, &post.body);
        let resp = inst
            .ep
            .handle_request(now, &head, post.body.clone(), random);
        let written = self.write_changes(to);
        if let Some(sid) = &post.sid {
            for frame in cancels {
                self.publish_cancel(to, sid, frame);
            }
        }
        if !written {
            if let Body::Stream(conn) = resp.body {
                self.instances[to].ep.stream_closed(conn);
            }
            return self.unavailable(to, post);
        }
        let at = now + self.store_delay() + self.wire_delay();
        let from = match resp.body {
            Body::Stream(conn) => {
                self.instances[to].pulling.insert(conn, at);
                (to, incarnation, Some(conn))
            }
            _ => (to, incarnation, None),
        };
        self.net.schedule(at, Arrival::Head { from, resp, post });
        Ok(())
    }

    /// What the adapter does before serving a request naming `sid`: restore the session from
    /// its record, or bring an older copy up to it; a record gone ends the copy here.
    fn adopt(&mut self, to: usize, sid: &str) {
        let now = self.now;
        let inst = &mut self.instances[to];
        let Some((version, snapshot)) = self.records.get(sid) else {
            inst.known.remove(sid);
            inst.ep.handle_session_ended(now, sid);
            return;
        };
        let held = inst.ep.holds_session(sid);
        if held && inst.known.get(sid).is_some_and(|k| k >= version) {
            return;
        }
        if inst.ep.handle_restore(now, sid, snapshot).is_ok() {
            inst.known.insert(sid.to_owned(), *version);
            self.report.restored += 1;
        }
    }

    /// Writes every change instance `to` handed out; `false` when the store is unreachable.
    fn write_changes(&mut self, to: usize) -> bool {
        let mut written = true;
        while let Some(change) = self.instances[to].ep.poll_session_change() {
            if self.store_down() {
                written = false;
                continue;
            }
            match change {
                SessionChange::Saved { id, snapshot, .. } => {
                    let version = self.records.get(&id).map_or(1, |(v, _)| v + 1);
                    self.records.insert(id.clone(), (version, snapshot));
                    self.instances[to].known.insert(id, version);
                }
                SessionChange::Ended { id } => {
                    self.records.remove(&id);
                    for inst in &mut self.instances {
                        inst.known.remove(&id);
                        inst.ep.handle_session_ended(self.now, &id);
                    }
                }
            }
        }
        written
    }

    /// A cancellation of a request another instance serves goes to every other instance.
    fn publish_cancel(&mut self, from: usize, sid: &str, frame: Bytes) {
        for to in (0..self.instances.len()).filter(|&i| i != from) {
            let at = self.now + self.store_delay();
            let (sid, frame) = (sid.to_owned(), frame.clone());
            self.net.schedule(at, Arrival::Bus { to, sid, frame });
        }
    }

    /// The store did not answer: 503 on its way back.
    fn unavailable(&mut self, to: usize, post: Post) -> Result<(), String> {
        self.report.unavailable += 1;
        let from = (to, self.instances[to].incarnation, None);
        let at = self.now + self.wire_delay();
        let resp = HttpResponse::status(503);
        self.net.schedule(at, Arrival::Head { from, resp, post });
        Ok(())
    }

    /// The transport ends the POST's request with an error (a notification is dropped).
    fn fail(&mut self, post: &Post, why: &str) -> Result<(), String> {
        let Some(id) = &post.request else {
            return Ok(());
        };
        if post.sid != self.sid && post.sid.is_some() {
            return Ok(()); // a request of a client session given up
        }
        self.report.failed += 1;
        let error = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32603, "message": why},
        });
        self.deliver(error.to_string().as_bytes())
    }

    /// Pulls every open response body of every live instance.
    fn pull_streams(&mut self) -> bool {
        let mut any = false;
        for to in 0..self.instances.len() {
            let incarnation = self.instances[to].incarnation;
            let conns: Vec<StreamId> = self.instances[to].pulling.keys().copied().collect();
            for conn in conns {
                for _ in 0..10_000 {
                    self.buf.clear();
                    let Some(chunk) = self.instances[to].ep.poll_stream(conn, &mut self.buf) else {
                        break;
                    };
                    any = true;
                    let last = self.instances[to].pulling[&conn];
                    let at = last.max(self.now + self.wire_delay());
                    let from = (to, incarnation, Some(conn));
                    match chunk {
                        StreamChunk::Data { .. } => {
                            self.instances[to].pulling.insert(conn, at);
                            let bytes = Bytes::copy_from_slice(&self.buf);
                            self.net.schedule(at, Arrival::Chunk { from, bytes });
                        }
                        StreamChunk::End => {
                            self.instances[to].pulling.remove(&conn);
                            self.net.schedule(at, Arrival::End { from });
                            break;
                        }
                    }
                }
            }
        }
        any
    }

    fn stale(&self, from: ConnKey) -> bool {
        self.instances[from.0].incarnation != from.1
    }

    fn on_head(&mut self, from: ConnKey, resp: HttpResponse, post: Post) -> Result<(), String> {
        if post.sid.is_some() && post.sid != self.sid {
            return Ok(()); // an answer for a session this client already gave up
        }
        if self.stale(from) {
            return self.fail(&post, "the connection was cut (instance crash)");
        }
        let sid = post
            .sid
            .clone()
            .or_else(|| resp.get("mcp-session-id").map(str::to_string));
        match resp.status {
            503 => {
                if self.sabotage == Sabotage::RetryRefused && post.request.is_some() {
                    let to = (from.0 + 1) % self.instances.len();
                    let at = self.now + self.wire_delay();
                    let again = post.clone();
                    self.net.schedule(at, Arrival::Request { to, post: again });
                }
                return self.fail(&post, "503: the session store did not answer");
            }
            404 => return self.session_lost(),
            200 | 202 => {}
            status => {
                return Err(format!(
                    "unexpected {status} for {post:?}: {}",
                    resp.body_text()
                ))
            }
        }
        if self.sid.is_none() {
            self.sid = sid.clone();
        }
        match resp.body {
            Body::Full(bytes) => self.deliver(&bytes),
            Body::Empty => Ok(()),
            Body::Stream(_) => {
                let sse = resp.get("content-type") == Some("text/event-stream");
                let conn = Conn {
                    sid,
                    sse,
                    decoder: SseDecoder::new(1 << 20),
                    json: Vec::new(),
                    request: post.request,
                };
                self.conns.insert(from, conn);
                Ok(())
            }
        }
    }

    fn on_chunk(&mut self, from: ConnKey, bytes: &[u8]) -> Result<(), String> {
        if self.stale(from) {
            return Ok(()); // lost with the connection
        }
        let Some(c) = self.conns.get_mut(&from) else {
            return Err(format!("a chunk for {from:?}, which has no head"));
        };
        if c.sid != self.sid {
            return Ok(());
        }
        if !c.sse {
            c.json.extend_from_slice(bytes);
            return Ok(());
        }
        c.decoder.push(bytes);
        let messages = world::sse_messages(&mut c.decoder, |_| Ok(()))?;
        for data in messages {
            self.deliver(&data)?;
        }
        Ok(())
    }

    fn on_end(&mut self, from: ConnKey) -> Result<(), String> {
        if self.stale(from) {
            return Ok(());
        }
        let Some(c) = self.conns.remove(&from) else {
            return Ok(());
        };
        if !c.sse && !c.json.is_empty() && c.sid == self.sid {
            self.deliver(&c.json)?;
        }
        Ok(())
    }

    /// Hands one message to the client session, counting answers: a second answer to one
    /// request is a duplicate.
    fn deliver(&mut self, data: &[u8]) -> Result<(), String> {
        if let Ok(Incoming::Single(Message::Response(r))) =
            jsonrpc::decode(&Bytes::copy_from_slice(data))
        {
            if let Some(id) = r.id {
                let seen = self.answers.entry(id.clone()).or_default();
                *seen += 1;
                if *seen > 1 {
                    return Err(format!("{id} answered twice (duplicate)"));
                }
            }
        }
        self.client
            .handle_input(self.now, Bytes::copy_from_slice(data));
        Ok(())
    }

    /// The fault: instance `at` crashes. Its connections are cut: each request whose answer
    /// had not reached the client gets an error; it comes back empty, under a new name.
    fn crash(&mut self, at: usize) -> Result<(), String> {
        if !self.instances[at].alive {
            return Ok(());
        }
        self.report.crashes += 1;
        let inst = &mut self.instances[at];
        inst.alive = false;
        inst.incarnation += 1;
        inst.pulling.clear();
        inst.known.clear();
        let mut cut: Vec<ConnKey> = self.conns.keys().copied().filter(|k| k.0 == at).collect();
        cut.sort();
        for key in cut {
            let conn = self.conns.remove(&key).expect("listed");
            let Some(id) = conn.request else { continue };
            let answered = self.answers.get(&id).copied().unwrap_or(0) > 0;
            if conn.sid == self.sid && !answered {
                let post = Post {
                    body: Bytes::new(),
                    request: Some(id),
                    sid: conn.sid,
                    tries: 0,
                };
                self.fail(&post, "the server instance serving this request is gone")?;
            }
        }
        self.restarts_pending += 1;
        let back = self.now + Duration::from_millis(500) + self.rng.millis(5_000);
        self.net.schedule(back, Arrival::Restart { at });
        Ok(())
    }

    fn restart(&mut self, at: usize) {
        self.restarts_pending -= 1;
        let ep = self.endpoint();
        let inst = &mut self.instances[at];
        inst.ep = ep;
        inst.alive = true;
    }

    /// The session is gone: close the client session (ending every pending request) and
    /// start over with a new handshake.
    fn session_lost(&mut self) -> Result<(), String> {
        if self.sid.is_none() {
            return Ok(());
        }
        self.report.not_found += 1;
        self.start_over()
    }

    fn start_over(&mut self) -> Result<(), String> {
        self.sid = None;
        self.client.close(self.now);
        self.drain_client()?;
        self.finish_incarnation()?;
        self.answers.clear();
        self.client = self.setup.client(self.now);
        world::handshake(self.client_side());
        Ok(())
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

    fn quiet(w: &ScaleWorld) -> bool {
        w.ledger.outstanding() == 0
            && w.client.state() == State::Ready
            && w.net.len() == w.restarts_pending
    }

    /// The whole scripted run for this world's seed.
    pub fn run(mut self) -> Result<Report, String> {
        let ops = 20 + self.rng.below(60);
        for _ in 0..ops {
            match self.rng.below(12) {
                0..=5 => {
                    world::send_random_call(self.client_side(), world::HTTP_CALL_TIMEOUTS)?;
                }
                6 => world::cancel_random(self.client_side()),
                7 if self.rng.chance(15) => {
                    let at = self.rng.below(self.instances.len() as u64) as usize;
                    self.crash(at)?;
                }
                _ => {
                    let until = self.now + self.rng.millis(3000);
                    world::run_until(&mut self, until, world::never)?;
                }
            }
        }
        // Calm: every request must end.
        world::calm(&mut self, Self::quiet)?;
        // With the store up and every instance back, a call gets its result (on an instance
        // whose copy of the session expired meanwhile, restored from the store).
        let last_outage = self.outages.iter().map(|&(_, to)| to).max();
        let until = last_outage.unwrap_or(self.now).max(self.now) + Duration::from_secs(6);
        world::run_until(&mut self, until, world::never)?;
        world::run_until(&mut self, until + Duration::from_secs(60), Self::quiet)?;
        world::call_after_reinitializing(&mut self, Self::quiet)?;
        self.finish_incarnation()?;
        Ok(self.report)
    }
}

impl World for ScaleWorld {
    fn step(&mut self) -> Result<bool, String> {
        let now = self.now;
        let mut progressed = false;
        if self.client.poll_timeout().is_some_and(|t| t <= now) {
            self.client.handle_timeout(now);
            progressed = true;
        }
        for inst in &mut self.instances {
            if inst.ep.poll_timeout().is_some_and(|t| t <= now) {
                inst.ep.handle_timeout(now);
                progressed = true;
            }
        }
        progressed |= self.post_all();
        while let Some(arrival) = self.net.pop_due(now) {
            progressed = true;
            match arrival {
                Arrival::Request { to, post } => self.on_request(to, post)?,
                Arrival::Read {
                    to,
                    incarnation,
                    post,
                } => self.serve(to, incarnation, post)?,
                Arrival::Head { from, resp, post } => self.on_head(from, resp, post)?,
                Arrival::Chunk { from, bytes } => self.on_chunk(from, &bytes)?,
                Arrival::End { from } => self.on_end(from)?,
                Arrival::Bus { to, sid, frame } => {
                    if self.instances[to].alive
                        && self.instances[to].ep.handle_forwarded(now, &sid, frame)
                    {
                        self.report.forwarded += 1;
                    }
                }
                Arrival::Restart { at } => self.restart(at),
            }
        }
        progressed |= self.pull_streams();
        progressed |= self.drain_client()?;
        if self.client.state() == State::Closed {
            // The handshake failed (a 503, a crash): a client tries again.
            self.start_over()?;
            progressed = true;
        }
        Ok(progressed)
    }

    fn next_wakeup(&self) -> Option<Instant> {
        let instances = self.instances.iter().filter_map(|i| i.ep.poll_timeout());
        [self.net.next_at(), self.client.poll_timeout()]
            .into_iter()
            .flatten()
            .chain(instances)
            .min()
    }

    world::client_side_of!(client);
}
