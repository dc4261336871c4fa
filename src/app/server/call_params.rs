//! The params of `tools/call`, read straight from the request's JSON text: only `name` is
//! built; `arguments` stays JSON text (a slice of the request's, not copied), and every other
//! member (`_meta`, `task`, …) is skipped unbuilt. Same rules as reading them from the params
//! object: a member given twice counts once, the last one; `null` params are no params;
//! anything else but an object is refused.

use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::app::json_scan::{Scan, STRING};
use crate::app::server::schema::FlatObject;
use crate::jsonrpc::{ErrorObject, RawJson};

/// `tools/call` params: the two members the server reads, as sent (types checked later).
#[derive(Debug, Default, PartialEq)]
pub(super) struct CallParams {
    /// The `name` member.
    pub(super) name: Option<Value>,
    /// The `arguments` member's JSON text.
    pub(super) arguments: Option<RawJson>,
    /// The arguments were found valid for the named tool's input schema while they were read
    /// (a flat schema, checked in the same walk), so they need no check of their own.
    pub(super) admitted: bool,
    /// Whether the arguments' text may hold what serde cannot read (a `\u` escape, which
    /// may be a lone surrogate; nesting or a number near serde's limits): `Some` when the walk
    /// that read them saw all of them, `None` when unknown (read by serde).
    pub(super) suspect: Option<bool>,
}

/// The flat input schema of the tool of a name, if the tool exists and has one.
pub(super) type FlatOf<'s> = &'s dyn Fn(&[u8]) -> Option<&'s FlatObject>;

impl CallParams {
    /// Reads the params of a request (`None`: no params).
    /// `flat_of` gives the flat input schema of a tool by name: when `name` comes before
    /// `arguments` (as clients write them) the arguments are checked against it in the
    /// same walk.
    pub(super) fn read(params: Option<&RawJson>, flat_of: FlatOf<'_>) -> Result<Self, ErrorObject> {
        let Some(raw) = params else {
            return Ok(CallParams::default());
        };
        if let Some(quick) = Self::scan(raw, flat_of) {
            return Ok(quick);
        }
        let read: Borrowed<'_> = raw.parse_borrowed().map_err(|e| {
            if raw.is_object() {
                super::dispatch::unreadable("params", &e)
            } else {
                ErrorObject::invalid_params("params must be an object")
            }
        })?;
        Ok(CallParams {
            name: read.name,
            arguments: read.arguments.map(|a| text_within(raw, a.get().as_bytes())),
            admitted: false,
            suspect: None,
        })
    }

    /// The params read by the scanner, for the common shape: an object whose keys have no
    /// escapes and whose `name` is a string without escapes. `None` for anything else, which
    /// serde then reads (with the same rules, and its own errors).
    fn scan(params: &RawJson, flat_of: FlatOf<'_>) -> Option<CallParams> {
        let mut scan = Scan::new(params.as_bytes());
        if !scan.eat(b'{') {
            return None;
        }
        let mut out = CallParams::default();
        if scan.eat(b'}') {
            return Some(out);
        }
        // The flat schema of the tool named so far (`None`: no name yet, or no flat schema).
        let mut flat = None;
        loop {
            let key = scan.key()?;
            if key == b"arguments" {
                let (text, admitted) = arguments(&mut scan, flat)?;
                out.arguments = Some(text_within(params, text));
                out.admitted = admitted;
                out.suspect = Some(scan.take_unicode_escape() | scan.take_near_limits());
            } else {
                let (kind, value) = scan.value()?;
                if key == b"name" {
                    out.name = Some(plain_string(kind, value)?);
                    flat = value
                        .get(1..value.len().saturating_sub(1))
                        .and_then(flat_of);
                    // Arguments checked before were checked for another name.
                    out.admitted = false;
                }
            }
            if !scan.eat(b',') {
                return scan.eat(b'}').then_some(out);
            }
        }
    }
}

/// The `arguments` value at `scan`: its text, and whether `flat` (the named tool's flat
/// schema) admits it, checked in the same walk; a value it is not sure of is walked again
/// plainly (and checked later by the full path).
/// Every part of the value is skipped by `scan` (its `\u` escapes, and what comes near serde's
/// limits, recorded there, from a cleared record).
fn arguments<'t>(scan: &mut Scan<'t>, flat: Option<&FlatObject>) -> Option<(&'t [u8], bool)> {
    scan.take_unicode_escape();
    scan.take_near_limits();
    let start = scan.clone();
    if let Some(flat) = flat {
        let mut checked = scan.clone();
        if flat.admits_next(&mut checked) {
            let text = start.text_to(&checked)?;
            *scan = checked;
            return Some((text, true));
        }
    }
    let (_, text) = scan.value()?;
    Some((text, false))
}

/// A string value written without escapes, as a `Value`.
fn plain_string(kind: u8, text: &[u8]) -> Option<Value> {
    let inner = text.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    if kind != STRING || inner.contains(&b'\\') {
        return None;
    }
    Some(Value::String(std::str::from_utf8(inner).ok()?.to_owned()))
}

/// The JSON text `member`, a value inside `params`: a slice of the params' bytes (a
/// reference count, no copy), or a copy should it not lie within them.
fn text_within(params: &RawJson, member: &[u8]) -> RawJson {
    let outer = params.as_bytes().as_ptr_range();
    let inner = member.as_ptr_range();
    if outer.start <= inner.start && inner.end <= outer.end {
        RawJson::from_validated(params.bytes().slice_ref(member))
    } else {
        RawJson::from_validated(bytes::Bytes::copy_from_slice(member))
    }
}

/// The params as read, `arguments` borrowed from the params' text.
#[derive(Default)]
struct Borrowed<'a> {
    name: Option<Value>,
    arguments: Option<&'a RawValue>,
}

impl<'de> Deserialize<'de> for Borrowed<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ParamsVisitor)
    }
}

struct ParamsVisitor;

impl<'de> Visitor<'de> for ParamsVisitor {
    type Value = Borrowed<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a params object")
    }

    fn visit_unit<E>(self) -> Result<Borrowed<'de>, E> {
        Ok(Borrowed::default())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Borrowed<'de>, A::Error> {
        let mut out = Borrowed::default();
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
        CallParams::read(
            Some(&RawJson::from_text(text.to_owned()).expect("json")),
            &|_| None,
        )
    }

    #[test]
    fn reads_name_and_arguments_and_skips_the_rest() {
        let p = read(
            r#"{"_meta":{"progressToken":1},"name":"e\u0063ho","arguments":{"a":[1]},"task":{}}"#,
        )
        .expect("object");
        assert_eq!(p.name, Some(json!("echo")));
        assert_eq!(p.arguments.as_ref().map(RawJson::get), Some(r#"{"a":[1]}"#));
        let escaped_key = read(r#"{"n\u0061me":"x"}"#).expect("object");
        assert_eq!(escaped_key.name, Some(json!("x")));
    }

    /// The arguments' text is a slice of the request's buffer, not a copy.
    #[test]
    fn arguments_are_borrowed_from_the_params_text() {
        let params = RawJson::from_text(r#"{"name":"x","arguments": {"t":"\"q\""} }"#.to_owned())
            .expect("json");
        let p = CallParams::read(Some(&params), &|_| None).expect("object");
        let args = p.arguments.expect("arguments");
        assert_eq!(args.get(), r#"{"t":"\"q\""}"#);
        let within = params.as_bytes().as_ptr_range();
        assert!(within.contains(&args.as_bytes().as_ptr()));
    }

    /// The scanner and serde read the same params alike, and the scanner leaves the shapes
    /// it does not read (escapes, a non-string name, null) to serde.
    #[test]
    fn the_quick_read_agrees_with_serde() {
        for text in [
            r#"{"name":"echo","arguments":{"text":"a \"b\""}}"#,
            r#" { "arguments" : [1] , "_meta" : {"k":"}"} , "name" : "x" } "#,
            r#"{"name":"a","name":"b","arguments":null,"arguments":{}}"#,
            r#"{}"#,
            r#"{"task":{"ttl":1}}"#,
            r#"{"name":"x","arguments":{"t":"\u00e9","u":["\\u"]}}"#,
            r#"{"name":"x","arguments":{"t":"\\"},"_meta":{"a":"\u0041"}}"#,
        ] {
            let raw = RawJson::from_text(text.to_owned()).expect("json");
            let quick = CallParams::scan(&raw, &|_| None).expect("read by the scanner");
            let full: Borrowed<'_> = raw.parse_borrowed().expect("object");
            assert_eq!(quick.name, full.name, "{text}");
            let full_args = full.arguments.map(|a| a.get().to_owned());
            let escape = |a: &str| a.as_bytes().windows(2).any(|w| w == b"\\u");
            assert_eq!(quick.suspect, full_args.as_deref().map(escape), "{text}");
            assert_eq!(
                quick.arguments.map(|a| a.get().to_owned()),
                full_args,
                "{text}"
            );
        }
        for text in [
            r#"{"name":"e\u0063ho"}"#,
            r#"{"name":7}"#,
            "null",
            r#"{"\u006eame":"x"}"#,
        ] {
            let raw = RawJson::from_text(text.to_owned()).expect("json");
            assert!(CallParams::scan(&raw, &|_| None).is_none(), "{text}");
        }
    }

    /// With the named tool's flat schema known, the arguments are checked in the params'
    /// walk: admitted only when that schema surely admits the last `arguments` and the last
    /// `name` came before it; the text read is the same either way.
    #[test]
    fn arguments_are_checked_in_the_same_walk_for_the_named_tool() {
        let schema = crate::app::server::schema::Schema::new(json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"]
        }));
        let flat_of = |name: &[u8]| (name == b"echo").then(|| schema.flat()).flatten();
        let cases = [
            (r#"{"name":"echo","arguments":{"text":"a \"}\" b"}}"#, true),
            (
                r#"{ "name" : "echo" , "arguments" : { "text" : "x" } , "_meta":{} }"#,
                true,
            ),
            (r#"{"name":"echo","arguments":{"text":1}}"#, false),
            (r#"{"name":"echo","arguments":{}}"#, false),
            (r#"{"name":"echo","arguments":[1]}"#, false),
            (r#"{"name":"other","arguments":{"text":"x"}}"#, false),
            (r#"{"arguments":{"text":"x"},"name":"echo"}"#, false),
            (
                r#"{"name":"echo","arguments":{"text":"x"},"name":"echo"}"#,
                false,
            ),
            (
                r#"{"name":"echo","arguments":{"text":"x"},"arguments":{"text":2}}"#,
                false,
            ),
            (
                r#"{"name":"echo","arguments":{"text":2},"arguments":{"text":"y"}}"#,
                true,
            ),
        ];
        for (text, admitted) in cases {
            let raw = RawJson::from_text(text.to_owned()).expect("json");
            let checked = CallParams::read(Some(&raw), &flat_of).expect("object");
            let plain = CallParams::read(Some(&raw), &|_| None).expect("object");
            assert_eq!(checked.admitted, admitted, "{text}");
            assert!(!plain.admitted, "{text}");
            assert_eq!(checked.name, plain.name, "{text}");
            assert_eq!(checked.arguments, plain.arguments, "{text}");
        }
    }

    /// Arguments nested deep, or with a number that may overflow, are suspect whether or not
    /// the walk checked them against a flat schema (one with no properties admits any
    /// object), so they are parsed before use.
    #[test]
    fn arguments_near_serde_limits_are_suspect_on_every_walk() {
        let open = crate::app::server::schema::Schema::new(json!({"type": "object"}));
        let flat_of = |name: &[u8]| (name == b"open").then(|| open.flat()).flatten();
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        for (name, value) in [("open", deep.as_str()), ("other", &deep), ("open", "1e400")] {
            let text = format!(r#"{{"name":"{name}","arguments":{{"a":{value}}}}}"#);
            let raw = RawJson::from_text(text).expect("json");
            let read = CallParams::read(Some(&raw), &flat_of).expect("object");
            assert_eq!(read.admitted, name == "open", "{name}");
            assert_eq!(read.suspect, Some(true), "{name}");
            let shallow = format!(r#"{{"name":"{name}","arguments":{{"a":[[1]]}}}}"#);
            let raw = RawJson::from_text(shallow).expect("json");
            let read = CallParams::read(Some(&raw), &flat_of).expect("object");
            assert_eq!(read.suspect, Some(false), "{name}");
        }
    }

    #[test]
    fn the_last_duplicate_wins_and_types_are_kept_as_sent() {
        let p = read(r#"{"name":"a","name":7,"arguments":null}"#).expect("object");
        assert_eq!(p.name, Some(json!(7)));
        assert_eq!(p.arguments.as_ref().map(RawJson::get), Some("null"));
    }

    #[test]
    fn null_or_absent_params_are_empty_and_non_objects_are_refused() {
        assert_eq!(read("null").expect("null"), CallParams::default());
        assert_eq!(
            CallParams::read(None, &|_| None).expect("none"),
            CallParams::default()
        );
        for bad in ["[\"echo\"]", "\"echo\"", "3", "true"] {
            let e = read(bad).expect_err(bad);
            assert_eq!(e.message, "params must be an object");
        }
    }
}
