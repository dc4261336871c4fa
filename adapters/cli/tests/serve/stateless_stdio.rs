//! `mcp-sansio serve --stdio` serves both eras: a 2026-07-28 client gets `server/discover`, an
//! input-required round trip through the fixture's `test_input_required_result_elicitation`
//! (the retry carries the minted `requestState`), and -32022 for a later `initialize`; a
//! 2025-11-25 client that starts with `initialize` gets the stateful session as before.

use std::time::Duration;

use serde_json::{json, Value};

use crate::stdio_child;
use stdio_child::StdioChild;

/// The server child.
struct Peer(StdioChild);

impl Peer {
    fn start() -> Peer {
        Peer(StdioChild::serve())
    }

    /// Sends `request` and returns the response with its id (skipping notifications).
    fn call(&mut self, request: Value) -> Value {
        self.0.send(&request);
        loop {
            let message = self
                .0
                .lines
                .recv_timeout(Duration::from_secs(10))
                .expect("a response within 10 s");
            if message.get("id") == request.get("id") {
                return message;
            }
        }
    }
}

fn stateless(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn initialize(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
}

#[test]
fn a_2026_client_is_served_statelessly_over_stdio() {
    let mut peer = Peer::start();
    let r = peer.call(stateless(1, "server/discover", json!({})));
    assert_eq!(r["result"]["supportedVersions"][0], "2026-07-28");
    let tool = "test_input_required_result_elicitation";
    let r = peer.call(stateless(2, "tools/call", json!({"name": tool})));
    assert_eq!(r["result"]["resultType"], "input_required");
    let state = r["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_owned();
    let r = peer.call(stateless(
        3,
        "tools/call",
        json!({"name": tool, "requestState": state,
               "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}}}),
    ));
    assert_eq!(r["result"]["content"][0]["text"], "Hello, Alice!");
    let r = peer.call(initialize(4));
    assert_eq!(r["error"]["code"], -32022);
}

#[test]
fn a_2025_client_still_gets_the_stateful_session() {
    let mut peer = Peer::start();
    let r = peer.call(initialize(1));
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    peer.0
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let r = peer.call(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert!(r["result"]["tools"].is_array());
    assert!(r["result"].get("resultType").is_none());
}

/// The next message on the pipe (notifications included).
fn next(peer: &mut Peer) -> Value {
    peer.0
        .lines
        .recv_timeout(Duration::from_secs(10))
        .expect("a message within 10 s")
}

#[test]
fn listen_streams_share_the_pipe() {
    let mut peer = Peer::start();
    let sub = "io.modelcontextprotocol/subscriptionId";
    let listen = stateless(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    peer.0.send(&listen);
    let ack = next(&mut peer);
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    assert_eq!(ack["params"]["_meta"][sub], listen["id"]);
    // A prompts-only stream beside it.
    let prompts = stateless(
        100,
        "subscriptions/listen",
        json!({"notifications": {"promptsListChanged": true}}),
    );
    peer.0.send(&prompts);
    assert_eq!(next(&mut peer)["params"]["_meta"][sub], 100);

    let trigger = stateless(
        7,
        "tools/call",
        json!({"name": "test_trigger_tool_change", "arguments": {}}),
    );
    peer.0.send(&trigger);
    let mut seen = Vec::new();
    while !seen.iter().any(|m: &Value| m["id"] == 7) {
        seen.push(next(&mut peer));
    }
    let changed: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/tools/list_changed")
        .collect();
    assert_eq!(changed.len(), 1, "{seen:?}");
    assert_eq!(changed[0]["params"]["_meta"][sub], listen["id"]);

    // The client ends the tools stream; a second change reaches nobody.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": listen["id"]}});
    peer.0.send(&cancel);
    let again = stateless(
        8,
        "tools/call",
        json!({"name": "test_trigger_tool_change", "arguments": {}}),
    );
    peer.0.send(&again);
    let mut seen = Vec::new();
    while !seen.iter().any(|m: &Value| m["id"] == 8) {
        seen.push(next(&mut peer));
    }
    assert_eq!(seen.len(), 1, "only the answer: {seen:?}");
    assert_eq!(seen[0]["result"]["resultType"], "complete");
}

fn with_tasks(mut request: Value) -> Value {
    request["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    request
}

/// Polls `tasks/get` (bounded) until the task leaves `working`.
fn settled(peer: &mut Peer, id: &Value, first_request_id: i64) -> Value {
    for n in 0..100 {
        let get = with_tasks(stateless(
            first_request_id + n,
            "tasks/get",
            json!({"taskId": id}),
        ));
        let result = peer.call(get)["result"].clone();
        if result["status"] != "working" {
            return result;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("task {id} still working after 100 polls");
}

#[test]
fn tasks_over_stdio_create_park_resume_and_cancel() {
    let mut peer = Peer::start();
    let call = |id, name: &str, args: Value| {
        with_tasks(stateless(
            id,
            "tools/call",
            json!({"name": name, "arguments": args}),
        ))
    };
    // A task that completes.
    let created = peer.call(call(1, "slow_compute", json!({"seconds": 0.2})))["result"].clone();
    assert_eq!(created["resultType"], "task", "{created}");
    let done = settled(&mut peer, &created["taskId"], 100);
    assert_eq!(done["status"], "completed");
    assert!(done["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("Computed"));
    // A task parked on an input, resumed by tasks/update.
    let created =
        peer.call(call(2, "confirm_delete", json!({"filename": "f.txt"})))["result"].clone();
    let parked = settled(&mut peer, &created["taskId"], 200);
    assert_eq!(parked["status"], "input_required");
    let update = with_tasks(stateless(
        3,
        "tasks/update",
        json!({"taskId": created["taskId"],
        "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}}),
    ));
    assert_eq!(peer.call(update)["result"]["resultType"], "complete");
    let mut done = settled(&mut peer, &created["taskId"], 300);
    for n in 0..100 {
        if done["status"] != "input_required" {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        done = settled(&mut peer, &created["taskId"], 400 + n * 100);
    }
    assert_eq!(done["result"]["content"][0]["text"], "Deleted f.txt");
    // Cancelled while running.
    let created = peer.call(call(4, "slow_compute", json!({"seconds": 60})))["result"].clone();
    let cancel = with_tasks(stateless(
        5,
        "tasks/cancel",
        json!({"taskId": created["taskId"]}),
    ));
    assert_eq!(peer.call(cancel)["result"]["resultType"], "complete");
    assert_eq!(
        settled(&mut peer, &created["taskId"], 20_000)["status"],
        "cancelled"
    );
    // Without the extension: -32021 for a required-task tool and the task methods.
    let e = peer.call(stateless(6, "tools/call", json!({"name": "failing_job"})))["error"].clone();
    assert_eq!(e["code"], -32021);
    let e = peer.call(stateless(
        7,
        "tasks/get",
        json!({"taskId": created["taskId"]}),
    ))["error"]
        .clone();
    assert_eq!(e["code"], -32021);
}
