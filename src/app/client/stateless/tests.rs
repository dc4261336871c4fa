//! The 2026-07-28 client against a scripted server: `_meta`, ids, MRTR retries with the
//! byte-exact state, the -32022 retry, the round cap, headers and annotation checks.

use std::collections::VecDeque;
use std::time::Instant;

use serde_json::{json, Value};

use super::*;
use crate::app::client::Client;
use crate::model::{ElicitAction, ElicitResult, Implementation};
use crate::outgoing::{Action, OutgoingRequest};

/// Answers each attempt with the next scripted message (its id set to the attempt's); no
/// message left fails the exchange.
pub(super) struct Script {
    replies: VecDeque<Value>,
    pub(super) sent: Vec<(Value, OutgoingRequest)>,
}

impl Script {
    pub(super) fn new(replies: Vec<Value>) -> Self {
        Script {
            replies: replies.into(),
            sent: Vec::new(),
        }
    }

    /// Performs every action of `m` at `now` (a whole JSON response per request).
    pub(super) fn serve(&mut self, m: &mut StatelessMachine, now: Instant) {
        while let Some(action) = m.poll_action() {
            let Action::Send(request) = action else {
                continue;
            };
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            let id = request.id;
            self.sent.push((body.clone(), request));
            let Some(mut message) = self.replies.pop_front() else {
                m.handle_response_failed(now, id, "script ended");
                continue;
            };
            message["jsonrpc"] = json!("2.0");
            message["id"] = body["id"].clone();
            let bytes = serde_json::to_vec(&message).unwrap();
            m.handle_response_head(now, id, 200, [("Content-Type", "application/json")]);
            m.handle_response_body(now, id, bytes.into());
            m.handle_response_end(now, id);
        }
    }
}

/// Serves `m` until call `id` is done; its result.
pub(super) fn settle(
    m: &mut StatelessMachine,
    script: &mut Script,
    now: Instant,
    id: CallId,
) -> Result<Value, ClientError> {
    for _ in 0..1000 {
        script.serve(m, now);
        while let Some(event) = m.poll_event() {
            if let StatelessEvent::Done { call, result } = event {
                if call == id {
                    return result;
                }
            }
        }
    }
    panic!("the call never ended");
}

/// `method` with `params` on `m`, served by `script`, to its end.
pub(super) fn request(
    m: &mut StatelessMachine,
    script: &mut Script,
    method: &str,
    params: Option<Value>,
) -> Result<Value, ClientError> {
    let now = Instant::now();
    let id = m.start_call(now, method, params);
    settle(m, script, now, id)
}

fn client() -> StatelessMachine {
    let builder = Client::builder(Implementation::new("t", "1")).elicitation_sync(|_, _| {
        Ok(ElicitResult {
            action: ElicitAction::Accept,
            content: Some(json!({"confirmed": true}).as_object().unwrap().clone()),
            meta: None,
            extra: Default::default(),
        })
    });
    StatelessMachine::new(StatelessClient::new(&builder), Wire::Http, Instant::now())
}

fn header<'a>(request: &'a OutgoingRequest, name: &str) -> Option<&'a str> {
    request.header(name)
}

#[test]
fn every_request_carries_meta_and_version_header() {
    let mut c = client();
    let mut t = Script::new(vec![
        json!({"result": {"resultType": "complete", "tools": []}}),
    ]);
    request(&mut c, &mut t, "tools/list", None).unwrap();
    let (body, headers) = &t.sent[0];
    let meta = &body["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], "t");
    assert!(meta["io.modelcontextprotocol/clientCapabilities"]["elicitation"].is_object());
    assert_eq!(header(headers, "MCP-Protocol-Version"), Some("2026-07-28"));
    assert_eq!(header(headers, "Mcp-Method"), Some("tools/list"));
}

#[test]
fn input_required_retries_with_new_id_responses_and_exact_state() {
    let mut c = client();
    let state = "  opaque+/=state\u{e9} ";
    let ask = json!({"method": "elicitation/create", "params": {"message": "ok?",
        "requestedSchema": {"type": "object", "properties": {"confirmed": {"type": "boolean"}}}}});
    let mut t = Script::new(vec![
        json!({"result": {"resultType": "complete", "tools": [{"name": "x", "inputSchema": {"type": "object"}}]}}),
        json!({"result": {"resultType": "input_required", "inputRequests": {"confirm": ask}, "requestState": state}}),
        json!({"result": {"resultType": "input_required", "inputRequests": {"again": ask}}}),
        json!({"result": {"content": []}}),
    ]);
    let result = request(&mut c, &mut t, "tools/call", Some(json!({"name": "x"}))).unwrap();
    assert_eq!(
        result,
        json!({"content": []}),
        "no resultType reads as complete"
    );
    let ids: Vec<_> = t.sent.iter().map(|(b, _)| b["id"].clone()).collect();
    assert_eq!(ids, [json!(1), json!(2), json!(3), json!(4)]);
    let first = &t.sent[1].0["params"];
    assert!(first.get("inputResponses").is_none() && first.get("requestState").is_none());
    let second = &t.sent[2].0["params"];
    assert_eq!(second["requestState"], state);
    assert_eq!(second["inputResponses"]["confirm"]["action"], "accept");
    let third = &t.sent[3].0["params"];
    assert!(
        third.get("requestState").is_none(),
        "no state sent when none came"
    );
    assert!(third["inputResponses"].get("again").is_some());
    assert!(third["inputResponses"].get("confirm").is_none());
}

#[test]
fn unsupported_version_retries_once_with_a_listed_version() {
    let mut c = client();
    let refusal = json!({"error": {"code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": ["2025-11-25", "2026-07-28"], "requested": "2026-07-28"}}});
    let mut t = Script::new(vec![
        refusal.clone(),
        json!({"result": {"resultType": "complete"}}),
    ]);
    request(&mut c, &mut t, "server/discover", None).unwrap();
    assert_eq!(t.sent.len(), 2);
    assert_ne!(t.sent[0].0["id"], t.sent[1].0["id"]);
    // A second refusal of the same call is final.
    let mut t = Script::new(vec![refusal.clone(), refusal]);
    let err = request(&mut c, &mut t, "server/discover", None).unwrap_err();
    assert!(
        matches!(err, ClientError::Rpc(ref e) if e.code == -32022),
        "{err}"
    );
    // A list without a stateless version we speak is final at once.
    let stateful_only = json!({"error": {"code": -32022, "message": "no",
        "data": {"supported": ["2025-11-25"], "requested": "2026-07-28"}}});
    let mut t = Script::new(vec![stateful_only]);
    assert!(request(&mut c, &mut t, "server/discover", None).is_err());
    assert_eq!(t.sent.len(), 1);
}

#[test]
fn input_rounds_are_capped() {
    let mut c = client();
    c.client_mut().set_max_input_rounds(3);
    let ask = json!({"result": {"resultType": "input_required", "inputRequests": {"k":
        {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}}}}});
    let mut t = Script::new(vec![ask; 10]);
    let err = request(&mut c, &mut t, "prompts/get", Some(json!({"name": "p"}))).unwrap_err();
    assert!(matches!(err, ClientError::TooManyRounds(3)), "{err}");
    assert_eq!(t.sent.len(), 4);
}

#[test]
fn an_input_without_a_handler_fails_the_call() {
    let mut c = client();
    let mut t = Script::new(vec![json!({"result": {"resultType": "input_required",
        "inputRequests": {"r": {"method": "roots/list"}}}})]);
    let err = request(
        &mut c,
        &mut t,
        "resources/read",
        Some(json!({"uri": "a:b"})),
    )
    .unwrap_err();
    assert!(matches!(err, ClientError::Input(_)), "{err}");
}

#[test]
fn tool_calls_mirror_annotated_arguments() {
    let mut c = client();
    let tools = json!({"result": {"tools": [{"name": "t", "inputSchema": {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "n": {"type": "integer", "x-mcp-header": "N"},
        "flag": {"type": "boolean", "x-mcp-header": "Flag"},
        "uni": {"type": "string", "x-mcp-header": "Uni"},
        "pad": {"type": "string", "x-mcp-header": "Pad"},
        "nothing": {"type": "string", "x-mcp-header": "Nothing"},
        "plain": {"type": "string"}}}}]}});
    let mut t = Script::new(vec![tools, json!({"result": {"content": []}})]);
    let args = json!({"region": "us west", "n": 42, "flag": false, "uni": "é", "pad": " x",
        "nothing": null, "plain": "p"});
    request(
        &mut c,
        &mut t,
        "tools/call",
        Some(json!({"name": "t", "arguments": args})),
    )
    .unwrap();
    let headers = &t.sent[1].1;
    assert_eq!(header(headers, "Mcp-Name"), Some("t"));
    assert_eq!(header(headers, "Mcp-Param-Region"), Some("us west"));
    assert_eq!(header(headers, "Mcp-Param-N"), Some("42"));
    assert_eq!(header(headers, "Mcp-Param-Flag"), Some("false"));
    assert_eq!(header(headers, "Mcp-Param-Uni"), Some("=?base64?w6k=?="));
    assert_eq!(header(headers, "Mcp-Param-Pad"), Some("=?base64?IHg=?="));
    assert_eq!(header(headers, "Mcp-Param-Nothing"), None);
    assert_eq!(header(headers, "Mcp-Param-Plain"), None);
}

#[test]
fn tools_with_invalid_annotations_are_dropped_and_never_called() {
    let mut c = client();
    let prop = |schema: Value| json!({"type": "object", "properties": schema});
    let mut listing = json!({"tools": [
        {"name": "ok", "inputSchema": prop(json!({"r": {"type": "string", "x-mcp-header": "Region"}}))},
        {"name": "empty", "inputSchema": prop(json!({"v": {"type": "string", "x-mcp-header": ""}}))},
        {"name": "obj", "inputSchema": prop(json!({"v": {"type": "object", "x-mcp-header": "V"}}))},
        {"name": "num", "inputSchema": prop(json!({"v": {"type": "number", "x-mcp-header": "V"}}))},
        {"name": "dup", "inputSchema": prop(json!({"a": {"type": "string", "x-mcp-header": "My"},
            "b": {"type": "string", "x-mcp-header": "my"}}))},
        {"name": "space", "inputSchema": prop(json!({"v": {"type": "string", "x-mcp-header": "A B"}}))},
        {"name": "colon", "inputSchema": prop(json!({"v": {"type": "string", "x-mcp-header": "A:B"}}))},
        {"name": "accent", "inputSchema": prop(json!({"v": {"type": "string", "x-mcp-header": "Ré"}}))},
        {"name": "tab", "inputSchema": prop(json!({"v": {"type": "string", "x-mcp-header": "A\tB"}}))},
        {"name": "notstr", "inputSchema": prop(json!({"v": {"type": "string", "x-mcp-header": 7}}))}
    ]});
    let dropped = c.client_mut().learn_tools(&mut listing);
    assert_eq!(dropped.len(), 9, "{dropped:?}");
    assert_eq!(listing["tools"].as_array().unwrap().len(), 1);
    let mut t = Script::new(vec![]);
    let err = request(&mut c, &mut t, "tools/call", Some(json!({"name": "dup"}))).unwrap_err();
    assert!(matches!(err, ClientError::Input(_)));
    assert!(t.sent.is_empty(), "a dropped tool is never called");
}

#[test]
fn sse_bodies_skip_notifications() {
    let body = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n\
data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"resultType\":\"complete\",\"x\":1}}\n\n";
    let reply = reply_from_http_body(Some("text/event-stream"), body, 7).unwrap();
    assert!(matches!(reply, Reply::Complete(ref v) if v["x"] == 1));
    assert_eq!(
        reply_from_http_body(Some("text/event-stream"), body, 8).unwrap_err(),
        ReplyError::NoResponse
    );
    assert!(reply_from_http_body(None, b"<html>", 1).is_err());
}

#[test]
fn the_probe_verdict_follows_the_outcome() {
    let ok = Ok(json!({"supportedVersions": ["2026-07-28"]}));
    assert_eq!(
        era_from_probe(&ok, "2026-07-28"),
        Era::Stateless("2026-07-28".into())
    );
    let other = Ok(json!({"supportedVersions": ["2027-01-01"]}));
    assert!(matches!(
        era_from_probe(&other, "2026-07-28"),
        Era::Stateful(_)
    ));
    let anything = Ok(json!({"resultType": "complete"}));
    assert!(matches!(
        era_from_probe(&anything, "2026-07-28"),
        Era::Stateful(_)
    ));
    let err = Err(ClientError::Http { status: 404 });
    assert!(matches!(
        era_from_probe(&err, "2026-07-28"),
        Era::Stateful(_)
    ));
}
