//! The client state machine driven by hand-written server frames (no server, no executor).

use std::future::Future;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use bytes::Bytes;
use serde_json::{json, Value};

use mcp_sansio::app::client::{Client, ClientError, ClientEvent};
use mcp_sansio::model::{Implementation, ProtocolVersion, Root};

pub(crate) fn poll<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
    std::pin::Pin::new(f).poll(&mut Context::from_waker(Waker::noop()))
}

fn sent(client: &mut Client) -> Vec<Value> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while client.poll_transmit(&mut buf).is_some() {
        out.push(serde_json::from_slice(&buf).unwrap());
        buf.clear();
    }
    out
}

/// A client with roots, handshaken with a fake server speaking 2025-06-18.
fn ready_client(now: Instant) -> Client {
    let mut client = Client::builder(Implementation::new("c", "1"))
        .roots(vec![])
        .build(now);
    let handle = client.handle();
    let mut init = Box::pin(async move { handle.initialize().await });
    assert!(poll(&mut init).is_pending());
    let request = sent(&mut client).remove(0);
    let response = json!({"jsonrpc": "2.0", "id": request["id"], "result": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"}}});
    client.handle_input(now, Bytes::from(response.to_string()));
    let Poll::Ready(Ok(result)) = poll(&mut init) else {
        panic!("handshake failed");
    };
    assert_eq!(result.protocol_version, "2025-06-18");
    assert_eq!(
        client.session().protocol_version(),
        Some(ProtocolVersion::V2025_06_18)
    );
    let initialized = sent(&mut client);
    assert_eq!(initialized[0]["method"], "notifications/initialized");
    client
}

#[test]
fn unknown_server_requests_are_method_not_found() {
    let now = Instant::now();
    let mut client = ready_client(now);
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "foo/bar"});
    client.handle_input(now, Bytes::from(request.to_string()));
    let reply = sent(&mut client).remove(0);
    assert_eq!(reply["id"], 7);
    assert_eq!(
        reply["error"]["code"],
        mcp_sansio::jsonrpc::code::METHOD_NOT_FOUND
    );
}

#[test]
fn roots_are_answered_inline_and_changes_notified_once_ready() {
    let now = Instant::now();
    let mut client = Client::builder(Implementation::new("c", "1"))
        .roots(vec![])
        .build(now);
    client.set_roots(vec![]);
    assert!(
        sent(&mut client).is_empty(),
        "notified before initialization"
    );
    let mut client = ready_client(now);
    let root: Root = serde_json::from_value(json!({"uri": "file:///a"})).unwrap();
    client.handle().set_roots(vec![root]);
    let notes = sent(&mut client);
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0]["method"], "notifications/roots/list_changed");
    let request = json!({"jsonrpc": "2.0", "id": "r", "method": "roots/list"});
    client.handle_input(now, Bytes::from(request.to_string()));
    let reply = sent(&mut client).remove(0);
    assert_eq!(reply["result"], json!({"roots": [{"uri": "file:///a"}]}));
    assert!(client.poll_job().is_none());
}

#[test]
fn server_notifications_become_events() {
    let now = Instant::now();
    let mut client = ready_client(now);
    let _ = client.poll_event();
    for (method, params) in [
        ("notifications/tools/list_changed", Value::Null),
        ("notifications/prompts/list_changed", Value::Null),
        ("notifications/resources/list_changed", Value::Null),
        ("notifications/resources/updated", json!({"uri": "x://1"})),
        ("notifications/message", json!({"level": "info", "data": 1})),
        (
            "notifications/elicitation/complete",
            json!({"elicitationId": "e"}),
        ),
    ] {
        let mut note = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            note["params"] = params;
        }
        client.handle_input(now, Bytes::from(note.to_string()));
    }
    let events: Vec<_> = std::iter::from_fn(|| client.poll_event()).collect();
    assert_eq!(events[0], ClientEvent::ToolsListChanged);
    assert_eq!(events[1], ClientEvent::PromptsListChanged);
    assert_eq!(events[2], ClientEvent::ResourcesListChanged);
    assert_eq!(
        events[3],
        ClientEvent::ResourceUpdated {
            uri: "x://1".into()
        }
    );
    assert!(matches!(&events[4], ClientEvent::Log(l) if l.data == json!(1)));
    assert!(
        matches!(&events[5], ClientEvent::Notification { method, params }
            if method == "notifications/elicitation/complete" && params["elicitationId"] == "e"),
        "{events:?}"
    );
    assert_eq!(events.len(), 6);
}

#[test]
fn a_second_initialize_is_refused() {
    let now = Instant::now();
    let mut client = ready_client(now);
    let handle = client.handle();
    let mut again = Box::pin(async move { handle.initialize().await });
    assert!(poll(&mut again).is_pending());
    assert!(sent(&mut client).is_empty());
    assert!(matches!(
        poll(&mut again),
        Poll::Ready(Err(ClientError::NotSent(_)))
    ));
}

#[test]
fn handle_wake_starts_deadlines_at_the_given_time() {
    use std::time::Duration;
    let t0 = Instant::now();
    let mut client = ready_client(t0);
    let handle = client.handle();
    let mut call = Box::pin(async move {
        let options = mcp_sansio::app::client::CallOptions {
            timeout: Some(Duration::from_secs(5)),
            ..Default::default()
        };
        handle.request_raw("ping", None, options).await
    });
    assert!(poll(&mut call).is_pending());
    client.handle_wake(t0 + Duration::from_secs(100));
    assert_eq!(sent(&mut client)[0]["method"], "ping");
    client.handle_timeout(t0 + Duration::from_secs(104));
    assert!(poll(&mut call).is_pending(), "timed out from a stale time");
    client.handle_timeout(t0 + Duration::from_secs(105));
    assert!(matches!(
        poll(&mut call),
        Poll::Ready(Err(ClientError::TimedOut))
    ));
}
