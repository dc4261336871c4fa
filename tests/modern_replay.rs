//! Single use of `requestState` (2026-07-28): the `ReplayGuard` set on its own (replay,
//! expiry, capacity) and in a server, where a second retry with the same state is refused
//! with -32602 while a server without a guard accepts it; one guard shared by two servers
//! (two HTTP exchange machines) refuses a replay across them.

use std::task::{Context, Waker};
use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::app::runtime::Job;
use mcp_sansio::app::server::*;
use mcp_sansio::model::modern::InputRequest;
use mcp_sansio::model::Implementation;
use mcp_sansio::stateless::{ReplayGuard, RequestStateKey, StateError};
use serde_json::{json, Value};

const KEY: &[u8] = b"replay-test-key-replay-test-key!";
const NOW_MS: u64 = 1_800_000_000_000;

#[test]
fn a_redeemed_state_is_refused_until_it_expires() {
    let guard = ReplayGuard::new(8);
    assert_eq!(guard.redeem("a.b", NOW_MS + 100, NOW_MS), Ok(()));
    assert_eq!(
        guard.redeem("a.b", NOW_MS + 100, NOW_MS + 50),
        Err(StateError::Replayed)
    );
    assert_eq!(guard.redeem("a.c", NOW_MS + 100, NOW_MS + 50), Ok(()));
    // Once expired, the state itself is refused by verification; the guard forgets it.
    assert_eq!(guard.redeem("x.y", NOW_MS + 500, NOW_MS + 100), Ok(()));
    assert_eq!(guard.len(), 1, "both expired entries were dropped");
}

#[test]
fn a_full_guard_refuses_rather_than_forgets() {
    let guard = ReplayGuard::new(2);
    guard.redeem("1", NOW_MS + 1000, NOW_MS).unwrap();
    guard.redeem("2", NOW_MS + 10, NOW_MS).unwrap();
    assert_eq!(
        guard.redeem("3", NOW_MS + 1000, NOW_MS),
        Err(StateError::ReplayStoreFull)
    );
    // "2" expired: its room is reused, and "1" is still remembered.
    assert_eq!(guard.redeem("3", NOW_MS + 1000, NOW_MS + 20), Ok(()));
    assert_eq!(
        guard.redeem("1", NOW_MS + 1000, NOW_MS + 20),
        Err(StateError::Replayed)
    );
}

fn server(guard: Option<ReplayGuard>) -> Server {
    let now = Instant::now();
    let mut b = Server::builder(Implementation::new("replay", "1"))
        .tool(
            Tool::new("pay", json!({"type": "object"})).handler(|_, ctx| async move {
                let ask = InputRequest {
                    method: "elicitation/create".into(),
                    params: Some(json!({"message": "Pay?", "requestedSchema": {"type": "object"}})),
                    extra: Default::default(),
                };
                let fail = |e: PeerError| mcp_sansio::jsonrpc::ErrorObject::internal(e.to_string());
                ctx.input("confirm", ask).await.map_err(fail)?;
                Ok(CallToolResult::text("paid"))
            }),
        )
        .request_state_key(RequestStateKey::new(KEY.to_vec(), 60_000));
    if let Some(g) = guard {
        b = b.request_state_replay_guard(g);
    }
    let mut s = b.build(now);
    s.handle_wall_clock(now, NOW_MS);
    s
}

fn call(server: &mut Server, id: i64, extra: Value) -> Value {
    let mut params = json!({
        "name": "pay",
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        },
    });
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    let frame = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let now = Instant::now();
    server.handle_input(now, Bytes::from(frame.to_string()));
    let mut jobs: Vec<Job> = Vec::new();
    while let Some(job) = server.poll_job() {
        jobs.push(job);
    }
    let mut cx = Context::from_waker(Waker::noop());
    jobs.retain_mut(|j| j.as_mut().poll(&mut cx).is_pending());
    server.handle_wake(now);
    let mut buf = Vec::new();
    let mut out = None;
    while let Some(t) = server.poll_transmit(&mut buf) {
        let m: Value = serde_json::from_slice(&buf[buf.len() - t.len..]).unwrap();
        if m["id"] == id {
            out = Some(m);
        }
    }
    out.expect("a response")
}

fn retry(state: &Value) -> Value {
    json!({
        "requestState": state,
        "inputResponses": {"confirm": {"action": "accept", "content": {}}},
    })
}

#[test]
fn with_a_guard_a_state_is_redeemed_once_across_servers() {
    let guard = ReplayGuard::new(16);
    let mut first = server(Some(guard.clone()));
    let mut second = server(Some(guard));
    let round = call(&mut first, 1, json!({}));
    assert_eq!(round["result"]["resultType"], "input_required");
    let state = round["result"]["requestState"].clone();
    let done = call(&mut first, 2, retry(&state));
    assert_eq!(done["result"]["content"][0]["text"], "paid");
    // The same state again, on another machine sharing the guard: refused.
    let again = call(&mut second, 3, retry(&state));
    assert_eq!(again["error"]["code"], -32602, "{again}");
    assert_eq!(
        again["error"]["message"],
        "Invalid requestState: already used"
    );
}

#[test]
fn without_a_guard_a_state_may_be_retried() {
    let mut s = server(None);
    let round = call(&mut s, 1, json!({}));
    let state = round["result"]["requestState"].clone();
    for id in 2..4 {
        let done = call(&mut s, id, retry(&state));
        assert_eq!(done["result"]["content"][0]["text"], "paid");
    }
}
