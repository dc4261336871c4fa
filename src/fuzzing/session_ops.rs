//! Fuzz bodies for one `Session` (server side and client side) driven by an operation sequence
//! decoded from the input: frames, time jumps, timeouts and every application command.

use std::time::{Duration, Instant};

use super::ops::{self, Cursor, Ledger};
use crate::config::Config;
use crate::jsonrpc::{ErrorObject, RawJson, RequestId};
use crate::model::{
    ClientCapabilities, ElicitationCapability, Implementation, ListChangedCapability,
    ProtocolVersion, ResourcesCapability, SamplingCapability, ServerCapabilities,
};
use crate::session::{ClientSetup, FrameError, RequestOptions, ServerSetup, Session, State};

/// Small limits so the fuzzer reaches every bound, chosen by one input byte.
pub(crate) fn small_config(c: &mut Cursor<'_>) -> Config {
    config_of(c.byte())
}

/// The limits [`small_config`] picks for the byte `b`.
pub(crate) fn config_of(b: u8) -> Config {
    Config {
        request_timeout: Duration::from_secs(1 + u64::from(b % 4) * 10),
        max_request_timeout: Duration::from_secs(60),
        max_inflight_inbound: 1 + usize::from(b % 3),
        max_pending_outbound: 1 + usize::from((b >> 2) % 4),
        max_frame_len: if b & 0x10 != 0 { 64 } else { 1 << 16 },
        keep_alive_interval: (b & 0x20 != 0).then_some(Duration::from_secs(5)),
        tombstone_capacity: usize::from((b >> 6) % 3),
        max_outbound_queue: 4 + usize::from(b % 5),
        max_queued_events: 4 + usize::from(b % 7),
        ..Config::default()
    }
}

pub(crate) fn full_server_setup() -> ServerSetup {
    ServerSetup {
        info: Implementation::new("fuzz-server", "0"),
        capabilities: ServerCapabilities {
            tools: Some(ListChangedCapability::default()),
            resources: Some(ResourcesCapability::default()),
            prompts: Some(ListChangedCapability::default()),
            logging: Some(Default::default()),
            completions: Some(Default::default()),
            ..ServerCapabilities::default()
        },
        instructions: None,
    }
}

pub(crate) fn full_client_setup() -> ClientSetup {
    ClientSetup {
        info: Implementation::new("fuzz-client", "0"),
        capabilities: ClientCapabilities {
            roots: Some(ListChangedCapability::default()),
            sampling: Some(SamplingCapability::default()),
            elicitation: Some(ElicitationCapability::default()),
            ..ClientCapabilities::default()
        },
        protocol_version: ProtocolVersion::LATEST_STATEFUL,
    }
}

/// A server session fed an arbitrary operation sequence. The first byte picks the limits, the
/// second whether the handshake happens up front.
pub fn session_server(data: &[u8]) {
    let mut c = Cursor::new(data);
    let config = small_config(&mut c);
    let now = Instant::now();
    let mut session = Session::server(config, full_server_setup(), now);
    let mut ledger = Ledger::default();
    if c.byte() & 1 == 1 {
        for frame in ops::client_handshake() {
            session.handle_input(now, frame);
        }
    }
    run(&mut c, &mut session, &mut ledger, now, 1);
}

/// A client session: `initialize` first, then an arbitrary operation sequence. The first byte
/// picks the limits.
pub fn session_client(data: &[u8]) {
    let mut c = Cursor::new(data);
    let config = small_config(&mut c);
    let now = Instant::now();
    let mut session = Session::client(config, full_client_setup(), now);
    let mut ledger = Ledger::default();
    let id = session
        .initialize(now)
        .expect("a new client can initialize");
    ledger.sent(id, "initialize");
    run(&mut c, &mut session, &mut ledger, now, 2);
}

/// Applies operations until the input runs out, checking after each; then closes and checks
/// that every request ended.
fn run(
    c: &mut Cursor<'_>,
    s: &mut Session,
    ledger: &mut Ledger,
    mut now: Instant,
    internal: usize,
) {
    ops::drain(s, ledger, internal);
    while !c.is_empty() {
        now = step(c, s, ledger, now);
        ops::drain(s, ledger, internal);
    }
    s.close(now);
    ops::drain(s, ledger, internal);
    assert_eq!(s.state(), State::Closed);
    assert!(
        ledger.outstanding.is_empty(),
        "never completed: {:?}",
        ledger.outstanding
    );
    assert_eq!(s.poll_timeout(), None);
}

/// One operation. Returns the (possibly advanced) clock.
fn step(c: &mut Cursor<'_>, s: &mut Session, ledger: &mut Ledger, now: Instant) -> Instant {
    match c.below(16) {
        0..=4 => s.handle_input(now, ops::frame(c)),
        5 => return now + c.pick(ops::JUMPS),
        6 => {
            s.handle_timeout(now);
            ops::drain(s, ledger, 2);
            assert!(
                s.poll_timeout().is_none_or(|t| t > now),
                "a deadline at or before now survived handle_timeout"
            );
        }
        7 => {
            // A driver that sleeps until the deadline and then handles it.
            if let Some(t) = s.poll_timeout() {
                let at = t.max(now);
                s.handle_timeout(at);
                return at;
            }
        }
        8 | 9 => respond(c, s, ledger),
        10 => {
            let method = c.pick(ops::METHODS);
            let _ = s.notify(method, raw_params(c, method));
        }
        11 | 12 => {
            let method = c.pick(ops::METHODS);
            let opts = RequestOptions {
                timeout: (c.byte() & 1 == 1).then(|| c.pick(ops::JUMPS)),
                progress: c.byte() & 1 == 1,
                related_to: None,
            };
            if let Ok(id) = s.send_request(now, method, raw_params(c, method), opts) {
                ledger.sent(id, method);
            }
        }
        13 => {
            let id = ledger.outstanding_at(c.below(8));
            let id = id.unwrap_or_else(|| RequestId::number(c.below(4) as i64));
            let _ = s.cancel(now, &id, None);
        }
        14 => {
            let inbound = ledger.inbound.first().cloned();
            if let Some(id) = inbound {
                let _ = s.notify_progress(&id, f64::from(c.byte()), None, None);
            }
            if c.byte() & 1 == 1 {
                let error = FrameError::too_long(1);
                s.handle_decode_error(now, error);
            }
        }
        _ => {
            if c.byte() % 8 == 0 {
                s.close(now);
            }
        }
    }
    now
}

/// Answers one of the peer's in-flight requests (or a made-up id), with a result or an error.
fn respond(c: &mut Cursor<'_>, s: &mut Session, ledger: &mut Ledger) {
    let pick = c.byte();
    let id = match ledger.take_inbound(usize::from(pick >> 1)) {
        Some(id) => id,
        None => RequestId::number(i64::from(pick % 4)),
    };
    if pick & 1 == 0 {
        let result = RawJson::from_text(c.pick(ops::RESULTS)).expect("vocabulary is JSON");
        let _ = s.respond(&id, result);
    } else {
        let _ = s.respond_error(&id, ErrorObject::new(-32000, "fuzz\nerror"));
    }
}

fn raw_params(c: &mut Cursor<'_>, method: &str) -> Option<RawJson> {
    let text = ops::params(c, method);
    RawJson::from_text(text).ok().filter(|_| c.byte() & 3 != 0)
}
