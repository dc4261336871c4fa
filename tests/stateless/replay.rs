//! Single use of `requestState` (2026-07-28): the `ReplayGuard` set on its own (replay,
//! expiry, capacity) and in a server, where a second retry with the same state is refused
//! with -32602 while a server without a guard accepts it; one guard shared by two servers
//! (two HTTP exchange machines) refuses a replay across them.

use std::task::{Context, Waker};
use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::app::server::*;
use mcp_sansio::model::stateless::InputRequest;
use mcp_sansio::model::Implementation;
use mcp_sansio::runtime::Job;
use mcp_sansio::stateless::{ReplayGuard, RequestStateKey, StateError};
use serde_json::{json, Value};

const KEY: &[u8] = b"replay-test-key-replay-test-key!";
const NOW_MS: u64 = 1_800_000_000_000;

#[test]
fn a_redeemed_state_is_refused_until_it_expires() {
    let guard = ReplayGuard::new(8);
    assert_eq!(guard.redeem(b"a.b", NOW_MS + 100, NOW_MS), Ok(()));
    assert_eq!(
        guard.redeem(b"a.b", NOW_MS + 100, NOW_MS + 50),
        Err(StateError::Replayed)
    );
    assert_eq!(guard.redeem(b"a.c", NOW_MS + 100, NOW_MS + 50), Ok(()));
    // Once expired, the state itself is refused by verification; the guard forgets it.
    assert_eq!(guard.redeem(b"x.y", NOW_MS + 500, NOW_MS + 100), Ok(()));
    assert_eq!(guard.len(), 1, "both expired entries were dropped");
}

#[test]
fn a_full_guard_refuses_rather_than_forgets() {
    let guard = ReplayGuard::new(2);
    guard.redeem(b"1", NOW_MS + 1000, NOW_MS).unwrap();
    guard.redeem(b"2", NOW_MS + 10, NOW_MS).unwrap();
    assert_eq!(
        guard.redeem(b"3", NOW_MS + 1000, NOW_MS),
        Err(StateError::ReplayStoreFull)
    );
    // "2" expired: its room is reused, and "1" is still remembered.
    assert_eq!(guard.redeem(b"3", NOW_MS + 1000, NOW_MS + 20), Ok(()));
    assert_eq!(
        guard.redeem(b"1", NOW_MS + 1000, NOW_MS + 20),
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

/// The other spellings of a base64url symbol that ends a 32-byte tag: 43 symbols carry 258
/// bits, so the last one's 2 low bits are unused. A lenient decoder reads all four as the
/// same tag.
fn last_symbol_spellings(token: &str) -> Vec<String> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let last = *token.as_bytes().last().unwrap();
    let index = ALPHABET.iter().position(|&c| c == last).unwrap();
    (0..4)
        .map(|low| {
            let symbol = ALPHABET[(index & !3) | low] as char;
            format!("{}{symbol}", &token[..token.len() - 1])
        })
        .collect()
}

#[test]
fn the_four_spellings_of_one_state_redeem_once() {
    let guard = ReplayGuard::new(16);
    let mut s = server(Some(guard));
    let round = call(&mut s, 1, json!({}));
    let state = round["result"]["requestState"].as_str().unwrap().to_owned();
    let spellings = last_symbol_spellings(&state);
    assert_eq!(spellings.len(), 4);
    assert!(
        spellings.contains(&state),
        "the canonical one is among them"
    );
    let mut paid = 0;
    for (n, spelling) in spellings.iter().enumerate() {
        let id = 10 + i64::try_from(n).unwrap();
        let answer = call(&mut s, id, retry(&json!(spelling)));
        if answer["result"]["content"][0]["text"] == "paid" {
            paid += 1;
        } else {
            assert_eq!(answer["error"]["code"], -32602, "{answer}");
            // The canonical spelling after its redemption is a replay; the others never
            // decode.
            let want = if *spelling == state {
                "Invalid requestState: already used"
            } else {
                "Invalid requestState: malformed"
            };
            assert_eq!(answer["error"]["message"], want, "{spelling}");
        }
    }
    assert_eq!(paid, 1);
}

#[test]
fn a_non_canonical_state_is_refused_as_malformed_even_unredeemed() {
    let key = RequestStateKey::new(KEY.to_vec(), 60_000);
    let binding = "b";
    let token = key.mint(binding, &serde_json::Map::new(), NOW_MS).unwrap();
    let verified = key.verify_expiring(&token, binding, NOW_MS).unwrap();
    for spelling in last_symbol_spellings(&token) {
        let got = key.verify_expiring(&spelling, binding, NOW_MS);
        if spelling == token {
            assert_eq!(got.unwrap().mac, verified.mac);
        } else {
            assert_eq!(got.unwrap_err(), StateError::Malformed, "{spelling}");
        }
    }
    // Padding, the standard alphabet's symbols, and a length of 1 mod 4 are refused too.
    let (body, tag) = token.split_once('.').unwrap();
    let padded = format!("{body}.{tag}=");
    let standard = format!("{body}.{}", tag.replace('-', "+").replace('_', "/"));
    let stray = format!("{body}.{tag}AA");
    for bad in [padded, stray] {
        assert_eq!(
            key.verify_expiring(&bad, binding, NOW_MS).unwrap_err(),
            StateError::Malformed,
            "{bad}"
        );
    }
    if standard != token {
        assert_eq!(
            key.verify_expiring(&standard, binding, NOW_MS).unwrap_err(),
            StateError::Malformed
        );
    }
}

/// A 2026-07-28 `tools/call` of `pay` retried with `state`.
fn http_retry(state: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "pay", "arguments": {}, "requestState": state,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}})
}

fn claim_of(
    rig: &mcp_sansio::testing::HttpRig,
    body: &Value,
    now_ms: u64,
) -> Option<mcp_sansio::http::StateClaim> {
    let head = mcp_sansio::testing::HttpRig::stateless_head(body, None);
    let bytes = Bytes::from(body.to_string());
    rig.endpoint.request_state_claim(&head, &bytes, now_ms)
}

#[test]
fn instances_sharing_a_guard_name_a_state_claim_for_the_store() {
    use mcp_sansio::http::EndpointConfig;
    use mcp_sansio::testing::HttpRig;
    let config = |shared: bool, instance: Option<&str>| EndpointConfig {
        shared_state_guard: shared,
        instance_id: instance.map(str::to_owned),
        ..EndpointConfig::default()
    };
    let rig = |c| HttpRig::new(c, |_| server(None), Instant::now());
    let (a, b) = (rig(config(true, Some("a"))), rig(config(true, Some("b"))));
    let key = RequestStateKey::new(KEY.to_vec(), 60_000);
    let state = key.mint("any", &Default::default(), NOW_MS).unwrap();
    let other = key.mint("other", &Default::default(), NOW_MS).unwrap();

    let claim = claim_of(&a, &http_retry(&state), NOW_MS + 1_000).expect("a claim");
    assert!(claim.token.starts_with("state.") && claim.token.len() == 6 + 64);
    assert_eq!(
        claim.ttl,
        std::time::Duration::from_secs(59),
        "until the state expires"
    );
    // Every instance names the same state the same way, and another state otherwise.
    let on_b = claim_of(&b, &http_retry(&state), NOW_MS + 2_000).unwrap();
    assert_eq!(on_b.token, claim.token);
    assert_ne!(
        claim_of(&a, &http_retry(&other), NOW_MS).unwrap().token,
        claim.token
    );
    // The refusal when another instance claimed it first: 400, -32602, the request's id.
    let refusal = claim.refusal();
    assert_eq!(refusal.status, 400);
    let body: Value = serde_json::from_str(refusal.body_text()).unwrap();
    assert_eq!(
        (body["id"].clone(), body["error"]["code"].clone()),
        (json!(9), json!(-32602))
    );

    // Nothing to claim: an expired or malformed state, no state, or no shared guard.
    assert_eq!(claim_of(&a, &http_retry(&state), NOW_MS + 60_000), None);
    assert_eq!(claim_of(&a, &http_retry("not-a-state"), NOW_MS), None);
    let mut plain = http_retry(&state);
    plain["params"]
        .as_object_mut()
        .unwrap()
        .remove("requestState");
    assert_eq!(claim_of(&a, &plain, NOW_MS), None);
    for alone in [config(false, Some("a")), config(true, None)] {
        assert_eq!(claim_of(&rig(alone), &http_retry(&state), NOW_MS), None);
    }
}
