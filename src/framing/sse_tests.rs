//! Unit tests for the SSE decoder and encoder: one test per WHATWG rule and per limit path.

use super::*;

/// A default decoder fed `chunks` in order, one `push` each.
fn pushed(chunks: &[&[u8]]) -> SseDecoder {
    let mut d = SseDecoder::default();
    for chunk in chunks {
        d.push(chunk);
    }
    d
}

fn items(input: &[u8]) -> Vec<Result<SseItem, FrameError>> {
    let mut d = pushed(&[input]);
    std::iter::from_fn(|| d.poll_item()).collect()
}

fn ev(id: &str, event: Option<&str>, data: &str) -> Result<SseItem, FrameError> {
    Ok(SseItem::Event(SseEvent {
        id: id.to_owned(),
        event: event.map(str::to_owned),
        data: Bytes::copy_from_slice(data.as_bytes()),
    }))
}

#[test]
fn simple_event_and_default_type() {
    assert_eq!(items(b"data: hello\n\n"), vec![ev("", None, "hello")]);
    assert_eq!(items(b"event:\ndata: x\n\n"), vec![ev("", None, "x")]);
}

#[test]
fn all_three_line_ends() {
    let want = vec![ev("", None, "a"), ev("", None, "b"), ev("", None, "c")];
    assert_eq!(items(b"data: a\r\n\r\ndata: b\n\ndata: c\r\r"), want);
}

#[test]
fn cr_at_chunk_end_then_lf_is_one_line_end() {
    let mut d = pushed(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
    assert_eq!(d.poll_item(), Some(ev("", None, "a\nb")));
    assert_eq!(d.poll_item(), None);
}

#[test]
fn multi_line_data_is_joined_with_lf() {
    assert_eq!(
        items(b"data: a\ndata:b\ndata\ndata:  c\n\n"),
        vec![ev("", None, "a\nb\n\n c")]
    );
}

#[test]
fn comments_are_ignored() {
    assert_eq!(
        items(b": hi\n:\ndata: x\n: mid\n\n"),
        vec![ev("", None, "x")]
    );
}

#[test]
fn event_type_and_id_persist_as_specified() {
    let got = items(b"id: 1\nevent: e\ndata: a\n\ndata: b\n\n");
    // The type resets after dispatch; the last event id persists.
    assert_eq!(got, vec![ev("1", Some("e"), "a"), ev("1", None, "b")]);
}

#[test]
fn id_with_nul_is_ignored() {
    assert_eq!(
        items(b"id: 1\n\nid: a\0b\ndata: x\n\n"),
        vec![Ok(SseItem::LastEventId("1".into())), ev("1", None, "x")]
    );
}

#[test]
fn empty_id_resets_the_last_event_id() {
    let got = items(b"id: 7\ndata: a\n\nid\ndata: b\n\n");
    assert_eq!(got, vec![ev("7", None, "a"), ev("", None, "b")]);
}

#[test]
fn retry_only_with_digits() {
    let got = items(b"retry: 1500\nretry: 15x\nretry:\nretry: -1\nretry: 2 \n\n");
    assert_eq!(got, vec![Ok(SseItem::Retry(1500))]);
    let huge = items(b"retry: 99999999999999999999999\n\n");
    assert_eq!(huge, vec![Ok(SseItem::Retry(u64::MAX))]);
}

#[test]
fn priming_event_surfaces_id_and_retry_without_dispatch() {
    let got = items(b"id: abc\nretry: 3000\n\n");
    assert_eq!(
        got,
        vec![
            Ok(SseItem::Retry(3000)),
            Ok(SseItem::LastEventId("abc".into()))
        ]
    );
    // With an empty `data:` line the data buffer is "\n": an event with empty data.
    let got = items(b"id: abc\ndata:\n\n");
    assert_eq!(got, vec![ev("abc", None, "")]);
}

#[test]
fn empty_data_without_id_dispatches_nothing() {
    assert_eq!(items(b"\n\n\nevent: x\n\nretry: x\n\n"), vec![]);
}

#[test]
fn leading_bom_is_dropped_once_even_split() {
    let mut d = pushed(&[b"\xEF", b"\xBB", b"\xBFdata: a\n\n\xEF\xBB\xBFdata: b\n\n"]);
    assert_eq!(d.poll_item(), Some(ev("", None, "a")));
    // A second BOM is not at the stream start: it is part of the field name, so ignored.
    assert_eq!(d.poll_item(), None);
}

#[test]
fn partial_bom_prefix_is_replayed_as_input() {
    // "\xEF" followed by something else is not a BOM: the byte belongs to the field name.
    assert_eq!(items(b"\xEFdata: a\n\n"), vec![]);
    let mut d = pushed(&[b"\xEF\xBB", b"X\ndata: a\n\n"]);
    assert_eq!(d.poll_item(), Some(ev("", None, "a")));
}

#[test]
fn unknown_fields_and_no_colon_lines() {
    assert_eq!(items(b"foo: bar\n\n"), vec![]);
    assert_eq!(items(b"foo: bar\ndata\n\n"), vec![ev("", None, "")]);
    assert_eq!(items(b"foo: bar\ndata: x\n\n"), vec![ev("", None, "x")]);
}

#[test]
fn invalid_utf8_is_replaced() {
    assert_eq!(items(b"data: a\xFFb\n\n"), vec![ev("", None, "a\u{fffd}b")]);
}

#[test]
fn data_limit_counts_replacement_characters() {
    // Three invalid bytes become three 3-byte U+FFFD: 9 bytes of text, over a limit of 8.
    let mut d = SseDecoder::new(8);
    d.push(b"data:\xFF\xFF\xFF\n\ndata:\xFF\n\n");
    assert_eq!(d.poll_item(), Some(Err(FrameError::too_long(8))));
    assert_eq!(d.poll_item(), Some(ev("", None, "\u{fffd}")));
}

#[test]
fn unterminated_event_is_dropped_at_finish() {
    let mut d = SseDecoder::default();
    d.push(b"id: 1\ndata: a\n\ndata: b\n");
    assert_eq!(d.poll_item(), Some(ev("1", None, "a")));
    d.finish();
    d.push(b"\n");
    assert_eq!(d.poll_item(), None);
    assert_eq!(d.last_event_id(), "1");
}

#[test]
fn oversized_line_is_dropped_with_one_error_then_resyncs() {
    let mut d = SseDecoder::new(16);
    d.push(b"data: a\n\ndata: ");
    for _ in 0..100 {
        d.push(b"xxxxxxxx");
    }
    d.push(b"\ndata: more\n\ndata: b\n\n");
    let got: Vec<_> = std::iter::from_fn(|| d.poll_item()).collect();
    assert_eq!(
        got,
        vec![
            ev("", None, "a"),
            Err(FrameError::too_long(16)),
            ev("", None, "b")
        ]
    );
    assert!(d.line.capacity() <= 16);
}

#[test]
fn oversized_data_across_lines_is_dropped() {
    let mut d = SseDecoder::new(16);
    d.push(b"data: 0123456789\ndata: 0123456789\ndata: z\n\ndata: ok\n\n");
    let got: Vec<_> = std::iter::from_fn(|| d.poll_item()).collect();
    assert_eq!(got, vec![Err(FrameError::too_long(16)), ev("", None, "ok")]);
}

#[test]
fn encoder_splits_data_lines() {
    let mut buf = Vec::new();
    write_event(
        &mut buf,
        Some("7"),
        Some("message"),
        b"a\nb\r\nc\rd",
        Some(10),
    );
    assert_eq!(
        buf,
        b"id: 7\nevent: message\nretry: 10\ndata: a\ndata: b\ndata: c\ndata: d\n\n"
    );
    assert_eq!(items(&buf)[1], ev("7", Some("message"), "a\nb\nc\nd"));
}

#[test]
fn encoder_priming_event_round_trips() {
    let mut buf = Vec::new();
    write_event(&mut buf, Some("s1-0"), None, b"", None);
    assert_eq!(buf, b"id: s1-0\ndata:\n\n");
    // `data:` appends an empty line, so WHATWG dispatches an event with empty data.
    assert_eq!(items(&buf), vec![ev("s1-0", None, "")]);
}

#[test]
fn encoder_keeps_leading_spaces_and_trailing_newline() {
    let mut buf = Vec::new();
    write_event(&mut buf, Some("a\nb"), None, b"  x\n", None);
    assert_eq!(items(&buf), vec![ev("a b", None, "  x\n")]);
}

#[test]
fn comments_and_keep_alive_dispatch_nothing() {
    let mut buf = Vec::new();
    write_comment(&mut buf, "hello\nworld");
    write_keep_alive(&mut buf);
    assert_eq!(buf, b": hello\n: world\n:\n\n");
    assert_eq!(items(&buf), vec![]);
}
