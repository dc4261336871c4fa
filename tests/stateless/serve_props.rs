//! Property tests of the stateless entry of the app server: on arbitrary 2026-07-28-marked
//! requests (any method, any `inputResponses` / `requestState` / `_meta` shapes) it never
//! panics and answers every request exactly once, and a `requestState` it did not mint is
//! never accepted: such a retry is always refused with -32602.

use std::task::{Context, Waker};
use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::model::stateless::PROTOCOL_VERSION_KEY;
use mcp_sansio::model::Implementation;
use mcp_sansio::stateless::RequestStateKey;
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::json_tree::{json_tree, named};

fn server() -> Server {
    Server::builder(Implementation::new("p", "1"))
        .tool(
            Tool::new("ask", json!({"type": "object"})).handler(|_, ctx| async move {
                let a = ctx.elicit(json!({"message": "?"})).await;
                Ok(CallToolResult::text(format!("{}", a.is_ok())))
            }),
        )
        .request_state_key(RequestStateKey::new(b"prop key".to_vec(), 60_000))
        .build(Instant::now())
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-zA-Z0-9._-]{0,12}".prop_map(Value::from),
        Just(json!("2026-07-28")),
        Just(json!("accept")),
    ];
    json_tree(leaf.boxed(), named(keys()), 3, 20, 4)
}

/// The object keys of [`json_value`]'s trees.
fn keys() -> Vec<&'static str> {
    vec![
        PROTOCOL_VERSION_KEY,
        "io.modelcontextprotocol/clientCapabilities",
        "io.modelcontextprotocol/logLevel",
        "elicitation",
        "elicitation-0",
        "action",
        "content",
        "progressToken",
        "x",
    ]
}

fn method() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "tools/call",
        "tools/list",
        "server/discover",
        "resources/read",
        "prompts/get",
        "initialize",
        "ping",
        "subscriptions/listen",
        "nope",
    ])
    .prop_map(str::to_owned)
}

/// Every message the server writes for one frame.
fn exchange(server: &mut Server, frame: &Value) -> Vec<Value> {
    server.handle_input(Instant::now(), Bytes::from(frame.to_string()));
    let mut cx = Context::from_waker(Waker::noop());
    while let Some(mut job) = server.poll_job() {
        let _ = job.as_mut().poll(&mut cx);
    }
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some(t) = server.poll_transmit(&mut buf) {
        out.push(serde_json::from_slice(&buf[buf.len() - t.len..]).expect("valid JSON"));
    }
    out
}

proptest! {
    #[test]
    fn every_marked_request_gets_exactly_one_answer(
        method in method(),
        caps in json_value(),
        responses in json_value(),
        state in prop::option::of(json_value()),
        extra in json_value(),
    ) {
        let mut server = server();
        let mut params = json!({
            "name": "ask",
            "inputResponses": responses,
            "x": extra,
            "_meta": {
                PROTOCOL_VERSION_KEY: "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": caps,
            },
        });
        if let Some(state) = state {
            params["requestState"] = state;
        }
        let frame = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let out = exchange(&mut server, &frame);
        let answers: Vec<&Value> = out.iter().filter(|m| m.get("id").is_some()).collect();
        prop_assert_eq!(answers.len(), 1, "{:?}", out);
        prop_assert_eq!(&answers[0]["id"], &json!(1));
    }

    #[test]
    fn a_state_it_did_not_mint_is_refused(state in "[A-Za-z0-9_.-]{0,80}") {
        let mut server = server();
        let frame = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "ask", "requestState": state,
            "inputResponses": {"elicitation-0": {"action": "accept"}},
            "_meta": {PROTOCOL_VERSION_KEY: "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}},
        }});
        let out = exchange(&mut server, &frame);
        prop_assert_eq!(out.len(), 1);
        prop_assert_eq!(&out[0]["error"]["code"], &json!(-32602), "{:?}", out);
    }
}
