//! The params of `tools/call`, read straight from the request's JSON text: only `name` and
//! `arguments` become values; every other member (`_meta`, `task`, …) is skipped unbuilt.
//! Same rules as reading them from the params object: a member given twice counts once, the
//! last one; `null` params are no params; anything else but an object is refused.

use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use crate::jsonrpc::{ErrorObject, RawJson};

/// `tools/call` params: the two members the server reads, as sent (types checked later).
#[derive(Debug, Default, PartialEq)]
pub(super) struct CallParams {
    /// The `name` member.
    pub(super) name: Option<Value>,
    /// The `arguments` member.
    pub(super) arguments: Option<Value>,
}

impl CallParams {
    /// Reads the params of a request (`None`: no params).
    pub(super) fn read(params: Option<&RawJson>) -> Result<Self, ErrorObject> {
        match params {
            None => Ok(CallParams::default()),
            Some(raw) => raw
                .parse_borrowed()
                .map_err(|_| ErrorObject::invalid_params("params must be an object")),
        }
    }
}

impl<'de> Deserialize<'de> for CallParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ParamsVisitor)
    }
}

struct ParamsVisitor;

impl<'de> Visitor<'de> for ParamsVisitor {
    type Value = CallParams;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a params object")
    }

    fn visit_unit<E>(self) -> Result<CallParams, E> {
        Ok(CallParams::default())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CallParams, A::Error> {
        let mut out = CallParams::default();
        while let Some(key) = map.next_key::<Member>()? {
            match key {
                Member::Name => out.name = Some(map.next_value()?),
                Member::Arguments => out.arguments = Some(map.next_value()?),
                Member::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }
}

/// A member name, matched without keeping it.
enum Member {
    Name,
    Arguments,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(MemberVisitor)
    }
}

struct MemberVisitor;

impl Visitor<'_> for MemberVisitor {
    type Value = Member;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, name: &str) -> Result<Member, E> {
        Ok(match name {
            "name" => Member::Name,
            "arguments" => Member::Arguments,
            _ => Member::Other,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Result<CallParams, ErrorObject> {
        CallParams::read(Some(&RawJson::from_text(text.to_owned()).expect("json")))
    }

    #[test]
    fn reads_name_and_arguments_and_skips_the_rest() {
        let p = read(
            r#"{"_meta":{"progressToken":1},"name":"e\u0063ho","arguments":{"a":[1]},"task":{}}"#,
        )
        .expect("object");
        assert_eq!(p.name, Some(json!("echo")));
        assert_eq!(p.arguments, Some(json!({"a": [1]})));
        let escaped_key = read(r#"{"n\u0061me":"x"}"#).expect("object");
        assert_eq!(escaped_key.name, Some(json!("x")));
    }

    #[test]
    fn the_last_duplicate_wins_and_types_are_kept_as_sent() {
        let p = read(r#"{"name":"a","name":7,"arguments":null}"#).expect("object");
        assert_eq!(p.name, Some(json!(7)));
        assert_eq!(p.arguments, Some(Value::Null));
    }

    #[test]
    fn null_or_absent_params_are_empty_and_non_objects_are_refused() {
        assert_eq!(read("null").expect("null"), CallParams::default());
        assert_eq!(CallParams::read(None).expect("none"), CallParams::default());
        for bad in ["[\"echo\"]", "\"echo\"", "3", "true"] {
            let e = read(bad).expect_err(bad);
            assert_eq!(e.message, "params must be an object");
        }
    }
}
