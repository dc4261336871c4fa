//! `text/event-stream` (server-sent events): an incremental parser following the WHATWG
//! event-stream interpretation rules, and an encoder.
//!
//! Parsing rules implemented: lines end with CRLF, LF or CR (a CR at the end of one chunk and an
//! LF at the start of the next are one line end); one leading UTF-8 BOM is dropped; lines
//! starting with `:` are comments; `field: value` strips one space after the colon; `data`
//! lines accumulate joined by LF; `event` sets the type; `id` sets the last event id unless it
//! contains NUL; `retry` is taken only when it is all ASCII digits; an empty line dispatches;
//! an unterminated event at the end of the stream is dropped.
//!
//! Dispatch follows WHATWG exactly: an event with no `data` line has an empty data buffer and is
//! not dispatched, while an empty `data:` line makes the buffer `"\n"`, so MCP's priming event
//! (`id: X` + `data:`) IS dispatched as an [`SseEvent`] with empty data (a client skips its
//! payload but keeps its id). An event without data lines but with an `id` field still changes
//! the last event id; the decoder reports that as [`SseItem::LastEventId`] so the client can
//! resume from it. A `retry` field is reported as [`SseItem::Retry`] as soon as it is parsed,
//! as WHATWG applies it immediately.

use std::collections::VecDeque;

use bytes::Bytes;

use super::FrameError;

const BOM: &[u8; 3] = b"\xEF\xBB\xBF";

/// One dispatched event (it had at least one `data` line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The last event id at dispatch time (WHATWG's `lastEventId`: it persists across events
    /// until an `id` field changes it; empty when never set).
    pub id: String,
    /// The event type; `None` for the default type `message` (absent or empty `event` field).
    pub event: Option<String>,
    /// The data lines joined with LF (no trailing LF), as UTF-8 (invalid bytes replaced).
    pub data: Bytes,
}

impl SseEvent {
    /// The data as text.
    pub fn data_str(&self) -> &str {
        // `data` is built from UTF-8-checked lines, so this never fails.
        std::str::from_utf8(&self.data).unwrap_or("")
    }
}

/// One output of the decoder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SseItem {
    /// A dispatched event (it had at least one `data` line; its data may be empty).
    Event(SseEvent),
    /// An event without any `data` line that carried an `id` field: WHATWG dispatches nothing,
    /// but the last event id changed to this value.
    LastEventId(String),
    /// A valid `retry` field: the new reconnection time in milliseconds.
    Retry(u64),
}

/// An incremental `text/event-stream` decoder.
///
/// Memory held is bounded by `max_event_size` for the current line, the data buffer, the event
/// type and the id each, plus the items not yet polled.
#[derive(Debug)]
pub struct SseDecoder {
    max_event_size: usize,
    /// How many bytes of a leading BOM matched so far; `None` once past the stream start.
    bom_matched: Option<usize>,
    line: Vec<u8>,
    /// Whether the current line has any byte (tracked also while its bytes are dropped).
    line_nonempty: bool,
    /// The previous byte was a CR: an LF right after it is part of the same line end.
    after_cr: bool,
    data: Vec<u8>,
    event_type: String,
    last_event_id: String,
    id_in_event: bool,
    /// The current event exceeded the limit: drop lines until the next empty line.
    discarding: bool,
    out: VecDeque<Result<SseItem, FrameError>>,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new(crate::config::DEFAULT_MAX_FRAME_LEN)
    }
}

impl SseDecoder {
    /// A decoder whose lines and event data may each hold up to `max_event_size` bytes.
    pub fn new(max_event_size: usize) -> Self {
        SseDecoder {
            max_event_size,
            bom_matched: Some(0),
            line: Vec::new(),
            line_nonempty: false,
            after_cr: false,
            data: Vec::new(),
            event_type: String::new(),
            last_event_id: String::new(),
            id_in_event: false,
            discarding: false,
            out: VecDeque::new(),
        }
    }

    /// The last event id so far (what a client sends as `Last-Event-ID` when it reconnects).
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// Feeds the next chunk of the stream.
    pub fn push(&mut self, chunk: &[u8]) {
        let chunk = self.skip_bom(chunk);
        let mut rest = chunk;
        while !rest.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if let Some(after) = rest.strip_prefix(b"\n") {
                    rest = after;
                    continue;
                }
            }
            match split_line(rest) {
                Some((line, end, after)) => {
                    self.append_to_line(line);
                    self.after_cr = end == b'\r';
                    rest = after;
                    self.end_line();
                }
                None => {
                    self.append_to_line(rest);
                    return;
                }
            }
        }
    }

    /// Signals the end of the stream: an unfinished event is dropped, as WHATWG requires.
    ///
    /// The decoder is then ready for a new stream (a reconnection): the BOM rule applies again
    /// and the last event id is kept.
    pub fn finish(&mut self) {
        self.line.clear();
        self.line_nonempty = false;
        self.after_cr = false;
        self.reset_event();
        self.discarding = false;
        self.bom_matched = Some(0);
    }

    /// The next output, in stream order; `None` when nothing is pending.
    #[must_use]
    pub fn poll_item(&mut self) -> Option<Result<SseItem, FrameError>> {
        self.out.pop_front()
    }

    /// Drops a leading BOM, even when it arrives split across chunks.
    fn skip_bom<'a>(&mut self, chunk: &'a [u8]) -> &'a [u8] {
        let Some(matched) = self.bom_matched else {
            return chunk;
        };
        let (held, expected) = BOM.split_at_checked(matched).unwrap_or((BOM, &[]));
        let (head, tail) = chunk.split_at(chunk.len().min(expected.len()));
        if !expected.starts_with(head) {
            // Not a BOM: replay the bytes held back as ordinary input.
            self.bom_matched = None;
            self.push(held);
            return chunk;
        }
        if head.len() == expected.len() {
            self.bom_matched = None;
        } else {
            self.bom_matched = Some(matched + head.len());
        }
        tail
    }

    fn append_to_line(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.line_nonempty = true;
        if self.discarding {
            return;
        }
        if self.line.len() + bytes.len() > self.max_event_size {
            self.overflow();
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    fn overflow(&mut self) {
        self.out
            .push_back(Err(FrameError::too_long(self.max_event_size)));
        self.discarding = true;
        self.line = Vec::new();
        self.reset_event();
    }

    fn end_line(&mut self) {
        let nonempty = std::mem::take(&mut self.line_nonempty);
        if !nonempty {
            if self.discarding {
                self.discarding = false;
            } else {
                self.dispatch();
            }
            return;
        }
        if self.discarding {
            return;
        }
        let line = std::mem::take(&mut self.line);
        self.process_line(&line);
        // Keep the allocation for the next line.
        self.line = line;
        self.line.clear();
    }

    fn process_line(&mut self, line: &[u8]) {
        if line.first() == Some(&b':') {
            return;
        }
        let mut parts = line.splitn(2, |&b| b == b':');
        let field = parts.next().unwrap_or_default();
        let value = parts
            .next()
            .map_or(&[][..], |v| v.strip_prefix(b" ").unwrap_or(v));
        match field {
            b"data" => {
                // Replacing invalid UTF-8 line by line equals decoding the whole stream (a line
                // end is never inside a sequence), and the limit then bounds the text we keep.
                let value = String::from_utf8_lossy(value);
                if self.data.len() + value.len() + 1 > self.max_event_size {
                    self.overflow();
                    return;
                }
                self.data.extend_from_slice(value.as_bytes());
                self.data.push(b'\n');
            }
            b"event" => self.event_type = String::from_utf8_lossy(value).into_owned(),
            b"id" if !value.contains(&0) => {
                self.last_event_id = String::from_utf8_lossy(value).into_owned();
                self.id_in_event = true;
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                let ms = value.iter().fold(0u64, |acc, d| {
                    acc.saturating_mul(10).saturating_add(u64::from(d - b'0'))
                });
                self.out.push_back(Ok(SseItem::Retry(ms)));
            }
            _ => {}
        }
    }

    fn dispatch(&mut self) {
        if self.data.is_empty() {
            if self.id_in_event {
                self.out
                    .push_back(Ok(SseItem::LastEventId(self.last_event_id.clone())));
            }
            self.reset_event();
            return;
        }
        self.data.pop();
        let data = std::mem::take(&mut self.data);
        let event = std::mem::take(&mut self.event_type);
        self.out.push_back(Ok(SseItem::Event(SseEvent {
            id: self.last_event_id.clone(),
            event: (!event.is_empty()).then_some(event),
            data: Bytes::from(data),
        })));
        self.reset_event();
    }

    fn reset_event(&mut self) {
        self.data.clear();
        self.event_type.clear();
        self.id_in_event = false;
    }
}

/// Appends one event to `buf`: optional `id`, `event` and `retry` fields, then `data` split on
/// line ends (CRLF, LF, CR) into one `data:` line each, then the empty line that dispatches.
///
/// Empty `data` writes one empty `data:` line (MCP's priming event). CR and LF in `id` and
/// `event` would end the field early, so they are replaced by spaces. An id containing NUL is
/// written as given, and a receiver ignores it.
pub fn write_event(
    buf: &mut Vec<u8>,
    id: Option<&str>,
    event: Option<&str>,
    data: &[u8],
    retry: Option<u64>,
) {
    if let Some(id) = id {
        write_field(buf, b"id", id.as_bytes());
    }
    if let Some(event) = event {
        write_field(buf, b"event", event.as_bytes());
    }
    if let Some(ms) = retry {
        write_field(buf, b"retry", ms.to_string().as_bytes());
    }
    buf.reserve(data.len() + 8);
    let mut rest = data;
    loop {
        let (line, next) = match split_line(rest) {
            Some((line, b'\r', after)) => (line, Some(after.strip_prefix(b"\n").unwrap_or(after))),
            Some((line, _, after)) => (line, Some(after)),
            None => (rest, None),
        };
        buf.extend_from_slice(b"data:");
        if !line.is_empty() {
            buf.push(b' ');
            buf.extend_from_slice(line);
        }
        buf.push(b'\n');
        match next {
            Some(next) => rest = next,
            None => break,
        }
    }
    buf.push(b'\n');
}

/// Appends a comment (`: text`), one comment line per line of `text`. Receivers ignore it.
pub fn write_comment(buf: &mut Vec<u8>, text: &str) {
    for line in text.split(['\n', '\r']) {
        buf.push(b':');
        if !line.is_empty() {
            buf.push(b' ');
            buf.extend_from_slice(line.as_bytes());
        }
        buf.push(b'\n');
    }
}

/// Appends a keep-alive: an empty comment and an empty line (`":\n\n"`). Write it only between
/// events; it dispatches nothing.
pub fn write_keep_alive(buf: &mut Vec<u8>) {
    buf.extend_from_slice(b":\n\n");
}

fn write_field(buf: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    buf.extend_from_slice(name);
    buf.extend_from_slice(b": ");
    buf.extend(
        value
            .iter()
            .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }),
    );
    buf.push(b'\n');
}

/// Splits `bytes` at its first `\n` or `\r`: the line, the terminator, and what follows.
fn split_line(bytes: &[u8]) -> Option<(&[u8], u8, &[u8])> {
    let pos = memchr::memchr2(b'\n', b'\r', bytes)?;
    let (line, tail) = bytes.split_at_checked(pos)?;
    let (&end, after) = tail.split_first()?;
    Some((line, end, after))
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
