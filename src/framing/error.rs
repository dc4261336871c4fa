//! `FrameError`: why a framing parser rejected part of a byte stream.

use std::fmt;

use crate::jsonrpc::FrameHead;

/// A part of the input that could not become a frame. The parser that reports it has already
/// dropped the offending bytes and resynchronised; later frames are unaffected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// An ndjson line was longer than the configured maximum (line terminator excluded).
    LineTooLong {
        /// The configured maximum line length in bytes.
        max: usize,
        /// What the line's first bytes say (its id, request or response), scanned before they
        /// were dropped: see [`FrameHead::scan`].
        head: FrameHead,
    },
    /// A server-sent event (one of its lines, or its accumulated data) exceeded the maximum.
    EventTooLarge {
        /// The configured maximum event size in bytes.
        max: usize,
    },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::LineTooLong { max, .. } => write!(
                f,
                "line exceeds the maximum length of {max} bytes; it was discarded"
            ),
            FrameError::EventTooLarge { max } => write!(
                f,
                "server-sent event exceeds the maximum size of {max} bytes; it was discarded"
            ),
        }
    }
}

impl std::error::Error for FrameError {}
