//! Encoding messages as compact JSON into a caller-owned buffer.
//!
//! The envelope is written by hand around the raw payloads, so encoding costs one copy of the
//! payload and no intermediate tree. The output never contains a raw newline unless a raw
//! payload does; the ndjson encoder takes care of that case.

use super::scan::not_raw_in_string;
use super::{ErrorObject, Message, Notification, RawJson, Request, RequestId, Response};

/// How an error response whose request id is unknown spells the missing id.
///
/// JSON-RPC 2.0 and the MCP schemas up to 2025-06-18 use `"id": null`; the 2025-11-25 schema
/// forbids `null` and wants the member omitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MissingId {
    /// Write `"id":null`.
    #[default]
    Null,
    /// Leave the `id` member out.
    Omit,
}

const PREFIX: &[u8] = br#"{"jsonrpc":"2.0","#;

/// Appends a request.
pub fn encode_request(buf: &mut Vec<u8>, id: &RequestId, method: &str, params: Option<&RawJson>) {
    buf.extend_from_slice(PREFIX);
    buf.extend_from_slice(br#""id":"#);
    id.write_json(buf);
    buf.extend_from_slice(br#","method":"#);
    write_json_string(buf, method);
    write_params(buf, params);
    buf.push(b'}');
}

/// Appends a notification.
// Not inlined into `Message::encode_with` (and so `poll_transmit`), whose hot kinds are
// requests and responses (instruction cache).
#[inline(never)]
pub fn encode_notification(buf: &mut Vec<u8>, method: &str, params: Option<&RawJson>) {
    buf.extend_from_slice(PREFIX);
    buf.extend_from_slice(br#""method":"#);
    write_json_string(buf, method);
    write_params(buf, params);
    buf.push(b'}');
}

/// Appends a success response.
pub fn encode_result(buf: &mut Vec<u8>, id: &RequestId, result: &RawJson) {
    write_result_prefix(buf, id);
    buf.extend_from_slice(result.as_bytes());
    buf.push(b'}');
}

/// Appends the start of a success response, up to and including `"result":`; the caller
/// writes the result value, then the closing `}`.
pub fn write_result_prefix(buf: &mut Vec<u8>, id: &RequestId) {
    buf.extend_from_slice(PREFIX);
    buf.extend_from_slice(br#""id":"#);
    id.write_json(buf);
    buf.extend_from_slice(br#","result":"#);
}

/// Appends an error response.
pub fn encode_error(
    buf: &mut Vec<u8>,
    id: Option<&RequestId>,
    error: &ErrorObject,
    missing_id: MissingId,
) {
    buf.extend_from_slice(PREFIX);
    match (id, missing_id) {
        (Some(id), _) => {
            buf.extend_from_slice(br#""id":"#);
            id.write_json(buf);
            buf.push(b',');
        }
        (None, MissingId::Null) => buf.extend_from_slice(br#""id":null,"#),
        (None, MissingId::Omit) => {}
    }
    buf.extend_from_slice(br#""error":{"code":"#);
    buf.extend_from_slice(itoa::Buffer::new().format(error.code).as_bytes());
    buf.extend_from_slice(br#","message":"#);
    write_json_string(buf, &error.message);
    if let Some(data) = &error.data {
        buf.extend_from_slice(br#","data":"#);
        buf.extend_from_slice(data.as_bytes());
    }
    buf.extend_from_slice(b"}}");
}

fn write_params(buf: &mut Vec<u8>, params: Option<&RawJson>) {
    if let Some(params) = params {
        buf.extend_from_slice(br#","params":"#);
        buf.extend_from_slice(params.as_bytes());
    }
}

/// Appends JSON text with each raw CR or LF (insignificant whitespace there, since strings
/// escape theirs) written as a space, so the message stays on one line.
pub(crate) fn push_on_one_line(out: &mut Vec<u8>, text: &[u8]) {
    out.extend(text.iter().map(|&b| match b {
        b'\n' | b'\r' => b' ',
        _ => b,
    }));
}

/// Appends `s` as a JSON string literal (quoted and escaped).
#[inline]
pub fn write_json_string(buf: &mut Vec<u8>, s: &str) {
    use super::escape::{push_short_string, push_string, SHORT_STRING};
    let bytes = s.as_bytes();
    // Under two words (most keys, method names), one table lookup a byte, inline, costs less
    // than setting up the word search (measured: 34 instructions per echo round trip).
    let tiny = bytes.len() < 16;
    if tiny && !bytes.iter().any(|&b| not_raw_in_string(b)) {
        buf.push(b'"');
        buf.extend_from_slice(bytes);
        buf.push(b'"');
    } else if bytes.len() <= SHORT_STRING {
        push_short_string(buf, s);
    } else {
        push_string(buf, s, 0);
    }
}

impl Request {
    /// Appends this request.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        encode_request(buf, &self.id, &self.method, self.params.as_ref());
    }
}

impl Notification {
    /// Appends this notification.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        encode_notification(buf, &self.method, self.params.as_ref());
    }
}

impl Response {
    /// Appends this response; a missing id is spelled per `missing_id`.
    pub fn encode(&self, buf: &mut Vec<u8>, missing_id: MissingId) {
        match (&self.outcome, &self.id) {
            (Ok(result), Some(id)) => encode_result(buf, id, result),
            // A result needs an id; without one the only honest encoding is an error.
            (Ok(_), None) => encode_idless_result(buf, missing_id),
            (Err(error), id) => encode_error(buf, id.as_ref(), error, missing_id),
        }
    }
}

/// A result without an id cannot go out: an internal error goes instead. Never built by the
/// session; kept out of the encoders' path (instruction cache).
#[cold]
#[inline(never)]
fn encode_idless_result(buf: &mut Vec<u8>, missing_id: MissingId) {
    let error = ErrorObject::internal("result without a request id");
    encode_error(buf, None, &error, missing_id);
}

impl Message {
    /// Appends this message (a missing error id is written as `null`).
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.encode_with(buf, MissingId::Null);
    }

    /// Appends this message, spelling a missing error id per `missing_id`.
    pub fn encode_with(&self, buf: &mut Vec<u8>, missing_id: MissingId) {
        match self {
            Message::Request(r) => r.encode(buf),
            Message::Notification(n) => n.encode(buf),
            Message::Response(r) => r.encode(buf, missing_id),
        }
    }

    /// The encoded message as a fresh vector.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut buf = Vec::new();
        self.encode(&mut buf);
        buf
    }
}

/// Appends a batch (a JSON array of messages).
pub fn encode_batch(buf: &mut Vec<u8>, messages: &[Message], missing_id: MissingId) {
    buf.push(b'[');
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        m.encode_with(buf, missing_id);
    }
    buf.push(b']');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every string, plain or not, is written exactly as serde_json writes it.
    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let mut every_byte: Vec<String> = (0u8..0x80).map(|b| format!("a{}b", b as char)).collect();
        every_byte
            .extend(["tools/call", "", "é\u{7f}\u{1F600}", "\"\\/\n\r\t\u{1}"].map(String::from));
        for s in every_byte {
            let mut buf = Vec::new();
            write_json_string(&mut buf, &s);
            assert_eq!(buf, serde_json::to_vec(&s).unwrap(), "{s:?}");
        }
    }
}
