//! Our HTTP server (mcp-sansio-http with its `otel` feature) traced by an `OtelSink`: each
//! exchange has an HTTP server span by the HTTP conventions, and the MCP server span of a
//! request it carries is its child (no context in `params._meta`) or links to it (the
//! client's span in `_meta` is the parent). Spans reach an in-memory exporter; each
//! session's duration is recorded when it ends: by DELETE, by expiry, or at shutdown.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::Duration;

use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::model::Implementation;
use mcp_sansio_http::server::{HttpServer, HttpServerOptions, ShutdownHandle};
use mcp_sansio_http::HttpTrace;
use mcp_sansio_otel::{OtelSink, Side, Transport};
use opentelemetry::trace::{SpanKind, TracerProvider as _};
use opentelemetry::Value as OtelValue;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{json, Value};
use tracing_subscriber::layer::SubscriberExt;

#[path = "support/attrs.rs"]
mod attrs;
use attrs::{attr, text};

/// The client's span, as a client would name it in `params._meta`.
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

/// The sessions' idle timeout: long enough for a few requests on a loaded machine.
const IDLE: Duration = Duration::from_secs(3);

/// A traced server on loopback, run on a thread of its own with the exporters' subscriber.
struct Running {
    addr: String,
    stop: ShutdownHandle,
    /// Hands back the tracer provider (shutting it down would empty the exporter).
    thread: std::thread::JoinHandle<SdkTracerProvider>,
}

fn start(spans: InMemorySpanExporter, meter_provider: &SdkMeterProvider) -> Running {
    let meter = opentelemetry::metrics::MeterProvider::meter(meter_provider, "test");
    let (tx, rx) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        let tracer = SdkTracerProvider::builder()
            .with_simple_exporter(spans)
            .build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(tracer.tracer("test")));
        let mut options = HttpServerOptions::default();
        options.endpoint.idle_timeout = IDLE;
        let sink = OtelSink::new(Side::Server, Transport::Tcp, &meter);
        options.trace = Some(HttpTrace::new(sink));
        let server = HttpServer::bind("127.0.0.1:0".parse().unwrap(), options, |now| {
            Server::builder(Implementation::new("otel-http", "1"))
                .tool(
                    Tool::new("add", json!({"type": "object"}))
                        .sync_handler(|_, _| Ok(CallToolResult::text("3"))),
                )
                .build(now)
        })
        .expect("bind");
        tx.send((server.local_addr().to_string(), server.shutdown_handle()))
            .expect("hand the address over");
        tracing::subscriber::with_default(subscriber, || server.run().expect("serve"));
        tracer
    });
    let (addr, stop) = rx.recv_timeout(Duration::from_secs(30)).expect("server up");
    Running { addr, stop, thread }
}

/// One exchange on a fresh connection: (status, session id, body).
fn exchange(
    addr: &str,
    method: &str,
    sid: Option<&str>,
    body: &Value,
) -> (u16, Option<String>, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let body = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Connection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(sid) = sid {
        head.push_str(&format!("Mcp-Session-Id: {sid}\r\n"));
    }
    stream
        .write_all(format!("{head}\r\n{body}").as_bytes())
        .expect("write");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let sid = answer
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .map(|s| s.trim().to_owned());
    (status, sid, answer)
}

/// How many session durations the server recorded so far.
fn sessions_recorded(provider: &SdkMeterProvider, metrics: &InMemoryMetricExporter) -> u64 {
    provider.force_flush().expect("flush metrics");
    let exported = metrics.get_finished_metrics().expect("metrics");
    // Cumulative: the latest export holds the total.
    let Some(last) = exported.last() else {
        return 0;
    };
    last.scope_metrics()
        .flat_map(|sm| sm.metrics())
        .filter(|m| m.name() == "mcp.server.session.duration")
        .map(|m| match m.data() {
            AggregatedMetrics::F64(MetricData::Histogram(h)) => {
                h.data_points().map(|p| p.count()).sum::<u64>()
            }
            other => panic!("not an f64 histogram: {other:?}"),
        })
        .sum()
}

#[test]
fn mcp_spans_are_children_of_or_linked_to_their_http_exchange() {
    let spans = InMemorySpanExporter::default();
    let metrics = InMemoryMetricExporter::default();
    let meter_provider = SdkMeterProvider::builder()
        .with_periodic_exporter(metrics.clone())
        .build();
    let server = start(spans.clone(), &meter_provider);

    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}});
    let (status, sid, _) = exchange(&server.addr, "POST", None, &init);
    assert_eq!(status, 200);
    let sid = sid.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        exchange(&server.addr, "POST", Some(&sid), &initialized).0,
        202
    );
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "add", "arguments": {},
        "_meta": {"traceparent": format!("00-{TRACE_ID}-{CLIENT_SPAN}-01")}}});
    let (status, _, answer) = exchange(&server.addr, "POST", Some(&sid), &call);
    assert_eq!(status, 200);
    assert!(answer.contains(r#""text":"3""#), "{answer}");

    // Session durations: the DELETE ends the first session, the second expires, the third
    // ends when the server shuts down.
    assert_eq!(sessions_recorded(&meter_provider, &metrics), 0);
    assert_eq!(
        exchange(&server.addr, "DELETE", Some(&sid), &Value::Null).0,
        200
    );
    assert_eq!(sessions_recorded(&meter_provider, &metrics), 1);
    let (_, idle, _) = exchange(&server.addr, "POST", None, &init);
    exchange(&server.addr, "POST", idle.as_deref(), &initialized);
    let expired = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(200));
        sessions_recorded(&meter_provider, &metrics) == 2
    });
    assert!(expired, "the idle session's end is recorded");
    exchange(&server.addr, "POST", None, &init);
    assert_eq!(sessions_recorded(&meter_provider, &metrics), 2);
    server.stop.shutdown();
    let _provider = server.thread.join().expect("server thread");
    let finished = spans.get_finished_spans().expect("spans");

    let http: Vec<&SpanData> = finished
        .iter()
        .filter(|s| s.span_kind == SpanKind::Server && s.name == "POST")
        .collect();
    assert_eq!(http.len(), 6, "one HTTP span per POST: {finished:#?}");
    for span in &http {
        assert_eq!(text(span, "http.request.method").as_deref(), Some("POST"));
        assert_eq!(text(span, "url.path").as_deref(), Some("/mcp"));
        assert_eq!(
            text(span, "network.protocol.version").as_deref(),
            Some("1.1")
        );
        let status = attr(span, "http.response.status_code").expect("a status");
        assert!(matches!(status, OtelValue::I64(200 | 202)), "{status:?}");
    }
    let http_of = |mcp: &SpanData| -> &SpanData {
        http.iter()
            .copied()
            .find(|h| {
                h.span_context.span_id() == mcp.parent_span_id
                    || mcp
                        .links
                        .iter()
                        .any(|l| l.span_context.span_id() == h.span_context.span_id())
            })
            .unwrap_or_else(|| panic!("no HTTP span for {mcp:#?}"))
    };

    // No context in `_meta`: the MCP span is the child of its exchange's span.
    let initialize = finished
        .iter()
        .find(|s| s.name == "initialize" && s.span_kind == SpanKind::Server)
        .expect("the initialize span");
    let parent = http_of(initialize);
    assert_eq!(initialize.parent_span_id, parent.span_context.span_id());
    assert_eq!(
        initialize.span_context.trace_id(),
        parent.span_context.trace_id()
    );
    assert!(initialize.links.is_empty());

    // The client's span in `_meta` is the parent; the exchange's span is a link.
    let tool = finished
        .iter()
        .find(|s| s.name == "tools/call add" && s.span_kind == SpanKind::Server)
        .expect("the tool call's span");
    assert_eq!(tool.span_context.trace_id().to_string(), TRACE_ID);
    assert_eq!(tool.parent_span_id.to_string(), CLIENT_SPAN);
    assert!(tool.parent_span_is_remote);
    let linked = http_of(tool);
    assert_eq!(tool.links.len(), 1);
    assert_ne!(linked.span_context.span_id(), parent.span_context.span_id());
    assert_eq!(
        tool.links[0].span_context.trace_id(),
        linked.span_context.trace_id()
    );
    assert_eq!(text(tool, "mcp.session.id"), Some(sid));
    assert_eq!(
        sessions_recorded(&meter_provider, &metrics),
        3,
        "at shutdown"
    );
    let _ = meter_provider.shutdown();
}
