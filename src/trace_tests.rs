//! Tests of the frame trace: every envelope kind, malformed input, arbitrary bytes.

use std::time::Instant;

use bytes::Bytes;
use proptest::prelude::*;

use super::*;

/// The trace of `frame` as received.
fn trace(frame: &Bytes) -> FrameTrace {
    FrameTrace::new(Direction::Recv, Instant::now(), frame)
}

fn env(text: &str) -> FrameTrace {
    trace(&Bytes::copy_from_slice(text.as_bytes()))
}

#[test]
fn request_has_method_and_id() {
    let e = env(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#);
    assert_eq!(e.kind, EnvelopeKind::Request);
    assert_eq!(e.method.as_deref(), Some("tools/list"));
    assert_eq!(e.id.as_deref(), Some("7"));
    assert_eq!((e.error_code, e.count), (None, 1));
}

#[test]
fn string_id_is_quoted_json() {
    let e = env(r#"{"jsonrpc":"2.0","id":"a\"b","method":"ping"}"#);
    assert_eq!(e.id.as_deref(), Some(r#""a\"b""#));
}

#[test]
fn notification_has_method_only() {
    let e = env(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(e.kind, EnvelopeKind::Notification);
    assert_eq!(e.method.as_deref(), Some("notifications/initialized"));
    assert_eq!(e.id, None);
}

#[test]
fn response_and_error() {
    let ok = env(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#);
    assert_eq!(ok.kind, EnvelopeKind::Response);
    assert_eq!(
        (ok.id.as_deref(), ok.method, ok.error_code),
        (Some("1"), None, None)
    );
    let err = env(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}"#);
    assert_eq!(err.kind, EnvelopeKind::Error);
    assert_eq!(
        (err.id.as_deref(), err.error_code),
        (Some("2"), Some(-32601))
    );
}

#[test]
fn batch_counts_its_messages() {
    let e = env(r#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":1,"method":"b"}]"#);
    assert_eq!(e.kind, EnvelopeKind::Batch);
    assert_eq!(e.count, 2);
}

#[test]
fn malformed_frames_are_invalid_with_their_code() {
    let cut = env(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"#);
    assert_eq!(cut.kind, EnvelopeKind::Invalid);
    assert_eq!(cut.error_code, Some(crate::jsonrpc::code::PARSE_ERROR));
    assert_eq!(cut.id.as_deref(), Some("5"), "the id the head shows");
    for text in [
        "",
        "nope",
        "{}",
        "[]",
        "\u{0}\u{ff}",
        r#"{"jsonrpc":"1.0","id":1}"#,
    ] {
        let e = env(text);
        assert_eq!(e.kind, EnvelopeKind::Invalid, "{text:?}");
        assert!(e.error_code.is_some(), "{text:?}");
    }
    let bad_utf8 = trace(&Bytes::from_static(b"{\"a\":\"\xff\"}"));
    assert_eq!(bad_utf8.kind, EnvelopeKind::Invalid);
}

#[test]
fn frame_trace_records_size_direction_and_time() {
    let now = Instant::now();
    let frame = Bytes::from_static(br#"{"jsonrpc":"2.0","method":"x"}"#);
    let t = FrameTrace::new(Direction::Send, now, &frame);
    assert_eq!((t.dir, t.at, t.bytes), (Direction::Send, now, frame.len()));
    assert_eq!(t.kind, EnvelopeKind::Notification);
    assert_eq!(
        (Direction::Recv.as_str(), EnvelopeKind::Error.as_str()),
        ("recv", "error")
    );
}

#[test]
fn traced_headers() {
    assert!(is_traced_header("Mcp-Session-Id"));
    assert!(is_traced_header("MCP-Protocol-Version"));
    assert!(is_traced_header("Last-Event-ID"));
    assert!(is_traced_header("Mcp-Param-Name"));
    assert!(!is_traced_header("Content-Type"));
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        let e = trace(&Bytes::from(data));
        prop_assert!(e.count >= 1 || e.kind == EnvelopeKind::Batch);
        if e.kind == EnvelopeKind::Invalid {
            prop_assert!(e.error_code.is_some());
        }
    }
}
