//! Fuzz body for a connected `SessionPair` driven by operations (requests both ways, answers, cancels,
//! time, fault modes), asserting docs/fuzzing.md invariants 1 (every request ends exactly once),
//! 2 (responses match by exact id) and 6 (no livelock: no drive runs out of its step budget).
//!
//! Every answer the applications give echoes the request's id as JSON (`{"echo": <id>}`), so a
//! completion carrying another request's answer is caught; the fault hook may forge responses
//! whose ids only look like real ones (`"0"` for `0`), which must never complete anything.

use std::cell::Cell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::ops::{self, Cursor, Ledger};
use super::session_ops::{full_client_setup, full_server_setup, small_config};
use crate::config::Config;
use crate::jsonrpc::{ErrorObject, RawJson, RequestId};
use crate::session::{Event, Outcome, RequestOptions, Session};
use crate::testing::{Direction, Fault, SessionPair};

const CLIENT_METHODS: &[&str] = &[
    "ping",
    "tools/list",
    "tools/call",
    "prompts/get",
    "x/unknown",
];
const SERVER_METHODS: &[&str] = &[
    "ping",
    "roots/list",
    "sampling/createMessage",
    "elicitation/create",
];
const STEPS: usize = 64;

/// A pair fed an arbitrary operation sequence. The first two bytes pick each side's limits.
pub fn pair_ops(data: &[u8]) {
    let mut c = Cursor::new(data);
    // No keep-alive: an hour of 5 s pings per run would make the body too slow to fuzz.
    let quiet = |c: &mut Cursor<'_>| Config {
        keep_alive_interval: None,
        ..small_config(c)
    };
    let (client_config, server_config) = (quiet(&mut c), quiet(&mut c));
    let mut pair = SessionPair::new(
        client_config,
        full_client_setup(),
        server_config,
        full_server_setup(),
        Instant::now(),
    );
    // The fault mode and how many more messages it may hit: corrupted errors answered with
    // errors that get corrupted again would ping-pong forever, so every mode has a budget.
    let fault = Rc::new(Cell::new((0u8, 0u8)));
    let mode = fault.clone();
    pair.set_fault_hook(move |direction, bytes| match mode.get() {
        (m, left) if left > 0 => {
            mode.set((m, left - 1));
            fault_for(m, direction, bytes)
        }
        _ => Fault::Deliver,
    });
    let mut sides = [Ledger::default(), Ledger::default()];
    if let Ok(id) = pair.client.initialize(pair.now()) {
        sides[0].sent(id, "initialize");
    }
    while !c.is_empty() {
        step(&mut c, &mut pair, &mut sides, &fault);
        pair.drive_bounded(STEPS);
        collect(&mut pair, &mut sides);
    }
    // Heal the link, answer nothing more, and let every deadline pass: all requests must end.
    fault.set((0, 0));
    pair.advance(Duration::from_secs(3600));
    collect(&mut pair, &mut sides);
    pair.client.close(pair.now());
    pair.server.close(pair.now());
    pair.drive_bounded(STEPS);
    collect(&mut pair, &mut sides);
    for ledger in &sides {
        assert!(
            ledger.outstanding.is_empty(),
            "never completed: {:?}",
            ledger.outstanding
        );
    }
    // Invariant 6: the sessions never keep each other busy without end.
    assert_eq!(
        pair.steps_exhausted(),
        0,
        "a drive ran out of steps (livelock)"
    );
}

fn fault_for(mode: u8, direction: Direction, bytes: &[u8]) -> Fault {
    let forged = |id: &str| {
        Fault::Replace(
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"forged":true}}}}"#).into_bytes(),
        )
    };
    match (mode, direction) {
        (1, _) => Fault::Drop,
        (2, _) => Fault::Duplicate,
        (3, _) => Fault::Delay(Duration::from_millis(500)),
        // A strict prefix of a compact JSON object is never valid JSON.
        (4, _) => Fault::Replace(bytes[..bytes.len() / 2].to_vec()),
        // Look-alike ids: the client's ids are integers, the server's are "s-N" strings.
        (5, Direction::ToClient) => forged(r#""0""#),
        (5, Direction::ToServer) => forged("0"),
        (6, Direction::ToClient) => forged(r#""1""#),
        (6, Direction::ToServer) => forged(r#""s""#),
        _ => Fault::Deliver,
    }
}

fn step(
    c: &mut Cursor<'_>,
    pair: &mut SessionPair,
    sides: &mut [Ledger; 2],
    fault: &Cell<(u8, u8)>,
) {
    let now = pair.now();
    match c.below(12) {
        0..=2 => {
            let method = c.pick(CLIENT_METHODS);
            request(c, &mut pair.client, &mut sides[0], now, method);
        }
        3 => {
            let method = c.pick(SERVER_METHODS);
            request(c, &mut pair.server, &mut sides[1], now, method);
        }
        4 | 5 => answer(c, &mut pair.server, &mut sides[1]),
        6 => answer(c, &mut pair.client, &mut sides[0]),
        7 => {
            let side = c.below(2);
            let session = if side == 0 {
                &mut pair.client
            } else {
                &mut pair.server
            };
            if let Some(id) = sides[side].outstanding_at(c.below(8)) {
                let _ = session.cancel(now, &id, Some("fuzz".into()));
            }
        }
        8 | 9 => pair.advance(c.pick(ops::JUMPS)),
        10 => fault.set((c.below(8) as u8, 16)),
        _ => {
            let _ = pair.settle(Duration::from_secs(c.below(90) as u64));
        }
    }
}

fn request(
    c: &mut Cursor<'_>,
    s: &mut Session,
    ledger: &mut Ledger,
    now: Instant,
    method: &'static str,
) {
    let opts = RequestOptions {
        timeout: (c.byte() & 1 == 1).then(|| c.pick(ops::JUMPS)),
        progress: c.byte() & 1 == 1,
        related_to: None,
    };
    if let Ok(id) = s.send_request(now, method, Some(RawJson::empty_object()), opts) {
        ledger.sent(id, method);
    }
}

/// The application answers one in-flight request with its id echoed.
fn answer(c: &mut Cursor<'_>, s: &mut Session, ledger: &mut Ledger) {
    let Some(id) = ledger.take_inbound(c.below(16)) else {
        return;
    };
    let echo = RawJson::from_text(format!(r#"{{"echo":{}}}"#, ops::id_json(&id))).expect("JSON");
    if c.byte() & 1 == 0 {
        let _ = s.respond(&id, echo);
    } else {
        let _ = s.respond_error(&id, ErrorObject::new(-32000, "no").with_data(echo));
    }
}

fn collect(pair: &mut SessionPair, sides: &mut [Ledger; 2]) {
    check_events(&mut pair.client_events, &mut sides[0]);
    check_events(&mut pair.server_events, &mut sides[1]);
}

fn check_events(events: &mut VecDeque<Event>, ledger: &mut Ledger) {
    while let Some(event) = events.pop_front() {
        if let Event::Completed { id, outcome } = &event {
            check_outcome(id, ledger.methods.get(id).copied(), outcome);
        }
        ledger.event(&event);
    }
}

/// Invariant 2: a result or error reached the request whose exact id the peer answered.
fn check_outcome(id: &RequestId, method: Option<&str>, outcome: &Outcome) {
    let payload = match outcome {
        Outcome::Result(raw) => Some(raw),
        Outcome::Error(e) => e.data.as_ref(),
        _ => None,
    };
    let Some(raw) = payload else { return };
    let value: Value = serde_json::from_slice(raw.as_bytes()).expect("payloads are JSON");
    assert!(
        value.get("forged").is_none(),
        "{id:?} completed with a forged response"
    );
    if matches!(method, Some("ping" | "initialize")) {
        return; // answered by the session itself, not echoed
    }
    let want: Value = serde_json::from_str(&ops::id_json(id)).expect("ids are JSON");
    assert_eq!(
        value.get("echo"),
        Some(&want),
        "{id:?} got another request's answer"
    );
}
