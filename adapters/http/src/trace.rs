//! The protocol trace on HTTP: the server and the client hand each message head (request line
//! or status line, with the MCP headers), each JSON body and each server-sent event (its `id`
//! and `retry` fields, and its data as a frame) to a [`TraceSink`] shared by every exchange.
//! Nothing here runs unless a sink was set: an exchange without one pays one branch.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use hyper::header::CONTENT_TYPE;
use hyper::HeaderMap;
use mcp_sansio::framing::{SseDecoder, SseItem};
use mcp_sansio::http::HttpText;
use mcp_sansio::trace::{is_traced_header, Direction, FrameTrace, TraceSink};

/// A trace sink shared by every connection and exchange of a server or client (cloning shares
/// it). Set it in `HttpServerOptions::trace` or `HttpClientOptions::trace`.
#[derive(Clone)]
pub struct HttpTrace(Arc<Mutex<dyn TraceSink + Send>>);

impl fmt::Debug for HttpTrace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HttpTrace")
    }
}

impl HttpTrace {
    /// Shares `sink`.
    pub fn new(sink: impl TraceSink + Send + 'static) -> Self {
        HttpTrace(Arc::new(Mutex::new(sink)))
    }

    /// Runs `f` on the sink (a sink that panicked before is still used: a trace is best effort).
    fn with(&self, f: impl FnOnce(&mut dyn TraceSink)) {
        let mut sink = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut *sink);
    }

    /// One message head: `start` is `POST /mcp` or `HTTP/1.1 200 OK`; only the MCP headers
    /// are shown.
    pub(crate) fn head<'a>(
        &self,
        dir: Direction,
        start: &str,
        headers: impl Iterator<Item = (&'a str, &'a [u8])>,
    ) {
        let shown: Vec<(&str, &str)> = headers
            .filter(|(name, _)| is_traced_header(name))
            .filter_map(|(name, value)| Some((name, std::str::from_utf8(value).ok()?)))
            .collect();
        self.with(|sink| sink.http(Instant::now(), dir, start, &shown));
    }

    /// A request the client sends: its line and MCP headers, then its body as a frame.
    pub(crate) fn request_out(
        &self,
        method: &str,
        target: &str,
        fields: &[(&'static str, HttpText)],
        named: &[(HttpText, HttpText)],
        body: &Bytes,
    ) {
        let start = format!("{method} {target}");
        let all = fields
            .iter()
            .map(|(name, value)| (*name, value.as_bytes()))
            .chain(named.iter().map(|(n, v)| (n.as_str(), v.as_bytes())));
        self.head(Direction::Send, &start, all);
        self.frame(Direction::Send, body);
    }

    /// A status line and the MCP headers of a response.
    pub(crate) fn status(&self, dir: Direction, status: u16, headers: &HeaderMap) {
        let reason = hyper::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        let start = format!("HTTP/1.1 {status} {reason}");
        self.head(dir, start.trim_end(), header_pairs(headers));
    }

    /// One whole JSON-RPC message (a request body or a JSON response body).
    pub(crate) fn frame(&self, dir: Direction, frame: &Bytes) {
        if frame.is_empty() {
            return;
        }
        let trace = FrameTrace::new(dir, Instant::now(), frame);
        self.with(|sink| sink.frame(&trace, frame));
    }

    /// A session ended (`Some(id)`), or every conversation did (`None`: the server shut down).
    pub(crate) fn ended(&self, session: Option<&str>) {
        self.with(|sink| sink.ended(Instant::now(), session));
    }

    /// A tap for a body that arrives in chunks, when its content type is JSON or SSE
    /// (`None` for anything else: a plain-text error body is no frame).
    pub(crate) fn body_tap(
        &self,
        dir: Direction,
        headers: &HeaderMap,
        max_frame: usize,
    ) -> Option<BodyTap> {
        let kind = match BodyKind::of(headers)? {
            BodyKind::Json => TapKind::Json(Vec::new()),
            BodyKind::Sse => TapKind::Sse(Box::new(SseDecoder::new(max_frame))),
        };
        Some(BodyTap {
            trace: self.clone(),
            dir,
            max_frame,
            kind,
        })
    }

    /// A body read whole: reported as one frame when it is JSON, event by event when SSE.
    pub(crate) fn whole_body(&self, dir: Direction, headers: &HeaderMap, body: &Bytes) {
        if let Some(mut tap) = self.body_tap(dir, headers, usize::MAX) {
            tap.chunk(body);
            tap.end();
        }
    }
}

/// A header map's fields as text pairs.
pub(crate) fn header_pairs(headers: &HeaderMap) -> impl Iterator<Item = (&str, &[u8])> {
    headers
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_bytes()))
}

/// The kinds of body a trace looks into.
enum BodyKind {
    Json,
    Sse,
}

impl BodyKind {
    fn of(headers: &HeaderMap) -> Option<BodyKind> {
        let value = headers.get(CONTENT_TYPE)?.to_str().ok()?;
        let essence = value.split(';').next()?.trim().to_ascii_lowercase();
        match essence.as_str() {
            "application/json" => Some(BodyKind::Json),
            "text/event-stream" => Some(BodyKind::Sse),
            _ => None,
        }
    }
}

enum TapKind {
    /// The body's bytes so far (reported whole at its end), up to `max_frame`.
    Json(Vec<u8>),
    /// Events cut as they arrive.
    Sse(Box<SseDecoder>),
}

/// Reports a body's frames as its chunks pass.
pub(crate) struct BodyTap {
    trace: HttpTrace,
    dir: Direction,
    max_frame: usize,
    kind: TapKind,
}

impl BodyTap {
    /// One chunk of the body.
    pub(crate) fn chunk(&mut self, chunk: &[u8]) {
        match &mut self.kind {
            TapKind::Json(buf) => {
                // Past the limit the body is refused anyway: the trace keeps its head only.
                let room = self.max_frame.saturating_sub(buf.len());
                buf.extend_from_slice(chunk.get(..room).unwrap_or(chunk));
            }
            TapKind::Sse(decoder) => {
                decoder.push(chunk);
                while let Some(item) = decoder.poll_item() {
                    event(&self.trace, self.dir, item.ok());
                }
            }
        }
    }

    /// The body ended: a JSON body is reported now.
    pub(crate) fn end(&mut self) {
        if let TapKind::Json(buf) = &mut self.kind {
            let frame = Bytes::from(std::mem::take(buf));
            self.trace.frame(self.dir, &frame);
        }
    }
}

/// One decoded SSE item: its `id` or `retry`, and an event's data as a frame.
fn event(trace: &HttpTrace, dir: Direction, item: Option<SseItem>) {
    let now = Instant::now();
    match item {
        Some(SseItem::Event(event)) => {
            let id = (!event.id.is_empty()).then_some(event.id.as_str());
            if id.is_some() {
                trace.with(|sink| sink.sse(now, dir, id, None));
            }
            trace.frame(dir, &event.data);
        }
        Some(SseItem::LastEventId(id)) => trace.with(|sink| sink.sse(now, dir, Some(&id), None)),
        Some(SseItem::Retry(ms)) => trace.with(|sink| sink.sse(now, dir, None, Some(ms))),
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Lines(Vec<String>);

    impl TraceSink for Lines {
        fn frame(&mut self, trace: &FrameTrace, raw: &[u8]) {
            let text = String::from_utf8_lossy(raw);
            self.0.push(format!("{} {text}", trace.dir.as_str()));
        }
        fn http(&mut self, _at: Instant, dir: Direction, start: &str, headers: &[(&str, &str)]) {
            self.0.push(format!("{} {start} {headers:?}", dir.as_str()));
        }
        fn sse(&mut self, _at: Instant, dir: Direction, id: Option<&str>, retry: Option<u64>) {
            self.0
                .push(format!("{} sse {id:?} {retry:?}", dir.as_str()));
        }
    }

    struct Shared(Arc<Mutex<Lines>>);

    impl TraceSink for Shared {
        fn frame(&mut self, trace: &FrameTrace, raw: &[u8]) {
            self.0.lock().unwrap().frame(trace, raw)
        }
        fn http(&mut self, at: Instant, dir: Direction, start: &str, headers: &[(&str, &str)]) {
            self.0.lock().unwrap().http(at, dir, start, headers)
        }
        fn sse(&mut self, at: Instant, dir: Direction, id: Option<&str>, retry: Option<u64>) {
            self.0.lock().unwrap().sse(at, dir, id, retry)
        }
    }

    fn traced() -> (HttpTrace, Arc<Mutex<Lines>>) {
        let lines = Arc::new(Mutex::new(Lines::default()));
        (HttpTrace::new(Shared(lines.clone())), lines)
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, hyper::header::HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn a_status_line_shows_only_the_mcp_headers() {
        let (trace, lines) = traced();
        let map = headers(&[
            ("mcp-session-id", "s1"),
            ("content-type", "application/json"),
        ]);
        trace.status(Direction::Recv, 200, &map);
        assert_eq!(
            lines.lock().unwrap().0,
            [r#"recv HTTP/1.1 200 OK [("mcp-session-id", "s1")]"#]
        );
    }

    #[test]
    fn sse_events_split_across_chunks_report_ids_retries_and_frames() {
        let (trace, lines) = traced();
        let map = headers(&[("content-type", "text/event-stream")]);
        let mut tap = trace
            .body_tap(Direction::Send, &map, 1024)
            .expect("an SSE tap");
        tap.chunk(b"retry: 3000\n\nid: 7\ndata: {\"jsonrpc\":\"2.0\",");
        tap.chunk(b"\"method\":\"ping\"}\n\n");
        tap.end();
        assert_eq!(
            lines.lock().unwrap().0,
            [
                "send sse None Some(3000)",
                "send sse Some(\"7\") None",
                r#"send {"jsonrpc":"2.0","method":"ping"}"#,
            ]
        );
    }

    #[test]
    fn a_json_body_is_one_frame_and_plain_text_none() {
        let (trace, lines) = traced();
        let json = headers(&[("content-type", "application/json; charset=utf-8")]);
        let mut tap = trace.body_tap(Direction::Recv, &json, 1024).expect("tap");
        tap.chunk(b"{\"jsonrpc\":\"2.0\",");
        tap.chunk(b"\"id\":1,\"result\":{}}");
        tap.end();
        let text = headers(&[("content-type", "text/plain")]);
        assert!(trace.body_tap(Direction::Recv, &text, 1024).is_none());
        assert_eq!(
            lines.lock().unwrap().0,
            [r#"recv {"jsonrpc":"2.0","id":1,"result":{}}"#]
        );
    }
}
