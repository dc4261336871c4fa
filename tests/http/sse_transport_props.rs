//! Arbitrary input never makes the HTTP+SSE side panic: HTTP-shaped requests into the `Router`
//! (both transports) answer only documented statuses and streams never produce without
//! bound; arbitrary response heads and bytes into the client transports keep every queue
//! within its limit.

use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::app::server::Server;
use mcp_sansio::http::sse_transport::*;
use mcp_sansio::http::*;
use mcp_sansio::model::Implementation;
use mcp_sansio::outgoing::ExchangeId;
use mcp_sansio::session::TransmitKind;
use mcp_sansio::testing::echo_server;
use proptest::prelude::*;

use crate::support::{body, known_or, read_bounded, take_answer};

fn app(now: Instant) -> Server {
    echo_server(Implementation::new("p", "1"), now)
}

fn path() -> impl Strategy<Value = String> {
    known_or(
        &["/sse", "/messages", "/messages?sessionId=", "KNOWN", "/mcp"],
        "/[a-z?=&#%]{0,16}",
    )
}

fn header() -> impl Strategy<Value = (String, String)> {
    let name = known_or(
        &[
            "Accept",
            "Content-Type",
            "MCP-Protocol-Version",
            "Host",
            "Origin",
        ],
        "[a-zA-Z-]{1,12}",
    );
    let value = known_or(
        &[
            "text/event-stream",
            "application/json",
            "2024-11-05",
            "localhost:1",
        ],
        ".{0,24}",
    );
    (name, value)
}

proptest! {
    #[test]
    fn arbitrary_requests_never_panic(
        steps in proptest::collection::vec(
            (0u8..4, path(), proptest::collection::vec(header(), 0..4), body("2024-11-05"), any::<u8>(), 0u64..100_000, any::<bool>()),
            1..24,
        ),
    ) {
        let start = Instant::now();
        let config = EndpointConfig { max_sessions: 3, max_body: 256, ..Default::default() };
        let mut router = Router::new(config, RouterPaths::default(), app);
        let mut open = Vec::new();
        let mut known: Option<String> = None;
        for (method, path, mut headers, body, seed, ms, json_ct) in steps {
            if json_ct {
                headers.insert(0, ("Content-Type".into(), "application/json".into()));
            }
            let path = match (&path[..], &known) {
                ("KNOWN", Some(uri)) => uri.clone(),
                ("KNOWN", None) => "/messages?sessionId=00".into(),
                _ => path,
            };
            let now = start + Duration::from_millis(ms);
            let method = [HttpMethod::Post, HttpMethod::Get, HttpMethod::Delete, HttpMethod::Other][method as usize];
            let headers = headers.into_iter().map(|(n, v)| (n.into(), v.into())).collect();
            let head = HttpRequestHead { method, path, headers, peer: Peer::default() };
            let resp = router.handle_request(now, &head, Bytes::from(body), [seed; 16]);
            take_answer(resp, &mut open)?;
            router.handle_timeout(now);
            for &id in &open {
                let buf = read_bounded(|buf| router.poll_stream(id, buf))?;
                let text = String::from_utf8_lossy(&buf);
                if let Some(rest) = text.strip_prefix("event: endpoint\ndata: ") {
                    known = rest.lines().next().map(str::to_string);
                }
            }
            if seed % 5 == 0 {
                if let Some(id) = open.pop() {
                    router.stream_closed(id);
                }
            }
        }
    }

    #[test]
    fn arbitrary_responses_never_panic_the_client_transports(
        inputs in proptest::collection::vec(
            (0u8..5, 0u64..4, any::<u16>(), proptest::collection::vec(any::<u8>(), 0..48), 0u64..20_000),
            1..32,
        ),
        prefix in prop_oneof![Just(b"event: endpoint\ndata: /m?s=1\n\n".to_vec()), Just(Vec::new())],
    ) {
        let start = Instant::now();
        let config = HttpClientConfig { max_pending_frames: 8, max_inbound_frames: 8, max_event_size: 64, ..Default::default() };
        let mut sse_transport = SseTransportClient::new("http://127.0.0.1:1/sse", config.clone(), start, 1).unwrap();
        let mut auto = AutoClient::new("http://127.0.0.1:1/mcp", config).unwrap();
        let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
        auto.handle_transmit(start, Bytes::from_static(init), TransmitKind::Request);
        sse_transport.handle_response_head(start, ExchangeId(1), 200, []);
        sse_transport.handle_response_body(start, ExchangeId(1), Bytes::from(prefix));
        for (op, key, status, data, ms) in inputs {
            let now = start + Duration::from_millis(ms);
            let key = ExchangeId(key);
            match op {
                0 => {
                    sse_transport.handle_response_head(now, key, status, []);
                    auto.handle_response_head(now, key, status % 600, []);
                }
                1 => {
                    sse_transport.handle_response_body(now, key, Bytes::from(data.clone()));
                    auto.handle_response_body(now, key, Bytes::from(data));
                }
                2 => {
                    sse_transport.handle_response_end(now, key);
                    auto.handle_response_end(now, key);
                }
                3 => {
                    let kind = [TransmitKind::Request, TransmitKind::Notification][usize::from(status % 2)];
                    sse_transport.handle_transmit(now, Bytes::from(data.clone()), kind);
                    auto.handle_transmit(now, Bytes::from(data), kind);
                }
                _ => {
                    sse_transport.handle_timeout(now);
                    auto.handle_timeout(now);
                }
            }
            let mut n = 0;
            while sse_transport.poll_frame().is_some() || auto.poll_frame().is_some() {
                n += 1;
                prop_assert!(n <= 32, "inbound queues stay bounded");
            }
            let mut n = 0;
            while sse_transport.poll_action().is_some() || auto.poll_action().is_some() {
                n += 1;
                prop_assert!(n <= 32, "action queues stay bounded");
            }
            while sse_transport.poll_event().is_some() || auto.poll_event().is_some() {}
        }
    }
}
