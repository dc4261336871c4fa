//! Two endpoints sharing sessions through a "store" the test keeps (a map): what one hands
//! out lets the other serve the session; a DELETE on one ends it on both.

use std::collections::HashMap;
use std::time::Instant;

use serde_json::json;

use super::share::MAX_SESSION_CHANGES;
use super::SessionChange;
use crate::app::server::Server;
use crate::http::{EndpointConfig, HttpMethod, HttpRequestHead, HttpResponse};
use crate::model::Implementation;
use crate::session::RestoreError;
use crate::testing::HttpRig;

fn rig(instance: Option<&str>, now: Instant) -> HttpRig {
    let config = EndpointConfig {
        instance_id: instance.map(str::to_owned),
        max_sessions: 2,
        ..EndpointConfig::default()
    };
    let factory = |now| Server::builder(Implementation::new("share", "1")).build(now);
    HttpRig::new(config, factory, now)
}

/// An endpoint named `instance` whose servers have `tool`.
fn rig_with(instance: &str, tool: &crate::app::server::Tool, now: Instant) -> HttpRig {
    let config = EndpointConfig {
        instance_id: Some(instance.to_owned()),
        ..EndpointConfig::default()
    };
    let tool = tool.clone();
    let factory = move |now| {
        Server::builder(Implementation::new("share", "1"))
            .tool(tool.clone())
            .build(now)
    };
    HttpRig::new(config, factory, now)
}

/// Drains `rig`'s changes into `store` (id → snapshot); returns them.
fn store(rig: &mut HttpRig, store: &mut HashMap<String, Vec<u8>>) -> Vec<SessionChange> {
    let mut seen = Vec::new();
    while let Some(change) = rig.endpoint.poll_session_change() {
        match &change {
            SessionChange::Saved { id, snapshot, .. } => {
                store.insert(id.clone(), snapshot.clone());
            }
            SessionChange::Ended { id } => {
                store.remove(id);
            }
        }
        seen.push(change);
    }
    seen
}

/// Endpoint A with one session opened on it and stored: the rig, the session id, the store and
/// the changes stored.
fn opened_on_a(
    now: Instant,
) -> (
    HttpRig,
    String,
    HashMap<String, Vec<u8>>,
    Vec<SessionChange>,
) {
    let mut kept = HashMap::new();
    let mut a = rig(Some("a"), now);
    let sid = a.open("2025-06-18");
    let changes = store(&mut a, &mut kept);
    (a, sid, kept, changes)
}

/// Stores A's changes into `kept`, then takes session `sid` up on B.
fn hand_to(b: &mut HttpRig, a: &mut HttpRig, sid: &str, kept: &mut HashMap<String, Vec<u8>>) {
    store(a, kept);
    assert_eq!(b.endpoint.handle_restore(b.now, sid, &kept[sid]), Ok(true));
}

/// Posts a `tools/call` of `name` with id 7 on `sid` and runs the jobs; returns the call and
/// its streamed answer.
fn call_tool(rig: &mut HttpRig, sid: &str, name: &str) -> (serde_json::Value, HttpResponse) {
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": name, "arguments": {}}});
    let stream = rig.post(Some(sid), &call);
    rig.run_jobs();
    (call, stream)
}

fn ping(id: u64) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

fn delete_head(sid: &str) -> HttpRequestHead {
    HttpRequestHead::new(HttpMethod::Delete, "/mcp")
        .header("Host", "localhost:3000")
        .header("Mcp-Session-Id", sid)
}

#[test]
fn an_unshared_endpoint_hands_out_nothing() {
    let mut a = rig(None, Instant::now());
    let sid = a.open("2025-06-18");
    assert_eq!(a.endpoint.poll_session_change(), None);
    let head = HttpRig::post_head().header("Mcp-Session-Id", "other");
    assert_eq!(a.endpoint.session_to_restore(&head), None);
    assert_eq!(
        a.endpoint.handle_restore(a.now, "x", b"{}"),
        Err(RestoreError::NotShared)
    );
    assert!(a.endpoint.holds_session(&sid));
}

#[test]
fn a_session_created_on_one_endpoint_is_served_by_another() {
    let now = Instant::now();
    let (mut a, sid, mut kept, changes) = opened_on_a(now);
    assert!(
        matches!(
            &changes[..],
            [
                SessionChange::Saved { created: true, .. },
                SessionChange::Saved { created: false, .. }
            ]
        ),
        "created, then initialized: {changes:?}"
    );
    a.post(Some(&sid), &ping(1));
    assert!(
        store(&mut a, &mut kept).is_empty(),
        "a ping changes nothing"
    );

    let mut b = rig(Some("b"), now);
    let head = HttpRig::post_head().header("Mcp-Session-Id", sid.as_str());
    assert_eq!(b.endpoint.session_to_restore(&head), Some(sid.as_str()));
    let snapshot = kept[&sid].clone();
    assert_eq!(b.endpoint.handle_restore(now, &sid, &snapshot), Ok(true));
    assert_eq!(
        b.endpoint.handle_restore(now, &sid, &snapshot),
        Ok(false),
        "a second restore builds nothing"
    );
    assert_eq!(b.endpoint.session_to_restore(&head), None);
    assert_eq!(b.endpoint.stats().sessions_restored, 1);
    let resp = b.post(Some(&sid), &ping(2));
    assert_eq!(resp.status, 200, "{}", resp.body_text());
    assert_eq!(b.messages(&resp)[0]["id"], 2);

    // A DELETE on B ends it there and hands out the end; A, told, ends it too.
    let resp = b.request(&delete_head(&sid), "");
    assert_eq!(resp.status, 200);
    let changes = store(&mut b, &mut kept);
    assert_eq!(changes, vec![SessionChange::Ended { id: sid.clone() }]);
    assert!(kept.is_empty());
    assert!(a.endpoint.handle_session_ended(now, &sid));
    assert!(!a.endpoint.handle_session_ended(now, &sid), "once");
    assert_eq!(a.post(Some(&sid), &ping(3)).status, 404);
    assert_eq!(b.post(Some(&sid), &ping(4)).status, 404);
}

#[test]
fn restores_that_cannot_be_taken_are_refused() {
    let now = Instant::now();
    let (_, sid, kept, _) = opened_on_a(now);
    let mut b = rig(Some("b"), now);
    assert!(matches!(
        b.endpoint.handle_restore(now, "s1", b"garbage"),
        Err(RestoreError::Malformed(_))
    ));
    assert!(matches!(
        b.endpoint.handle_restore(now, "bad id", &kept[&sid]),
        Err(RestoreError::InvalidSessionId)
    ));
    // Two initialized sessions fill B (max 2): a third restore is refused.
    let snapshot = kept[&sid].clone();
    assert_eq!(b.endpoint.handle_restore(now, "s1", &snapshot), Ok(true));
    assert_eq!(b.endpoint.handle_restore(now, "s2", &snapshot), Ok(true));
    assert_eq!(
        b.endpoint.handle_restore(now, "s3", &snapshot),
        Err(RestoreError::Full)
    );
}

#[test]
fn changes_the_driver_never_takes_are_bounded() {
    let now = Instant::now();
    let mut a = rig(Some("a"), now);
    let sid = a.open("2025-06-18");
    let level = |l: &str| json!({"jsonrpc": "2.0", "id": 9, "method": "logging/setLevel", "params": {"level": l}});
    for i in 0..MAX_SESSION_CHANGES + 10 {
        let l = if i % 2 == 0 { "error" } else { "info" };
        a.post(Some(&sid), &level(l));
    }
    assert_eq!(a.endpoint.stats().session_changes_dropped, 12);
    let mut n = 0;
    while a.endpoint.poll_session_change().is_some() {
        n += 1;
    }
    assert_eq!(n, MAX_SESSION_CHANGES);
}

#[test]
fn a_held_copy_is_brought_up_to_what_another_endpoint_stored() {
    let now = Instant::now();
    let mut kept = HashMap::new();
    let mut a = rig(Some("a"), now);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "rig", "version": "1"}}});
    let resp = a.post(None, &init);
    let sid = resp.get("mcp-session-id").expect("a session id").to_owned();
    store(&mut a, &mut kept);
    // The handshake ends on B.
    let mut b = rig(Some("b"), now);
    assert_eq!(b.endpoint.handle_restore(now, &sid, &kept[&sid]), Ok(true));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(b.post(Some(&sid), &initialized).status, 202);
    assert_eq!(store(&mut b, &mut kept).len(), 1);
    // A's copy still waits for `initialized` and refuses a request ...
    let level = json!({"jsonrpc": "2.0", "id": 5, "method": "logging/setLevel",
        "params": {"level": "error"}});
    let refused = a.post(Some(&sid), &level);
    assert!(a.messages(&refused)[0].get("error").is_some());
    // ... until it is brought up to B's state.
    assert_eq!(a.endpoint.handle_restore(now, &sid, &kept[&sid]), Ok(false));
    assert!(store(&mut a, &mut kept).is_empty(), "nothing new to store");
    let served = a.post(Some(&sid), &level);
    assert!(a.messages(&served)[0].get("result").is_some());
}

#[test]
fn a_reply_posted_to_another_endpoint_is_routed_to_the_one_that_asked() {
    use crate::app::server::{CallToolResult, Tool};
    let now = Instant::now();
    let ask = Tool::new("ask", json!({"type": "object"})).handler(|_call, ctx| async move {
        Ok(match ctx.list_roots().await {
            Ok(roots) => CallToolResult::text(format!("roots: {roots}")),
            Err(e) => CallToolResult::error(format!("failed: {e}")),
        })
    });
    let (mut a, mut b) = (rig_with("a", &ask, now), rig_with("b", &ask, now));
    let mut kept = HashMap::new();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {"roots": {}},
        "clientInfo": {"name": "rig", "version": "1"}}});
    let sid = a
        .post(None, &init)
        .get("mcp-session-id")
        .expect("id")
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(a.post(Some(&sid), &initialized).status, 202);
    hand_to(&mut b, &mut a, &sid, &mut kept);

    let (call, stream) = call_tool(&mut a, &sid, "ask");
    let asked = a.read_stream(&stream.body).messages();
    let request = asked
        .iter()
        .find(|m| m["method"] == "roots/list")
        .expect("the tool asks for roots");
    let id = request["id"].as_str().expect("a string id");
    assert!(id.starts_with("s-a.0-"), "{id}");

    // The client answers through B: B names A as the owner instead of serving it.
    let reply = json!({"jsonrpc": "2.0", "id": id, "result": {"roots": []}});
    let head = HttpRig::post_head().header("Mcp-Session-Id", sid.as_str());
    let body = bytes::Bytes::from(reply.to_string());
    assert_eq!(b.endpoint.reply_owner(&head, &body), Some("a".to_owned()));
    assert_eq!(a.endpoint.reply_owner(&head, &body), None, "A's own");
    let request_body = bytes::Bytes::from(call.to_string());
    assert_eq!(b.endpoint.reply_owner(&head, &request_body), None);
    assert!(a.endpoint.handle_forwarded(now, &sid, body));
    a.run_jobs();
    let answered = a.read_stream(&stream.body).messages();
    let result = answered
        .iter()
        .find(|m| m["id"] == 7)
        .expect("the tool's answer");
    assert!(
        result["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("roots:")),
        "{result}"
    );
    assert!(!b
        .endpoint
        .handle_forwarded(now, "unknown", bytes::Bytes::new()));
}

#[test]
fn a_cancellation_posted_to_another_endpoint_reaches_the_one_serving_the_request() {
    use crate::app::server::{CallToolResult, Tool};
    let now = Instant::now();
    let wait = Tool::new("wait", json!({"type": "object"})).handler(|_call, ctx| async move {
        ctx.cancelled().await;
        Ok(CallToolResult::text("cancelled"))
    });
    let (mut a, mut b) = (rig_with("a", &wait, now), rig_with("b", &wait, now));
    let mut kept = HashMap::new();
    let sid = a.open("2025-06-18");
    hand_to(&mut b, &mut a, &sid, &mut kept);
    let (_, stream) = call_tool(&mut a, &sid, "wait");
    assert!(!a.read_stream(&stream.body).ended, "the tool waits");

    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "enough"}});
    let head = HttpRig::post_head().header("Mcp-Session-Id", sid.as_str());
    let body = bytes::Bytes::from(cancel.to_string());
    assert!(
        a.endpoint.cancellations_elsewhere(&head, &body).is_empty(),
        "A serves it"
    );
    let frames = b.endpoint.cancellations_elsewhere(&head, &body);
    assert_eq!(frames.len(), 1, "B does not");
    let ping = bytes::Bytes::from(ping(8).to_string());
    assert!(b.endpoint.cancellations_elsewhere(&head, &ping).is_empty());
    assert_eq!(b.post(Some(&sid), &cancel).status, 202);
    for frame in frames {
        assert!(a.endpoint.handle_forwarded(now, &sid, frame));
    }
    a.run_jobs();
    let read = a.read_stream(&stream.body);
    assert!(read.ended, "the cancelled request's stream ends");
    assert!(
        read.messages().iter().all(|m| m["id"] != 7),
        "no answer after a cancellation"
    );
}

#[test]
fn sessions_whose_clients_listen_are_named_for_their_records_to_be_kept() {
    let now = Instant::now();
    let mut a = rig(Some("a"), now);
    let quiet = a.open("2025-06-18");
    let listening = a.open("2025-06-18");
    assert!(a.endpoint.listening_sessions().is_empty());
    let stream = a.get(&listening, None);
    assert_eq!(stream.status, 200);
    assert_eq!(a.endpoint.listening_sessions(), vec![listening.clone()]);
    assert!(!a.endpoint.listening_sessions().contains(&quiet));
    let mut alone = rig(None, now);
    let sid = alone.open("2025-06-18");
    assert_eq!(alone.get(&sid, None).status, 200);
    assert!(alone.endpoint.listening_sessions().is_empty(), "not shared");
}
