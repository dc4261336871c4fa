//! Property tests of the reply readers: on any bytes or JSON they never panic, and a reply is
//! found only for the request's own id.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::reply::{reply_from_http_body, reply_from_message, ReplyError};

/// Small JSON values, biased towards the members the readers look at.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<String>().prop_map(Value::from),
        prop::sample::select(vec!["complete", "input_required", ""]).prop_map(Value::from),
    ];
    let key = prop::sample::select(vec![
        "id",
        "result",
        "error",
        "method",
        "resultType",
        "inputRequests",
        "requestState",
        "code",
        "message",
    ]);
    leaf.prop_recursive(4, 32, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..5).prop_map(|members| {
                let map: Map<String, Value> = members
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect();
                Value::Object(map)
            }),
        ]
    })
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
    fn a_response_with_the_id_is_found(id in 1i64..4, x in any::<i64>()) {
        let message = json!({"jsonrpc": "2.0", "id": id, "result": {"x": x}});
        prop_assert!(matches!(reply_from_message(&message, id), Ok(Some(_))));
    }
}
