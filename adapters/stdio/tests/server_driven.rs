//! `ServerDriven` on an in-memory transport: async jobs run on the loop's executor and their
//! replies are written without further input (the wake hook), refused lines are answered, and
//! end of input waits for in-flight handlers before the loop returns. On the smol driver with
//! in-memory streams, and on the poll driver with files (its loop needs descriptors).

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::model::Implementation;
use mcp_sansio_stdio::{DriveOptions, Driver, EndReason, PollDriver, ServerDriven};
use serde_json::{json, Value};
use smol::io::{AsyncWrite, Cursor};

/// A writer whose bytes stay readable after the loop closed it.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl AsyncWrite for Shared {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

fn server() -> Server {
    let schema = json!({"type": "object"});
    Server::builder(Implementation::new("t", "0"))
        .tool(
            Tool::new("fast", schema.clone()).sync_handler(|_, _| Ok(CallToolResult::text("fast"))),
        )
        .tool(Tool::new("slow", schema).handler(|_, _| async {
            smol::Timer::after(Duration::from_millis(100)).await;
            Ok(CallToolResult::text("slow"))
        }))
        .build(Instant::now())
}

#[derive(Clone, Copy)]
enum Kind {
    Smol,
    Poll,
}

fn run(kind: Kind, input: &[u8], options: DriveOptions) -> (Vec<Value>, EndReason, Duration) {
    let started = Instant::now();
    let (bytes, finished) = match kind {
        Kind::Smol => {
            let driver = Driver::new(options);
            let driven = ServerDriven::new(server(), &driver);
            let out = Shared::default();
            let finished = driver.block_on(driven, Cursor::new(input.to_vec()), out.clone());
            let bytes = out.0.lock().unwrap().clone();
            (bytes, finished)
        }
        Kind::Poll => {
            let dir = std::env::temp_dir().join(format!(
                "mcp-server-driven-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("in"), input).unwrap();
            let input = std::fs::File::open(dir.join("in")).unwrap();
            let output = std::fs::File::create(dir.join("out")).unwrap();
            let driver = PollDriver::new(options).unwrap();
            let driven = ServerDriven::for_poll(server(), &driver);
            let finished = driver.run(driven, &input, &output);
            let bytes = std::fs::read(dir.join("out")).unwrap();
            std::fs::remove_dir_all(&dir).unwrap();
            (bytes, finished)
        }
    };
    let elapsed = started.elapsed();
    let messages = String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (messages, finished.reason, elapsed)
}

fn input(extra: &[&str]) -> Vec<u8> {
    let mut lines = vec![
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    ];
    lines.extend_from_slice(extra);
    let mut text = lines.join("\n");
    text.push('\n');
    text.into_bytes()
}

#[test]
fn a_slow_job_answers_after_the_fast_one_and_eof_waits_for_it() {
    for kind in [Kind::Smol, Kind::Poll] {
        slow_after_fast(kind);
    }
}

fn slow_after_fast(kind: Kind) {
    let bytes = input(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fast"}}"#,
    ]);
    let (messages, reason, elapsed) = run(kind, &bytes, DriveOptions::default());
    let ids: Vec<&Value> = messages.iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, [&json!(0), &json!(2), &json!(1)], "{messages:?}");
    assert_eq!(messages[2]["result"]["content"][0]["text"], "slow");
    assert_eq!(reason, EndReason::Closed);
    assert!(elapsed >= Duration::from_millis(100), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

#[test]
fn an_overlong_line_gets_an_error_response_and_the_next_line_is_served() {
    for kind in [Kind::Smol, Kind::Poll] {
        overlong_line(kind);
    }
}

fn overlong_line(kind: Kind) {
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"p":"{}"}}}}"#,
        "x".repeat(600)
    );
    let bytes = input(&[&long, r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#]);
    let options = DriveOptions {
        max_line_len: 512,
        ..DriveOptions::default()
    };
    let (messages, reason, _) = run(kind, &bytes, options);
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(messages[1]["error"]["code"], -32600, "{messages:?}");
    // The id was read from the line's first bytes; the message names the limit.
    assert_eq!(messages[1]["id"], 9, "{messages:?}");
    assert!(messages[1]["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("512 bytes limit")));
    assert_eq!(
        messages[2],
        json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );
    assert_eq!(reason, EndReason::Closed);
}
