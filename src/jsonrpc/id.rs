//! `RequestId`: the exact identity of a JSON-RPC request.
//!
//! MCP ids are strings or integers, never `null` and never fractional. The id is kept exactly as
//! the peer wrote it: the string `"7"` and the number `7` are different ids, and integers keep
//! their full range (negative values, and values past 2^53 up to `u64::MAX`). Numbers are held
//! as `i128` internally so both the `i64` and the `u64` ranges compare and hash without loss.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// The id of a JSON-RPC request: a string or an integer, compared exactly.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(IdRepr);

#[derive(PartialEq, Eq, Hash, PartialOrd, Ord)]
enum IdRepr {
    /// An integer in `i64::MIN..=u64::MAX`.
    Number(i128),
    /// A string, unescaped.
    String(Box<str>),
}

// Ids are cloned on every request (the tables and the queue each keep one): the number is
// copied in place, the string's allocation and copy stay in one out-of-line function rather
// than one inlined copy per call site (instruction cache).
impl Clone for IdRepr {
    #[inline]
    fn clone(&self) -> Self {
        match self {
            IdRepr::Number(n) => IdRepr::Number(*n),
            IdRepr::String(s) => IdRepr::String(clone_str(s)),
        }
    }
}

/// A fresh copy of a string id.
#[inline(never)]
fn clone_str(s: &str) -> Box<str> {
    s.into()
}

impl RequestId {
    /// The smallest integer an id may hold.
    pub const MIN_NUMBER: i128 = i64::MIN as i128;
    /// The largest integer an id may hold.
    pub const MAX_NUMBER: i128 = u64::MAX as i128;

    /// A numeric id from a signed integer.
    pub fn number(n: i64) -> Self {
        RequestId(IdRepr::Number(n as i128))
    }

    /// A numeric id from an unsigned integer (values past `i64::MAX` are kept).
    pub fn unsigned(n: u64) -> Self {
        RequestId(IdRepr::Number(n as i128))
    }

    /// A numeric id from a wide integer, or `None` outside `i64::MIN..=u64::MAX`.
    pub fn from_i128(n: i128) -> Option<Self> {
        (Self::MIN_NUMBER..=Self::MAX_NUMBER)
            .contains(&n)
            .then_some(RequestId(IdRepr::Number(n)))
    }

    /// A string id.
    pub fn string(s: impl Into<Box<str>>) -> Self {
        RequestId(IdRepr::String(s.into()))
    }

    /// The integer value, when this is a numeric id.
    pub fn as_number(&self) -> Option<i128> {
        match &self.0 {
            IdRepr::Number(n) => Some(*n),
            IdRepr::String(_) => None,
        }
    }

    /// The string value, when this is a string id.
    pub fn as_str(&self) -> Option<&str> {
        match &self.0 {
            IdRepr::Number(_) => None,
            IdRepr::String(s) => Some(s),
        }
    }

    /// Whether this id is a string (as opposed to a number).
    pub fn is_string(&self) -> bool {
        matches!(self.0, IdRepr::String(_))
    }

    /// Appends the JSON text of this id (a number, or a quoted and escaped string) to `buf`.
    pub fn write_json(&self, buf: &mut Vec<u8>) {
        match &self.0 {
            IdRepr::Number(n) => write_integer(buf, *n),
            IdRepr::String(s) => super::encode::write_json_string(buf, s),
        }
    }

    /// Parses the JSON text of an id (as found between the `id` key and the next comma).
    ///
    /// Returns `None` for `null`, fractional or out-of-range numbers, and any non-scalar value.
    pub fn from_json_text(text: &str) -> Option<Self> {
        let first = *text.as_bytes().first()?;
        if first == b'"' {
            let s: std::borrow::Cow<'_, str> = serde_json::from_str(text).ok()?;
            return Some(RequestId::string(s.into_owned()));
        }
        if let Some(n) = small_unsigned(text.as_bytes()) {
            return Some(RequestId::unsigned(n));
        }
        if first == b'-' || first.is_ascii_digit() {
            // Only plain integers: a fraction or exponent makes the id invalid in MCP.
            if text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) {
                return None;
            }
            let n: i128 = text.parse().ok()?;
            return RequestId::from_i128(n);
        }
        None
    }

    /// [`RequestId::from_json_text`] on bytes: the usual id, a small integer, is read without
    /// a UTF-8 check (digits are ASCII); anything else is checked, then read as text.
    pub(crate) fn from_json_bytes(text: &[u8]) -> Option<Self> {
        if let Some(n) = small_unsigned(text) {
            return Some(RequestId::unsigned(n));
        }
        RequestId::from_json_text(std::str::from_utf8(text).ok()?)
    }
}

/// The value of `bytes` when it is a plain non-negative integer of at most 19 digits (the ids
/// this engine and most peers send), without going through `i128` parsing.
fn small_unsigned(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() || bytes.len() > 19 || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // JSON forbids leading zeros (the decoder never passes them); other callers get the
    // general path's answer for them, unchanged.
    if bytes.len() > 1 && bytes.first() == Some(&b'0') {
        return None;
    }
    Some(bytes.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')))
}

/// Appends the decimal digits of an id's integer. Ids hold `i64::MIN..=u64::MAX`; the narrow
/// formatters are much faster than `i128`'s `Display`, which ran on every encoded message.
fn write_integer(buf: &mut Vec<u8>, n: i128) {
    let mut digits = itoa::Buffer::new();
    let text = match (u64::try_from(n), i64::try_from(n)) {
        (Ok(u), _) => digits.format(u),
        (_, Ok(i)) => digits.format(i),
        _ => digits.format(n),
    };
    buf.extend_from_slice(text.as_bytes());
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            IdRepr::Number(n) => write!(f, "{n}"),
            IdRepr::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::number(n)
    }
}

impl From<u64> for RequestId {
    fn from(n: u64) -> Self {
        RequestId::unsigned(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::string(s)
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::string(s)
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            IdRepr::Number(n) => {
                if let Ok(v) = i64::try_from(*n) {
                    serializer.serialize_i64(v)
                } else {
                    // The constructors keep numbers within u64 range when they exceed i64.
                    serializer.serialize_u64(*n as u64)
                }
            }
            IdRepr::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer id")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                Ok(RequestId::unsigned(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::string(v))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<RequestId, E> {
                Ok(RequestId::string(v))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_seven_is_not_number_seven() {
        assert_ne!(RequestId::string("7"), RequestId::number(7));
    }

    #[test]
    fn unsigned_and_signed_constructors_agree() {
        assert_eq!(RequestId::unsigned(5), RequestId::number(5));
    }

    #[test]
    fn from_json_text_keeps_the_full_integer_range() {
        assert_eq!(
            RequestId::from_json_text("18446744073709551615"),
            Some(RequestId::unsigned(u64::MAX))
        );
        assert_eq!(
            RequestId::from_json_text("-9223372036854775808"),
            Some(RequestId::number(i64::MIN))
        );
        assert_eq!(RequestId::from_json_text("18446744073709551616"), None);
        assert_eq!(RequestId::from_json_text("1.5"), None);
        assert_eq!(RequestId::from_json_text("1e3"), None);
        assert_eq!(RequestId::from_json_text("null"), None);
        assert_eq!(RequestId::from_json_text("{}"), None);
    }

    #[test]
    fn ids_read_from_bytes_are_those_read_from_text() {
        let texts = [
            "0",
            "7",
            "42",
            "1234567890123456789",
            "18446744073709551615",
            "18446744073709551616",
            "-1",
            "-9223372036854775808",
            "01",
            "1.5",
            "1e3",
            "null",
            "{}",
            "\"7\"",
            "\"a\\\"b\"",
        ];
        for text in texts {
            assert_eq!(
                RequestId::from_json_bytes(text.as_bytes()),
                RequestId::from_json_text(text),
                "{text}"
            );
        }
        assert_eq!(RequestId::from_json_bytes(b"\"\xff\""), None);
    }

    #[test]
    fn string_ids_are_unescaped_and_reescaped() {
        let id = RequestId::from_json_text(r#""a\"b\u00e9""#).unwrap();
        assert_eq!(id.as_str(), Some("a\"bé"));
        let mut buf = Vec::new();
        id.write_json(&mut buf);
        let back: String = serde_json::from_slice(&buf).unwrap();
        assert_eq!(back, "a\"bé");
    }

    #[test]
    fn serde_round_trip_of_large_numbers() {
        let id = RequestId::unsigned(u64::MAX);
        let text = serde_json::to_string(&id).unwrap();
        assert_eq!(text, "18446744073709551615");
        let back: RequestId = serde_json::from_str(&text).unwrap();
        assert_eq!(back, id);
    }
}
