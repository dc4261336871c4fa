//! Unit tests for decode and encode: every error path and the exactness of ids.

use bytes::Bytes;

use super::*;

fn dec(s: &str) -> Result<Incoming, DecodeError> {
    decode(&Bytes::copy_from_slice(s.as_bytes()))
}

fn single(s: &str) -> Message {
    match dec(s).unwrap() {
        Incoming::Single(m) => m,
        other => panic!("expected single, got {other:?}"),
    }
}

fn err(s: &str) -> DecodeError {
    dec(s).unwrap_err()
}

#[test]
fn decodes_a_request_with_lazy_params() {
    let m = single(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#);
    let Message::Request(r) = m else { panic!() };
    assert_eq!(r.id, RequestId::number(1));
    assert_eq!(r.method, "tools/call");
    assert!(
        matches!(r.method, std::borrow::Cow::Borrowed(_)),
        "known methods are interned"
    );
    assert_eq!(r.params.unwrap().get(), r#"{"name":"x"}"#);
}

#[test]
fn decodes_notification_result_and_error() {
    assert!(matches!(
        single(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
        Message::Notification(_)
    ));
    let Message::Response(r) = single(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#) else {
        panic!()
    };
    assert_eq!(r.id, Some(RequestId::string("a")));
    assert_eq!(r.outcome.unwrap().get(), "{}");
    let Message::Response(r) =
        single(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad","data":[1]}}"#)
    else {
        panic!()
    };
    assert_eq!(r.id, None);
    let e = r.outcome.unwrap_err();
    assert_eq!(e.code, code::PARSE_ERROR);
    assert_eq!(e.data.unwrap().get(), "[1]");
}

#[test]
fn error_response_without_id_member_is_accepted() {
    let Message::Response(r) = single(r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"x"}}"#)
    else {
        panic!()
    };
    assert_eq!(r.id, None);
}

#[test]
fn parse_error_on_invalid_json() {
    for bad in ["{", "not json", "{\"jsonrpc\":\"2.0\",}", "", "   "] {
        let e = err(bad);
        assert_eq!(e.kind, DecodeErrorKind::Parse, "{bad:?}");
        assert_eq!(e.code(), code::PARSE_ERROR);
        assert_eq!(e.id, None);
    }
}

#[test]
fn parse_error_on_invalid_utf8() {
    let e = decode(&Bytes::from_static(b"{\"a\":\"\xff\"}")).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::Parse);
}

#[test]
fn invalid_request_on_non_object() {
    for bad in ["5", "\"x\"", "null", "true"] {
        let e = err(bad);
        assert_eq!(e.kind, DecodeErrorKind::InvalidRequest, "{bad}");
        assert_eq!(e.code(), code::INVALID_REQUEST);
    }
}

#[test]
fn invalid_request_keeps_the_id() {
    let e = err(r#"{"jsonrpc":"1.0","id":42,"method":"ping"}"#);
    assert_eq!(e.kind, DecodeErrorKind::InvalidRequest);
    assert_eq!(e.id, Some(RequestId::number(42)));
    let e = err(r#"{"jsonrpc":"2.0","id":"x","method":7}"#);
    assert_eq!(e.id, Some(RequestId::string("x")));
    let e = err(r#"{"id":9,"method":"ping"}"#);
    assert_eq!(e.id, Some(RequestId::number(9)), "missing jsonrpc");
    let e = err(r#"{"jsonrpc":"2.0","id":3,"method":"ping","params":5}"#);
    assert_eq!(e.id, Some(RequestId::number(3)));
    let e = err(r#"{"jsonrpc":"2.0","id":4,"method":"ping","result":{}}"#);
    assert_eq!(e.id, Some(RequestId::number(4)));
    let e = err(r#"{"jsonrpc":"2.0","id":5,"id":6,"method":"ping"}"#);
    assert_eq!(e.kind, DecodeErrorKind::InvalidRequest, "duplicate keys");
    assert_eq!(e.id, Some(RequestId::number(6)));
}

#[test]
fn null_fractional_and_structured_ids_are_invalid_requests() {
    for bad in [
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#,
    ] {
        let e = err(bad);
        assert_eq!(e.kind, DecodeErrorKind::InvalidRequest, "{bad}");
        assert_eq!(e.id, None, "{bad}");
    }
}

#[test]
fn malformed_responses_are_not_answered() {
    for bad in [
        r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":5}"#,
        r#"{"jsonrpc":"2.0","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
    ] {
        let e = err(bad);
        assert_eq!(e.kind, DecodeErrorKind::InvalidResponse, "{bad}");
        assert!(!e.wants_reply());
    }
}

#[test]
fn a_message_with_nothing_is_invalid() {
    assert_eq!(
        err(r#"{"jsonrpc":"2.0"}"#).kind,
        DecodeErrorKind::InvalidRequest
    );
    assert_eq!(
        err(r#"{"jsonrpc":"2.0","id":2}"#).id,
        Some(RequestId::number(2))
    );
}

#[test]
fn null_params_are_absent() {
    let Message::Request(r) = single(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#)
    else {
        panic!()
    };
    assert!(r.params.is_none());
}

#[test]
fn escaped_method_names_are_unescaped() {
    let m = single(r#"{"jsonrpc":"2.0","method":"notifications\/initialized"}"#);
    assert_eq!(m.method(), Some("notifications/initialized"));
}

#[test]
fn ids_keep_kind_and_range() {
    for (text, id) in [
        ("7", RequestId::number(7)),
        ("\"7\"", RequestId::string("7")),
        ("-12", RequestId::number(-12)),
        ("9007199254740993", RequestId::number(9_007_199_254_740_993)),
        ("18446744073709551615", RequestId::unsigned(u64::MAX)),
        ("-9223372036854775808", RequestId::number(i64::MIN)),
    ] {
        let frame = format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"ping"}}"#);
        let m = single(&frame);
        assert_eq!(m.id(), Some(&id));
        let mut buf = Vec::new();
        encode_result(&mut buf, &id, &RawJson::empty_object());
        let expected = format!(r#"{{"jsonrpc":"2.0","id":{text},"result":{{}}}}"#);
        assert_eq!(String::from_utf8(buf).unwrap(), expected);
    }
}

#[test]
fn batches_decode_each_element() {
    let Incoming::Batch(items) =
        dec(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},5,{"jsonrpc":"2.0","method":"x"}]"#)
            .unwrap()
    else {
        panic!()
    };
    assert_eq!(items.len(), 3);
    assert!(items[0].is_ok());
    assert_eq!(
        items[1].as_ref().unwrap_err().kind,
        DecodeErrorKind::InvalidRequest
    );
    assert!(items[2].is_ok());
    assert_eq!(err("[]").kind, DecodeErrorKind::InvalidRequest);
    assert_eq!(err("[1,").kind, DecodeErrorKind::Parse);
    assert!(decode_message(&Bytes::from_static(b"[{}]")).is_err());
}

#[test]
fn encode_round_trips_every_envelope() {
    let params = RawJson::from_text(r#"{"a":"b\nc"}"#).unwrap();
    let messages = vec![
        Message::Request(Request {
            id: RequestId::string("q\"1"),
            method: "tools/call".into(),
            params: Some(params.clone()),
        }),
        Message::Notification(Notification {
            method: "weird\u{1}name".into(),
            params: None,
        }),
        Message::Response(Response::result(RequestId::number(-3), params)),
        Message::Response(Response::error(
            Some(RequestId::number(4)),
            ErrorObject::invalid_params("bad \"x\"").with_data(RawJson::null()),
        )),
    ];
    for m in messages {
        let buf = m.to_vec();
        assert!(!buf.contains(&b'\n'));
        let back = decode_message(&Bytes::from(buf)).unwrap();
        assert_eq!(back, m);
    }
}

#[test]
fn missing_error_id_is_null_or_omitted() {
    let e = ErrorObject::parse_error("x");
    let mut buf = Vec::new();
    encode_error(&mut buf, None, &e, MissingId::Null);
    assert_eq!(
        std::str::from_utf8(&buf).unwrap(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#
    );
    buf.clear();
    encode_error(&mut buf, None, &e, MissingId::Omit);
    assert_eq!(
        std::str::from_utf8(&buf).unwrap(),
        r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}"#
    );
}

#[test]
fn decode_error_to_error_object() {
    let e = err("{");
    let obj = e.to_error_object();
    assert_eq!(obj.code, -32700);
    assert!(obj.message.starts_with("Parse error"));
}

#[test]
fn batch_encoding() {
    let ms = vec![
        Message::Notification(Notification {
            method: "a".into(),
            params: None,
        }),
        Message::Notification(Notification {
            method: "b".into(),
            params: None,
        }),
    ];
    let mut buf = Vec::new();
    encode_batch(&mut buf, &ms, MissingId::Null);
    let Incoming::Batch(items) = decode(&Bytes::from(buf)).unwrap() else {
        panic!()
    };
    assert_eq!(items.len(), 2);
}

#[test]
fn a_type_error_before_a_syntax_error_is_still_a_parse_error() {
    // serde stops at the first error; a wrong type or a duplicate member must not hide that the
    // text is not JSON at all.
    for text in ["8 x", "\"s\" ]", r#"{"jsonrpc":"2.0","id":1,"id":2,"#] {
        assert_eq!(err(text).kind, DecodeErrorKind::Parse, "{text}");
    }
    assert_eq!(err("8").kind, DecodeErrorKind::InvalidRequest);
}

#[test]
fn every_known_method_interns_to_its_constant_and_nothing_else_does() {
    use std::borrow::Cow;
    for known in KNOWN_METHODS {
        assert!(matches!(intern_method(known), Cow::Borrowed(k) if k == *known));
    }
    // Same length and last byte as known names, or empty: kept as given.
    for other in [
        "tools/cal",
        "tools/xall",
        "tools/call ",
        "",
        "pinG",
        "initializE",
    ] {
        assert!(matches!(intern_method(other), Cow::Owned(o) if o == other));
    }
}
