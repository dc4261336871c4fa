//! Messages the session encoded when they were queued (`respond_serialize`), kept back to back
//! in one buffer until `poll_transmit` hands them out in queue order.
//!
//! Bound: the buffer holds only messages still queued (the queue bounds them) plus a consumed
//! front, which is dropped whenever everything was handed out and compacted once it outweighs
//! the rest; a buffer grown past [`KEEP_CAPACITY`] is released when it empties.

use serde::Serialize;

use crate::jsonrpc::{write_result_prefix, RequestId};

/// Compact the consumed front only past this many bytes (smaller fronts wait for the buffer to
/// empty, which costs nothing).
const COMPACT_AFTER: usize = 64 * 1024;

/// Capacity kept for reuse once the buffer empties; a larger one (after a huge result) is freed.
const KEEP_CAPACITY: usize = 1024 * 1024;

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
        if let Err(e) = serde_json::to_writer(&mut self.buf, result) {
            self.buf.truncate(start);
            return Err(e);
        }
        self.buf.push(b'}');
        // Raw values inside `result` (a `RawJson` member) may hold a raw CR or LF, which in
        // valid JSON is insignificant whitespace: the one-line output rule still applies.
        let written = &mut self.buf[start..];
        if memchr::memchr2(b'\n', b'\r', written).is_some() {
            for b in written.iter_mut().filter(|b| matches!(**b, b'\n' | b'\r')) {
                *b = b' ';
            }
        }
        Ok(self.buf.len() - start)
    }

    /// The next `len` bytes, in the order they were pushed.
    pub(crate) fn take(&mut self, len: usize) -> &[u8] {
        let start = self.read;
        self.read = (start + len).min(self.buf.len());
        &self.buf[start..self.read]
    }

    /// Drops the consumed front: all of it when everything was taken, else once it is large.
    fn reclaim(&mut self) {
        if self.read == self.buf.len() {
            if self.buf.capacity() > KEEP_CAPACITY {
                self.buf = Vec::new();
            }
            self.buf.clear();
            self.read = 0;
        } else if self.read > COMPACT_AFTER && self.read > self.buf.len() / 2 {
            self.buf.drain(..self.read);
            self.read = 0;
        }
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
    fn a_failed_serialisation_keeps_nothing() {
        use std::collections::HashMap;
        let mut e = EncodedBuf::default();
        // Map keys must be strings in JSON: serde_json refuses this one.
        let bad: HashMap<(u8, u8), u8> = [((1, 2), 3)].into_iter().collect();
        assert!(e.push_result(&RequestId::number(1), &bad).is_err());
        assert!(e.buf.is_empty());
    }
}
