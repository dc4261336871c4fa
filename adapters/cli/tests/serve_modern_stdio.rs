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

fn modern(id: i64, method: &str, mut params: Value) -> Value {
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
    let r = peer.call(modern(1, "server/discover", json!({})));
    assert_eq!(r["result"]["supportedVersions"][0], "2026-07-28");
    let tool = "test_input_required_result_elicitation";
    let r = peer.call(modern(2, "tools/call", json!({"name": tool})));
    assert_eq!(r["result"]["resultType"], "input_required");
    let state = r["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_owned();
    let r = peer.call(modern(
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
