//! The sans-IO Streamable HTTP client transport (`mcp_sansio::http::HttpClient`) driving the
//! app `Client` against the core `Endpoint` in memory, on a virtual clock: round trips, SSE
//! responses, server-to-client requests on a POST stream, resumption after a drop (no loss, no
//! duplicate), 404 -> re-initialize, 405 on GET, DELETE on close.

use crate::client_rig as rig;

use std::future::Future;
use std::time::Duration;

use mcp_sansio::app::client::{ClientError, ClientEvent};
use mcp_sansio::http::client::TRANSPORT_ERROR;
use mcp_sansio::http::sse_transport::TransportCloseReason;
use mcp_sansio::http::*;
use mcp_sansio::model::ContentBlock;
use rig::Net;
use serde_json::json;

fn text_of(result: &mcp_sansio::model::CallToolResult) -> String {
    match result.content.first() {
        Some(ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

/// A client and an endpoint of `config`, initialized on 2025-11-25.
fn ready(config: EndpointConfig) -> Net {
    let mut net = Net::new(config);
    let h = net.client.handle();
    let init = net.run(h.initialize()).expect("initialize");
    assert_eq!(init.protocol_version.as_str(), "2025-11-25");
    net
}

#[test]
fn a_full_round_trip_sends_the_right_headers() {
    let mut net = ready(EndpointConfig::default());
    let h = net.client.handle();
    let tools = net.run(h.list_all_tools()).unwrap();
    assert_eq!(tools.len(), 4);
    let result = net.run(h.call_tool("echo", json!({"x": 1}))).unwrap();
    assert_eq!(text_of(&result), r#"{"x":1}"#);

    let sid = net.transport.session_id().expect("session id").to_owned();
    assert_eq!(net.ep.session_count(), 1);
    let posts = net.sent_with(HttpMethod::Post);
    // initialize carries neither session id nor version; everything after carries both.
    assert_eq!(posts[0].header("Mcp-Session-Id"), None);
    assert_eq!(posts[0].header("MCP-Protocol-Version"), None);
    for post in &posts {
        assert_eq!(
            post.header("Accept"),
            Some("application/json, text/event-stream")
        );
        assert_eq!(post.header("Content-Type"), Some("application/json"));
    }
    for post in &posts[1..] {
        assert_eq!(post.header("Mcp-Session-Id"), Some(sid.as_str()));
        assert_eq!(post.header("MCP-Protocol-Version"), Some("2025-11-25"));
    }
    // The standalone stream opens after `initialized` was accepted, exactly once.
    let gets = net.sent_with(HttpMethod::Get);
    assert_eq!(gets.len(), 1);
    assert_eq!(gets[0].header("Accept"), Some("text/event-stream"));
    assert_eq!(gets[0].header("Last-Event-ID"), None);
    let initialized_at = net
        .sent
        .iter()
        .position(|(_, r)| {
            std::str::from_utf8(&r.body)
                .unwrap()
                .contains("notifications/initialized")
        })
        .unwrap();
    let get_at = net
        .sent
        .iter()
        .position(|(_, r)| r.method == HttpMethod::Get)
        .unwrap();
    assert!(get_at > initialized_at);
}

#[test]
fn an_sse_response_delivers_the_log_before_the_result() {
    let mut net = ready(EndpointConfig::default());
    let h = net.client.handle();
    let result = net.run(h.call_tool("chatty", json!({}))).unwrap();
    assert_eq!(text_of(&result), "done");
    let logs: Vec<_> = net
        .client_events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Log(l) => Some(l.data.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(logs, vec![json!("working")]);
}

#[test]
fn a_server_request_on_the_post_stream_is_answered_by_a_new_post() {
    let mut net = ready(EndpointConfig::default());
    let h = net.client.handle();
    let result = net.run(h.call_tool("ask", json!({}))).unwrap();
    let text = text_of(&result);
    assert!(text.contains("accept") && text.contains("Ada"), "{text}");
    let answer = net
        .sent_with(HttpMethod::Post)
        .into_iter()
        .find(|r| std::str::from_utf8(&r.body).unwrap().contains("\"result\""))
        .expect("the elicitation answer was POSTed");
    assert!(answer.header("Mcp-Session-Id").is_some());
}

/// Calls `wait`, lets it log, breaks its stream with `cut`, finishes the handler, and checks
/// the result arrives once by a GET resumption after the server's `retry`.
fn resume_after(cut: impl FnOnce(&mut Net, ExchangeId)) {
    let mut net = ready(EndpointConfig::default());
    let h = net.client.handle();
    let mut call = Box::pin(h.call_tool("wait", json!({})));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(call.as_mut().poll(&mut cx).is_pending());
    net.step();
    let stream = net.stream_of("\"wait\"");
    cut(&mut net, stream);
    let cut_at = net.now;
    net.open_gates();
    assert!(call.as_mut().poll(&mut cx).is_pending());
    // Nothing before the retry delay (the endpoint's default: 1000 ms).
    net.advance(Duration::from_millis(999));
    assert!(net
        .sent_with(HttpMethod::Get)
        .iter()
        .all(|g| g.header("Last-Event-ID").is_none()));
    net.advance(Duration::from_millis(1));
    let result = net.run(call).unwrap();
    assert_eq!(text_of(&result), "finished");
    let resumes: Vec<_> = net
        .sent
        .iter()
        .filter(|(_, r)| r.header("Last-Event-ID").is_some())
        .collect();
    assert_eq!(resumes.len(), 1);
    assert_eq!(resumes[0].0 - cut_at, Duration::from_millis(1000));
    // No loss, no duplicate: one log, one result, nothing unknown or late.
    let logs = net
        .client_events
        .iter()
        .filter(|e| matches!(e, ClientEvent::Log(_)))
        .count();
    assert_eq!(logs, 1);
    let stats = net.client.session().stats();
    assert_eq!(stats.unknown_responses_dropped, 0);
    assert_eq!(stats.late_responses_dropped, 0);
    assert_eq!(net.transport.stats().resumes, 1);
    assert_eq!(net.transport.stats().requests_failed, 0);
}

#[test]
fn a_dropped_connection_is_resumed_with_last_event_id() {
    resume_after(|net, stream| net.break_stream(stream));
}

#[test]
fn a_server_closed_stream_is_resumed_with_last_event_id() {
    resume_after(|net, stream| {
        let (_, sid) = *net.open.iter().find(|(x, _)| *x == stream).unwrap();
        assert!(net.ep.close_stream(sid));
        net.step();
        assert!(net.open.iter().all(|(x, _)| *x != stream));
    });
}

#[test]
fn a_404_ends_pending_calls_once_and_reinitializes() {
    let mut net = ready(EndpointConfig::default());
    let old = net.transport.session_id().unwrap().to_owned();
    // The server forgets the session (as after a restart or expiry).
    let head =
        HttpRequestHead::new(HttpMethod::Delete, "/mcp").header("Mcp-Session-Id", old.as_str());
    assert_eq!(
        net.ep
            .handle_request(net.now, &head, Default::default(), [9; 16])
            .status,
        200
    );
    net.step();
    let h = net.client.handle();
    let error = net.run(h.call_tool("echo", json!({}))).unwrap_err();
    assert!(
        matches!(&error, ClientError::Rpc(e) if e.code == TRANSPORT_ERROR),
        "{error:?}"
    );
    assert!(net
        .transport_events
        .contains(&TransportEvent::SessionExpired));
    let new = net
        .transport
        .session_id()
        .expect("a new session")
        .to_owned();
    assert_ne!(new, old);
    assert!(net.transport_events.iter().any(
        |e| matches!(e, TransportEvent::Reinitialized { session_id } if session_id.as_deref() == Some(new.as_str()))
    ));
    // Calls flow again on the new session, with its id.
    let result = net
        .run(h.call_tool("echo", json!({"again": true})))
        .unwrap();
    assert_eq!(text_of(&result), r#"{"again":true}"#);
    let last = net.sent_with(HttpMethod::Post).into_iter().last().unwrap();
    assert_eq!(last.header("Mcp-Session-Id"), Some(new.as_str()));
    assert_eq!(net.transport.stats().sessions_expired, 1);
    assert_eq!(net.client.session().stats().unknown_responses_dropped, 0);
}

#[test]
fn a_405_on_get_is_tolerated() {
    let mut net = ready(EndpointConfig {
        allow_get: false,
        ..EndpointConfig::default()
    });
    assert!(net
        .transport_events
        .contains(&TransportEvent::StandaloneStreamUnavailable { status: Some(405) }));
    net.advance(Duration::from_secs(60));
    assert_eq!(
        net.sent_with(HttpMethod::Get).len(),
        1,
        "no retry after 405"
    );
    let h = net.client.handle();
    assert!(net.run(h.call_tool("echo", json!({}))).is_ok());
}

#[test]
fn close_sends_delete_and_the_server_drops_the_session() {
    let mut net = ready(EndpointConfig::default());
    let sid = net.transport.session_id().unwrap().to_owned();
    assert_eq!(net.ep.session_count(), 1);
    let now = net.now;
    net.client.close(now);
    net.transport.close(now);
    net.step();
    let deletes = net.sent_with(HttpMethod::Delete);
    assert_eq!(deletes.len(), 1);
    assert_eq!(deletes[0].header("Mcp-Session-Id"), Some(sid.as_str()));
    assert_eq!(net.ep.session_count(), 0);
    assert!(net.transport.is_closed());
    assert_eq!(
        net.transport_events.last(),
        Some(&TransportEvent::Closed(TransportCloseReason::Local))
    );
    assert!(net.open.is_empty(), "the standalone stream was aborted");
}

#[test]
fn sessionless_json_servers_work_without_session_or_get() {
    let mut net = ready(EndpointConfig {
        sessionless: true,
        ..EndpointConfig::default()
    });
    assert_eq!(net.transport.session_id(), None);
    let h = net.client.handle();
    assert!(net.run(h.call_tool("echo", json!({}))).is_ok());
    assert!(net.sent_with(HttpMethod::Get).is_empty());
}
