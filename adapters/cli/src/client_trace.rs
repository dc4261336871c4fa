//! `mcp-sansio client|serve|bench --trace`, `--trace-full` and `--trace-file PATH`: every
//! frame of the conversation, one line each, on stderr (for people) or as JSON Lines in a file
//! (for tools). The lines come from the core's [`FrameTrace`]; this file only formats and
//! writes them.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use clap::Args;
use mcp_sansio::trace::{Direction, EnvelopeKind, FrameTrace, TraceSink};
use mcp_sansio_http::HttpTrace;
use serde_json::{json, Map, Value};

use crate::otel_cli::Sinks;
use crate::Failure;

/// Characters of JSON a `--trace` line shows before it is cut (`--trace-full` shows all).
const LINE_WIDTH: usize = 160;

/// The trace options of `client`, `serve` and `bench`.
#[derive(Debug, Args)]
pub(crate) struct TraceArgs {
    /// Write every frame sent and received to stderr, one line each: milliseconds since the
    /// start, direction, transport, size, kind, method and id, then the JSON cut at 160
    /// characters. Over HTTP also each request and status line with its MCP headers, and each
    /// SSE event's id and retry. Covers `serve --stdio|--http`, every `client`
    /// conversation (the era probe included) and every `bench` session (one output for all).
    #[arg(long)]
    pub(crate) trace: bool,
    /// Like --trace, with the whole JSON of every frame.
    #[arg(long)]
    pub(crate) trace_full: bool,
    /// Write every frame to PATH as JSON Lines:
    /// {"t_ms":…,"dir":"send"|"recv","transport":…,"bytes":…,"message":{…}}.
    #[arg(long, value_name = "PATH")]
    pub(crate) trace_file: Option<PathBuf>,
    /// Export OpenTelemetry spans and metrics (MCP semantic conventions) over OTLP/HTTP to
    /// OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318). Needs the `otel` build.
    #[arg(long)]
    pub(crate) otel: bool,
}

impl TraceArgs {
    /// The client's sinks of a conversation on `transport`, shared by the era probe and the
    /// conversation after it, or `None` when nothing listens.
    pub(crate) fn shared(&self, transport: &'static str) -> Result<Option<SharedSinks>, Failure> {
        let sinks = self
            .sink(transport, false)
            .map_err(|e| Failure::Failed(format!("cannot open the trace file: {e}")))?;
        Ok(sinks.map(Shared::new))
    }

    /// The sink of an HTTP conversation, opened once per process (the `client` probe and the
    /// conversation after it share it), or `None` when tracing is off.
    pub(crate) fn http(&self, server: bool) -> Result<Option<HttpTrace>, Failure> {
        static HTTP: OnceLock<Option<HttpTrace>> = OnceLock::new();
        if let Some(trace) = HTTP.get() {
            return Ok(trace.clone());
        }
        let sink = self
            .sink("http", server)
            .map_err(|e| Failure::Failed(format!("cannot open the trace file: {e}")))?;
        Ok(HTTP.get_or_init(|| sink.map(HttpTrace::new)).clone())
    }

    /// The sinks these options ask for (the server's side when `server`), or `None` when
    /// nothing listens.
    pub(crate) fn sink(
        &self,
        transport: &'static str,
        server: bool,
    ) -> std::io::Result<Option<Sinks>> {
        Ok(self.factory(transport)?.map(|f| f.sinks(server)))
    }

    /// What makes the sinks of each conversation (bench sessions): one text output for all,
    /// or `None` when nothing listens.
    pub(crate) fn factory(&self, transport: &'static str) -> std::io::Result<Option<TraceFactory>> {
        let file = match &self.trace_file {
            Some(path) => Some(BufWriter::new(File::create(path)?)),
            None => None,
        };
        let stderr = (self.trace || self.trace_full).then_some(self.trace_full);
        let text = (file.is_some() || stderr.is_some()).then(|| {
            Shared::new(CliTrace {
                start: Instant::now(),
                transport,
                stderr,
                file,
            })
        });
        let factory = TraceFactory {
            text,
            otel: self.otel,
            transport,
        };
        Ok((factory.text.is_some() || factory.otel).then_some(factory))
    }
}

/// Makes the sinks of conversations that share one text trace (stderr or a file, one clock);
/// each gets an OpenTelemetry sink of its own (a conversation's request ids are its own).
#[derive(Clone)]
pub(crate) struct TraceFactory {
    text: Option<SharedText>,
    otel: bool,
    /// The transport the OpenTelemetry sinks name.
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    transport: &'static str,
}

impl std::fmt::Debug for TraceFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TraceFactory")
    }
}

impl TraceFactory {
    /// The sinks of one more conversation (the server's side when `server`).
    pub(crate) fn sinks(&self, server: bool) -> Sinks {
        let _ = server;
        Sinks {
            text: self.text.clone(),
            #[cfg(feature = "otel")]
            otel: self
                .otel
                .then(|| crate::otel_cli::otel_sink(self.transport, server)),
        }
    }
}

/// A sink shared by several wires or conversations (cloning shares it; the last clone
/// dropped ends it).
pub(crate) struct Shared<T>(Arc<Mutex<T>>);

/// The sinks of one conversation, shared by its wires (the era probe and what follows).
pub(crate) type SharedSinks = Shared<Sinks>;

/// The text trace, shared by the conversations of one process (bench sessions).
pub(crate) type SharedText = Shared<CliTrace>;

impl<T> Shared<T> {
    fn new(sink: T) -> Self {
        Shared(Arc::new(Mutex::new(sink)))
    }

    fn with(&self, f: impl FnOnce(&mut T)) {
        f(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()));
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T: TraceSink> TraceSink for Shared<T> {
    fn frame(&mut self, trace: &FrameTrace, raw: &[u8]) {
        self.with(|s| s.frame(trace, raw));
    }

    fn http(&mut self, at: Instant, dir: Direction, start: &str, headers: &[(&str, &str)]) {
        self.with(|s| s.http(at, dir, start, headers));
    }

    fn sse(&mut self, at: Instant, dir: Direction, id: Option<&str>, retry: Option<u64>) {
        self.with(|s| s.sse(at, dir, id, retry));
    }

    fn ended(&mut self, at: Instant, session: Option<&str>) {
        self.with(|s| s.ended(at, session));
    }
}

/// Writes traced frames to stderr and/or a JSON Lines file.
pub(crate) struct CliTrace {
    start: Instant,
    transport: &'static str,
    /// `Some(full)`: write lines to stderr, the whole JSON when `full`.
    stderr: Option<bool>,
    file: Option<BufWriter<File>>,
}

impl CliTrace {
    fn millis(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.start).as_secs_f64() * 1000.0
    }
}

impl CliTrace {
    /// Writes `line` to stderr (when asked) and `record` to the file (when open).
    fn write(&mut self, line: impl FnOnce(bool) -> String, record: impl FnOnce() -> Value) {
        if let Some(full) = self.stderr {
            eprintln!("{}", line(full));
        }
        if let Some(file) = &mut self.file {
            // A trace that cannot be written must not end the conversation: stop writing.
            if writeln!(file, "{}", record())
                .and_then(|()| file.flush())
                .is_err()
            {
                self.file = None;
            }
        }
    }
}

impl TraceSink for CliTrace {
    fn frame(&mut self, trace: &FrameTrace, raw: &[u8]) {
        let t_ms = self.millis(trace.at);
        let transport = self.transport;
        self.write(
            |full| human_line(t_ms, transport, trace, raw, full),
            || json_line(t_ms, transport, trace, raw),
        );
    }

    fn http(&mut self, at: Instant, dir: Direction, start: &str, headers: &[(&str, &str)]) {
        let t_ms = self.millis(at);
        let shown: String = headers.iter().map(|(n, v)| format!("  {n}: {v}")).collect();
        let fields: Map<String, Value> = headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), Value::from(*v)))
            .collect();
        self.write(
            |_| format!("{t_ms:9.1} ms {} http  {start}{shown}", arrow(dir)),
            || {
                json!({"t_ms": round(t_ms), "dir": dir.as_str(), "transport": "http",
                      "http": {"start": start, "headers": fields}})
            },
        );
    }

    fn sse(&mut self, at: Instant, dir: Direction, id: Option<&str>, retry: Option<u64>) {
        let t_ms = self.millis(at);
        let mut what = String::new();
        if let Some(id) = id {
            what.push_str(&format!(" id: {id}"));
        }
        if let Some(retry) = retry {
            what.push_str(&format!(" retry: {retry}"));
        }
        self.write(
            |_| format!("{t_ms:9.1} ms {} sse  event{what}", arrow(dir)),
            || {
                json!({"t_ms": round(t_ms), "dir": dir.as_str(), "transport": "sse",
                      "sse": {"id": id, "retry": retry}})
            },
        );
    }
}

/// `→` for sent, `←` for received.
fn arrow(dir: Direction) -> &'static str {
    match dir {
        Direction::Send => "→",
        Direction::Recv => "←",
    }
}

/// Milliseconds kept to the microsecond.
fn round(t_ms: f64) -> f64 {
    (t_ms * 1000.0).round() / 1000.0
}

/// `   12.3 ms → stdio    145 B  request tools/list id=2  {"jsonrpc":…}`
fn human_line(t_ms: f64, transport: &str, trace: &FrameTrace, raw: &[u8], full: bool) -> String {
    let arrow = arrow(trace.dir);
    let mut what = trace.kind.as_str().to_owned();
    if let Some(method) = &trace.method {
        what.push(' ');
        what.push_str(method);
    }
    if let Some(id) = &trace.id {
        what.push_str(&format!(" id={id}"));
    }
    if let Some(code) = trace.error_code {
        what.push_str(&format!(" code={code}"));
    }
    if trace.kind == EnvelopeKind::Batch {
        what.push_str(&format!(" of {}", trace.count));
    }
    let text = String::from_utf8_lossy(raw);
    let shown = if full {
        text.into_owned()
    } else {
        cut(&text, LINE_WIDTH)
    };
    format!(
        "{t_ms:9.1} ms {arrow} {transport} {bytes:>7} B  {what}  {shown}",
        bytes = trace.bytes
    )
}

/// `text` cut to `width` characters, with `…` where it was cut.
fn cut(text: &str, width: usize) -> String {
    match text.char_indices().nth(width) {
        Some((at, _)) => format!("{}…", text.get(..at).unwrap_or(text)),
        None => text.to_owned(),
    }
}

/// One JSON Lines record; a frame that is not JSON is kept as a string.
fn json_line(t_ms: f64, transport: &str, trace: &FrameTrace, raw: &[u8]) -> Value {
    let message = serde_json::from_slice::<Value>(raw)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(raw).into_owned()));
    json!({
        "t_ms": round(t_ms),
        "dir": trace.dir.as_str(),
        "transport": transport,
        "bytes": trace.bytes,
        "message": message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn lines_name_the_envelope_and_cut_the_json() {
        let frame = Bytes::from(format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"x":"{}"}}}}"#,
            "a".repeat(300)
        ));
        let trace = FrameTrace::new(Direction::Send, Instant::now(), &frame);
        let line = human_line(1.5, "stdio", &trace, &frame, false);
        assert!(line.contains("→ stdio"), "{line}");
        assert!(line.contains("request tools/call id=7"), "{line}");
        assert!(line.ends_with('…'), "{line}");
        let whole = human_line(1.5, "stdio", &trace, &frame, true);
        assert!(whole.ends_with("}}"), "{whole}");

        let record = json_line(1.5, "stdio", &trace, &frame);
        assert_eq!(record["dir"], "send");
        assert_eq!(record["bytes"], frame.len());
        assert_eq!(record["message"]["method"], "tools/call");
    }

    #[test]
    fn a_frame_that_is_not_json_is_kept_as_text() {
        let frame = Bytes::from_static(b"{not json");
        let trace = FrameTrace::new(Direction::Recv, Instant::now(), &frame);
        assert_eq!(
            json_line(0.0, "stdio", &trace, &frame)["message"],
            "{not json"
        );
        assert!(human_line(0.0, "stdio", &trace, &frame, false).contains("← stdio"));
    }
}
