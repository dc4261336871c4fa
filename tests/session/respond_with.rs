//! `Session::respond_with`: a result written with the session's `JsonWriter` goes out as the
//! bytes `respond_serialize` sends for the same value, in queue order, under the same rules
//! (unknown, cancelled, closed); a misused or unfinished writer queues nothing and leaves the
//! request answerable.

use crate::common::*;
use bytes::Bytes;
use mcp_sansio::jsonrpc::{JsonWriter, RawJson, RequestId};
use mcp_sansio::model::ProtocolVersion;
use mcp_sansio::session::{Event, SendError, Session};
use serde_json::json;

const V: &str = "2025-06-18";

fn call(id: u64) -> Bytes {
    let params = json!({"name": "echo", "arguments": {"text": "x"}});
    Bytes::from(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#
    ))
}

/// A server with requests 1..=n in flight, their events drained.
fn server_with_calls(n: u64) -> (Session, std::time::Instant) {
    let (mut s, now) = server_after_initialize(V, "{}", true);
    for id in 1..=n {
        s.handle_input(now, call(id));
    }
    while s.poll_event().is_some() {}
    (s, now)
}

/// Every transmit, as text.
fn transmits(s: &mut Session) -> Vec<String> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some(t) = s.poll_transmit(&mut buf) {
        out.push(String::from_utf8(buf.split_off(buf.len() - t.len)).expect("utf-8"));
    }
    out
}

/// The echo tool's result, with escapes in its text.
fn echo_result(w: &mut JsonWriter<'_>, text: &str) {
    w.begin_object().key("content").begin_array();
    w.begin_object().key("type").string("text");
    w.key("text").string(text).end_object();
    w.end_array().key("isError").bool(false).end_object();
}

#[test]
fn respond_with_sends_the_bytes_respond_serialize_sends() {
    let (mut s, _) = server_with_calls(4);
    let text = "tab\there, \"quotes\", é, \u{1}";
    let raw = RawJson::from_text("{\n  \"a\": [1,\r\n 2]\n}").unwrap();
    let echo = json!({"content": [{"type": "text", "text": text}], "isError": false});
    // A struct, not `json!`: the raw member must stay raw (a `Value` would re-encode it).
    #[derive(serde::Serialize)]
    struct Mixed<'a> {
        n: serde_json::Value,
        raw: &'a RawJson,
    }
    let n = json!([-3, 18446744073709551615u64, 0.25, null, true, {}]);
    let mixed = Mixed { n, raw: &raw };
    s.respond_serialize(&RequestId::number(1), &echo).unwrap();
    s.respond_with(&RequestId::number(2), |w| echo_result(w, text))
        .unwrap();
    s.respond_serialize(&RequestId::number(3), &mixed).unwrap();
    s.respond_with(&RequestId::number(4), |w| {
        w.begin_object().key("n").begin_array();
        w.i64(-3).u64(u64::MAX).f64(0.25).null().bool(true);
        w.begin_object().end_object().end_array();
        w.key("raw").raw(&raw).end_object();
    })
    .unwrap();
    let out = transmits(&mut s);
    assert_eq!(out.len(), 4);
    assert_eq!(out[1], out[0].replace(r#""id":1,"#, r#""id":2,"#));
    assert_eq!(out[3], out[2].replace(r#""id":3,"#, r#""id":4,"#));
    for frame in &out {
        assert!(!frame.contains(['\n', '\r']), "{frame}");
        assert_valid(ProtocolVersion::V2025_06_18, frame.as_bytes());
    }
    assert_eq!(s.inflight_inbound(), 0);
}

#[test]
fn a_misused_writer_queues_nothing_and_the_request_stays_answerable() {
    let (mut s, _) = server_with_calls(1);
    let id = RequestId::number(1);
    type Write = fn(&mut JsonWriter<'_>);
    let misuses: [Write; 6] = [
        |_| {},
        |w| {
            w.begin_object().key("a");
        },
        |w| {
            w.begin_object().string("no key").end_object();
        },
        |w| {
            w.begin_array().end_object();
        },
        |w| {
            w.f64(f64::NAN);
        },
        |w| {
            w.null().null();
        },
    ];
    for write in misuses {
        assert_eq!(s.respond_with(&id, write), Err(SendError::InvalidResult));
        assert!(transmits(&mut s).is_empty());
        assert_eq!(s.inflight_inbound(), 1);
    }
    s.respond_with(&id, |w| {
        w.begin_object().key("ok").bool(true).end_object();
    })
    .unwrap();
    let out = drain(&mut s);
    assert_eq!(
        out,
        [json!({"jsonrpc": "2.0", "id": 1, "result": {"ok": true}})]
    );
}

#[test]
fn respond_with_follows_the_rules_of_respond() {
    let (mut s, now) = server_with_calls(2);
    let empty = |w: &mut JsonWriter<'_>| {
        w.begin_object().end_object();
    };
    assert_eq!(
        s.respond_with(&RequestId::from("never-seen"), empty),
        Err(SendError::UnknownRequest)
    );
    s.respond_with(&RequestId::number(1), empty).unwrap();
    assert_eq!(
        s.respond_with(&RequestId::number(1), empty),
        Err(SendError::UnknownRequest)
    );
    // Cancelled by the peer: the late answer is suppressed (the writer is not even run).
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
    s.handle_input(now, Bytes::from_static(cancel.as_bytes()));
    assert!(matches!(s.poll_event(), Some(Event::Cancelled { .. })));
    s.respond_with(&RequestId::number(2), |_| {}).unwrap();
    assert_eq!(s.stats().responses_suppressed, 1);
    let out = drain(&mut s);
    assert_eq!(out, [json!({"jsonrpc": "2.0", "id": 1, "result": {}})]);
    s.close(now);
    let closed = s.respond_with(&RequestId::number(3), empty);
    assert_eq!(closed, Err(SendError::Closed));
}
