//! The stdio-like world: a client session and a worker talking over two ordered pipes with
//! latency and jitter (a pipe never reorders), where the server can crash: the pipes die with
//! what was in flight, the client notices the end of file a little later and closes its session
//! (every pending request ends), a fresh server with no memory of the old one is started, and
//! the client initializes again. Properties: see `check` and `run`.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::model::{ClientCapabilities, Implementation, ProtocolVersion};
use mcp_sansio::session::{ClientSetup, Session, State};
use mcp_sansio::Config;

use super::check::{Ledger, Tally};
use super::rng::Rng;
use super::worker::{Work, Worker};
use super::world::{self, CallErrors, CallTimeouts, ClientSide, Wire, World};

/// Frames in flight on one pipe: delivery times never decrease (a pipe keeps order), unless
/// the pipe is sabotaged to reorder (to prove the order check catches it).
#[derive(Default)]
struct Pipe {
    frames: VecDeque<(Instant, Bytes)>,
    bytes: usize,
    reorders: bool,
}

impl Pipe {
    fn push(&mut self, at: Instant, frame: Bytes) {
        self.bytes += frame.len();
        if self.reorders {
            let pos = self.frames.partition_point(|(t, _)| *t <= at);
            self.frames.insert(pos, (at, frame));
            return;
        }
        let at = self.frames.back().map_or(at, |(last, _)| at.max(*last));
        self.frames.push_back((at, frame));
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
        self.frames.front().map(|(at, _)| *at)
    }

    fn cut(&mut self) {
        self.frames.clear();
        self.bytes = 0;
    }
}

/// What a run did, for the summary line.
#[derive(Debug, Default)]
pub struct Report {
    /// Requests sent over all client incarnations.
    pub requests: u64,
    /// How they ended.
    pub tally: Tally,
    /// Server crashes (each followed by a restart and a new handshake).
    pub crashes: u64,
    /// Progress notifications delivered.
    pub progress: u64,
}

/// Bytes allowed in flight on one pipe; a run above it has a queue growing without bound.
const PIPE_BUDGET: usize = 1 << 20;

/// The world: pipes, client, worker, clock, and the pending crash.
pub struct StdioWorld {
    rng: Rng,
    now: Instant,
    wire: Wire,
    client: Session,
    client_config: Config,
    server: Worker,
    server_config: Config,
    ledger: Ledger,
    to_server: Pipe,
    to_client: Pipe,
    /// Crashed and not yet noticed by the client: (noticed at, restarted at).
    outage: Option<(Instant, Instant)>,
    report: Report,
    buf: Vec<u8>,
}

fn client_setup() -> ClientSetup {
    ClientSetup {
        info: Implementation::new("sim-client", "1"),
        capabilities: ClientCapabilities::default(),
        protocol_version: ProtocolVersion::LATEST_STATEFUL,
    }
}

impl StdioWorld {
    /// A world for `seed`: link latency and jitter, and small limits, drawn from the seed.
    pub fn new(seed: u64) -> StdioWorld {
        let mut rng = Rng::new(seed);
        let now = Instant::now();
        let client_config = Config {
            request_timeout: Duration::from_secs(2 + rng.below(20)),
            max_pending_outbound: 2 + rng.below(16) as usize,
            ..Config::default()
        };
        let server_config = Config {
            max_inflight_inbound: 1 + rng.below(16) as usize,
            ..Config::default()
        };
        let wire = Wire::draw(&mut rng, 200);
        let mut world = StdioWorld {
            client: Session::client(client_config.clone(), client_setup(), now),
            server: Worker::new(server_config.clone(), now),
            rng,
            now,
            wire,
            client_config,
            server_config,
            ledger: Ledger::default(),
            to_server: Pipe::default(),
            to_client: Pipe::default(),
            outage: None,
            report: Report::default(),
            buf: Vec::new(),
        };
        world::handshake(world.client_side());
        world
    }

    /// Sabotage: the server-to-client pipe reorders like separate connections would.
    pub fn reorder_pipe(&mut self) {
        self.to_client.reorders = true;
    }

    fn wire_delay(&mut self) -> Duration {
        self.wire.delay(&mut self.rng)
    }

    /// Sends one `tools/call`, maybe with its own timeout (see [`world::send_random_call`]).
    fn send_call(&mut self) -> Result<(), String> {
        let timeouts = CallTimeouts {
            percent: 20,
            min_ms: 200,
        };
        world::send_random_call(self.client_side(), timeouts)
    }

    /// The server process dies: both pipes lose what they carry; the client notices later.
    fn crash(&mut self) {
        if self.outage.is_some() {
            return;
        }
        self.report.crashes += 1;
        let noticed = self.now + self.rng.millis(500);
        let restarted = noticed + self.rng.millis(2000);
        self.outage = Some((noticed, restarted));
        self.to_server.cut();
        self.to_client.cut();
        self.server.session.close(self.now);
    }

    /// Moves written frames onto the pipes (or into the void while the server is down).
    fn flush(&mut self) -> Result<bool, String> {
        let mut any = false;
        let down = self.outage.is_some();
        loop {
            self.buf.clear();
            if self.client.poll_transmit(&mut self.buf).is_none() {
                break;
            }
            any = true;
            if !down {
                let at = self.now + self.wire_delay();
                self.to_server.push(at, Bytes::copy_from_slice(&self.buf));
            }
        }
        loop {
            self.buf.clear();
            if mcp_sansio::http::SessionMachine::poll_transmit(&mut self.server, &mut self.buf)
                .is_none()
            {
                break;
            }
            any = true;
            if !down {
                let at = self.now + self.wire_delay();
                self.to_client.push(at, Bytes::copy_from_slice(&self.buf));
            }
        }
        Ok(any)
    }

    fn drain_client(&mut self) -> Result<bool, String> {
        world::drain_events(&mut self.client, &mut self.ledger)
    }

    /// Folds the current client's ledger into the report; it must have nothing left open.
    fn finish_incarnation(&mut self) -> Result<(), String> {
        let ledger = world::take_ledger(&mut self.ledger)?;
        self.report.requests += ledger.sent;
        self.report.progress += ledger.progress;
        self.report.tally.add(&ledger.tally);
        Ok(())
    }

    /// Invariant 5: every table and queue stays within its configured limit.
    fn check_budgets(&self) -> Result<(), String> {
        let c = &self.client;
        // +1: the client's own `initialize`.
        if c.pending_outbound() > self.client_config.max_pending_outbound + 1 {
            return Err(format!(
                "client pending {} over budget",
                c.pending_outbound()
            ));
        }
        let s = &self.server.session;
        if s.inflight_inbound() > self.server_config.max_inflight_inbound {
            return Err(format!(
                "server in-flight {} over budget",
                s.inflight_inbound()
            ));
        }
        // At most 4 progress steps and one answer per in-flight request.
        if self.server.planned() > 5 * self.server_config.max_inflight_inbound {
            return Err(format!("worker holds {} actions", self.server.planned()));
        }
        if self.to_server.bytes + self.to_client.bytes > PIPE_BUDGET {
            return Err("pipes hold more than their budget".into());
        }
        Ok(())
    }

    /// The whole scripted run for this world's seed.
    pub fn run(mut self) -> Result<Report, String> {
        let ops = 20 + self.rng.below(60);
        for _ in 0..ops {
            match self.rng.below(10) {
                0..=4 => self.send_call()?,
                5 => world::cancel_random(self.client_side()),
                6 if self.rng.chance(30) => self.crash(),
                _ => {
                    let until = self.now + self.rng.millis(3000);
                    world::run_until(&mut self, until, world::never)?;
                }
            }
        }
        // Calm: no more faults. Every request must end, and the client must be usable again.
        let until = self.now + Duration::from_secs(15 * 60);
        world::run_until(&mut self, until, world::never)?;
        if self.ledger.outstanding() != 0 {
            return Err(format!(
                "{} requests still hanging after 15 quiet minutes",
                self.ledger.outstanding()
            ));
        }
        if self.client.state() != State::Ready {
            return Err(format!("client ended {:?}, not ready", self.client.state()));
        }
        self.final_call()?;
        self.finish_incarnation()?;
        Ok(self.report)
    }

    /// After everything (restarts included), one more call must complete with its result.
    fn final_call(&mut self) -> Result<(), String> {
        let work = Work {
            steps: 1,
            gap: Duration::from_millis(10),
        };
        let errors = CallErrors {
            refused: "final call",
            no_result: "the final call after the faults got no result",
        };
        world::call_must_succeed(self, work, world::never, errors)
    }
}

impl World for StdioWorld {
    /// One simulation step at the current time. Returns whether anything happened.
    fn step(&mut self) -> Result<bool, String> {
        let now = self.now;
        let mut progressed = false;
        if let Some((noticed, restarted)) = self.outage {
            if now >= noticed && self.client.state() != State::Closed {
                // End of file on stdout: the transport closes the session.
                self.client.close(now);
                progressed = true;
            }
            if now >= restarted {
                self.drain_client()?;
                self.finish_incarnation()?;
                self.server = Worker::new(self.server_config.clone(), now);
                self.client = Session::client(self.client_config.clone(), client_setup(), now);
                self.outage = None;
                world::handshake(self.client_side());
                progressed = true;
            }
        }
        if self.client.poll_timeout().is_some_and(|t| t <= now) {
            self.client.handle_timeout(now);
            progressed = true;
        }
        if mcp_sansio::http::SessionMachine::poll_timeout(&self.server).is_some_and(|t| t <= now) {
            mcp_sansio::http::SessionMachine::handle_timeout(&mut self.server, now);
            progressed = true;
        }
        progressed |= self.flush()?;
        while let Some(frame) = self.to_server.pop_due(now) {
            mcp_sansio::http::SessionMachine::handle_input(&mut self.server, now, frame);
            progressed = true;
        }
        while let Some(frame) = self.to_client.pop_due(now) {
            self.client.handle_input(now, frame);
            progressed = true;
        }
        progressed |= self.drain_client()?;
        self.check_budgets()?;
        Ok(progressed)
    }

    fn next_wakeup(&self) -> Option<Instant> {
        let outage = self.outage.map(|(noticed, restarted)| {
            if self.client.state() == State::Closed {
                restarted
            } else {
                noticed
            }
        });
        [
            self.to_server.next_at(),
            self.to_client.next_at(),
            self.client.poll_timeout(),
            mcp_sansio::http::SessionMachine::poll_timeout(&self.server),
            outage,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    world::client_side_of!(client);
}
