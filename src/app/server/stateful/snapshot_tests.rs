//! A server's snapshot carries the level and subscriptions, is due when they or the handshake
//! change, and a fresh server restored from it serves the session as if it had held it.

use std::time::Instant;

use serde_json::{json, Value};

use crate::app::server::Server;
use crate::model::{Implementation, LoggingLevel};
use crate::testing::ServerRig;

fn rig(now: Instant) -> ServerRig {
    let builder = Server::builder(Implementation::new("snap", "1")).enable_resources();
    ServerRig::new(builder, now)
}

fn handshake(rig: &mut ServerRig) {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "c", "version": "0"}}});
    let answer = rig.call(&init);
    assert!(answer.get("result").is_some(), "{answer}");
}

fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

#[test]
fn the_snapshot_is_due_when_the_handshake_level_or_subscriptions_change() {
    let now = Instant::now();
    let mut rig = rig(now);
    assert!(rig.server.snapshot().is_none());
    assert!(!rig.server.take_snapshot_due(), "nothing to move yet");
    handshake(&mut rig);
    assert!(rig.server.take_snapshot_due(), "initialize answered");
    assert!(!rig.server.take_snapshot_due(), "once");
    rig.send(&initialized());
    assert!(rig.server.take_snapshot_due(), "handshake done");
    rig.call(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert!(!rig.server.take_snapshot_due(), "a ping changes nothing");
    let level = json!({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel",
        "params": {"level": "error"}});
    rig.call(&level);
    assert!(rig.server.take_snapshot_due(), "level set");
    let sub = json!({"jsonrpc": "2.0", "id": 4, "method": "resources/subscribe",
        "params": {"uri": "mem://a"}});
    rig.call(&sub);
    assert!(rig.server.take_snapshot_due(), "subscribed");
}

#[test]
fn a_restored_server_keeps_the_level_and_subscriptions_and_skips_the_handshake() {
    let now = Instant::now();
    let mut a = rig(now);
    handshake(&mut a);
    a.send(&initialized());
    a.call(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
        "params": {"level": "warning"}}),
    );
    a.call(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe",
        "params": {"uri": "mem://a"}}),
    );
    let bytes = a.server.snapshot().expect("snapshot");

    let mut b = rig(now);
    b.server.restore(now, &bytes, "b.0").expect("restores");
    assert!(!b.server.take_snapshot_due(), "restored is saved");
    assert_eq!(b.server.shared.level(), Some(LoggingLevel::Warning));
    let again = b.call(
        &json!({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "c", "version": "0"}}}),
    );
    assert!(again.get("error").is_some(), "no second handshake: {again}");
    b.server.handle().notify_resource_updated("mem://a");
    let out = b.settle();
    assert!(
        out.iter()
            .any(|m| m["method"] == "notifications/resources/updated"),
        "the subscription moved: {out:?}"
    );
    assert_eq!(b.server.snapshot(), Some(bytes), "the same state");
}

#[test]
fn garbage_and_oversized_snapshots_are_refused() {
    let now = Instant::now();
    let mut b = rig(now);
    assert!(b.server.restore(now, b"not json", "p").is_err());
    assert!(b.server.restore(now, br#"{"format":2}"#, "p").is_err());
    let mut a = rig(now);
    handshake(&mut a);
    let mut snap: Value = serde_json::from_slice(&a.server.snapshot().expect("snap")).unwrap();
    snap["subscriptions"] = json!(vec!["u"; 2000]);
    let bytes = serde_json::to_vec(&snap).unwrap();
    assert!(b.server.restore(now, &bytes, "p").is_err());
    assert!(b.server.snapshot().is_none(), "still the fresh server");
}
