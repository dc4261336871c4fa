//! Messages the session encoded when they were queued (`respond_serialize`), kept back to back
//! in one buffer until `poll_transmit` hands them out in queue order.
//!
//! Bound: the buffer holds only messages still queued (the queue bounds them) plus a consumed
//! front, which is dropped whenever everything was handed out and compacted once it outweighs
//! the rest; a buffer grown past [`KEEP_CAPACITY`] is released when it empties, and
//! [`EncodedBuf::release_if_drained`] shrinks an empty one to [`IDLE_CAPACITY`].

use serde::Serialize;

use crate::jsonrpc::{push_on_one_line, write_result_prefix, JsonWriter, RequestId};

/// Compact the consumed front only past this many bytes (smaller fronts wait for the buffer to
/// empty, which costs nothing).
const COMPACT_AFTER: usize = 64 * 1024;

/// Capacity kept for reuse once the buffer empties; a larger one (after a huge result) is freed.
const KEEP_CAPACITY: usize = 1024 * 1024;

/// Capacity an empty buffer keeps in [`EncodedBuf::release_if_drained`]: room for a small
/// result, so a session held idle by an endpoint does not regrow it for every answer.
const IDLE_CAPACITY: usize = 256;

/// serde_json's compact output, kept on one line: a raw value inside a result (a `RawJson`
/// member) may hold a raw CR or LF, which in valid JSON is insignificant whitespace; it is
/// written as a space. Compact output has no other raw line break (strings escape theirs), so
/// only raw fragments are looked at, not the whole message after the fact.
struct OneLine;

impl serde_json::ser::Formatter for OneLine {
    fn write_raw_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let bytes = fragment.as_bytes();
        if memchr::memchr2(b'\n', b'\r', bytes).is_none() {
            return writer.write_all(bytes);
        }
        let mut one_line = Vec::with_capacity(bytes.len());
        push_on_one_line(&mut one_line, bytes);
        writer.write_all(&one_line)
    }
}

/// Encoded messages in queue order; `read` is where the next one starts.
#[derive(Debug, Default)]
pub(crate) struct EncodedBuf {
    buf: Vec<u8>,
    read: usize,
}

impl EncodedBuf {
    /// Appends a success response to `id` carrying `result`; returns its length. On a
    /// serialisation error nothing is kept.
    pub(crate) fn push_result<T: Serialize + ?Sized>(
        &mut self,
        id: &RequestId,
        result: &T,
    ) -> Result<usize, serde_json::Error> {
        self.reclaim();
        let start = self.buf.len();
        write_result_prefix(&mut self.buf, id);
        let mut serializer = serde_json::Serializer::with_formatter(&mut self.buf, OneLine);
        if let Err(e) = result.serialize(&mut serializer) {
            self.buf.truncate(start);
            return Err(e);
        }
        self.buf.push(b'}');
        Ok(self.buf.len() - start)
    }

    /// Appends a success response to `id` whose result `write` writes; returns its length, or
    /// `None` (nothing kept) when `write` did not write exactly one whole value.
    pub(crate) fn push_result_with(
        &mut self,
        id: &RequestId,
        write: impl FnOnce(&mut JsonWriter<'_>),
    ) -> Option<usize> {
        self.reclaim();
        let start = self.buf.len();
        write_result_prefix(&mut self.buf, id);
        let mut writer = JsonWriter::new(&mut self.buf);
        write(&mut writer);
        if !writer.is_complete() {
            self.buf.truncate(start);
            return None;
        }
        self.buf.push(b'}');
        Some(self.buf.len() - start)
    }

    /// The next `len` bytes, in the order they were pushed.
    pub(crate) fn take(&mut self, len: usize) -> &[u8] {
        let start = self.read;
        self.read = (start + len).min(self.buf.len());
        self.buf.get(start..self.read).unwrap_or_default()
    }

    /// Drops the consumed front: all of it when everything was taken, else once it is large.
    fn reclaim(&mut self) {
        if self.read == self.buf.len() {
            if self.buf.capacity() > KEEP_CAPACITY {
                self.release();
            }
            self.buf.clear();
            self.read = 0;
        } else if self.read > COMPACT_AFTER && self.read > self.buf.len() / 2 {
            self.compact();
        }
    }

    /// Gives the buffer's memory back past [`IDLE_CAPACITY`] once everything was handed out
    /// (an idle session keeps at most that).
    pub(crate) fn release_if_drained(&mut self) {
        if self.read == self.buf.len() {
            self.buf.clear();
            self.read = 0;
            if self.buf.capacity() > IDLE_CAPACITY {
                self.shrink();
            }
        }
    }

    // The two rare ends of `reclaim`, out of the respond path (instruction cache).

    /// Gives a grown, empty buffer's memory back.
    #[cold]
    #[inline(never)]
    fn release(&mut self) {
        self.buf = Vec::new();
    }

    /// Shrinks an empty buffer to [`IDLE_CAPACITY`].
    #[cold]
    #[inline(never)]
    fn shrink(&mut self) {
        self.buf.shrink_to(IDLE_CAPACITY);
    }

    /// Drops the consumed front while unread messages remain.
    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        self.buf.drain(..self.read);
        self.read = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_out_messages_in_order_and_reuses_the_front() {
        let mut e = EncodedBuf::default();
        let a = e.push_result(&RequestId::number(1), &[1, 2]).unwrap();
        let b = e.push_result(&RequestId::from("x"), "line\nbreak").unwrap();
        assert_eq!(e.take(a), br#"{"jsonrpc":"2.0","id":1,"result":[1,2]}"#);
        assert_eq!(
            e.take(b),
            br#"{"jsonrpc":"2.0","id":"x","result":"line\nbreak"}"#
        );
        // Everything was taken: the next push starts at the front again.
        let c = e.push_result(&RequestId::number(2), &true).unwrap();
        assert_eq!((e.read, e.buf.len()), (0, c));
    }

    #[test]
    fn a_grown_buffer_is_released_when_empty_and_a_long_read_front_compacted() {
        let big = "a".repeat(KEEP_CAPACITY + 1);
        let mut e = EncodedBuf::default();
        let a = e.push_result(&RequestId::number(1), &big).unwrap();
        assert_eq!(e.take(a).len(), a);
        // Everything taken, capacity past the limit: the memory goes back.
        let b = e.push_result(&RequestId::number(2), &true).unwrap();
        assert!(e.buf.capacity() <= KEEP_CAPACITY, "{}", e.buf.capacity());
        assert_eq!((e.read, e.buf.len()), (0, b));
        // A long consumed front with a message still unread: the front is dropped.
        e.take(b);
        let long = "b".repeat(COMPACT_AFTER);
        let c = e.push_result(&RequestId::number(3), &long).unwrap();
        let d = e.push_result(&RequestId::number(4), &1).unwrap();
        assert_eq!(e.take(c).len(), c);
        assert!(e.read > COMPACT_AFTER);
        let f = e.push_result(&RequestId::number(5), &2).unwrap();
        assert_eq!((e.read, e.buf.len()), (0, d + f));
        assert_eq!(e.take(d), br#"{"jsonrpc":"2.0","id":4,"result":1}"#);
        assert_eq!(e.take(f), br#"{"jsonrpc":"2.0","id":5,"result":2}"#);
    }

    #[test]
    fn a_drained_buffer_keeps_only_its_idle_floor() {
        let mut e = EncodedBuf::default();
        let small = e.push_result(&RequestId::number(1), &"s").unwrap();
        let before = e.buf.capacity();
        // Not drained: nothing is released.
        e.release_if_drained();
        assert_eq!((e.buf.len(), e.buf.capacity()), (small, before));
        e.take(small);
        e.release_if_drained();
        assert_eq!((e.read, e.buf.len(), e.buf.capacity()), (0, 0, before));
        let big = "b".repeat(4 * IDLE_CAPACITY);
        let len = e.push_result(&RequestId::number(2), &big).unwrap();
        e.take(len);
        e.release_if_drained();
        assert_eq!(
            (e.read, e.buf.len(), e.buf.capacity()),
            (0, 0, IDLE_CAPACITY)
        );
    }

    #[test]
    fn raw_line_breaks_inside_a_result_become_spaces() {
        use crate::jsonrpc::RawJson;
        let mut e = EncodedBuf::default();
        let raw = RawJson::from_text("{\r\n  \"a\": [1,\n2]\n}").unwrap();
        let result = serde_json::json!({"text": "line\nbreak"});
        let len = e
            .push_result(&RequestId::number(3), &(raw, result))
            .unwrap();
        assert_eq!(
            e.take(len),
            br#"{"jsonrpc":"2.0","id":3,"result":[{    "a": [1, 2] },{"text":"line\nbreak"}]}"#
        );
    }

    #[test]
    fn a_failed_serialisation_keeps_nothing() {
        use std::collections::HashMap;
        let mut e = EncodedBuf::default();
        // Map keys must be strings in JSON: serde_json refuses this one.
        let bad: HashMap<(u8, u8), u8> = [((1, 2), 3)].into_iter().collect();
        assert!(e.push_result(&RequestId::number(1), &bad).is_err());
        assert!(e.buf.is_empty());
    }
}
