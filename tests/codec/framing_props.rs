//! Property tests for the framing layer: chunking never changes what the ndjson and SSE decoders
//! produce, encoded messages and events come back exactly, and over-long lines lose nothing else.

use bytes::Bytes;
use mcp_sansio::framing::{
    encode_frame, write_event, FrameError, NdjsonDecoder, SseDecoder, SseEvent, SseItem,
};
use proptest::prelude::*;
use serde_json::Value;

use crate::json_tree::json_tree;

/// Cuts `data` at the given points (taken modulo its length), keeping order.
fn chunk<'a>(data: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (data.len() + 1)).collect();
    points.push(0);
    points.push(data.len());
    points.sort_unstable();
    points.windows(2).map(|w| &data[w[0]..w[1]]).collect()
}

fn ndjson_frames(max: usize, chunks: &[&[u8]]) -> Vec<Result<Bytes, FrameError>> {
    let mut d = NdjsonDecoder::new(max);
    let mut out = Vec::new();
    for c in chunks {
        d.push(c);
        out.extend(std::iter::from_fn(|| d.poll_frame()));
    }
    d.finish();
    out.extend(std::iter::from_fn(|| d.poll_frame()));
    // The model does not scan the first bytes of over-long lines (the decoder's unit tests
    // check those heads): cleared here.
    out.into_iter()
        .map(|item| {
            item.map_err(|e| match e {
                FrameError::TooLong { limit, len, .. } => FrameError::TooLong {
                    limit,
                    len,
                    head: Default::default(),
                },
                other => other,
            })
        })
        .collect()
}

fn sse_items(max: usize, chunks: &[&[u8]]) -> Vec<Result<SseItem, FrameError>> {
    let mut d = SseDecoder::new(max);
    let mut out = Vec::new();
    for c in chunks {
        d.push(c);
        out.extend(std::iter::from_fn(|| d.poll_item()));
    }
    out
}

/// Bytes rich in the characters that matter to line and field parsing.
fn stream_bytes() -> impl Strategy<Value = Vec<u8>> {
    let interesting = prop::sample::select(b"\n\r: dataideventretry{}\"\xEF\xBB\xBF\x00".to_vec());
    prop::collection::vec(prop_oneof![interesting, any::<u8>()], 0..400)
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        Just(Value::String("line\nbreak\r\n\"quoted\"".into())),
    ];
    json_tree(leaf.boxed(), any::<String>().boxed(), 4, 32, 6)
}

/// The ndjson rules written out plainly: lines end at `\n`, one `\r` before it is dropped,
/// whitespace-only lines are skipped, a line longer than `max` is one error in its place, and
/// the stream's unterminated last line counts as complete at the end.
fn ndjson_model(max: usize, data: &[u8]) -> Vec<Result<Bytes, FrameError>> {
    let mut out = Vec::new();
    let mut lines: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > max {
            out.push(Err(FrameError::too_long(max)));
        } else if !line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            out.push(Ok(Bytes::copy_from_slice(line)));
        }
    }
    out
}

proptest! {
    #[test]
    fn ndjson_frames_follow_the_plain_rules(
        data in stream_bytes(),
        cuts in prop::collection::vec(any::<usize>(), 0..40),
        max in 1usize..64,
    ) {
        prop_assert_eq!(ndjson_frames(max, &chunk(&data, &cuts)), ndjson_model(max, &data));
    }

    /// Limits past most chunks: the decoder appends such chunks whole and leaves the cutting
    /// to `poll_frame` (the path the small limits above rarely take).
    #[test]
    fn ndjson_frames_follow_the_plain_rules_under_large_limits(
        data in stream_bytes(),
        cuts in prop::collection::vec(any::<usize>(), 0..40),
        max in 64usize..512,
    ) {
        prop_assert_eq!(ndjson_frames(max, &chunk(&data, &cuts)), ndjson_model(max, &data));
    }

    #[test]
    fn ndjson_chunking_is_invisible(
        data in stream_bytes(),
        cuts in prop::collection::vec(any::<usize>(), 0..40),
        max in 1usize..64,
    ) {
        prop_assert_eq!(ndjson_frames(max, &chunk(&data, &cuts)), ndjson_frames(max, &[&data]));
    }

    #[test]
    fn ndjson_messages_come_back_exactly(
        values in prop::collection::vec(json_value(), 0..12),
        pretty in any::<bool>(),
        crlf in any::<bool>(),
        cuts in prop::collection::vec(any::<usize>(), 0..40),
    ) {
        let mut stream = Vec::new();
        for v in &values {
            let text = if pretty { serde_json::to_vec_pretty(v) } else { serde_json::to_vec(v) };
            encode_frame(&mut stream, &text.unwrap());
            if crlf {
                // Re-terminate with CRLF and add a blank line: both must be tolerated.
                stream.pop();
                stream.extend_from_slice(b"\r\n \r\n");
            }
        }
        let frames = ndjson_frames(1 << 20, &chunk(&stream, &cuts));
        let decoded: Vec<Value> = frames
            .iter()
            .map(|f| serde_json::from_slice(f.as_ref().unwrap()).unwrap())
            .collect();
        prop_assert_eq!(decoded, values);
    }

    #[test]
    fn overlong_lines_never_lose_the_following_messages(
        lines in prop::collection::vec((any::<bool>(), 0u32..1000, 1usize..300), 1..20),
        cuts in prop::collection::vec(any::<usize>(), 0..60),
    ) {
        const MAX: usize = 64;
        let mut stream = Vec::new();
        let mut want = Vec::new();
        for (overlong, n, junk_len) in &lines {
            if *overlong {
                stream.extend(std::iter::repeat_n(b'x', MAX + junk_len));
                want.push(Err(FrameError::too_long(MAX)));
            } else {
                let msg = format!("{{\"n\":{n}}}");
                stream.extend_from_slice(msg.as_bytes());
                want.push(Ok(Bytes::from(msg)));
            }
            stream.push(b'\n');
        }
        prop_assert_eq!(ndjson_frames(MAX, &chunk(&stream, &cuts)), want);
    }

    #[test]
    fn sse_chunking_is_invisible(
        data in stream_bytes(),
        cuts in prop::collection::vec(any::<usize>(), 0..40),
        max in 4usize..128,
    ) {
        prop_assert_eq!(sse_items(max, &chunk(&data, &cuts)), sse_items(max, &[&data]));
    }

    #[test]
    fn sse_events_come_back_exactly(
        events in prop::collection::vec(
            ("[a-z0-9:_ -]{1,12}", prop::option::of("[a-z/]{1,10}"), "[^\r]{0,60}"),
            1..10,
        ),
        cuts in prop::collection::vec(any::<usize>(), 0..40),
    ) {
        let mut stream = Vec::new();
        let mut want = Vec::new();
        for (id, event, data) in &events {
            write_event(&mut stream, Some(id), event.as_deref(), data.as_bytes(), None);
            want.push(Ok(SseItem::Event(SseEvent {
                id: id.clone(),
                event: event.clone(),
                data: Bytes::from(data.clone()),
            })));
        }
        prop_assert_eq!(sse_items(1 << 20, &chunk(&stream, &cuts)), want);
    }
}
