//! The Streamable HTTP endpoint driven with HTTP-shaped values and a real app `Server` (a tiny
//! registry): one test per status-code and header rule.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::http::*;
use mcp_sansio::model::Implementation;
use mcp_sansio::model::LoggingLevel;
use mcp_sansio::runtime::oneshot;
use mcp_sansio::testing::HttpRig;
use serde_json::{json, Value};

use crate::client_rig::{wait_tool, Gates};

fn server(now: Instant, gates: Gates) -> Server {
    let schema = json!({"type": "object"});
    Server::builder(Implementation::new("http-test", "1"))
        .tool(Tool::new("echo", schema.clone()).sync_handler(|_, _| Ok(CallToolResult::text("hi"))))
        .tool(Tool::new("chatty", schema.clone()).sync_handler(|_, ctx| {
            ctx.log(LoggingLevel::Info, None, json!("working"));
            Ok(CallToolResult::text("done"))
        }))
        .tool(Tool::new("closer", schema).handler({
            let gates = gates.clone();
            move |_, ctx| {
                let (tx, rx) = oneshot::<()>();
                gates.lock().unwrap().push(tx);
                async move {
                    ctx.close_sse_stream();
                    let _ = rx.await;
                    Ok(CallToolResult::text("after close"))
                }
            }
        }))
        .tool(Tool::new("flood", json!({"type": "object"})).handler({
            let gates = gates.clone();
            move |_, ctx| {
                let (tx, rx) = oneshot::<()>();
                gates.lock().unwrap().push(tx);
                async move {
                    ctx.log(LoggingLevel::Info, None, json!("starting"));
                    let _ = rx.await;
                    for _ in 0..40 {
                        ctx.log(LoggingLevel::Info, None, json!("x".repeat(1 << 20)));
                    }
                    Ok(CallToolResult::text("flooded"))
                }
            }
        }))
        .tool(
            Tool::new("sample", json!({"type": "object"})).handler(|_, ctx| async move {
                let asked = json!({"messages": [], "maxTokens": 10});
                Ok(match ctx.sample(asked).await {
                    Ok(_) => CallToolResult::text("sampled"),
                    Err(e) => CallToolResult::error(format!("sampling failed: {e}")),
                })
            }),
        )
        .tool(wait_tool(gates))
        .build(now)
}

const BOTH: &str = "application/json, text/event-stream";

/// The shared HTTP rig, plus the gates of this file's `slow` tool.
struct Rig {
    http: HttpRig,
    gates: Gates,
}

impl Rig {
    fn new(config: EndpointConfig) -> Rig {
        let gates: Gates = Arc::default();
        let g = gates.clone();
        let http = HttpRig::new(config, move |now| server(now, g.clone()), Instant::now());
        Rig { http, gates }
    }

    /// A rig with the default configuration and one session open at `version`: the rig and
    /// the session id.
    fn opened(version: &str) -> (Rig, String) {
        Rig::opened_with(EndpointConfig::default(), version)
    }

    /// A rig with `config` and one session open at `version`.
    fn opened_with(config: EndpointConfig, version: &str) -> (Rig, String) {
        let mut rig = Rig::new(config);
        let sid = rig.http.open(version);
        (rig, sid)
    }

    /// A rig whose table holds at most `max_sessions` sessions.
    fn capped(max_sessions: usize) -> Rig {
        Rig::new(EndpointConfig {
            max_sessions,
            ..Default::default()
        })
    }

    fn post_head(&self, sid: Option<&str>) -> HttpRequestHead {
        let h = HttpRig::post_head();
        match sid {
            Some(sid) => h.header("Mcp-Session-Id", sid),
            None => h,
        }
    }

    fn send(&mut self, head: &HttpRequestHead, body: Value) -> HttpResponse {
        self.http.request(head, body.to_string())
    }

    fn post(&mut self, sid: Option<&str>, body: Value) -> HttpResponse {
        self.http.post(sid, &body)
    }

    /// Adds a tool through session `sid`'s server handle: a change the session announces.
    fn add_tool(&mut self, sid: &str) {
        let tool = Tool::new("new", json!({"type":"object"}))
            .sync_handler(|_, _| Ok(CallToolResult::text("x")));
        let machine = self.http.endpoint.machine_mut(sid).unwrap();
        machine.handle().add_tool(tool).unwrap();
    }

    /// Opens the gates and checks that the held stream `held` ends.
    fn finish(&mut self, held: &HttpResponse) {
        self.release_gates();
        let (_, ended) = self.drain(&held.body);
        assert!(ended, "the held stream ends once its call finishes");
    }

    /// Calls `tool` on session `sid` and checks that the answer is an SSE stream: the answer
    /// and what the stream has now (its events and whether it ended).
    fn sse_call(
        &mut self,
        sid: &str,
        id: i64,
        tool: &str,
    ) -> (HttpResponse, Vec<(String, String)>, bool) {
        let resp = self.post(Some(sid), call(id, tool));
        assert_eq!(resp.get("content-type"), Some("text/event-stream"));
        let (events, ended) = self.drain(&resp.body);
        (resp, events, ended)
    }

    fn release_gates(&mut self) {
        for tx in self.gates.lock().unwrap().drain(..) {
            tx.send(());
        }
        self.http.run_jobs();
    }

    /// Everything stream `body` has now: its SSE events and whether it ended.
    fn drain(&mut self, body: &Body) -> (Vec<(String, String)>, bool) {
        let read = self.http.read_stream(body);
        (read.events, read.ended)
    }
}

/// The default configuration with `change` made.
fn config_with(change: impl FnOnce(&mut EndpointConfig)) -> EndpointConfig {
    let mut config = EndpointConfig::default();
    change(&mut config);
    config
}

fn init(version: &str) -> Value {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":version,
        "capabilities":{},"clientInfo":{"name":"c","version":"1"}}})
}

fn call(id: i64, tool: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":{}}})
}

fn json_body(resp: &HttpResponse) -> Value {
    serde_json::from_str(resp.body_text()).expect("json body")
}

#[test]
fn initialize_issues_a_visible_ascii_session_id_from_the_given_bytes() {
    let mut rig = Rig::new(EndpointConfig::default());
    let resp = rig.post(None, init("2025-11-25"));
    assert_eq!(resp.status, 200);
    assert_eq!(resp.get("content-type"), Some("application/json"));
    let sid = resp.get("mcp-session-id").unwrap();
    assert!(sid.len() >= 32 && sid.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    assert_eq!(
        sid,
        "01".repeat(16),
        "derived from the caller's random bytes"
    );
    assert_eq!(json_body(&resp)["result"]["protocolVersion"], "2025-11-25");
}

#[test]
fn missing_session_id_is_400_and_unknown_is_404() {
    let mut rig = Rig::new(EndpointConfig::default());
    rig.http.open("2025-11-25");
    assert_eq!(rig.post(None, call(1, "echo")).status, 400);
    assert_eq!(rig.post(Some("nope"), call(1, "echo")).status, 404);
}

#[test]
fn delete_terminates_the_session_then_404() {
    let (mut rig, sid) = Rig::opened("2025-11-25");
    let del =
        HttpRequestHead::new(HttpMethod::Delete, "/mcp").header("Mcp-Session-Id", sid.as_str());
    assert_eq!(rig.send(&del, Value::Null).status, 200);
    assert_eq!(rig.post(Some(&sid), call(1, "echo")).status, 404);
    assert_eq!(rig.http.endpoint.session_count(), 0);
}

#[test]
fn idle_sessions_expire_on_the_timer() {
    let (mut rig, sid) = Rig::opened_with(
        config_with(|c| c.idle_timeout = Duration::from_secs(60)),
        "2025-11-25",
    );
    let deadline = rig.http.endpoint.poll_timeout().expect("idle deadline");
    assert_eq!(deadline, rig.http.now + Duration::from_secs(60));
    rig.http
        .endpoint
        .handle_timeout(deadline - Duration::from_millis(1));
    assert_eq!(rig.http.endpoint.session_count(), 1);
    rig.http.now = deadline;
    rig.http.endpoint.handle_timeout(deadline);
    assert_eq!(rig.http.endpoint.stats().sessions_expired, 1);
    assert_eq!(rig.post(Some(&sid), call(1, "echo")).status, 404);
}

#[test]
fn ended_sessions_are_reported_only_when_asked_for() {
    let ended = |rig: &mut Rig| -> Vec<String> {
        std::iter::from_fn(|| rig.http.endpoint.poll_ended_session()).collect()
    };
    let mut quiet = Rig::new(EndpointConfig::default());
    let sid = quiet.http.open("2025-11-25");
    let del =
        HttpRequestHead::new(HttpMethod::Delete, "/mcp").header("Mcp-Session-Id", sid.as_str());
    assert_eq!(quiet.send(&del, Value::Null).status, 200);
    assert!(ended(&mut quiet).is_empty(), "off by default");

    let mut rig = Rig::new(EndpointConfig {
        idle_timeout: Duration::from_secs(60),
        report_ended_sessions: true,
        ..Default::default()
    });
    let deleted = rig.http.open("2025-11-25");
    let idle = rig.http.open("2025-11-25");
    let del =
        HttpRequestHead::new(HttpMethod::Delete, "/mcp").header("Mcp-Session-Id", deleted.as_str());
    assert_eq!(rig.send(&del, Value::Null).status, 200);
    assert_eq!(ended(&mut rig), [deleted]);
    // A DELETE of a session already gone ends nothing.
    assert_eq!(rig.send(&del, Value::Null).status, 404);
    rig.http.advance(Duration::from_secs(61));
    assert_eq!(ended(&mut rig), [idle]);
    assert!(ended(&mut rig).is_empty(), "each end once");
}

#[test]
fn past_max_sessions_initialize_gets_503() {
    let mut rig = Rig::capped(2);
    rig.http.open("2025-11-25");
    rig.http.open("2025-11-25");
    let refused = rig.post(None, init("2025-11-25"));
    assert_eq!(refused.status, 503);
    assert_eq!(json_body(&refused)["error"]["code"], -32000);
    assert_eq!(rig.http.endpoint.session_count(), 2);
    assert_eq!(rig.http.endpoint.stats().sessions_refused, 1);
}

/// An `initialize` with no `notifications/initialized` after it; returns the session id.
fn squat(rig: &mut Rig) -> String {
    let resp = rig.post(None, init("2025-11-25"));
    assert_eq!(resp.status, 200, "{}", resp.body_text());
    resp.get("mcp-session-id").unwrap().to_string()
}

#[test]
fn a_session_without_a_finished_handshake_expires_after_the_grace() {
    let mut rig = Rig::new(EndpointConfig {
        handshake_grace: Duration::from_secs(10),
        ..Default::default()
    });
    let start = rig.http.now;
    let squatter = squat(&mut rig);
    rig.http.now = start + Duration::from_secs(5);
    let ready = rig.http.open("2025-11-25");
    // Pinging does not stretch the grace: it runs from the `initialize`.
    rig.post(
        Some(&squatter),
        json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
    );
    assert_eq!(
        rig.http.endpoint.poll_timeout(),
        Some(start + Duration::from_secs(10))
    );
    rig.http
        .endpoint
        .handle_timeout(start + Duration::from_secs(10) - Duration::from_millis(1));
    assert_eq!(rig.http.endpoint.session_count(), 2);
    rig.http.now = start + Duration::from_secs(10);
    rig.http.endpoint.handle_timeout(rig.http.now);
    assert_eq!(rig.http.endpoint.stats().handshakes_expired, 1);
    assert_eq!(rig.http.endpoint.stats().sessions_expired, 0);
    assert_eq!(rig.http.endpoint.session_count(), 1);
    assert_eq!(rig.post(Some(&squatter), call(1, "echo")).status, 404);
    assert_eq!(rig.post(Some(&ready), call(2, "echo")).status, 200);
    // The initialized session is left with its idle deadline only.
    assert_eq!(
        rig.http.endpoint.poll_timeout(),
        Some(start + Duration::from_secs(10) + Duration::from_secs(30 * 60))
    );
}

#[test]
fn a_full_table_makes_room_by_ending_the_oldest_uninitialized_session() {
    let mut rig = Rig::capped(3);
    let ready = rig.http.open("2025-11-25");
    let oldest = squat(&mut rig);
    rig.http.now += Duration::from_millis(1);
    let younger = squat(&mut rig);
    rig.http.now += Duration::from_millis(1);
    // Full: the new client gets in, the oldest squatter is gone.
    let newcomer = rig.http.open("2025-11-25");
    assert_eq!(rig.http.endpoint.stats().handshakes_evicted, 1);
    assert_eq!(rig.http.endpoint.session_count(), 3);
    assert_eq!(rig.post(Some(&oldest), call(1, "echo")).status, 404);
    for sid in [&ready, &newcomer] {
        assert_eq!(rig.post(Some(sid), call(2, "echo")).status, 200);
    }
    // The younger squatter finishes its handshake: nothing is left to evict.
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(rig.post(Some(&younger), done).status, 202);
    let refused = rig.post(None, init("2025-11-25"));
    assert_eq!(refused.status, 503);
    assert_eq!(json_body(&refused)["error"]["code"], -32000);
    assert_eq!(rig.http.endpoint.stats().sessions_refused, 1);
    assert_eq!(rig.http.endpoint.session_count(), 3);
}

#[test]
fn a_flood_of_uninitialized_sessions_never_locks_out_a_new_client() {
    let mut rig = Rig::capped(64);
    let mut random = [0u8; 16];
    for n in 0u32..1100 {
        random[..4].copy_from_slice(&n.to_be_bytes());
        let body = Bytes::from(init("2025-11-25").to_string());
        let head = rig.post_head(None);
        let resp = rig
            .http
            .endpoint
            .handle_request(rig.http.now, &head, body, random);
        assert_eq!(resp.status, 200, "initialize {n}");
    }
    assert_eq!(rig.http.endpoint.session_count(), 64);
    assert_eq!(rig.http.endpoint.stats().handshakes_evicted, 1100 - 64);
    let sid = rig.http.open("2025-11-25");
    assert_eq!(rig.post(Some(&sid), call(1, "echo")).status, 200);
}

#[test]
fn sessionless_exchanges_have_their_own_limit() {
    let mut rig = Rig::new(EndpointConfig {
        sessionless: true,
        max_sessions: 0,
        max_exchanges: 1,
        ..Default::default()
    });
    // A handler still running holds its exchange.
    let held = rig.post(None, call(1, "wait"));
    assert_eq!(held.status, 200);
    assert!(matches!(held.body, Body::Stream(_)));
    assert_eq!(
        (
            rig.http.endpoint.exchange_count(),
            rig.http.endpoint.session_count()
        ),
        (1, 0)
    );
    let refused = rig.post(None, call(2, "echo"));
    assert_eq!(refusal(&refused), (503, json!(-32000), json!(2)));
    assert_eq!(rig.http.endpoint.stats().exchanges_refused, 1);
    assert_eq!(rig.http.endpoint.stats().sessions_refused, 0);
    rig.finish(&held);
    assert_eq!(rig.http.endpoint.exchange_count(), 0);
    assert_eq!(rig.post(None, call(3, "echo")).status, 200);
}

#[test]
fn bodies_past_the_bytes_in_flight_get_503_until_their_requests_are_answered() {
    let (mut rig, sid) = Rig::opened_with(
        config_with(|c| c.max_body_bytes_in_flight = 100),
        "2025-11-25",
    );
    // Nothing held: a body larger than the bound still starts.
    let mut big = call(1, "wait");
    big["params"]["arguments"] = json!({"pad": "x".repeat(200)});
    let held = rig.post(Some(&sid), big);
    assert_eq!(held.status, 200);
    assert!(rig.http.endpoint.body_bytes_in_flight() > 200);
    let refused = rig.post(Some(&sid), call(2, "echo"));
    assert_eq!(refusal(&refused), (503, json!(-32000), json!(2)));
    assert_eq!(rig.http.endpoint.stats().bodies_refused, 1);
    // Notifications and responses are never refused by it.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"});
    assert_eq!(rig.post(Some(&sid), note).status, 202);
    rig.finish(&held);
    assert_eq!(rig.http.endpoint.body_bytes_in_flight(), 0);
    assert_eq!(rig.post(Some(&sid), call(3, "echo")).status, 200);
    assert_eq!(rig.http.endpoint.body_bytes_in_flight(), 0);
}

#[test]
fn a_deleted_session_gives_back_the_bodies_it_held() {
    let (mut rig, sid) = Rig::opened("2025-11-25");
    assert_eq!(rig.post(Some(&sid), call(1, "wait")).status, 200);
    assert!(rig.http.endpoint.body_bytes_in_flight() > 0);
    let head =
        HttpRequestHead::new(HttpMethod::Delete, "/mcp").header("Mcp-Session-Id", sid.as_str());
    assert_eq!(rig.send(&head, Value::Null).status, 200);
    assert_eq!(rig.http.endpoint.body_bytes_in_flight(), 0);
}

#[test]
fn a_sessionless_body_is_given_back_when_its_exchange_ends() {
    let mut rig = Rig::new(EndpointConfig {
        sessionless: true,
        max_body_bytes_in_flight: 1,
        ..Default::default()
    });
    let held = rig.post(None, call(1, "wait"));
    assert!(matches!(held.body, Body::Stream(_)));
    let refused = rig.post(None, call(2, "echo"));
    assert_eq!(refusal(&refused), (503, json!(-32000), json!(2)));
    rig.finish(&held);
    assert_eq!(rig.http.endpoint.body_bytes_in_flight(), 0);
    assert_eq!(rig.post(None, call(3, "echo")).status, 200);
}

#[test]
fn an_unreadable_answer_to_a_server_request_fails_it_at_once() {
    let mut rig = Rig::new(EndpointConfig::default());
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {"sampling": {}},
        "clientInfo": {"name": "c", "version": "1"}}});
    let opened = rig.post(None, init);
    let sid = opened.get("mcp-session-id").unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(rig.post(Some(&sid), initialized).status, 202);
    let call = rig.post(Some(&sid), call(5, "sample"));
    rig.http.run_jobs();
    let asked = rig.http.read_stream(&call.body).messages();
    let request = asked
        .iter()
        .find(|m| m["method"] == "sampling/createMessage")
        .unwrap_or_else(|| panic!("no sampling request: {asked:?}"));
    // Both result and error: not a response, but its id names the pending request.
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {},
        "error": {"code": 1, "message": "x"}});
    let refused = rig.post(Some(&sid), answer);
    assert_eq!(refused.status, 400);
    rig.http.run_jobs();
    let read = rig.http.read_stream(&call.body);
    let result = read
        .messages()
        .into_iter()
        .find(|m| m["id"] == 5)
        .expect("the call is answered without waiting for the request's deadline");
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("could not be read"), "{text}");
    assert_eq!(result["result"]["isError"], json!(true));
}

#[test]
fn accept_without_both_types_is_406() {
    let mut rig = Rig::new(EndpointConfig::default());
    let head = HttpRequestHead::new(HttpMethod::Post, "/mcp")
        .header("Accept", "application/json")
        .header("Content-Type", "application/json");
    assert_eq!(rig.send(&head, init("2025-11-25")).status, 406);
    assert_eq!(rig.http.endpoint.session_count(), 0);
}

#[test]
fn non_json_content_type_is_415() {
    let mut rig = Rig::new(EndpointConfig::default());
    let head = HttpRequestHead::new(HttpMethod::Post, "/mcp")
        .header("Accept", BOTH)
        .header("Content-Type", "text/plain");
    assert_eq!(rig.send(&head, init("2025-11-25")).status, 415);
}

#[test]
fn a_body_in_a_content_coding_is_415_on_both_revisions() {
    let mut rig = Rig::new(EndpointConfig::default());
    for coding in ["gzip", "identity, br", "x-custom"] {
        let head = rig.post_head(None).header("Content-Encoding", coding);
        let resp = rig.send(&head, init("2025-11-25"));
        assert_eq!(resp.status, 415, "{coding}");
        assert_eq!(resp.get("accept-encoding"), Some("identity"));
        assert!(
            resp.body_text().contains("Content-Encoding"),
            "{}",
            resp.body_text()
        );
        let mut list = json!({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{}}}});
        let head = HttpRig::stateless_head(&list, None).header("Content-Encoding", coding);
        let resp = rig.http.request(&head, list.to_string());
        assert_eq!(resp.status, 415, "2026-07-28, {coding}");
        list["id"] = json!(8);
        let served = rig.http.post_stateless(&list);
        assert_eq!(served.status, 200, "{}", served.body_text());
    }
    assert_eq!(rig.http.endpoint.session_count(), 0);
    // `identity` is the body as sent.
    let head = rig.post_head(None).header("Content-Encoding", "identity");
    assert_eq!(rig.send(&head, init("2025-11-25")).status, 200);
}

#[test]
fn body_over_the_limit_is_413() {
    let mut rig = Rig::new(EndpointConfig {
        max_body: 64,
        ..Default::default()
    });
    let resp = rig.post(None, init("2025-11-25"));
    assert_eq!(resp.status, 413);
    // The id is read from the body's first bytes; the message names the limit.
    let body = json_body(&resp);
    assert_eq!(body["error"]["code"], -32600, "{body}");
    assert_eq!(body["id"], init("2025-11-25")["id"], "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("64 bytes limit"), "{body}");
}

#[test]
fn a_batch_of_five_thousand_pings_is_answered_in_full_and_one_with_a_repeated_id_ends() {
    let (mut rig, sid) = Rig::opened("2025-03-26");
    let pings: Vec<Value> = (0..5000)
        .map(|n| json!({"jsonrpc": "2.0", "id": n, "method": "ping"}))
        .collect();
    let resp = rig.post(Some(&sid), Value::Array(pings));
    assert_eq!(resp.status, 200, "{:?}", resp.body);
    let (events, ended) = rig.drain(&resp.body);
    assert!(ended);
    assert_eq!(events.len(), 5000, "one answer per ping");
    // The ids are free again: the same batch is accepted a second time.
    let again: Vec<Value> = (0..3)
        .map(|n| json!({"jsonrpc": "2.0", "id": n, "method": "ping"}))
        .collect();
    assert_eq!(rig.post(Some(&sid), Value::Array(again)).status, 200);

    let repeated = json!([call(7, "echo"), call(8, "echo"), call(7, "echo")]);
    let resp = rig.post(Some(&sid), repeated);
    let (events, ended) = rig.drain(&resp.body);
    assert!(ended, "the stream of a batch with a repeated id ends");
    let ids: Vec<Value> = events
        .iter()
        .map(|(_, data)| serde_json::from_str::<Value>(data).unwrap())
        .filter(|v| v.get("result").is_some())
        .map(|v| v["id"].clone())
        .collect();
    assert_eq!(ids, [json!(7), json!(8)], "one answer per distinct id");
}

#[test]
fn notifications_and_responses_get_202() {
    let (mut rig, sid) = Rig::opened("2025-11-25");
    let n = json!({"jsonrpc":"2.0","method":"notifications/roots/list_changed"});
    let resp = rig.post(Some(&sid), n);
    assert_eq!((resp.status, &resp.body), (202, &Body::Empty));
    let r = json!({"jsonrpc":"2.0","id":"s-99","result":{}});
    assert_eq!(rig.post(Some(&sid), r).status, 202);
}

#[test]
fn immediate_result_is_json_and_log_first_is_sse() {
    let (mut rig, sid) = Rig::opened("2025-06-18");
    let resp = rig.post(Some(&sid), call(1, "echo"));
    assert_eq!(resp.get("content-type"), Some("application/json"));
    assert_eq!(json_body(&resp)["result"]["content"][0]["text"], "hi");

    let (_, events, ended) = rig.sse_call(&sid, 2, "chatty");
    assert!(ended, "the stream closes after the response");
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events[0].1.contains("notifications/message"));
    assert!(events[1].1.contains("\"id\":2") && events[1].1.contains("done"));
}

#[test]
fn always_sse_mode_streams_even_an_immediate_result() {
    let (mut rig, sid) = Rig::opened_with(
        config_with(|c| c.response_mode = ResponseMode::AlwaysSse),
        "2025-06-18",
    );
    let (_, events, ended) = rig.sse_call(&sid, 1, "echo");
    assert!(ended);
    assert_eq!(events.len(), 1);
}

/// In `AlwaysJson` mode a notification sent before the result does not turn the answer into
/// SSE: a finished call answers whole in JSON (its notification counted as dropped), and a
/// call still running answers on a JSON stream whose body is the result once it comes.
#[test]
fn always_json_mode_answers_json_even_after_a_notification() {
    let (mut rig, sid) = Rig::opened_with(
        config_with(|c| c.response_mode = ResponseMode::AlwaysJson),
        "2025-06-18",
    );
    let resp = rig.post(Some(&sid), call(1, "chatty"));
    assert_eq!(resp.get("content-type"), Some("application/json"));
    assert_eq!(json_body(&resp)["result"]["content"][0]["text"], "done");
    assert_eq!(rig.http.endpoint.dropped_messages(&sid), Some(1));

    let resp = rig.post(Some(&sid), call(2, "wait"));
    rig.http.run_jobs();
    assert_eq!(resp.get("content-type"), Some("application/json"));
    let Body::Stream(id) = resp.body else {
        panic!("a running call streams: {:?}", resp.body)
    };
    let mut bytes = Vec::new();
    assert_eq!(
        rig.http.endpoint.poll_stream(id, &mut bytes),
        None,
        "nothing before the result"
    );
    rig.release_gates();
    while let Some(chunk) = rig.http.endpoint.poll_stream(id, &mut bytes) {
        if chunk == StreamChunk::End {
            break;
        }
    }
    let body: Value = serde_json::from_slice(&bytes).expect("one JSON response");
    assert_eq!(body["id"], 2);
    assert_eq!(body["result"]["content"][0]["text"], "finished");
}

#[test]
fn get_stream_receives_a_server_initiated_notification() {
    let (mut rig, sid) = Rig::opened("2025-06-18");
    let get = rig.http.get(&sid, None);
    assert_eq!(get.status, 200);
    assert_eq!(get.get("content-type"), Some("text/event-stream"));
    rig.add_tool(&sid);
    let (events, ended) = rig.drain(&get.body);
    assert!(!ended);
    assert_eq!(events.len(), 1, "no priming before 2025-11-25: {events:?}");
    assert!(events[0].1.contains("notifications/tools/list_changed"));
    // A second GET replaces the first (a client reopens only after losing its stream, and
    // a dead idle connection is not visible to the server): the old response ends, and
    // later messages go to the new one only.
    let second = rig.http.get(&sid, None);
    assert_eq!(second.status, 200);
    let (old_events, old_ended) = rig.drain(&get.body);
    assert!(old_ended, "the replaced response ends");
    assert!(old_events.is_empty(), "{old_events:?}");
    rig.http
        .endpoint
        .machine_mut(&sid)
        .unwrap()
        .handle()
        .remove_tool("new");
    let (events, ended) = rig.drain(&second.body);
    assert!(!ended);
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(events[0].1.contains("notifications/tools/list_changed"));
}

/// A response stream with nothing to hand out is quiet (a driver need not poll it after
/// every input): an idle GET stream while other requests are answered, a POST stream while
/// its handler waits. It stops being quiet as soon as the session has something for it (a
/// handle's change, a handler's result), when it is replaced and when its session ends.
#[test]
fn a_stream_is_quiet_until_its_session_has_something_for_it() {
    let (mut rig, sid) = Rig::opened("2025-11-25");
    let get = rig.http.get(&sid, None);
    let Body::Stream(get_id) = get.body else {
        panic!("GET is a stream")
    };
    assert!(
        !rig.http.endpoint.stream_quiet(get_id),
        "the priming event waits"
    );
    let (events, _) = rig.drain(&get.body);
    assert_eq!(events.len(), 1, "priming: {events:?}");
    assert!(rig.http.endpoint.stream_quiet(get_id));
    // A request answered on its own response leaves the GET stream quiet.
    let answered = rig.post(Some(&sid), call(1, "echo"));
    assert_eq!(json_body(&answered)["result"]["content"][0]["text"], "hi");
    assert!(rig.http.endpoint.stream_quiet(get_id));
    // A handler that waits: its POST stream is quiet until the result is in.
    let waiting = rig.post(Some(&sid), call(2, "wait"));
    let Body::Stream(post_id) = waiting.body else {
        panic!("a waiting handler's response is a stream")
    };
    let _ = rig.drain(&waiting.body);
    assert!(rig.http.endpoint.stream_quiet(post_id));
    rig.release_gates();
    assert!(
        !rig.http.endpoint.stream_quiet(post_id),
        "the result is in the outbox"
    );
    let (events, ended) = rig.drain(&waiting.body);
    assert!(
        ended && events.iter().any(|(_, data)| data.contains("\"id\":2")),
        "{events:?}"
    );
    assert!(
        !rig.http.endpoint.stream_quiet(post_id),
        "an ended stream is unknown: not quiet"
    );
    // A change made through the server's handle is for the GET stream.
    rig.add_tool(&sid);
    assert!(!rig.http.endpoint.stream_quiet(get_id));
    let (events, _) = rig.drain(&get.body);
    assert!(events[0].1.contains("notifications/tools/list_changed"));
    assert!(rig.http.endpoint.stream_quiet(get_id));
    // Replaced by a second GET: the first must be polled to end.
    let second = rig.http.get(&sid, None);
    let Body::Stream(second_id) = second.body else {
        panic!("GET is a stream")
    };
    assert!(!rig.http.endpoint.stream_quiet(get_id));
    let _ = rig.drain(&second.body);
    assert!(rig.http.endpoint.stream_quiet(second_id));
    // The session ends: its stream must be polled to end.
    let del =
        HttpRequestHead::new(HttpMethod::Delete, "/mcp").header("Mcp-Session-Id", sid.as_str());
    assert_eq!(rig.send(&del, Value::Null).status, 200);
    assert!(!rig.http.endpoint.stream_quiet(second_id));
    assert!(
        rig.drain(&second.body).1,
        "the stream ends with its session"
    );
}

/// After an input the endpoint lists the response streams whose output can have changed,
/// and only those: the attached streams of the session it touched (not another session's),
/// a GET's replaced connection, a deleted session's connections. Each call drains the list.
#[test]
fn touched_streams_list_what_an_input_can_have_changed() {
    let mut rig = Rig::new(EndpointConfig::default());
    let a = rig.http.open("2025-11-25");
    let b = rig.http.open("2025-11-25");
    let stream_of = |resp: &HttpResponse| match resp.body {
        Body::Stream(id) => id,
        _ => panic!("GET is a stream"),
    };
    let get_a = rig.http.get(&a, None);
    let get_b = rig.http.get(&b, None);
    let (a1, b1) = (stream_of(&get_a), stream_of(&get_b));
    let _ = rig.drain(&get_a.body);
    let _ = rig.drain(&get_b.body);
    let mut out = Vec::new();
    assert!(rig.http.endpoint.touched_streams(&mut out));
    assert!(out.contains(&a1) && out.contains(&b1), "{out:?}");
    out.clear();
    assert!(rig.http.endpoint.touched_streams(&mut out));
    assert!(out.is_empty(), "drained: {out:?}");
    // A request of session A touches A's streams only.
    let answered = rig.post(Some(&a), call(1, "echo"));
    assert_eq!(json_body(&answered)["result"]["content"][0]["text"], "hi");
    assert!(rig.http.endpoint.touched_streams(&mut out));
    assert!(out.contains(&a1) && !out.contains(&b1), "{out:?}");
    out.clear();
    // A second GET on B: the replaced connection is listed, to be polled to its end.
    let again_b = rig.http.get(&b, None);
    let b2 = stream_of(&again_b);
    assert!(rig.http.endpoint.touched_streams(&mut out));
    assert!(
        out.contains(&b1) && out.contains(&b2) && !out.contains(&a1),
        "{out:?}"
    );
    out.clear();
    // Deleting A lists its connection: its body ends at its next poll.
    let del = HttpRequestHead::new(HttpMethod::Delete, "/mcp").header("Mcp-Session-Id", a.as_str());
    assert_eq!(rig.send(&del, Value::Null).status, 200);
    assert!(rig.http.endpoint.touched_streams(&mut out));
    assert!(out.contains(&a1) && !out.contains(&b2), "{out:?}");
    assert!(
        rig.drain(&get_a.body).1,
        "the deleted session's stream ends"
    );
}

#[test]
fn get_is_405_when_configured_off() {
    let (mut rig, sid) = Rig::opened_with(config_with(|c| c.allow_get = false), "2025-11-25");
    let resp = rig.http.get(&sid, None);
    assert_eq!(resp.status, 405);
    assert_eq!(resp.get("allow"), Some("GET, POST, DELETE"));
    let put = HttpRequestHead::new(HttpMethod::parse("PUT"), "/mcp");
    assert_eq!(rig.send(&put, Value::Null).status, 405);
}

#[test]
fn priming_event_only_for_2025_11_25() {
    let mut rig = Rig::new(EndpointConfig::default());
    let new = rig.http.open("2025-11-25");
    let resp = rig.post(Some(&new), call(1, "chatty"));
    let Body::Stream(id) = resp.body else {
        panic!()
    };
    let mut raw = Vec::new();
    let _ = rig.http.endpoint.poll_stream(id, &mut raw);
    let first = String::from_utf8(raw).unwrap();
    assert!(
        first.starts_with("id: ")
            && first.contains("retry: 1000\n")
            && first.ends_with("data:\n\n"),
        "{first:?}"
    );
    let (events, _) = rig.drain(&resp.body);
    assert_eq!(events.len(), 2);

    let old = rig.http.open("2025-06-18");
    let resp = rig.post(Some(&old), call(1, "chatty"));
    let (events, _) = rig.drain(&resp.body);
    assert!(
        events.iter().all(|(_, data)| !data.is_empty()),
        "{events:?}"
    );
}

/// A response stream whose reader falls 32 MiB behind is cut loose (the client resumes from
/// the replay buffer) instead of queueing all a handler writes: 40 one-mebibyte logs written
/// while nothing is read do not all wait on the stream.
#[test]
fn a_stream_too_far_behind_in_bytes_is_cut_loose() {
    let (mut rig, sid) = Rig::opened("2025-11-25");
    let resp = rig.post(Some(&sid), call(1, "flood"));
    assert!(matches!(resp.body, Body::Stream(_)), "an SSE answer");
    rig.release_gates();
    let (events, ended) = rig.drain(&resp.body);
    assert!(ended, "the stream was cut");
    let logs = events
        .iter()
        .filter(|(_, data)| data.contains("xxxx"))
        .count();
    assert!(logs < 33, "{logs} mebibyte logs were queued");
}

/// `n` changes of session `sid`'s tool list, each announced on its GET stream: routed there
/// by a notification of the client's every 1,000 changes (the server's outbox holds 4,096
/// between two inputs), without the GET stream's reader taking anything.
fn toggle_tools(rig: &mut Rig, sid: &str, n: usize) {
    let routed = json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"});
    for i in 0..n {
        if i % 2 == 0 {
            rig.add_tool(sid);
        } else {
            let machine = rig.http.endpoint.machine_mut(sid).unwrap();
            machine.handle().remove_tool("new");
        }
        if i % 1_000 == 999 || i + 1 == n {
            assert_eq!(rig.post(Some(sid), routed.clone()).status, 202);
        }
    }
}

/// A GET stream whose reader fell 4,096 events behind is cut loose; its resume replays all
/// it missed (more than one queue's worth) and what arose meanwhile, instead of being cut
/// again by the first live event before its reader could take the replay.
#[test]
fn a_get_stream_cut_loose_resumes_with_everything_it_missed() {
    let (mut rig, sid) = Rig::opened("2025-06-18");
    let get = rig.http.get(&sid, None);
    toggle_tools(&mut rig, &sid, 1);
    let (seen, _) = rig.drain(&get.body);
    assert_eq!(seen.len(), 1);
    toggle_tools(&mut rig, &sid, 4_200);
    let (events, ended) = rig.drain(&get.body);
    assert!(ended && events.is_empty(), "cut loose: {}", events.len());
    let resumed = rig.http.get(&sid, Some(&seen[0].0));
    assert_eq!(resumed.status, 200);
    let (replayed, ended) = rig.drain(&resumed.body);
    assert!(!ended, "the resumed stream stays open");
    assert_eq!(replayed.len(), 4_200, "every change after the id, once");
    assert!(replayed
        .iter()
        .all(|(_, data)| data.contains("notifications/tools/list_changed")));
    toggle_tools(&mut rig, &sid, 1);
    assert_eq!(rig.drain(&resumed.body).0.len(), 1, "and it goes on live");
}

/// While no GET stream is open, at most 1,024 messages wait for it; once one more was
/// dropped a resume could not be complete: it is refused (409), and a GET without
/// `Last-Event-ID` opens the stream afresh with the messages held.
#[test]
fn a_resume_after_held_messages_were_dropped_is_refused() {
    let (mut rig, sid) = Rig::opened("2025-06-18");
    let get = rig.http.get(&sid, None);
    toggle_tools(&mut rig, &sid, 1);
    let (seen, _) = rig.drain(&get.body);
    let Body::Stream(conn) = get.body else {
        panic!()
    };
    rig.http.endpoint.stream_closed(conn);
    toggle_tools(&mut rig, &sid, 1_024);
    let resumed = rig.http.get(&sid, Some(&seen[0].0));
    assert_eq!(resumed.status, 200, "1,024 held: nothing lost");
    assert_eq!(rig.drain(&resumed.body).0.len(), 1_024);
    let Body::Stream(conn) = resumed.body else {
        panic!()
    };
    rig.http.endpoint.stream_closed(conn);
    toggle_tools(&mut rig, &sid, 1_025);
    let refused = rig.http.get(&sid, Some(&seen[0].0));
    assert_eq!(refused.status, 409);
    assert!(
        refused.body_text().contains("dropped"),
        "{}",
        refused.body_text()
    );
    let fresh = rig.http.get(&sid, None);
    assert_eq!(fresh.status, 200);
    let (held, _) = rig.drain(&fresh.body);
    assert_eq!(held.len(), 1_024);
    let Body::Stream(conn) = fresh.body else {
        panic!()
    };
    rig.http.endpoint.stream_closed(conn);
    let last = held.last().unwrap().0.clone();
    assert_eq!(
        rig.http.get(&sid, Some(&last)).status,
        200,
        "resumable again"
    );
}

#[test]
fn resumption_replays_exactly_the_missed_suffix_of_that_stream() {
    let (mut rig, sid) = Rig::opened("2025-11-25");
    // Stream A: a slow call; the client reads the priming event and the first log, then drops.
    let (a, seen, _) = rig.sse_call(&sid, 1, "wait");
    assert_eq!(seen.len(), 2, "{seen:?}");
    let Body::Stream(a_conn) = a.body else {
        panic!()
    };
    rig.http.endpoint.stream_closed(a_conn);
    // Another stream's traffic meanwhile must not leak into A's replay.
    let b = rig.post(Some(&sid), call(2, "chatty"));
    let (b_events, _) = rig.drain(&b.body);
    assert_eq!(b_events.len(), 3);
    // The slow call finishes while A is disconnected: not cancelled by the disconnect.
    rig.release_gates();
    let last_seen = &seen[1].0;
    let resumed = rig.http.get(&sid, Some(last_seen));
    assert_eq!(resumed.status, 200);
    let (replayed, ended) = rig.drain(&resumed.body);
    assert_eq!(replayed.len(), 1, "{replayed:?}");
    assert!(replayed[0].1.contains("\"id\":1") && replayed[0].1.contains("finished"));
    assert!(
        ended,
        "A already finished: the resumed body ends after the replay"
    );
    let stream_of = |id: &str| id.split('-').next().unwrap().to_string();
    assert_eq!(stream_of(&replayed[0].0), stream_of(last_seen));
}

#[test]
fn server_may_close_a_2025_11_25_post_stream_early_and_the_client_resumes() {
    let (mut rig, sid) = Rig::opened("2025-11-25");
    let a = rig.post(Some(&sid), call(1, "wait"));
    let Body::Stream(conn) = a.body else { panic!() };
    let (seen, _) = rig.drain(&a.body);
    assert!(rig.http.endpoint.close_stream(conn));
    assert_eq!(
        rig.http.endpoint.poll_stream(conn, &mut Vec::new()),
        Some(StreamChunk::End)
    );
    rig.release_gates();
    let resumed = rig.http.get(&sid, Some(&seen.last().unwrap().0));
    let (replayed, _) = rig.drain(&resumed.body);
    assert_eq!(replayed.len(), 1);
    assert!(replayed[0].1.contains("finished"));

    let old = rig.http.open("2025-06-18");
    let b = rig.post(Some(&old), call(1, "wait"));
    let Body::Stream(conn) = b.body else { panic!() };
    assert!(
        !rig.http.endpoint.close_stream(conn),
        "older sessions never get an early close"
    );
}

#[test]
fn a_handler_closes_its_2025_11_25_stream_after_priming_and_the_result_comes_on_resume() {
    let (mut rig, sid) = Rig::opened("2025-11-25");
    let (_, seen, ended) = rig.sse_call(&sid, 1, "closer");
    assert!(ended, "the handler asked for the close: the body ends");
    assert_eq!(seen.len(), 1, "only the priming event: {seen:?}");
    assert_eq!(seen[0].1, "", "priming data is empty");
    let resumed = rig.http.get(&sid, Some(&seen[0].0));
    assert_eq!(resumed.status, 200);
    let (early, ended) = rig.drain(&resumed.body);
    assert!(early.is_empty() && !ended, "still running: {early:?}");
    rig.release_gates();
    let (late, ended) = rig.drain(&resumed.body);
    assert_eq!(late.len(), 1, "{late:?}");
    assert!(late[0].1.contains("after close") && late[0].1.contains("\"id\":1"));
    assert!(ended);

    // Older sessions cannot resume a POST stream: the close request is ignored.
    let old = rig.http.open("2025-06-18");
    let b = rig.post(Some(&old), call(1, "closer"));
    let (seen, ended) = rig.drain(&b.body);
    assert!(seen.is_empty() && !ended, "{seen:?}");
    rig.release_gates();
    let (late, ended) = rig.drain(&b.body);
    assert!(late.len() == 1 && late[0].1.contains("after close") && ended);
}

#[test]
fn replay_past_the_budget_is_an_explicit_error() {
    let (mut rig, sid) = Rig::opened_with(config_with(|c| c.replay_budget = 300), "2025-11-25");
    let a = rig.post(Some(&sid), call(1, "chatty"));
    let (first, _) = rig.drain(&a.body);
    for i in 2..6 {
        let resp = rig.post(Some(&sid), call(i, "chatty"));
        let _ = rig.drain(&resp.body);
    }
    let resp = rig.http.get(&sid, Some(&first[0].0));
    assert_eq!(resp.status, 409, "{}", resp.body_text());
    assert_eq!(rig.http.get(&sid, Some("garbage")).status, 400);
}

#[test]
fn bad_host_or_origin_is_403_and_loopback_with_ports_passes() {
    let mut rig = Rig::new(EndpointConfig::default());
    let forged = [
        ("Host", "evil.example:3000"),
        ("Origin", "http://evil.example"),
        ("Origin", "null"),
    ];
    for (name, value) in forged {
        let mut head = rig.post_head(None);
        head.headers.retain(|(n, _)| n != name);
        let head = head.header(name, value);
        assert_eq!(
            rig.send(&head, init("2025-11-25")).status,
            403,
            "{name}: {value}"
        );
    }
    for host in ["localhost:8080", "127.0.0.1:8080", "[::1]:8080"] {
        let mut head = rig.post_head(None);
        head.headers.retain(|(n, _)| n != "Host");
        let head = head
            .header("Host", host)
            .header("Origin", format!("http://{host}"));
        assert_eq!(rig.send(&head, init("2025-11-25")).status, 200, "{host}");
    }
}

#[test]
fn protocol_version_header_is_validated_and_2025_03_26_accepted() {
    let (mut rig, sid) = Rig::opened("2025-11-25");
    let head = rig
        .post_head(Some(&sid))
        .header("MCP-Protocol-Version", "1999-01-01");
    assert_eq!(rig.send(&head, call(1, "echo")).status, 400);
    let head = rig
        .post_head(Some(&sid))
        .header("MCP-Protocol-Version", "2025-03-26");
    assert_eq!(rig.send(&head, call(2, "echo")).status, 200);
}

#[test]
fn an_unknown_session_is_404_before_its_version_header_is_looked_at() {
    let (mut rig, sid) = Rig::opened("2025-11-25");
    let bad_version = |head: HttpRequestHead| head.header("MCP-Protocol-Version", "1999-01-01");
    let head = bad_version(rig.post_head(Some("not-a-session")));
    let resp = rig.send(&head, call(1, "echo"));
    assert_eq!(resp.status, 404);
    assert_eq!(json_body(&resp)["error"]["code"], -32001);
    let head = bad_version(rig.post_head(Some(&sid)));
    assert_eq!(rig.send(&head, call(2, "echo")).status, 400);
    let head = bad_version(rig.post_head(None));
    assert_eq!(rig.send(&head, call(3, "echo")).status, 400);
}

/// `(status, error code, id)` of a refusal.
fn refusal(resp: &HttpResponse) -> (u16, Value, Value) {
    let body = json_body(resp);
    (
        resp.status,
        body["error"]["code"].clone(),
        body["id"].clone(),
    )
}

#[test]
fn every_refusal_of_one_request_names_its_id_and_a_batch_refusal_names_none() {
    let mut rig = Rig::capped(1);
    let sid = rig.http.open("2025-11-25");
    let named = |id: &str| json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
    let resp = rig.post(None, named("no-session-header"));
    assert_eq!(
        refusal(&resp),
        (400, json!(-32000), json!("no-session-header"))
    );
    let resp = rig.post(Some("not-a-session"), call(7, "echo"));
    assert_eq!(refusal(&resp), (404, json!(-32001), json!(7)));
    let head = rig
        .post_head(Some(&sid))
        .header("MCP-Protocol-Version", "1999-01-01");
    let resp = rig.send(&head, named("old"));
    assert_eq!(refusal(&resp), (400, json!(-32000), json!("old")));
    let resp = rig.post(None, init("2025-11-25"));
    assert_eq!(refusal(&resp), (503, json!(-32000), json!(0)));
    let first = rig.post(Some(&sid), call(3, "wait"));
    assert_eq!(first.status, 200);
    let resp = rig.post(Some(&sid), call(3, "echo"));
    assert_eq!(refusal(&resp), (400, json!(-32600), json!(3)));
    let batch = json!([call(4, "echo"), call(5, "echo")]);
    let resp = rig.post(Some(&sid), batch);
    assert_eq!(refusal(&resp), (400, json!(-32600), Value::Null));
    let resp = rig.post(
        Some("not-a-session"),
        json!({"jsonrpc": "2.0", "method": "ping"}),
    );
    assert_eq!(refusal(&resp), (404, json!(-32001), Value::Null));
}

#[test]
fn batches_only_in_a_2025_03_26_session() {
    let mut rig = Rig::new(EndpointConfig::default());
    let new = rig.http.open("2025-11-25");
    let batch = json!([call(1, "echo"), call(2, "echo")]);
    assert_eq!(rig.post(Some(&new), batch.clone()).status, 400);
    let old = rig.http.open("2025-03-26");
    let resp = rig.post(Some(&old), batch);
    assert_eq!(resp.get("content-type"), Some("text/event-stream"));
    let (events, ended) = rig.drain(&resp.body);
    assert!(ended);
    assert_eq!(
        events.len(),
        2,
        "one answer per request, on the batch's stream"
    );
}

#[test]
fn every_request_of_a_batch_answers_on_the_batch_stream_which_ends_after_the_last() {
    let (mut rig, sid) = Rig::opened("2025-03-26");
    let batch = json!([call(1, "wait"), call(2, "echo"), call(3, "echo")]);
    let resp = rig.post(Some(&sid), batch);
    assert_eq!(resp.status, 200);
    let ids = |events: &[(String, String)]| -> Vec<Value> {
        events
            .iter()
            .map(|(_, data)| serde_json::from_str::<Value>(data).unwrap())
            .filter(|v| v.get("result").is_some())
            .map(|v| v["id"].clone())
            .collect()
    };
    let (events, ended) = rig.drain(&resp.body);
    assert!(!ended, "request 1 is still running");
    assert_eq!(ids(&events), [json!(2), json!(3)]);
    rig.release_gates();
    let (events, ended) = rig.drain(&resp.body);
    assert!(ended);
    assert_eq!(ids(&events), [json!(1)]);
}

#[test]
fn a_request_id_in_flight_is_refused_and_a_refused_batch_leaves_none_of_its_ids_filed() {
    let (mut rig, sid) = Rig::opened("2025-03-26");
    let first = rig.post(Some(&sid), call(1, "wait"));
    assert_eq!(first.status, 200);
    let resp = rig.post(Some(&sid), call(1, "echo"));
    assert_eq!(resp.status, 400);
    assert_eq!(json_body(&resp)["error"]["code"], -32600);
    // Id 2 is new, id 1 is in flight: the batch is refused as a whole.
    let resp = rig.post(Some(&sid), json!([call(2, "echo"), call(1, "echo")]));
    assert_eq!(resp.status, 400);
    assert_eq!(json_body(&resp)["error"]["code"], -32600);
    // Id 2 was not left filed by the refused batch.
    let resp = rig.post(Some(&sid), call(2, "echo"));
    assert_eq!(resp.status, 200);
    assert_eq!(json_body(&resp)["id"], 2);
    // The request in flight still answers on its own stream.
    rig.release_gates();
    let (events, ended) = rig.drain(&first.body);
    assert!(ended);
    let last: Value = serde_json::from_str(&events.last().expect("an answer").1).unwrap();
    assert_eq!(last["id"], 1);
    assert_eq!(last["result"]["content"][0]["text"], "finished");
}

#[test]
fn sessionless_mode_answers_json_without_sessions() {
    let mut rig = Rig::new(EndpointConfig {
        sessionless: true,
        ..Default::default()
    });
    let resp = rig.post(None, init("2025-06-18"));
    assert_eq!(resp.status, 200);
    assert_eq!(resp.get("mcp-session-id"), None);
    let resp = rig.post(None, call(1, "chatty"));
    assert_eq!(resp.get("content-type"), Some("application/json"));
    assert_eq!(json_body(&resp)["result"]["content"][0]["text"], "done");
    // A running handler: the JSON body arrives on the stream when it finishes.
    let resp = rig.post(None, call(2, "wait"));
    assert_eq!(resp.get("content-type"), Some("application/json"));
    let Body::Stream(id) = resp.body else {
        panic!()
    };
    assert_eq!(rig.http.endpoint.poll_stream(id, &mut Vec::new()), None);
    rig.release_gates();
    let mut buf = Vec::new();
    assert!(matches!(
        rig.http.endpoint.poll_stream(id, &mut buf),
        Some(StreamChunk::Data { .. })
    ));
    let v: Value = serde_json::from_slice(&buf).unwrap();
    assert_eq!(v["result"]["content"][0]["text"], "finished");
    assert_eq!(
        rig.http.endpoint.poll_stream(id, &mut buf),
        Some(StreamChunk::End)
    );
    assert_eq!(rig.http.endpoint.session_count(), 0);
    assert_eq!(rig.http.get("x", None).status, 405);
}

#[test]
fn unparsable_or_invalid_bodies_are_400_with_a_json_rpc_error() {
    let (mut rig, sid) = Rig::opened("2025-11-25");
    let head = rig.post_head(Some(&sid));
    let resp = rig.http.endpoint.handle_request(
        rig.http.now,
        &head,
        Bytes::from_static(b"{not json"),
        [9; 16],
    );
    assert_eq!(resp.status, 400);
    assert_eq!(json_body(&resp)["error"]["code"], -32700);
    assert_eq!(json_body(&resp)["id"], Value::Null);
    let resp = rig.post(Some(&sid), json!({"jsonrpc": "2.0", "id": 5}));
    assert_eq!(resp.status, 400);
    assert_eq!(json_body(&resp)["error"]["code"], -32600);
    assert_eq!(json_body(&resp)["id"], 5);
    // A request cut short, and one with a byte that is not UTF-8: the id its head shows.
    for (body, id) in [
        (
            &b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\""[..],
            json!(7),
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}",
            json!("q"),
        ),
    ] {
        let resp = rig.http.endpoint.handle_request(
            rig.http.now,
            &head,
            Bytes::copy_from_slice(body),
            [9; 16],
        );
        assert_eq!(resp.status, 400);
        assert_eq!(json_body(&resp)["error"]["code"], -32700);
        assert_eq!(json_body(&resp)["id"], id);
    }
}

#[test]
fn a_cancelled_request_ends_its_stream() {
    let (mut rig, sid) = Rig::opened("2025-11-25");
    let a = rig.post(Some(&sid), call(1, "wait"));
    let (_, ended) = rig.drain(&a.body);
    assert!(!ended);
    let cancel =
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}});
    assert_eq!(rig.post(Some(&sid), cancel).status, 202);
    let (events, ended) = rig.drain(&a.body);
    assert!(ended, "no response will come: the stream ends");
    assert!(events.is_empty(), "{events:?}");
}

#[test]
fn concurrent_posts_each_get_only_their_own_response() {
    let (mut rig, sid) = Rig::opened("2025-11-25");
    let get = rig.http.get(&sid, None);
    let posts: Vec<HttpResponse> = (1..=3)
        .map(|i| rig.post(Some(&sid), call(i, "wait")))
        .collect();
    assert!(posts.iter().all(|p| p.status == 200));
    rig.release_gates();
    for (i, p) in posts.iter().enumerate() {
        let (events, ended) = rig.drain(&p.body);
        assert!(ended);
        let responses: Vec<&String> = events
            .iter()
            .map(|(_, d)| d)
            .filter(|d| d.contains("\"result\""))
            .collect();
        assert_eq!(responses.len(), 1, "{events:?}");
        assert!(responses[0].contains(&format!("\"id\":{}", i + 1)));
    }
    let (on_get, _) = rig.drain(&get.body);
    assert!(
        on_get.iter().all(|(_, d)| d.is_empty()),
        "nothing but priming on GET: {on_get:?}"
    );
}

/// Not a check: prints POST round trips per second (run with `--ignored --nocapture`).
#[test]
#[ignore]
fn measure_post_echo_throughput() {
    let (mut rig, sid) = Rig::opened("2025-11-25");
    let head = rig.post_head(Some(&sid));
    let bodies: Vec<Bytes> = (0..20_000)
        .map(|i| Bytes::from(call(i + 10, "echo").to_string()))
        .collect();
    let start = Instant::now();
    for body in bodies {
        let resp = rig
            .http
            .endpoint
            .handle_request(rig.http.now, &head, body, [0; 16]);
        assert_eq!(resp.status, 200);
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!("POST tools/call echo → JSON: {:.0} req/s", 20_000.0 / secs);
}

/// The raw bytes response `conn` hands out now (comments included), and whether it ended.
fn pull_raw(ep: &mut Endpoint<Server>, conn: StreamId) -> (Vec<u8>, bool) {
    let mut bytes = Vec::new();
    while let Some(chunk) = ep.poll_stream(conn, &mut bytes) {
        if chunk == StreamChunk::End {
            return (bytes, true);
        }
    }
    (bytes, false)
}

/// A silent GET stream gets `: keep-alive` once it wrote nothing for the interval (virtual
/// time): not before, and counted from its last write, not from when it opened. The comment
/// makes the stream not quiet and listed as touched, carries no event id, and is not replayed
/// on resumption.
#[test]
fn a_silent_sse_stream_gets_a_keep_alive_comment_after_the_interval() {
    let every = Duration::from_secs(5);
    let mut rig = Rig::new(EndpointConfig {
        sse_keep_alive: Some(every),
        ..EndpointConfig::default()
    });
    let start = rig.http.now;
    let sid = rig.http.open("2025-11-25");
    let get = rig.http.get(&sid, None);
    let Body::Stream(conn) = get.body else {
        panic!("GET is a stream")
    };
    let (primed, _) = rig.drain(&get.body);
    let priming_id = primed[0].0.clone();
    assert!(
        rig.http
            .endpoint
            .poll_timeout()
            .is_some_and(|t| t <= start + every),
        "the keep-alive is a deadline"
    );
    // 3 s in: nothing due; then a notification is written.
    rig.http.now = start + Duration::from_secs(3);
    rig.http.endpoint.handle_timeout(rig.http.now);
    assert_eq!(pull_raw(&mut rig.http.endpoint, conn), (Vec::new(), false));
    rig.add_tool(&sid);
    let (events, _) = rig.drain(&get.body);
    assert_eq!(events.len(), 1, "{events:?}");
    // 6 s in: 5 s after opening, but only 3 s after the write: still nothing.
    rig.http.now = start + Duration::from_secs(6);
    rig.http.endpoint.handle_timeout(rig.http.now);
    assert!(rig.http.endpoint.stream_quiet(conn));
    assert_eq!(pull_raw(&mut rig.http.endpoint, conn), (Vec::new(), false));
    assert!(
        rig.http
            .endpoint
            .poll_timeout()
            .is_some_and(|t| t <= start + Duration::from_secs(8)),
        "filed again for 5 s after the write"
    );
    // 8 s in: 5 s of silence.
    let mut touched = Vec::new();
    let _ = rig.http.endpoint.touched_streams(&mut touched);
    touched.clear();
    rig.http.now = start + Duration::from_secs(8);
    rig.http.endpoint.handle_timeout(rig.http.now);
    assert!(
        !rig.http.endpoint.stream_quiet(conn),
        "a due keep-alive is not quiet"
    );
    assert!(rig.http.endpoint.touched_streams(&mut touched));
    assert!(touched.contains(&conn), "{touched:?}");
    let (bytes, ended) = pull_raw(&mut rig.http.endpoint, conn);
    assert_eq!(
        bytes,
        b": keep-alive\n\n",
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    assert!(!ended);
    assert!(rig.http.endpoint.stream_quiet(conn));
    // And again after another 5 s of silence.
    rig.http.now = start + Duration::from_secs(13);
    rig.http.endpoint.handle_timeout(rig.http.now);
    assert_eq!(
        pull_raw(&mut rig.http.endpoint, conn).0,
        b": keep-alive\n\n"
    );
    // Resumption after the priming event replays the notification only.
    rig.http.endpoint.stream_closed(conn);
    let resumed = rig.http.get(&sid, Some(&priming_id));
    let Body::Stream(resumed_conn) = resumed.body else {
        panic!("a resumed GET is a stream")
    };
    let (raw, _) = pull_raw(&mut rig.http.endpoint, resumed_conn);
    let text = String::from_utf8(raw).unwrap();
    assert!(!text.contains("keep-alive"), "{text}");
    assert_eq!(text.matches("id: ").count(), 1, "{text}");
    assert!(text.contains("notifications/tools/list_changed"), "{text}");
}

/// A POST's SSE stream gets the keep-alive while its handler waits; once it ended its
/// deadline is gone. Turned off, no stream gets one.
#[test]
fn post_streams_get_keep_alives_until_they_end_and_none_when_off() {
    let every = Duration::from_secs(5);
    for on in [true, false] {
        let mut rig = Rig::new(EndpointConfig {
            sse_keep_alive: on.then_some(every),
            idle_timeout: Duration::from_secs(3600),
            ..EndpointConfig::default()
        });
        let start = rig.http.now;
        let sid = rig.http.open("2025-06-18");
        let waiting = rig.post(Some(&sid), call(1, "wait"));
        assert_eq!(waiting.get("content-type"), Some("text/event-stream"));
        let Body::Stream(conn) = waiting.body else {
            panic!("an SSE answer is a stream")
        };
        rig.http.run_jobs();
        let (events, _) = rig.drain(&waiting.body);
        assert_eq!(events.len(), 1, "the log: {events:?}");
        rig.http.now = start + every;
        rig.http.endpoint.handle_timeout(rig.http.now);
        let (bytes, _) = pull_raw(&mut rig.http.endpoint, conn);
        let expected: &[u8] = if on { b": keep-alive\n\n" } else { b"" };
        assert_eq!(bytes, expected, "on: {on}");
        rig.release_gates();
        let (events, ended) = rig.drain(&waiting.body);
        assert!(ended && events.len() == 1, "{events:?}");
        // Nothing of the ended stream is left to fire: the next deadline is the session's.
        assert!(
            rig.http
                .endpoint
                .poll_timeout()
                .is_none_or(|t| t > rig.http.now + Duration::from_secs(600)),
            "on: {on}"
        );
    }
}

#[test]
fn a_peer_limit_refuses_a_new_session_with_429_and_retry_after() {
    let mut rig = Rig::new(EndpointConfig {
        peer_limit: Some(Arc::new(MaxSessionsPerPeer::new(2))),
        ..Default::default()
    });
    let from = |rig: &Rig, last: u8, subject: Option<&str>| {
        let mut head = rig.post_head(None);
        head.peer = Peer {
            addr: Some(std::net::IpAddr::from([10, 0, 0, last])),
            subject: subject.map(str::to_owned),
        };
        head
    };
    let head = from(&rig, 1, None);
    let first = rig.send(&head, init("2025-11-25"));
    let first = first.get("mcp-session-id").unwrap().to_string();
    assert_eq!(rig.send(&head, init("2025-11-25")).status, 200);
    let refused = rig.send(&head, init("2025-11-25"));
    assert_eq!(refused.status, 429);
    assert_eq!(refused.get("retry-after"), Some("10"));
    assert_eq!(json_body(&refused)["error"]["code"], -32000);
    assert_eq!(rig.http.endpoint.stats().peers_refused, 1);
    // Another address, and a bearer subject behind the same address, are other peers.
    let other = from(&rig, 2, None);
    assert_eq!(rig.send(&other, init("2025-11-25")).status, 200);
    let alice = from(&rig, 1, Some("alice"));
    assert_eq!(rig.send(&alice, init("2025-11-25")).status, 200);
    // A session that ends makes room for its peer again.
    let del =
        HttpRequestHead::new(HttpMethod::Delete, "/mcp").header("Mcp-Session-Id", first.as_str());
    assert_eq!(rig.send(&del, Value::Null).status, 200);
    assert_eq!(rig.send(&head, init("2025-11-25")).status, 200);
    // Requests inside a session are never limited.
    let sid = rig.http.open("2025-11-25");
    assert_eq!(rig.post(Some(&sid), call(1, "echo")).status, 200);
}
