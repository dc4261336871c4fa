//! Unit tests of the client transport with scripted HTTP answers.

use std::time::{Duration, Instant};

use bytes::Bytes;

use super::*;

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
const UNREADABLE: &str = "the response could not be read: ";
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn sends(t: &mut HttpClient) -> Vec<OutgoingRequest> {
    let mut out = Vec::new();
    while let Some(action) = t.poll_action() {
        if let Action::Send(r) = action {
            out.push(r);
        }
    }
    out
}

fn frames(t: &mut HttpClient) -> Vec<String> {
    let mut out = Vec::new();
    while let Some((f, _)) = t.poll_frame() {
        out.push(String::from_utf8(f.to_vec()).unwrap());
    }
    out
}

/// The default configuration with `change` made.
fn config_with(change: impl FnOnce(&mut HttpClientConfig)) -> HttpClientConfig {
    let mut config = HttpClientConfig::default();
    change(&mut config);
    config
}

/// The one frame the transport delivers now.
fn one_frame(t: &mut HttpClient) -> String {
    let mut out = frames(t);
    assert_eq!(out.len(), 1, "{out:?}");
    out.remove(0)
}

/// Asserts that `frame` holds each of `parts`.
fn assert_holds(frame: &str, parts: &[&str]) {
    for part in parts {
        assert!(frame.contains(part), "{part} in {frame}");
    }
}

/// Hands the text `frame` to the transport as `kind`.
fn transmit(t: &mut HttpClient, now: Instant, frame: &'static str, kind: TransmitKind) {
    t.handle_transmit(now, Bytes::from_static(frame.as_bytes()), kind);
}

/// A transport that sent `initialize` and got the head of a JSON answer naming session
/// `session`: the transport and the `initialize` request.
fn initializing(
    now: Instant,
    config: HttpClientConfig,
    session: &str,
) -> (HttpClient, OutgoingRequest) {
    let mut t = HttpClient::new(config);
    transmit(&mut t, now, INIT, TransmitKind::Request);
    let init = sends(&mut t).remove(0);
    let head = [
        ("content-type", "application/json"),
        ("mcp-session-id", session),
    ];
    t.handle_response_head(now, init.id, 200, head);
    (t, init)
}

/// A transport whose handshake is done with session `s1` at 2025-11-25.
fn ready(now: Instant, config: HttpClientConfig) -> HttpClient {
    let (mut t, init) = initializing(now, config, "s1");
    let result = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}"#;
    t.handle_response_body(now, init.id, Bytes::copy_from_slice(result.as_bytes()));
    t.handle_response_end(now, init.id);
    assert_eq!(frames(&mut t), vec![result.to_owned()]);
    transmit(&mut t, now, INITIALIZED, TransmitKind::Notification);
    let post = sends(&mut t).remove(0);
    t.handle_response_head(now, post.id, 202, []);
    t.handle_response_end(now, post.id);
    let get = sends(&mut t).remove(0);
    assert_eq!(get.method, HttpMethod::Get);
    // The standalone stream opens (and stays open); held messages flow after its head.
    t.handle_response_head(now, get.id, 200, [("content-type", "text/event-stream")]);
    t
}

fn call(t: &mut HttpClient, now: Instant, id: u32) -> OutgoingRequest {
    let frame = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{}}}}"#);
    t.handle_transmit(now, Bytes::from(frame), TransmitKind::Request);
    sends(t).remove(0)
}

/// A call of `id` answered with `status`, no headers and no body: the frames delivered.
fn answered_empty(t: &mut HttpClient, now: Instant, id: u32, status: u16) -> Vec<String> {
    let req = call(t, now, id);
    t.handle_response_head(now, req.id, status, []);
    t.handle_response_end(now, req.id);
    frames(t)
}

/// A transport ready at `now` with `config` and a call of `id` whose answer has a 200 head of
/// `content_type`: the transport and the call.
fn answering(
    now: Instant,
    config: HttpClientConfig,
    id: u32,
    content_type: &str,
) -> (HttpClient, OutgoingRequest) {
    let mut t = ready(now, config);
    let req = call(&mut t, now, id);
    t.handle_response_head(now, req.id, 200, [("content-type", content_type)]);
    (t, req)
}

#[test]
fn an_http_error_ends_the_request_with_the_servers_message() {
    let now = Instant::now();
    let mut t = ready(now, HttpClientConfig::default());
    let req = call(&mut t, now, 7);
    t.handle_response_head(now, req.id, 500, [("content-type", "application/json")]);
    t.handle_response_body(
        now,
        req.id,
        Bytes::copy_from_slice(
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"boom"}}"#,
        ),
    );
    t.handle_response_end(now, req.id);
    let out = one_frame(&mut t);
    assert_holds(
        &out,
        &[r#""id":7"#, r#"HTTP 500: \"boom\""#, r#""httpStatus":500"#],
    );
}

#[test]
fn an_http_error_quotes_the_servers_text() {
    let now = Instant::now();
    let mut t = ready(now, HttpClientConfig::default());
    let req = call(&mut t, now, 7);
    t.handle_response_head(now, req.id, 502, [("content-type", "text/plain")]);
    t.handle_response_body(now, req.id, Bytes::from_static(b"bad\x1b[2J gateway"));
    t.handle_response_end(now, req.id);
    let out: serde_json::Value = serde_json::from_str(&one_frame(&mut t)).unwrap();
    assert_eq!(
        out["error"]["message"],
        r#"HTTP 502: "bad\u{1b}[2J gateway""#
    );
}

#[test]
fn a_refused_reinitialization_quotes_the_servers_message() {
    let now = Instant::now();
    let mut t = ready(now, HttpClientConfig::default());
    let req = call(&mut t, now, 5);
    t.handle_response_head(now, req.id, 404, []);
    t.handle_response_end(now, req.id);
    let init = sends(&mut t)
        .into_iter()
        .find(|r| r.method == HttpMethod::Post)
        .expect("the initialize is replayed");
    t.handle_response_head(now, init.id, 200, [("content-type", "application/json")]);
    let refusal = br#"{"jsonrpc":"2.0","id":0,"error":{"code":-32600,"message":"no\u001b[2J"}}"#;
    t.handle_response_body(now, init.id, Bytes::from_static(refusal));
    t.handle_response_end(now, init.id);
    let reason = std::iter::from_fn(|| t.poll_event())
        .find_map(|e| match e {
            TransportEvent::SessionLost { reason } => Some(reason),
            _ => None,
        })
        .expect("the session is lost");
    assert!(reason.ends_with(r#" "no\u{1b}[2J""#), "{reason}");
}

#[test]
fn a_202_to_a_request_ends_it_with_an_error() {
    let now = Instant::now();
    let mut t = ready(now, HttpClientConfig::default());
    let out = answered_empty(&mut t, now, 3, 202);
    assert_holds(&out[0], &["202"]);
}

#[test]
fn resumption_backs_off_and_gives_up_after_the_bounded_attempts() {
    let now = Instant::now();
    let config = config_with(|c| c.max_resume_attempts = 3);
    let (mut t, req) = answering(now, config, 5, "text/event-stream");
    let primed = b"id: e1\nretry: 200\ndata:\n\n";
    t.handle_response_body(now, req.id, Bytes::copy_from_slice(primed));
    t.handle_response_end(now, req.id);
    assert!(frames(&mut t).is_empty());
    // 200 ms (the server's retry), then 200, 400 after attempts that brought nothing.
    let mut at = now;
    for delay in [200, 200, 400] {
        let due = t.poll_timeout().expect("a reconnection is scheduled");
        assert_eq!(due - at, Duration::from_millis(delay));
        at = due;
        t.handle_timeout(at);
        let get = sends(&mut t).remove(0);
        assert_eq!(get.method, HttpMethod::Get);
        assert_eq!(get.header("Last-Event-ID"), Some("e1"));
        t.handle_response_failed(at, get.id, "refused");
    }
    assert_eq!(t.poll_timeout(), None);
    assert_holds(&one_frame(&mut t), &[r#""id":5"#, "gave up"]);
}

/// Found by the simulator (tests/sim/http_client.rs, seed 21 with `max_exchanges` 6): a
/// stream waiting to reconnect did not count against `max_exchanges`, so new requests took
/// its place and the reconnection then went over the limit.
#[test]
fn a_stream_waiting_to_reconnect_counts_against_max_exchanges() {
    let now = Instant::now();
    let config = config_with(|c| c.max_exchanges = 3);
    // The standalone GET is one exchange; two calls fill the limit.
    let mut t = ready(now, config);
    let first = call(&mut t, now, 1);
    let _second = call(&mut t, now, 2);
    assert_eq!(t.exchanges_in_flight(), 3);
    t.handle_response_head(now, first.id, 200, [("content-type", "text/event-stream")]);
    t.handle_response_body(
        now,
        first.id,
        Bytes::copy_from_slice(b"id: 7-1\nretry: 100\ndata:\n\n"),
    );
    t.handle_response_failed(now, first.id, "reset");
    assert_eq!(t.exchanges_in_flight(), 2);
    // The third call finds the limit reached: the reconnection of the first holds a place.
    let frame = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}"#;
    transmit(&mut t, now, frame, TransmitKind::Request);
    assert!(sends(&mut t).is_empty(), "the third call was sent");
    assert_holds(&one_frame(&mut t), &[r#""id":3"#, "too many"]);
    let due = t.poll_timeout().expect("the reconnection is scheduled");
    t.handle_timeout(due);
    let get = sends(&mut t).remove(0);
    assert_eq!(get.header("Last-Event-ID"), Some("7-1"));
    assert_eq!(t.exchanges_in_flight(), 3, "over max_exchanges");
}

#[test]
fn a_stream_without_event_ids_cannot_resume_and_fails_once() {
    let now = Instant::now();
    let (mut t, req) = answering(now, HttpClientConfig::default(), 9, "text/event-stream");
    let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
    t.handle_response_body(now, req.id, Bytes::from(format!("data: {note}\n\n")));
    t.handle_response_failed(now, req.id, "reset");
    let out = frames(&mut t);
    assert_eq!(out.len(), 2);
    assert_holds(&out[1], &[r#""id":9"#, "reset"]);
    assert_eq!(t.poll_timeout(), None);
}

#[test]
fn a_400_on_the_standalone_get_is_tolerated_without_retries() {
    let now = Instant::now();
    let (mut t, init) = initializing(now, HttpClientConfig::default(), "s");
    t.handle_response_body(
        now,
        init.id,
        Bytes::copy_from_slice(
            br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}"#,
        ),
    );
    t.handle_response_end(now, init.id);
    // Held behind the handshake: a ping sent before `initialized` went out.
    transmit(&mut t, now, INITIALIZED, TransmitKind::Notification);
    transmit(&mut t, now, PING, TransmitKind::Request);
    let posts = sends(&mut t);
    assert_eq!(
        posts.len(),
        1,
        "the ping waits for the initialized notification's answer"
    );
    t.handle_response_head(now, posts[0].id, 202, []);
    let next = sends(&mut t);
    assert_eq!(
        next.len(),
        1,
        "the standalone GET; the ping waits for its head"
    );
    let get = &next[0];
    assert_eq!(get.method, HttpMethod::Get);
    assert_eq!(get.header("MCP-Protocol-Version"), Some("2025-06-18"));
    assert_eq!(t.poll_timeout(), Some(now + Duration::from_secs(1)));
    t.handle_response_head(now, get.id, 400, []);
    let ping = sends(&mut t);
    assert_eq!(ping.len(), 1);
    assert!(ping[0].body.starts_with(br#"{"jsonrpc":"2.0","id":1"#));
    t.handle_response_end(now, get.id);
    assert_eq!(
        t.poll_event(),
        Some(TransportEvent::StandaloneStreamUnavailable { status: Some(400) })
    );
    assert_eq!(t.poll_timeout(), None);
}

#[test]
fn a_standalone_get_without_a_head_holds_messages_only_for_standalone_wait() {
    let now = Instant::now();
    let (mut t, init) = initializing(now, HttpClientConfig::default(), "s");
    t.handle_response_end(now, init.id);
    transmit(&mut t, now, INITIALIZED, TransmitKind::Notification);
    let post = sends(&mut t).remove(0);
    t.handle_response_head(now, post.id, 202, []);
    assert_eq!(sends(&mut t).len(), 1, "the GET");
    transmit(&mut t, now, PING, TransmitKind::Request);
    assert!(sends(&mut t).is_empty());
    let at = now + Duration::from_secs(1);
    assert_eq!(t.poll_timeout(), Some(at));
    t.handle_timeout(at);
    assert_eq!(sends(&mut t).len(), 1, "the ping goes after the wait");
}

#[test]
fn an_oversized_json_body_fails_the_request() {
    let now = Instant::now();
    let config = config_with(|c| c.max_body = 70);
    let (mut t, req) = answering(now, config, 4, "application/json");
    t.handle_response_body(now, req.id, Bytes::copy_from_slice(&[b' '; 71]));
    // Failed at once, before the body ends, and the exchange is let go of.
    assert_holds(
        &one_frame(&mut t),
        &["the 70 bytes size limit", r#""id":4"#],
    );
    assert_eq!(t.poll_action(), Some(Action::Abort(req.id)));
    t.handle_response_end(now, req.id);
    assert_eq!(t.stats().oversized, 1);
    assert!(frames(&mut t).is_empty());
}

#[test]
fn an_oversized_sse_event_fails_the_request_at_once() {
    let now = Instant::now();
    let config = config_with(|c| c.max_event_size = 80);
    let (mut t, req) = answering(now, config, 5, "text/event-stream");
    // A notification that fits is delivered; the stream stays open.
    let note = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n\n";
    t.handle_response_body(now, req.id, Bytes::from(note));
    assert_holds(&one_frame(&mut t), &["notifications/x"]);
    assert_eq!(t.poll_action(), None);
    // An event past the limit, still unterminated: the request ends now, naming the limit.
    let big = format!("data: {}", "x".repeat(100));
    t.handle_response_body(now, req.id, Bytes::from(big));
    let limit = "an event of the response stream exceeds the 80 bytes size limit";
    assert_holds(&one_frame(&mut t), &[limit, r#""id":5"#]);
    assert_eq!(t.poll_action(), Some(Action::Abort(req.id)));
    assert_eq!(t.stats().oversized, 1);
    // What the server still sends on the aborted exchange is ignored.
    t.handle_response_body(now, req.id, Bytes::from_static(b"\n\n"));
    t.handle_response_end(now, req.id);
    assert!(frames(&mut t).is_empty());
    assert_eq!(t.stats().requests_failed, 1);
}

/// From the `http_client` fuzz target: a JSON body that is not the awaited response (here a
/// notification) must not count as the answer, or the request would never end.
#[test]
fn a_json_body_without_the_response_ends_the_request_with_an_error() {
    let now = Instant::now();
    let (mut t, post) = answering(now, HttpClientConfig::default(), 7, "application/json");
    let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
    t.handle_response_body(now, post.id, Bytes::copy_from_slice(note.as_bytes()));
    t.handle_response_end(now, post.id);
    let out = frames(&mut t);
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0], note);
    assert_holds(&out[1], &[r#""id":7"#, "-32000"]);
}

/// The head of a transmitted request read off the encoder's shape agrees with the full decode,
/// and anything else is left to the decode.
#[test]
fn request_heads_read_in_place_agree_with_the_decode() {
    let decoded = |frame: &Bytes| match jsonrpc::decode_message(frame) {
        Ok(Message::Request(r)) => Some((r.id, r.method == jsonrpc::INITIALIZE)),
        _ => None,
    };
    let mut frames = Vec::new();
    for id in [
        RequestId::unsigned(0),
        RequestId::unsigned(u64::MAX),
        RequestId::number(-5),
        RequestId::number(i64::MIN),
        RequestId::string("s-1"),
    ] {
        for method in ["initialize", "tools/call", "initialized", "init\"ialize"] {
            let mut buf = Vec::new();
            jsonrpc::encode_request(&mut buf, &id, method, None);
            frames.push(Bytes::from(buf));
        }
    }
    for text in [
        r#"{"jsonrpc":"2.0","id":7,"method":"initialize"}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"initi\u0061lize"}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":-,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
        r#"{"jsonrpc":"2.0","method":"ping","id":7}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"#,
        r#"[{"jsonrpc":"2.0","id":7,"method":"ping"}]"#,
    ] {
        frames.push(Bytes::from(text));
    }
    for frame in &frames {
        assert_eq!(request_head(frame), decoded(frame), "{frame:?}");
    }
    // The in-place reader did answer for the encoder's own numeric-id requests.
    let mut buf = Vec::new();
    jsonrpc::encode_request(&mut buf, &RequestId::unsigned(9), "initialize", None);
    assert_eq!(
        encoded_request_head(&buf),
        Some((RequestId::unsigned(9), true))
    );
}

/// The media type of a response is matched without case and without its parameters.
#[test]
fn response_media_types_match_without_case() {
    use exchange::BodyState;
    let kind = |status: u16, content_type: &str| {
        let mut ex = Exchange::new(Purpose::Message, false);
        ex.start_body(status, content_type, 1024);
        match ex.body {
            BodyState::Json(_) | BodyState::JsonChunk(_) => "json",
            BodyState::Sse(_) => "sse",
            BodyState::Error(_) => "error",
            BodyState::Ignore => "ignore",
            BodyState::Pending => "pending",
        }
    };
    assert_eq!(kind(200, "application/json"), "json");
    assert_eq!(kind(200, " Application/JSON ; charset=utf-8"), "json");
    assert_eq!(kind(200, "application/vnd.example+JSON"), "json");
    assert_eq!(kind(200, "TEXT/Event-Stream"), "sse");
    assert_eq!(kind(200, "text/event-stream;charset=utf-8"), "sse");
    assert_eq!(kind(200, "text/plain"), "ignore");
    assert_eq!(kind(200, "json"), "ignore");
    assert_eq!(kind(200, "é+json"), "json");
    assert_eq!(kind(200, "éjson"), "ignore");
    assert_eq!(kind(200, ""), "ignore");
    assert_eq!(kind(404, "application/json"), "error");
}

/// A JSON body handed over as shared bytes in one chunk reaches the machine as the same bytes
/// (no copy); a body in several chunks, bytes or slices, arrives joined; the size limit holds.
#[test]
fn a_json_body_in_shared_bytes_is_taken_as_is() {
    let body =
        Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#);
    let mut ex = Exchange::new(Purpose::Message, false);
    ex.start_body(200, "application/json", 1024);
    let mut out = Vec::new();
    ex.push_body_bytes(body.clone(), 1 << 20, &mut out);
    ex.end_body(&mut out);
    assert_eq!(out, vec![body.clone()]);
    assert_eq!(out[0].as_ptr(), body.as_ptr(), "not copied");

    let (head, tail) = body.split_at(10);
    for second_as_bytes in [false, true] {
        let mut ex = Exchange::new(Purpose::Message, false);
        ex.start_body(200, "application/json", 1024);
        let mut out = Vec::new();
        ex.push_body_bytes(Bytes::copy_from_slice(head), 1 << 20, &mut out);
        if second_as_bytes {
            ex.push_body_bytes(Bytes::copy_from_slice(tail), 1 << 20, &mut out);
        } else {
            ex.push_body(tail, 1 << 20, &mut out);
        }
        ex.end_body(&mut out);
        assert_eq!(out, vec![body.clone()]);
    }

    let mut ex = Exchange::new(Purpose::Message, false);
    ex.start_body(200, "application/json", 1024);
    let mut out = Vec::new();
    ex.push_body_bytes(body.clone(), 8, &mut out);
    ex.end_body(&mut out);
    assert!(out.is_empty());
    assert!(ex.oversized);
}

/// The list a response's completed frames pass through is kept between responses (no list
/// allocated per response), and not once a chunk of many events made it large.
#[test]
fn the_completed_frames_list_is_reused_and_bounded() {
    let now = Instant::now();
    let mut t = ready(now, HttpClientConfig::default());
    let mut kept = None;
    for id in [7, 8, 9] {
        let req = call(&mut t, now, id);
        t.handle_response_head(now, req.id, 200, [("content-type", "application/json")]);
        let answer = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
        t.handle_response_body(now, req.id, Bytes::copy_from_slice(answer.as_bytes()));
        t.handle_response_end(now, req.id);
        assert_eq!(frames(&mut t), vec![answer]);
        assert!(t.completed.is_empty());
        let at = t.completed.as_ptr();
        assert_eq!(*kept.get_or_insert(at), at, "the same list every response");
    }

    let req = call(&mut t, now, 10);
    t.handle_response_head(now, req.id, 200, [("content-type", "text/event-stream")]);
    let note = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
    let mut events = String::new();
    for _ in 0..3 * MAX_KEPT_COMPLETED {
        events.push_str(&format!("data: {note}\n\n"));
    }
    let answer = r#"{"jsonrpc":"2.0","id":10,"result":{}}"#;
    events.push_str(&format!("data: {answer}\n\n"));
    t.handle_response_body(now, req.id, Bytes::copy_from_slice(events.as_bytes()));
    t.handle_response_end(now, req.id);
    let got = frames(&mut t);
    assert_eq!(got.len(), 3 * MAX_KEPT_COMPLETED + 1);
    assert_eq!(got.last().map(String::as_str), Some(answer));
    assert!(t.completed.capacity() <= MAX_KEPT_COMPLETED);
}

/// The handshake frames kept for a re-initialisation are copies: a frame handed in as a view
/// into a larger block (the HTTP adapter carves frames from one) does not pin that block.
#[test]
fn the_kept_handshake_frames_are_copies_of_their_text() {
    let now = Instant::now();
    let mut t = HttpClient::new(HttpClientConfig::default());
    let block = Bytes::from(format!("{INIT}tail of a larger block"));
    let init = block.slice(..INIT.len());
    t.handle_transmit(now, init.clone(), TransmitKind::Request);
    let sent = sends(&mut t).remove(0);
    assert_eq!(sent.body, init, "the request itself carries the frame");
    let kept = t.init_frame.as_ref().unwrap();
    assert_eq!(kept, &init);
    assert!(
        !std::ptr::eq(kept.as_ptr(), init.as_ptr()),
        "the kept frame has its own bytes"
    );
    let mut t = ready(now, HttpClientConfig::default());
    let note = Bytes::from(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    t.handle_transmit(now, note.clone(), TransmitKind::Notification);
    let kept = t.initialized_frame.as_ref().unwrap();
    assert_eq!(kept, &note);
    assert!(!std::ptr::eq(kept.as_ptr(), note.as_ptr()));
}

/// A 200 whose type cannot carry JSON-RPC (an HTML page, no type at all) fails the request
/// with an error quoting the type, not as a stream that ended early.
#[test]
fn a_response_of_another_type_fails_the_request_naming_it() {
    let now = Instant::now();
    let html = "text/html; charset=utf-8";
    let (mut t, req) = answering(now, HttpClientConfig::default(), 6, html);
    t.handle_response_body(now, req.id, Bytes::from_static(b"<html>hi</html>"));
    t.handle_response_end(now, req.id);
    let named = r#"Content-Type \"text/html; charset=utf-8\", neither"#;
    assert_holds(&one_frame(&mut t), &[r#""id":6"#, named]);
    let out = answered_empty(&mut t, now, 7, 200);
    assert_holds(&out[0], &["has no Content-Type"]);
}

/// A JSON body that does not decode but whose first bytes answer the request ends the request
/// once, with an error naming why; the machine never sees the unreadable frame, so it does not
/// end the request a second time.
#[test]
fn an_unreadable_answer_ends_its_request_once() {
    let now = Instant::now();
    let (mut t, req) = answering(now, HttpClientConfig::default(), 8, "application/json");
    let body = b"{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{\"x\":\"\xff\"}}";
    t.handle_response_body(now, req.id, Bytes::from_static(body));
    t.handle_response_end(now, req.id);
    let out = one_frame(&mut t);
    assert_holds(&out, &[r#""id":8"#, r#""code":-32000"#, UNREADABLE]);
}

/// On an SSE stream the first unreadable answer ends the request at once; a second one for the
/// same request, and one naming another request, pass on as they came (the machine judges
/// them), and the end of the stream adds nothing.
#[test]
fn an_unreadable_event_ends_its_request_at_once() {
    let now = Instant::now();
    let (mut t, req) = answering(now, HttpClientConfig::default(), 9, "text/event-stream");
    let cut = r#"data: {"jsonrpc":"2.0","id":9,"result":{"content":[{"#;
    t.handle_response_body(now, req.id, Bytes::from(format!("{cut}\n\n")));
    assert_holds(&one_frame(&mut t), &[r#""id":9"#, UNREADABLE]);
    let other = r#"{"jsonrpc":"2.0","id":5,"result":"#;
    let again = format!("{cut}\n\ndata: {other}\n\n");
    t.handle_response_body(now, req.id, Bytes::from(again));
    t.handle_response_end(now, req.id);
    let out = frames(&mut t);
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(format!("data: {}", out[0]), cut);
    assert_eq!(out[1], other);
    assert_eq!(t.stats().requests_failed, 1);
}

/// [`ready`] with SSE events of at most `max_event_size` bytes.
fn ready_with_events_of(now: Instant, max_event_size: usize) -> HttpClient {
    let config = HttpClientConfig {
        max_event_size,
        ..HttpClientConfig::default()
    };
    ready(now, config)
}

#[test]
fn an_oversized_event_on_the_standalone_stream_is_reported_with_the_limit() {
    let now = Instant::now();
    let mut t = ready_with_events_of(now, 80);
    let get = t
        .exchanges
        .iter()
        .find(|(_, e)| e.purpose == Purpose::Standalone)
        .map(|(id, _)| *id)
        .expect("the standalone stream");
    let big = format!("data: {}\n\n", "x".repeat(100));
    t.handle_response_body(now, get, Bytes::from(big));
    assert_eq!(
        t.poll_event(),
        Some(TransportEvent::EventTooLarge {
            limit: 80,
            standalone: true,
            dropped: 1
        })
    );
    assert_eq!(t.stats().oversized, 1);
    // The stream goes on: the next event that fits is delivered.
    let note = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n\n";
    t.handle_response_body(now, get, Bytes::from(note));
    assert_eq!(frames(&mut t).len(), 1);
    assert_eq!(t.poll_event(), None);
    assert_eq!(t.poll_action(), None);
}

#[test]
fn an_oversized_event_after_the_response_on_a_post_stream_is_reported() {
    let now = Instant::now();
    let mut t = ready_with_events_of(now, 80);
    let req = call(&mut t, now, 6);
    t.handle_response_head(now, req.id, 200, [("content-type", "text/event-stream")]);
    let answer = "data: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n\n";
    let big = format!("data: {}\n\n", "x".repeat(100));
    t.handle_response_body(now, req.id, Bytes::from(format!("{answer}{big}{big}")));
    assert_eq!(frames(&mut t).len(), 1, "the answer");
    assert_eq!(
        t.poll_event(),
        Some(TransportEvent::EventTooLarge {
            limit: 80,
            standalone: false,
            dropped: 2
        })
    );
    assert_eq!(t.stats().oversized, 2);
    assert_eq!(t.stats().requests_failed, 0);
    t.handle_response_end(now, req.id);
    assert_eq!(t.stats().oversized, 2, "counted once");
}

#[test]
fn a_redirect_fails_the_request_quoting_its_location() {
    let now = Instant::now();
    let mut t = ready(now, HttpClientConfig::default());
    let req = call(&mut t, now, 8);
    let location = format!("http://elsewhere.example/\u{1b}[2J{}", "a".repeat(300));
    t.handle_response_head(now, req.id, 307, [("location", location.as_str())]);
    t.handle_response_end(now, req.id);
    let out = frames(&mut t);
    assert_eq!(out.len(), 1);
    let v: serde_json::Value = serde_json::from_str(&out[0]).unwrap();
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(r#"HTTP 307, a redirect to "http://elsewhere.example/\u{1b}[2Jaaa"#),
        "{message}"
    );
    let cut = format!("... ({} bytes) (not followed", location.len());
    assert!(message.contains(&cut), "{message}");
    assert!(!message.contains('\u{1b}'), "{message}");
    assert_eq!(v["error"]["data"]["httpStatus"], 307);
}
