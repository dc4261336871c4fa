//! The in-memory `SessionPair` is bounded (docs/fuzzing.md, invariant 6): a livelock costs at most
//! `PairLimits::max_steps` steps and is counted, a full link pushes back on its writer, and the
//! error ping-pong the `pair_ops` fuzz body found (two peers answering each other's oversized
//! error responses forever) no longer happens.

use std::time::{Duration, Instant};

use mcp_sansio::model::{ClientCapabilities, Implementation, ProtocolVersion, ServerCapabilities};
use mcp_sansio::session::{ClientSetup, Event, Outcome, RequestOptions, ServerSetup};
use mcp_sansio::testing::{Direction, Fault, PairLimits, SessionPair};
use mcp_sansio::Config;

fn small_frames_pair(max_frame_len: usize) -> SessionPair {
    let config = Config {
        max_frame_len,
        ..Config::default()
    };
    let client = ClientSetup {
        info: Implementation::new("c", "0"),
        capabilities: ClientCapabilities::default(),
        protocol_version: ProtocolVersion::LATEST_STATEFUL,
    };
    let server = ServerSetup {
        info: Implementation::new("s", "0"),
        capabilities: ServerCapabilities::default(),
        instructions: None,
    };
    SessionPair::new(config.clone(), client, config, server, Instant::now())
}

#[test]
fn oversized_error_responses_are_not_answered_so_small_limits_cannot_ping_pong() {
    // Regression (found by pair_ops, 18 s and 542 MB per input): the server refuses an
    // oversized request with an error longer than the client's limit; the client used to
    // answer that error with its own oversized-frame error, and so on forever.
    let mut pair = small_frames_pair(64);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":"{}"}}}}"#,
        "a".repeat(100)
    );
    pair.set_recording(true);
    pair.inject(Direction::ToServer, big);
    assert!(pair.drive(), "the pair goes idle");
    assert_eq!(pair.steps_exhausted(), 0);
    assert_eq!(pair.server.stats().oversized_frames, 1);
    assert_eq!(pair.client.stats().oversized_frames, 1);
    // One error went out (the server's); the client stayed silent.
    let sent: Vec<Direction> = pair.transcript().iter().map(|(d, _)| *d).collect();
    assert_eq!(sent, vec![Direction::ToClient]);
}

#[test]
fn an_oversized_request_is_still_refused_with_an_error() {
    let mut pair = small_frames_pair(64);
    pair.set_recording(true);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{}"}}"#,
        "m".repeat(80)
    );
    pair.inject(Direction::ToServer, big);
    assert!(pair.drive());
    let (direction, frame) = &pair.transcript()[0];
    assert_eq!(*direction, Direction::ToClient);
    assert!(String::from_utf8_lossy(frame).contains("-32600"));
}

#[test]
fn a_livelock_costs_at_most_the_step_budget_and_is_counted() {
    // A hook that turns every message into a new ping: each side answers the other's ping,
    // whose answer becomes a ping again. Without a budget `drive` would never return.
    let mut pair = SessionPair::with_defaults(Instant::now());
    assert!(pair.connect().is_some());
    pair.set_limits(PairLimits {
        max_steps: 500,
        ..PairLimits::default()
    });
    let mut n = 0u64;
    pair.set_fault_hook(move |_, _| {
        n += 1;
        Fault::Replace(format!(r#"{{"jsonrpc":"2.0","id":"x{n}","method":"ping"}}"#).into_bytes())
    });
    pair.inject(
        Direction::ToServer,
        r#"{"jsonrpc":"2.0","id":"x0","method":"ping"}"#,
    );
    assert!(!pair.drive(), "still busy when the budget runs out");
    assert_eq!(pair.steps_exhausted(), 1);
    assert!(!pair.settle(Duration::from_secs(1)));
    assert_eq!(pair.steps_exhausted(), 2);
    pair.advance(Duration::from_secs(1));
    assert!(pair.steps_exhausted() >= 3);
    // Heal the link: the pair calms down again.
    pair.clear_fault_hook();
    pair.set_limits(PairLimits::default());
    pair.advance(Duration::from_secs(120));
    let before = pair.steps_exhausted();
    assert!(pair.drive());
    assert_eq!(pair.steps_exhausted(), before);
}

#[test]
fn a_full_link_pushes_back_and_everything_still_arrives() {
    let mut pair = SessionPair::with_defaults(Instant::now());
    assert!(pair.connect().is_some());
    pair.set_latency(Duration::from_millis(100));
    pair.set_limits(PairLimits {
        max_link_bytes: 120,
        ..PairLimits::default()
    });
    let now = pair.now();
    let ids: Vec<_> = (0..10)
        .map(|_| {
            pair.client
                .send_request(now, "ping", None, RequestOptions::default())
                .expect("queued")
        })
        .collect();
    assert!(pair.drive());
    // About one 45-byte ping fits under 120 bytes at a time, plus the one that crossed it.
    assert!(pair.link_bytes(Direction::ToServer) < 120 + 64);
    assert!(
        pair.client.has_transmit(),
        "the rest waits in the client's queue"
    );
    pair.advance(Duration::from_secs(5));
    let mut done = 0;
    while let Some(event) = pair.client_events.pop_front() {
        if let Event::Completed { id, outcome } = event {
            assert!(ids.contains(&id));
            assert!(matches!(outcome, Outcome::Result(_)));
            done += 1;
        }
    }
    assert_eq!(done, ids.len());
    assert_eq!(pair.steps_exhausted(), 0);
}
