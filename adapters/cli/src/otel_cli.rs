//! `mcp-sansio serve|client|bench --otel`: OpenTelemetry spans and metrics by the MCP semantic
//! conventions, exported over OTLP/HTTP to `OTEL_EXPORTER_OTLP_ENDPOINT` (built with the
//! `otel` feature; without it the flag says so). The spans come from the protocol trace: the
//! sink of `client_trace` feeds an `OtelSink` beside the text trace, and a client's request
//! carries its span's context in `params._meta`.

use mcp_sansio::trace::{Direction, FrameTrace, TraceSink};
use serde_json::Value;

use crate::client_trace::SharedText;
use crate::Failure;

/// What `--otel` installed; dropping it flushes the exporters.
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) struct Installed {
    #[cfg(feature = "otel")]
    _guard: mcp_sansio_otel::OtelGuard,
}

/// Installs the OTLP exporters when `on` (once, at the start of the process).
pub(crate) fn install(on: bool, service: &'static str) -> Result<Option<Installed>, Failure> {
    if !on {
        return Ok(None);
    }
    #[cfg(feature = "otel")]
    {
        let guard = mcp_sansio_otel::install_otlp(service).map_err(Failure::Failed)?;
        Ok(Some(Installed { _guard: guard }))
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = service;
        Err(Failure::Usage(
            "--otel needs mcp-sansio built with the `otel` feature".into(),
        ))
    }
}

/// The trace sinks of one conversation: the text trace and the OpenTelemetry sink, each when
/// asked for.
pub(crate) struct Sinks {
    pub(crate) text: Option<SharedText>,
    #[cfg(feature = "otel")]
    pub(crate) otel: Option<mcp_sansio_otel::OtelSink>,
}

/// The OpenTelemetry sink of a conversation on `transport` (`"stdio"` or `"http"`), seen
/// from the server when `server`; a client's also starts injecting context into requests.
#[cfg(feature = "otel")]
pub(crate) fn otel_sink(transport: &str, server: bool) -> mcp_sansio_otel::OtelSink {
    use mcp_sansio_otel::{OtelSink, Side, Transport};
    let transport = match transport {
        "stdio" => Transport::Pipe,
        _ => Transport::Tcp,
    };
    let side = if server { Side::Server } else { Side::Client };
    let sink = OtelSink::global(side, transport);
    if !server {
        let _ = CLIENT_CONTEXT.set(sink.client_context());
    }
    sink
}

#[cfg(feature = "otel")]
static CLIENT_CONTEXT: std::sync::OnceLock<mcp_sansio_otel::ClientContext> =
    std::sync::OnceLock::new();

/// Opens the client span of a `method` request and writes its context into `params._meta`,
/// when `--otel` is on (otherwise leaves `params` as they are).
pub(crate) fn inject(method: &str, params: &mut Option<Value>) {
    #[cfg(feature = "otel")]
    if let Some(context) = CLIENT_CONTEXT.get() {
        let mut value = params.take().unwrap_or(Value::Null);
        context.inject(method, &mut value);
        *params = (!value.is_null()).then_some(value);
    }
    let _ = (method, params);
}

impl TraceSink for Sinks {
    fn frame(&mut self, trace: &FrameTrace, raw: &[u8]) {
        if let Some(text) = &mut self.text {
            text.frame(trace, raw);
        }
        #[cfg(feature = "otel")]
        if let Some(otel) = &mut self.otel {
            otel.frame(trace, raw);
        }
    }

    fn http(&mut self, at: std::time::Instant, dir: Direction, start: &str, h: &[(&str, &str)]) {
        if let Some(text) = &mut self.text {
            text.http(at, dir, start, h);
        }
        #[cfg(feature = "otel")]
        if let Some(otel) = &mut self.otel {
            otel.http(at, dir, start, h);
        }
    }

    fn sse(&mut self, at: std::time::Instant, dir: Direction, id: Option<&str>, r: Option<u64>) {
        if let Some(text) = &mut self.text {
            text.sse(at, dir, id, r);
        }
    }

    fn ended(&mut self, at: std::time::Instant, session: Option<&str>) {
        #[cfg(feature = "otel")]
        if let Some(otel) = &mut self.otel {
            otel.ended(at, session);
        }
        let _ = (at, session);
    }
}
