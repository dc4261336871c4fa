//! Fuzz body for the Streamable HTTP client transport (`HttpClient`) fed an arbitrary sequence
//! of operations: messages from the client machine (requests with fresh ids, notifications,
//! the handshake), response heads with arbitrary status, content type and session id, body
//! chunks (JSON and SSE with ids and `retry`, cut anywhere, with junk), ends, failures, time
//! jumps and `close`. Invariants: no panic; requests are well formed; exchanges in flight stay
//! within `max_exchanges`; no deadline at or before `now` survives `handle_timeout`; every
//! request gets at most one synthesized transport error, and after `close` every request has
//! ended (a response reached the machine) and no exchange is left.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::ops::{self, Cursor};
use crate::http::client::{HttpClient, HttpClientConfig, TRANSPORT_ERROR};
use crate::http::HttpMethod;
use crate::jsonrpc::{self, Message, RequestId};
use crate::outgoing::{Action, ExchangeId, OutgoingRequest};
use crate::session::TransmitKind;

/// One exchange the fuzz "server" is answering.
struct Open {
    request: OutgoingRequest,
    head: bool,
    /// The next SSE event number on this exchange.
    seq: u32,
}

/// What happened to one request the machine sent.
#[derive(Default)]
struct Outcome {
    responses: usize,
    synthesized: usize,
}

struct World {
    client: HttpClient,
    max_exchanges: usize,
    now: Instant,
    open: BTreeMap<ExchangeId, Open>,
    /// Requests sent, by numeric id.
    requests: BTreeMap<u64, Outcome>,
    next_id: u64,
}

const STATUSES: &[u16] = &[200, 200, 200, 202, 400, 404, 405, 500];
const TYPES: &[&str] = &[
    "application/json",
    "text/event-stream",
    "text/event-stream; charset=utf-8",
    "text/plain",
    "",
];
const SESSION_IDS: &[&str] = &["s-1", "s-2", "", "bad id\u{7f}"];
const RESULTS: &[&str] = &[
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#,
    r#"{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#,
    r#"{}"#,
];

fn config(c: &mut Cursor<'_>) -> HttpClientConfig {
    let b = c.byte();
    HttpClientConfig {
        max_body: if b & 1 == 0 { 1 << 16 } else { 64 },
        max_event_size: if b & 2 == 0 { 1 << 16 } else { 48 },
        max_exchanges: 2 + usize::from((b >> 2) % 6),
        max_held: 1 + usize::from((b >> 4) % 4),
        default_retry: Duration::from_millis(100),
        max_retry: Duration::from_secs(2),
        max_resume_attempts: 1 + u32::from((b >> 5) % 3),
        open_standalone_stream: b & 128 == 0,
        standalone_wait: Duration::from_millis(500),
        reinitialize: b & 64 == 0,
        max_reinitializations: 2,
        ..HttpClientConfig::default()
    }
}

/// An `HttpClient` fed arbitrary transmits and responses. See the module docs.
pub fn http_client(data: &[u8]) {
    let mut c = Cursor::new(data);
    let config = config(&mut c);
    let mut w = World {
        max_exchanges: config.max_exchanges,
        client: HttpClient::new(config),
        now: Instant::now(),
        open: BTreeMap::new(),
        requests: BTreeMap::new(),
        next_id: 1,
    };
    while !c.is_empty() {
        match c.below(12) {
            0..=2 => transmit(&mut c, &mut w),
            3 | 4 => head(&mut c, &mut w),
            5..=7 => body(&mut c, &mut w),
            8 => {
                if let Some(id) = pick(&mut c, &w) {
                    w.open.remove(&id);
                    w.client.handle_response_end(w.now, id);
                }
            }
            9 => {
                if let Some(id) = pick(&mut c, &w) {
                    w.open.remove(&id);
                    w.client.handle_response_failed(w.now, id, "reset");
                }
            }
            10 => {
                w.now += c.pick(ops::JUMPS);
                w.client.handle_timeout(w.now);
                if let Some(t) = w.client.poll_timeout() {
                    assert!(t > w.now, "a deadline at or before now survived");
                }
            }
            _ => {
                if c.byte() < 16 {
                    w.client.close(w.now);
                }
            }
        }
        drain(&mut w);
        assert!(
            w.client.exchanges_in_flight() <= w.max_exchanges + 2,
            "exchanges in flight over the limit"
        );
    }
    finish(&mut w);
}

fn transmit(c: &mut Cursor<'_>, w: &mut World) {
    let [init, initialized] = ops::client_handshake();
    let (frame, kind) = match c.below(6) {
        0 => {
            let id = w.next_id;
            w.next_id += 1;
            w.requests.insert(id, Outcome::default());
            (with_id(&init, id), TransmitKind::Request)
        }
        1 => (initialized, TransmitKind::Notification),
        2 => (
            Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#),
            TransmitKind::Notification,
        ),
        3 => (
            Bytes::from_static(br#"{"jsonrpc":"2.0","id":"srv","result":{}}"#),
            TransmitKind::Response,
        ),
        _ => {
            let id = w.next_id;
            w.next_id += 1;
            w.requests.insert(id, Outcome::default());
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t"}}}}"#
            );
            (Bytes::from(text), TransmitKind::Request)
        }
    };
    w.client.handle_transmit(w.now, frame, kind);
}

/// The handshake's `initialize` with a numeric id instead of `"init"`.
fn with_id(init: &Bytes, id: u64) -> Bytes {
    let text = String::from_utf8_lossy(init).replace(r#""id":"init""#, &format!(r#""id":{id}"#));
    Bytes::from(text)
}

fn pick(c: &mut Cursor<'_>, w: &World) -> Option<ExchangeId> {
    let ids: Vec<ExchangeId> = w.open.keys().copied().collect();
    (!ids.is_empty()).then(|| ids[c.below(ids.len())])
}

fn head(c: &mut Cursor<'_>, w: &mut World) {
    let Some(id) = pick(c, w) else { return };
    let status = c.pick(STATUSES);
    let content_type = c.field(TYPES);
    let session_id = (c.byte() & 1 == 0).then(|| c.field(SESSION_IDS));
    let mut headers = vec![("content-type", content_type.as_str())];
    if let Some(sid) = &session_id {
        headers.push(("mcp-session-id", sid.as_str()));
    }
    if let Some(open) = w.open.get_mut(&id) {
        if open.head {
            return;
        }
        open.head = true;
    }
    w.client.handle_response_head(w.now, id, status, headers);
}

/// One response frame: a response to a sent request (or an unknown id), or a notification.
fn message(c: &mut Cursor<'_>, w: &World, awaited: Option<u64>) -> String {
    let id = match c.below(4) {
        0 | 1 => awaited.unwrap_or(0),
        2 if !w.requests.is_empty() => {
            let ids: Vec<u64> = w.requests.keys().copied().collect();
            ids[c.below(ids.len())]
        }
        _ => 9999,
    };
    match c.below(4) {
        0 => r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}"#.into(),
        1 => format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"no"}}}}"#),
        _ => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{}}}"#, c.pick(RESULTS)),
    }
}

fn body(c: &mut Cursor<'_>, w: &mut World) {
    let Some(id) = pick(c, w) else { return };
    let awaited = w.open.get(&id).and_then(|o| awaited(&o.request));
    let mut bytes = match c.below(5) {
        0 => message(c, w, awaited).into_bytes(),
        1 => {
            // Junk that never holds a JSON object, so every object the machine sees was
            // written here on purpose.
            c.bytes(24)
                .iter()
                .map(|&b| if b == b'{' { b'x' } else { b })
                .collect()
        }
        _ => {
            let Some(open) = w.open.get_mut(&id) else {
                return;
            };
            open.seq += 1;
            let mut event = String::new();
            match c.below(4) {
                0 => {}
                1 => event.push_str("retry: 50\n"),
                2 => {
                    // An event id of any text on one line.
                    let text = c.field(&["1-1", "0"]).replace(['\n', '\r'], " ");
                    event.push_str(&format!("id: {text}\n"));
                }
                _ => event.push_str(&format!("id: {}-{}\n", id.0, open.seq)),
            }
            let data = message(c, w, awaited);
            event.push_str(&format!("data: {data}\n\n"));
            event.into_bytes()
        }
    };
    if !w.open.get(&id).is_some_and(|o| o.head) {
        return;
    }
    // Cut the chunk: part now, the rest in a second call.
    let cut = c.below(bytes.len() + 1);
    let rest = bytes.split_off(cut);
    w.client
        .handle_response_body(w.now, id, Bytes::copy_from_slice(&bytes));
    w.client
        .handle_response_body(w.now, id, Bytes::copy_from_slice(&rest));
}

/// The numeric id of the request a POST carries.
fn awaited(request: &OutgoingRequest) -> Option<u64> {
    match jsonrpc::decode_message(&request.body) {
        Ok(Message::Request(r)) => r.id.as_number().and_then(|n| u64::try_from(n).ok()),
        _ => None,
    }
}

fn drain(w: &mut World) {
    for _ in 0..10_000 {
        let mut moved = false;
        while let Some(action) = w.client.poll_action() {
            moved = true;
            match action {
                Action::Send(request) => {
                    check_request(w, &request);
                    w.open.insert(
                        request.id,
                        Open {
                            request,
                            head: false,
                            seq: 0,
                        },
                    );
                }
                Action::Abort(id) => {
                    w.open.remove(&id);
                }
            }
        }
        while let Some((frame, _)) = w.client.poll_frame() {
            moved = true;
            note_frame(w, &frame);
        }
        while w.client.poll_event().is_some() {
            moved = true;
        }
        if !moved {
            return;
        }
    }
    panic!("the client transport did not settle");
}

fn check_request(w: &World, request: &OutgoingRequest) {
    match request.method {
        HttpMethod::Post => {
            assert_eq!(
                request.header("Accept"),
                Some("application/json, text/event-stream")
            );
            assert_eq!(request.header("Content-Type"), Some("application/json"));
            ops::check_transmit(&request.body);
        }
        HttpMethod::Get => {
            assert_eq!(request.header("Accept"), Some("text/event-stream"));
            assert!(request.body.is_empty());
        }
        HttpMethod::Delete => assert!(request.header("Mcp-Session-Id").is_some()),
        HttpMethod::Other => panic!("the client sent an unknown method"),
    }
    if let Some(sid) = request.header("Mcp-Session-Id") {
        assert_eq!(Some(sid), w.client.session_id(), "a stale session id");
    }
}

fn note_frame(w: &mut World, frame: &Bytes) {
    // Server bytes pass through as they came (the machine judges them); only responses count.
    let Ok(Message::Response(response)) = jsonrpc::decode_message(frame) else {
        return;
    };
    let synthesized = matches!(&response.outcome, Err(e) if e.code == TRANSPORT_ERROR);
    let id = response.id;
    let Some(n) = id.as_ref().and_then(RequestId::as_number) else {
        return;
    };
    let Some(outcome) = u64::try_from(n).ok().and_then(|n| w.requests.get_mut(&n)) else {
        return;
    };
    if synthesized {
        outcome.synthesized += 1;
        assert!(
            outcome.synthesized <= 1,
            "request {n} got two transport errors"
        );
    } else {
        outcome.responses += 1;
    }
}

/// Closes the transport, answers or fails what is left, and checks every request ended.
fn finish(w: &mut World) {
    w.client.close(w.now);
    drain(w);
    for _ in 0..100 {
        let Some((&id, open)) = w.open.iter().next() else {
            break;
        };
        if open.request.method == HttpMethod::Delete {
            w.open.remove(&id);
            w.client.handle_response_head(w.now, id, 200, []);
            w.client.handle_response_end(w.now, id);
        } else {
            w.open.remove(&id);
            w.client.handle_response_failed(w.now, id, "gone");
        }
        drain(w);
    }
    assert!(w.open.is_empty(), "exchanges left after close");
    assert_eq!(
        w.client.exchanges_in_flight(),
        0,
        "exchanges left after close"
    );
    assert!(w.client.is_closed(), "close did not finish");
    for (id, outcome) in &w.requests {
        assert!(
            outcome.responses + outcome.synthesized > 0,
            "request {id} never ended"
        );
    }
}
