//! One HTTP exchange in flight: why it was sent, and its response body cut into JSON-RPC
//! frames (one JSON object, or SSE events with their ids and `retry`), with bounded buffers.

use std::time::Duration;

use bytes::Bytes;

use crate::framing::{SseDecoder, SseItem};
use crate::jsonrpc::{DecodeError, Incoming, Message, RequestId};

/// Error bodies kept at most (to quote the server's error message).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Why an exchange was sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Purpose {
    /// A POSTed request of the client machine; `init` for `initialize`.
    Request { id: RequestId, init: bool },
    /// A POSTed notification or response (202 expected).
    Message,
    /// The POSTed `notifications/initialized` (the handshake's last step).
    Initialized,
    /// The original `initialize` replayed after a 404; its answer stays in the transport.
    Reinit,
    /// A GET resuming the response stream of request `id` with `Last-Event-ID`.
    Resume { id: RequestId },
    /// The standalone GET stream.
    Standalone,
    /// The DELETE of `close`.
    Delete,
}

impl Purpose {
    /// The request whose response this exchange should carry.
    pub(super) fn awaited(&self) -> Option<&RequestId> {
        match self {
            Purpose::Request { id, .. } | Purpose::Resume { id } => Some(id),
            _ => None,
        }
    }
}

/// The response body as far as it has arrived.
#[derive(Debug)]
pub(super) enum BodyState {
    /// No response head yet.
    Pending,
    /// `application/json`: the bytes so far.
    Json(Vec<u8>),
    /// `application/json` whose body so far is one shared chunk, kept as is (no copy).
    JsonChunk(Bytes),
    /// `text/event-stream`.
    Sse(SseDecoder),
    /// A non-2xx status: the first bytes, to quote the server's message.
    Error(Vec<u8>),
    /// Nothing to read (202, an unknown type, or over a limit).
    Ignore,
}

/// One exchange in flight.
#[derive(Debug)]
pub(super) struct Exchange {
    pub(super) purpose: Purpose,
    /// Sent with an `Mcp-Session-Id` (a 404 then means the session expired).
    pub(super) with_session: bool,
    pub(super) status: Option<u16>,
    pub(super) body: BodyState,
    /// The awaited response arrived.
    pub(super) answered: bool,
    /// Any SSE event or JSON body arrived (a reconnection that brings something resets the
    /// attempt count).
    pub(super) progressed: bool,
    /// The last SSE event id seen on this stream (carried over from the stream it resumes).
    pub(super) last_event_id: Option<String>,
    /// The server's SSE `retry`, when given (carried over as well).
    pub(super) retry: Option<Duration>,
    /// Consecutive reconnection attempts that brought nothing.
    pub(super) attempts: u32,
    /// The body was over a limit.
    pub(super) oversized: bool,
    /// SSE events over `max_event_size` dropped since the transport last looked.
    pub(super) dropped_events: u64,
    /// A 2xx response (other than 202) of a type that cannot carry JSON-RPC: its
    /// `Content-Type` (cut at [`MAX_TYPE_QUOTED`] bytes; empty when absent), quoted when the
    /// request fails.
    pub(super) unreadable_type: Option<String>,
    /// A 3xx response's `Location`, quoted (bounded, escaped) for the error it causes.
    pub(super) location: Option<String>,
}

/// The longest `Content-Type` quoted in an error.
const MAX_TYPE_QUOTED: usize = 64;

impl Exchange {
    pub(super) fn new(purpose: Purpose, with_session: bool) -> Exchange {
        Exchange {
            purpose,
            with_session,
            status: None,
            body: BodyState::Pending,
            answered: false,
            progressed: false,
            last_event_id: None,
            retry: None,
            attempts: 0,
            oversized: false,
            dropped_events: 0,
            unreadable_type: None,
            location: None,
        }
    }

    /// Chooses how to read the body from the status and `Content-Type`.
    pub(super) fn start_body(&mut self, status: u16, content_type: &str, max_event_size: usize) {
        self.status = Some(status);
        // Compared without case in place (no lowercased copy per response).
        let media = content_type.split(';').next().unwrap_or("").trim();
        let json_suffix = media
            .len()
            .checked_sub(5)
            .and_then(|start| media.get(start..))
            .is_some_and(|suffix| suffix.eq_ignore_ascii_case("+json"));
        self.body = if !(200..300).contains(&status) {
            BodyState::Error(Vec::new())
        } else if media.eq_ignore_ascii_case("text/event-stream") {
            BodyState::Sse(SseDecoder::new(max_event_size))
        } else if media.eq_ignore_ascii_case("application/json") || json_suffix {
            BodyState::Json(Vec::new())
        } else {
            if status != 202 {
                self.unreadable_type = Some(quoted_type(content_type));
            }
            BodyState::Ignore
        };
    }

    /// Whether the response head was 2xx.
    pub(super) fn ok(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }

    /// Whether the body is an SSE stream.
    pub(super) fn is_sse(&self) -> bool {
        matches!(self.body, BodyState::Sse(_))
    }

    /// [`Exchange::push_body`] for a chunk in shared bytes: the first chunk of a JSON body is
    /// kept as is instead of copied (a JSON answer of known length arrives in one).
    pub(super) fn push_body_bytes(&mut self, chunk: Bytes, max_body: usize, out: &mut Vec<Bytes>) {
        match &self.body {
            BodyState::Json(buf) if buf.is_empty() && chunk.len() <= max_body => {
                self.body = BodyState::JsonChunk(chunk);
            }
            _ => self.push_body(&chunk, max_body, out),
        }
    }

    /// Takes one body chunk; complete frames (SSE events with data) are appended to `out`.
    pub(super) fn push_body(&mut self, chunk: &[u8], max_body: usize, out: &mut Vec<Bytes>) {
        if let BodyState::JsonChunk(first) = &self.body {
            // A second chunk: the body is joined in a buffer from here on.
            self.body = BodyState::Json(first.to_vec());
        }
        match &mut self.body {
            BodyState::Json(buf) => {
                if buf.len() + chunk.len() > max_body {
                    self.oversized = true;
                    self.body = BodyState::Ignore;
                } else {
                    buf.extend_from_slice(chunk);
                }
            }
            BodyState::Error(buf) => {
                let take = chunk.len().min(MAX_ERROR_BODY.saturating_sub(buf.len()));
                buf.extend_from_slice(chunk.get(..take).unwrap_or(chunk));
            }
            BodyState::Sse(decoder) => {
                decoder.push(chunk);
                self.drain_sse(out);
            }
            // (`JsonChunk` was turned into `Json` above.)
            BodyState::Pending | BodyState::Ignore | BodyState::JsonChunk(_) => {}
        }
    }

    /// The body ended: a JSON body becomes its frame; an unterminated SSE event is dropped.
    pub(super) fn end_body(&mut self, out: &mut Vec<Bytes>) {
        match std::mem::replace(&mut self.body, BodyState::Ignore) {
            BodyState::Json(buf) if !buf.is_empty() => {
                self.progressed = true;
                out.push(Bytes::from(buf));
            }
            BodyState::JsonChunk(chunk) if !chunk.is_empty() => {
                self.progressed = true;
                out.push(chunk);
            }
            BodyState::Sse(mut decoder) => {
                decoder.finish();
                self.body = BodyState::Sse(decoder);
            }
            BodyState::Error(buf) => self.body = BodyState::Error(buf),
            _ => {}
        }
    }

    /// The start of a non-2xx body, as text.
    pub(super) fn error_text(&self) -> Option<&str> {
        match &self.body {
            BodyState::Error(buf) if !buf.is_empty() => std::str::from_utf8(buf).ok(),
            _ => None,
        }
    }

    fn drain_sse(&mut self, out: &mut Vec<Bytes>) {
        let BodyState::Sse(decoder) = &mut self.body else {
            return;
        };
        while let Some(item) = decoder.poll_item() {
            match item {
                Ok(SseItem::Event(event)) => {
                    self.progressed = true;
                    if !event.id.is_empty() {
                        self.last_event_id = Some(event.id);
                    }
                    // Empty data: a priming event; only its id matters.
                    if !event.data.is_empty() {
                        out.push(event.data);
                    }
                }
                Ok(SseItem::LastEventId(id)) => {
                    self.progressed = true;
                    self.last_event_id = (!id.is_empty()).then_some(id);
                }
                Ok(SseItem::Retry(ms)) => self.retry = Some(Duration::from_millis(ms)),
                Err(_) => {
                    self.oversized = true;
                    self.dropped_events += 1;
                }
            }
        }
    }

    /// Marks the exchange answered when `incoming` (a decoded frame of its body) holds the
    /// response it awaits.
    pub(super) fn note_answer(&mut self, incoming: &Incoming) {
        if self.answered {
            return;
        }
        let Some(awaited) = self.purpose.awaited() else {
            return;
        };
        self.answered = answers(incoming, awaited);
    }

    /// Takes a frame that does not decode (`error`) as the answer when its first bytes show the
    /// response to the awaited request and nothing answered it yet: the request's id, which the
    /// transport then ends with an error naming why. `None` leaves the frame as it is.
    pub(super) fn take_unreadable_answer(
        &mut self,
        error: &DecodeError,
        frame: &[u8],
    ) -> Option<RequestId> {
        if self.answered {
            return None;
        }
        let awaited = self.purpose.awaited()?;
        let id = error.response_id(frame).filter(|id| id == awaited)?;
        self.answered = true;
        Some(id)
    }
}

/// The start of `content_type` to quote: at most [`MAX_TYPE_QUOTED`] bytes, cut on a
/// character boundary.
fn quoted_type(content_type: &str) -> String {
    let mut end = content_type.len().min(MAX_TYPE_QUOTED);
    while !content_type.is_char_boundary(end) {
        end -= 1;
    }
    content_type.get(..end).unwrap_or_default().to_owned()
}

/// Whether `incoming` holds the response (result or error) to request `id`.
pub(super) fn answers(incoming: &Incoming, id: &RequestId) -> bool {
    let is_answer = |m: &Message| matches!(m, Message::Response(r) if r.id.as_ref() == Some(id));
    match incoming {
        Incoming::Single(m) => is_answer(m),
        Incoming::Batch(items) => items.iter().flatten().any(is_answer),
    }
}
