//! Decoding one frame (a JSON text) into a [`Message`] or a batch.
//!
//! The frame is read once into the raw text of its six members ([`Members`]), so no member's
//! type can make that read fail and the id survives every kind of malformed message. The
//! hand-written scanner (`scan`) reads the common shape and checks UTF-8 as it goes; anything
//! else is checked for UTF-8 whole and goes through serde into a shallow struct of borrowed
//! `&RawValue`s, whose answer (and errors) define the language.
//! Payloads are then kept as zero-copy slices of the input [`Bytes`].

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::message::intern_method;
use super::scan::{self, Members};
use super::{
    DecodeError, DecodeErrorKind, ErrorObject, FrameHead, HeadKind, Incoming, Message,
    Notification, RawJson, Request, RequestId, Response,
};

/// The members of a JSON-RPC object as serde reads them, each kept raw. `Some` means present
/// (even if `null`).
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

impl<'a> Envelope<'a> {
    fn members(self) -> Members<'a> {
        Members {
            jsonrpc: self.jsonrpc.map(raw_bytes),
            id: self.id.map(raw_bytes),
            method: self.method.map(raw_bytes),
            params: self.params.map(raw_bytes),
            result: self.result.map(raw_bytes),
            error: self.error.map(raw_bytes),
        }
    }
}

fn raw_bytes(raw: &RawValue) -> &[u8] {
    raw.get().as_bytes()
}

/// Marks a member as present, including when its value is `null`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Decodes one frame: a single message or a batch.
///
/// `frame` must hold exactly one JSON text (surrounding whitespace allowed). Payloads of the
/// returned messages share `frame`'s buffer.
pub fn decode(frame: &Bytes) -> Result<Incoming, DecodeError> {
    match first_non_blank(frame) {
        Some(b'[') => decode_batch(frame, utf8(frame)?),
        Some(_) => match decode_object(frame) {
            Ok(message) => Ok(Incoming::Single(message)),
            Err(e) => Err(with_head_id(e, frame)),
        },
        // A blank frame is ASCII: "empty" is the right answer before any UTF-8 check.
        None => Err(DecodeError::parse("empty frame")),
    }
}

/// A parse error learns the id the frame's first bytes show when they show a request (a frame
/// cut short, a stray byte, invalid UTF-8 in a string): the client's pending request fails at
/// once instead of waiting for its timeout. An unreadable id stays unknown.
#[cold]
#[inline(never)]
fn with_head_id(mut e: DecodeError, frame: &[u8]) -> DecodeError {
    if e.kind == DecodeErrorKind::Parse && e.id.is_none() {
        let head = FrameHead::scan(frame);
        if head.kind == HeadKind::Request {
            e.id = head.id;
        }
    }
    e
}

fn utf8(frame: &[u8]) -> Result<&str, DecodeError> {
    std::str::from_utf8(frame).map_err(|_| DecodeError::parse("frame is not UTF-8"))
}

/// Decodes one frame that must be a single message (a batch is an invalid request).
pub fn decode_message(frame: &Bytes) -> Result<Message, DecodeError> {
    match decode(frame)? {
        Incoming::Single(m) => Ok(m),
        Incoming::Batch(_) => Err(DecodeError::invalid(None, "batches are not allowed here")),
    }
}

/// Decodes a message from a plain slice (copies it into a fresh buffer first).
pub fn decode_slice(frame: &[u8]) -> Result<Incoming, DecodeError> {
    decode(&Bytes::copy_from_slice(frame))
}

fn first_non_blank(frame: &[u8]) -> Option<u8> {
    frame
        .iter()
        .copied()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

fn decode_batch(frame: &Bytes, text: &str) -> Result<Incoming, DecodeError> {
    let items: Vec<&RawValue> = serde_json::from_str(text).map_err(syntax_or_invalid)?;
    if items.is_empty() {
        return Err(DecodeError::invalid(None, "empty batch"));
    }
    let batch = items
        .into_iter()
        .map(|item| decode_value(frame, item.get()))
        .collect();
    Ok(Incoming::Batch(batch))
}

fn syntax_or_invalid(e: serde_json::Error) -> DecodeError {
    match e.classify() {
        serde_json::error::Category::Data => DecodeError::invalid(None, e.to_string()),
        _ => DecodeError::parse(e.to_string()),
    }
}

/// Decodes a frame that is not a batch as a message. The scanner checks UTF-8 as it reads, so
/// the whole frame is checked only on the serde path: a frame that is not UTF-8 fails there,
/// with the same error as before any parsing.
fn decode_object(frame: &Bytes) -> Result<Message, DecodeError> {
    let env = match scan::members(frame) {
        Some(members) => members,
        None => serde_members(utf8(frame)?)?,
    };
    decode_members(frame, &env)
}

/// Decodes one JSON value (`text` is a slice of `frame`, a batch element) as a message.
fn decode_value(frame: &Bytes, text: &str) -> Result<Message, DecodeError> {
    let env = match scan::members(text.as_bytes()) {
        Some(members) => members,
        None => serde_members(text)?,
    };
    decode_members(frame, &env)
}

/// A message from the members of its object (slices of `frame`).
fn decode_members(frame: &Bytes, env: &Members<'_>) -> Result<Message, DecodeError> {
    let slice = |raw: &[u8]| RawJson::from_validated(frame.slice_ref(raw));
    let id = parse_id(env.id);
    if !is_version_2(env.jsonrpc) {
        return Err(invalid_for(
            env,
            id.ok().flatten(),
            "jsonrpc must be \"2.0\"",
        ));
    }
    match env.method {
        Some(method) => decode_call(env, method, id, slice),
        None => decode_response(env, id, slice),
    }
}

/// The serde path: every text the scanner does not answer for, valid or not.
pub(super) fn serde_members(text: &str) -> Result<Members<'_>, DecodeError> {
    match serde_json::from_str::<Envelope<'_>>(text) {
        Ok(env) => Ok(env.members()),
        Err(e) if e.classify() == serde_json::error::Category::Data => {
            // A data error can stop the parse before a later syntax error (`8 x`, or a
            // duplicate member followed by garbage): the text must be valid JSON to be an
            // invalid request rather than a parse error.
            if let Err(syntax) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
                return Err(DecodeError::parse(syntax.to_string()));
            }
            Err(DecodeError::invalid(
                recover_id(text),
                data_error_detail(&e),
            ))
        }
        Err(e) => Err(DecodeError::parse(e.to_string())),
    }
}

#[cold]
#[inline(never)]
fn invalid_for(env: &Members<'_>, id: Option<RequestId>, detail: &str) -> DecodeError {
    if env.method.is_none() && (env.result.is_some() || env.error.is_some()) {
        DecodeError::invalid_response(id, detail)
    } else {
        DecodeError::invalid(id, detail)
    }
}

/// The id member: `Ok(None)` when absent or `null`, `Err` when present but not a valid id.
fn parse_id(raw: Option<&[u8]>) -> Result<Option<RequestId>, ()> {
    match raw {
        None | Some(b"null") => Ok(None),
        Some(text) => RequestId::from_json_bytes(text).map(Some).ok_or(()),
    }
}

fn decode_call(
    env: &Members<'_>,
    method: &[u8],
    id: Result<Option<RequestId>, ()>,
    slice: impl Fn(&[u8]) -> RawJson,
) -> Result<Message, DecodeError> {
    let Some(method) = parse_method(method) else {
        return Err(call_error(&id, "method must be a string"));
    };
    if env.result.is_some() || env.error.is_some() {
        return Err(call_error(
            &id,
            "a message cannot have both method and result/error",
        ));
    }
    let params = match env.params {
        None => None,
        Some(b"null") => None,
        Some(p) if matches!(p.first(), Some(b'{' | b'[')) => Some(slice(p)),
        Some(_) => return Err(call_error(&id, "params must be an object or an array")),
    };
    match (env.id, id) {
        (None, _) => Ok(Message::Notification(Notification { method, params })),
        (Some(_), Ok(Some(id))) => Ok(Message::Request(Request { id, method, params })),
        (Some(_), _) => Err(DecodeError::invalid(
            None,
            "request id must be a string or an integer",
        )),
    }
}

/// The error of a request or notification that cannot be decoded, carrying its id when the
/// id itself is valid. Built only on failure: the id is cloned here, not on every call.
#[cold]
#[inline(never)]
fn call_error(id: &Result<Option<RequestId>, ()>, detail: &str) -> DecodeError {
    DecodeError::invalid(id.clone().ok().flatten(), detail)
}

fn parse_method(text: &[u8]) -> Option<super::Method> {
    let inner = text.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    // A known method is matched on its bytes: no UTF-8 check, no allocation.
    // The last byte first: names of one length often share their start (`tools/list`,
    // `tools/call`), so most candidates are told apart without a comparison call.
    let known = super::KNOWN_METHODS
        .iter()
        .find(|m| m.as_bytes().last() == inner.last() && m.as_bytes() == inner);
    if let Some(known) = known {
        return Some(std::borrow::Cow::Borrowed(known));
    }
    parse_unknown_method(text, inner)
}

/// A method name outside the known set (`inner` is `text` without its quotes): interned,
/// unescaped first when it holds an escape. Kept out of line: the common names take the
/// known path (instruction cache).
#[cold]
#[inline(never)]
fn parse_unknown_method(text: &[u8], inner: &[u8]) -> Option<super::Method> {
    if !inner.contains(&b'\\') {
        return Some(intern_method(std::str::from_utf8(inner).ok()?));
    }
    let unescaped: String = serde_json::from_slice(text).ok()?;
    Some(intern_method(&unescaped))
}

fn decode_response(
    env: &Members<'_>,
    id: Result<Option<RequestId>, ()>,
    slice: impl Fn(&[u8]) -> RawJson,
) -> Result<Message, DecodeError> {
    let id = match id {
        Ok(id) => id,
        Err(()) => {
            return Err(DecodeError::invalid_response(
                None,
                "response id must be a string, an integer or null",
            ))
        }
    };
    match (env.result, env.error) {
        (Some(result), None) => match id {
            Some(id) => Ok(Message::Response(Response::result(id, slice(result)))),
            None => Err(DecodeError::invalid_response(None, "result without an id")),
        },
        (None, Some(error)) => {
            let error = parse_error_object(error, &slice)
                .ok_or_else(|| DecodeError::invalid_response(id.clone(), "malformed error"))?;
            Ok(Message::Response(Response::error(id, error)))
        }
        (Some(_), Some(_)) => Err(DecodeError::invalid_response(
            id,
            "a response cannot have both result and error",
        )),
        (None, None) if env.id.is_some() => Err(DecodeError::invalid(
            id,
            "a message needs a method, a result or an error",
        )),
        (None, None) => Err(DecodeError::invalid(None, "not a JSON-RPC message")),
    }
}

// Error responses are the rare kind: out of `decode_members` (instruction cache).
#[cold]
#[inline(never)]
fn parse_error_object(raw: &[u8], slice: &impl Fn(&[u8]) -> RawJson) -> Option<ErrorObject> {
    #[derive(Deserialize)]
    struct WireError<'a> {
        code: i64,
        message: String,
        #[serde(default, borrow, deserialize_with = "present")]
        data: Option<&'a RawValue>,
    }
    let wire: WireError<'_> = serde_json::from_slice(raw).ok()?;
    Some(ErrorObject {
        code: wire.code,
        message: wire.message,
        data: wire.data.map(|data| slice(data.get().as_bytes())),
    })
}

fn is_version_2(raw: Option<&[u8]>) -> bool {
    match raw {
        Some(b"\"2.0\"") => true,
        Some(text) if text.starts_with(b"\"") => is_escaped_version_2(text),
        _ => false,
    }
}

/// Whether a string other than the plain `"2.0"` (escaped, or another version) reads as
/// `2.0`. Rare: out of line (instruction cache).
#[cold]
#[inline(never)]
fn is_escaped_version_2(text: &[u8]) -> bool {
    serde_json::from_slice::<String>(text).is_ok_and(|s| s == "2.0")
}

/// Best effort: the id of an object that failed the envelope parse (for example because of a
/// duplicate key), so the error response can still carry it.
fn recover_id(text: &str) -> Option<RequestId> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let id = value.as_object()?.get("id")?;
    RequestId::from_json_text(&id.to_string())
}

fn data_error_detail(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    if msg.starts_with("invalid type") {
        "a JSON-RPC message must be an object".to_owned()
    } else {
        msg
    }
}
