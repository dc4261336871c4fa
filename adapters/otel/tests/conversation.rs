//! A conversation between a client and our app server (the real server machine, fed the
//! client's frames), each side watched by an `OtelSink`: the spans and metrics reach
//! in-memory exporters with the MCP semantic conventions' names, attributes and parentage.

use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::model::Implementation;
use mcp_sansio::testing::ServerRig;
use mcp_sansio::trace::{Direction, FrameTrace, TraceSink};
use mcp_sansio_otel::{OtelSink, Side, Transport};
use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{json, Value};
use tracing_subscriber::layer::SubscriberExt;

#[path = "support/attrs.rs"]
mod attrs;
use attrs::{attr, text};

/// The client's and the server's sinks, and the server they talk to.
struct Conversation {
    client: OtelSink,
    server: OtelSink,
    rig: ServerRig,
}

impl Conversation {
    /// The client sends `message`; the server's answers come back. A millisecond passes on
    /// each hop.
    fn send(&mut self, mut message: Value, inject: bool) -> Vec<Value> {
        if inject {
            let method = message["method"].as_str().unwrap_or_default().to_owned();
            self.client
                .client_context()
                .inject(&method, &mut message["params"]);
        }
        let frame = Bytes::from(message.to_string());
        let sent = self.rig.now;
        self.client
            .frame(&FrameTrace::new(Direction::Send, sent, &frame), &frame);
        self.server
            .frame(&FrameTrace::new(Direction::Recv, sent, &frame), &frame);
        self.rig.now += Duration::from_millis(1);
        let answers = self.rig.send_bytes(frame);
        for answer in &answers {
            let frame = Bytes::from(answer.to_string());
            let at = self.rig.now;
            self.server
                .frame(&FrameTrace::new(Direction::Send, at, &frame), &frame);
            self.client
                .frame(&FrameTrace::new(Direction::Recv, at, &frame), &frame);
        }
        answers
    }
}

#[test]
fn spans_and_metrics_follow_the_conventions() {
    let spans = InMemorySpanExporter::default();
    let tracer = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let metrics = InMemoryMetricExporter::default();
    let meter_provider = SdkMeterProvider::builder()
        .with_periodic_exporter(metrics.clone())
        .build();
    let meter = opentelemetry::metrics::MeterProvider::meter(&meter_provider, "test");
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer.tracer("test")));

    tracing::subscriber::with_default(subscriber, || {
        let now = Instant::now();
        let server = Server::builder(Implementation::new("otel-test", "1"))
            .tool(
                Tool::new("add", json!({"type": "object"}))
                    .sync_handler(|_, _| Ok(CallToolResult::text("3"))),
            )
            .tool(
                Tool::new("fail", json!({"type": "object"}))
                    .sync_handler(|_, _| Ok(CallToolResult::error("no"))),
            )
            .build(now);
        let mut talk = Conversation {
            client: OtelSink::new(Side::Client, Transport::Pipe, &meter),
            server: OtelSink::new(Side::Server, Transport::Pipe, &meter),
            rig: ServerRig::from_server(server, now),
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}}});
        assert!(talk.send(init, false)[0]["result"].is_object());
        talk.send(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            false,
        );
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "add", "arguments": {}}});
        assert_eq!(
            talk.send(call, true)[0]["result"]["content"][0]["text"],
            "3"
        );
        let fail = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "fail", "arguments": {}}});
        assert_eq!(talk.send(fail, false)[0]["result"]["isError"], true);
        let unknown = json!({"jsonrpc": "2.0", "id": 3, "method": "prompts/get",
            "params": {"name": "nope"}});
        assert!(talk.send(unknown, false)[0]["error"].is_object());
        drop(talk);
    });

    let finished = spans.get_finished_spans().expect("spans");
    let named = |name: &str, kind: SpanKind| -> &SpanData {
        finished
            .iter()
            .find(|s| s.name == name && s.span_kind == kind)
            .unwrap_or_else(|| panic!("no {kind:?} span {name}: {finished:#?}"))
    };
    for kind in [SpanKind::Client, SpanKind::Server] {
        let init = named("initialize", kind.clone());
        assert_eq!(text(init, "mcp.method.name").as_deref(), Some("initialize"));
        assert_eq!(text(init, "jsonrpc.request.id").as_deref(), Some("0"));
        assert_eq!(text(init, "network.transport").as_deref(), Some("pipe"));
        named("notifications/initialized", kind.clone());

        let add = named("tools/call add", kind.clone());
        assert_eq!(text(add, "gen_ai.tool.name").as_deref(), Some("add"));
        assert_eq!(
            text(add, "gen_ai.operation.name").as_deref(),
            Some("execute_tool")
        );
        assert_eq!(
            text(add, "mcp.protocol.version").as_deref(),
            Some("2025-11-25")
        );
        assert_eq!(attr(add, "error.type"), None);

        let fail = named("tools/call fail", kind.clone());
        assert_eq!(text(fail, "error.type").as_deref(), Some("tool_error"));
        assert!(matches!(fail.status, Status::Error { .. }));

        let prompt = named("prompts/get nope", kind.clone());
        assert_eq!(text(prompt, "gen_ai.prompt.name").as_deref(), Some("nope"));
        let code = text(prompt, "error.type").expect("a JSON-RPC error code");
        assert!(code.starts_with("-32"), "{code}");
        assert_eq!(text(prompt, "rpc.response.status_code"), Some(code));
    }
    // The client's context went in `params._meta`: the server's span is its child.
    let client_add = named("tools/call add", SpanKind::Client);
    let server_add = named("tools/call add", SpanKind::Server);
    assert_eq!(
        server_add.span_context.trace_id(),
        client_add.span_context.trace_id()
    );
    assert_eq!(server_add.parent_span_id, client_add.span_context.span_id());
    assert!(server_add.parent_span_is_remote);

    meter_provider.force_flush().expect("flush metrics");
    let exported = metrics.get_finished_metrics().expect("metrics");
    let names: Vec<String> = exported
        .iter()
        .flat_map(|rm| rm.scope_metrics())
        .flat_map(|sm| sm.metrics())
        .map(|m| m.name().to_owned())
        .collect();
    for name in [
        "mcp.server.operation.duration",
        "mcp.client.operation.duration",
        "mcp.server.session.duration",
        "mcp.client.session.duration",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    // The server timed each request once, in the conventions' buckets, with its attributes.
    let server_ops = exported
        .iter()
        .flat_map(|rm| rm.scope_metrics())
        .flat_map(|sm| sm.metrics())
        .find(|m| m.name() == "mcp.server.operation.duration")
        .expect("the server's operation durations");
    let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = server_ops.data() else {
        panic!("not an f64 histogram: {server_ops:?}");
    };
    let points: Vec<_> = histogram.data_points().collect();
    let total: u64 = points.iter().map(|p| p.count()).sum();
    assert_eq!(total, 4, "initialize, two tool calls and the prompt");
    let bounds: Vec<f64> = points[0].bounds().collect();
    assert_eq!(bounds.first(), Some(&0.01));
    assert_eq!(bounds.last(), Some(&300.0));
    let failed = points
        .iter()
        .find(|p| {
            p.attributes()
                .any(|kv| kv.key.as_str() == "error.type" && kv.value.as_str() == "tool_error")
        })
        .expect("the failed tool call's point");
    assert!(failed
        .attributes()
        .any(|kv| kv.key.as_str() == "gen_ai.tool.name" && kv.value.as_str() == "fail"));
    let _ = tracer.shutdown();
}
