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
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RawJson(Bytes);

impl RawJson {
    /// `{}`: the empty object, the result of `ping`, `logging/setLevel` and friends.
    pub fn empty_object() -> Self {
        RawJson(Bytes::from_static(b"{}"))
    }

    /// `null`.
    pub fn null() -> Self {
        RawJson(Bytes::from_static(b"null"))
    }

    /// Serialises `value` to compact JSON.
    pub fn from_serialize<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::to_vec(value).map(|v| RawJson(Bytes::from(v)))
    }

    /// Checks that `text` is one JSON value and keeps it as is (no reformatting).
    pub fn from_text(text: impl Into<Bytes>) -> Result<Self, serde_json::Error> {
        let bytes = text.into();
        serde_json::from_slice::<serde::de::IgnoredAny>(&bytes)?;
        Ok(RawJson(bytes))
    }

    /// Wraps bytes the decoder already validated as one JSON value.
    pub(crate) fn from_validated(bytes: Bytes) -> Self {
        RawJson(bytes)
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        // The invariant (valid JSON, which is UTF-8) makes this infallible in practice; an
        // invalid sequence would only come from a broken invariant and yields "null".
        std::str::from_utf8(&self.0).unwrap_or("null")
    }

    /// The JSON text as bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The shared buffer holding the JSON text.
    pub fn bytes(&self) -> &Bytes {
        &self.0
    }

    /// Length of the JSON text in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the text is empty (never true for a valid value; present for API symmetry).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
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
        self.0.iter().copied().find(|b| !b.is_ascii_whitespace())
    }

    /// Parses a typed view of the value.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        self.parse_borrowed()
    }

    /// Parses a typed view that may borrow from this value's text.
    pub fn parse_borrowed<'a, T: Deserialize<'a>>(&'a self) -> Result<T, serde_json::Error> {
        // One UTF-8 check of the whole text, then serde_json's `str` reader, which skips the
        // per-string checks its byte reader makes (a call per key and per string value).
        match std::str::from_utf8(&self.0) {
            Ok(text) => serde_json::from_str(text),
            Err(_) => serde_json::from_slice(&self.0),
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
        super::raw_de::deserialize(deserializer).map(|text| RawJson(Bytes::from(text)))
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
