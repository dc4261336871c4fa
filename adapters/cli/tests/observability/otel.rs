//! `mcp-sansio client --otel` against `serve --stdio --otel` (feature `otel`): both processes
//! export their spans and metrics over OTLP/HTTP (JSON) to a collector this test runs on
//! loopback; the spans carry the MCP semantic conventions' names and attributes, and the
//! server's span of the tool call is the child of the client's (context in `params._meta`).
#![cfg(feature = "otel")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::http_fixture;

use http_fixture::HttpFixture;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-sansio");

/// Requests the collector took: (path, JSON body).
type Received = Arc<Mutex<Vec<(String, Value)>>>;

/// Reads one request (head, then `Content-Length` bytes) and answers 200 `{}`.
fn serve_one(stream: TcpStream, received: &Received) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length.min(16 << 20)];
    reader.read_exact(&mut body)?;
    let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
    received.lock().unwrap().push((path, json));
    let mut stream = stream;
    stream.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
    )
}

/// The spans of the service named `service`, as `(name, span)`.
fn spans_of(received: &[(String, Value)], service: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (path, body) in received.iter().filter(|(p, _)| p == "/v1/traces") {
        let _ = path;
        for rs in body["resourceSpans"].as_array().into_iter().flatten() {
            let name = attribute(&rs["resource"], "service.name");
            if name.as_deref() != Some(service) {
                continue;
            }
            for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                for span in ss["spans"].as_array().into_iter().flatten() {
                    let name = span["name"].as_str().unwrap_or_default().to_owned();
                    out.push((name, span.clone()));
                }
            }
        }
    }
    out
}

/// A string attribute of a resource or span.
fn attribute(holder: &Value, key: &str) -> Option<String> {
    holder["attributes"]
        .as_array()?
        .iter()
        .find(|kv| kv["key"] == key)
        .and_then(|kv| kv["value"]["stringValue"].as_str().map(str::to_owned))
}

/// An OTLP/HTTP collector on loopback: its port, what it received, and its thread.
struct Collector {
    port: u16,
    received: Received,
    thread: std::thread::JoinHandle<()>,
}

impl Collector {
    fn start() -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the collector");
        let port = listener.local_addr().expect("address").port();
        let received: Received = Arc::default();
        let sink = received.clone();
        let thread = std::thread::spawn(move || {
            // Bounded: `stop` ends it with a last connection that says `stop`.
            for _ in 0..200 {
                let Ok((stream, _)) = listener.accept() else {
                    break;
                };
                let mut peek = [0u8; 4];
                if stream
                    .peek(&mut peek)
                    .map(|n| &peek[..n] == b"stop")
                    .unwrap_or(true)
                {
                    break;
                }
                let _ = serve_one(stream, &sink);
            }
        });
        Collector {
            port,
            received,
            thread,
        }
    }

    /// `mcp-sansio` with the exporter pointed here, in JSON.
    fn command(&self) -> Command {
        let mut command = Command::new(BIN);
        command
            .env(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                format!("http://127.0.0.1:{}", self.port),
            )
            .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json");
        command
    }

    /// Stops the collector and hands back what it received.
    fn stop(self) -> Vec<(String, Value)> {
        let mut stop = TcpStream::connect(("127.0.0.1", self.port)).expect("connect to stop");
        let _ = stop.write_all(b"stop");
        drop(stop);
        self.thread.join().expect("collector thread");
        let received = self.received.lock().unwrap().clone();
        received
    }
}

/// `client … --otel tools call greet` (stateful) with `target` (a URL, or `--stdio` and the
/// server command after `--`), exporting to `collector`.
fn greet(collector: &Collector, target: &[&str]) -> std::process::Output {
    let (before, after) = match target.iter().position(|a| *a == "--") {
        Some(at) => target.split_at(at),
        None => (target, &[][..]),
    };
    collector
        .command()
        .arg("client")
        .args(before)
        .args(["--era", "stateful", "--timeout", "30", "--otel"])
        .args(["tools", "call", "greet", "--args", r#"{"name":"Ada"}"#])
        .args(after)
        .output()
        .expect("run mcp-sansio client")
}

/// Asserts that every metric of `names` reached the collector.
fn assert_metrics(received: &[(String, Value)], names: &[&str]) {
    let metrics: String = received
        .iter()
        .filter(|(p, _)| p == "/v1/metrics")
        .map(|(_, body)| body.to_string())
        .collect();
    for name in names {
        assert!(metrics.contains(name), "{name} missing from {metrics}");
    }
}

/// The span named `name` among `spans`.
fn find(spans: &[(String, Value)], name: &str) -> Value {
    spans
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, s)| s.clone())
        .unwrap_or_else(|| panic!("no span {name} in {spans:#?}"))
}

#[test]
fn spans_and_metrics_reach_an_otlp_collector() {
    let collector = Collector::start();
    let out = greet(
        &collector,
        &["--stdio", "--", BIN, "serve", "--stdio", "--otel"],
    );
    let received = collector.stop();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let client = spans_of(&received, "mcp-sansio client");
    let server = spans_of(&received, "mcp-sansio serve");
    for spans in [&client, &server] {
        let init = find(spans, "initialize");
        assert_eq!(
            attribute(&init, "mcp.method.name").as_deref(),
            Some("initialize")
        );
        assert_eq!(
            attribute(&init, "network.transport").as_deref(),
            Some("pipe")
        );
        let call = find(spans, "tools/call greet");
        assert_eq!(
            attribute(&call, "gen_ai.tool.name").as_deref(),
            Some("greet")
        );
        assert_eq!(
            attribute(&call, "mcp.method.name").as_deref(),
            Some("tools/call")
        );
        assert_eq!(attribute(&call, "jsonrpc.request.id").as_deref(), Some("1"));
        assert_eq!(
            attribute(&call, "mcp.protocol.version").as_deref(),
            Some("2025-11-25")
        );
        assert!(attribute(&call, "error.type").is_none(), "{call}");
    }
    let client_call = find(&client, "tools/call greet");
    let server_call = find(&server, "tools/call greet");
    assert_eq!(server_call["traceId"], client_call["traceId"]);
    assert_eq!(server_call["parentSpanId"], client_call["spanId"]);

    assert_metrics(
        &received,
        &[
            "mcp.client.operation.duration",
            "mcp.server.operation.duration",
            "mcp.server.session.duration",
            "mcp.client.session.duration",
        ],
    );
}

#[test]
fn an_http_conversation_names_its_session_and_transport() {
    let collector = Collector::start();
    let endpoint = format!("http://127.0.0.1:{}", collector.port);
    let server = HttpFixture::start_with(
        &["--otel"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ],
    );
    let out = greet(&collector, &[&server.url]);
    // SIGTERM: the server shuts down gracefully and flushes its exporters.
    server.terminate();
    let received = collector.stop();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let client = find(
        &spans_of(&received, "mcp-sansio client"),
        "tools/call greet",
    );
    let server = find(&spans_of(&received, "mcp-sansio serve"), "tools/call greet");
    for span in [&client, &server] {
        assert_eq!(attribute(span, "network.transport").as_deref(), Some("tcp"));
        assert_eq!(
            attribute(span, "mcp.protocol.version").as_deref(),
            Some("2025-11-25")
        );
    }
    let session = attribute(&server, "mcp.session.id").expect("a session id");
    assert_eq!(session.len(), 32, "{session}");
    assert_eq!(attribute(&client, "mcp.session.id"), Some(session));
    assert_eq!(server["parentSpanId"], client["spanId"]);

    // The server's span of the exchange that carried the call: the MCP span links to it.
    let http = spans_of(&received, "mcp-sansio serve")
        .into_iter()
        .filter(|(name, _)| name == "POST")
        .map(|(_, span)| span)
        .find(|span| {
            server["links"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|link| link["spanId"] == span["spanId"])
        })
        .expect("an HTTP span linked from the tool call's span");
    assert_eq!(attribute(&http, "url.path").as_deref(), Some("/mcp"));
    assert_eq!(
        attribute(&http, "http.request.method").as_deref(),
        Some("POST")
    );

    // The client ended its session (DELETE), the server recorded its end.
    assert_metrics(
        &received,
        &["mcp.server.session.duration", "mcp.client.session.duration"],
    );
}

#[test]
fn a_bench_run_exports_spans_and_metrics_of_each_session() {
    let collector = Collector::start();
    let out = collector
        .command()
        .args(["bench", "--stdio", "--otel", "--json", "--requests", "20"])
        .args(["--sessions", "2", "--concurrency", "2", "--warmup", "0s"])
        .args(["--mix", "tool:test_simple_text", "--timeout", "20s", "--"])
        .args([BIN, "serve", "--stdio"])
        .output()
        .expect("run mcp-sansio bench");
    let received = collector.stop();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spans = spans_of(&received, "mcp-sansio bench");
    let calls = spans
        .iter()
        .filter(|(name, _)| name == "tools/call test_simple_text")
        .count();
    assert!(calls >= 20, "{calls} tool call spans");
    let inits: Vec<&Value> = spans
        .iter()
        .filter(|(name, _)| name == "initialize")
        .map(|(_, span)| span)
        .collect();
    assert_eq!(inits.len(), 2, "one handshake per session");
    for init in inits {
        assert_eq!(attribute(init, "jsonrpc.request.id").as_deref(), Some("0"));
        assert_eq!(
            attribute(init, "network.transport").as_deref(),
            Some("pipe")
        );
    }
    assert_metrics(
        &received,
        &[
            "mcp.client.operation.duration",
            "mcp.client.session.duration",
        ],
    );
}
