//! # mcp-sansio-otel
//!
//! OpenTelemetry for mcp-sansio, by the MCP semantic conventions: [`OtelSink`] is a
//! [`TraceSink`](mcp_sansio::trace::TraceSink) that turns the frames a driver reports into
//! spans (`{mcp.method.name} {target}`, with `mcp.method.name`, `jsonrpc.request.id`,
//! `gen_ai.tool.name`, `mcp.session.id`, `mcp.protocol.version`, `network.transport`,
//! `error.type`) through `tracing` and `tracing-opentelemetry`, and records the
//! `mcp.{server,client}.operation.duration` and `mcp.{server,client}.session.duration`
//! histograms. Trace context travels in `params._meta` ([`ClientContext::inject`] on the
//! client; servers extract it), and an HTTP server's [`HttpServerSpan`] is linked to the MCP
//! spans of the requests it carries. [`install_otlp`] exports both over OTLP/HTTP without an async
//! runtime. See docs/observability.md.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod blocking_http;
mod http_span;
mod meta;
mod otlp;
mod sink;

pub use blocking_http::BlockingHttp;
pub use http_span::HttpServerSpan;
pub use meta::inject;
pub use otlp::{install_otlp, OtelGuard};
pub use sink::{ClientContext, OtelSink, Side, Transport, MAX_OPEN_SPANS, MAX_SESSIONS};
