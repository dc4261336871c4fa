//! Newline-delimited JSON framing (the stdio transport): cutting a byte stream into lines, and
//! writing one message per line.
//!
//! The decoder is a push parser: [`NdjsonDecoder::push`] takes chunks of any size and
//! [`NdjsonDecoder::poll_frame`] hands back one line at a time as a [`Bytes`] slice of the
//! internal buffer (no copy per frame). Lines end with `\n`; a `\r` before it is dropped; blank
//! and whitespace-only lines are skipped. A line longer (blank or not: its bytes are not kept to
//! look at) than the limit yields one
//! [`FrameError::TooLong`] in its place, and its bytes are dropped as they arrive (never
//! buffered), so memory stays bounded while a huge line streams in. Before they are dropped,
//! the line's first bytes (at most [`HEAD_SCAN_LEN`]) are scanned for its id
//! ([`FrameHead`]), so the error can still be matched to the request or response it was.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};

use super::FrameError;
use crate::jsonrpc::{FrameHead, HEAD_SCAN_LEN};

/// An incremental ndjson decoder.
///
/// Memory held: the complete lines pushed but not yet polled, plus at most `max_line_len + 1`
/// bytes of the current unfinished line. Poll until `None` after each push to keep it small.
#[derive(Debug)]
pub struct NdjsonDecoder {
    max_line_len: usize,
    /// Complete lines not yet polled, followed by the start of the unfinished line.
    buf: BytesMut,
    /// Where the unfinished line starts in `buf` (everything before it ends with `\n`).
    tail_start: usize,
    /// Bytes already split off `buf` since the decoder was created.
    consumed: u64,
    /// Inside an over-long line: drop bytes until the next `\n`.
    discarding: bool,
    /// Errors to report, each at the stream position (`consumed` + offset) it belongs to.
    errors: VecDeque<(u64, FrameError)>,
}

impl Default for NdjsonDecoder {
    fn default() -> Self {
        Self::new(crate::config::DEFAULT_MAX_FRAME_LEN)
    }
}

impl NdjsonDecoder {
    /// A decoder that accepts lines of up to `max_line_len` bytes (terminator excluded).
    pub fn new(max_line_len: usize) -> Self {
        NdjsonDecoder {
            max_line_len,
            buf: BytesMut::new(),
            tail_start: 0,
            consumed: 0,
            discarding: false,
            errors: VecDeque::new(),
        }
    }

    /// The configured maximum line length.
    pub fn max_line_len(&self) -> usize {
        self.max_line_len
    }

    /// Bytes currently buffered (unpolled lines and the unfinished line).
    pub fn buffered_len(&self) -> usize {
        self.buf.len()
    }

    /// Whether the decoder is inside an over-long line, dropping bytes until the next newline.
    pub fn is_discarding(&self) -> bool {
        self.discarding
    }

    /// Feeds the next chunk of the stream.
    pub fn push(&mut self, chunk: &[u8]) {
        let partial = self.buf.len() - self.tail_start;
        if !self.discarding && partial.saturating_add(chunk.len()) <= self.max_line_len {
            return self.append_whole(chunk);
        }
        self.push_lines(chunk);
    }

    /// A chunk in which no line can pass the limit (the unfinished line and the whole chunk
    /// together fit it): appended as it is, and only its last newline is looked for. Cutting
    /// it into lines is left to `poll_frame`, which searches for each newline anyway; finding
    /// them here too cost a search per line.
    fn append_whole(&mut self, chunk: &[u8]) {
        // A chunk usually ends with its last line's newline: no search then.
        let complete = match chunk.last() {
            Some(b'\n') => Some(chunk.len()),
            _ => memchr::memrchr(b'\n', chunk).map(|last| last + 1),
        };
        self.buf.extend_from_slice(chunk);
        if let Some(complete) = complete {
            self.tail_start = self.buf.len() - chunk.len() + complete;
        }
    }

    /// A chunk that may hold a line past the limit: cut line by line, over-long lines
    /// replaced by their error.
    fn push_lines(&mut self, mut chunk: &[u8]) {
        self.reserve_lines(chunk);
        while !chunk.is_empty() {
            if self.discarding {
                match self.discard_through_newline(chunk) {
                    None => return,
                    Some(rest) => chunk = rest,
                }
                continue;
            }
            let partial = self.buf.len() - self.tail_start;
            match split_after_newline(chunk) {
                Some((with_newline, rest)) => {
                    let line = with_newline.strip_suffix(b"\n").unwrap_or(with_newline);
                    let content = partial + line.len() - usize::from(self.ends_with_cr(line));
                    if content > self.max_line_len {
                        self.reject_tail(line);
                    } else {
                        self.buf.extend_from_slice(with_newline);
                        self.tail_start = self.buf.len();
                    }
                    chunk = rest;
                }
                None => {
                    // One extra byte is allowed: it may be the `\r` of a CRLF.
                    if partial + chunk.len() > self.max_line_len.saturating_add(1) {
                        self.reject_tail(chunk);
                        self.discarding = true;
                    } else {
                        self.buf.extend_from_slice(chunk);
                    }
                    return;
                }
            }
        }
    }

    /// Makes room for the complete lines of `chunk` at once. Appending line by line let the
    /// buffer fill up mid-chunk, and `BytesMut` then moved the lines appended so far back to
    /// the front: a copy of most of every batch. One reservation up front moves only the
    /// unfinished line (usually nothing). Only bytes up to the chunk's last newline count: an
    /// unfinished line is still bounded by `max_line_len` as it grows.
    fn reserve_lines(&mut self, chunk: &[u8]) {
        let spare = self.buf.capacity() - self.buf.len();
        if self.discarding || spare >= chunk.len() {
            return;
        }
        // A chunk usually ends with its last line's newline: no search then.
        let complete = match chunk.last() {
            Some(b'\n') => Some(chunk.len()),
            _ => memchr::memrchr(b'\n', chunk).map(|last| last + 1),
        };
        if let Some(complete) = complete {
            self.buf.reserve(complete);
        }
    }

    /// Signals the end of the stream: a final line without a newline is treated as complete
    /// (and polled like any other line). Equivalent to pushing `"\n"`.
    ///
    /// Accepting the unterminated last line is the lenient choice: a peer that writes its last
    /// message and closes the pipe is still heard. The decoder stays usable afterwards.
    pub fn finish(&mut self) {
        self.push(b"\n");
    }

    /// The next complete line (without `\n` or `\r\n`), or an error standing in for an
    /// over-long line, in stream order. `None` when no complete line is buffered.
    #[must_use]
    pub fn poll_frame(&mut self) -> Option<Result<Bytes, FrameError>> {
        loop {
            if !self.errors.is_empty() {
                if let Some(error) = self.pop_due_error() {
                    return Some(Err(error));
                }
            }
            // Every complete line polled (the usual end of a drain): nothing to search.
            if self.tail_start == 0 {
                return None;
            }
            let complete = self.buf.get(..self.tail_start).unwrap_or_default();
            let end = memchr::memchr(b'\n', complete)?;
            let mut line = self.buf.split_to(end + 1);
            self.tail_start -= end + 1;
            self.consumed += (end + 1) as u64;
            line.truncate(end);
            if line.last() == Some(&b'\r') {
                line.truncate(end - 1);
            }
            if !is_blank(&line) {
                return Some(Ok(line.freeze()));
            }
        }
    }

    /// The first recorded error when the lines before it have all been polled. Rare: out of
    /// line (instruction cache).
    #[cold]
    #[inline(never)]
    fn pop_due_error(&mut self) -> Option<FrameError> {
        let &(at, _) = self.errors.front()?;
        if at > self.consumed {
            return None;
        }
        self.errors.pop_front().map(|(_, error)| error)
    }

    fn ends_with_cr(&self, line: &[u8]) -> bool {
        match line.last() {
            Some(&b) => b == b'\r',
            None => self.buf.len() > self.tail_start && self.buf.last() == Some(&b'\r'),
        }
    }

    /// While an over-long line is discarded: the rest of `chunk` after the line's newline (the
    /// discarding ends there), or `None` when the whole chunk belongs to the line. Rare: out of
    /// line (instruction cache).
    #[cold]
    #[inline(never)]
    fn discard_through_newline<'c>(&mut self, chunk: &'c [u8]) -> Option<&'c [u8]> {
        let pos = memchr::memchr(b'\n', chunk)?;
        self.discarding = false;
        chunk.get(pos + 1..)
    }

    /// Drops the unfinished line (its buffered start, then `rest` from the chunk) and records
    /// one error in its place, with what the line's first bytes say. Rare: out of line
    /// (instruction cache).
    #[cold]
    #[inline(never)]
    fn reject_tail(&mut self, rest: &[u8]) {
        let buffered = self.buf.get(self.tail_start..).unwrap_or_default();
        let head = if buffered.len() >= HEAD_SCAN_LEN || rest.is_empty() {
            FrameHead::scan(buffered)
        } else {
            let mut prefix = Vec::with_capacity(HEAD_SCAN_LEN);
            prefix.extend_from_slice(buffered);
            let more = (HEAD_SCAN_LEN - buffered.len()).min(rest.len());
            prefix.extend_from_slice(rest.get(..more).unwrap_or(rest));
            FrameHead::scan(&prefix)
        };
        self.buf.truncate(self.tail_start);
        let at = self.consumed + self.tail_start as u64;
        let limit = self.max_line_len;
        let error = FrameError::TooLong {
            limit,
            len: None,
            head,
        };
        self.errors.push_back((at, error));
    }
}

/// Splits `chunk` after its first `\n`: the line with its `\n`, and what follows.
fn split_after_newline(chunk: &[u8]) -> Option<(&[u8], &[u8])> {
    let pos = memchr::memchr(b'\n', chunk)?;
    chunk.split_at_checked(pos.checked_add(1)?)
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// Appends `message` to `buf` as exactly one line: raw `\n` and `\r` bytes become spaces (in
/// valid JSON they can only be insignificant whitespace) and a `\n` is appended.
pub fn encode_frame(buf: &mut Vec<u8>, message: &[u8]) {
    buf.reserve(message.len() + 1);
    let mut rest = message;
    while let Some(pos) = memchr::memchr2(b'\n', b'\r', rest) {
        // `pos` is the index of a byte memchr found, so within `rest`.
        let (line, tail) = rest.split_at(pos);
        buf.extend_from_slice(line);
        buf.push(b' ');
        rest = tail.get(1..).unwrap_or_default();
    }
    buf.extend_from_slice(rest);
    buf.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(d: &mut NdjsonDecoder) -> Vec<Result<Vec<u8>, FrameError>> {
        std::iter::from_fn(|| d.poll_frame())
            .map(|r| r.map(|b| b.to_vec()))
            .collect()
    }

    fn ok(s: &str) -> Result<Vec<u8>, FrameError> {
        Ok(s.as_bytes().to_vec())
    }

    const TOO_LONG: Result<Vec<u8>, FrameError> = Err(FrameError::TooLong {
        limit: 8,
        len: None,
        head: FrameHead {
            id: None,
            kind: crate::jsonrpc::HeadKind::Unknown,
        },
    });

    #[test]
    fn many_messages_in_one_chunk() {
        let mut d = NdjsonDecoder::default();
        d.push(b"{\"a\":1}\n{\"b\":2}\n{\"c\"");
        assert_eq!(drain(&mut d), vec![ok("{\"a\":1}"), ok("{\"b\":2}")]);
        d.push(b":3}\n");
        assert_eq!(drain(&mut d), vec![ok("{\"c\":3}")]);
    }

    #[test]
    fn one_message_over_many_single_byte_chunks_including_utf8() {
        let msg = "{\"s\":\"h\u{e9}llo \u{1f600}\"}\n";
        let mut d = NdjsonDecoder::default();
        for b in msg.as_bytes() {
            assert_eq!(d.poll_frame(), None);
            d.push(std::slice::from_ref(b));
        }
        assert_eq!(drain(&mut d), vec![ok(msg.trim_end())]);
    }

    #[test]
    fn crlf_is_tolerated_even_when_split() {
        let mut d = NdjsonDecoder::default();
        d.push(b"{}\r");
        assert_eq!(d.poll_frame(), None);
        d.push(b"\n[1]\r\n");
        assert_eq!(drain(&mut d), vec![ok("{}"), ok("[1]")]);
    }

    #[test]
    fn blank_and_whitespace_lines_are_skipped() {
        let mut d = NdjsonDecoder::default();
        d.push(b"\n\r\n  \t \n{}\n \r\n");
        assert_eq!(drain(&mut d), vec![ok("{}")]);
    }

    #[test]
    fn overlong_line_in_one_chunk_yields_one_error_and_keeps_neighbours() {
        let mut d = NdjsonDecoder::new(8);
        d.push(b"{\"a\":1}\n0123456789abc\n{\"b\":2}\n");
        assert_eq!(
            drain(&mut d),
            vec![ok("{\"a\":1}"), TOO_LONG, ok("{\"b\":2}")]
        );
    }

    #[test]
    fn overlong_line_streamed_is_not_buffered() {
        let mut d = NdjsonDecoder::new(8);
        d.push(b"[1]\n");
        for _ in 0..1000 {
            d.push(b"xxxxxxxxxxxxxxxx");
            assert!(
                d.buffered_len() <= 4 + 9,
                "buffer grew to {}",
                d.buffered_len()
            );
        }
        assert!(d.is_discarding());
        d.push(b"yyy\n[2]\n");
        assert!(!d.is_discarding());
        assert_eq!(drain(&mut d), vec![ok("[1]"), TOO_LONG, ok("[2]")]);
    }

    #[test]
    fn error_is_reported_in_stream_order() {
        let mut d = NdjsonDecoder::new(8);
        d.push(b"[1]\n[2]\n0123456789");
        // The error belongs after both earlier lines, even though it was detected first.
        assert_eq!(d.poll_frame(), Some(ok("[1]").map(Bytes::from)));
        d.push(b"more\n[3]\n");
        assert_eq!(drain(&mut d), vec![ok("[2]"), TOO_LONG, ok("[3]")]);
    }

    #[test]
    fn exact_limit_is_accepted_with_lf_and_crlf() {
        let mut d = NdjsonDecoder::new(8);
        d.push(b"12345678\n12345678\r");
        d.push(b"\n123456789\n");
        assert_eq!(
            drain(&mut d),
            vec![ok("12345678"), ok("12345678"), TOO_LONG]
        );
    }

    #[test]
    fn limit_plus_one_without_cr_is_rejected_when_the_newline_arrives() {
        let mut d = NdjsonDecoder::new(8);
        d.push(b"123456789");
        assert!(!d.is_discarding());
        d.push(b"\n[1]\n");
        assert_eq!(drain(&mut d), vec![TOO_LONG, ok("[1]")]);
    }

    #[test]
    fn consecutive_overlong_lines_each_yield_one_error() {
        let mut d = NdjsonDecoder::new(8);
        d.push(b"aaaaaaaaaaaaaaa\nbbbbbbbbbbbbbbbbbbbb");
        d.push(b"bbbbbbbbbbbbbbb\n{}\n");
        assert_eq!(drain(&mut d), vec![TOO_LONG, TOO_LONG, ok("{}")]);
    }

    #[test]
    fn finish_returns_the_unterminated_last_line() {
        let mut d = NdjsonDecoder::default();
        d.push(b"[1]\n[2]");
        assert_eq!(drain(&mut d), vec![ok("[1]")]);
        d.finish();
        assert_eq!(drain(&mut d), vec![ok("[2]")]);
        d.finish();
        assert_eq!(drain(&mut d), vec![]);
    }

    #[test]
    fn finish_while_discarding_reports_only_once() {
        let mut d = NdjsonDecoder::new(4);
        d.push(b"0123456789");
        d.finish();
        let head = FrameHead::default();
        assert_eq!(
            drain(&mut d),
            vec![Err(FrameError::TooLong {
                limit: 4,
                len: None,
                head
            })]
        );
    }

    #[test]
    fn overlong_line_keeps_the_id_of_its_first_bytes() {
        let mut d = NdjsonDecoder::new(64);
        d.push(br#"{"jsonrpc":"2.0","id":"r-1","method":"tools/call","params":{"d":""#);
        for _ in 0..100 {
            d.push(b"xxxxxxxxxxxxxxxx");
        }
        d.push(b"\"}}\n{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"big\":\"");
        d.push(&[b'y'; 100]);
        d.push(b"\"}}\n");
        let heads: Vec<FrameHead> = drain(&mut d)
            .into_iter()
            .map(|item| match item {
                Err(FrameError::TooLong { head, .. }) => head,
                other => panic!("expected an error, got {other:?}"),
            })
            .collect();
        let kinds = [
            crate::jsonrpc::HeadKind::Request,
            crate::jsonrpc::HeadKind::Response,
        ];
        let ids = [
            Some(crate::jsonrpc::RequestId::string("r-1")),
            Some(crate::jsonrpc::RequestId::number(5)),
        ];
        assert_eq!(heads.iter().map(|h| h.kind).collect::<Vec<_>>(), kinds);
        assert_eq!(heads.into_iter().map(|h| h.id).collect::<Vec<_>>(), ids);
    }

    #[test]
    fn frames_share_the_buffer() {
        let mut d = NdjsonDecoder::default();
        d.push(b"[1]\n[2]\n");
        let a = d.poll_frame().unwrap().unwrap();
        let b = d.poll_frame().unwrap().unwrap();
        // Adjacent slices of one allocation: no copy per frame.
        assert_eq!(a.as_ptr().wrapping_add(4), b.as_ptr());
    }

    #[test]
    fn encoder_guarantees_one_line() {
        let mut buf = Vec::new();
        encode_frame(&mut buf, b"{\n  \"a\": 1\r\n}");
        encode_frame(&mut buf, b"[]");
        assert_eq!(buf, b"{   \"a\": 1  }\n[]\n");
        let mut d = NdjsonDecoder::default();
        d.push(&buf);
        assert_eq!(drain(&mut d), vec![ok("{   \"a\": 1  }"), ok("[]")]);
    }

    #[test]
    fn error_message_names_the_limit() {
        let head = FrameHead::default();
        let text = FrameError::TooLong {
            limit: 42,
            len: None,
            head,
        }
        .to_string();
        assert!(text.contains("42") && text.contains("limit"), "{text}");
    }
}
