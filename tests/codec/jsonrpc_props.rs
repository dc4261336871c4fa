//! Property tests for the JSON-RPC codec: ids of every shape and messages of every kind survive
//! encode then decode exactly, and no input makes the decoder panic.

use bytes::Bytes;
use mcp_sansio::jsonrpc::{
    decode, ErrorObject, Incoming, Message, Notification, RawJson, Request, RequestId, Response,
};
use proptest::prelude::*;

fn request_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![
        any::<i64>().prop_map(RequestId::number),
        any::<u64>().prop_map(RequestId::unsigned),
        prop_oneof![Just(i64::MIN), Just(i64::MAX), Just(0), Just(-1)].prop_map(RequestId::number),
        Just(RequestId::unsigned(u64::MAX)),
        any::<String>().prop_map(RequestId::string),
        "[\"\\\\/\u{0}-\u{1f}\u{7f}\u{e9}\u{2028}\u{1f600}a-z0-9]{0,16}"
            .prop_map(RequestId::string),
    ]
}

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("tools/call".to_owned()),
        Just("notifications/progress".to_owned()),
        any::<String>(),
    ]
}

/// A small JSON payload given as text (object or array, possibly with odd spacing).
fn payload() -> impl Strategy<Value = RawJson> {
    let value = prop_oneof![
        any::<i64>().prop_map(|n| format!("{{\"n\":{n}}}")),
        any::<String>().prop_map(|s| serde_json::to_string(&[s]).unwrap()),
        Just("{ \"a\" : [ 1 , { } ] }".to_owned()),
        Just("[]".to_owned()),
    ];
    value.prop_map(|t| RawJson::from_text(t).unwrap())
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        (request_id(), method(), prop::option::of(payload())).prop_map(|(id, m, params)| {
            Message::Request(Request {
                id,
                method: m.into(),
                params,
            })
        }),
        (method(), prop::option::of(payload())).prop_map(|(m, params)| {
            Message::Notification(Notification {
                method: m.into(),
                params,
            })
        }),
        (request_id(), payload()).prop_map(|(id, r)| Message::Response(Response::result(id, r))),
        (
            prop::option::of(request_id()),
            any::<i64>(),
            any::<String>(),
            prop::option::of(payload())
        )
            .prop_map(|(id, code, msg, data)| {
                let mut e = ErrorObject::new(code, msg);
                e.data = data;
                Message::Response(Response::error(id, e))
            }),
    ]
}

fn decode_one(bytes: Vec<u8>) -> Message {
    match decode(&Bytes::from(bytes)) {
        Ok(Incoming::Single(m)) => m,
        other => panic!("expected one message, got {other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn ids_round_trip_exactly(id in request_id()) {
        let request = Message::Request(Request { id: id.clone(), method: "ping".into(), params: None });
        let decoded = decode_one(request.to_vec());
        prop_assert_eq!(decoded.id(), Some(&id));
        let response = Message::Response(Response::result(id.clone(), RawJson::empty_object()));
        let decoded = decode_one(response.to_vec());
        prop_assert_eq!(decoded.id(), Some(&id));
        // The id's own JSON text parses back to the same id.
        let mut text = Vec::new();
        id.write_json(&mut text);
        prop_assert_eq!(RequestId::from_json_text(std::str::from_utf8(&text).unwrap()), Some(id));
    }

    #[test]
    fn messages_round_trip_exactly(m in message()) {
        prop_assert_eq!(decode_one(m.to_vec()), m);
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = decode(&Bytes::from(data));
    }

    #[test]
    fn mangled_messages_never_panic(m in message(), cut in any::<usize>(), byte in any::<u8>()) {
        let mut text = m.to_vec();
        let at = cut % (text.len() + 1);
        text.insert(at, byte);
        let _ = decode(&Bytes::copy_from_slice(&text));
        text.truncate(at);
        let _ = decode(&Bytes::from(text));
    }
}
