//! Property tests of the 2026-07-28 client's header readers: on any JSON they never panic, and
//! every accepted `x-mcp-header` annotation yields a header name and values that fit on an
//! HTTP header line.

use mcp_sansio::app::client::stateless::{header_params, header_value};
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::json_tree::{json_tree, named};

/// Small JSON values, biased towards the members the header readers look at.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        any::<String>().prop_map(Value::from),
        prop::sample::select(vec![
            "string", "integer", "boolean", "number", "Region", "", " a",
        ])
        .prop_map(Value::from),
    ];
    json_tree(leaf.boxed(), named(keys()), 4, 32, 5)
}

/// The object keys of [`json_value`]'s trees.
fn keys() -> Vec<&'static str> {
    vec!["properties", "type", "x-mcp-header", "p", "q"]
}

proptest! {
    #[test]
    fn accepted_annotations_fit_a_header_line(schema in json_value(), value in json_value()) {
        if let Ok(params) = header_params(&schema) {
            for p in &params {
                prop_assert!(!p.header.is_empty());
                prop_assert!(p.header.bytes().all(|b| b.is_ascii_graphic() && b != b':'));
            }
        }
        if let Some(text) = header_value(&value) {
            prop_assert!(text.bytes().all(|b| (0x20..=0x7e).contains(&b)), "{text:?}");
            prop_assert!(!text.starts_with(' ') && !text.ends_with(' '), "{text:?}");
        }
    }
}
