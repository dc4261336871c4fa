//! Arbitrary HTTP-shaped input never makes the endpoint panic, and every answer is one of the
//! statuses the endpoint documents; streams always end or wait, never loop.

use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::app::server::Server;
use mcp_sansio::http::*;
use mcp_sansio::model::Implementation;
use mcp_sansio::testing::echo_server;
use proptest::prelude::*;

use crate::support::{body, known_or, read_bounded, take_answer};

fn endpoint(sessionless: bool) -> Endpoint<Server> {
    let config = EndpointConfig {
        sessionless,
        max_sessions: 4,
        replay_budget: 512,
        ..Default::default()
    };
    Endpoint::new(config, |now| {
        echo_server(Implementation::new("p", "1"), now)
    })
}

fn header_name() -> impl Strategy<Value = String> {
    known_or(
        &[
            "Accept",
            "Content-Type",
            "Mcp-Session-Id",
            "MCP-Protocol-Version",
            "Last-Event-ID",
            "Host",
            "Origin",
        ],
        "[a-zA-Z-]{1,12}",
    )
}

fn header_value() -> impl Strategy<Value = String> {
    known_or(
        &[
            "application/json, text/event-stream",
            "application/json",
            "2025-11-25",
            "2025-03-26",
            "0-1",
            "localhost:1",
            "01010101010101010101010101010101",
        ],
        ".{0,24}",
    )
}

proptest! {
    #[test]
    fn arbitrary_requests_never_panic(
        sessionless in any::<bool>(),
        steps in proptest::collection::vec(
            (0u8..4, proptest::collection::vec((header_name(), header_value()), 0..6), body("2025-11-25"), any::<u8>(), 0u64..100_000, any::<bool>()),
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
            take_answer(resp, &mut open)?;
            ep.handle_timeout(now);
            for &id in &open {
                read_bounded(|buf| ep.poll_stream(id, buf))?;
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
