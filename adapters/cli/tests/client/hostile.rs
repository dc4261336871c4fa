//! `mcp-sansio client` against hostile servers on loopback (hand-written HTTP/1.1, the
//! Streamable one in support/hostile_http.rs): an SSE event past `--max-frame` on the Streamable standalone GET stream is
//! dropped with a warning naming the limit, and the call still completes; one on the HTTP+SSE
//! stream closes the transport, and the call fails at once saying why.

use std::io::{BufReader, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::hostile_http::{listen, read_request, serve};

/// Serves every connection (a bounded number) on a loopback port with `serve`, sharing
/// `shared`, and runs `mcp-sansio client URL --transport KIND --max-frame 4096 ping` against
/// it: its exit code and stderr.
fn ping_against<S: Default + Send + Sync + 'static>(
    kind: &str,
    path: &str,
    serve: fn(TcpStream, usize, &S),
) -> (Option<i32>, String) {
    let port = listen(10_000, serve);
    let url = format!("http://127.0.0.1:{port}{path}");
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
        .args(["client", &url, "--era", "stateful", "--transport", kind])
        .args(["--max-frame", "4096", "--timeout", "30", "ping"])
        .output()
        .expect("run mcp-sansio client");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), stderr)
}

#[test]
fn an_oversized_event_on_the_get_stream_is_dropped_with_a_warning_naming_the_limit() {
    let (code, stderr) = ping_against("streamable", "/mcp", serve);
    assert!(
        stderr.contains(
            "warning: dropped 1 event(s) of the standalone GET stream over the 4 KiB size limit"
        ),
        "{stderr}"
    );
    assert_eq!(code, Some(0), "{stderr}");
}

/// Events for the HTTP+SSE stream, from the POSTs.
type Outbox = (Mutex<Vec<String>>, Condvar);

/// Serves one connection of an HTTP+SSE server whose answer to `ping` is an event of `big`
/// bytes.
fn serve_sse(stream: TcpStream, big: usize, outbox: &Outbox) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut stream = stream;
    while let Some((method, body)) = read_request(&mut reader) {
        if method == "GET" {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n";
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(b"event: endpoint\ndata: /msg\n\n");
            loop {
                let events = outbox.0.lock().unwrap();
                let (mut events, _) = outbox
                    .1
                    .wait_timeout_while(events, Duration::from_secs(30), |e| e.is_empty())
                    .unwrap();
                if events.is_empty() {
                    return;
                }
                for event in events.drain(..) {
                    if stream.write_all(event.as_bytes()).is_err() {
                        return;
                    }
                }
            }
        }
        let _ = stream.write_all(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
        let text = String::from_utf8_lossy(&body);
        let event = if text.contains("\"initialize\"") {
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"hostile","version":"0"}}}"#.to_owned()
        } else if text.contains("\"ping\"") {
            "x".repeat(big)
        } else {
            continue;
        };
        outbox
            .0
            .lock()
            .unwrap()
            .push(format!("event: message\ndata: {event}\n\n"));
        outbox.1.notify_all();
    }
}

#[test]
fn an_oversized_event_closes_the_sse_transport_and_the_call_says_why() {
    let (code, stderr) = ping_against("sse", "/sse", serve_sse);
    assert_eq!(code, Some(1), "{stderr}");
    // The call fails at once, and its error says what closed the transport.
    let error = stderr.lines().next_back().unwrap_or_default();
    assert!(error.starts_with("error: ping: "), "{stderr}");
    assert!(
        error.ends_with("(the HTTP transport closed: a response exceeded the 4 KiB size limit)"),
        "{stderr}"
    );
}
