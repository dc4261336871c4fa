//! `Session::respond_serialize`: the same bytes on the wire as `respond` with the serialised
//! value, in queue order with every other message, and the same rules (unknown, cancelled,
//! closed); a value that fails to serialise leaves the request in flight.

use std::collections::HashMap;

use crate::common::*;
use bytes::Bytes;
use mcp_sansio::jsonrpc::{RawJson, RequestId};
use mcp_sansio::session::{Event, SendError, TransmitKind};
use serde_json::json;

const V: &str = "2025-06-18";

fn call(id: u64, text: &str) -> String {
    let params = json!({"name": "echo", "arguments": {"text": text}});
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
}

fn raw_transmits(session: &mut mcp_sansio::session::Session) -> Vec<(Vec<u8>, TransmitKind)> {
    let mut out = Vec::new();
    loop {
        let mut buf = b"prefix".to_vec();
        let Some(t) = session.poll_transmit(&mut buf) else {
            return out;
        };
        assert_eq!(&buf[..6], b"prefix", "appends, never overwrites");
        assert_eq!(t.len, buf.len() - 6);
        out.push((buf.split_off(6), t.kind));
    }
}

#[test]
fn respond_serialize_sends_the_bytes_respond_sends_in_queue_order() {
    let (mut s, now) = server_after_initialize(V, "{}", true);
    let text = "tab\there, \"quotes\", é, \u{1}";
    let result = json!({"content": [{"type": "text", "text": text}], "isError": false});
    for id in 1..=3 {
        s.handle_input(now, Bytes::from(call(id, text)));
    }
    // 1 through respond, 2 through respond_serialize, a log notification between, 3 again.
    s.respond(
        &RequestId::number(1),
        RawJson::from_serialize(&result).unwrap(),
    )
    .unwrap();
    s.respond_serialize(&RequestId::number(2), &result).unwrap();
    s.notify(
        "notifications/message",
        Some(RawJson::from_text(r#"{"level":"info","data":"x"}"#).unwrap()),
    )
    .unwrap();
    s.respond_serialize(&RequestId::from("never-seen"), &result)
        .unwrap_err();
    s.respond_serialize(&RequestId::number(3), &result).unwrap();
    let out = raw_transmits(&mut s);
    let kinds: Vec<TransmitKind> = out.iter().map(|(_, k)| *k).collect();
    use TransmitKind::{Notification, Response};
    assert_eq!(kinds, [Response, Response, Notification, Response]);
    let by_respond = String::from_utf8(out[0].0.clone()).unwrap();
    let by_serialize = String::from_utf8(out[1].0.clone()).unwrap();
    assert_eq!(by_respond.replace(r#""id":1,"#, r#""id":2,"#), by_serialize);
    assert_eq!(
        String::from_utf8(out[3].0.clone()).unwrap(),
        by_serialize.replace(r#""id":2,"#, r#""id":3,"#)
    );
    for (frame, _) in &out {
        assert_valid(mcp_sansio::model::ProtocolVersion::V2025_06_18, frame);
    }
    assert_eq!(s.inflight_inbound(), 0);
}

#[test]
fn respond_serialize_keeps_output_on_one_line_when_a_raw_member_has_newlines() {
    let (mut s, now) = server_after_initialize(V, "{}", true);
    s.handle_input(now, Bytes::from(call(7, "x")));
    let pretty = RawJson::from_text("{\n  \"a\": [1,\r\n 2]\n}").unwrap();
    s.respond_serialize(&RequestId::number(7), &json!({"raw": pretty}))
        .unwrap();
    let out = drain(&mut s);
    assert_eq!(
        out,
        [json!({"jsonrpc": "2.0", "id": 7, "result": {"raw": {"a": [1, 2]}}})]
    );
}

#[test]
fn respond_serialize_follows_the_rules_of_respond() {
    let (mut s, now) = server_after_initialize(V, "{}", true);
    for id in 1..=2 {
        s.handle_input(now, Bytes::from(call(id, "x")));
    }
    while s.poll_event().is_some() {}
    // A value that does not serialise: refused, nothing sent, the request stays in flight.
    let bad: HashMap<(u8, u8), u8> = [((1, 2), 3)].into_iter().collect();
    let refused = s.respond_serialize(&RequestId::number(1), &bad);
    assert_eq!(refused, Err(SendError::InvalidResult));
    assert!(drain(&mut s).is_empty());
    assert_eq!(s.inflight_inbound(), 2);
    s.respond_serialize(&RequestId::number(1), &json!({}))
        .unwrap();
    let answer = s.respond_serialize(&RequestId::number(1), &json!({}));
    assert_eq!(answer, Err(SendError::UnknownRequest));
    // Cancelled by the peer: the late answer is suppressed and counted.
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
    s.handle_input(now, Bytes::from_static(cancel.as_bytes()));
    assert!(matches!(s.poll_event(), Some(Event::Cancelled { .. })));
    s.respond_serialize(&RequestId::number(2), &json!({}))
        .unwrap();
    assert_eq!(s.stats().responses_suppressed, 1);
    let out = drain(&mut s);
    assert_eq!(out, [json!({"jsonrpc": "2.0", "id": 1, "result": {}})]);
    s.close(now);
    let closed = s.respond_serialize(&RequestId::number(3), &json!({}));
    assert_eq!(closed, Err(SendError::Closed));
}
