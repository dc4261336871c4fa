//! The dual-era app server serving 2026-07-28 requests statelessly, in memory: validation
//! errors, `server/discover`, result shapes (`resultType`, cache hints, `serverInfo`),
//! request-scoped progress and logging, the era rules, and multi-round-trip inputs with an
//! HMAC-protected `requestState` (tampered, foreign-key, expired and replayed states refused).

use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use mcp_sansio::app::server::*;
use mcp_sansio::jsonrpc::RequestId;
use mcp_sansio::model::stateless::{CacheHints, InputRequest};
use mcp_sansio::model::Implementation;
use mcp_sansio::model::LoggingLevel;
use mcp_sansio::stateless::RequestStateKey;
use mcp_sansio::testing::ServerRig;
use serde_json::{json, Value};

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

fn builder() -> ServerBuilder {
    Server::builder(Implementation::new("stateless-test", "1.0.0"))
        .instructions("Use echo.")
        .tool(
            Tool::new("echo", json!({"type": "object"})).sync_handler(|call, _| {
                let text = call.arguments.get("text").and_then(Value::as_str);
                Ok(CallToolResult::text(text.unwrap_or("empty")))
            }),
        )
        .tool(
            Tool::new("greet", json!({"type": "object"})).handler(|_, ctx| async move {
                let answer = ctx
                    .elicit(json!({"message": "Name?", "requestedSchema": {"type": "object"}}))
                    .await
                    .map_err(|e| mcp_sansio::jsonrpc::ErrorObject::internal(e.to_string()))?;
                let name = answer["content"]["name"].as_str().unwrap_or("?").to_owned();
                Ok(CallToolResult::text(format!("Hello, {name}!")))
            }),
        )
        .tool(
            Tool::new("steps", json!({"type": "object"})).handler(|_, ctx| async move {
                let ask = |msg: &str| {
                    let params = json!({"message": msg, "requestedSchema": {"type": "object"}});
                    InputRequest {
                        method: "elicitation/create".into(),
                        params: Some(params),
                        extra: Default::default(),
                    }
                };
                let fail = |e: PeerError| mcp_sansio::jsonrpc::ErrorObject::internal(e.to_string());
                let one = ctx.input("step1", ask("Step 1")).await.map_err(fail)?;
                let two = ctx.input("step2", ask("Step 2")).await.map_err(fail)?;
                Ok(CallToolResult::text(format!(
                    "{} likes {}",
                    one["content"]["name"], two["content"]["color"]
                )))
            }),
        )
        .tool(
            Tool::new("everything", json!({"type": "object"})).handler(|_, ctx| async move {
                let fail = |e: PeerError| mcp_sansio::jsonrpc::ErrorObject::internal(e.to_string());
                let sample = json!({"messages": [], "maxTokens": 5});
                let (a, b, c) = join3(
                    ctx.elicit(json!({"message": "x", "requestedSchema": {"type": "object"}})),
                    ctx.sample(sample),
                    ctx.list_roots(),
                )
                .await;
                let (_, _, roots) = (a.map_err(fail)?, b.map_err(fail)?, c.map_err(fail)?);
                Ok(CallToolResult::text(format!("roots: {}", roots["roots"])))
            }),
        )
        .tool(
            Tool::new("needs_sampling", json!({"type": "object"})).handler(|_, ctx| async move {
                let r = ctx.sample(json!({"messages": [], "maxTokens": 5})).await;
                Ok(CallToolResult::text(format!("{r:?}")))
            }),
        )
        .tool(
            Tool::new("chatty", json!({"type": "object"})).sync_handler(|_, ctx| {
                ctx.progress(1.0, Some(2.0), None);
                ctx.log(LoggingLevel::Debug, None, json!("debug line"));
                ctx.log(LoggingLevel::Warning, None, json!("warning line"));
                ctx.progress(2.0, Some(2.0), None);
                Ok(CallToolResult::text("done"))
            }),
        )
        .tool(
            Tool::new("wait", json!({"type": "object"})).handler(|_, ctx| async move {
                ctx.cancelled().await;
                Ok(CallToolResult::text("cancelled"))
            }),
        )
        .resource(
            Resource::new("test://a", "a")
                .sync_handler(|r, _| Ok(vec![ResourceContents::text(r.uri, "A")])),
        )
        .prompt(Prompt::new("hello").sync_handler(|_, _| Ok(GetPromptResult::user_text("hi"))))
        .request_state_key(RequestStateKey::new(KEY.to_vec(), 60_000))
}

/// Polls three futures together (all of them on every poll, like a join).
async fn join3<A, B, C>(a: A, b: B, c: C) -> (A::Output, B::Output, C::Output)
where
    A: std::future::Future,
    B: std::future::Future,
    C: std::future::Future,
{
    let (mut a, mut b, mut c) = (Box::pin(a), Box::pin(b), Box::pin(c));
    let (mut ra, mut rb, mut rc) = (None, None, None);
    std::future::poll_fn(move |cx| {
        if ra.is_none() {
            ra = poll_once(a.as_mut(), cx);
        }
        if rb.is_none() {
            rb = poll_once(b.as_mut(), cx);
        }
        if rc.is_none() {
            rc = poll_once(c.as_mut(), cx);
        }
        if ra.is_some() && rb.is_some() && rc.is_some() {
            Poll::Ready((ra.take().unwrap(), rb.take().unwrap(), rc.take().unwrap()))
        } else {
            Poll::Pending
        }
    })
    .await
}

fn poll_once<F: std::future::Future>(
    f: std::pin::Pin<&mut F>,
    cx: &mut Context<'_>,
) -> Option<F::Output> {
    match f.poll(cx) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }
}

fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
    })
}

fn request(id: i64, method: &str, mut params: Value, caps: Value) -> Value {
    params["_meta"] = meta(caps);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A rig around the test server (or one built from `b`).
fn rig_from(b: ServerBuilder) -> ServerRig {
    ServerRig::new(b, Instant::now())
}

fn new_rig() -> ServerRig {
    rig_from(builder())
}

fn server_info() -> Value {
    json!({"name": "stateless-test", "version": "1.0.0"})
}

#[test]
fn discover_lists_versions_capabilities_and_server_info() {
    let mut rig = new_rig();
    let r = rig.call(&request(1, "server/discover", json!({}), json!({})));
    let result = &r["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 60000);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(result["supportedVersions"][0], "2026-07-28");
    assert!(result["supportedVersions"]
        .as_array()
        .unwrap()
        .contains(&json!("2025-11-25")));
    assert_eq!(result["instructions"], "Use echo.");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        server_info()
    );
    // Listen streams deliver list changes and resource updates: promised.
    assert_eq!(
        result["capabilities"]["tools"],
        json!({"listChanged": true})
    );
    assert_eq!(
        result["capabilities"]["resources"],
        json!({"listChanged": true, "subscribe": true})
    );
    assert_eq!(
        result["capabilities"]["prompts"],
        json!({"listChanged": true})
    );
    // Without listen streams, nothing of the kind is promised.
    let mut rig = rig_from(builder().max_listeners(0));
    let result = rig.call(&request(1, "server/discover", json!({}), json!({})))["result"].clone();
    assert_eq!(result["capabilities"]["tools"], json!({}));
    assert_eq!(result["capabilities"]["resources"], json!({}));
    assert_eq!(result["capabilities"]["prompts"], json!({}));
}

#[test]
fn results_carry_result_type_cache_hints_and_server_info() {
    let mut rig = rig_from(builder().stateless_cache(CacheHints::public(5000)));
    for (method, params) in [
        ("tools/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/read", json!({"uri": "test://a"})),
    ] {
        let r = rig.call(&request(2, method, params, json!({})));
        let result = &r["result"];
        assert_eq!(result["resultType"], "complete", "{method}");
        assert_eq!(result["ttlMs"], 5000, "{method}");
        assert_eq!(result["cacheScope"], "public", "{method}");
        assert_eq!(
            result["_meta"]["io.modelcontextprotocol/serverInfo"],
            server_info()
        );
    }
    for (method, params) in [
        (
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        ),
        ("prompts/get", json!({"name": "hello"})),
    ] {
        let r = rig.call(&request(3, method, params, json!({})));
        let result = &r["result"];
        assert_eq!(result["resultType"], "complete", "{method}");
        assert!(result.get("ttlMs").is_none(), "{method} is not cacheable");
        assert_eq!(
            result["_meta"]["io.modelcontextprotocol/serverInfo"],
            server_info()
        );
    }
    let r = rig.call(&request(
        4,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
        json!({}),
    ));
    assert_eq!(r["result"]["content"][0]["text"], "hi");
    assert_eq!(r["id"], 4);
}

#[test]
fn refusals_have_the_right_codes_and_statuses() {
    let mut rig = new_rig();
    let no_meta = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}});
    let r = rig.call(&no_meta);
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(r["id"], 1);
    assert_eq!(
        rig.server.stateless_status(&RequestId::number(1)),
        Some(400)
    );

    let mut bad = request(2, "tools/list", json!({}), json!({}));
    bad["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let r = rig.call(&bad);
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(r["error"]["data"]["requested"], "v999.0.0");
    assert_eq!(r["error"]["data"]["supported"][0], "2026-07-28");

    for (id, method) in [(3, "ping"), (4, "logging/setLevel"), (5, "nope/nope")] {
        let r = rig.call(&request(id, method, json!({}), json!({})));
        assert_eq!(r["error"]["code"], -32601, "{method}");
        assert_eq!(
            rig.server.stateless_status(&RequestId::number(id)),
            Some(404)
        );
    }
    // An unknown resource is -32602 (not -32002) with the uri.
    let r = rig.call(&request(
        6,
        "resources/read",
        json!({"uri": "test://zz"}),
        json!({}),
    ));
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(r["error"]["data"]["uri"], "test://zz");
}

#[test]
fn progress_and_logs_are_request_scoped() {
    let mut rig = new_rig();
    let mut with_level = request(1, "tools/call", json!({"name": "chatty"}), json!({}));
    with_level["params"]["_meta"]["progressToken"] = json!("p-1");
    with_level["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let out = rig.send(&with_level);
    let methods: Vec<&str> = out.iter().filter_map(|m| m["method"].as_str()).collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/message",
            "notifications/progress"
        ]
    );
    assert_eq!(out[0]["params"]["progressToken"], "p-1");
    assert_eq!(out[1]["params"]["data"], "warning line");
    assert_eq!(out.last().unwrap()["result"]["content"][0]["text"], "done");
    // Without a logLevel no message; without a progressToken no progress.
    let out = rig.send(&call_tool(2, "chatty", json!({})));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["result"]["resultType"], "complete");
}

#[test]
fn initialize_after_stateless_is_refused_and_stateless_inside_stateful_too() {
    let mut rig = new_rig();
    rig.call(&request(1, "tools/list", json!({}), json!({})));
    let init = json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}});
    let r = rig.call(&init);
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(r["error"]["data"]["supported"], json!(["2026-07-28"]));
    assert_eq!(r["error"]["data"]["requested"], "2025-11-25");

    // A stateful connection: initialize first, then a 2026 request is refused.
    let mut rig = new_rig();
    let r = rig.call(&init);
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    rig.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let r = rig.call(&request(3, "tools/list", json!({}), json!({})));
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(r["error"]["data"]["supported"], json!(["2025-11-25"]));
    // The session is untouched: a plain request still works, without 2026 members.
    let plain = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"});
    let r = rig.call(&plain);
    assert!(r["result"]["tools"].is_array());
    assert!(r["result"].get("resultType").is_none());
}

#[test]
fn before_any_2026_request_unmarked_frames_go_to_the_session() {
    let mut rig = new_rig();
    let r = rig.call(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    // The session's pre-initialize refusal, not a stateless one.
    assert!(r.get("error").is_some());
    assert_ne!(r["error"]["code"], -32602);
}

fn input_required(r: &Value) -> (Value, String) {
    let result = &r["result"];
    assert_eq!(result["resultType"], "input_required", "{r}");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        server_info()
    );
    let state = result["requestState"]
        .as_str()
        .expect("requestState")
        .to_owned();
    (result["inputRequests"].clone(), state)
}

/// A first `tools/call` of `tool`, from a client with `caps`.
fn call_tool(id: i64, tool: &str, caps: Value) -> Value {
    request(id, "tools/call", json!({"name": tool}), caps)
}

/// The input requests and state of the input-required answer to a first call of `tool`.
fn first_round(rig: &mut ServerRig, tool: &str, caps: &Value) -> (Value, String) {
    input_required(&rig.call(&call_tool(1, tool, caps.clone())))
}

fn retry(id: i64, tool: &str, answers: Value, state: &str, caps: Value) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": tool, "inputResponses": answers, "requestState": state}),
        caps,
    )
}

#[test]
fn elicitation_becomes_an_input_required_round_trip() {
    let mut rig = new_rig();
    let caps = json!({"elicitation": {}});
    let (inputs, state) = first_round(&mut rig, "greet", &caps);
    assert_eq!(inputs["elicitation-0"]["method"], "elicitation/create");
    assert_eq!(inputs["elicitation-0"]["params"]["message"], "Name?");

    let answer = json!({"elicitation-0": {"action": "accept", "content": {"name": "Alice"}}});
    let r = rig.call(&retry(2, "greet", answer.clone(), &state, caps.clone()));
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["content"][0]["text"], "Hello, Alice!");

    // A wrong key, or an answer of the wrong shape, asks again.
    let wrong = json!({"wrong_key": {"action": "accept", "content": {}}});
    input_required(&rig.call(&retry(3, "greet", wrong, &state, caps.clone())));
    let bad = json!({"elicitation-0": 12345});
    input_required(&rig.call(&retry(4, "greet", bad, &state, caps.clone())));
    // inputResponses: null is a first attempt again.
    let null = request(
        5,
        "tools/call",
        json!({"name": "greet", "inputResponses": null}),
        caps.clone(),
    );
    input_required(&rig.call(&null));
}

#[test]
fn tampered_foreign_expired_and_replayed_states_are_refused() {
    let mut rig = new_rig();
    let caps = json!({"elicitation": {}});
    let (_, state) = first_round(&mut rig, "greet", &caps);
    let answer = json!({"elicitation-0": {"action": "accept", "content": {"name": "A"}}});

    let tampered = format!("{state}-TAMPERED");
    let r = rig.call(&retry(2, "greet", answer.clone(), &tampered, caps.clone()));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // Flip one payload character.
    let mut flipped = state.clone().into_bytes();
    flipped[3] = if flipped[3] == b'A' { b'B' } else { b'A' };
    let flipped = String::from_utf8(flipped).unwrap();
    let r = rig.call(&retry(3, "greet", answer.clone(), &flipped, caps.clone()));
    assert_eq!(r["error"]["code"], -32602);

    // Minted by a server with another key.
    let mut other = rig_from(
        builder().request_state_key(RequestStateKey::new(b"another key".to_vec(), 60_000)),
    );
    let (_, foreign) = first_round(&mut other, "greet", &caps);
    let r = rig.call(&retry(4, "greet", answer.clone(), &foreign, caps.clone()));
    assert_eq!(r["error"]["code"], -32602);
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("integrity"));

    // Replayed on another request (other tool, or other arguments).
    let r = rig.call(&retry(5, "steps", answer.clone(), &state, caps.clone()));
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("another request"));
    let mut args = retry(6, "greet", answer.clone(), &state, caps.clone());
    args["params"]["arguments"] = json!({"x": 1});
    let r = rig.call(&args);
    assert_eq!(r["error"]["code"], -32602);

    // Expired: the wall clock moved past the 60 s lifetime.
    let r = rig.call(&retry(7, "greet", answer.clone(), &state, caps.clone()));
    assert_eq!(r["result"]["resultType"], "complete", "still valid: {r}");
    rig.advance(Duration::from_secs(61));
    let r = rig.call(&retry(8, "greet", answer, &state, caps));
    assert!(r["error"]["message"].as_str().unwrap().contains("expired"));
}

#[test]
fn a_server_without_a_key_mints_no_state_and_accepts_none() {
    let mut rig = rig_from(Server::builder(Implementation::new("k", "1")).tool(
        Tool::new("greet", json!({"type": "object"})).handler(|_, ctx| async move {
            let a = ctx.elicit(json!({"message": "?"})).await;
            Ok(CallToolResult::text(format!("{}", a.is_ok())))
        }),
    ));
    let caps = json!({"elicitation": {}});
    let r = rig.call(&call_tool(1, "greet", caps.clone()));
    assert_eq!(r["result"]["resultType"], "input_required");
    assert!(r["result"].get("requestState").is_none());
    let answer = json!({"elicitation-0": {"action": "decline"}});
    let r = rig.call(&request(
        2,
        "tools/call",
        json!({"name": "greet", "inputResponses": answer}),
        caps.clone(),
    ));
    assert_eq!(r["result"]["content"][0]["text"], "true");
    let r = rig.call(&retry(3, "greet", json!({}), "x.y", caps));
    assert_eq!(r["error"]["code"], -32602);
}

#[test]
fn rounds_accumulate_answers_in_the_state() {
    let mut rig = new_rig();
    let caps = json!({"elicitation": {}});
    let (inputs, s1) = first_round(&mut rig, "steps", &caps);
    assert_eq!(
        inputs.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["step1"]
    );
    let a1 = json!({"step1": {"action": "accept", "content": {"name": "Bo"}}});
    let (inputs, s2) = input_required(&rig.call(&retry(2, "steps", a1, &s1, caps.clone())));
    assert_eq!(
        inputs.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["step2"]
    );
    assert_ne!(s1, s2);
    // The third call carries only step2; step1 comes from the state.
    let a2 = json!({"step2": {"action": "accept", "content": {"color": "red"}}});
    let r = rig.call(&retry(3, "steps", a2, &s2, caps));
    assert_eq!(r["result"]["content"][0]["text"], "\"Bo\" likes \"red\"");
}

#[test]
fn concurrent_inputs_come_in_one_round() {
    let mut rig = new_rig();
    let caps = json!({"elicitation": {}, "sampling": {}, "roots": {}});
    let (inputs, state) = first_round(&mut rig, "everything", &caps);
    let keys: Vec<&String> = inputs.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["elicitation-0", "roots-2", "sampling-1"]);
    assert_eq!(inputs["roots-2"]["method"], "roots/list");
    let answers = json!({
        "elicitation-0": {"action": "accept", "content": {}},
        "sampling-1": {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"},
        "roots-2": {"roots": [{"uri": "file:///r"}]},
    });
    let r = rig.call(&retry(2, "everything", answers, &state, caps));
    assert_eq!(
        r["result"]["content"][0]["text"],
        "roots: [{\"uri\":\"file:///r\"}]"
    );
}

#[test]
fn an_input_the_client_cannot_answer_is_minus_32021() {
    let mut rig = new_rig();
    let r = rig.call(&call_tool(1, "needs_sampling", json!({})));
    assert_eq!(r["error"]["code"], -32021);
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
    assert_eq!(
        rig.server.stateless_status(&RequestId::number(1)),
        Some(400)
    );
    let r = rig.call(&call_tool(2, "needs_sampling", json!({"sampling": {}})));
    assert_eq!(r["result"]["resultType"], "input_required");
    assert!(r["result"]["inputRequests"]["sampling-0"].is_object());
}

#[test]
fn lists_never_require_input_and_cancel_ends_a_stateless_request() {
    let mut rig = new_rig();
    let out = rig.send(&call_tool(1, "wait", json!({})));
    assert!(out.is_empty(), "{out:?}");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1}});
    let out = rig.send(&cancel);
    assert!(out.is_empty(), "no response after cancellation: {out:?}");
    let r = rig.call(&request(2, "tools/list", json!({}), json!({})));
    assert_eq!(r["result"]["resultType"], "complete");
}
