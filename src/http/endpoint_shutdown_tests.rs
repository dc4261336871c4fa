//! Graceful shutdown: the requests still being handled are answered `-32603` with their ids
//! on their streams, which then end; streams with nothing pending just end; a handler that
//! finishes later adds no second answer; requests arriving later get 503.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Instant;

use serde_json::{json, Value};

use crate::app::server::{CallToolResult, Server, Tool};
use crate::http::sse_transport::SseTransportEndpoint;
use crate::http::{Body, EndpointConfig, HttpMethod, HttpRequestHead, StreamChunk};
use crate::model::Implementation;
use crate::testing::HttpRig;

/// A tool whose handler finishes only once `open` is set.
fn gated(open: &Arc<AtomicBool>) -> Tool {
    let open = open.clone();
    Tool::new("gated", json!({"type": "object"})).handler(move |_call, _ctx| {
        let open = open.clone();
        async move {
            std::future::poll_fn(|_| match open.load(Ordering::SeqCst) {
                true => Poll::Ready(()),
                false => Poll::Pending,
            })
            .await;
            Ok(CallToolResult::text("done"))
        }
    })
}

fn server(open: &Arc<AtomicBool>, now: Instant) -> Server {
    Server::builder(Implementation::new("shutdown", "1"))
        .tool(gated(open))
        .build(now)
}

fn rig(open: &Arc<AtomicBool>) -> HttpRig {
    let open = open.clone();
    HttpRig::new(
        EndpointConfig::default(),
        move |now| server(&open, now),
        Instant::now(),
    )
}

fn call(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "gated", "arguments": {}}})
}

/// Asserts `messages` are exactly one shutdown error per id of `ids`, in that order.
fn assert_shutdown_errors(messages: &[Value], ids: &[u64]) {
    assert_eq!(messages.len(), ids.len(), "{messages:?}");
    for (message, id) in messages.iter().zip(ids) {
        assert_eq!(message["id"], *id, "{message}");
        assert_eq!(message["error"]["code"], -32603, "{message}");
        let text = message["error"]["message"].as_str().unwrap_or_default();
        assert!(text.contains("shutting down"), "{text}");
    }
}

#[test]
fn open_requests_get_one_error_each_and_their_stream_ends() {
    let open = Arc::new(AtomicBool::new(false));
    let mut rig = rig(&open);
    // 2025-03-26: the one revision with batches, so one stream waits for two requests.
    let sid = rig.open("2025-03-26");
    let stream = rig.post(Some(&sid), &json!([call(1), call(2)]));
    assert_eq!(stream.status, 200);
    let get = rig.get(&sid, None);
    assert_eq!(get.status, 200);
    rig.run_jobs();
    let before = rig.read_stream(&stream.body);
    assert!(before.messages().is_empty() && !before.ended);

    assert_eq!(rig.endpoint.begin_shutdown(rig.now), 2);
    // The handlers finish after the shutdown: their answers must not follow the errors.
    open.store(true, Ordering::SeqCst);
    rig.run_jobs();
    let after = rig.read_stream(&stream.body);
    assert_shutdown_errors(&after.messages(), &[1, 2]);
    assert!(after.ended, "the stream ends once answered");
    let get = rig.read_stream(&get.body);
    assert!(get.messages().is_empty(), "{:?}", get.events);
    assert!(get.ended, "a GET stream just ends");
    assert_eq!(rig.endpoint.dropped_messages(&sid), Some(2), "late answers");

    let refused = rig.post(Some(&sid), &call(3));
    assert_eq!(refused.status, 503);
    let Body::Full(body) = &refused.body else {
        panic!("a JSON-RPC error body");
    };
    let error: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(error["id"], json!(3), "{error}");
}

#[test]
fn a_stateless_exchange_in_flight_gets_its_error() {
    let open = Arc::new(AtomicBool::new(false));
    let mut rig = rig(&open);
    let mut request = call(9);
    request["params"]["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let stream = rig.post_stateless(&request);
    assert_eq!(stream.status, 200, "{}", stream.body_text());
    assert!(matches!(stream.body, Body::Stream(_)));

    assert_eq!(rig.endpoint.begin_shutdown(rig.now), 1);
    open.store(true, Ordering::SeqCst);
    rig.run_jobs();
    let read = rig.read_stream(&stream.body);
    assert_shutdown_errors(&read.messages(), &[9]);
    assert!(read.ended);
    assert_eq!(rig.endpoint.exchange_count(), 0);
}

/// Everything a HTTP+SSE stream has now, as its `message` events' JSON.
fn pull_sse(ep: &mut SseTransportEndpoint<Server>, body: &Body) -> (Vec<Value>, bool) {
    let Body::Stream(id) = body else {
        panic!("not a stream")
    };
    let mut bytes = Vec::new();
    let mut ended = false;
    for _ in 0..1000 {
        match ep.poll_stream(*id, &mut bytes) {
            Some(StreamChunk::Data { .. }) => {}
            Some(StreamChunk::End) => {
                ended = true;
                break;
            }
            None => break,
        }
    }
    let text = String::from_utf8(bytes).expect("UTF-8");
    let messages = text
        .split("\n\n")
        .filter(|event| event.contains("event: message"))
        .filter_map(|event| event.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|data| serde_json::from_str(data).expect("JSON"))
        .collect();
    (messages, ended)
}

#[test]
fn an_http_sse_session_gets_its_errors_on_its_stream() {
    let open = Arc::new(AtomicBool::new(false));
    let gate = open.clone();
    let now = Instant::now();
    let mut ep = SseTransportEndpoint::new(EndpointConfig::default(), "/messages", move |now| {
        server(&gate, now)
    });
    let get = HttpRequestHead::new(HttpMethod::Get, "/sse").header("Host", "localhost:3000");
    let stream = ep.handle_request(now, &get, Default::default(), [7; 16]);
    assert_eq!(stream.status, 200);
    let sid = "07".repeat(16);
    let post = |ep: &mut SseTransportEndpoint<Server>, body: Value| {
        let head = HttpRequestHead::new(HttpMethod::Post, format!("/messages?sessionId={sid}"))
            .header("Host", "localhost:3000")
            .header("Content-Type", "application/json");
        ep.handle_request(now, &head, body.to_string().into(), [0; 16])
            .status
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    assert_eq!(post(&mut ep, init), 202);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(&mut ep, initialized), 202);
    assert_eq!(post(&mut ep, call(4)), 202);
    assert_eq!(post(&mut ep, call(5)), 202);
    let mut jobs = crate::testing::Jobs::new();
    while let Some(job) = ep.poll_job() {
        jobs.push(job);
    }
    jobs.run();
    let (before, _) = pull_sse(&mut ep, &stream.body);
    assert_eq!(before.len(), 1, "the initialize result only: {before:?}");

    assert_eq!(ep.begin_shutdown(now), 2);
    open.store(true, Ordering::SeqCst);
    jobs.run();
    let (after, ended) = pull_sse(&mut ep, &stream.body);
    assert_shutdown_errors(&after, &[4, 5]);
    assert!(ended);
}
