//! `mcp-sansio serve --stdio` as a real child process, fed hostile and heavy input: malformed
//! lines, non-JSON-RPC objects, 1,000 pipelined requests, 8 MiB and 20 MiB lines, a batch of
//! 5,000 pings, and end of input with
//! work still in flight (finished, or ended at the drain deadline). Every stdout line must be one JSON-RPC message. Also the fixture's
//! contents and its timed extras (late additions, watched-resource updates).

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::stdio_child;
use stdio_child::StdioChild;

/// How long any single expected message may take.
const WAIT: Duration = Duration::from_secs(20);

/// The server child, as the tests here drive it.
struct Server(StdioChild);

impl Server {
    fn start() -> Server {
        Server(StdioChild::serve())
    }

    /// Starts the server and completes the handshake at `version`.
    fn initialized(version: &str) -> Server {
        let mut server = Server::start();
        server.send(
            &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "robustness", "version": "0"}}}),
        );
        let reply = server.next();
        assert_eq!(reply["result"]["protocolVersion"], version, "{reply}");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        self.0.send_raw(bytes);
    }

    fn send(&mut self, message: &Value) {
        self.0.send(message);
    }

    /// The next message, skipping the fixture's timed extras (list_changed at 2 s, resource
    /// updates), which may interleave with anything a test that runs that long expects.
    fn next(&self) -> Value {
        loop {
            let message = self.next_any();
            if !is_timed_extra(&message) {
                return message;
            }
        }
    }

    /// The next message, whatever it is.
    fn next_any(&self) -> Value {
        self.0
            .lines
            .recv_timeout(WAIT)
            .expect("the server answered in time")
    }

    /// Sends a ping with `id` and asserts its answer is the next message.
    fn assert_still_serving(&mut self, id: &str) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        let reply = self.next();
        assert_eq!(reply, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    }

    /// Closes stdin; returns the messages still written and whether the server exited with 0.
    fn close_and_wait(mut self) -> (Vec<Value>, bool) {
        self.0.stdin = None;
        let mut rest = Vec::new();
        while let Ok(message) = self.0.lines.recv_timeout(WAIT) {
            if !is_timed_extra(&message) {
                rest.push(message);
            }
        }
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.0.child.try_wait().expect("wait") {
                break Some(status);
            }
            if started.elapsed() > WAIT {
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        (rest, status.is_some_and(|s| s.success()))
    }
}

/// A notification of the fixture's timed extras (see `fixture_extras.rs`).
fn is_timed_extra(message: &Value) -> bool {
    matches!(
        message["method"].as_str(),
        Some(
            "notifications/tools/list_changed"
                | "notifications/resources/list_changed"
                | "notifications/prompts/list_changed"
                | "notifications/resources/updated"
        )
    )
}

#[test]
fn a_malformed_line_gets_a_parse_error_with_the_id_its_head_shows_and_serving_goes_on() {
    // 2025-11-25 omits the id of an error whose request id is unreadable.
    let mut server = Server::initialized("2025-11-25");
    server.send_raw(b"{\"jsonrpc\": \"2.0\", \"method\": \"ping\", \"id\": \n");
    let reply = server.next();
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert!(reply.get("id").is_none(), "{reply}");
    server.assert_still_serving("after-parse-error");

    // A request cut short after its id: the parse error carries the id, so the caller's
    // request fails at once.
    server.send_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \n");
    let reply = server.next();
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert_eq!(reply["id"], 1, "{reply}");
    server.assert_still_serving("after-parse-error-with-id");

    // Before 2025-11-25 the schema spells it `"id": null`.
    let mut server = Server::initialized("2025-06-18");
    server.send_raw(b"not json at all\n");
    let reply = server.next();
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert_eq!(reply["id"], Value::Null, "{reply}");
    assert!(reply.get("id").is_some(), "{reply}");
    server.assert_still_serving("after-parse-error");
}

#[test]
fn a_json_object_that_is_not_json_rpc_gets_invalid_request() {
    let mut server = Server::initialized("2025-11-25");
    server.send(&json!({"hello": "world"}));
    let reply = server.next();
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    server.send(&json!({"jsonrpc": "1.0", "id": 7, "method": "ping"}));
    let reply = server.next();
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    server.assert_still_serving("after-invalid-request");
}

#[test]
fn a_thousand_pipelined_requests_each_get_exactly_one_answer() {
    let mut server = Server::initialized("2025-11-25");
    let mut batch = Vec::new();
    for i in 0..1000 {
        let request = match i % 3 {
            0 => json!({"jsonrpc": "2.0", "id": i, "method": "ping"}),
            1 => json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                        "params": {"name": "test_simple_text"}}),
            _ => json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                        "params": {"name": "test_slow", "arguments": {"ms": 1}}}),
        };
        batch.extend_from_slice(request.to_string().as_bytes());
        batch.push(b'\n');
    }
    // One write of every request, then end of input: the server must still answer them all.
    server.send_raw(&batch);
    let (answers, exited_cleanly) = server.close_and_wait();
    let mut seen: HashMap<i64, usize> = HashMap::new();
    for answer in &answers {
        let id = answer["id"].as_i64().unwrap_or_else(|| panic!("{answer}"));
        assert!(answer.get("result").is_some(), "{answer}");
        *seen.entry(id).or_default() += 1;
    }
    assert_eq!(seen.len(), 1000, "distinct ids answered");
    assert!(seen.values().all(|&n| n == 1), "an id answered twice");
    assert_eq!(answers.len(), 1000);
    assert!(
        exited_cleanly,
        "the server did not exit with 0 after stdin closed"
    );
}

#[test]
fn an_eight_mib_request_is_served_and_a_twenty_mib_one_is_refused_with_its_id() {
    let mut server = Server::initialized("2025-11-25");
    let line = |id: &str, len: usize| {
        let mut line =
            format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"ping","params":{{"pad":""#)
                .into_bytes();
        line.resize(len, b'x');
        line.extend_from_slice(b"\"}}\n");
        line
    };
    server.send_raw(&line("eight", 8 * 1024 * 1024));
    let reply = server.next();
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": "eight", "result": {}})
    );
    server.send_raw(&line("huge", 20 * 1024 * 1024));
    let reply = server.next();
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["id"], "huge", "{reply}");
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("16 MiB"), "{reply}");
    server.assert_still_serving("after-huge-line");
}

#[test]
fn a_batch_of_five_thousand_pings_gets_five_thousand_answers() {
    let mut server = Server::initialized("2025-03-26");
    let batch: Vec<Value> = (0..5000)
        .map(|n| json!({"jsonrpc": "2.0", "id": n, "method": "ping"}))
        .collect();
    server.send(&Value::Array(batch));
    // Each item is answered on its own line, in order.
    for n in 0..5000 {
        let reply = server.next();
        assert_eq!(reply, json!({"jsonrpc": "2.0", "id": n, "result": {}}));
    }
    server.assert_still_serving("after-batch");
}

#[test]
fn end_of_input_flushes_in_flight_work_then_exits() {
    let mut server = Server::initialized("2025-11-25");
    server.send(
        &json!({"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
                        "params": {"name": "test_slow", "arguments": {"ms": 300}}}),
    );
    let started = Instant::now();
    let (rest, exited_cleanly) = server.close_and_wait();
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], "slow");
    assert_eq!(rest[0]["result"]["content"][0]["text"], "Slept 300 ms");
    assert!(exited_cleanly);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "exit took too long"
    );
}

/// A client that closes stdin while a tool waits for its elicitation answer and another tool
/// would run for ages: the elicitation fails at once (no answer can come), the long call is
/// answered with an error at the drain deadline, and the server exits instead of lingering.
#[test]
fn end_of_input_ends_work_that_cannot_finish_and_the_server_exits() {
    let mut server = Server::start();
    server.send(
        &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "robustness", "version": "0"}}}),
    );
    assert!(server.next()["result"].is_object());
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    server.send(
        &json!({"jsonrpc": "2.0", "id": "ask", "method": "tools/call",
                "params": {"name": "test_elicitation", "arguments": {"message": "?"}}}),
    );
    assert_eq!(server.next()["method"], "elicitation/create");
    server.send(
        &json!({"jsonrpc": "2.0", "id": "ages", "method": "tools/call",
                "params": {"name": "test_slow", "arguments": {"ms": u64::MAX}}}),
    );
    let (rest, exited_cleanly) = server.close_and_wait();
    let answer = |id: &str| rest.iter().find(|m| m["id"] == id).cloned();
    let ask = answer("ask").expect("the elicitation's call answered");
    assert!(
        ask.get("error").is_some() || ask["result"]["isError"] == true,
        "{ask}"
    );
    let ages = answer("ages").expect("the long call answered");
    assert_eq!(ages["error"]["code"], -32603, "{ages}");
    assert!(exited_cleanly, "{rest:?}");
}

/// The fixture's contents without the SDK peers: names and exact contents from
/// tests/interop/fixture.json, and the logging/progress timing of §5 of the conformance notes.
#[test]
fn the_reference_server_serves_the_fixture_contents() {
    let fixture: Value =
        serde_json::from_str(include_str!("../../../../tests/interop/fixture.json"))
            .expect("fixture.json");
    let mut server = Server::initialized("2025-11-25");
    let mut call = |id: &str, method: &str, params: Value| {
        server.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut notifications = Vec::new();
        loop {
            let message = server.next();
            if message.get("id").is_some() {
                assert_eq!(message["id"], id, "{message}");
                return (message["result"].clone(), notifications);
            }
            notifications.push((Instant::now(), message));
        }
    };
    let (tools, _) = call("list", "tools/list", json!({}));
    let listed: Vec<&str> = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    for name in fixture["tools"].as_array().expect("fixture tools") {
        assert!(listed.contains(&name.as_str().expect("name")), "{name}");
    }
    let schema = tools["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "json_schema_2020_12_tool"))
        .expect("json_schema_2020_12_tool");
    assert_eq!(schema["inputSchema"], fixture["jsonSchema202012"]);
    let contents = &fixture["content"];
    for (tool, key) in [
        ("test_simple_text", "simpleText"),
        ("test_image_content", "image"),
        ("test_audio_content", "audio"),
        ("test_embedded_resource", "embedded"),
        ("test_multiple_content_types", "mixed"),
        ("test_error_handling", "error"),
    ] {
        let (result, _) = call(tool, "tools/call", json!({"name": tool}));
        assert_eq!(result["content"], contents[key], "{tool}");
        assert_eq!(
            result["isError"] == json!(true),
            tool == "test_error_handling"
        );
    }
    for (uri, key) in [
        ("test://static-text", "staticText"),
        ("test://static-binary", "staticBinary"),
    ] {
        let (result, _) = call(uri, "resources/read", json!({"uri": uri}));
        assert_eq!(result["contents"], contents[key], "{uri}");
    }
    let (_, logs) = call(
        "logging",
        "tools/call",
        json!({"name": "test_tool_with_logging"}),
    );
    let texts: Vec<&Value> = logs.iter().map(|(_, m)| &m["params"]["data"]).collect();
    assert_eq!(
        texts,
        [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed"
        ]
    );
    let gap = logs[2].0 - logs[0].0;
    assert!(gap >= Duration::from_millis(90), "log gaps {gap:?}");
    let (_, progress) = call(
        "progress",
        "tools/call",
        json!({"name": "test_tool_with_progress", "_meta": {"progressToken": 42}}),
    );
    let steps: Vec<(Value, Option<f64>, Option<f64>)> = progress
        .iter()
        .map(|(_, m)| {
            let p = &m["params"];
            (
                p["progressToken"].clone(),
                p["progress"].as_f64(),
                p["total"].as_f64(),
            )
        })
        .collect();
    let want = [0.0, 50.0, 100.0].map(|n| (json!(42), Some(n), Some(100.0)));
    assert_eq!(steps, want.to_vec());
}

/// The timed reference extras: 2 s after the start the late tool, resource and prompt arrive,
/// each announced by its list_changed; a subscriber to `test://watched-resource` hears
/// `notifications/resources/updated` (every 3 s); after unsubscribing it hears no more.
#[test]
fn the_late_additions_and_watched_resource_updates_arrive() {
    let started = Instant::now();
    let mut server = Server::initialized("2025-11-25");
    let request = |server: &mut Server, id: &str, method: &str, params: Value| {
        server.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        server.next()
    };
    let reply = request(
        &mut server,
        "sub",
        "resources/subscribe",
        json!({"uri": "test://watched-resource"}),
    );
    assert_eq!(reply["result"], json!({}), "{reply}");
    let tools = names(&request(&mut server, "t0", "tools/list", json!({})));
    assert!(
        !tools.contains(&"test_dynamic_tool".to_owned()) || started.elapsed() >= LATE,
        "the late tool was there from the start"
    );

    let mut changed = Vec::new();
    let mut updated_at = None;
    while changed.len() < 3 || updated_at.is_none() {
        let message = server.next_any();
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "extras too late"
        );
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        assert!(is_timed_extra(&message), "unexpected {message}");
        if method == "notifications/resources/updated" {
            assert_eq!(message["params"]["uri"], "test://watched-resource");
            updated_at.get_or_insert(started.elapsed());
        } else {
            changed.push(method);
        }
    }
    changed.sort();
    assert_eq!(
        changed,
        [
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/tools/list_changed"
        ]
    );
    assert!(updated_at >= Some(Duration::from_secs(3)), "{updated_at:?}");

    let tools = names(&request(&mut server, "t1", "tools/list", json!({})));
    assert!(tools.contains(&"test_dynamic_tool".to_owned()), "{tools:?}");
    let resources = names(&request(&mut server, "r1", "resources/list", json!({})));
    assert!(
        resources.contains(&"test://dynamic-resource".to_owned()),
        "{resources:?}"
    );
    let prompts = names(&request(&mut server, "p1", "prompts/list", json!({})));
    assert!(
        prompts.contains(&"test_dynamic_prompt".to_owned()),
        "{prompts:?}"
    );
    let call = request(
        &mut server,
        "call",
        "tools/call",
        json!({"name": "test_dynamic_tool"}),
    );
    assert!(call["result"]["content"][0]["text"].is_string(), "{call}");
    let read = request(
        &mut server,
        "read",
        "resources/read",
        json!({"uri": "test://dynamic-resource"}),
    );
    assert_eq!(
        read["result"]["contents"][0]["uri"],
        "test://dynamic-resource"
    );
    let prompt = request(
        &mut server,
        "get",
        "prompts/get",
        json!({"name": "test_dynamic_prompt"}),
    );
    assert_eq!(prompt["result"]["messages"][0]["role"], "user", "{prompt}");

    // Unsubscribed, the next tick (at most 3 s away) brings nothing.
    let reply = request(
        &mut server,
        "unsub",
        "resources/unsubscribe",
        json!({"uri": "test://watched-resource"}),
    );
    assert_eq!(reply["result"], json!({}), "{reply}");
    if let Ok(message) = server.0.lines.recv_timeout(Duration::from_millis(3200)) {
        panic!("after unsubscribing: {message}");
    }
}

/// When the late additions are due.
const LATE: Duration = Duration::from_secs(2);

/// The names (tools, prompts) or URIs (resources) of a one-page list reply.
fn names(reply: &Value) -> Vec<String> {
    let result = &reply["result"];
    let items = ["tools", "resources", "prompts"]
        .iter()
        .find_map(|key| result[key].as_array())
        .unwrap_or_else(|| panic!("not a list: {reply}"));
    assert!(result.get("nextCursor").is_none(), "one page expected");
    items
        .iter()
        .map(|item| {
            item.get("uri")
                .or_else(|| item.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// A fake stdio server (Python): answers `server/discover` with method-not-found (so the
/// client takes the `initialize` path), `initialize` with a result, and `tools/list` with
/// what `answer` (a Python expression over the request `r`) writes.
fn fake_server(answer: &str) -> Vec<String> {
    let script = format!(
        r#"
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if "id" not in r:
        continue
    m = r.get("method")
    if m == "initialize":
        out = json.dumps({{"jsonrpc": "2.0", "id": r["id"], "result": {{
            "protocolVersion": r["params"]["protocolVersion"], "capabilities": {{"tools": {{}}}},
            "serverInfo": {{"name": "fake", "version": "0"}}}}}})
    elif m == "tools/list":
        out = {answer}
    else:
        out = json.dumps({{"jsonrpc": "2.0", "id": r["id"],
            "error": {{"code": -32601, "message": "Method not found"}}}})
    sys.stdout.write(out + "\n")
    sys.stdout.flush()
"#
    );
    vec!["python3".into(), "-c".into(), script]
}

/// Runs `mcp-sansio client --stdio tools list -- <server>` with a 30 s timeout; returns
/// (success, stderr, how long it took).
fn run_client(server: &[String]) -> (bool, String, Duration) {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
        .args([
            "client",
            "--stdio",
            "--timeout",
            "30",
            "tools",
            "list",
            "--",
        ])
        .args(server)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-sansio client");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.success(), stderr, started.elapsed())
}

#[test]
fn a_twenty_mib_answer_fails_the_client_at_once_naming_the_limit() {
    let answer = r#"'{"jsonrpc":"2.0","id":' + json.dumps(r["id"]) + ',"result":{"tools":[],"pad":"' + "x" * (20 * 1024 * 1024) + '"}}'"#;
    let (ok, stderr, took) = run_client(&fake_server(answer));
    assert!(!ok, "the client succeeded: {stderr}");
    assert!(stderr.contains("16 MiB"), "{stderr}");
    // Failed on the answer, not on the 30 s request timeout.
    assert!(!stderr.contains("--timeout"), "{stderr}");
    assert!(took < Duration::from_secs(30), "took {took:?}: {stderr}");
}

#[test]
fn an_answer_with_the_id_as_a_string_is_reported_on_stderr() {
    let answer = r#"json.dumps({"jsonrpc": "2.0", "id": str(r["id"]), "result": {"tools": []}})"#;
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
        .args(["client", "--stdio", "--timeout", "2", "tools", "list", "--"])
        .args(fake_server(answer))
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-sansio client");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(started.elapsed() < WAIT, "{stderr}");
    assert!(
        stderr
            .contains(r#"answer has id "1" (a string); a request with id 1 (a number) is pending"#),
        "{stderr}"
    );
}
