//! Our client core (auto-detection, then the HTTP+SSE transport) against real HTTP+SSE
//! servers written with the official SDKs: the TypeScript SDK's `SSEServerTransport`
//! (tests/interop/ts/sse_transport_server.mjs) and the Python SDK's `sse_app`
//! (tests/interop/py/sse_transport_server.py), over loopback TCP.
//!
//! The HTTP is performed here by a minimal blocking HTTP/1.1 driver (one thread per request,
//! `Connection: close`) standing in for the adapter, which does not exist yet; every protocol
//! decision is the core's. Needs the peers of scripts/install-peers (`.ci-cache/env`).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

use mcp_sansio::http::sse_transport::*;
use mcp_sansio::http::{HttpClientConfig, TransportEvent};
use mcp_sansio::jsonrpc::{RawJson, RequestId};
use mcp_sansio::model::{ClientCapabilities, Implementation, ProtocolVersion};
use mcp_sansio::outgoing::{Action, ExchangeId, OutgoingRequest};
use mcp_sansio::session::{ClientSetup, Event, Outcome, RequestOptions, Session};
use mcp_sansio::Config;
use serde_json::{json, Value};

use crate::harness::{peers_ready, serve_announced, PeerServer};
use crate::SERIAL;

/// Longest a whole exchange may take.
const LIMIT: Duration = Duration::from_secs(60);

fn start(program: &Path, script: &str) -> PeerServer {
    let mut command = Command::new(program);
    command.arg(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/interop")
            .join(script),
    );
    serve_announced(command, Duration::from_secs(30))
}

/// What a request thread reports.
enum Net {
    Head(ExchangeId, u16, Vec<(String, String)>),
    Data(ExchangeId, Vec<u8>),
    End(ExchangeId),
    Failed(ExchangeId),
}

/// Performs `req` on its own thread; returns the socket (to abort it).
fn perform(req: OutgoingRequest, tx: Sender<Net>) -> TcpStream {
    let url = req
        .url_str()
        .expect("the HTTP+SSE transports name their URL");
    let rest = url.strip_prefix("http://").expect("http URL");
    let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
    let stream = TcpStream::connect(authority).expect("connect to peer");
    stream.set_nodelay(true).unwrap();
    let handle = stream.try_clone().unwrap();
    let key = req.id;
    std::thread::spawn(move || {
        if exchange(&req, stream, &tx).is_err() {
            let _ = tx.send(Net::Failed(key));
        }
    });
    handle
}

fn exchange(req: &OutgoingRequest, mut stream: TcpStream, tx: &Sender<Net>) -> std::io::Result<()> {
    let method = match req.method {
        mcp_sansio::http::HttpMethod::Get => "GET",
        mcp_sansio::http::HttpMethod::Post => "POST",
        mcp_sansio::http::HttpMethod::Delete => "DELETE",
        mcp_sansio::http::HttpMethod::Other => "OPTIONS",
    };
    let url = req
        .url_str()
        .expect("the HTTP+SSE transports name their URL");
    let rest = &url["http://".len()..];
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let mut text = format!("{method} {path} HTTP/1.1\r\nHost: {authority}\r\n");
    for (name, value) in &req.headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        req.body.len()
    ));
    stream.write_all(text.as_bytes())?;
    stream.write_all(&req.body)?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status: u16 = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or(std::io::ErrorKind::InvalidData)?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some((n, v)) = line.trim_end().split_once(':') {
            headers.push((n.trim().to_string(), v.trim().to_string()));
        }
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let chunked = get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    let length = get("content-length").and_then(|v| v.parse::<usize>().ok());
    let key = req.id;
    let _ = tx.send(Net::Head(key, status, headers));
    if chunked {
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| std::io::ErrorKind::InvalidData)?;
            if size == 0 {
                break;
            }
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            chunk.truncate(size);
            let _ = tx.send(Net::Data(key, chunk));
        }
    } else {
        let mut body = Vec::new();
        match length {
            Some(n) => reader.take(n as u64).read_to_end(&mut body)?,
            None => reader.read_to_end(&mut body)?,
        };
        let _ = tx.send(Net::Data(key, body));
    }
    let _ = tx.send(Net::End(key));
    Ok(())
}

/// What one auto-detecting run saw.
struct Run {
    events: Vec<TransportEvent>,
    add: Value,
}

/// Auto-detects the server at `url`, initializes, calls `add {2, 3}`, closes.
fn drive(url: &str) -> Run {
    let start = Instant::now();
    let setup = ClientSetup {
        info: Implementation::new("mcp-sansio-sse-transport-interop", "1"),
        capabilities: ClientCapabilities::default(),
        protocol_version: ProtocolVersion::V2024_11_05,
    };
    let mut session = Session::client(Config::default(), setup, start);
    let mut client = AutoClient::new(url, HttpClientConfig::default()).unwrap();
    let (tx, rx): (Sender<Net>, Receiver<Net>) = channel();
    let mut sockets: HashMap<ExchangeId, TcpStream> = HashMap::new();
    let mut events = Vec::new();
    let mut call: Option<RequestId> = None;
    let mut add = None;
    session.initialize(start).unwrap();
    while add.is_none() {
        assert!(
            start.elapsed() < LIMIT,
            "no result in time; events so far: {events:?}"
        );
        let now = Instant::now();
        let mut buf = Vec::new();
        while let Some(t) = session.poll_transmit(&mut buf) {
            client.handle_transmit(now, std::mem::take(&mut buf).into(), t.kind);
        }
        while let Some(action) = client.poll_action() {
            match action {
                Action::Send(req) => {
                    let key = req.id;
                    sockets.insert(key, perform(req, tx.clone()));
                }
                Action::Abort(key) => {
                    if let Some(s) = sockets.remove(&key) {
                        let _ = s.shutdown(Shutdown::Both);
                    }
                }
            }
        }
        while let Some((frame, _)) = client.poll_frame() {
            session.handle_input(now, frame);
        }
        while let Some(e) = client.poll_event() {
            assert!(
                !matches!(e, TransportEvent::Closed(_)),
                "closed early: {e:?} after {events:?}"
            );
            events.push(e);
        }
        while let Some(e) = session.poll_event() {
            match e {
                Event::Initialized { .. } => {
                    let params = RawJson::from_serialize(
                        &json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
                    )
                    .unwrap();
                    call = Some(
                        session
                            .send_request(
                                now,
                                "tools/call",
                                Some(params),
                                RequestOptions::default(),
                            )
                            .unwrap(),
                    );
                }
                Event::Completed { id, outcome } if Some(&id) == call.as_ref() => match outcome {
                    Outcome::Result(raw) => {
                        add = Some(serde_json::from_str::<Value>(raw.get()).unwrap())
                    }
                    other => panic!("tools/call add: {other:?}"),
                },
                Event::Closed { reason } => panic!("session closed: {reason:?}"),
                _ => {}
            }
        }
        if client.poll_timeout().is_some_and(|t| t <= now) {
            client.handle_timeout(now);
        }
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(Net::Head(key, status, headers)) => client.handle_response_head(
                now,
                key,
                status,
                headers.iter().map(|(n, v)| (n.as_str(), v.as_str())),
            ),
            Ok(Net::Data(key, data)) => client.handle_response_body(now, key, data.into()),
            Ok(Net::End(key)) => client.handle_response_end(now, key),
            Ok(Net::Failed(key)) => client.handle_response_failed(now, key, "broke"),
            Err(_) => {}
        }
    }
    client.close(Instant::now());
    while let Some(action) = client.poll_action() {
        if let Action::Abort(key) = action {
            if let Some(s) = sockets.remove(&key) {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
    }
    Run {
        events,
        add: add.unwrap(),
    }
}

fn check(run: &Run, peer_url: &str) {
    assert_eq!(
        run.events.first(),
        Some(&TransportEvent::Detected(TransportKind::SseTransport)),
        "{:?}",
        run.events
    );
    let Some(TransportEvent::Ready { post_url }) = run.events.get(1) else {
        panic!("no endpoint event: {:?}", run.events)
    };
    let origin = peer_url.trim_end_matches("/sse");
    assert!(
        post_url.starts_with(&format!("{origin}/messages")),
        "{post_url}"
    );
    assert_eq!(run.add["content"][0]["text"], "5", "{}", run.add);
    assert_eq!(run.add["structuredContent"]["result"], 5, "{}", run.add);
}

fn peer_path(var: &str) -> PathBuf {
    PathBuf::from(std::env::var(var).unwrap_or_else(|_| panic!("{var} unset")))
}

#[test]
fn finds_and_drives_the_typescript_sdk_sse_server() {
    if !peers_ready() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let peer = start(&peer_path("MCP_NODE22"), "ts/sse_transport_server.mjs");
    let run = drive(&peer.url);
    check(&run, &peer.url);
}

#[test]
fn finds_and_drives_the_python_sdk_sse_server() {
    if !peers_ready() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let peer = start(&peer_path("MCP_PYTHON"), "py/sse_transport_server.py");
    let run = drive(&peer.url);
    check(&run, &peer.url);
}
