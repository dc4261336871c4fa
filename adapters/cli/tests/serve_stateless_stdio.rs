//! `mcp-sansio serve --stdio` serves both eras: a 2026-07-28 client gets `server/discover`, an
//! input-required round trip through the fixture's `test_input_required_result_elicitation`
//! (the retry carries the minted `requestState`), and -32022 for a later `initialize`; a
//! 2025-11-25 client that starts with `initialize` gets the stateful session as before.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

struct Peer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Peer {
    fn start() -> Peer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
            .args(["serve", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn serve --stdio");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Peer {
            child,
            stdin,
            lines,
        }
    }

    /// Sends `request` and returns the response with its id (skipping notifications).
    fn call(&mut self, request: Value) -> Value {
        writeln!(self.stdin, "{request}").expect("write");
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(10))
                .expect("a response within 10 s");
            let message: Value = serde_json::from_str(&line).expect("JSON line");
            if message.get("id") == request.get("id") {
                return message;
            }
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
    writeln!(
        peer.stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let r = peer.call(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert!(r["result"]["tools"].is_array());
    assert!(r["result"].get("resultType").is_none());
}

/// The next message on the pipe (notifications included).
fn next(peer: &mut Peer) -> Value {
    let line = peer
        .lines
        .recv_timeout(Duration::from_secs(10))
        .expect("a message within 10 s");
    serde_json::from_str(&line).expect("JSON line")
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
    writeln!(peer.stdin, "{listen}").expect("write");
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
    writeln!(peer.stdin, "{prompts}").expect("write");
    assert_eq!(next(&mut peer)["params"]["_meta"][sub], 100);

    let trigger = stateless(
        7,
        "tools/call",
        json!({"name": "test_trigger_tool_change", "arguments": {}}),
    );
    writeln!(peer.stdin, "{trigger}").expect("write");
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
    writeln!(peer.stdin, "{cancel}").expect("write");
    let again = stateless(
        8,
        "tools/call",
        json!({"name": "test_trigger_tool_change", "arguments": {}}),
    );
    writeln!(peer.stdin, "{again}").expect("write");
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
