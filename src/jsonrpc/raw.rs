//! `RawJson`: a JSON value kept as text, unparsed, until someone asks for a typed view.
//!
//! Routing a message needs its `method` and `id`, never its payload. Params, results and error
//! data therefore stay as a slice of the input [`Bytes`] (zero copy) and are parsed only when the
//! application asks for a typed value with [`RawJson::parse`].

use std::fmt;

use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The text of one valid JSON value, shared and immutable.
///
/// Invariant: the bytes are one syntactically valid JSON value in UTF-8. Every constructor
/// either checks this or takes it from the decoder, which already did.
///
/// Equality and hashing look at the text only.
#[derive(Clone)]
pub struct RawJson {
    text: Bytes,
    /// The text is known to hold no raw CR or LF (compact serde output, or checked), so a
    /// line-based transport need not look for them when it writes the value.
    one_line: bool,
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for RawJson {}

impl std::hash::Hash for RawJson {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

/// serde_json's compact output, noting whether a raw value written into it (a [`RawJson`]
/// member, whose text is kept verbatim) holds a raw CR or LF: the only way compact output
/// can hold one, since strings escape theirs.
struct NoteLineBreaks<'a>(&'a mut bool);

impl serde_json::ser::Formatter for NoteLineBreaks<'_> {
    fn write_raw_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        *self.0 |= memchr::memchr2(b'\n', b'\r', fragment.as_bytes()).is_some();
        writer.write_all(fragment.as_bytes())
    }
}

impl RawJson {
    /// `{}`: the empty object, the result of `ping`, `logging/setLevel` and friends.
    pub fn empty_object() -> Self {
        RawJson::one_line(Bytes::from_static(b"{}"))
    }

    /// `null`.
    pub fn null() -> Self {
        RawJson::one_line(Bytes::from_static(b"null"))
    }

    /// Serialises `value` to compact JSON.
    pub fn from_serialize<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        let mut text = Vec::with_capacity(128);
        let mut line_break = false;
        let formatter = NoteLineBreaks(&mut line_break);
        value.serialize(&mut serde_json::Serializer::with_formatter(
            &mut text, formatter,
        ))?;
        Ok(RawJson {
            text: Bytes::from(text),
            one_line: !line_break,
        })
    }

    fn one_line(text: Bytes) -> Self {
        RawJson {
            text,
            one_line: true,
        }
    }

    /// Whether the text is known to hold no raw CR or LF (`false` means unknown).
    pub(crate) fn is_one_line(&self) -> bool {
        self.one_line
    }

    /// Checks that `text` is one JSON value and keeps it as is (no reformatting).
    pub fn from_text(text: impl Into<Bytes>) -> Result<Self, serde_json::Error> {
        let bytes = text.into();
        serde_json::from_slice::<serde::de::IgnoredAny>(&bytes)?;
        let one_line = memchr::memchr2(b'\n', b'\r', &bytes).is_none();
        Ok(RawJson {
            text: bytes,
            one_line,
        })
    }

    /// Wraps bytes known to be one JSON value holding no raw CR or LF (written by hand with
    /// every string escaped), so encoding them looks for no line break.
    pub(crate) fn from_validated_one_line(bytes: Bytes) -> Self {
        RawJson::one_line(bytes)
    }

    /// Wraps bytes the decoder already validated as one JSON value.
    pub(crate) fn from_validated(bytes: Bytes) -> Self {
        RawJson {
            text: bytes,
            one_line: false,
        }
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        // The invariant (valid JSON, which is UTF-8) makes this infallible in practice; an
        // invalid sequence would only come from a broken invariant and yields "null".
        std::str::from_utf8(&self.text).unwrap_or("null")
    }

    /// The JSON text as bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.text
    }

    /// The shared buffer holding the JSON text.
    pub fn bytes(&self) -> &Bytes {
        &self.text
    }

    /// Length of the JSON text in bytes.
    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// Whether the text is empty (never true for a valid value; present for API symmetry).
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Whether the value is a JSON object (its first non-blank byte is `{`).
    pub fn is_object(&self) -> bool {
        self.first_byte() == Some(b'{')
    }

    /// Whether the value is a JSON array.
    pub fn is_array(&self) -> bool {
        self.first_byte() == Some(b'[')
    }

    /// Whether the value is `null`.
    pub fn is_null(&self) -> bool {
        self.first_byte() == Some(b'n')
    }

    fn first_byte(&self) -> Option<u8> {
        self.text.iter().copied().find(|b| !b.is_ascii_whitespace())
    }

    /// Parses a typed view of the value.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        self.parse_borrowed()
    }

    /// Parses a typed view that may borrow from this value's text.
    pub fn parse_borrowed<'a, T: Deserialize<'a>>(&'a self) -> Result<T, serde_json::Error> {
        // One UTF-8 check of the whole text, then serde_json's `str` reader, which skips the
        // per-string checks its byte reader makes (a call per key and per string value).
        match std::str::from_utf8(&self.text) {
            Ok(text) => serde_json::from_str(text),
            Err(_) => serde_json::from_slice(&self.text),
        }
    }

    /// Parses into a generic JSON tree.
    pub fn to_value(&self) -> Result<serde_json::Value, serde_json::Error> {
        self.parse()
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RawJson({})", self.get())
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl Serialize for RawJson {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw: &RawValue = serde_json::from_str(self.get()).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // serde_json hands over the raw text; a buffering deserializer (serde's `flatten`,
        // tagged or untagged enums) cannot, so that path rebuilds the text in member order.
        super::raw_de::deserialize(deserializer)
            .map(|text| RawJson::from_validated(Bytes::from(text)))
    }
}

impl TryFrom<&serde_json::Value> for RawJson {
    type Error = serde_json::Error;
    fn try_from(value: &serde_json::Value) -> Result<Self, Self::Error> {
        RawJson::from_serialize(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_is_known_only_when_no_raw_line_break_can_be_there() {
        let compact = RawJson::from_serialize(&serde_json::json!({"a": "line\nbreak"})).unwrap();
        assert!(
            compact.is_one_line(),
            "compact output escapes the string's line break"
        );
        assert!(RawJson::empty_object().is_one_line());
        assert!(RawJson::from_text("[1, 2]").unwrap().is_one_line());
        assert!(!RawJson::from_text("[1,\r2]").unwrap().is_one_line());
        // A raw member is written verbatim: its line breaks make the whole text unknown.
        let raw = RawJson::from_text("[1,\n2]").unwrap();
        let outer = RawJson::from_serialize(&(raw, 3)).unwrap();
        assert_eq!(outer.get(), "[[1,\n2],3]");
        assert!(!outer.is_one_line());
        let plain_raw = RawJson::from_serialize(&(RawJson::null(), 3)).unwrap();
        assert!(plain_raw.is_one_line());
        // Equality and hashing ignore what is known about the text.
        assert_eq!(
            RawJson::from_text("{}").unwrap(),
            RawJson::from_validated("{}".into())
        );
    }

    #[test]
    fn from_text_rejects_invalid_json_and_keeps_valid_text_verbatim() {
        assert!(RawJson::from_text("{").is_err());
        assert!(RawJson::from_text("1 2").is_err());
        let raw = RawJson::from_text(r#"{"b": 1, "a": 2}"#).unwrap();
        assert_eq!(raw.get(), r#"{"b": 1, "a": 2}"#);
        assert!(raw.is_object());
    }

    #[test]
    fn serializes_verbatim_inside_other_values() {
        let raw = RawJson::from_text(r#"{"z":1,"a":[true]}"#).unwrap();
        let text = serde_json::to_string(&vec![raw]).unwrap();
        assert_eq!(text, r#"[{"z":1,"a":[true]}]"#);
        let back: Vec<RawJson> = serde_json::from_str(&text).unwrap();
        assert_eq!(back[0].get(), r#"{"z":1,"a":[true]}"#);
    }
}
