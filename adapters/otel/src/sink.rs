//! [`OtelSink`]: a [`TraceSink`] that turns the protocol trace into OpenTelemetry spans and
//! duration metrics named by the MCP semantic conventions.
//!
//! A request opens a span when it is taken in (a `SERVER` span) or handed out (a `CLIENT`
//! span); the response with its id closes it. The span's parent is the context found in the
//! request's `params._meta` (`traceparent`, `tracestate`); a server span also links the span
//! current when its request passes (an HTTP exchange's), or is its child when `_meta` names
//! no parent. The sink parses a frame's JSON
//! only for requests and responses it follows; it exists only when someone listens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use mcp_sansio::trace::{Direction, EnvelopeKind, FrameTrace, TraceSink};
use opentelemetry::metrics::{Histogram, Meter};
use opentelemetry::trace::TraceContextExt;
use opentelemetry::KeyValue;
use serde_json::Value;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::meta;

/// Requests followed at once; past it a new request gets no span (the peer's own limits stop
/// far below this).
pub const MAX_OPEN_SPANS: usize = 4096;

/// Sessions whose duration is kept at once (an HTTP server's sink sees many).
pub const MAX_SESSIONS: usize = 4096;

/// The bucket boundaries (seconds) the conventions give the operation and session durations.
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// Which end of the conversation the sink watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The MCP client.
    Client,
    /// The MCP server.
    Server,
}

/// How the conversation travels: `network.transport`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// stdio: `pipe`.
    Pipe,
    /// Streamable HTTP or HTTP+SSE: `tcp`.
    Tcp,
}

impl Transport {
    fn as_str(self) -> &'static str {
        match self {
            Transport::Pipe => "pipe",
            Transport::Tcp => "tcp",
        }
    }

    /// `network.protocol.name`: `http` over TCP, none on a pipe.
    fn protocol(self) -> Option<&'static str> {
        match self {
            Transport::Pipe => None,
            Transport::Tcp => Some("http"),
        }
    }
}

/// A request waiting for its response.
struct Open {
    span: tracing::Span,
    start: Instant,
    /// Attributes the duration metric shares with the span.
    labels: Vec<KeyValue>,
    /// Whether it is a `tools/call` (an `isError` result is then `tool_error`).
    tool_call: bool,
}

/// The duration histograms.
struct Instruments {
    server_operation: Histogram<f64>,
    client_operation: Histogram<f64>,
    server_session: Histogram<f64>,
    client_session: Histogram<f64>,
}

impl Instruments {
    fn new(meter: &Meter) -> Self {
        let histogram = |name: &'static str, description: &'static str| {
            let builder = meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description);
            builder.with_boundaries(DURATION_BUCKETS.to_vec()).build()
        };
        Instruments {
            server_operation: histogram(
                "mcp.server.operation.duration",
                "MCP request duration as observed on the receiver",
            ),
            client_operation: histogram(
                "mcp.client.operation.duration",
                "MCP request duration as observed on the sender",
            ),
            server_session: histogram(
                "mcp.server.session.duration",
                "The duration of the MCP session as observed on the MCP server",
            ),
            client_session: histogram(
                "mcp.client.session.duration",
                "The duration of the MCP session as observed on the MCP client",
            ),
        }
    }
}

/// Spans and metrics for one side of one transport (every session an HTTP server holds).
pub struct OtelSink {
    side: Side,
    transport: Transport,
    instruments: Instruments,
    /// Open requests by (the direction they went, their id as JSON text).
    open: HashMap<(bool, String), Open>,
    /// The session id the latest HTTP head named (none on stdio).
    session_id: Option<String>,
    /// The protocol version negotiated or named.
    protocol_version: Option<String>,
    /// First and last frame of each session (`""` for a stdio conversation).
    sessions: HashMap<String, (Instant, Instant)>,
    /// Client spans opened before their request was written.
    injected: ClientContext,
}

impl OtelSink {
    /// A sink for `side` on `transport`, recording its metrics with `meter`.
    pub fn new(side: Side, transport: Transport, meter: &Meter) -> Self {
        OtelSink {
            side,
            transport,
            instruments: Instruments::new(meter),
            open: HashMap::new(),
            session_id: None,
            protocol_version: None,
            sessions: HashMap::new(),
            injected: ClientContext {
                transport,
                spans: Arc::default(),
            },
        }
    }

    /// A handle that opens the client span of a request before it is sent and writes its
    /// context into the request's `params._meta`; the sink then adopts that span when the
    /// request passes, so the server's span becomes its child.
    pub fn client_context(&self) -> ClientContext {
        self.injected.clone()
    }

    /// A sink recording with the global meter provider's `mcp-sansio` meter.
    pub fn global(side: Side, transport: Transport) -> Self {
        Self::new(side, transport, &opentelemetry::global::meter("mcp-sansio"))
    }

    /// Whether a request that went `dir` is served here (a `SERVER` span) or sent (`CLIENT`).
    fn kind(dir: Direction) -> &'static str {
        match dir {
            Direction::Recv => "server",
            Direction::Send => "client",
        }
    }

    /// Records one session's duration, `first` frame to `end`.
    fn record_session(&self, first: Instant, end: Instant) {
        let histogram = match self.side {
            Side::Server => &self.instruments.server_session,
            Side::Client => &self.instruments.client_session,
        };
        let mut labels = vec![KeyValue::new("network.transport", self.transport.as_str())];
        if let Some(protocol) = self.transport.protocol() {
            labels.push(KeyValue::new("network.protocol.name", protocol));
        }
        if let Some(version) = &self.protocol_version {
            labels.push(KeyValue::new("mcp.protocol.version", version.clone()));
        }
        histogram.record(end.saturating_duration_since(first).as_secs_f64(), &labels);
    }

    /// Notes a frame of the current session (on HTTP, one named by `Mcp-Session-Id`: an
    /// `initialize` before its answer, or a stateless request, is in none).
    fn seen(&mut self, at: Instant) {
        let key = match (&self.session_id, self.transport) {
            (Some(id), _) => id.clone(),
            (None, Transport::Pipe) => String::new(),
            (None, Transport::Tcp) => return,
        };
        if let Some((_, last)) = self.sessions.get_mut(&key) {
            *last = at;
        } else if self.sessions.len() < MAX_SESSIONS {
            self.sessions.insert(key, (at, at));
        }
    }

    fn request(&mut self, trace: &FrameTrace, message: &Value) {
        let Some(method) = trace.method.as_deref() else {
            return;
        };
        let params = &message["params"];
        if let Some(version) = meta::protocol_version(params) {
            self.protocol_version = Some(version.to_owned());
        }
        let tool = (method == "tools/call")
            .then(|| params["name"].as_str())
            .flatten();
        let prompt = (method == "prompts/get")
            .then(|| params["name"].as_str())
            .flatten();
        let uri = params["uri"].as_str();
        let name = match tool.or(prompt) {
            Some(target) => format!("{method} {target}"),
            None => method.to_owned(),
        };
        let adopted = match trace.dir {
            Direction::Send => self.injected.adopt(params),
            Direction::Recv => None,
        };
        let span = match adopted {
            Some(span) => span,
            None => {
                let span = new_span(&name, Self::kind(trace.dir), method, self.transport);
                let ambient = match trace.dir {
                    Direction::Recv => ambient_context(),
                    Direction::Send => None,
                };
                match (meta::extract(params), ambient) {
                    // The client's span is the parent; the transport's span a link.
                    (Some(parent), ambient) => {
                        let _ = span.set_parent(parent);
                        if let Some(ambient) = ambient {
                            span.add_link(ambient.span().span_context().clone());
                        }
                    }
                    (None, Some(ambient)) => {
                        let _ = span.set_parent(ambient);
                    }
                    (None, None) => {}
                }
                span
            }
        };
        let mut labels = vec![
            KeyValue::new("mcp.method.name", method.to_owned()),
            KeyValue::new("network.transport", self.transport.as_str()),
        ];
        if let Some(protocol) = self.transport.protocol() {
            labels.push(KeyValue::new("network.protocol.name", protocol));
        }
        if let Some(id) = &trace.id {
            span.record("jsonrpc.request.id", id.trim_matches('"'));
        }
        if let Some(tool) = tool {
            span.record("gen_ai.tool.name", tool);
            span.record("gen_ai.operation.name", "execute_tool");
            labels.push(KeyValue::new("gen_ai.tool.name", tool.to_owned()));
            labels.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        if let Some(prompt) = prompt {
            span.record("gen_ai.prompt.name", prompt);
            labels.push(KeyValue::new("gen_ai.prompt.name", prompt.to_owned()));
        }
        if let Some(uri) = uri {
            span.record("mcp.resource.uri", uri);
        }
        if let Some(session) = &self.session_id {
            span.record("mcp.session.id", session.as_str());
        }
        if let Some(version) = &self.protocol_version {
            span.record("mcp.protocol.version", version.as_str());
            labels.push(KeyValue::new("mcp.protocol.version", version.clone()));
        }
        let Some(id) = trace.id.clone() else {
            // A notification: nothing answers it, its span ends at once.
            return;
        };
        if self.open.len() < MAX_OPEN_SPANS {
            let key = (trace.dir == Direction::Send, id);
            let open = Open {
                span,
                start: trace.at,
                labels,
                tool_call: tool.is_some(),
            };
            self.open.insert(key, open);
        }
    }

    fn response(&mut self, trace: &FrameTrace, message: &Value) {
        let Some(id) = trace.id.clone() else {
            return;
        };
        // A response goes the other way from its request.
        let key = (trace.dir == Direction::Recv, id);
        let Some(mut open) = self.open.remove(&key) else {
            return;
        };
        let result = &message["result"];
        if let Some(version) = result["protocolVersion"].as_str() {
            self.protocol_version = Some(version.to_owned());
        }
        let error = match (trace.error_code, &message["error"]) {
            (Some(code), error) => Some((code.to_string(), error["message"].as_str())),
            (None, _) if open.tool_call && result["isError"] == Value::Bool(true) => {
                Some(("tool_error".to_owned(), None))
            }
            _ => None,
        };
        if let Some((kind, message)) = &error {
            open.span.record("error.type", kind.as_str());
            if trace.error_code.is_some() {
                open.span.record("rpc.response.status_code", kind.as_str());
            }
            open.span.record("otel.status_code", "ERROR");
            if let Some(message) = message {
                open.span.record("otel.status_description", *message);
            }
            open.labels.push(KeyValue::new("error.type", kind.clone()));
            if trace.error_code.is_some() {
                open.labels
                    .push(KeyValue::new("rpc.response.status_code", kind.clone()));
            }
        }
        let seconds = trace.at.saturating_duration_since(open.start).as_secs_f64();
        let histogram = match trace.dir {
            // The response is handed out: this side served the request.
            Direction::Send => &self.instruments.server_operation,
            Direction::Recv => &self.instruments.client_operation,
        };
        histogram.record(seconds, &open.labels);
        drop(open.span);
    }
}

impl TraceSink for OtelSink {
    fn frame(&mut self, trace: &FrameTrace, raw: &[u8]) {
        self.seen(trace.at);
        let kind = trace.kind;
        if !matches!(
            kind,
            EnvelopeKind::Request
                | EnvelopeKind::Notification
                | EnvelopeKind::Response
                | EnvelopeKind::Error
        ) {
            return;
        }
        let Ok(message) = serde_json::from_slice::<Value>(raw) else {
            return;
        };
        match kind {
            EnvelopeKind::Request | EnvelopeKind::Notification => self.request(trace, &message),
            _ => self.response(trace, &message),
        }
    }

    /// Records the duration of the session that ended (of every one followed, for `None`),
    /// from its first frame to `at`.
    fn ended(&mut self, at: Instant, session: Option<&str>) {
        let ended: Vec<Instant> = match session {
            Some(id) => self
                .sessions
                .remove(id)
                .map(|(first, _)| first)
                .into_iter()
                .collect(),
            None => self.sessions.drain().map(|(_, (first, _))| first).collect(),
        };
        for first in ended {
            self.record_session(first, at);
        }
    }

    /// A request head names the session of the frames that follow it (none: a new one, or
    /// none at all); a response head that names one (the answer to `initialize`) sets it. A
    /// client's DELETE ends its session.
    fn http(&mut self, at: Instant, dir: Direction, start: &str, headers: &[(&str, &str)]) {
        let header = |wanted: &str| {
            headers
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(wanted))
                .map(|(_, value)| (*value).to_owned())
        };
        let session = header("mcp-session-id");
        if self.side == Side::Client && dir == Direction::Send && start.starts_with("DELETE ") {
            // The client ends its session.
            if let Some(id) = &session {
                self.ended(at, Some(id));
            }
        }
        if !start.starts_with("HTTP/") || session.is_some() {
            self.session_id = session;
        }
        if let Some(version) = header("mcp-protocol-version") {
            self.protocol_version = Some(version);
        }
    }
}

impl Drop for OtelSink {
    /// Records the duration of each session still followed (first frame to last); the spans
    /// of requests never answered end unrecorded.
    fn drop(&mut self) {
        let open: Vec<(Instant, Instant)> = self.sessions.drain().map(|(_, t)| t).collect();
        for (first, last) in open {
            self.record_session(first, last);
        }
    }
}

/// The context of the span current on this thread (an HTTP exchange's, see
/// [`HttpServerSpan::in_scope`](crate::HttpServerSpan::in_scope)), when there is one.
fn ambient_context() -> Option<opentelemetry::Context> {
    let current = tracing::Span::current();
    if current.is_none() {
        return None;
    }
    let cx = current.context();
    cx.span().span_context().is_valid().then_some(cx)
}

/// A span with every attribute of the conventions declared (recorded as they are known).
fn new_span(name: &str, kind: &str, method: &str, transport: Transport) -> tracing::Span {
    tracing::info_span!(
        parent: None,
        "mcp",
        otel.name = %name,
        otel.kind = kind,
        mcp.method.name = %method,
        jsonrpc.request.id = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.operation.name = Empty,
        gen_ai.prompt.name = Empty,
        mcp.resource.uri = Empty,
        mcp.session.id = Empty,
        mcp.protocol.version = Empty,
        network.transport = transport.as_str(),
        network.protocol.name = transport.protocol(),
        error.type = Empty,
        rpc.response.status_code = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    )
}

/// Opens client spans before their requests are written (see [`OtelSink::client_context`]).
#[derive(Clone)]
pub struct ClientContext {
    transport: Transport,
    /// Spans opened and not yet seen on the wire, by their `traceparent`.
    spans: Arc<Mutex<HashMap<String, tracing::Span>>>,
}

impl ClientContext {
    /// Opens the `CLIENT` span of a `method` request (a child of the current span, if any)
    /// and writes its context into `params._meta` (an absent `params` becomes an object).
    /// Without an OpenTelemetry layer nothing is written.
    pub fn inject(&self, method: &str, params: &mut Value) {
        let target = match method {
            "tools/call" | "prompts/get" => params.get("name").and_then(Value::as_str),
            _ => None,
        };
        let name = match target {
            Some(target) => format!("{method} {target}"),
            None => method.to_owned(),
        };
        let span = new_span(&name, "client", method, self.transport);
        let _ = span.set_parent(tracing::Span::current().context());
        let cx = span.context();
        let mut probe = Value::Null;
        meta::inject(&cx, &mut probe);
        let Some(parent) = probe["_meta"]["traceparent"].as_str() else {
            return;
        };
        let mut spans = self.spans.lock().unwrap_or_else(|p| p.into_inner());
        if spans.len() >= MAX_OPEN_SPANS {
            return;
        }
        spans.insert(parent.to_owned(), span);
        drop(spans);
        meta::inject(&cx, params);
    }

    /// The span opened for the request whose `params` these are.
    fn adopt(&self, params: &Value) -> Option<tracing::Span> {
        let parent = params.get("_meta")?.get("traceparent")?.as_str()?;
        let mut spans = self.spans.lock().unwrap_or_else(|p| p.into_inner());
        spans.remove(parent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_request_head_names_its_own_session() {
        let meter = opentelemetry::global::meter("test");
        let mut sink = OtelSink::new(Side::Server, Transport::Tcp, &meter);
        let now = Instant::now();
        sink.http(
            now,
            Direction::Recv,
            "POST /mcp",
            &[("Mcp-Session-Id", "a")],
        );
        assert_eq!(sink.session_id.as_deref(), Some("a"));
        // Another client's `initialize` carries no session: it is not session `a`'s.
        sink.http(now, Direction::Recv, "POST /mcp", &[]);
        assert_eq!(sink.session_id, None);
        sink.http(
            now,
            Direction::Send,
            "HTTP/1.1 200 OK",
            &[("mcp-session-id", "b")],
        );
        assert_eq!(sink.session_id.as_deref(), Some("b"));
        // A response without the header leaves it.
        sink.http(now, Direction::Send, "HTTP/1.1 202 Accepted", &[]);
        assert_eq!(sink.session_id.as_deref(), Some("b"));
    }
}
