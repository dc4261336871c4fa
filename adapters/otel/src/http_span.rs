//! [`HttpServerSpan`]: the `SERVER` span of one HTTP exchange on a server, by the HTTP
//! semantic conventions (`http.request.method`, `url.path`, `http.response.status_code`,
//! `network.protocol.version`). An adapter runs the exchange's request frames through the sink
//! inside it ([`HttpServerSpan::in_scope`]), so the MCP server span of a request it carries is
//! its child, or, when `params._meta` names the client's span as the parent, links to it (as
//! the MCP conventions ask: MCP and transport contexts are independent).

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The span of one HTTP exchange; it ends when dropped (keep it with a streamed body until
/// the body ends).
#[derive(Debug)]
pub struct HttpServerSpan {
    span: tracing::Span,
}

/// The W3C trace context request headers: `traceparent`, `tracestate`.
struct Headers<'a>([Option<&'a str>; 2]);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => self.0[0],
            "tracestate" => self.0[1],
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate"]
    }
}

impl HttpServerSpan {
    /// Opens the span of a request: `method` (`POST`), the URL's `path` (no query), the HTTP
    /// `version` (`1.1`, `2`), and `header` to look a request header up by its lower-case
    /// name: a `traceparent` header (W3C Trace Context) makes the span its remote child.
    pub fn start<'a>(
        method: &str,
        path: &str,
        version: &str,
        header: impl Fn(&str) -> Option<&'a str>,
    ) -> Self {
        let span = tracing::info_span!(
            parent: None,
            "http",
            otel.name = %method,
            otel.kind = "server",
            http.request.method = %method,
            url.path = %path,
            url.scheme = "http",
            network.protocol.name = "http",
            network.protocol.version = %version,
            http.response.status_code = Empty,
            error.type = Empty,
            otel.status_code = Empty,
        );
        let headers = Headers([header("traceparent"), header("tracestate")]);
        let cx = TraceContextPropagator::new().extract(&headers);
        if cx.span().span_context().is_valid() {
            let _ = span.set_parent(cx);
        }
        HttpServerSpan { span }
    }

    /// Runs `f` with this span current (the sink reads it as the ambient context).
    pub fn in_scope<R>(&self, f: impl FnOnce() -> R) -> R {
        self.span.in_scope(f)
    }

    /// Records the response's status code; a 5xx makes the span an error (the HTTP
    /// conventions: a 4xx is the client's error, not the server's).
    pub fn status(&self, status: u16) {
        self.span
            .record("http.response.status_code", i64::from(status));
        if status >= 500 {
            self.span.record("error.type", status.to_string().as_str());
            self.span.record("otel.status_code", "ERROR");
        }
    }
}
