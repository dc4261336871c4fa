//! JSON the grammar accepts but Rust strings cannot hold (a lone surrogate escape): refused
//! with `-32602` and serde's reason, never read as a missing value.

use std::time::Instant;

use mcp_sansio::app::server::*;
use mcp_sansio::model::Implementation;
use mcp_sansio::testing::ServerRig;
use serde_json::{json, Value};

fn rig() -> ServerRig {
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
    let builder = Server::builder(Implementation::new("unreadable", "1"))
        .tool(greet)
        .prompt(prompt);
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
