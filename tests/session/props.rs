//! Property tests over generated operation sequences through a `SessionPair`, asserting docs/fuzzing.md
//! invariants 1 (every request ends exactly once), 2 (exact-id matching by direction),
//! 3 (per-stream order), 6 (no panic on any input) and 7 (gating holds), and that everything
//! either session writes validates against the negotiated version's schema.
//!
//! Cases: 48 by default (fast `cargo test`); set `SESSION_PROPTEST_CASES` to raise it.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::common::*;
use mcp_sansio::jsonrpc::{RawJson, RequestId};
use mcp_sansio::model::ProtocolVersion;
use mcp_sansio::session::{Event, RequestOptions};
use mcp_sansio::testing::{Direction, Fault, SessionPair};
use mcp_sansio::Config;
use proptest::prelude::*;
use serde_json::Value;

const CLIENT_CAPS: &str = r#"{"roots":{"listChanged":true},"sampling":{}}"#;
const SERVER_CAPS: &str = r#"{"tools":{"listChanged":true},"resources":{},"logging":{}}"#;

const CLIENT_METHODS: &[&str] = &[
    "ping",
    "tools/list",
    "tools/call",
    "vendor/echo",
    "prompts/get",
    "resources/subscribe",
];
const SERVER_METHODS: &[&str] = &[
    "ping",
    "roots/list",
    "sampling/createMessage",
    "elicitation/create",
];
const CLIENT_NOTES: &[&str] = &[
    "notifications/roots/list_changed",
    "vendor/note",
    "notifications/tools/list_changed",
];
const SERVER_NOTES: &[&str] = &[
    "notifications/tools/list_changed",
    "notifications/message",
    "notifications/prompts/list_changed",
];

#[derive(Clone, Debug)]
enum Op {
    ClientRequest {
        method: usize,
        progress: bool,
        timeout_ms: Option<u64>,
    },
    ServerRequest {
        method: usize,
    },
    ClientNotify(usize),
    ServerNotify(usize),
    ClientCancel(usize),
    ServerCancel(usize),
    ServerRespond {
        pick: usize,
        error: bool,
    },
    ClientRespond {
        pick: usize,
    },
    ServerProgress(usize),
    Advance(u64),
    Garbage {
        to_server: bool,
        kind: u8,
        pick: usize,
    },
    Faults(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..CLIENT_METHODS.len(), any::<bool>(), proptest::option::of(1u64..3000))
            .prop_map(|(method, progress, timeout_ms)| Op::ClientRequest { method, progress, timeout_ms }),
        2 => (0..SERVER_METHODS.len()).prop_map(|method| Op::ServerRequest { method }),
        1 => (0..CLIENT_NOTES.len()).prop_map(Op::ClientNotify),
        1 => (0..SERVER_NOTES.len()).prop_map(Op::ServerNotify),
        1 => any::<usize>().prop_map(Op::ClientCancel),
        1 => any::<usize>().prop_map(Op::ServerCancel),
        4 => (any::<usize>(), any::<bool>()).prop_map(|(pick, error)| Op::ServerRespond { pick, error }),
        2 => any::<usize>().prop_map(|pick| Op::ClientRespond { pick }),
        2 => any::<usize>().prop_map(Op::ServerProgress),
        2 => (0u64..4000).prop_map(Op::Advance),
        2 => (any::<bool>(), 0u8..8, any::<usize>()).prop_map(|(to_server, kind, pick)| Op::Garbage { to_server, kind, pick }),
        1 => (0u8..5).prop_map(Op::Faults),
    ]
}

/// What one side's application has seen, for the invariants.
#[derive(Default)]
struct Ledger {
    sent: Vec<RequestId>,
    completed: HashMap<RequestId, usize>,
    progress_after_completion: Vec<RequestId>,
    open_inbound: Vec<RequestId>,
}

impl Ledger {
    fn absorb(
        &mut self,
        events: &mut std::collections::VecDeque<Event>,
        own_ids_are_strings: bool,
        allowed: &dyn Fn(&str) -> bool,
    ) {
        for e in events.drain(..) {
            match e {
                Event::Completed { id, .. } => {
                    assert_eq!(
                        id.is_string(),
                        own_ids_are_strings,
                        "completion for a peer-direction id {id}"
                    );
                    assert!(
                        self.sent.contains(&id),
                        "completion for an id never sent: {id}"
                    );
                    *self.completed.entry(id).or_default() += 1;
                }
                Event::Progress { id, .. } if self.completed.contains_key(&id) => {
                    self.progress_after_completion.push(id);
                }
                Event::Request { id, method, .. } => {
                    assert!(allowed(&method), "gating let {method} through");
                    self.open_inbound.push(id);
                }
                Event::Cancelled { id, .. } => self.open_inbound.retain(|x| *x != id),
                _ => {}
            }
        }
    }
}

fn pick<T: Clone>(items: &[T], n: usize) -> Option<T> {
    (!items.is_empty()).then(|| items[n % items.len()].clone())
}

fn run(version: ProtocolVersion, ops: Vec<Op>) {
    let now = Instant::now();
    let mut pair = SessionPair::new(
        Config::default(),
        client_setup(version, CLIENT_CAPS),
        Config {
            max_inflight_inbound: 4,
            ..Config::default()
        },
        server_setup(SERVER_CAPS),
        now,
    );
    pair.set_recording(true);
    assert_eq!(pair.connect(), Some(version));
    let mut client = Ledger::default();
    let mut server = Ledger::default();
    // Duplicated frames replay requests the server already answered: a second instance of the
    // same id may then legitimately get progress after the first instance's response.
    let mut replays = false;
    let server_allows = |m: &str| {
        !matches!(
            m,
            "prompts/get" | "resources/subscribe" | "sampling/createMessage" | "roots/list"
        )
    };
    let client_allows = |m: &str| matches!(m, "roots/list" | "sampling/createMessage");
    for op in ops {
        let t = pair.now();
        match op {
            Op::ClientRequest {
                method,
                progress,
                timeout_ms,
            } => {
                let o = RequestOptions {
                    progress,
                    timeout: timeout_ms.map(Duration::from_millis),
                    related_to: None,
                };
                let params = RawJson::from_text(r#"{"name":"x"}"#).unwrap();
                if let Ok(id) = pair
                    .client
                    .send_request(t, CLIENT_METHODS[method], Some(params), o)
                {
                    client.sent.push(id);
                }
            }
            Op::ServerRequest { method } => {
                if let Ok(id) = pair.server.send_request(
                    t,
                    SERVER_METHODS[method],
                    None,
                    RequestOptions::default(),
                ) {
                    server.sent.push(id);
                }
            }
            Op::ClientNotify(n) => {
                let _ = pair.client.notify(CLIENT_NOTES[n], None);
            }
            Op::ServerNotify(n) => {
                let params = RawJson::from_text(r#"{"level":"info","data":"x"}"#).unwrap();
                let _ = pair.server.notify(SERVER_NOTES[n], Some(params));
            }
            Op::ClientCancel(n) => {
                if let Some(id) = pick(&client.sent, n) {
                    let _ = pair.client.cancel(t, &id, None);
                }
            }
            Op::ServerCancel(n) => {
                if let Some(id) = pick(&server.sent, n) {
                    let _ = pair.server.cancel(t, &id, Some("why".into()));
                }
            }
            Op::ServerRespond { pick: n, error } => {
                if let Some(id) = pick(&server.open_inbound, n) {
                    server.open_inbound.retain(|x| *x != id);
                    let _ = if error {
                        pair.server.respond_error(
                            &id,
                            mcp_sansio::jsonrpc::ErrorObject::invalid_params("no"),
                        )
                    } else {
                        pair.server.respond(
                            &id,
                            RawJson::from_text(r#"{"content":[],"tools":[]}"#).unwrap(),
                        )
                    };
                }
            }
            Op::ClientRespond { pick: n } => {
                if let Some(id) = pick(&client.open_inbound, n) {
                    client.open_inbound.retain(|x| *x != id);
                    let result = r#"{"roots":[],"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}"#;
                    let _ = pair
                        .client
                        .respond(&id, RawJson::from_text(result).unwrap());
                }
            }
            Op::ServerProgress(n) => {
                if let Some(id) = pick(&server.open_inbound, n) {
                    let _ = pair
                        .server
                        .notify_progress(&id, n as f64 % 100.0, None, None);
                }
            }
            Op::Advance(ms) => pair.advance(Duration::from_millis(ms)),
            Op::Garbage {
                to_server,
                kind,
                pick: n,
            } => {
                let dir = if to_server {
                    Direction::ToServer
                } else {
                    Direction::ToClient
                };
                let own = if to_server {
                    &server.sent
                } else {
                    &client.sent
                };
                let frame = garbage(kind, n, own);
                pair.inject(dir, frame.into_bytes());
            }
            Op::Faults(mode) => match mode {
                0 => pair.clear_fault_hook(),
                1 => {
                    replays = true;
                    pair.set_fault_hook(|_, _| Fault::Duplicate)
                }
                2 => pair.set_fault_hook(|_, _| Fault::Delay(Duration::from_millis(700))),
                3 => pair.set_fault_hook(|_, f| {
                    if f.len() % 3 == 0 {
                        Fault::Drop
                    } else {
                        Fault::Deliver
                    }
                }),
                // Corruption: cut some frames in half.
                _ => pair.set_fault_hook(|_, f| {
                    if f.len() % 4 == 0 {
                        Fault::Replace(f[..f.len() / 2].to_vec())
                    } else {
                        Fault::Deliver
                    }
                }),
            },
        }
        pair.drive();
        client.absorb(&mut pair.client_events, false, &client_allows);
        server.absorb(&mut pair.server_events, true, &server_allows);
    }
    // Let every deadline pass: each request must have ended by then.
    pair.clear_fault_hook();
    pair.advance(Duration::from_secs(3600));
    client.absorb(&mut pair.client_events, false, &client_allows);
    server.absorb(&mut pair.server_events, true, &server_allows);

    for (side, ledger) in [("client", &client), ("server", &server)] {
        let unique: HashSet<_> = ledger.sent.iter().collect();
        assert_eq!(unique.len(), ledger.sent.len(), "{side}: ids reused");
        for id in &ledger.sent {
            assert_eq!(
                ledger.completed.get(id),
                Some(&1),
                "{side}: request {id} did not end exactly once"
            );
        }
        assert!(
            ledger.progress_after_completion.is_empty(),
            "{side}: progress after completion"
        );
    }
    assert_eq!(pair.client.pending_outbound(), 0);
    assert_eq!(pair.server.pending_outbound(), 0);
    if !replays {
        check_order(&pair);
    }
    assert_transcript_valid(&pair);
}

/// Peer misbehaviour: garbage lines, unknown ids, responses to notifications, wrong-type ids,
/// duplicate ids, undeclared methods.
fn garbage(kind: u8, n: usize, own: &[RequestId]) -> String {
    let id = pick(own, n).map(|id| serde_json::to_string(&id).unwrap());
    match kind {
        0 => "not json at all".into(),
        1 => format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, 900_000 + n % 1000),
        // A response to a notification: no such id was ever sent.
        2 => r#"{"jsonrpc":"2.0","id":"notifications/progress","result":{}}"#.into(),
        // The right number as a string, or the right string as a number.
        3 => match id {
            Some(text) if text.starts_with('"') => format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, text.trim_matches('"').trim_start_matches("s-")),
            Some(text) => format!(r#"{{"jsonrpc":"2.0","id":"{text}","result":{{}}}}"#),
            None => "[]".into(),
        },
        4 => r#"{"jsonrpc":"2.0","id":77,"method":"prompts/get","params":{"name":"p"}}"#.into(),
        5 => r#"[{"jsonrpc":"2.0","id":78,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]"#.into(),
        6 => r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":0,"progress":1}}"#.into(),
        // Forged requests reuse a few ids among themselves (duplicate ids while in flight).
        _ => format!(r#"{{"jsonrpc":"2.0","id":"forged-{}","method":"tools/list"}}"#, n % 3),
    }
}

/// Invariant 3: on each stream, progress for a request leaves before its response.
fn check_order(pair: &SessionPair) {
    let frames: Vec<(Direction, Value)> = pair
        .transcript()
        .iter()
        .map(|(d, f)| (*d, serde_json::from_slice(f).unwrap()))
        .collect();
    for (i, (dir, f)) in frames.iter().enumerate() {
        if f["method"] != "notifications/progress" {
            continue;
        }
        let token = &f["params"]["progressToken"];
        let answered_before = frames[..i].iter().any(|(d, g)| {
            d == dir && g.get("method").is_none() && &g["id"] == token && g.get("result").is_some()
        });
        // Tokens are the client's own request ids (a number), answered once by the server.
        assert!(!answered_before, "progress for {token} after its response");
    }
}

fn cases() -> u32 {
    std::env::var("SESSION_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn generated_sequences_keep_the_session_invariants(
        version in prop::sample::select(ProtocolVersion::STATEFUL.to_vec()),
        ops in prop::collection::vec(op(), 1..40),
    ) {
        run(version, ops);
    }
}
