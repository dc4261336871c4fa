//! [`SessionPair`]: a client session and a server session wired together in memory on a virtual clock,
//! with hooks to drop, duplicate, delay or corrupt messages. Tests, benches and the simulator
//! drive it with `step`/`drive`/`drive_bounded`; time only moves when the caller moves it.
//!
//! Every drive is bounded ([`PairLimits`]): `drive`, `advance` and `settle` each take at most
//! `max_steps` steps in total, and a link holding `max_link_bytes` pushes back on its writer
//! (the session keeps the message queued, as a full pipe would make it). Running out of steps
//! is counted in [`SessionPair::steps_exhausted`]: with sessions that behave it never happens, so a
//! test or fuzz body can treat it as a livelock.
//!
//! ```
//! # use std::time::Instant;
//! # use mcp_sansio::testing::SessionPair;
//! # use mcp_sansio::session::{Event, RequestOptions};
//! let mut pair = SessionPair::with_defaults(Instant::now());
//! assert!(pair.connect().is_some());
//! let id = pair.client.send_request(pair.now(), "ping", None, RequestOptions::default()).unwrap();
//! pair.drive();
//! assert!(matches!(pair.client_events.pop_front(), Some(Event::Completed { id: done, .. }) if done == id));
//! ```

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::config::Config;
use crate::model::{ClientCapabilities, Implementation, ProtocolVersion, ServerCapabilities};
use crate::session::{ClientSetup, Event, ServerSetup, Session, State};

/// Which way a message travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client to server.
    ToServer,
    /// Server to client.
    ToClient,
}

/// What the fault hook does with one message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Deliver it after the link latency.
    Deliver,
    /// Lose it.
    Drop,
    /// Deliver it twice.
    Duplicate,
    /// Deliver it this much later than the latency (later messages may overtake it).
    Delay(Duration),
    /// Deliver these bytes instead (corruption).
    Replace(Vec<u8>),
}

/// A fault hook: sees every message (direction and bytes) and decides its fate.
pub type FaultHook = Box<dyn FnMut(Direction, &[u8]) -> Fault>;

/// The pair's own bounds: how much work one call may do and how much a link may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairLimits {
    /// Steps one `drive`, `advance` or `settle` call may take in total. Default 100,000 (a
    /// busy exchange needs a few per message).
    pub max_steps: usize,
    /// Bytes in flight on one link; past it the writer's messages wait in its session queue.
    /// Default 16 MiB.
    pub max_link_bytes: usize,
}

impl Default for PairLimits {
    fn default() -> Self {
        PairLimits {
            max_steps: 100_000,
            max_link_bytes: 16 << 20,
        }
    }
}

/// Frames on the wire, ordered by delivery time (stable for equal times).
#[derive(Default)]
struct Link {
    frames: VecDeque<(Instant, Bytes)>,
    bytes: usize,
}

impl Link {
    fn push(&mut self, at: Instant, frame: Bytes) {
        self.bytes += frame.len();
        // Usually an append; a delayed frame is inserted after every frame due no later.
        if self.frames.back().is_none_or(|(t, _)| *t <= at) {
            self.frames.push_back((at, frame));
            return;
        }
        let pos = self.frames.partition_point(|(t, _)| *t <= at);
        self.frames.insert(pos, (at, frame));
    }

    fn pop_due(&mut self, now: Instant) -> Option<Bytes> {
        if self.frames.front()?.0 > now {
            return None;
        }
        let (_, frame) = self.frames.pop_front()?;
        self.bytes -= frame.len();
        Some(frame)
    }

    fn next_at(&self) -> Option<Instant> {
        self.frames.front().map(|(t, _)| *t)
    }
}

/// A client and a server session connected in memory. See the module docs.
pub struct SessionPair {
    /// The client session.
    pub client: Session,
    /// The server session.
    pub server: Session,
    /// Events the client produced, in order (the test or simulator consumes them).
    pub client_events: VecDeque<Event>,
    /// Events the server produced, in order.
    pub server_events: VecDeque<Event>,
    now: Instant,
    latency: Duration,
    to_server: Link,
    to_client: Link,
    hook: Option<FaultHook>,
    transcript: Option<Vec<(Direction, Bytes)>>,
    buf: Vec<u8>,
    limits: PairLimits,
    steps_exhausted: u64,
}

/// Upper bound of one `connect` handshake loop (wake-ups).
const CONNECT_WAKEUPS: usize = 10_000;

impl SessionPair {
    /// A pair of sessions with the given setups, at virtual time `now`.
    pub fn new(
        client_config: Config,
        client_setup: ClientSetup,
        server_config: Config,
        server_setup: ServerSetup,
        now: Instant,
    ) -> SessionPair {
        SessionPair {
            client: Session::client(client_config, client_setup, now),
            server: Session::server(server_config, server_setup, now),
            client_events: VecDeque::new(),
            server_events: VecDeque::new(),
            now,
            latency: Duration::ZERO,
            to_server: Link::default(),
            to_client: Link::default(),
            hook: None,
            transcript: None,
            buf: Vec::with_capacity(4096),
            limits: PairLimits::default(),
            steps_exhausted: 0,
        }
    }

    /// A pair with default configs, no capabilities and the latest stateful version.
    pub fn with_defaults(now: Instant) -> SessionPair {
        let client = ClientSetup {
            info: Implementation::new("pair-client", "0"),
            capabilities: ClientCapabilities::default(),
            protocol_version: ProtocolVersion::LATEST_STATEFUL,
        };
        let server = ServerSetup {
            info: Implementation::new("pair-server", "0"),
            capabilities: ServerCapabilities::default(),
            instructions: None,
        };
        SessionPair::new(Config::default(), client, Config::default(), server, now)
    }

    /// The virtual clock.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Sets the pair's own bounds (see [`PairLimits`]).
    pub fn set_limits(&mut self, limits: PairLimits) {
        self.limits = limits;
    }

    /// The pair's own bounds.
    pub fn limits(&self) -> PairLimits {
        self.limits
    }

    /// How many `drive`/`advance`/`settle` calls ran out of steps (a livelock, or a limit
    /// set too low for the test).
    pub fn steps_exhausted(&self) -> u64 {
        self.steps_exhausted
    }

    /// Bytes in flight on the link in `direction`.
    pub fn link_bytes(&self, direction: Direction) -> usize {
        match direction {
            Direction::ToServer => self.to_server.bytes,
            Direction::ToClient => self.to_client.bytes,
        }
    }

    /// Sets the one-way latency of both links (default zero).
    pub fn set_latency(&mut self, latency: Duration) {
        self.latency = latency;
    }

    /// Installs a fault hook that decides the fate of every message from now on.
    pub fn set_fault_hook(&mut self, hook: impl FnMut(Direction, &[u8]) -> Fault + 'static) {
        self.hook = Some(Box::new(hook));
    }

    /// Removes the fault hook.
    pub fn clear_fault_hook(&mut self) {
        self.hook = None;
    }

    /// Starts (or stops) recording every message the sessions write, before faults apply.
    pub fn set_recording(&mut self, on: bool) {
        self.transcript = on.then(Vec::new);
    }

    /// The recorded messages, in the order they were written.
    pub fn transcript(&self) -> &[(Direction, Bytes)] {
        self.transcript.as_deref().unwrap_or(&[])
    }

    /// Puts raw bytes on a link, as if the peer had written them (garbage, forged messages).
    pub fn inject(&mut self, direction: Direction, frame: impl Into<Bytes>) {
        let at = self.now + self.latency;
        self.link(direction).push(at, frame.into());
    }

    /// Client `initialize` and drive until both sides are ready; the handshake's events are
    /// consumed. Returns the negotiated version, or `None` if the handshake failed (its
    /// events are then left in the queues).
    pub fn connect(&mut self) -> Option<ProtocolVersion> {
        self.client.initialize(self.now).ok()?;
        // Jump from wake-up to wake-up only until the handshake resolves, so no timer of the
        // ready sessions (keep-alive) fires on the way.
        let ready =
            |p: &SessionPair| p.client.state() == State::Ready && p.server.state() == State::Ready;
        for _ in 0..CONNECT_WAKEUPS {
            self.drive();
            if ready(self) || self.client.state() == State::Closed {
                break;
            }
            let next = self.next_wakeup()?;
            self.now = self.now.max(next);
        }
        if !ready(self) {
            return None;
        }
        self.client_events.clear();
        self.server_events.clear();
        self.client.protocol_version()
    }

    fn link(&mut self, direction: Direction) -> &mut Link {
        match direction {
            Direction::ToServer => &mut self.to_server,
            Direction::ToClient => &mut self.to_client,
        }
    }

    /// One round at the current time: fire due timers, move written messages onto the links,
    /// deliver due messages, collect events. Returns whether anything happened.
    pub fn step(&mut self) -> bool {
        let now = self.now;
        let mut progressed = false;
        for session in [&mut self.client, &mut self.server] {
            if session.poll_timeout().is_some_and(|t| t <= now) {
                session.handle_timeout(now);
                progressed = true;
            }
        }
        progressed |= self.flush(Direction::ToServer);
        progressed |= self.flush(Direction::ToClient);
        while let Some(frame) = self.to_server.pop_due(now) {
            self.server.handle_input(now, frame);
            progressed = true;
        }
        while let Some(frame) = self.to_client.pop_due(now) {
            self.client.handle_input(now, frame);
            progressed = true;
        }
        while let Some(e) = self.client.poll_event() {
            self.client_events.push_back(e);
            progressed = true;
        }
        while let Some(e) = self.server.poll_event() {
            self.server_events.push_back(e);
            progressed = true;
        }
        progressed
    }

    /// Moves everything one session wrote onto its outgoing link, through the fault hook,
    /// while the link has room.
    fn flush(&mut self, direction: Direction) -> bool {
        let mut any = false;
        loop {
            if self.link(direction).bytes >= self.limits.max_link_bytes {
                return any; // backpressure: the rest waits in the session's queue
            }
            self.buf.clear();
            let session = match direction {
                Direction::ToServer => &mut self.client,
                Direction::ToClient => &mut self.server,
            };
            if session.poll_transmit(&mut self.buf).is_none() {
                return any;
            }
            any = true;
            let frame = Bytes::copy_from_slice(&self.buf);
            if let Some(t) = &mut self.transcript {
                t.push((direction, frame.clone()));
            }
            let fault = match &mut self.hook {
                Some(hook) => hook(direction, &frame),
                None => Fault::Deliver,
            };
            let at = self.now + self.latency;
            let link = self.link(direction);
            match fault {
                Fault::Deliver => link.push(at, frame),
                Fault::Drop => {}
                Fault::Duplicate => {
                    link.push(at, frame.clone());
                    link.push(at, frame);
                }
                Fault::Delay(extra) => link.push(at + extra, frame),
                Fault::Replace(bytes) => link.push(at, Bytes::from(bytes)),
            }
        }
    }

    /// Steps until nothing happens at the current time, at most `max_steps` steps (see
    /// [`PairLimits`]). Returns whether the pair became idle.
    pub fn drive(&mut self) -> bool {
        let mut budget = self.limits.max_steps;
        self.drive_within(&mut budget)
    }

    /// Steps until idle or `max_steps` steps; returns whether it became idle. Not counted as
    /// exhaustion: the caller asked for a partial drive.
    pub fn drive_bounded(&mut self, max_steps: usize) -> bool {
        for _ in 0..max_steps {
            if !self.step() {
                return true;
            }
        }
        false
    }

    /// Steps until idle, spending from `budget`; running dry is counted.
    fn drive_within(&mut self, budget: &mut usize) -> bool {
        while *budget > 0 {
            *budget -= 1;
            if !self.step() {
                return true;
            }
        }
        self.steps_exhausted += 1;
        false
    }

    /// The next moment something is due: a frame on a link or a session deadline.
    pub fn next_wakeup(&self) -> Option<Instant> {
        [
            self.to_server.next_at(),
            self.to_client.next_at(),
            self.client.poll_timeout(),
            self.server.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Moves the clock forward by `by` (firing what falls due on the way, in time order), then
    /// drives until idle.
    pub fn advance(&mut self, by: Duration) {
        let until = self.now + by;
        let mut budget = self.limits.max_steps;
        self.run_until(until, &mut budget);
        self.now = self.now.max(until);
        if budget > 0 {
            self.drive_within(&mut budget);
        }
    }

    /// Drives, jumping the clock from wake-up to wake-up, until nothing is due within `limit`
    /// from now. Returns whether the pair went quiet within the limit.
    pub fn settle(&mut self, limit: Duration) -> bool {
        let until = self.now + limit;
        let mut budget = self.limits.max_steps;
        self.run_until(until, &mut budget)
    }

    /// Drives and jumps the clock up to `until`, all steps spent from `budget`. Returns
    /// whether the pair went quiet (nothing due at all).
    fn run_until(&mut self, until: Instant, budget: &mut usize) -> bool {
        // Each wake-up costs at least one step, so the budget bounds the loop too.
        while *budget > 0 {
            if !self.drive_within(budget) {
                return false;
            }
            match self.next_wakeup() {
                Some(at) if at <= until => self.now = self.now.max(at),
                Some(_) => return false,
                None => return true,
            }
        }
        self.steps_exhausted += 1;
        false
    }
}

impl std::fmt::Debug for SessionPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionPair")
            .field("now", &self.now)
            .field("client", &self.client.state())
            .field("server", &self.server.state())
            .finish_non_exhaustive()
    }
}
