//! Incremental push parsers and encoders that cut byte streams into frames.
//!
//! - [`NdjsonDecoder`] and [`encode_frame`]: newline-delimited JSON (the stdio transport): one message per line.
//! - [`SseDecoder`] and [`write_event`]: `text/event-stream` (the Streamable HTTP transport's server-to-client streams).
//!
//! Both parsers are sans-IO: the caller pushes whatever bytes arrived and polls the outputs.
//! Every buffer they keep is bounded by a configured limit.

mod error;
mod ndjson;
mod sse;

pub use error::FrameError;
pub use ndjson::{encode_frame, NdjsonDecoder};
pub use sse::{write_comment, write_event, write_keep_alive, SseDecoder, SseEvent, SseItem};
