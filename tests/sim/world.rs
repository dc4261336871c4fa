//! What every world shares: the clock loop (settle at one instant, jump to the next wake-up,
//! both bounded so a livelock is an error), the client-side bookkeeping around the client
//! `Session` (handshake, a random `tools/call`, a random cancellation, a call that must get its
//! result, folding a client's ledger into the report), the link's latency and jitter, the
//! seeded configuration of the two HTTP worlds and their client transport's pieces (a POST's
//! head, the next message to POST, the messages of an SSE body). Every helper draws from the world's `Rng` in
//! the order the worlds always drew, so a seed still names the same run.

use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::framing::{SseDecoder, SseItem};
use mcp_sansio::http::{Endpoint, EndpointConfig, HttpMethod, HttpRequestHead, ResponseMode};
use mcp_sansio::jsonrpc::{self, Incoming, Message, RequestId};
use mcp_sansio::model::{ClientCapabilities, Implementation, ProtocolVersion};
use mcp_sansio::session::{ClientSetup, RequestOptions, Session};
use mcp_sansio::Config;

use super::check::Ledger;
use super::rng::Rng;
use super::worker::{Work, Worker};

/// Wake-ups of one `run_until`; more means a livelock.
const STEP_BUDGET: usize = 200_000;
/// Steps at one instant; more means a livelock.
const SETTLE_BUDGET: usize = 10_000;

/// The client side of a world, borrowed for one helper call.
pub struct ClientSide<'a> {
    /// The world's generator.
    pub rng: &'a mut Rng,
    /// The current virtual time.
    pub now: Instant,
    /// The client session.
    pub session: &'a mut Session,
    /// The requests of that session.
    pub ledger: &'a mut Ledger,
}

/// A simulated world on a virtual clock.
pub trait World {
    /// Everything due at the current instant; whether anything moved.
    fn step(&mut self) -> Result<bool, String>;
    /// The earliest instant something is due.
    fn next_wakeup(&self) -> Option<Instant>;
    /// The world's clock.
    fn clock(&mut self) -> &mut Instant;
    /// The client session and what goes with it.
    fn client_side(&mut self) -> ClientSide<'_>;
}

/// Steps at the current time until nothing happens (bounded: a livelock is an error).
pub fn settle_now<W: World>(w: &mut W) -> Result<(), String> {
    for _ in 0..SETTLE_BUDGET {
        if !w.step()? {
            return Ok(());
        }
    }
    Err("still busy after 10000 steps at one instant (livelock)".into())
}

/// The calm after a run's script: runs up to 15 minutes until `quiet` holds; every request
/// must have ended by then.
pub fn calm<W: World>(w: &mut W, quiet: fn(&W) -> bool) -> Result<(), String> {
    let until = *w.clock() + Duration::from_secs(15 * 60);
    run_until(w, until, quiet)?;
    if quiet(w) {
        return Ok(());
    }
    let side = w.client_side();
    Err(format!(
        "not quiet after 15 minutes: {} requests hanging, client {:?}",
        side.ledger.outstanding(),
        side.session.state()
    ))
}

/// Runs everything due up to `until` (or until `done` holds after a wake-up), jumping the
/// clock from wake-up to wake-up.
pub fn run_until<W: World>(w: &mut W, until: Instant, done: fn(&W) -> bool) -> Result<(), String> {
    for _ in 0..STEP_BUDGET {
        settle_now(w)?;
        if done(w) {
            return Ok(());
        }
        match w.next_wakeup() {
            Some(at) if at <= until => {
                let now = w.clock();
                *now = (*now).max(at);
            }
            _ => {
                let now = w.clock();
                *now = (*now).max(until);
                return Ok(());
            }
        }
    }
    Err(format!(
        "no quiescence after {STEP_BUDGET} wake-ups (livelock)"
    ))
}

/// A `done` that never holds: run to `until`.
pub fn never<W>(_: &W) -> bool {
    false
}

/// Sends the client's `initialize` and records it.
pub fn handshake(side: ClientSide<'_>) {
    let id = side
        .session
        .initialize(side.now)
        .expect("a new client initializes");
    side.ledger.sent(id, None).expect("fresh ledger");
}

/// How often a random call carries its own timeout, and the shortest such timeout.
pub struct CallTimeouts {
    /// Percent of calls with their own timeout.
    pub percent: u64,
    /// The shortest own timeout, in milliseconds (up to 3 s more are drawn).
    pub min_ms: u64,
}

/// The HTTP worlds' calls: 15 % carry their own timeout, of 300 ms or more.
pub const HTTP_CALL_TIMEOUTS: CallTimeouts = CallTimeouts {
    percent: 15,
    min_ms: 300,
};

/// `World::clock` and `World::client_side` for a world whose clock, generator and ledger are
/// the fields `now`, `rng` and `ledger`, and whose client session is the field given.
macro_rules! client_side_of {
    ($session:ident) => {
        fn clock(&mut self) -> &mut Instant {
            &mut self.now
        }

        fn client_side(&mut self) -> ClientSide<'_> {
            ClientSide {
                rng: &mut self.rng,
                now: self.now,
                session: &mut self.$session,
                ledger: &mut self.ledger,
            }
        }
    };
}
pub(crate) use client_side_of;

/// Sends one `tools/call` with random work, maybe with its own timeout; refusals (limits,
/// not ready) are fine, they are just not requests.
pub fn send_random_call(side: ClientSide<'_>, timeouts: CallTimeouts) -> Result<(), String> {
    let rng = side.rng;
    let work = Work {
        steps: rng.below(5) as u32,
        gap: rng.millis(1500),
    };
    let opts = RequestOptions {
        timeout: rng
            .chance(timeouts.percent)
            .then(|| Duration::from_millis(timeouts.min_ms + rng.below(3000))),
        progress: true,
        related_to: None,
    };
    if let Ok(id) = side
        .session
        .send_request(side.now, "tools/call", Some(work.params()), opts)
    {
        side.ledger.sent(id, Some(work))?;
    }
    Ok(())
}

/// Cancels one outstanding request picked at random (if any).
pub fn cancel_random(side: ClientSide<'_>) {
    let pick = side.rng.next_u64();
    if let Some(id) = side.ledger.outstanding_at(pick) {
        let _ = side.session.cancel(side.now, &id, Some("sim".into()));
    }
}

/// The errors of [`call_must_succeed`]: its call refused, or ended without its result.
pub struct CallErrors {
    /// Prefix of the refusal.
    pub refused: &'static str,
    /// The error when no result came.
    pub no_result: &'static str,
}

/// Sends one `tools/call` doing `work` (with progress) and runs the world for up to a minute
/// (or until `done`): it must end with its result.
pub fn call_must_succeed<W: World>(
    w: &mut W,
    work: Work,
    done: fn(&W) -> bool,
    errors: CallErrors,
) -> Result<(), String> {
    let side = w.client_side();
    let results = side.ledger.tally.results;
    let opts = RequestOptions {
        progress: true,
        ..RequestOptions::default()
    };
    let id = side
        .session
        .send_request(side.now, "tools/call", Some(work.params()), opts)
        .map_err(|e| format!("{} refused: {e:?}", errors.refused))?;
    side.ledger.sent(id, Some(work))?;
    let until = *w.clock() + Duration::from_secs(60);
    run_until(w, until, done)?;
    if w.client_side().ledger.tally.results != results + 1 {
        return Err(errors.no_result.into());
    }
    Ok(())
}

/// The HTTP worlds' last check: after the session expired and the client set up a new one, a
/// call (two progress steps) gets its result.
pub fn call_after_reinitializing<W: World>(w: &mut W, done: fn(&W) -> bool) -> Result<(), String> {
    let work = Work {
        steps: 2,
        gap: Duration::from_millis(100),
    };
    let errors = CallErrors {
        refused: "call after re-initializing",
        no_result: "the call after re-initializing got no result",
    };
    call_must_succeed(w, work, done, errors)
}

/// Hands every event of the client session to its ledger; whether there was any.
pub fn drain_events(session: &mut Session, ledger: &mut Ledger) -> Result<bool, String> {
    let mut any = false;
    while let Some(event) = session.poll_event() {
        ledger.event(&event)?;
        any = true;
    }
    Ok(any)
}

/// Takes the ledger of a client that ends, for the report; none of its requests may be left
/// hanging.
pub fn take_ledger(ledger: &mut Ledger) -> Result<Ledger, String> {
    if ledger.outstanding() != 0 {
        return Err(format!(
            "{} requests never ended when the client closed",
            ledger.outstanding()
        ));
    }
    Ok(std::mem::take(ledger))
}

/// The link: a fixed latency plus up to `jitter_ms` of jitter per message.
pub struct Wire {
    latency: Duration,
    jitter_ms: u64,
}

impl Wire {
    /// Latency up to 50 ms and jitter up to `max_jitter_ms`, drawn from `rng`.
    pub fn draw(rng: &mut Rng, max_jitter_ms: u64) -> Wire {
        Wire {
            latency: rng.millis(50),
            jitter_ms: rng.below(max_jitter_ms),
        }
    }

    /// How long the next message takes.
    pub fn delay(&self, rng: &mut Rng) -> Duration {
        self.latency + rng.millis(self.jitter_ms)
    }
}

/// What the HTTP worlds draw from their seed for the endpoint, the server and the client.
pub struct HttpSetup {
    /// The endpoint's idle timeout (sessions expire after it).
    pub idle_timeout: Duration,
    /// The endpoint's configuration.
    pub ep_config: EndpointConfig,
    /// The worker sessions' configuration.
    pub server_config: Config,
    /// The protocol version the client asks for.
    pub version: ProtocolVersion,
    /// The client session's configuration.
    pub client_config: Config,
}

impl HttpSetup {
    /// Replay budget and response mode (and with `draw_retry` the SSE retry hint), the
    /// server's in-flight limit, the version and the client's limits, drawn from `rng`.
    pub fn draw(rng: &mut Rng, draw_retry: bool) -> HttpSetup {
        let idle_timeout = Duration::from_secs(60);
        let mut ep_config = EndpointConfig {
            idle_timeout,
            replay_budget: if rng.chance(20) { 600 } else { 1 << 20 },
            response_mode: if rng.chance(50) {
                ResponseMode::Auto
            } else {
                ResponseMode::AlwaysSse
            },
            ..EndpointConfig::default()
        };
        if draw_retry {
            ep_config.retry_ms = 200 + rng.below(1500);
        }
        let server_config = Config {
            max_inflight_inbound: 4 + rng.below(16) as usize,
            ..Config::default()
        };
        let versions = [
            ProtocolVersion::V2025_03_26,
            ProtocolVersion::V2025_06_18,
            ProtocolVersion::V2025_11_25,
        ];
        let version = versions[rng.below(3) as usize];
        let client_config = Config {
            request_timeout: Duration::from_secs(5 + rng.below(20)),
            max_pending_outbound: 2 + rng.below(16) as usize,
            ..Config::default()
        };
        HttpSetup {
            idle_timeout,
            ep_config,
            server_config,
            version,
            client_config,
        }
    }

    /// A fresh endpoint (a new server process) with the simulated worker behind it.
    pub fn endpoint(&self) -> Endpoint<Worker> {
        self.endpoint_with(self.ep_config.clone())
    }

    /// A fresh endpoint sharing sessions under the instance name `name`.
    pub fn instance(&self, name: String) -> Endpoint<Worker> {
        let mut ep_config = self.ep_config.clone();
        ep_config.instance_id = Some(name);
        self.endpoint_with(ep_config)
    }

    fn endpoint_with(&self, ep_config: EndpointConfig) -> Endpoint<Worker> {
        let server_config = self.server_config.clone();
        Endpoint::new(ep_config, move |now| {
            Worker::new(server_config.clone(), now)
        })
    }

    /// A new client session for this world's version.
    pub fn client(&self, now: Instant) -> Session {
        Session::client(self.client_config.clone(), client_setup(self.version), now)
    }

    /// The head of a client request to `/mcp`, naming session `sid` (with this world's
    /// version) when there is one.
    pub fn head(&self, method: HttpMethod, sid: Option<&str>) -> HttpRequestHead {
        let mut head = HttpRequestHead::new(method, "/mcp")
            .header("Host", "127.0.0.1:8080")
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        if let Some(sid) = sid {
            head = head
                .header("Mcp-Session-Id", sid.to_owned())
                .header("MCP-Protocol-Version", self.version.as_str());
        }
        head
    }
}

/// The next message `client` writes, as a POST body, and the request it carries (`None`: a
/// notification or a response); `None` when it has nothing to send.
pub fn next_post(client: &mut Session, buf: &mut Vec<u8>) -> Option<(Bytes, Option<RequestId>)> {
    buf.clear();
    client.poll_transmit(buf)?;
    let body = Bytes::copy_from_slice(buf);
    let request = match jsonrpc::decode(&body) {
        Ok(Incoming::Single(Message::Request(r))) => Some(r.id),
        _ => None,
    };
    Some((body, request))
}

/// The messages of the SSE events `decoder` can hand out now (events without data are left
/// out); every event's id, and every id set without an event, goes to `on_id` first.
pub fn sse_messages(
    decoder: &mut SseDecoder,
    mut on_id: impl FnMut(&str) -> Result<(), String>,
) -> Result<Vec<Bytes>, String> {
    let mut messages = Vec::new();
    while let Some(item) = decoder.poll_item() {
        let id = match item.map_err(|e| format!("SSE decode: {e:?}"))? {
            SseItem::Event(event) => {
                if !event.data.is_empty() {
                    messages.push(event.data.clone());
                }
                event.id
            }
            SseItem::LastEventId(id) => id,
            SseItem::Retry(_) => continue,
        };
        on_id(&id)?;
    }
    Ok(messages)
}

/// The HTTP worlds' client identity and version.
fn client_setup(version: ProtocolVersion) -> ClientSetup {
    ClientSetup {
        info: Implementation::new("sim-http-client", "1"),
        capabilities: ClientCapabilities::default(),
        protocol_version: version,
    }
}
