//! The official SDK clients drive our HTTP+SSE endpoint: the TypeScript SDK's
//! `SSEClientTransport` (tests/interop/ts/sse_transport_client.mjs) and the Python SDK's
//! `sse_client` (tests/interop/py/sse_transport_client.py) against a `Router` serving Streamable
//! HTTP on /mcp and the HTTP+SSE pair on /sse + /messages, over loopback TCP.
//!
//! The sockets are run here by a minimal blocking HTTP/1.1 driver (a thread per connection,
//! `Connection: close`, SSE bodies close-delimited) standing in for the adapter, which does
//! not exist yet; every protocol decision is the core's. Needs the peers of
//! scripts/install-peers (`.ci-cache/env`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::app::server::Server;
use mcp_sansio::http::sse_transport::{Router, RouterPaths};
use mcp_sansio::http::*;
use mcp_sansio::model::Implementation;
use mcp_sansio::testing::echo_server;
use serde_json::{json, Value};

use crate::harness::{finish, peers_ready};
use crate::SERIAL;

fn app(now: Instant) -> Server {
    echo_server(
        Implementation::new("mcp-sansio-sse-transport", "0.1.0"),
        now,
    )
}

struct Shared {
    router: Mutex<Router<Server>>,
    /// (method, path without query, status) of every request.
    log: Mutex<Vec<(String, String, u16)>>,
    seed: AtomicU8,
    stop: AtomicBool,
}

/// Serves `shared.router` on `listener` until `stop`.
fn serve(listener: TcpListener, shared: Arc<Shared>) {
    listener.set_nonblocking(true).unwrap();
    while !shared.stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => {
                let shared = shared.clone();
                std::thread::spawn(move || {
                    let _ = connection(stream, &shared);
                });
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

fn connection(stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut head = HttpRequestHead::new(HttpMethod::parse(&method), path.clone());
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((n, v)) = line.trim_end().split_once(':') {
            head = head.header(n.trim(), v.trim());
        }
    }
    let length: usize = head
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length.min(1 << 20)];
    reader.read_exact(&mut body)?;
    let seed = shared.seed.fetch_add(1, Ordering::Relaxed);
    let resp = {
        let mut router = shared.router.lock().unwrap();
        let resp = router.handle_request(Instant::now(), &head, Bytes::from(body), [seed; 16]);
        // The echo handler is synchronous; a job would be polled once here.
        let mut cx = Context::from_waker(Waker::noop());
        while let Some(mut job) = router.poll_job() {
            assert!(
                job.as_mut().poll(&mut cx) == Poll::Ready(()),
                "no async handler here"
            );
        }
        resp
    };
    let bare = path.split('?').next().unwrap_or("").to_string();
    shared.log.lock().unwrap().push((method, bare, resp.status));
    let mut out = stream;
    let mut text = format!("HTTP/1.1 {} X\r\nConnection: close\r\n", resp.status);
    for (n, v) in &resp.headers {
        text.push_str(&format!("{n}: {v}\r\n"));
    }
    match resp.body {
        Body::Empty => text.push_str("Content-Length: 0\r\n\r\n"),
        Body::Full(ref b) => text.push_str(&format!("Content-Length: {}\r\n\r\n", b.len())),
        Body::Stream(_) => text.push_str("\r\n"),
    }
    out.write_all(text.as_bytes())?;
    match resp.body {
        Body::Empty => Ok(()),
        Body::Full(b) => out.write_all(&b),
        Body::Stream(id) => stream_body(out, id, shared),
    }
}

/// Pulls stream `id` and writes it until it ends, the client goes away or the test stops.
fn stream_body(mut out: TcpStream, id: StreamId, shared: &Shared) -> std::io::Result<()> {
    loop {
        let mut buf = Vec::new();
        let mut ended = false;
        {
            let mut router = shared.router.lock().unwrap();
            while let Some(chunk) = router.poll_stream(id, &mut buf) {
                if chunk == StreamChunk::End {
                    ended = true;
                    break;
                }
            }
        }
        let gone = (!buf.is_empty() && out.write_all(&buf).is_err()) || peer_closed(&out);
        if gone || shared.stop.load(Ordering::Relaxed) {
            shared.router.lock().unwrap().stream_closed(id);
            return Ok(());
        }
        if ended {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether the client closed its side (a non-blocking peek reads end-of-stream).
fn peer_closed(stream: &TcpStream) -> bool {
    let _ = stream.set_nonblocking(true);
    let mut byte = [0u8; 1];
    let closed = matches!(stream.peek(&mut byte), Ok(0));
    let _ = stream.set_nonblocking(false);
    closed
}

/// Runs one SDK client script against a fresh router; returns its JSON line and the shared
/// state for further checks.
fn run_client(program: &Path, script: &str) -> (Value, Arc<Shared>) {
    let shared = Arc::new(Shared {
        router: Mutex::new(Router::new(
            EndpointConfig::default(),
            RouterPaths::default(),
            app,
        )),
        log: Mutex::default(),
        seed: AtomicU8::new(1),
        stop: AtomicBool::new(false),
    });
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/sse", listener.local_addr().unwrap());
    let server = {
        let shared = shared.clone();
        std::thread::spawn(move || serve(listener, shared))
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(script);
    let child = Command::new(program)
        .arg(script)
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start SDK client");
    let (ok, stdout) = finish(child, Duration::from_secs(60));
    // The client is gone: its stream's close must end the HTTP+SSE session.
    let deadline = Instant::now() + Duration::from_secs(10);
    while shared
        .router
        .lock()
        .unwrap()
        .sse_transport()
        .session_count()
        > 0
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    shared.stop.store(true, Ordering::Relaxed);
    server.join().unwrap();
    assert!(ok, "SDK client failed; stdout: {stdout}");
    let line = stdout.lines().last().unwrap_or("");
    (
        serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {stdout}")),
        shared,
    )
}

fn check(out: &Value, shared: &Shared) {
    assert_eq!(out["server"], "mcp-sansio-sse-transport", "{out}");
    assert_eq!(out["tools"], json!(["echo"]), "{out}");
    assert_eq!(out["echo"], "hi", "{out}");
    let log = shared.log.lock().unwrap().clone();
    assert_eq!(log[0], ("GET".into(), "/sse".into(), 200), "{log:?}");
    assert!(
        log.len() >= 4,
        "initialize, initialized, tools/list, tools/call: {log:?}"
    );
    assert!(
        log[1..]
            .iter()
            .all(|(m, p, s)| m == "POST" && p == "/messages" && *s == 202),
        "{log:?}"
    );
    let mut router = shared.router.lock().unwrap();
    assert_eq!(
        router.sse_transport().session_count(),
        0,
        "the closed stream ended the session"
    );
    assert_eq!(router.streamable().session_count(), 0);
}

fn peer_path(var: &str) -> PathBuf {
    PathBuf::from(std::env::var(var).unwrap_or_else(|_| panic!("{var} unset")))
}

#[test]
fn the_typescript_sdk_sse_client_drives_our_sse_transport_endpoint() {
    if !peers_ready() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (out, shared) = run_client(&peer_path("MCP_NODE22"), "ts/sse_transport_client.mjs");
    eprintln!("SDK client saw: {out}");
    check(&out, &shared);
    assert_eq!(out["transportErrors"], 0, "{out}");
}

#[test]
fn the_python_sdk_sse_client_drives_our_sse_transport_endpoint() {
    if !peers_ready() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (out, shared) = run_client(&peer_path("MCP_PYTHON"), "py/sse_transport_client.py");
    eprintln!("SDK client saw: {out}");
    check(&out, &shared);
}
