//! Fuzz bodies: plain functions that drive the parsers with arbitrary bytes and assert their
//! invariants (no panic, chunking equivalence, limits, agreement with reference models).
//!
//! The state-machine bodies (`session_server`, `session_client`, `pair_ops`, `app_server`,
//! `http_endpoint`, `http_client`, `sse_transport_router`) and `stateless_validate` decode an operation sequence from the input (see `ops`) and check invariants
//! after each step; `model_types` decodes the input as every MCP model type.
//!
//! cargo-fuzz targets call these; the unit tests below run them on seeds and on pseudo-random
//! inputs so the bodies are exercised by every `cargo test` and cannot rot. The first input byte
//! seeds the chunk sizes (and the limits), the rest is the stream.

use bytes::Bytes;
use serde_json::Value;

use crate::framing::{self, FrameError, NdjsonDecoder, SseDecoder, SseEvent, SseItem};
use crate::jsonrpc::{self, DecodeErrorKind, Incoming, Message, MissingId, RequestId};

mod app_ops;
mod http_client_ops;
mod http_ops;
mod http_server_ops;
mod model_types;
mod ops;
mod pair_ops;
mod session_ops;
mod sse_transport_ops;
mod stateless_ops;

pub use app_ops::app_server;
pub use http_client_ops::http_client;
pub use http_ops::http_endpoint;
pub use model_types::model_types;
pub use pair_ops::pair_ops;
pub use session_ops::{session_client, session_server};
pub use sse_transport_ops::sse_transport_router;
pub use stateless_ops::stateless_validate;

/// A tiny deterministic generator for chunk sizes (xorshift64).
struct Chunker(u64);

impl Chunker {
    fn new(seed: u8) -> Self {
        Chunker(0x9E37_79B9_7F4A_7C15 ^ u64::from(seed))
    }

    fn next_len(&mut self, max: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        1 + (self.0 % max.max(1) as u64) as usize
    }

    /// Splits `data` into chunks of pseudo-random sizes (1 to 2 * the seed's limit).
    fn chunks<'a>(&mut self, data: &'a [u8], max: usize) -> Vec<&'a [u8]> {
        let mut out = Vec::new();
        let mut rest = data;
        while !rest.is_empty() {
            let n = self.next_len(max).min(rest.len());
            out.push(&rest[..n]);
            rest = &rest[n..];
        }
        out
    }
}

fn split_seed(data: &[u8]) -> (u8, &[u8]) {
    match data.split_first() {
        Some((&seed, rest)) => (seed, rest),
        None => (0, data),
    }
}

type NdjsonOut = Vec<Result<Bytes, FrameError>>;

/// The ndjson decoder: chunked and whole decoding agree with a simple line-splitting model, the
/// buffer stays within the limit, and re-encoding each frame decodes to the same frame.
pub fn ndjson(data: &[u8]) {
    let (seed, stream) = split_seed(data);
    let max = 1 + usize::from(seed % 64);
    let expected = ndjson_model(stream, max);

    let mut whole = NdjsonDecoder::new(max);
    whole.push(stream);
    whole.finish();
    let got: NdjsonOut = std::iter::from_fn(|| whole.poll_frame()).collect();
    assert_eq!(
        without_heads(got),
        expected,
        "whole-stream decode differs from the model"
    );

    let mut chunked = NdjsonDecoder::new(max);
    let mut got = Vec::new();
    for chunk in Chunker::new(seed).chunks(stream, 2 * max + 2) {
        chunked.push(chunk);
        got.extend(std::iter::from_fn(|| chunked.poll_frame()));
        assert!(
            chunked.buffered_len() <= max + 1,
            "buffer exceeds the limit"
        );
    }
    chunked.finish();
    got.extend(std::iter::from_fn(|| chunked.poll_frame()));
    assert_eq!(
        without_heads(got),
        expected,
        "chunked decode differs from the model"
    );

    for frame in expected.iter().flatten() {
        let mut line = Vec::new();
        framing::encode_frame(&mut line, frame);
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        let mut d = NdjsonDecoder::new(max);
        d.push(&line);
        let again = d
            .poll_frame()
            .expect("one frame")
            .expect("within the limit");
        let spaced: Vec<u8> = frame
            .iter()
            .map(|&b| if b == b'\r' { b' ' } else { b })
            .collect();
        assert_eq!(again, spaced);
    }
}

/// `out` with the scanned heads of over-long lines cleared (the model does not scan them; the
/// decoder's unit tests check the heads).
fn without_heads(out: NdjsonOut) -> NdjsonOut {
    out.into_iter()
        .map(|item| {
            item.map_err(|e| match e {
                FrameError::TooLong { limit, len, .. } => FrameError::TooLong {
                    limit,
                    len,
                    head: Default::default(),
                },
                other => other,
            })
        })
        .collect()
}

/// The reference: split on `\n` (the last piece is a line too), drop one trailing `\r`,
/// replace lines over `max` with an error (blank or not), and skip blank lines.
fn ndjson_model(stream: &[u8], max: usize) -> NdjsonOut {
    stream
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter_map(|line| {
            if line.len() > max {
                Some(Err(FrameError::too_long(max)))
            } else if line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
                None
            } else {
                Some(Ok(Bytes::copy_from_slice(line)))
            }
        })
        .collect()
}

/// The SSE decoder: chunked and whole decoding agree, events respect the size limit, and every
/// event re-encoded with [`framing::write_event`] decodes to the same event.
pub fn sse(data: &[u8]) {
    let (seed, stream) = split_seed(data);
    let max = 4 + usize::from(seed % 128);

    let mut whole = SseDecoder::new(max);
    whole.push(stream);
    let expected: Vec<_> = std::iter::from_fn(|| whole.poll_item()).collect();

    let mut chunked = SseDecoder::new(max);
    let mut got = Vec::new();
    for chunk in Chunker::new(seed).chunks(stream, 2 * max) {
        chunked.push(chunk);
        got.extend(std::iter::from_fn(|| chunked.poll_item()));
    }
    assert_eq!(got, expected, "chunked SSE decode differs");
    assert_eq!(chunked.last_event_id(), whole.last_event_id());

    for item in expected.iter().flatten() {
        if let SseItem::Event(event) = item {
            assert!(event.data.len() < max, "event data over the limit");
            assert!(!event.id.contains(['\0', '\r', '\n']));
            sse_round_trip(event);
        }
    }
}

fn sse_round_trip(event: &SseEvent) {
    let mut buf = Vec::new();
    let id = (!event.id.is_empty()).then_some(event.id.as_str());
    framing::write_event(&mut buf, id, event.event.as_deref(), &event.data, None);
    let mut d = SseDecoder::default();
    d.push(&buf);
    assert_eq!(d.poll_item(), Some(Ok(SseItem::Event(event.clone()))));
    assert_eq!(d.poll_item(), None);
}

/// The JSON-RPC decoder: never panics, parse errors carry no id, and every decoded message
/// re-encodes to text that decodes to the same message.
pub fn jsonrpc_decode(data: &[u8]) {
    let frame = Bytes::copy_from_slice(data);
    match jsonrpc::decode(&frame) {
        Ok(Incoming::Single(message)) => {
            let again = jsonrpc::decode(&Bytes::from(message.to_vec()));
            assert_eq!(again, Ok(Incoming::Single(message)));
        }
        Ok(Incoming::Batch(items)) => {
            assert!(!items.is_empty());
            let ok: Vec<Message> = items.into_iter().flatten().collect();
            if !ok.is_empty() {
                let mut buf = Vec::new();
                jsonrpc::encode_batch(&mut buf, &ok, MissingId::Null);
                let again = jsonrpc::decode(&Bytes::from(buf));
                let want = Incoming::Batch(ok.into_iter().map(Ok).collect());
                assert_eq!(again, Ok(want));
            }
        }
        Err(e) => {
            if e.kind == DecodeErrorKind::Parse && e.id.is_some() {
                // Only the id a request's first bytes show.
                let head = jsonrpc::FrameHead::scan(data);
                assert_eq!(head.kind, jsonrpc::HeadKind::Request, "{data:?}");
                assert_eq!(e.id, head.id, "a parse error carries the head's id");
            }
            let _ = e.to_error_object();
        }
    }
}

/// Our decoder against a plain `serde_json::Value` decode of the same bytes: they agree on
/// syntax errors, and on what every valid message says.
pub fn jsonrpc_differential(data: &[u8]) {
    let ours = jsonrpc::decode(&Bytes::copy_from_slice(data));
    let value: Value = match serde_json::from_slice(data) {
        Ok(value) => value,
        // `Value` rejects numbers beyond f64 (`1e999`) that the JSON grammar allows; we keep
        // them as raw text, so either answer is right.
        Err(e) if e.to_string().starts_with("number out of range") => return,
        Err(e) => {
            // serde_json rejects the text (syntax, or nesting past its recursion limit): so
            // must we, as a parse error.
            let kind = ours.as_ref().err().map(|e| e.kind);
            assert_eq!(kind, Some(DecodeErrorKind::Parse), "serde_json said {e}");
            return;
        }
    };
    // serde_json accepted the text, so it is UTF-8.
    let text = std::str::from_utf8(data).unwrap_or_default();
    match (&value, ours) {
        (Value::Array(items), Ok(Incoming::Batch(decoded))) => {
            let raw: Vec<&serde_json::value::RawValue> =
                serde_json::from_str(text).expect("serde_json accepted this array");
            assert_eq!(items.len(), decoded.len());
            for ((item, raw), got) in items.iter().zip(raw).zip(decoded) {
                compare(raw.get(), item, got.map_err(|e| e.kind));
            }
        }
        (Value::Array(items), Err(e)) => {
            assert!(items.is_empty() && e.kind == DecodeErrorKind::InvalidRequest);
        }
        (Value::Array(_), Ok(Incoming::Single(_))) => panic!("an array decoded as one message"),
        (_, Ok(Incoming::Batch(_))) => panic!("a non-array decoded as a batch"),
        (_, Ok(Incoming::Single(m))) => compare(text, &value, Ok(m)),
        (_, Err(e)) => {
            assert_ne!(
                e.kind,
                DecodeErrorKind::Parse,
                "serde_json accepted it: {e}"
            );
            compare(text, &value, Err(e.kind));
        }
    }
}

/// What a JSON value must decode to, judged from the `Value` alone.
#[derive(Debug, PartialEq)]
enum Expected {
    Request(RequestId, String, Option<Value>),
    Notification(String, Option<Value>),
    Result(RequestId, Value),
    Error(Option<RequestId>, i64, String, Option<Value>),
    /// Invalid (-32600) or a malformed response: not a message.
    Invalid,
}

fn compare(text: &str, value: &Value, ours: Result<Message, DecodeErrorKind>) {
    if has_negative_zero_id(value) {
        // `Value` reads both `-0` (an integer literal, the id 0 for us) and `-0.0` (not an
        // id) as the float -0.0, so it cannot tell which one the text held.
        return;
    }
    let expected = expect(value);
    match ours {
        Ok(message) => assert_eq!(observed(&message), expected, "value {value}"),
        // A duplicate member is valid for `Value` (last wins) but rejected by us.
        Err(kind) => assert!(
            expected == Expected::Invalid || has_duplicate_member(text),
            "we rejected ({kind:?}) a message serde_json reads as {expected:?}: {value}"
        ),
    }
}

fn observed(message: &Message) -> Expected {
    let parse = |raw: &jsonrpc::RawJson| -> Value {
        serde_json::from_slice(raw.as_bytes()).expect("payloads are valid JSON")
    };
    match message {
        Message::Request(r) => Expected::Request(
            r.id.clone(),
            r.method.to_string(),
            r.params.as_ref().map(parse),
        ),
        Message::Notification(n) => {
            Expected::Notification(n.method.to_string(), n.params.as_ref().map(parse))
        }
        Message::Response(r) => match &r.outcome {
            Ok(result) => Expected::Result(r.id.clone().expect("results have ids"), parse(result)),
            Err(e) => Expected::Error(
                r.id.clone(),
                e.code,
                e.message.clone(),
                e.data.as_ref().map(parse),
            ),
        },
    }
}

fn expect(value: &Value) -> Expected {
    let Some(obj) = value.as_object() else {
        return Expected::Invalid;
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Expected::Invalid;
    }
    let params = match obj.get("params") {
        None | Some(Value::Null) => Ok(None),
        Some(p @ (Value::Object(_) | Value::Array(_))) => Ok(Some(p.clone())),
        Some(_) => Err(()),
    };
    let id = obj.get("id").map(value_id);
    let (result, error) = (obj.get("result"), obj.get("error"));
    match obj.get("method") {
        Some(Value::String(method)) if result.is_none() && error.is_none() => match (id, params) {
            (None, Ok(p)) => Expected::Notification(method.clone(), p),
            (Some(Some(Some(id))), Ok(p)) => Expected::Request(id, method.clone(), p),
            _ => Expected::Invalid,
        },
        Some(_) => Expected::Invalid,
        None => match (id, result, error) {
            (Some(Some(Some(id))), Some(result), None) => Expected::Result(id, result.clone()),
            (id, None, Some(error)) => {
                let id = match id {
                    None => None,
                    Some(Some(id)) => id,
                    Some(None) => return Expected::Invalid,
                };
                expect_error(id, error)
            }
            _ => Expected::Invalid,
        },
    }
}

fn has_negative_zero_id(value: &Value) -> bool {
    value
        .get("id")
        .and_then(Value::as_f64)
        .is_some_and(|f| f == 0.0 && f.is_sign_negative())
}

/// `None`: not a valid id; `Some(None)`: `null`; `Some(Some(id))`: a valid id.
fn value_id(value: &Value) -> Option<Option<RequestId>> {
    match value {
        Value::Null => Some(None),
        Value::String(s) => Some(Some(RequestId::string(s.as_str()))),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some(Some(RequestId::number(i)))
            } else {
                n.as_u64().map(|u| Some(RequestId::unsigned(u)))
            }
        }
        _ => None,
    }
}

fn expect_error(id: Option<RequestId>, error: &Value) -> Expected {
    let Some(obj) = error.as_object() else {
        return Expected::Invalid;
    };
    let code = obj.get("code").and_then(Value::as_i64);
    let message = obj.get("message").and_then(Value::as_str);
    match (code, message) {
        (Some(code), Some(message)) => {
            Expected::Error(id, code, message.to_owned(), obj.get("data").cloned())
        }
        _ => Expected::Invalid,
    }
}

/// Whether the envelope object in `text`, or its `error` object, repeats a member we read.
/// `Value` silently keeps the last of duplicates; our decoder rejects them.
fn has_duplicate_member(text: &str) -> bool {
    const ENVELOPE: &[&str] = &["jsonrpc", "id", "method", "params", "result", "error"];
    const ERROR: &[&str] = &["code", "message", "data"];
    let Ok(Members(members)) = serde_json::from_str::<Members<'_>>(text) else {
        return false;
    };
    let repeats = |members: &[(String, &serde_json::value::RawValue)], names: &[&str]| {
        names
            .iter()
            .any(|n| members.iter().filter(|(k, _)| k == n).count() > 1)
    };
    let error_repeats = members
        .iter()
        .filter(|(k, _)| k == "error")
        .any(|(_, raw)| {
            serde_json::from_str::<Members<'_>>(raw.get()).is_ok_and(|m| repeats(&m.0, ERROR))
        });
    repeats(&members, ENVELOPE) || error_repeats
}

/// An object's members in order, duplicates kept.
struct Members<'a>(Vec<(String, &'a serde_json::value::RawValue)>);

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    members.push(entry);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(Visit)
    }
}

#[cfg(test)]
#[path = "fuzzing_tests.rs"]
mod tests;
