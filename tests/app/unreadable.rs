//! JSON the grammar accepts but serde cannot read (a lone surrogate escape, nesting past its
//! depth limit, a number that overflows a float): refused with `-32602` and serde's reason,
//! never read as a missing value, by the stateful and the sessionless front ends alike.

use std::time::Instant;

use mcp_sansio::app::server::*;
use mcp_sansio::model::Implementation;
use mcp_sansio::testing::ServerRig;
use serde_json::{json, Value};

/// A typed parse that ignores `name`: it reads deep text without complaint.
#[derive(serde::Deserialize)]
struct Loose {
    #[serde(default)]
    other: Option<String>,
}

fn builder() -> ServerBuilder {
    let greet = Tool::new(
        "greet",
        json!({"type": "object", "properties": {"name": {"type": "string"}}}),
    )
    .sync_handler(|call, _| {
        let name = call.arguments.get("name").and_then(Value::as_str);
        Ok(CallToolResult::text(format!(
            "Hello, {}!",
            name.unwrap_or("World")
        )))
    });
    let prompt =
        Prompt::new("hi").handler(|_, _| async move { Ok(GetPromptResult::user_text("hi")) });
    let count = |call: ToolCall| format!("{} arguments", call.arguments.len());
    let open = Tool::new("open", json!({"type": "object"}))
        .sync_handler(move |call, _| Ok(CallToolResult::text(count(call))));
    let no_properties = Tool::new("no_properties", json!({"type": "object", "properties": {}}))
        .sync_handler(move |call, _| Ok(CallToolResult::text(count(call))));
    let typed = Tool::new("typed", json!({"type": "object"})).sync_handler(|call, _| {
        let loose: Loose = call.arguments.parse()?;
        Ok(CallToolResult::text(format!("other: {:?}", loose.other)))
    });
    Server::builder(Implementation::new("unreadable", "1"))
        .tool(greet)
        .tool(open)
        .tool(no_properties)
        .tool(typed)
        .prompt(prompt)
}

fn rig() -> ServerRig {
    session(builder())
}

/// A rig around a server from `builder`, in an initialized stateful session.
pub(crate) fn session(builder: ServerBuilder) -> ServerRig {
    let mut rig = ServerRig::new(builder, Instant::now());
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}});
    assert!(rig.call(&init).get("result").is_some());
    rig.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    rig
}

fn answer(rig: &mut ServerRig, frame: &str) -> Value {
    let out = rig.send_bytes(frame.to_owned().into());
    assert_eq!(out.len(), 1, "{out:?}");
    out.into_iter().next().unwrap()
}

#[test]
fn a_lone_surrogate_in_tool_arguments_is_invalid_params() {
    let mut rig = rig();
    for name in [r#""\ud800""#, r#""a\udc00b""#, r#""\ud83d""#] {
        let frame = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"greet","arguments":{{"name":{name}}}}}}}"#
        );
        let reply = answer(&mut rig, &frame);
        assert_eq!(reply["id"], 1);
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains("arguments cannot be read"), "{message}");
    }
    // A pair is one character, served as such.
    let frame = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"\ud83d\ude00"}}}"#;
    let reply = answer(&mut rig, frame);
    assert_eq!(
        reply["result"]["content"][0]["text"], "Hello, 😀!",
        "{reply}"
    );
}

#[test]
fn a_lone_surrogate_in_other_params_is_invalid_params_with_the_reason() {
    let mut rig = rig();
    let frame = r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"hi","arguments":{"a":"\ud800"}}}"#;
    let reply = answer(&mut rig, frame);
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.contains("params cannot be read"), "{message}");
}

/// A `tools/call` frame; `meta` is the params' `_meta` member (sessionless requests carry
/// their version there).
fn call_frame(id: u32, tool: &str, arguments: &str, meta: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}{meta}}}}}"#
    )
}

const SESSIONLESS_META: &str = r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}"#;

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// Arguments serde cannot read reach no schema check and no handler: for a typed property,
/// for schemas that admit any object (checked in the params' walk), for a handler that
/// parses into its own type and one that reads the map; over both front ends.
/// `prefix` starts the error message: the sessionless front end reads the whole params first
/// (for input responses and a request state), so it finds them unreadable there.
fn unreadable_arguments_are_refused(rig: &mut ServerRig, meta: &str, prefix: &str) {
    let values = [
        (nested(200), "recursion limit exceeded"),
        (nested(127), "recursion limit exceeded"),
        ("1e400".to_owned(), "number out of range"),
        ("9".repeat(400), "number out of range"),
    ];
    let mut id = 10;
    for tool in ["greet", "open", "no_properties", "typed"] {
        for (value, reason) in &values {
            id += 1;
            for arguments in [
                format!(r#"{{"name":{value}}}"#),
                format!(r#"{{"a":[{{"b":{value}}}]}}"#),
            ] {
                let reply = answer(rig, &call_frame(id, tool, &arguments, meta));
                assert_eq!(reply["id"], id, "{reply}");
                assert_eq!(reply["error"]["code"], -32602, "{tool}: {reply}");
                let message = reply["error"]["message"].as_str().unwrap();
                assert!(message.starts_with(prefix), "{message}");
                assert!(message.contains(reason), "{message}");
            }
        }
    }
    // Within serde's limits the same shapes are served (or refused by the schema).
    let fine = call_frame(1, "open", &format!(r#"{{"name":{}}}"#, nested(100)), meta);
    let reply = answer(rig, &fine);
    assert_eq!(
        reply["result"]["content"][0]["text"], "1 arguments",
        "{reply}"
    );
    let typed = call_frame(2, "greet", r#"{"name":1e300}"#, meta);
    let reply = answer(rig, &typed);
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("invalid arguments: /name"), "{text}");
    let parsed = call_frame(3, "typed", r#"{"other":"x","n":-1E-5}"#, meta);
    let reply = answer(rig, &parsed);
    assert_eq!(
        reply["result"]["content"][0]["text"], r#"other: Some("x")"#,
        "{reply}"
    );
}

#[test]
fn unreadable_tool_arguments_are_invalid_params_in_a_session() {
    unreadable_arguments_are_refused(&mut rig(), "", "arguments cannot be read: ");
}

#[test]
fn unreadable_tool_arguments_are_invalid_params_sessionless() {
    let mut rig = ServerRig::new(builder(), Instant::now());
    unreadable_arguments_are_refused(&mut rig, SESSIONLESS_META, "params cannot be read: ");
}

/// Sessionless params serde cannot read (past the arguments, where input responses and a
/// request state would be) are refused, not read as no params.
#[test]
fn unreadable_sessionless_params_are_invalid_params() {
    let mut rig = ServerRig::new(builder(), Instant::now());
    let meta = format!(
        r#","inputResponses":{{"a":{}}}{SESSIONLESS_META}"#,
        nested(200)
    );
    let reply = answer(&mut rig, &call_frame(5, "open", "{}", &meta));
    assert_eq!(reply["id"], 5, "{reply}");
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("params cannot be read: recursion limit exceeded"),
        "{message}"
    );
}
