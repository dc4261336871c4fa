//! Property tests of the 2026-07-28 client's readers: on any bytes or JSON they never panic,
//! a reply is found only for the request's own id, and every accepted `x-mcp-header`
//! annotation yields a header name and values that fit on an HTTP header line.

use mcp_sansio::app::client::stateless::{
    header_params, header_value, reply_from_http_body, reply_from_message, ReplyError,
};
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::json_tree::{json_tree, named};

/// Small JSON values, biased towards the members the readers look at.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        any::<String>().prop_map(Value::from),
        prop::sample::select(vec![
            "complete",
            "input_required",
            "string",
            "integer",
            "boolean",
            "number",
            "Region",
            "",
            " a",
        ])
        .prop_map(Value::from),
    ];
    json_tree(leaf.boxed(), named(keys()), 4, 32, 5)
}

/// The object keys of [`json_value`]'s trees.
fn keys() -> Vec<&'static str> {
    vec![
        "id",
        "result",
        "error",
        "method",
        "resultType",
        "inputRequests",
        "requestState",
        "code",
        "message",
        "properties",
        "type",
        "x-mcp-header",
        "p",
        "q",
    ]
}

proptest! {
    #[test]
    fn http_bodies_never_panic(body in prop::collection::vec(any::<u8>(), 0..256), sse in any::<bool>()) {
        let content_type = if sse { "text/event-stream" } else { "application/json" };
        let _ = reply_from_http_body(Some(content_type), &body, 1);
    }

    #[test]
    fn only_the_requests_own_id_is_a_reply(message in json_value(), id in 1i64..4) {
        match reply_from_message(&message, id) {
            Ok(Some(_)) | Err(ReplyError::Malformed(_)) => {
                prop_assert_eq!(message.get("id").and_then(Value::as_i64), Some(id));
                prop_assert!(message.get("method").is_none());
            }
            Ok(None) | Err(ReplyError::NoResponse) => {}
        }
    }

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
