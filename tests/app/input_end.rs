//! The end of the client's input (a stdio server's stdin closed): requests sent to the client
//! fail at once, requests still being handled get `Config::drain_timeout` and are then answered
//! with an error, and the session closes either way.

use std::future::pending;
use std::time::Duration;
use std::time::Instant;

use mcp_sansio::app::server::*;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::model::Implementation;
use mcp_sansio::session::State;
use mcp_sansio::testing::ServerRig;
use mcp_sansio::Config;
use serde_json::{json, Value};

fn builder() -> ServerBuilder {
    Server::builder(Implementation::new("input-end", "1"))
        .tool(
            Tool::new("forever", json!({"type": "object"})).handler(|_, _| async move {
                pending::<()>().await;
                Ok(CallToolResult::text("never"))
            }),
        )
        .tool(
            Tool::new("ask", json!({"type": "object"})).handler(|_, ctx| async move {
                let asked = json!({"message": "Name?", "requestedSchema": {"type": "object"}});
                match ctx.elicit(asked).await {
                    Ok(answer) => Ok(CallToolResult::text(answer.to_string())),
                    Err(e) => Err(ErrorObject::internal(format!("elicitation failed: {e}"))),
                }
            }),
        )
        .config(Config {
            drain_timeout: Duration::from_secs(3),
            ..Config::default()
        })
}

/// A rig past the handshake, the client able to answer elicitations.
fn ready() -> ServerRig {
    let mut rig = ServerRig::new(builder(), Instant::now());
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "c", "version": "1"}}});
    assert!(rig.call(&init).get("result").is_some());
    rig.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    rig
}

fn call(id: u64, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": {}}})
}

fn end_input(rig: &mut ServerRig) -> Vec<Value> {
    let now = rig.now;
    rig.server.handle_input_end(now);
    rig.settle()
}

#[test]
fn with_nothing_in_flight_the_session_closes_at_once() {
    let mut rig = ready();
    assert!(end_input(&mut rig).is_empty());
    assert_eq!(rig.server.session().state(), State::Closed);
    assert_eq!(rig.server.poll_timeout(), None);
}

#[test]
fn a_request_to_the_client_fails_at_once_and_its_handler_answers() {
    let mut rig = ready();
    let out = rig.send(&call(1, "ask"));
    assert!(
        out.iter().any(|m| m["method"] == "elicitation/create"),
        "{out:?}"
    );
    let out = end_input(&mut rig);
    let answer = out.iter().find(|m| m["id"] == 1).expect("call 1 answered");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("elicitation failed"), "{answer}");
    assert_eq!(rig.server.session().state(), State::Closed);
}

#[test]
fn a_handler_still_running_at_the_deadline_is_answered_and_the_session_closes() {
    let mut rig = ready();
    assert!(rig.send(&call(7, "forever")).is_empty());
    assert!(end_input(&mut rig).is_empty());
    assert_eq!(rig.server.session().state(), State::Ready);
    let deadline = rig.server.poll_timeout().expect("a drain deadline");
    assert_eq!(deadline, rig.now + Duration::from_secs(3));
    assert!(rig.advance(Duration::from_secs(2)).is_empty());
    assert_eq!(rig.server.session().state(), State::Ready);
    let out = rig.advance(Duration::from_secs(1));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["id"], 7);
    assert_eq!(out[0]["error"]["code"], -32603);
    let message = out[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("input ended"), "{message}");
    assert_eq!(rig.server.session().state(), State::Closed);
}

#[test]
fn an_answer_before_the_deadline_goes_out_and_then_the_session_closes() {
    let mut rig = ready();
    rig.send(&call(3, "ask"));
    rig.send(&call(4, "forever"));
    let out = end_input(&mut rig);
    assert!(
        out.iter().any(|m| m["id"] == 3 && m.get("error").is_some()),
        "{out:?}"
    );
    assert_eq!(
        rig.server.session().state(),
        State::Ready,
        "call 4 still runs"
    );
    let out = rig.advance(Duration::from_secs(3));
    assert!(
        out.iter()
            .any(|m| m["id"] == 4 && m["error"]["code"] == -32603),
        "{out:?}"
    );
    assert_eq!(rig.server.session().state(), State::Closed);
}
