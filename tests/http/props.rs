//! Arbitrary HTTP-shaped input never makes the endpoint panic, and every answer is one of the
//! statuses the endpoint documents; streams always end or wait, never loop.

use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::http::*;
use mcp_sansio::model::Implementation;
use proptest::prelude::*;
use serde_json::json;

fn endpoint(sessionless: bool) -> Endpoint<Server> {
    let config = EndpointConfig {
        sessionless,
        max_sessions: 4,
        replay_budget: 512,
        ..Default::default()
    };
    Endpoint::new(config, |now| {
        Server::builder(Implementation::new("p", "1"))
            .tool(
                Tool::new("echo", json!({"type":"object"}))
                    .sync_handler(|_, _| Ok(CallToolResult::text("e"))),
            )
            .build(now)
    })
}

fn header_name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("Accept".to_string()),
        Just("Content-Type".to_string()),
        Just("Mcp-Session-Id".to_string()),
        Just("MCP-Protocol-Version".to_string()),
        Just("Last-Event-ID".to_string()),
        Just("Host".to_string()),
        Just("Origin".to_string()),
        "[a-zA-Z-]{1,12}",
    ]
}

fn header_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("application/json, text/event-stream".to_string()),
        Just("application/json".to_string()),
        Just("2025-11-25".to_string()),
        Just("2025-03-26".to_string()),
        Just("0-1".to_string()),
        Just("localhost:1".to_string()),
        Just("01010101010101010101010101010101".to_string()),
        ".{0,24}",
    ]
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#.to_vec()),
        Just(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec()),
        Just(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#.to_vec()),
        Just(br#"[{"jsonrpc":"2.0","id":2,"method":"ping"}]"#.to_vec()),
        proptest::collection::vec(any::<u8>(), 0..64),
    ]
}

proptest! {
    #[test]
    fn arbitrary_requests_never_panic(
        sessionless in any::<bool>(),
        steps in proptest::collection::vec(
            (0u8..4, proptest::collection::vec((header_name(), header_value()), 0..6), body(), any::<u8>(), 0u64..100_000, any::<bool>()),
            1..24,
        ),
    ) {
        let start = Instant::now();
        let mut ep = endpoint(sessionless);
        let mut open = Vec::new();
        let mut statuses = std::collections::BTreeSet::new();
        let mut session: Option<String> = None;
        for (method, mut headers, body, seed, ms, well_formed) in steps {
            if well_formed {
                // Mostly-valid requests reach deep paths (sessions, streams, replay).
                headers.insert(0, ("Accept".into(), "application/json, text/event-stream".into()));
                headers.insert(0, ("Content-Type".into(), "application/json".into()));
                if let Some(sid) = &session {
                    headers.insert(0, ("Mcp-Session-Id".into(), sid.clone()));
                }
            }
            let now = start + Duration::from_millis(ms);
            let method = [HttpMethod::Post, HttpMethod::Get, HttpMethod::Delete, HttpMethod::Other][method as usize];
            let headers = headers.into_iter().map(|(n, v)| (n.into(), v.into())).collect();
            let head = HttpRequestHead {
                method,
                path: "/mcp".into(),
                headers,
                peer: Peer::default(),
            };
            let resp = ep.handle_request(now, &head, Bytes::from(body), [seed; 16]);
            statuses.insert(resp.status);
            if let Some(sid) = resp.get("mcp-session-id") {
                session = Some(sid.to_string());
            }
            prop_assert!([200, 202, 400, 403, 404, 405, 406, 409, 413, 415, 503].contains(&resp.status), "{}", resp.status);
            if let Body::Stream(id) = resp.body {
                open.push(id);
            }
            ep.handle_timeout(now);
            for &id in &open {
                let mut buf = Vec::new();
                let mut n = 0;
                while let Some(StreamChunk::Data { .. }) = ep.poll_stream(id, &mut buf) {
                    n += 1;
                    prop_assert!(n < 10_000, "a stream must not produce without bound");
                }
            }
            if seed % 5 == 0 {
                if let Some(id) = open.pop() {
                    ep.stream_closed(id);
                }
            }
        }
        if std::env::var_os("HTTP_PROPS_SHOW").is_some() {
            eprintln!("statuses reached: {statuses:?}");
        }
    }
}
