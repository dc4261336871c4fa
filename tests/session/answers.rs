//! Every request gets exactly one answer, or the connection says why: batches of any size are
//! answered in full, a repeated id in a batch is refused once, an oversized frame is answered
//! (or its pending request failed) by the id in its first bytes, and a response that matches no
//! request is reported.

use crate::common::*;
use bytes::Bytes;
use mcp_sansio::jsonrpc::{FrameHead, RequestId};
use mcp_sansio::model::ProtocolVersion as V;
use mcp_sansio::session::{Event, FrameError, Outcome, RequestOptions, Session};
use mcp_sansio::Config;
use serde_json::json;
use std::time::Instant;

#[test]
fn a_batch_of_five_thousand_pings_gets_five_thousand_answers() {
    let (mut s, now) = server_after_initialize("2025-03-26", "{}", true);
    let items: Vec<String> = (0..5000)
        .map(|n| format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"ping"}}"#))
        .collect();
    let out = feed(&mut s, now, &format!("[{}]", items.join(",")));
    assert_eq!(out.len(), 5000);
    for (n, reply) in out.iter().enumerate() {
        assert_eq!(reply, &json!({"jsonrpc": "2.0", "id": n, "result": {}}));
    }
    assert_eq!(s.stats().replies_dropped, 0);
}

#[test]
fn a_repeated_id_in_a_batch_is_answered_once_and_the_repeat_refused() {
    let (mut s, now) = server_after_initialize("2025-03-26", "{}", true);
    let out = feed(
        &mut s,
        now,
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"},
            {"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/list"},
            {"jsonrpc":"2.0","id":3,"method":"tools/list"}]"#,
    );
    assert_eq!(out.len(), 4, "{out:?}");
    assert_eq!(out[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(out[1], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    for refusal in &out[2..] {
        assert_eq!(refusal["error"]["code"], -32600, "{refusal}");
        assert!(refusal["id"].is_null(), "{refusal}");
        let message = refusal["error"]["message"].as_str().unwrap();
        assert!(message.contains("repeats"), "{message}");
    }
    // The first `tools/list` with id 3 went to the application, once.
    assert!(
        matches!(s.poll_event(), Some(Event::Request { id, .. }) if id == RequestId::number(3))
    );
    assert!(s.poll_event().is_none());
}

#[test]
fn an_oversized_request_is_refused_with_its_id_and_the_limit() {
    let now = std::time::Instant::now();
    let config = Config {
        max_frame_len: 1024,
        ..Config::default()
    };
    let mut s = Session::server(config, server_setup("{}"), now);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":"big-1","method":"ping","params":{{"x":"{}"}}}}"#,
        "a".repeat(5000)
    );
    let out = feed(&mut s, now, &big);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["id"], "big-1");
    assert_eq!(out[0]["error"]["code"], -32600);
    let message = out[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("request of {} bytes", big.len())),
        "{message}"
    );
    assert!(message.contains("1 KiB limit"), "{message}");
}

#[test]
fn a_line_too_long_reported_with_its_head_is_refused_with_its_id() {
    let (mut s, now) = server_after_initialize("2025-06-18", "{}", true);
    let head = FrameHead::scan(br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"#);
    let error = FrameError::TooLong {
        limit: 16 << 20,
        len: None,
        head,
    };
    s.handle_decode_error(now, error);
    let out = drain(&mut s);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["id"], 42);
    let message = out[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("exceeds the 16 MiB limit"), "{message}");
}

#[test]
fn an_oversized_response_fails_the_right_pending_request_at_once() {
    let mut pair = connected(V::V2025_06_18);
    let now = pair.now();
    let client = &mut pair.client;
    let [first, second] = send_tools_lists(client, now);
    let prefix = response_starting(&second, br#","result":{"tools":[{"name":"#);
    let error = FrameError::TooLong {
        limit: 16 << 20,
        len: None,
        head: FrameHead::scan(&prefix),
    };
    client.handle_decode_error(now, error);
    match client.poll_event() {
        Some(Event::Completed {
            id,
            outcome: Outcome::Error(e),
        }) => {
            assert_eq!(id, second);
            assert!(e.message.contains("16 MiB"), "{}", e.message);
        }
        other => panic!("expected the second request to fail, got {other:?}"),
    }
    assert!(client.poll_event().is_none());
    assert_eq!(
        client.pending_outbound(),
        1,
        "the first request still waits"
    );
    assert!(drain(client).is_empty(), "a response is never answered");
    let _ = first;
}

#[test]
fn an_oversized_response_frame_in_hand_fails_its_request() {
    let mut pair = pair_with(
        V::V2025_06_18,
        Config {
            max_frame_len: 4096,
            ..Config::default()
        },
        Config::default(),
    );
    assert_eq!(pair.connect(), Some(V::V2025_06_18));
    let now = pair.now();
    let client = &mut pair.client;
    let [id] = send_tools_lists(client, now);
    let mut frame = response_starting(&id, br#","result":{"tools":[],"pad":""#);
    frame.resize(10_000, b'x');
    frame.extend_from_slice(b"\"}}");
    client.handle_input(now, Bytes::from(frame));
    assert!(matches!(
        client.poll_event(),
        Some(Event::Completed { id: done, outcome: Outcome::Error(e) })
            if done == id && e.message.contains("response of 10003 bytes exceeds the 4 KiB limit")
    ));
    assert_eq!(client.pending_outbound(), 0);
}

#[test]
fn an_unmatched_response_raises_an_event_naming_the_other_type() {
    let mut pair = connected(V::V2025_06_18);
    let now = pair.now();
    let client = &mut pair.client;
    let [id] = send_tools_lists(client, now);
    let number = id.as_number().expect("client ids are numbers");
    let wrong = format!(r#"{{"jsonrpc":"2.0","id":"{number}","result":{{"tools":[]}}}}"#);
    feed(client, now, &wrong);
    assert_eq!(
        client.poll_event(),
        Some(Event::UnmatchedResponse {
            id: RequestId::string(number.to_string()),
            pending_other_type: Some(id.clone()),
        })
    );
    feed(
        client,
        now,
        r#"{"jsonrpc":"2.0","id":"nobody","result":{}}"#,
    );
    assert_eq!(
        client.poll_event(),
        Some(Event::UnmatchedResponse {
            id: RequestId::string("nobody"),
            pending_other_type: None,
        })
    );
    assert_eq!(client.stats().unknown_responses_dropped, 2);
    assert_eq!(client.pending_outbound(), 1, "the request still waits");
}

/// Sends `N` `tools/list` requests from `client` and settles its outbox and events, so that the
/// next event can only come from what the test feeds in.
fn send_tools_lists<const N: usize>(client: &mut Session, now: Instant) -> [RequestId; N] {
    let ids = std::array::from_fn(|_| {
        client
            .send_request(now, "tools/list", None, RequestOptions::default())
            .unwrap()
    });
    drain(client);
    while client.poll_event().is_some() {}
    ids
}

/// The first bytes of a response frame to `id`: `{"jsonrpc":"2.0","id":<id>` then `rest`.
fn response_starting(id: &RequestId, rest: &[u8]) -> Vec<u8> {
    let mut frame = b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec();
    id.write_json(&mut frame);
    frame.extend_from_slice(rest);
    frame
}

#[test]
fn an_unreadable_response_fails_the_request_its_first_bytes_name_at_once() {
    let mut pair = connected(V::V2025_06_18);
    let now = pair.now();
    let client = &mut pair.client;
    let [first, second] = send_tools_lists(client, now);
    // A byte that is not UTF-8, then a body cut short.
    for (id, tail) in [
        (&second, &b",\"result\":{\"x\":\"\xff\"}}"[..]),
        (&first, &b",\"result\":{\"tools\":["[..]),
    ] {
        client.handle_input(now, Bytes::from(response_starting(id, tail)));
        match client.poll_event() {
            Some(Event::Completed {
                id: done,
                outcome: Outcome::Error(e),
            }) => {
                assert_eq!(&done, id);
                assert!(
                    e.message.starts_with("the response could not be read: "),
                    "{}",
                    e.message
                );
            }
            other => panic!("expected request {id} to fail, got {other:?}"),
        }
    }
    assert_eq!(client.pending_outbound(), 0);
    assert!(drain(client).is_empty(), "a response is never answered");
}

#[test]
fn responses_in_a_batch_without_batches_fail_their_requests_at_once() {
    let mut pair = connected(V::V2025_06_18);
    let now = pair.now();
    let client = &mut pair.client;
    let [first, second] = send_tools_lists(client, now);
    let batch = format!(
        r#"[{{"jsonrpc":"2.0","id":{first},"result":{{"tools":[]}}}},{{"jsonrpc":"2.0","id":{second},"result":{{"tools":[]}}}}]"#
    );
    let _ = feed(client, now, &batch);
    for id in [&first, &second] {
        assert!(matches!(
            client.poll_event(),
            Some(Event::Completed { id: done, outcome: Outcome::Error(e) })
                if &done == id && e.message.contains("came in a batch")
        ));
    }
    assert_eq!(client.pending_outbound(), 0);
}

/// A peer that writes garbage without reading gets an id-less error for the first lines only,
/// the last of them saying so; the rest are counted. A readable frame starts the count again.
#[test]
fn unreadable_frames_in_a_row_are_answered_up_to_the_limit() {
    let mut pair = connected(V::V2025_06_18);
    let now = pair.now();
    let client = &mut pair.client;
    let max = mcp_sansio::session::MAX_UNREADABLE_ANSWERED;
    let mut out = Vec::new();
    for n in 0..1000u32 {
        let garbage = [b'\xff', b'{', (n % 251) as u8, b'\x80'];
        out.extend(feed_bytes(client, now, &garbage));
    }
    assert_eq!(out.len(), max as usize);
    assert!(out.iter().all(|e| e["id"].is_null()), "{out:?}");
    let last = out.last().unwrap()["error"]["message"].as_str().unwrap();
    assert!(last.contains("the next ones are not answered"), "{last}");
    assert_eq!(client.stats().invalid_frames, 1000);
    assert_eq!(
        client.stats().invalid_frames_unanswered,
        1000 - u64::from(max)
    );
    let _ = feed(
        client,
        now,
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}"#,
    );
    assert_eq!(feed_bytes(client, now, b"\xff").len(), 1);
}
