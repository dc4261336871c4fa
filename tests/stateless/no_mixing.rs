//! A dual-era server never mixes eras within one conversation: inside an `initialize`d
//! session (stdio's shape) a 2026-07-28 request is refused with -32022 naming the negotiated
//! version, `subscriptions/listen` and `server/discover` do not exist, and list changes go out
//! untagged as session notifications; on HTTP a 2026-07-28 request naming a session id is
//! never served by that session.

use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::app::server::*;
use mcp_sansio::http::*;
use serde_json::{json, Value};

const V: &str = "2026-07-28";

/// The listen tests' server: its `add_tool` tool makes a tool list change.
fn server(now: Instant) -> Server {
    crate::listen::builder().build(now)
}

fn stateless(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn init(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}})
}

fn exchange(server: &mut Server, now: Instant, frame: &Value) -> Vec<Value> {
    server.handle_input(now, Bytes::from(frame.to_string()));
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some(t) = server.poll_transmit(&mut buf) {
        out.push(serde_json::from_slice(&buf[buf.len() - t.len..]).unwrap());
    }
    out
}

#[test]
fn an_initialized_session_refuses_the_2026_era() {
    let now = Instant::now();
    let mut s = server(now);
    let out = exchange(&mut s, now, &init(1));
    assert_eq!(out[0]["result"]["protocolVersion"], "2025-11-25");
    exchange(
        &mut s,
        now,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    // Marked 2026-07-28 requests: -32022 naming the negotiated version, listen included.
    for (id, method, params) in [
        (
            2,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        ),
        (3, "server/discover", json!({})),
        (4, "tools/list", json!({})),
    ] {
        let out = exchange(&mut s, now, &stateless(id, method, params));
        assert_eq!(out.len(), 1, "{method}: {out:?}");
        assert_eq!(out[0]["error"]["code"], -32022, "{method}");
        assert_eq!(out[0]["error"]["data"]["supported"], json!(["2025-11-25"]));
    }
    // Unmarked, the 2026-only methods do not exist in a 2025-11-25 session.
    for (id, method) in [(5, "subscriptions/listen"), (6, "server/discover")] {
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}});
        let out = exchange(&mut s, now, &frame);
        assert_eq!(out[0]["error"]["code"], -32601, "{method}: {out:?}");
    }
    assert_eq!(s.listen_stream_count(), 0);
    // A change inside the session: the session's own untagged notification, nothing more.
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "add_tool", "arguments": {}}});
    let out = exchange(&mut s, now, &call);
    let changed: Vec<&Value> = out
        .iter()
        .filter(|m| m["method"] == "notifications/tools/list_changed")
        .collect();
    assert_eq!(changed.len(), 1, "{out:?}");
    assert!(changed[0]["params"]["_meta"]
        .get("io.modelcontextprotocol/subscriptionId")
        .is_none());
    let result = out.iter().find(|m| m["id"] == 7).unwrap();
    assert!(
        result["result"].get("resultType").is_none(),
        "no 2026 members in a session"
    );
    assert_eq!(
        s.poll_listen_change(),
        None,
        "a stateful session hands out no listen events"
    );
}

#[test]
fn a_2026_connection_refuses_initialize_and_removed_methods() {
    let now = Instant::now();
    let mut s = server(now);
    let out = exchange(
        &mut s,
        now,
        &stateless(1, "subscriptions/listen", json!({"notifications": {}})),
    );
    assert_eq!(out[0]["method"], "notifications/subscriptions/acknowledged");
    let out = exchange(&mut s, now, &init(2));
    assert_eq!(out[0]["error"]["code"], -32022);
    for (id, method) in [
        (3, "resources/subscribe"),
        (4, "ping"),
        (5, "logging/setLevel"),
    ] {
        let out = exchange(
            &mut s,
            now,
            &stateless(id, method, json!({"uri": "test://x"})),
        );
        assert_eq!(out[0]["error"]["code"], -32601, "{method}");
        assert_eq!(
            s.stateless_status(&mcp_sansio::jsonrpc::RequestId::number(id)),
            Some(404)
        );
    }
}

#[test]
fn http_session_ids_are_never_accepted_on_2026_requests() {
    let now = Instant::now();
    let mut ep = Endpoint::new(EndpointConfig::default(), server);
    let head = |version: &str, method: &str| {
        HttpRequestHead::new(HttpMethod::Post, "/mcp")
            .header("Host", "localhost:3000")
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", version)
            .header("Mcp-Method", method)
    };
    let resp = ep.handle_request(
        now,
        &HttpRequestHead::new(HttpMethod::Post, "/mcp")
            .header("Host", "localhost:3000")
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json"),
        Bytes::from(init(1).to_string()),
        [3; 16],
    );
    let sid = resp.get("mcp-session-id").expect("a session").to_owned();
    let sessions = ep.session_count();
    for (version, id) in [(V, 2), ("2025-11-25", 3)] {
        let body = stateless(id, "tools/list", json!({}));
        let h = head(version, "tools/list").header("Mcp-Session-Id", sid.clone());
        let resp = ep.handle_request(now, &h, Bytes::from(body.to_string()), [4; 16]);
        let text = match &resp.body {
            Body::Full(b) => String::from_utf8_lossy(b).into_owned(),
            Body::Stream(conn) => {
                let mut bytes = Vec::new();
                while let Some(chunk) = ep.poll_stream(*conn, &mut bytes) {
                    if chunk == StreamChunk::End {
                        break;
                    }
                }
                String::from_utf8_lossy(&bytes).into_owned()
            }
            Body::Empty => String::new(),
        };
        if version == V {
            // The header says 2026-07-28 but a session is named: not a stateless exchange,
            // and the session does not speak 2026-07-28.
            assert_eq!(resp.status, 400, "{text}");
        } else {
            // Inside the 2025-11-25 session, the 2026-07-28 `_meta` is refused (-32022).
            assert!(text.contains("-32022"), "{text}");
        }
        assert!(!text.contains("\"result\""), "{version}: {text}");
        assert_eq!(
            ep.session_count(),
            sessions,
            "no exchange machine left behind"
        );
    }
}
