//! Deserialising [`super::RawJson`] from any serde deserializer, not only serde_json's.
//!
//! `Box<RawValue>` only works when serde_json itself drives the deserializer. Types with
//! `#[serde(flatten)]` members, and tagged or untagged enums, first buffer their input in serde's
//! private `Content` tree, and a raw value nested inside them would then fail to decode. This
//! visitor takes the raw text when serde_json offers it, and otherwise rebuilds the text from
//! the buffered value, keeping members in their original order (only insignificant whitespace
//! and number spelling can differ on that path).

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Number;

/// The name serde_json uses to recognise a request for raw text.
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// Deserialises one JSON value as its compact text.
pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
    deserializer.deserialize_newtype_struct(RAW_TOKEN, RawTextVisitor)
}

struct RawTextVisitor;

impl<'de> Visitor<'de> for RawTextVisitor {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    /// serde_json's raw path: a one-member map whose value is the raw text.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<u8>, A::Error> {
        match map.next_key::<String>()? {
            Some(key) if key == RAW_TOKEN => {
                let text: String = map.next_value()?;
                Ok(text.into_bytes())
            }
            // Not serde_json's raw protocol: an ordinary object reached us directly.
            first => {
                let mut members = Vec::new();
                if let Some(key) = first {
                    members.push((key, map.next_value::<Ordered>()?));
                    while let Some((k, v)) = map.next_entry::<String, Ordered>()? {
                        members.push((k, v));
                    }
                }
                to_text(&Ordered::Object(members))
            }
        }
    }

    /// A buffering deserializer: rebuild the value in order and print it.
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Vec<u8>, D::Error> {
        to_text(&Ordered::deserialize(d)?)
    }
}

fn to_text<E: de::Error>(value: &Ordered) -> Result<Vec<u8>, E> {
    serde_json::to_vec(value).map_err(E::custom)
}

/// A JSON value whose objects keep their members in input order.
enum Ordered {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Ordered>),
    Object(Vec<(String, Ordered)>),
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OrderedVisitor)
    }
}

struct OrderedVisitor;

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Null)
    }
    fn visit_none<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Ordered, D::Error> {
        Ordered::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Ordered, E> {
        Ok(Ordered::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Ordered, E> {
        Ok(Ordered::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Ordered, E> {
        Ok(Ordered::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Ordered, E> {
        Number::from_f64(v)
            .map(Ordered::Number)
            .ok_or_else(|| E::custom("a non-finite number is not JSON"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
        Ok(Ordered::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Ordered, E> {
        Ok(Ordered::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Ordered::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut members = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Ordered>()? {
            members.push((k, v));
        }
        Ok(Ordered::Object(members))
    }
}

impl Serialize for Ordered {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Ordered::Null => s.serialize_unit(),
            Ordered::Bool(b) => s.serialize_bool(*b),
            Ordered::Number(n) => n.serialize(s),
            Ordered::String(v) => s.serialize_str(v),
            Ordered::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Ordered::Object(members) => {
                let mut map = s.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::RawJson;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct WithFlatten {
        schema: RawJson,
        #[serde(flatten)]
        _rest: serde_json::Map<String, serde_json::Value>,
    }

    #[test]
    fn raw_json_inside_a_flattened_struct_keeps_member_order() {
        let text = r#"{"schema":{"z":1,"a":[true,null,1.5,-2],"m":{"y":"s","b":{}}},"x":1}"#;
        let v: WithFlatten = serde_json::from_str(text).unwrap();
        assert_eq!(
            v.schema.get(),
            r#"{"z":1,"a":[true,null,1.5,-2],"m":{"y":"s","b":{}}}"#
        );
    }

    #[test]
    fn raw_json_from_a_value_tree_decodes() {
        let value = serde_json::json!({"b": 1, "a": 2});
        let raw: RawJson = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(raw.to_value().unwrap(), value);
    }

    #[test]
    fn direct_decoding_is_verbatim() {
        let raw: RawJson = serde_json::from_str(r#"{"b" : 1.50, "a":2}"#).unwrap();
        assert_eq!(raw.get(), r#"{"b" : 1.50, "a":2}"#);
    }
}
