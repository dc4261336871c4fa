//! A stop-gap newline splitter, used only until `mcp_sansio::framing::ndjson` lands.
//!
//! It cuts a byte stream into lines without copying them out of the read buffer, drops the
//! newline (and a `\r` before it), skips empty lines and refuses lines longer than a limit: the
//! over-long line is reported once and discarded up to its newline, so memory stays bounded
//! whatever the peer sends. The driver only depends on [`LineSplitter::push`],
//! [`LineSplitter::next_item`] and [`LineSplitter::finish`], so swapping in the core's framer is
//! a change to this one file.

use bytes::{Bytes, BytesMut};

use crate::driven::FrameError;

/// One item cut from the stream: a frame, or a frame that could not be delivered.
#[derive(Debug)]
pub(crate) enum LineItem {
    Frame(Bytes),
    Error(FrameError),
}

/// Incremental splitter of newline-delimited frames with a bounded line length.
#[derive(Debug)]
pub(crate) struct LineSplitter {
    buf: BytesMut,
    /// Bytes of `buf` already known to hold no newline (so each byte is scanned once).
    scanned: usize,
    max_line: usize,
    /// Inside an over-long line: drop bytes until the next newline.
    discarding: bool,
    /// Bytes dropped so far from the current over-long line.
    discarded: usize,
}

impl LineSplitter {
    pub(crate) fn new(max_line: usize) -> Self {
        Self {
            buf: BytesMut::new(),
            scanned: 0,
            max_line: max_line.max(1),
            discarding: false,
            discarded: 0,
        }
    }

    /// Appends bytes read from the stream.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Cuts the next complete line, or reports an over-long one; `None` when more bytes are needed.
    pub(crate) fn next_item(&mut self) -> Option<LineItem> {
        loop {
            let Some(offset) = memchr::memchr(b'\n', &self.buf[self.scanned..]) else {
                self.scanned = self.buf.len();
                return self.check_overlong();
            };
            let end = self.scanned + offset;
            let mut line = self.buf.split_to(end + 1);
            self.scanned = 0;
            if self.discarding {
                // The tail of a line already reported as too long.
                self.discarding = false;
                self.discarded = 0;
                continue;
            }
            line.truncate(end);
            if line.last() == Some(&b'\r') {
                line.truncate(end - 1);
            }
            if line.len() > self.max_line {
                return Some(LineItem::Error(FrameError::TooLong {
                    len: line.len(),
                    limit: self.max_line,
                }));
            }
            if line.is_empty() {
                continue;
            }
            return Some(LineItem::Frame(line.freeze()));
        }
    }

    /// Called at end of input: a last line without a newline is still a frame.
    pub(crate) fn finish(&mut self) -> Option<LineItem> {
        let discarding = std::mem::take(&mut self.discarding);
        let mut rest = self.buf.split();
        self.scanned = 0;
        self.discarded = 0;
        if discarding {
            return None;
        }
        if rest.last() == Some(&b'\r') {
            rest.truncate(rest.len() - 1);
        }
        if rest.is_empty() {
            return None;
        }
        if rest.len() > self.max_line {
            return Some(LineItem::Error(FrameError::TooLong {
                len: rest.len(),
                limit: self.max_line,
            }));
        }
        Some(LineItem::Frame(rest.freeze()))
    }

    /// With no newline buffered: past the limit, report once and start discarding.
    fn check_overlong(&mut self) -> Option<LineItem> {
        if self.discarding {
            self.discarded += self.buf.len();
            self.buf.clear();
            self.scanned = 0;
            return None;
        }
        // `+ 1` leaves room for the `\r` of a CRLF line that is exactly at the limit.
        if self.buf.len() <= self.max_line + 1 {
            return None;
        }
        let len = self.buf.len();
        self.buf.clear();
        self.scanned = 0;
        self.discarding = true;
        self.discarded = len;
        Some(LineItem::Error(FrameError::TooLong {
            len,
            limit: self.max_line,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(s: &mut LineSplitter) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(item) = s.next_item() {
            out.push(match item {
                LineItem::Frame(b) => String::from_utf8(b.to_vec()).unwrap(),
                LineItem::Error(e) => format!("ERR {e:?}"),
            });
        }
        out
    }

    #[test]
    fn splits_lines_across_pushes_and_strips_cr() {
        let mut s = LineSplitter::new(100);
        s.push(b"{\"a\":1}\r\n{\"b\"");
        assert_eq!(drain(&mut s), ["{\"a\":1}"]);
        s.push(b":2}\n\n\nx");
        assert_eq!(drain(&mut s), ["{\"b\":2}"]);
        assert_eq!(
            s.finish().map(|i| format!("{i:?}")),
            Some(format!("{:?}", LineItem::Frame(Bytes::from_static(b"x"))))
        );
        assert!(s.finish().is_none());
    }

    #[test]
    fn an_overlong_line_is_reported_once_and_skipped() {
        let mut s = LineSplitter::new(4);
        s.push(b"123456");
        assert_eq!(drain(&mut s), ["ERR TooLong { len: 6, limit: 4 }"]);
        s.push(b"789");
        assert!(drain(&mut s).is_empty());
        s.push(b"0\nok\n");
        assert_eq!(drain(&mut s), ["ok"]);
        // an over-long line that arrives complete in one push
        s.push(b"abcdefgh\nfine\n");
        assert_eq!(drain(&mut s), ["ERR TooLong { len: 8, limit: 4 }", "fine"]);
    }

    #[test]
    fn a_line_at_the_limit_passes_even_with_crlf() {
        let mut s = LineSplitter::new(4);
        s.push(b"1234\r");
        assert!(drain(&mut s).is_empty());
        s.push(b"\n");
        assert_eq!(drain(&mut s), ["1234"]);
    }
}
