//! What the smol loop (`run_loop.rs`) and the poll loop (`poll/poll_loop.rs`) do the same way:
//! draining the machine's transmits into the output, one line each; cutting input into lines
//! and feeding them, each followed by a drain, up to the output high-water mark; the end of
//! input (held-back lines first, then `handle_eof` once); and the linger deadline. The loops
//! keep only their own way of waiting, reading and writing.

use std::time::{Duration, Instant};

use crate::driven::Driven;
use crate::lines::{LineItem, Lines};

/// The earlier of two optional instants.
pub(crate) fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Where drained output goes: the buffer, and the length of its head that the high-water
/// mark does not count (the batch already being written).
pub(crate) struct Out<'a> {
    pub(crate) buf: &'a mut Vec<u8>,
    pub(crate) counted_from: usize,
    pub(crate) high_water: usize,
}

impl Out<'_> {
    fn full(&self) -> bool {
        self.buf.len().saturating_sub(self.counted_from) >= self.high_water
    }
}

/// The machine and the input side of one run.
pub(crate) struct Machine<D> {
    pub(crate) driven: D,
    lines: Lines,
    /// When the transport went away (end of input or failed write): starts the linger.
    gone_at: Option<Instant>,
    /// When the machine was first seen closed: starts the linger for the final flush.
    closed_at: Option<Instant>,
    /// Complete lines are buffered in the decoder but feeding stopped at the high-water mark.
    pub(crate) backlog: bool,
    /// The input ended while lines were still held back: end it once they are fed.
    eof_pending: bool,
}

impl<D: Driven> Machine<D> {
    pub(crate) fn new(driven: D, max_line_len: usize) -> Self {
        Self {
            driven,
            lines: Lines::new(max_line_len),
            gone_at: None,
            closed_at: None,
            backlog: false,
            eof_pending: false,
        }
    }

    /// Moves every pending transmit of the machine into `out`, one line each.
    pub(crate) fn drain(&mut self, out: &mut Vec<u8>) {
        loop {
            let start = out.len();
            if self.driven.poll_transmit(out).is_none() {
                break;
            }
            debug_assert!(
                memchr::memchr(b'\n', &out[start..]).is_none(),
                "a transmit must not contain a newline"
            );
            out.push(b'\n');
        }
    }

    /// Bytes read from the input: every complete line goes to the machine.
    pub(crate) fn handle_bytes(&mut self, now: Instant, bytes: &[u8], out: Out<'_>) {
        self.lines.push(bytes);
        self.feed_buffered(now, out);
    }

    /// The input ended: the rest of a last line is a frame, held-back lines come first, then
    /// `handle_eof` once.
    pub(crate) fn handle_input_end(&mut self, now: Instant, out: Out<'_>) {
        self.lines.finish();
        self.feed_buffered(now, out);
        self.eof_pending = true;
        self.end_input_if_fed(now);
    }

    /// Feeds buffered lines, each followed by a drain, until none is left or the counted
    /// output reaches the high-water mark (then the rest waits in the splitter: a read chunk
    /// full of tiny requests with large answers cannot make the output grow without bound).
    pub(crate) fn feed_buffered(&mut self, now: Instant, out: Out<'_>) {
        self.backlog = false;
        while !self.driven.is_closed() {
            if out.full() {
                self.backlog = true;
                return;
            }
            let Some(item) = self.lines.next_item() else {
                return;
            };
            match item {
                LineItem::Frame(frame) => self.driven.handle_frame(now, frame),
                LineItem::Error(error) => self.driven.handle_frame_error(now, error),
            }
            self.drain(out.buf);
        }
    }

    /// At end of input, tells the machine once every buffered line was fed to it.
    pub(crate) fn end_input_if_fed(&mut self, now: Instant) {
        if self.eof_pending && !self.backlog {
            self.eof_pending = false;
            self.transport_gone(now);
        }
    }

    /// Tells the machine once that the transport is gone and starts the linger.
    pub(crate) fn transport_gone(&mut self, now: Instant) {
        if self.gone_at.is_none() {
            self.gone_at = Some(now);
            self.driven.handle_eof(now);
        }
    }

    /// Notes that the machine is closed but its output is not flushed yet.
    pub(crate) fn closed_unflushed(&mut self, now: Instant) {
        self.closed_at.get_or_insert(now);
    }

    /// When the loop gives up: `linger` after the transport went away or the machine closed.
    pub(crate) fn linger_end(&self, linger: Duration) -> Option<Instant> {
        earliest(self.gone_at, self.closed_at).map(|t| t + linger)
    }
}
