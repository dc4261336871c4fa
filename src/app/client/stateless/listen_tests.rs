//! The listen stream reader (tags, acknowledgement, closing response) and result reuse
//! (`ttlMs` against a clock passed in, invalidation by listen events) against a scripted server.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::tests::{settle, Script};
use super::*;
use crate::app::client::Client;
use crate::model::Implementation;
use crate::outgoing::Action;

fn client() -> StatelessMachine {
    let client = StatelessClient::new(&Client::builder(Implementation::new("t", "1")));
    StatelessMachine::new(client, Wire::Http, Instant::now())
}

/// A cached call of `method` with `params` at `now`, served by `script`, to its end.
fn cached(
    m: &mut StatelessMachine,
    script: &mut Script,
    now: Instant,
    method: &str,
    params: Option<Value>,
) -> Result<Value, ClientError> {
    let id = m.start_cached_call(now, method, params);
    settle(m, script, now, id)
}

fn tagged(method: &str, id: i64, mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/subscriptionId": id});
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

#[test]
fn listen_request_carries_filter_and_meta() {
    let mut client = client();
    let filter = ListenFilter {
        tools: true,
        resource_uris: vec!["file:///a".into()],
        ..Default::default()
    };
    client.start_listen(Instant::now(), &filter);
    let Some(Action::Send(request)) = client.poll_action() else {
        panic!("no listen request");
    };
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(body["method"], "subscriptions/listen");
    assert_eq!(body["id"], 1);
    assert_eq!(
        body["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]})
    );
    assert_eq!(
        body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(request.header("Mcp-Method"), Some("subscriptions/listen"));
}

#[test]
fn events_are_read_only_for_their_stream() {
    let ack = tagged(
        "notifications/subscriptions/acknowledged",
        7,
        json!({"notifications": {"toolsListChanged": true}}),
    );
    match listen_event_from_message(&ack, 7) {
        Some(ListenEvent::Acknowledged(filter)) => {
            assert_eq!(filter.tools_list_changed, Some(true));
            assert_eq!(filter.prompts_list_changed, None);
        }
        other => panic!("{other:?}"),
    }
    let change = tagged("notifications/tools/list_changed", 7, json!({}));
    assert_eq!(
        listen_event_from_message(&change, 7),
        Some(ListenEvent::ToolsListChanged)
    );
    // Another stream's, or untagged: not ours.
    assert_eq!(listen_event_from_message(&change, 8), None);
    let untagged = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
    assert_eq!(listen_event_from_message(&untagged, 7), None);
    let updated = tagged(
        "notifications/resources/updated",
        7,
        json!({"uri": "file:///a"}),
    );
    assert_eq!(
        listen_event_from_message(&updated, 7),
        Some(ListenEvent::ResourceUpdated("file:///a".into()))
    );
    let prompts = tagged("notifications/prompts/list_changed", 7, json!({}));
    assert_eq!(
        listen_event_from_message(&prompts, 7),
        Some(ListenEvent::PromptsListChanged)
    );
    // A request from the server is never a listen event; a response is only for our id.
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "x", "params": {}});
    assert_eq!(listen_event_from_message(&request, 7), None);
    let other_response = json!({"jsonrpc": "2.0", "id": 3, "result": {}});
    assert_eq!(listen_event_from_message(&other_response, 7), None);
    let closing = json!({"jsonrpc": "2.0", "id": 7, "result": {"resultType": "complete"}});
    assert_eq!(
        listen_event_from_message(&closing, 7),
        Some(ListenEvent::Closed(closing.clone()))
    );
    let cancel: Value = serde_json::from_slice(&listen_cancel_notification(7)).unwrap();
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], 7);
    assert!(cancel.get("id").is_none());
}

fn list(ttl: u64, name: &str) -> Value {
    json!({"result": {"resultType": "complete", "ttlMs": ttl, "cacheScope": "private",
        "tools": [{"name": name, "inputSchema": {"type": "object"}}]}})
}

#[test]
fn results_are_reused_until_their_ttl() {
    let mut client = client();
    let mut script = Script::new(vec![list(1000, "a"), list(1000, "b")]);
    let t0 = Instant::now();
    // The first tool's name in a cached `tools/list` at `at`.
    let first_tool = |client: &mut StatelessMachine, script: &mut Script, at: Instant| {
        cached(client, script, at, "tools/list", None).unwrap()["tools"][0]["name"].clone()
    };
    assert_eq!(first_tool(&mut client, &mut script, t0), "a");
    let almost = t0 + Duration::from_millis(999);
    assert_eq!(first_tool(&mut client, &mut script, almost), "a");
    assert_eq!(
        script.sent.len(),
        1,
        "a fresh cached result needs no request"
    );
    let at_ttl = t0 + Duration::from_millis(1000);
    assert_eq!(first_tool(&mut client, &mut script, at_ttl), "b");
    assert_eq!(script.sent.len(), 2, "at ttlMs the result is stale");
}

#[test]
fn zero_ttl_and_other_params_are_not_reused() {
    let mut client = client();
    let mut script = Script::new(vec![
        list(0, "a"),
        list(0, "b"),
        list(500, "c"),
        list(500, "d"),
    ]);
    let t0 = Instant::now();
    cached(&mut client, &mut script, t0, "tools/list", None).unwrap();
    let second = cached(&mut client, &mut script, t0, "tools/list", None).unwrap();
    assert_eq!(second["tools"][0]["name"], "b");
    let c = json!({"cursor": "c"});
    cached(&mut client, &mut script, t0, "tools/list", Some(c.clone())).unwrap();
    let d = cached(
        &mut client,
        &mut script,
        t0,
        "tools/list",
        Some(json!({"cursor": "d"})),
    )
    .unwrap();
    assert_eq!(d["tools"][0]["name"], "d");
    // Same params in another member order and with another _meta: a hit.
    let hit = cached(
        &mut client,
        &mut script,
        t0,
        "tools/list",
        Some(json!({"_meta": {"x": 1}, "cursor": "c"})),
    )
    .unwrap();
    assert_eq!(hit["tools"][0]["name"], "c");
    assert_eq!(script.sent.len(), 4);
}

#[test]
fn listen_events_make_matching_results_stale() {
    let mut client = client();
    let read = |text: &str| {
        json!({"result": {"ttlMs": 60000, "cacheScope": "public",
            "contents": [{"uri": "file:///a", "text": text}]}})
    };
    let mut script = Script::new(vec![
        list(60000, "a"),
        read("one"),
        json!({"result": {"ttlMs": 60000, "cacheScope": "public", "prompts": []}}),
        list(60000, "b"),
        read("two"),
    ]);
    let t0 = Instant::now();
    let uri = Some(json!({"uri": "file:///a"}));
    cached(&mut client, &mut script, t0, "tools/list", None).unwrap();
    cached(&mut client, &mut script, t0, "resources/read", uri.clone()).unwrap();
    cached(&mut client, &mut script, t0, "prompts/list", None).unwrap();
    assert_eq!(client.client_mut().cache_mut().len(), 3);
    // Events that match nothing cached drop nothing.
    assert_eq!(
        client
            .client_mut()
            .handle_listen_event(&ListenEvent::ResourcesListChanged),
        0
    );
    assert_eq!(
        client
            .client_mut()
            .handle_listen_event(&ListenEvent::ResourceUpdated("file:///b".into())),
        0
    );
    assert_eq!(
        client
            .client_mut()
            .handle_listen_event(&ListenEvent::ToolsListChanged),
        1
    );
    let tools = cached(&mut client, &mut script, t0, "tools/list", None).unwrap();
    assert_eq!(tools["tools"][0]["name"], "b");
    assert_eq!(
        client
            .client_mut()
            .handle_listen_event(&ListenEvent::ResourceUpdated("file:///a".into())),
        1
    );
    let text = cached(&mut client, &mut script, t0, "resources/read", uri).unwrap();
    assert_eq!(text["contents"][0]["text"], "two");
    // The prompt list stayed cached throughout.
    cached(&mut client, &mut script, t0, "prompts/list", None).unwrap();
    assert_eq!(script.sent.len(), 5);
}

#[test]
fn the_cache_is_bounded() {
    let mut cache = ResultCache::new();
    let t0 = Instant::now();
    let result = json!({"ttlMs": 1000});
    for i in 0..MAX_CACHED_RESULTS + 10 {
        let params = json!({"cursor": i});
        assert!(cache.store(t0, "tools/list", Some(&params), &result));
    }
    assert_eq!(cache.len(), MAX_CACHED_RESULTS);
    // A huge ttlMs is capped.
    cache.clear();
    cache.store(t0, "tools/list", None, &json!({"ttlMs": u64::MAX}));
    assert!(cache.get(t0 + MAX_TTL, "tools/list", None).is_none());
    assert!(!cache.store(t0, "tools/list", None, &json!({"ttlMs": "5"})));
}

#[test]
fn reader_takes_sse_in_any_chunks_and_json_at_once() {
    let ack = tagged(
        "notifications/subscriptions/acknowledged",
        4,
        json!({"notifications": {"promptsListChanged": true}}),
    );
    let change = tagged("notifications/prompts/list_changed", 4, json!({}));
    let foreign = tagged("notifications/prompts/list_changed", 5, json!({}));
    let closing = json!({"jsonrpc": "2.0", "id": 4, "result": {}});
    let mut body = Vec::new();
    for message in [&ack, &foreign, &change, &closing, &change] {
        body.extend_from_slice(format!("event: message\ndata: {message}\n\n").as_bytes());
    }
    for split in [1, 7, body.len()] {
        let mut reader = ListenReader::new(4, Some("text/event-stream; charset=utf-8"));
        for chunk in body.chunks(split) {
            reader.handle_body(chunk);
        }
        let mut events = Vec::new();
        while let Some(event) = reader.poll_event() {
            events.push(event);
        }
        assert!(matches!(events[0], ListenEvent::Acknowledged(_)), "{split}");
        assert_eq!(events[1], ListenEvent::PromptsListChanged);
        assert_eq!(events[2], ListenEvent::Closed(closing.clone()));
        assert_eq!(events.len(), 3, "nothing after the closing response");
        assert!(reader.is_closed());
        reader.handle_end();
        assert_eq!(reader.poll_event(), None);
    }
    let error = json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "x"}});
    let mut reader = ListenReader::new(4, Some("application/json"));
    reader.handle_body(error.to_string().as_bytes());
    assert_eq!(reader.poll_event(), None);
    reader.handle_end();
    assert_eq!(reader.poll_event(), Some(ListenEvent::Closed(error)));
    // A stream cut without its response still closes.
    let mut reader = ListenReader::new(4, Some("text/event-stream"));
    reader.handle_body(b"data: {\"jsonrpc\":");
    reader.handle_end();
    assert_eq!(reader.poll_event(), Some(ListenEvent::Closed(Value::Null)));
}
