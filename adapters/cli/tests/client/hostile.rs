//! `mcp-sansio client` against hostile servers on loopback (a few threads of hand-written
//! HTTP/1.1 here): an SSE event past `--max-frame` on the Streamable standalone GET stream is
//! dropped with a warning naming the limit, and the call still completes; one on the HTTP+SSE
//! stream closes the transport, and the call fails at once saying why.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Set once the GET stream's event is written.
type Flag = (Mutex<bool>, Condvar);

/// One request: method, and body.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, Vec<u8>)> {
    let mut line = String::new();
    reader.read_line(&mut line).ok().filter(|n| *n > 0)?;
    let method = line.split(' ').next()?.to_owned();
    let mut length = 0;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok().filter(|n| *n > 0)?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let content_length = header
            .split_once(':')
            .filter(|(name, _)| name.eq_ignore_ascii_case("content-length"));
        if let Some((_, value)) = content_length {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((method, body))
}

fn json(stream: &mut TcpStream, body: &str) {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}

/// Serves one connection: `initialize`, 202 for notifications, a GET stream whose first event
/// is `big` bytes (then held open), and `ping` answered once the GET's event is out.
fn serve(stream: TcpStream, big: usize, event_out: &Flag) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut stream = stream;
    while let Some((method, body)) = read_request(&mut reader) {
        let text = String::from_utf8_lossy(&body).into_owned();
        match method.as_str() {
            "GET" => {
                let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n";
                let _ = stream.write_all(head.as_bytes());
                let event = format!("data: {}\n\n", "x".repeat(big));
                let _ = stream.write_all(event.as_bytes());
                let _ = stream.flush();
                *event_out.0.lock().unwrap() = true;
                event_out.1.notify_all();
                // Held open until the client goes away.
                let mut rest = Vec::new();
                let _ = reader.read_to_end(&mut rest);
                return;
            }
            "DELETE" => {
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
            }
            _ if text.contains("\"initialize\"") => json(
                &mut stream,
                r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"hostile","version":"0"}}}"#,
            ),
            _ if text.contains("\"ping\"") => {
                // The GET's event is written before the answer (its arrival order at the
                // client is then the usual one, not a condition of the assertions).
                let out = event_out.0.lock().unwrap();
                let out = event_out
                    .1
                    .wait_timeout_while(out, Duration::from_secs(20), |o| !*o);
                drop(out);
                std::thread::sleep(Duration::from_millis(300));
                let id = serde_json::from_str::<serde_json::Value>(&text)
                    .ok()
                    .map(|v| v["id"].clone())
                    .unwrap_or_default();
                json(
                    &mut stream,
                    &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
                );
            }
            _ => {
                let _ = stream.write_all(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
            }
        }
    }
}

/// Serves every connection (a bounded number) on a loopback port with `serve`, sharing
/// `shared`, and runs `mcp-sansio client URL --transport KIND --max-frame 4096 ping` against
/// it: its exit code and stderr.
fn ping_against<S: Default + Send + Sync + 'static>(
    kind: &str,
    path: &str,
    serve: fn(TcpStream, usize, &S),
) -> (Option<i32>, String) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    let shared: Arc<S> = Arc::default();
    std::thread::spawn(move || {
        // Bounded: the client opens a handful of connections.
        for stream in listener.incoming().take(16).flatten() {
            let shared = shared.clone();
            std::thread::spawn(move || serve(stream, 10_000, &shared));
        }
    });
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
