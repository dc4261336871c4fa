//! `JsonView` (in-place lookups on a `RawJson`) against `serde_json::Value`: every member,
//! element and scalar a lookup finds is the one a full parse finds, whatever the spacing and
//! however the keys and strings are escaped.

use std::fmt::Write;

use mcp_sansio::jsonrpc::{JsonView, RawJson};
use proptest::prelude::*;
use serde_json::Value;

use crate::json_tree::json_tree;

/// Values rich in what lookups must step over: nesting, escapes, brackets inside strings.
fn json_value() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        any::<String>(),
        "[\"\\\\/{}\\[\\],:\u{0}-\u{1f}\u{e9}\u{2028}\u{1f600}a-c ]{0,12}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        text.clone().prop_map(Value::String),
    ];
    json_tree(leaf.boxed(), text.prop_map(String::from).boxed(), 4, 40, 6)
}

/// How a value is written: compact, pretty, or with every string character escaped and blanks
/// around every token.
#[derive(Clone, Copy, Debug)]
enum Style {
    Compact,
    Pretty,
    EscapeAll,
}

fn write_text(value: &Value, style: Style) -> String {
    match style {
        Style::Compact => serde_json::to_string(value).unwrap(),
        Style::Pretty => serde_json::to_string_pretty(value).unwrap(),
        Style::EscapeAll => {
            let mut out = String::from(" \t");
            write_escaped(value, &mut out);
            out.push_str("\r\n ");
            out
        }
    }
}

fn write_escaped(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => escape_all(s, out),
        Value::Array(items) => {
            out.push_str("[ ");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(" ,\n");
                }
                write_escaped(item, out);
            }
            out.push_str(" ]");
        }
        Value::Object(map) => {
            out.push_str("{ ");
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(" , ");
                }
                escape_all(key, out);
                out.push_str(" :\t");
                write_escaped(item, out);
            }
            out.push_str(" }");
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Every character as `\uXXXX` (a surrogate pair above the BMP).
fn escape_all(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            write!(out, "\\u{unit:04X}").unwrap();
        }
    }
    out.push('"');
}

/// Checks `view` against `value`, recursively.
fn agrees(view: JsonView<'_>, value: &Value) {
    let parsed: Value = serde_json::from_str(view.text()).unwrap();
    assert_eq!(&parsed, value, "view text {:?}", view.text());
    match value {
        Value::Object(map) => {
            assert!(view.is_object());
            assert_eq!(view.members().count(), map.len());
            for (key, item) in map {
                agrees(view.member(key).expect("member found"), item);
            }
            assert!(
                view.member("\u{0}no such key").is_none() || map.contains_key("\u{0}no such key")
            );
            assert!(view.element(0).is_none());
        }
        Value::Array(items) => {
            assert!(view.is_array());
            assert_eq!(view.elements().count(), items.len());
            for (i, item) in items.iter().enumerate() {
                agrees(view.element(i).expect("element found"), item);
            }
            assert!(view.element(items.len()).is_none());
            assert!(view.member("a").is_none());
        }
        Value::String(s) => assert_eq!(view.as_str().as_deref(), Some(s.as_str())),
        Value::Bool(b) => assert_eq!(view.as_bool(), Some(*b)),
        Value::Null => assert!(view.is_null()),
        Value::Number(n) => {
            assert_eq!(view.as_i64(), n.as_i64());
            assert_eq!(view.as_u64(), n.as_u64());
            assert_eq!(view.as_f64(), n.as_f64());
        }
    }
    if !value.is_string() {
        assert!(view.as_str().is_none());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn lookups_find_what_a_full_parse_finds(
        value in json_value(),
        style in prop_oneof![Just(Style::Compact), Just(Style::Pretty), Just(Style::EscapeAll)],
    ) {
        let raw = RawJson::from_text(write_text(&value, style)).unwrap();
        agrees(raw.view(), &value);
    }

    #[test]
    fn lookups_on_any_valid_text_never_panic(text in any::<String>()) {
        if let Ok(raw) = RawJson::from_text(text) {
            let view = raw.view();
            let _ = view.member("a").map(|v| v.as_str());
            let _ = view.element(1).map(|v| v.as_f64());
            let _ = view.members().count() + view.elements().count();
        }
    }
}

#[test]
fn a_repeated_key_gives_the_first_member_and_parse_still_sees_the_whole_object() {
    let raw = RawJson::from_text(r#"{"a":1,"b":{"a":[2]},"a":3}"#).unwrap();
    let view = raw.view();
    assert_eq!(view.member("a").unwrap().as_i64(), Some(1));
    assert_eq!(view.members().count(), 3);
    // serde_json::Value keeps the last; the view's parse is serde's own answer.
    assert_eq!(view.parse::<Value>().unwrap()["a"], 3);
}

#[test]
fn a_view_inside_a_container_ends_where_its_value_ends() {
    let raw = RawJson::from_text(r#"{"a":{"x":1} , "b":[2,"3"],"c":"d"}"#).unwrap();
    let a = raw.view().member("a").unwrap();
    assert_eq!(a.text(), r#"{"x":1}"#);
    assert_eq!(a.members().count(), 1);
    assert!(a.member("b").is_none());
    let b = raw.view().member("b").unwrap();
    assert_eq!(b.elements().count(), 2);
    assert!(b.element(2).is_none());
    assert_eq!(b.element(1).unwrap().text(), r#""3""#);
    assert_eq!(raw.view().member("c").unwrap().text(), r#""d""#);
}

#[test]
fn escaped_keys_match_their_unescaped_name() {
    let raw = RawJson::from_text(r#"{"na\u006De":"echo","t\"x":"q\"uote"}"#).unwrap();
    let view = raw.view();
    assert_eq!(view.member("name").unwrap().as_str().unwrap(), "echo");
    assert_eq!(view.member("t\"x").unwrap().as_str().unwrap(), "q\"uote");
    let (name, _) = view.members().next().unwrap();
    assert_eq!(name.unescaped().unwrap(), "name");
    // A key ending in a backslash must not match a name cut at an escaped quote.
    let raw = RawJson::from_text(r#"{"a\"b":1,"a\\":2}"#).unwrap();
    assert_eq!(raw.view().member("a\\").unwrap().as_i64(), Some(2));
    assert_eq!(raw.view().member("a\"b").unwrap().as_i64(), Some(1));
}

#[test]
fn a_string_without_escapes_is_borrowed_and_one_with_escapes_is_unescaped() {
    let raw = RawJson::from_text(r#"{"plain":"abc","escaped":"a\nb\u00e9\ud83d\ude00"}"#).unwrap();
    let view = raw.view();
    assert!(matches!(
        view.member("plain").unwrap().as_str(),
        Some(std::borrow::Cow::Borrowed("abc"))
    ));
    assert_eq!(view.member("escaped").unwrap().as_str().unwrap(), "a\nbé😀");
}

#[test]
fn unpaired_surrogates_are_refused_like_serde_json_refuses_them() {
    for text in [
        r#""\ud83d""#,
        r#""\ude00""#,
        r#""\ud83dx""#,
        r#""\ud83d\u0041""#,
    ] {
        let raw = RawJson::from_text(text).unwrap();
        let serde: Result<String, _> = raw.parse();
        assert_eq!(
            raw.view().as_str().map(|s| s.into_owned()),
            serde.ok(),
            "{text}"
        );
    }
}

#[test]
fn a_tool_call_reads_like_an_application_reads_it() {
    let raw = RawJson::from_text(
        r#"{"name":"echo","arguments":{"text":"say \"hi\"","n":[1,{"x":"]"}]},"_meta":{}}"#,
    )
    .unwrap();
    let params = raw.view();
    assert_eq!(params.member("name").unwrap().as_str().unwrap(), "echo");
    let arguments = params.member("arguments").unwrap();
    assert_eq!(
        arguments.member("text").unwrap().as_str().unwrap(),
        "say \"hi\""
    );
    let n = arguments.member("n").unwrap();
    assert_eq!(
        n.element(1).unwrap().member("x").unwrap().as_str().unwrap(),
        "]"
    );
    assert_eq!(params.member("_meta").unwrap().to_raw().get(), "{}");
    let typed: std::collections::BTreeMap<String, Value> = arguments.parse().unwrap();
    assert_eq!(typed["text"], "say \"hi\"");
}
