//! Runs both example binaries (no runtime / tokio) as real processes: a hand-written
//! conversation over their stdin/stdout, one message at a time (so the async tool's reply must
//! come out through the wake hook while stdin is still open), then the same server through our
//! own `connect_stdio_client`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use mcp_sansio::app::client::Client;
use mcp_sansio::model::Implementation;
use mcp_sansio_stdio::{connect_stdio_client, ShutdownStage, StderrMode};
use serde_json::{json, Value};

const EXAMPLES: [&str; 2] = [
    env!("CARGO_BIN_EXE_blocking_server"),
    env!("CARGO_BIN_EXE_tokio_server"),
];

/// Longest wait for one answer.
const ANSWER_LIMIT: Duration = Duration::from_secs(10);

fn converse(program: &str) {
    let mut child = Command::new(program)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the example");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel::<Value>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let line = line.expect("read a line");
            let value = serde_json::from_str(&line).expect("every line is one JSON text");
            if tx.send(value).is_err() {
                return;
            }
        }
    });
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").expect("write");
        stdin.flush().expect("flush");
    };
    let answer = |id: i64| {
        let value = rx
            .recv_timeout(ANSWER_LIMIT)
            .unwrap_or_else(|e| panic!("{program}: no answer to {id}: {e}"));
        assert_eq!(value["id"], id, "{program}: {value}");
        value
    };

    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "example-test", "version": "1"}}}),
    );
    let init = answer(1);
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 40, "b": 2}}}));
    assert_eq!(
        answer(2)["result"]["structuredContent"],
        json!({"result": 42})
    );

    // The async tool: a job on the driver's executor, answered while stdin stays open.
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "runtime of your choice"}}}));
    assert_eq!(
        answer(3)["result"]["content"][0]["text"],
        "echo: runtime of your choice"
    );

    // Schema validation happens before the handler: a bad argument is a tool error result.
    send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": "x", "b": 2}}}));
    assert_eq!(answer(4)["result"]["isError"], true);

    drop(stdin);
    let status = child.wait().expect("wait");
    assert!(status.success(), "{program}: {status}");
    reader.join().expect("reader");
}

#[test]
fn blocking_example_answers_over_stdio() {
    converse(EXAMPLES[0]);
}

#[test]
fn tokio_example_answers_over_stdio() {
    converse(EXAMPLES[1]);
}

#[test]
fn our_stdio_client_drives_both_examples() {
    for program in EXAMPLES {
        let builder = Client::builder(Implementation::new("example-test", "1"));
        let no_args: [&str; 0] = [];
        let client = connect_stdio_client(program, no_args, StderrMode::Capture, builder)
            .expect("spawn the example");
        let handle = client.handle();
        let (outcome, report) = client
            .block_on(async move {
                let init = handle.initialize().await?;
                let tools = handle.list_all_tools().await?;
                let sum = handle.call_tool("add", json!({"a": 2, "b": 3})).await?;
                let echo = handle.call_tool("echo", json!({"text": "hi"})).await?;
                handle.ping().await?;
                Ok::<_, mcp_sansio::app::client::ClientError>((init, tools, sum, echo))
            })
            .expect("drive the example");
        let (init, tools, sum, echo) = outcome.unwrap_or_else(|e| panic!("{program}: {e}"));
        assert!(init.server_info.name.ends_with("-example"));
        let mut names: Vec<_> = tools.iter().map(|t| t.name.clone()).collect();
        names.sort();
        assert_eq!(names, ["add", "echo"]);
        assert_eq!(sum.structured_content, Some(json!({"result": 5})));
        let echoed = serde_json::to_value(&echo.content).expect("content");
        assert_eq!(echoed[0]["text"], "echo: hi", "{echoed}");
        // The example exits on its own once its stdin closes.
        let shutdown = report.shutdown.expect("shutdown report");
        assert!(
            matches!(
                shutdown.stage,
                ShutdownStage::StdinClosed | ShutdownStage::AlreadyExited
            ),
            "{program}: {shutdown:?}"
        );
        assert!(shutdown.status.success());
    }
}
