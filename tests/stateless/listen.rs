//! `subscriptions/listen` (2026-07-28): the acknowledgement first, the agreed filter, list
//! changes and resource updates delivered only to the streams that asked for them (tagged with
//! the subscription id), cancellation, the closing result and the limits; in memory on one
//! connection (stdio's shape) and on the HTTP endpoint, where the change is made by one
//! exchange's machine and delivered on another's listen stream.

use std::task::{Context, Waker};
use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::app::runtime::Job;
use mcp_sansio::app::server::*;
use mcp_sansio::framing::sse::{SseDecoder, SseItem};
use mcp_sansio::http::*;
use mcp_sansio::model::Implementation;
use serde_json::{json, Value};

const V: &str = "2026-07-28";
const SUB: &str = "io.modelcontextprotocol/subscriptionId";

fn builder() -> ServerBuilder {
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
struct Pipe {
    server: Server,
    now: Instant,
}

impl Pipe {
    fn new(b: ServerBuilder) -> Pipe {
        let now = Instant::now();
        Pipe {
            server: b.build(now),
            now,
        }
    }

    fn send(&mut self, frame: &Value) -> Vec<Value> {
        self.server
            .handle_input(self.now, Bytes::from(frame.to_string()));
        self.drain()
    }

    fn drain(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while let Some(t) = self.server.poll_transmit(&mut buf) {
            out.push(serde_json::from_slice(&buf[buf.len() - t.len..]).unwrap());
        }
        out
    }
}

fn methods_for(out: &[Value], id: i64) -> Vec<String> {
    out.iter()
        .filter(|m| m["params"]["_meta"][SUB] == json!(id))
        .map(|m| m["method"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn the_acknowledgement_comes_first_with_the_agreed_filter() {
    let mut pipe = Pipe::new(builder());
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
    let mut pipe = Pipe::new(b);
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
    let mut pipe = Pipe::new(builder());
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
    let out = pipe.drain();
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
    let mut pipe = Pipe::new(builder().max_listeners(1));
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
    let mut pipe = Pipe::new(builder().max_listeners(0));
    let out = pipe.send(&listen(5, json!({"toolsListChanged": true})));
    assert_eq!(out[0]["error"]["code"], -32601);
    assert_eq!(
        pipe.server
            .stateless_status(&mcp_sansio::jsonrpc::RequestId::number(5)),
        Some(404)
    );
}

struct Http {
    now: Instant,
    ep: Endpoint<Server>,
    jobs: Vec<Job>,
}

impl Http {
    fn new(config: EndpointConfig) -> Http {
        Http {
            now: Instant::now(),
            ep: Endpoint::new(config, |now| builder().build(now)),
            jobs: Vec::new(),
        }
    }

    fn post(&mut self, body: &Value) -> HttpResponse {
        let method = body["method"].as_str().unwrap();
        let mut head = HttpRequestHead::new(HttpMethod::Post, "/mcp")
            .header("Host", "localhost:3000")
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", V)
            .header("Mcp-Method", method);
        if let Some(name) = body["params"]["name"].as_str() {
            head = head.header("Mcp-Name", name);
        }
        let resp = self
            .ep
            .handle_request(self.now, &head, Bytes::from(body.to_string()), [1; 16]);
        while let Some(job) = self.ep.poll_job() {
            self.jobs.push(job);
        }
        let mut cx = Context::from_waker(Waker::noop());
        self.jobs
            .retain_mut(|j| j.as_mut().poll(&mut cx).is_pending());
        resp
    }

    /// What stream `resp` has now, without waiting for its end.
    fn pending(&mut self, resp: &HttpResponse) -> (Vec<Value>, bool) {
        let Body::Stream(id) = &resp.body else {
            panic!("a listen answer streams: {resp:?}");
        };
        let mut bytes = Vec::new();
        let mut ended = false;
        while let Some(chunk) = self.ep.poll_stream(*id, &mut bytes) {
            if chunk == StreamChunk::End {
                ended = true;
                break;
            }
        }
        let mut dec = SseDecoder::new(1 << 20);
        dec.push(&bytes);
        let mut out = Vec::new();
        while let Some(Ok(item)) = dec.poll_item() {
            if let SseItem::Event(e) = item {
                if !e.data_str().is_empty() {
                    out.push(serde_json::from_str(e.data_str()).unwrap());
                }
            }
        }
        (out, ended)
    }
}

#[test]
fn over_http_a_change_in_one_exchange_reaches_the_listen_streams_of_others() {
    let mut http = Http::new(EndpointConfig::default());
    let tools = http.post(&listen(1, json!({"toolsListChanged": true})));
    assert_eq!(tools.status, 200);
    assert_eq!(tools.get("content-type"), Some("text/event-stream"));
    let prompts = http.post(&listen(2, json!({"promptsListChanged": true})));
    let (first, ended) = http.pending(&tools);
    assert!(!ended, "the listen stream stays open");
    assert_eq!(first.len(), 1);
    assert_eq!(
        first[0]["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(first[0]["params"]["_meta"][SUB], 1);
    http.pending(&prompts);

    let resp = http.post(&call(5, "add_tool", json!({})));
    assert_eq!(resp.status, 200, "the trigger is answered on its own");
    let (tool_msgs, _) = http.pending(&tools);
    assert_eq!(tool_msgs.len(), 1, "{tool_msgs:?}");
    assert_eq!(tool_msgs[0]["method"], "notifications/tools/list_changed");
    assert_eq!(tool_msgs[0]["params"]["_meta"][SUB], 1);
    let (prompt_msgs, ended) = http.pending(&prompts);
    assert!(prompt_msgs.is_empty() && !ended, "{prompt_msgs:?}");

    // The client closing a listen stream ends it: its machine goes away.
    let Body::Stream(id) = tools.body else {
        unreachable!()
    };
    let before = http.ep.exchange_count();
    assert_eq!(
        http.ep.session_count(),
        0,
        "listen streams are exchanges, not sessions"
    );
    http.ep.stream_closed(id);
    assert_eq!(http.ep.exchange_count(), before - 1);
}

#[test]
fn over_http_listen_streams_are_bounded() {
    let config = EndpointConfig {
        max_listen_streams: 1,
        ..EndpointConfig::default()
    };
    let mut http = Http::new(config);
    let first = http.post(&listen(1, json!({"toolsListChanged": true})));
    assert_eq!(first.status, 200);
    let second = http.post(&listen(2, json!({"toolsListChanged": true})));
    assert_eq!(second.status, 503);
    // A refused listen (bad filter) holds nothing.
    let Body::Stream(id) = first.body else {
        unreachable!()
    };
    http.ep.stream_closed(id);
    let bad = http.post(&listen(3, json!({"toolsListChanged": 1})));
    assert_eq!(bad.status, 400);
    let third = http.post(&listen(4, json!({"toolsListChanged": true})));
    assert_eq!(third.status, 200);
}

#[test]
fn over_http_an_announcement_from_outside_any_exchange_reaches_the_streams_that_asked() {
    let mut http = Http::new(EndpointConfig::default());
    assert_eq!(
        http.ep
            .announce_listen_event(&ListenEvent::ToolsListChanged),
        0,
        "no stream open yet"
    );
    let tools = http.post(&listen(1, json!({"toolsListChanged": true})));
    let resources = http.post(&listen(2, json!({"resourceSubscriptions": ["test://a"]})));
    http.pending(&tools);
    http.pending(&resources);

    assert_eq!(
        http.ep
            .announce_listen_event(&ListenEvent::ToolsListChanged),
        2
    );
    let (tool_msgs, _) = http.pending(&tools);
    assert_eq!(tool_msgs.len(), 1, "{tool_msgs:?}");
    assert_eq!(tool_msgs[0]["method"], "notifications/tools/list_changed");
    assert_eq!(tool_msgs[0]["params"]["_meta"][SUB], 1);
    let (resource_msgs, ended) = http.pending(&resources);
    assert!(resource_msgs.is_empty() && !ended, "{resource_msgs:?}");

    let touched = ListenEvent::ResourceUpdated {
        uri: "test://a".into(),
    };
    http.ep.announce_listen_event(&touched);
    let (resource_msgs, _) = http.pending(&resources);
    assert_eq!(resource_msgs.len(), 1, "{resource_msgs:?}");
    assert_eq!(
        resource_msgs[0]["method"],
        "notifications/resources/updated"
    );
    assert_eq!(resource_msgs[0]["params"]["_meta"][SUB], 2);
    assert_eq!(resource_msgs[0]["params"]["uri"], "test://a");
    let (tool_msgs, _) = http.pending(&tools);
    assert!(tool_msgs.is_empty(), "{tool_msgs:?}");

    // A closed stream is offered nothing more.
    let Body::Stream(id) = tools.body else {
        unreachable!()
    };
    http.ep.stream_closed(id);
    assert_eq!(
        http.ep
            .announce_listen_event(&ListenEvent::ToolsListChanged),
        1
    );
}
