//! `FrameError`: a part of a byte stream that could not become a frame, as the framing parsers
//! report it and as a transport tells a session about it (`handle_decode_error`).

use std::fmt;

use crate::jsonrpc::FrameHead;

/// A part of the input that could not become a frame. The parser that reports it has already
/// dropped the offending bytes and resynchronised; later frames are unaffected. A transport
/// hands it on to the session (`handle_decode_error`), which answers a request it can name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The frame (an ndjson line without its terminator, a server-sent event or one of its
    /// lines, an HTTP body) exceeded the framer's length limit and was discarded.
    TooLong {
        /// The limit that was exceeded, in bytes.
        limit: usize,
        /// The frame's length, when the transport knows it (an HTTP body; a line being
        /// discarded has no known length).
        len: Option<u64>,
        /// What the frame's first bytes say (its id, request or response): see
        /// [`FrameHead::scan`]. `FrameHead::default()` when nothing was read.
        head: FrameHead,
    },
    /// Anything else the framer could not make sense of.
    Malformed(String),
}

impl FrameError {
    /// A frame over `limit` of which nothing was read.
    pub fn too_long(limit: usize) -> FrameError {
        FrameError::TooLong {
            limit,
            len: None,
            head: FrameHead::default(),
        }
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooLong {
                limit,
                len: Some(len),
                ..
            } => write!(
                f,
                "frame of {len} bytes exceeds the limit of {limit} bytes; it was discarded"
            ),
            FrameError::TooLong {
                limit, len: None, ..
            } => write!(
                f,
                "frame exceeds the limit of {limit} bytes; it was discarded"
            ),
            FrameError::Malformed(why) => write!(f, "malformed frame: {why}"),
        }
    }
}

impl std::error::Error for FrameError {}
