//! The Streamable HTTP endpoint's 2026-07-28 rules, with a real app `Server` per exchange:
//! routing by `MCP-Protocol-Version`, POST only, the mirrored headers (-32020), the statuses of
//! refusals (400/404), no session id, SSE for request-scoped notifications, an input-required
//! round trip across two machines, and stateful sessions unchanged beside it.

use std::time::Instant;

use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::http::*;
use mcp_sansio::model::Implementation;
use mcp_sansio::model::LoggingLevel;
use mcp_sansio::stateless::RequestStateKey;
use mcp_sansio::testing::HttpRig;
use serde_json::{json, Value};

fn server(now: Instant) -> Server {
    let schema = json!({"type": "object"});
    Server::builder(Implementation::new("http-stateless", "1"))
        .tool(Tool::new("echo", schema.clone()).sync_handler(|_, _| Ok(CallToolResult::text("hi"))))
        .tool(Tool::new("chatty", schema.clone()).sync_handler(|_, ctx| {
            ctx.progress(1.0, None, None);
            ctx.log(LoggingLevel::Info, None, json!("working"));
            Ok(CallToolResult::text("done"))
        }))
        .tool(Tool::new("greet", schema).handler(|_, ctx| async move {
            let a = ctx.elicit(json!({"message": "Name?"})).await;
            let name = a.map(|a| a["content"]["name"].clone()).unwrap_or_default();
            Ok(CallToolResult::text(format!("Hello, {name}")))
        }))
        .tool(
            Tool::new(
                "deploy",
                json!({"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "replicas": {"type": "integer", "x-mcp-header": "Replicas"},
                    "note": {"type": "string"},
                }}),
            )
            .sync_handler(|_, _| Ok(CallToolResult::text("deployed"))),
        )
        .request_state_key(RequestStateKey::new(b"shared key".to_vec(), 60_000))
        .build(now)
}

/// The shared HTTP rig; requests here carry the 2026-07-28 headers.
struct Rig {
    http: HttpRig,
}

const V: &str = "2026-07-28";

impl Rig {
    fn new() -> Rig {
        Rig {
            http: HttpRig::new(EndpointConfig::default(), server, Instant::now()),
        }
    }

    fn head(
        method: HttpMethod,
        version: Option<&str>,
        mcp_method: Option<&str>,
    ) -> HttpRequestHead {
        let mut h = HttpRequestHead::new(method, "/mcp")
            .header("Host", "localhost:3000")
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        if let Some(v) = version {
            h = h.header("MCP-Protocol-Version", v);
        }
        if let Some(m) = mcp_method {
            h = h.header("Mcp-Method", m);
        }
        h
    }

    fn send(&mut self, head: &HttpRequestHead, body: &Value) -> HttpResponse {
        let response = self.http.request(head, body.to_string());
        self.http.run_jobs();
        response
    }

    /// A well-formed 2026-07-28 POST of `body` (headers mirrored from it).
    fn post(&mut self, body: &Value) -> HttpResponse {
        self.http.post_stateless(body)
    }

    /// Every JSON-RPC message of a response (a JSON body or an SSE stream).
    fn messages(&mut self, resp: &HttpResponse) -> Vec<Value> {
        self.http.messages(resp)
    }
}

fn request(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[test]
fn a_stateless_request_is_served_without_a_session() {
    let mut rig = Rig::new();
    let resp = rig.post(&request(1, "tools/call", json!({"name": "echo"})));
    assert_eq!(resp.status, 200);
    assert!(resp.get("mcp-session-id").is_none());
    let msgs = rig.messages(&resp);
    assert_eq!(msgs[0]["result"]["resultType"], "complete");
    assert_eq!(msgs[0]["result"]["content"][0]["text"], "hi");
    let resp = rig.post(&request(2, "server/discover", json!({})));
    assert_eq!(rig.messages(&resp)[0]["result"]["supportedVersions"][0], V);
    assert_eq!(
        rig.http.endpoint.session_count(),
        0,
        "exchanges leave nothing behind"
    );
}

#[test]
fn refusals_keep_their_status() {
    let mut rig = Rig::new();
    // No _meta: 400 / -32602 with the request id.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}});
    let resp = rig.post(&body);
    assert_eq!(resp.status, 400);
    let m = &rig.messages(&resp)[0];
    assert_eq!(
        (m["error"]["code"].clone(), m["id"].clone()),
        (json!(-32602), json!(1))
    );
    // Unknown version in header and body: 400 / -32022.
    let mut body = request(2, "tools/list", json!({}));
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let head = Rig::head(HttpMethod::Post, Some("v999.0.0"), Some("tools/list"));
    let resp = rig.send(&head, &body);
    assert_eq!(resp.status, 400);
    assert_eq!(rig.messages(&resp)[0]["error"]["code"], -32022);
    // Removed or unknown methods: 404 / -32601, initialize included.
    for method in ["initialize", "ping", "logging/setLevel", "unknown/method"] {
        let resp = rig.post(&request(3, method, json!({})));
        assert_eq!(resp.status, 404, "{method}");
        assert_eq!(rig.messages(&resp)[0]["error"]["code"], -32601);
    }
}

#[test]
fn mirrored_headers_must_match_the_body() {
    let mut rig = Rig::new();
    let body = request(1, "tools/call", json!({"name": "echo"}));
    let cases = [
        // Header 2026-07-28 but _meta v999: the mismatch wins over the version.
        (Some(V), Some("tools/call"), Some("echo"), Some("v999.0.0")),
        (Some(V), None, Some("echo"), None),
        (Some(V), Some("TOOLS/CALL"), Some("echo"), None),
        (Some(V), Some("tools/call"), None, None),
        (Some(V), Some("tools/call"), Some("other"), None),
    ];
    for (version, method, name, meta_version) in cases {
        let mut head = Rig::head(HttpMethod::Post, version, method);
        if let Some(n) = name {
            head = head.header("Mcp-Name", n);
        }
        let mut body = body.clone();
        if let Some(v) = meta_version {
            body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(v);
        }
        let resp = rig.send(&head, &body);
        assert_eq!(resp.status, 400, "{method:?} {name:?} {meta_version:?}");
        let m = &rig.messages(&resp)[0];
        assert_eq!(m["error"]["code"], -32020);
        assert_eq!(m["id"], 1);
    }
    // A mirrored header given twice, even with the same value, has no one meaning.
    for (name, value) in [("mcp-method", "tools/call"), ("MCP-NAME", "echo")] {
        let head = Rig::head(HttpMethod::Post, Some(V), Some("tools/call"))
            .header("Mcp-Name", "echo")
            .header(name, value);
        let resp = rig.send(&head, &body);
        assert_eq!(resp.status, 400, "{name}");
        let m = &rig.messages(&resp)[0];
        assert_eq!(m["error"]["code"], -32020, "{m}");
        assert!(
            m["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("more than once"),
            "{m}"
        );
    }
    // Whitespace around values and a base64 sentinel are accepted.
    let head = Rig::head(HttpMethod::Post, Some(" 2026-07-28 "), Some(" tools/call "))
        .header("Mcp-Name", "=?base64?ZWNobw==?=");
    assert_eq!(rig.send(&head, &body).status, 200);
}

#[test]
fn params_too_deep_or_not_an_object_are_invalid_params_not_a_header_mismatch() {
    let mut rig = Rig::new();
    let head = Rig::head(HttpMethod::Post, Some(V), Some("tools/call")).header("Mcp-Name", "echo");
    let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
    let bodies = [
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"echo","deep":{deep}}}}}"#
        ),
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":["echo"]}"#.to_owned(),
    ];
    for body in bodies {
        let resp = rig.http.request(&head, body);
        assert_eq!(resp.status, 400);
        let m = &rig.messages(&resp)[0];
        assert_eq!(
            (&m["error"]["code"], &m["id"]),
            (&json!(-32602), &json!(7)),
            "{m}"
        );
    }
    assert_eq!(
        rig.post(&request(8, "tools/call", json!({"name": "echo"})))
            .status,
        200
    );
}

#[test]
fn only_post_for_stateless_clients_while_sessions_keep_get_and_delete() {
    let mut rig = Rig::new();
    for method in [HttpMethod::Get, HttpMethod::Delete] {
        let resp = rig.send(&Rig::head(method, Some(V), None), &Value::Null);
        assert_eq!(resp.status, 405);
        assert_eq!(resp.get("allow"), Some("POST"));
    }
    // A stateful session opened beside it still works, GET and DELETE included.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}});
    let resp = rig.send(&Rig::head(HttpMethod::Post, None, None), &init);
    assert_eq!(resp.status, 200);
    let sid = resp.get("mcp-session-id").unwrap().to_owned();
    let stateful = |m: HttpMethod| {
        Rig::head(m, Some("2025-11-25"), None).header("Mcp-Session-Id", sid.clone())
    };
    let resp = rig.send(&stateful(HttpMethod::Get), &Value::Null);
    assert_eq!(resp.status, 200);
    let resp = rig.send(&stateful(HttpMethod::Delete), &Value::Null);
    assert_eq!(resp.status, 200);
}

#[test]
fn notifications_stream_before_the_result() {
    let mut rig = Rig::new();
    let mut body = request(1, "tools/call", json!({"name": "chatty"}));
    body["params"]["_meta"]["progressToken"] = json!("progress-test-1");
    body["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("debug");
    let resp = rig.post(&body);
    assert_eq!(resp.get("content-type"), Some("text/event-stream"));
    assert_eq!(resp.get("x-accel-buffering"), Some("no"));
    let msgs = rig.messages(&resp);
    let kinds: Vec<&str> = msgs
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("response"))
        .collect();
    assert_eq!(
        kinds,
        [
            "notifications/progress",
            "notifications/message",
            "response"
        ]
    );
}

#[test]
fn an_input_round_trip_spans_two_exchanges() {
    let mut rig = Rig::new();
    let resp = rig.post(&request(1, "tools/call", json!({"name": "greet"})));
    let first = rig.messages(&resp).remove(0);
    assert_eq!(first["result"]["resultType"], "input_required");
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let retry = request(
        2,
        "tools/call",
        json!({"name": "greet", "requestState": state,
               "inputResponses": {"elicitation-0": {"action": "accept", "content": {"name": "Al"}}}}),
    );
    let resp = rig.post(&retry);
    let done = rig.messages(&resp).remove(0);
    assert_eq!(done["result"]["content"][0]["text"], "Hello, \"Al\"");
    let mut tampered = retry.clone();
    tampered["params"]["requestState"] = json!(format!("{state}-TAMPERED"));
    tampered["id"] = json!(3);
    let resp = rig.post(&tampered);
    assert_eq!(rig.messages(&resp)[0]["error"]["code"], -32602);
}

/// (region argument, replicas argument, Mcp-Param-Region, Mcp-Param-Replicas, accepted)
type ParamCase = (
    Value,
    Value,
    Option<&'static str>,
    Option<&'static str>,
    bool,
);

#[test]
fn mcp_param_headers_must_mirror_annotated_arguments() {
    let mut rig = Rig::new();
    let hello = "=?base64?SGVsbG8=?=";
    let cases: [ParamCase; 11] = [
        (
            json!("us-west1"),
            json!(3),
            Some("us-west1"),
            Some("3"),
            true,
        ),
        (
            json!("us-west1"),
            json!(3),
            Some("  us-west1 "),
            Some("3"),
            true,
        ),
        (json!("Hello"), Value::Null, Some(hello), None, true),
        // Bad padding, then a character outside the alphabet: taken literally, so mismatched.
        (
            json!("Hello"),
            Value::Null,
            Some("=?base64?SGVsbG8?="),
            None,
            false,
        ),
        (
            json!("Hello"),
            Value::Null,
            Some("=?base64?SGVs!!!bG8=?="),
            None,
            false,
        ),
        // Without the full wrapper the value is literal.
        (json!("SGVsbG8="), Value::Null, Some("SGVsbG8="), None, true),
        (
            json!("=?base64?SGVsbG8="),
            Value::Null,
            Some("=?base64?SGVsbG8="),
            None,
            true,
        ),
        // Missing while the body has the value; present while the body has none.
        (json!("us-west1"), Value::Null, None, None, false),
        (Value::Null, Value::Null, Some("us-west1"), None, false),
        (
            json!("us-west1"),
            json!(3),
            Some("us-west1"),
            Some("4"),
            false,
        ),
        (json!("us-west1"), json!(3), Some("us-west1"), None, false),
    ];
    for (i, (region, replicas, h_region, h_replicas, accepted)) in cases.into_iter().enumerate() {
        let mut arguments = json!({"note": "unannotated, never mirrored"});
        if !region.is_null() {
            arguments["region"] = region.clone();
        }
        if !replicas.is_null() {
            arguments["replicas"] = replicas.clone();
        }
        let id = i64::try_from(i).unwrap() + 1;
        let body = request(
            id,
            "tools/call",
            json!({"name": "deploy", "arguments": arguments}),
        );
        let mut head =
            Rig::head(HttpMethod::Post, Some(V), Some("tools/call")).header("Mcp-Name", "deploy");
        if let Some(v) = h_region {
            head = head.header("mcp-param-region", v);
        }
        if let Some(v) = h_replicas {
            head = head.header("Mcp-Param-Replicas", v);
        }
        let resp = rig.send(&head, &body);
        let m = &rig.messages(&resp)[0];
        if accepted {
            assert_eq!(resp.status, 200, "case {i}: {m}");
            assert_eq!(m["result"]["content"][0]["text"], "deployed", "case {i}");
        } else {
            assert_eq!(resp.status, 400, "case {i}: {m}");
            assert_eq!(m["error"]["code"], -32020, "case {i}");
            assert_eq!(m["id"], id);
        }
    }
    // A tool without annotations ignores Mcp-Param-* headers.
    let body = request(99, "tools/call", json!({"name": "echo"}));
    let head = Rig::head(HttpMethod::Post, Some(V), Some("tools/call"))
        .header("Mcp-Name", "echo")
        .header("Mcp-Param-Region", "anything");
    assert_eq!(rig.send(&head, &body).status, 200);
}

#[test]
fn exchanges_never_count_against_sessions_and_have_their_own_limit() {
    let mut rig = Rig::new();
    rig.http.endpoint = Endpoint::new(
        EndpointConfig {
            max_sessions: 1,
            max_exchanges: 1,
            supported_versions: vec![
                mcp_sansio::model::ProtocolVersion::V2025_11_25,
                mcp_sansio::model::ProtocolVersion::V2025_03_26,
            ],
            ..Default::default()
        },
        server,
    );
    // One stateful session fills `max_sessions`.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}});
    let head = Rig::head(HttpMethod::Post, None, None);
    assert_eq!(rig.send(&head, &init).status, 200);
    assert_eq!(rig.http.endpoint.session_count(), 1);
    // A streamed answer holds its exchange until its body is pulled to the end.
    let mut chatty = request(1, "tools/call", json!({"name": "chatty"}));
    chatty["params"]["_meta"]["progressToken"] = json!("p");
    let streamed = rig.post(&chatty);
    assert_eq!(streamed.status, 200);
    assert!(matches!(streamed.body, Body::Stream(_)));
    assert_eq!(
        (
            rig.http.endpoint.exchange_count(),
            rig.http.endpoint.session_count()
        ),
        (1, 1)
    );
    let refused = rig.post(&request(2, "tools/call", json!({"name": "echo"})));
    assert_eq!(refused.status, 503);
    let body: Value = serde_json::from_slice(match &refused.body {
        Body::Full(b) => b,
        other => panic!("{other:?}"),
    })
    .unwrap();
    assert_eq!(body["error"]["code"], -32000);
    assert_eq!(rig.http.endpoint.stats().exchanges_refused, 1);
    assert_eq!(rig.http.endpoint.stats().sessions_refused, 0);
    let msgs = rig.messages(&streamed);
    assert_eq!(msgs.last().unwrap()["result"]["content"][0]["text"], "done");
    assert_eq!(rig.http.endpoint.exchange_count(), 0);
    let served = rig.post(&request(3, "tools/call", json!({"name": "echo"})));
    assert_eq!(served.status, 200);
    assert_eq!(rig.http.endpoint.session_count(), 1);
}
