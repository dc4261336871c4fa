//! The writer against serde_json: the same bytes for every value, and every misuse refused.

use proptest::prelude::*;
use serde_json::{json, Value};

use super::JsonWriter;
use crate::jsonrpc::RawJson;

/// Writes `value` through the writer, as an application would write its own result.
fn write_value(w: &mut JsonWriter<'_>, value: &Value) {
    match value {
        Value::Null => {
            w.null();
        }
        Value::Bool(b) => {
            w.bool(*b);
        }
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                w.i64(i);
            } else if let Some(u) = n.as_u64() {
                w.u64(u);
            } else {
                w.f64(n.as_f64().expect("a number is i64, u64 or f64"));
            }
        }
        Value::String(s) => {
            w.string(s);
        }
        Value::Array(items) => {
            w.begin_array();
            items.iter().for_each(|item| write_value(w, item));
            w.end_array();
        }
        Value::Object(members) => {
            w.begin_object();
            for (name, member) in members {
                w.key(name);
                write_value(w, member);
            }
            w.end_object();
        }
    }
}

/// What `write` leaves in a buffer that held `before`, and whether the writer called it
/// complete.
fn written_after(before: &[u8], write: impl FnOnce(&mut JsonWriter<'_>)) -> (Vec<u8>, bool) {
    let mut out = before.to_vec();
    let mut w = JsonWriter::new(&mut out);
    write(&mut w);
    let complete = w.is_complete();
    (out, complete)
}

/// The writer's text of `value`, checked complete.
fn ours(value: &Value) -> String {
    let (out, complete) = written_after(b"", |w| write_value(w, value));
    assert!(complete, "{value}");
    String::from_utf8(out).expect("utf-8")
}

#[test]
fn values_are_written_as_serde_json_writes_them() {
    let values = [
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(-1),
        json!(i64::MIN),
        json!(i64::MAX),
        json!(u64::MAX),
        json!(0.0),
        json!(-0.0),
        json!(1.5),
        json!(0.1),
        json!(1e300),
        json!(-2.5e-300),
        json!(f64::MAX),
        json!(f64::MIN_POSITIVE),
        json!(""),
        json!("plain"),
        json!("quote \" backslash \\ newline \n tab \t nul \u{0} del \u{7f} é € 😀"),
        json!([]),
        json!({}),
        json!([[], {}, [[]], {"a": {}}]),
        json!({"content": [{"type": "text", "text": "the \"echo\""}], "isError": false}),
        json!({"": 1, "k\"ey\n": [1, 2.5, "x", null, true], "nested": {"deep": [{"x": []}]}}),
    ];
    for value in &values {
        let expected = serde_json::to_string(value).expect("serialisable");
        assert_eq!(ours(value), expected);
    }
}

/// Any JSON value (bounded size), numbers of all three kinds.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        "[a-z\"\\\\\n\u{1}é]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((any::<String>(), inner), 0..8)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn generated_values_are_written_as_serde_json_writes_them(value in any_value()) {
        let expected = serde_json::to_string(&value).expect("serialisable");
        prop_assert_eq!(ours(&value), expected);
    }
}

#[test]
fn containers_nest_to_the_limit_and_not_past_it() {
    let depth = JsonWriter::MAX_DEPTH as usize;
    let (out, complete) = written_after(b"", |w| {
        (0..depth).for_each(|_| {
            w.begin_array();
        });
        (0..depth).for_each(|_| {
            w.end_array();
        });
    });
    assert!(complete);
    assert_eq!(out, [vec![b'['; depth], vec![b']'; depth]].concat());
    let (_, complete) = written_after(b"", |w| {
        (0..=depth).for_each(|_| {
            w.begin_object().key("k");
        });
    });
    assert!(!complete);
}

#[test]
fn raw_values_are_embedded_on_one_line() {
    let one_line = RawJson::from_text(r#"{"a":[1,2]}"#).unwrap();
    let broken = RawJson::from_text("{\r\n  \"a\": [1,\n2]\n}").unwrap();
    let (out, complete) = written_after(b"", |w| {
        w.begin_array().raw(&one_line).raw(&broken).end_array();
    });
    assert!(complete);
    assert_eq!(out, br#"[{"a":[1,2]},{    "a": [1, 2] }]"#);
}

/// Each call sequence breaks one rule; the writer reports it incomplete whatever follows.
#[test]
fn every_misuse_leaves_the_writer_incomplete() {
    type Write = fn(&mut JsonWriter<'_>);
    let misuses: [(&str, Write); 17] = [
        ("nothing written", |_| {}),
        ("a key at the top level", |w| {
            w.key("k").null();
        }),
        ("a key in an array", |w| {
            w.begin_array().key("k").null().end_array();
        }),
        ("a value where a key belongs", |w| {
            w.begin_object().string("v").end_object();
        }),
        ("two keys in a row", |w| {
            w.begin_object().key("a").key("b").null().end_object();
        }),
        ("a key without its value", |w| {
            w.begin_object().key("a").end_object();
        }),
        ("an array closed as an object", |w| {
            w.begin_array().end_object();
        }),
        ("an object closed as an array", |w| {
            w.begin_object().end_array();
        }),
        ("a close at the top level", |w| {
            w.null().end_array();
        }),
        ("a close before anything", |w| {
            w.end_object();
        }),
        ("a second top-level value", |w| {
            w.bool(true).bool(false);
        }),
        ("an unfinished object", |w| {
            w.begin_object().key("a").i64(1);
        }),
        ("an unfinished array", |w| {
            w.begin_array().begin_array().end_array();
        }),
        ("NaN", |w| {
            w.begin_array().f64(f64::NAN).end_array();
        }),
        ("infinity", |w| {
            w.f64(f64::INFINITY);
        }),
        ("negative infinity as a member", |w| {
            w.begin_object()
                .key("x")
                .f64(f64::NEG_INFINITY)
                .end_object();
        }),
        ("a misuse followed by a repair", |w| {
            // The stray close fails the writer; the whole value written after it does not
            // make it complete again.
            w.end_array().begin_array().end_array();
        }),
    ];
    for (what, write) in misuses {
        let (_, complete) = written_after(b"prefix", write);
        assert!(!complete, "{what}");
    }
}

#[test]
fn a_failed_writer_writes_nothing_more() {
    let (out, complete) = written_after(b"", |w| {
        w.begin_array().key("k").string("after").end_array();
    });
    assert!(!complete);
    assert_eq!(out, b"[");
}
