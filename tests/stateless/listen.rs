//! `subscriptions/listen` (2026-07-28): the acknowledgement first, the agreed filter, list
//! changes and resource updates delivered only to the streams that asked for them (tagged with
//! the subscription id), cancellation, the closing result and the limits; in memory on one
//! connection (stdio's shape) and on the HTTP endpoint, where the change is made by one
//! exchange's machine and delivered on another's listen stream.

use std::time::Instant;

use mcp_sansio::app::server::*;
use mcp_sansio::http::*;
use mcp_sansio::model::Implementation;
use mcp_sansio::stateless::ListenChange;
use mcp_sansio::testing::{HttpRig, ServerRig};
use serde_json::{json, Value};

const V: &str = "2026-07-28";
const SUB: &str = "io.modelcontextprotocol/subscriptionId";

pub(crate) fn builder() -> ServerBuilder {
    let schema = json!({"type": "object"});
    Server::builder(Implementation::new("listen-test", "1"))
        .tool(
            Tool::new("add_tool", schema.clone()).sync_handler(|_, ctx| {
                ctx.server()
                    .add_tool(
                        Tool::new("added", json!({"type": "object"}))
                            .sync_handler(|_, _| Ok(CallToolResult::text("added"))),
                    )
                    .unwrap();
                Ok(CallToolResult::text("tool added"))
            }),
        )
        .tool(
            Tool::new("add_prompt", schema.clone()).sync_handler(|_, ctx| {
                ctx.server().add_prompt(
                    Prompt::new("added").sync_handler(|_, _| Ok(GetPromptResult::user_text("x"))),
                );
                Ok(CallToolResult::text("prompt added"))
            }),
        )
        .tool(Tool::new("touch", schema).sync_handler(|call, ctx| {
            let uri = call.arguments["uri"].as_str().unwrap_or("").to_owned();
            ctx.server().notify_resource_updated(uri);
            Ok(CallToolResult::text("touched"))
        }))
        .resource(
            Resource::new("test://a", "a")
                .sync_handler(|r, _| Ok(vec![ResourceContents::text(r.uri, "A")])),
        )
}

fn request(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn listen(id: i64, filter: Value) -> Value {
    request(id, "subscriptions/listen", json!({"notifications": filter}))
}

fn call(id: i64, tool: &str, arguments: Value) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
}

/// One connection (stdio's shape): every message comes out of the same `poll_transmit`.
fn new_pipe(b: ServerBuilder) -> ServerRig {
    ServerRig::new(b, Instant::now())
}

fn methods_for(out: &[Value], id: i64) -> Vec<String> {
    out.iter()
        .filter(|m| m["params"]["_meta"][SUB] == json!(id))
        .map(|m| m["method"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn the_acknowledgement_comes_first_with_the_agreed_filter() {
    let mut pipe = new_pipe(builder());
    let out = pipe.send(&listen(
        7,
        json!({"toolsListChanged": true, "promptsListChanged": true,
               "resourceSubscriptions": ["test://a"], "future": true}),
    ));
    assert_eq!(out.len(), 1, "{out:?}");
    let ack = &out[0];
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUB], 7);
    // No prompt is registered: promptsListChanged is not agreed; unknown kinds are dropped.
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://a"]})
    );
    assert_eq!(pipe.server.listen_stream_count(), 1);
}

#[test]
fn changes_reach_only_the_streams_that_asked() {
    let b =
        builder().prompt(Prompt::new("p").sync_handler(|_, _| Ok(GetPromptResult::user_text("p"))));
    let mut pipe = new_pipe(b);
    pipe.send(&listen(1, json!({"toolsListChanged": true})));
    pipe.send(&listen(2, json!({"promptsListChanged": true})));
    pipe.send(&listen(3, json!({"resourceSubscriptions": ["test://a"]})));

    let out = pipe.send(&call(10, "add_tool", json!({})));
    assert_eq!(methods_for(&out, 1), ["notifications/tools/list_changed"]);
    assert!(methods_for(&out, 2).is_empty(), "{out:?}");
    assert!(methods_for(&out, 3).is_empty(), "{out:?}");
    assert!(out.iter().any(|m| m["id"] == 10), "the call is answered");

    let out = pipe.send(&call(11, "add_prompt", json!({})));
    assert_eq!(methods_for(&out, 2), ["notifications/prompts/list_changed"]);
    assert!(methods_for(&out, 1).is_empty());

    let out = pipe.send(&call(12, "touch", json!({"uri": "test://a"})));
    assert_eq!(methods_for(&out, 3), ["notifications/resources/updated"]);
    let updated = out
        .iter()
        .find(|m| m["method"] == "notifications/resources/updated")
        .unwrap();
    assert_eq!(updated["params"]["uri"], "test://a");
    let out = pipe.send(&call(13, "touch", json!({"uri": "test://other"})));
    assert!(methods_for(&out, 3).is_empty(), "not subscribed: {out:?}");
    // Nothing list-changed ever goes out untagged.
    assert!(out.iter().all(|m| m.get("method").is_none()));
}

#[test]
fn a_cancelled_stream_gets_nothing_more_and_close_ends_the_others() {
    let mut pipe = new_pipe(builder());
    pipe.send(&listen(1, json!({"toolsListChanged": true})));
    pipe.send(&listen(2, json!({"toolsListChanged": true})));
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 1}});
    assert!(pipe.send(&cancel).is_empty());
    let out = pipe.send(&call(10, "add_tool", json!({})));
    assert!(methods_for(&out, 1).is_empty());
    assert_eq!(methods_for(&out, 2), ["notifications/tools/list_changed"]);

    let now = pipe.now;
    pipe.server.close(now);
    let out = pipe.settle();
    let closing = out.iter().find(|m| m["id"] == 2).expect("closing result");
    assert_eq!(closing["result"]["resultType"], "complete");
    assert_eq!(closing["result"]["_meta"][SUB], 2);
    assert!(
        out.iter().all(|m| m["id"] != 1),
        "a cancelled listen gets no result"
    );
}

#[test]
fn limits_and_malformed_filters_are_refused() {
    let mut pipe = new_pipe(builder().max_listeners(1));
    pipe.send(&listen(1, json!({"toolsListChanged": true})));
    let out = pipe.send(&listen(2, json!({"toolsListChanged": true})));
    assert_eq!(out[0]["id"], 2);
    assert_eq!(out[0]["error"]["code"], -32603);
    let out = pipe.send(&listen(3, json!({"toolsListChanged": "yes"})));
    assert_eq!(out[0]["error"]["code"], -32602);
    let uris: Vec<String> = (0..=MAX_RESOURCE_SUBSCRIPTIONS)
        .map(|i| format!("test://{i}"))
        .collect();
    let out = pipe.send(&listen(4, json!({"resourceSubscriptions": uris})));
    assert_eq!(out[0]["error"]["code"], -32602);
    // A URI past 4 KiB is refused too (what a stream holds is bounded by more than the frame).
    let long = format!("test://{}", "a".repeat(4096));
    let out = pipe.send(&listen(
        6,
        json!({"resourceSubscriptions": ["test://a", long]}),
    ));
    assert_eq!(out[0]["id"], 6);
    assert_eq!(out[0]["error"]["code"], -32602);
    let message = out[0]["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("4096 bytes"), "{message}");
    // The same id as the open stream is a duplicate.
    let out = pipe.send(&listen(1, json!({})));
    assert_eq!(out[0]["error"]["code"], -32600);
    // A server that holds no listen stream does not have the method (and declares nothing).
    let mut pipe = new_pipe(builder().max_listeners(0));
    let out = pipe.send(&listen(5, json!({"toolsListChanged": true})));
    assert_eq!(out[0]["error"]["code"], -32601);
    assert_eq!(
        pipe.server
            .stateless_status(&mcp_sansio::jsonrpc::RequestId::number(5)),
        Some(404)
    );
}

/// The default config with at most `max` listen streams.
fn capped(max: usize) -> EndpointConfig {
    EndpointConfig {
        max_listen_streams: max,
        ..EndpointConfig::default()
    }
}

fn http(config: EndpointConfig) -> HttpRig {
    HttpRig::new(config, |now| builder().build(now), Instant::now())
}

/// What stream `resp` has now, without waiting for its end.
fn pending(http: &mut HttpRig, resp: &HttpResponse) -> (Vec<Value>, bool) {
    let read = http.read_stream(&resp.body);
    (read.messages(), read.ended)
}

/// The one message pending on `resp` is `tools/list_changed` for subscription 1.
fn assert_tools_changed(http: &mut HttpRig, resp: &HttpResponse) {
    let (msgs, _) = pending(http, resp);
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0]["method"], "notifications/tools/list_changed");
    assert_eq!(msgs[0]["params"]["_meta"][SUB], 1);
}

/// Nothing is pending on `resp`, and its stream is open.
fn assert_quiet(http: &mut HttpRig, resp: &HttpResponse) {
    let (msgs, ended) = pending(http, resp);
    assert!(msgs.is_empty() && !ended, "{msgs:?}");
}

#[test]
fn over_http_a_change_in_one_exchange_reaches_the_listen_streams_of_others() {
    let mut http = http(EndpointConfig::default());
    let tools = http.post_stateless(&listen(1, json!({"toolsListChanged": true})));
    assert_eq!(tools.status, 200);
    assert_eq!(tools.get("content-type"), Some("text/event-stream"));
    let prompts = http.post_stateless(&listen(2, json!({"promptsListChanged": true})));
    let (first, ended) = pending(&mut http, &tools);
    assert!(!ended, "the listen stream stays open");
    assert_eq!(first.len(), 1);
    assert_eq!(
        first[0]["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(first[0]["params"]["_meta"][SUB], 1);
    pending(&mut http, &prompts);

    let resp = http.post_stateless(&call(5, "add_tool", json!({})));
    assert_eq!(resp.status, 200, "the trigger is answered on its own");
    assert_tools_changed(&mut http, &tools);
    assert_quiet(&mut http, &prompts);

    // The client closing a listen stream ends it: its machine goes away.
    let Body::Stream(id) = tools.body else {
        unreachable!()
    };
    let before = http.endpoint.exchange_count();
    assert_eq!(
        http.endpoint.session_count(),
        0,
        "listen streams are exchanges, not sessions"
    );
    http.endpoint.stream_closed(id);
    assert_eq!(http.endpoint.exchange_count(), before - 1);
}

/// A 2026-07-28 listen POST from `peer`, its jobs then run.
fn listen_from(http: &mut HttpRig, peer: [u8; 4], id: i64) -> HttpResponse {
    let body = listen(id, json!({"toolsListChanged": true}));
    let mut head = HttpRig::stateless_head(&body, None);
    head.peer.addr = Some(std::net::IpAddr::from(peer));
    let resp = http.request(&head, body.to_string());
    http.run_jobs();
    resp
}

#[test]
fn over_http_one_peer_cannot_take_every_listen_slot() {
    let config = capped(4);
    let mut http = http(config);
    let (greedy, other) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let mut held: Vec<HttpResponse> = (1..=4)
        .map(|id| listen_from(&mut http, greedy, id))
        .collect();
    for resp in &held {
        assert_eq!(resp.status, 200);
        let (ack, ended) = pending(&mut http, resp);
        assert!(ack.len() == 1 && !ended, "{ack:?}");
    }
    // Another peer is served at the cap: the greedy peer's oldest stream ends for it, with
    // the closing listen result, so a well-behaved client reopens.
    let served = listen_from(&mut http, other, 5);
    assert_eq!(served.status, 200, "{}", served.body_text());
    let (ack, _) = pending(&mut http, &served);
    assert_eq!(ack[0]["method"], "notifications/subscriptions/acknowledged");
    let (closing, ended) = pending(&mut http, &held[0]);
    assert!(ended, "the evicted stream ends");
    assert_eq!(closing.len(), 1, "{closing:?}");
    assert_eq!(closing[0]["id"], 1);
    assert_eq!(closing[0]["result"]["resultType"], "complete");
    assert_eq!(closing[0]["result"]["_meta"][SUB], 1);
    // The greedy peer asking again ends one of its own, never the other peer's.
    let again = listen_from(&mut http, greedy, 6);
    assert_eq!(again.status, 200);
    pending(&mut http, &again);
    let (closing, ended) = pending(&mut http, &held[1]);
    assert!(ended && closing[0]["id"] == 2, "{closing:?}");
    let (nothing, ended) = pending(&mut http, &served);
    assert!(nothing.is_empty() && !ended, "{nothing:?}");
    for resp in &held[2..] {
        let (nothing, ended) = pending(&mut http, resp);
        assert!(nothing.is_empty() && !ended, "{nothing:?}");
    }
    assert_eq!(http.endpoint.stats().listen_streams_evicted, 2);
    // Changes still reach every open stream, the new ones included.
    held.push(again);
    http.endpoint
        .announce_listen_change(&ListenChange::ToolsListChanged);
    for resp in held[2..].iter().chain([&served]) {
        let (change, _) = pending(&mut http, resp);
        assert_eq!(change.len(), 1, "{change:?}");
        assert_eq!(change[0]["method"], "notifications/tools/list_changed");
    }
}

#[test]
fn over_http_listen_streams_can_be_turned_off_and_a_refused_listen_holds_nothing() {
    let config = capped(0);
    let mut http = http(config);
    let refused = http.post_stateless(&listen(1, json!({"toolsListChanged": true})));
    assert_eq!(refused.status, 503);
    let body: Value = serde_json::from_str(refused.body_text()).unwrap();
    assert_eq!(body["id"], 1);
    let config = capped(1);
    let mut http = self::http(config);
    let first = http.post_stateless(&listen(2, json!({"toolsListChanged": true})));
    assert_eq!(first.status, 200);
    // A refused listen (bad filter) ends nothing.
    let bad = http.post_stateless(&listen(3, json!({"toolsListChanged": 1})));
    assert_eq!(bad.status, 400);
    let (ack, ended) = pending(&mut http, &first);
    assert!(ack.len() == 1 && !ended, "{ack:?}");
    assert_eq!(http.endpoint.stats().listen_streams_evicted, 0);
}

#[test]
fn over_http_an_announcement_from_outside_any_exchange_reaches_the_streams_that_asked() {
    let mut http = http(EndpointConfig::default());
    assert_eq!(
        http.endpoint
            .announce_listen_change(&ListenChange::ToolsListChanged),
        0,
        "no stream open yet"
    );
    let tools = http.post_stateless(&listen(1, json!({"toolsListChanged": true})));
    let resources = http.post_stateless(&listen(2, json!({"resourceSubscriptions": ["test://a"]})));
    pending(&mut http, &tools);
    pending(&mut http, &resources);

    assert_eq!(
        http.endpoint
            .announce_listen_change(&ListenChange::ToolsListChanged),
        2
    );
    assert_tools_changed(&mut http, &tools);
    assert_quiet(&mut http, &resources);

    let touched = ListenChange::ResourceUpdated {
        uri: "test://a".into(),
    };
    http.endpoint.announce_listen_change(&touched);
    let (resource_msgs, _) = pending(&mut http, &resources);
    assert_eq!(resource_msgs.len(), 1, "{resource_msgs:?}");
    assert_eq!(
        resource_msgs[0]["method"],
        "notifications/resources/updated"
    );
    assert_eq!(resource_msgs[0]["params"]["_meta"][SUB], 2);
    assert_eq!(resource_msgs[0]["params"]["uri"], "test://a");
    let (tool_msgs, _) = pending(&mut http, &tools);
    assert!(tool_msgs.is_empty(), "{tool_msgs:?}");

    // A closed stream is offered nothing more.
    let Body::Stream(id) = tools.body else {
        unreachable!()
    };
    http.endpoint.stream_closed(id);
    assert_eq!(
        http.endpoint
            .announce_listen_change(&ListenChange::ToolsListChanged),
        1
    );
}

#[test]
fn with_an_instance_id_the_changes_of_exchanges_are_handed_out_for_other_instances() {
    let named = |name: &str| EndpointConfig {
        instance_id: Some(name.to_owned()),
        ..EndpointConfig::default()
    };
    let (mut a, mut b) = (http(named("a")), http(named("b")));
    let tools = a.post_stateless(&listen(1, json!({"toolsListChanged": true})));
    pending(&mut a, &tools);
    assert_eq!(
        a.endpoint.poll_listen_change(),
        None,
        "a listen changes nothing"
    );

    b.post_stateless(&call(5, "add_tool", json!({})));
    b.post_stateless(&call(6, "touch", json!({"uri": "test://a"})));
    let mut handed = Vec::new();
    while let Some(change) = b.endpoint.poll_listen_change() {
        handed.push(change);
    }
    let touched = ListenChange::ResourceUpdated {
        uri: "test://a".into(),
    };
    assert_eq!(handed, [ListenChange::ToolsListChanged, touched.clone()]);
    // What travels between instances reads back as the same change.
    let wire = serde_json::to_vec(&handed[1]).unwrap();
    assert_eq!(
        serde_json::from_slice::<ListenChange>(&wire).unwrap(),
        touched
    );

    // Instance `a` hands the changes it is told about to its listen streams.
    for change in &handed {
        a.endpoint.announce_listen_change(change);
    }
    let (msgs, ended) = pending(&mut a, &tools);
    assert!(!ended);
    let methods: Vec<&Value> = msgs.iter().map(|m| &m["method"]).collect();
    assert_eq!(methods, ["notifications/tools/list_changed"], "{msgs:?}");
    assert_eq!(
        a.endpoint.poll_listen_change(),
        None,
        "told changes are not handed on"
    );
}

#[test]
fn without_an_instance_id_no_change_is_kept_for_other_instances() {
    let mut alone = http(EndpointConfig::default());
    alone.post_stateless(&call(5, "add_tool", json!({})));
    assert_eq!(alone.endpoint.poll_listen_change(), None);
}
