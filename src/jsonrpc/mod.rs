//! JSON-RPC 2.0 as MCP uses it: exact request ids, the four envelopes, lazy payloads, and a
//! decoder that always recovers enough to answer (the right error code, the id when readable).
//!
//! Decoding takes a frame as [`bytes::Bytes`] and keeps params and results as zero-copy slices
//! ([`RawJson`]); encoding writes compact JSON into a caller-owned `Vec<u8>`.

mod decode;
mod encode;
mod error;
mod escape;
mod head;
mod id;
mod message;
mod methods;
mod raw;
mod raw_de;
mod scan;
mod view;
mod writer;

pub use decode::{decode, decode_message, decode_slice};
pub(crate) use encode::push_on_one_line;
pub use encode::{
    encode_batch, encode_error, encode_notification, encode_request, encode_result,
    write_json_string, write_result_prefix, MissingId,
};
pub(crate) use error::DecodeErrorKind;
pub use error::{code, DecodeError, ErrorObject};
pub(crate) use head::HeadKind;
pub use head::{FrameHead, HEAD_SCAN_LEN};
pub use id::RequestId;
pub(crate) use message::Method;
pub use message::{intern_method, Incoming, Message, Notification, Request, Response};
pub use methods::*;
pub use raw::RawJson;
pub(crate) use view::read_unvalidated_string_end;
pub use view::JsonView;
pub use writer::JsonWriter;

#[cfg(test)]
mod scan_tests;
#[cfg(test)]
mod tests;
