//! Cutting the input into frames with the core's ndjson decoder
//! (`mcp_sansio::framing::NdjsonDecoder`); its errors go to the machine as they are.

use bytes::Bytes;
use mcp_sansio::framing::NdjsonDecoder;

use crate::driven::FrameError;

/// One unit of input for the machine: a frame, or a refused line standing in for one.
pub(crate) enum LineItem {
    Frame(Bytes),
    Error(FrameError),
}

/// The decoder plus the mapping; lines are polled one at a time so feeding can pause at the
/// output high-water mark while the rest stays buffered.
pub(crate) struct Lines {
    decoder: NdjsonDecoder,
}

impl Lines {
    pub(crate) fn new(max_line_len: usize) -> Self {
        Self {
            decoder: NdjsonDecoder::new(max_line_len),
        }
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.decoder.push(bytes);
    }

    /// The next complete line or error, in stream order.
    pub(crate) fn next_item(&mut self) -> Option<LineItem> {
        Some(match self.decoder.poll_frame()? {
            Ok(frame) => LineItem::Frame(frame),
            Err(error) => LineItem::Error(error),
        })
    }

    /// End of input: an unterminated last line counts as complete (poll it with `next_item`).
    pub(crate) fn finish(&mut self) {
        self.decoder.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(lines: &mut Lines) -> Vec<String> {
        std::iter::from_fn(|| lines.next_item())
            .map(|item| match item {
                LineItem::Frame(f) => String::from_utf8_lossy(&f).into_owned(),
                LineItem::Error(FrameError::TooLong { limit, .. }) => {
                    format!("too long > {limit}")
                }
                LineItem::Error(FrameError::Malformed(why)) => why,
            })
            .collect()
    }

    #[test]
    fn lines_errors_and_the_unterminated_last_line_come_in_order() {
        let mut lines = Lines::new(4);
        lines.push(b"ab\r\ntoolong\nc");
        lines.push(b"d\n\ne");
        assert_eq!(drain(&mut lines), ["ab", "too long > 4", "cd"]);
        lines.finish();
        assert_eq!(drain(&mut lines), ["e"]);
    }
}
