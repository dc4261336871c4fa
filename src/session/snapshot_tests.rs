//! A server session snapshotted after its handshake and restored goes on serving the same
//! client, numbering its requests under the prefix it was given.

use std::time::Instant;

use super::*;
use crate::jsonrpc::RequestId;
use crate::session::{Event, Outcome, RequestOptions};
use crate::testing::SessionPair;

fn connected() -> SessionPair {
    let mut pair = SessionPair::with_defaults(Instant::now());
    assert!(pair.connect().is_some());
    pair.server_events.clear();
    pair
}

/// Sends a `ping` from `session`; returns its id.
fn ping(session: &mut Session, now: Instant) -> RequestId {
    session
        .send_request(now, "ping", None, RequestOptions::default())
        .expect("sent")
}

#[test]
fn a_snapshot_holds_what_the_handshake_settled() {
    let pair = connected();
    let snap = pair.server.snapshot().expect("a ready server session");
    assert!(snap.ready);
    assert_eq!(
        snap.protocol_version,
        ProtocolVersion::LATEST_STATEFUL.as_str()
    );
    assert_eq!(snap.client_info.name, "pair-client");
    assert_eq!(snap.server_info.name, "pair-server");
    assert_eq!(snap.next_request, 0);
    assert!(
        pair.client.snapshot().is_none(),
        "client sessions do not move"
    );
    let fresh = Session::server(
        Config::default(),
        ServerSetup {
            info: Implementation::new("s", "0"),
            capabilities: ServerCapabilities::default(),
            instructions: None,
        },
        Instant::now(),
    );
    assert!(
        fresh.snapshot().is_none(),
        "nothing to move before initialize"
    );
}

#[test]
fn a_restored_session_serves_requests_and_numbers_its_own_under_the_prefix() {
    let mut pair = connected();
    let now = pair.now();
    let first = ping(&mut pair.server, now);
    assert_eq!(first, RequestId::string("s-0"));
    pair.drive();
    let snap = pair.server.snapshot().expect("snapshot");
    assert_eq!(snap.next_request, 1);
    let bytes = serde_json::to_vec(&snap).expect("encodes");
    let back: SessionSnapshot = serde_json::from_slice(&bytes).expect("decodes");
    assert_eq!(back, snap);

    pair.server = Session::restore(Config::default(), back, "b7.1", now).expect("restores");
    assert_eq!(pair.server.state(), State::Ready);
    assert_eq!(
        pair.server.peer_info().map(|i| i.name.as_str()),
        Some("pair-client")
    );
    // The client's requests are served at once (no second handshake).
    let id = ping(&mut pair.client, now);
    pair.drive();
    assert!(
        matches!(pair.client_events.pop_front(), Some(Event::Completed { id: done, outcome: Outcome::Result(_) }) if done == id)
    );
    // Ours carry the prefix and go on from the snapshot's number.
    let ours = ping(&mut pair.server, now);
    assert_eq!(ours, RequestId::string("s-b7.1-1"));
    pair.drive();
    let done = pair
        .server_events
        .iter()
        .any(|e| matches!(e, Event::Completed { id, outcome: Outcome::Result(_) } if *id == ours));
    assert!(done, "the client's answer reaches the restored session");
}

#[test]
fn a_snapshot_taken_mid_handshake_restores_waiting_for_initialized() {
    let mut pair = SessionPair::with_defaults(Instant::now());
    let now = pair.now();
    pair.client.initialize(now).expect("starts");
    // Deliver `initialize` and its answer, hold back `notifications/initialized`.
    while pair.server.state() == State::NotInitialized && pair.step() {}
    let snap = pair.server.snapshot().expect("initialize answered");
    assert!(!snap.ready);
    let restored = Session::restore(Config::default(), snap, "x", now).expect("restores");
    assert_eq!(restored.state(), State::Initializing);
}

#[test]
fn bad_prefixes_and_versions_are_refused() {
    let pair = connected();
    let snap = pair.server.snapshot().expect("snapshot");
    let now = pair.now();
    for prefix in ["", "a-b", "a b", &"x".repeat(MAX_ID_PREFIX + 1)] {
        assert_eq!(
            Session::restore(Config::default(), snap.clone(), prefix, now).err(),
            Some(RestoreError::InvalidPrefix),
            "{prefix:?}"
        );
    }
    for version in ["1999-01-01", "2026-07-28"] {
        let odd = SessionSnapshot {
            protocol_version: version.to_owned(),
            ..snap.clone()
        };
        assert!(matches!(
            Session::restore(Config::default(), odd, "p", now),
            Err(RestoreError::UnsupportedVersion(_))
        ));
    }
}
