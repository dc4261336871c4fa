//! Fuzz body for the Streamable HTTP `Endpoint` fed an arbitrary sequence of HTTP-shaped
//! requests (method, headers, session ids, `Last-Event-ID`, bodies), body pulls, dropped and
//! closed connections, and time. Invariants: no panic; the session table stays within
//! `max_sessions`; every full body is one JSON object; every SSE body decodes into events
//! whose data is one valid JSON-RPC message and whose ids name the stream and increase; a
//! body that ended stays ended; no deadline at or before `now` survives `handle_timeout`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::app_ops::registry_server;
use super::ops::{self, Cursor};
use super::session_ops::small_config;
use crate::app::runtime::first_poll;
use crate::app::server::Server;
use crate::framing::{SseDecoder, SseItem};
use crate::http::event_id::EventId;
use crate::http::{
    Body, Endpoint, EndpointConfig, HttpMethod, HttpRequestHead, HttpResponse, ResponseMode,
    StreamChunk, StreamId,
};

/// One response body the fuzz body is pulling.
struct Pull {
    sse: Option<SseDecoder>,
    last: Option<EventId>,
    ended: bool,
}

struct World {
    ep: Endpoint<Server>,
    max_sessions: usize,
    now: Instant,
    sids: Vec<String>,
    event_ids: Vec<String>,
    pulls: BTreeMap<StreamId, Pull>,
    random: u8,
}

const VERSIONS: &[&str] = &[
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
    "1999-01-01",
    "",
];
const ACCEPTS: &[&str] = &[
    "application/json, text/event-stream",
    "text/event-stream",
    "application/json",
    "*/*",
    "application/*;q=0.5, text/*",
    "",
];
const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/json; charset=utf-8",
    "text/plain",
    "",
];

fn config(c: &mut Cursor<'_>) -> EndpointConfig {
    let b = c.byte();
    EndpointConfig {
        max_body: if b & 1 == 0 { 4 << 20 } else { 96 },
        max_sessions: 1 + usize::from((b >> 1) % 3),
        idle_timeout: Duration::from_secs(if b & 8 == 0 { 1800 } else { 5 }),
        replay_budget: if b & 16 == 0 { 1 << 20 } else { 200 },
        allow_get: b & 32 == 0,
        stateless: b & 64 != 0 && b & 128 != 0,
        response_mode: match b >> 6 {
            0 => ResponseMode::Auto,
            1 => ResponseMode::AlwaysSse,
            _ => ResponseMode::AlwaysJson,
        },
        ..EndpointConfig::default()
    }
}

/// An endpoint fed arbitrary HTTP-shaped requests and pulls. See the module docs.
pub fn http_endpoint(data: &[u8]) {
    let mut c = Cursor::new(data);
    let ep_config = config(&mut c);
    let max_sessions = ep_config.max_sessions;
    let server_config = small_config(&mut c);
    let mut w = World {
        ep: Endpoint::new(ep_config, move |now| {
            registry_server(server_config.clone(), now)
        }),
        max_sessions,
        now: Instant::now(),
        sids: Vec::new(),
        event_ids: Vec::new(),
        pulls: BTreeMap::new(),
        random: 0,
    };
    while !c.is_empty() {
        match c.below(10) {
            0..=3 => post(&mut c, &mut w),
            4 => get(&mut c, &mut w),
            5 => {
                let method = if c.byte() & 1 == 0 {
                    HttpMethod::Delete
                } else {
                    HttpMethod::Other
                };
                let head = session_head(&mut c, &w, method);
                request(&mut w, &head, Bytes::new());
            }
            6 | 7 => pull(&mut c, &mut w),
            8 => {
                if let Some(conn) = pick_conn(&mut c, &w) {
                    if c.byte() & 1 == 0 {
                        w.ep.stream_closed(conn);
                    } else {
                        let _ = w.ep.close_stream(conn);
                    }
                }
            }
            _ => {
                w.now += c.pick(ops::JUMPS);
                w.ep.handle_timeout(w.now);
                run_jobs(&mut w);
                if let Some(t) = w.ep.poll_timeout() {
                    assert!(
                        t > w.now,
                        "a deadline at or before now survived handle_timeout"
                    );
                }
            }
        }
        assert!(
            w.ep.session_count() <= w.max_sessions,
            "more sessions than max_sessions"
        );
    }
}

fn session_head(c: &mut Cursor<'_>, w: &World, method: HttpMethod) -> HttpRequestHead {
    let mut head = HttpRequestHead::new(method, "/mcp");
    match c.below(8) {
        0 => {}
        1 => head = head.header("Host", "evil.example"),
        2 => {
            head = head
                .header("Host", "localhost")
                .header("Origin", "http://evil.example")
        }
        _ => head = head.header("Host", "127.0.0.1:3000"),
    }
    head = head.header("Accept", c.pick(ACCEPTS));
    if method == HttpMethod::Post {
        head = head.header("Content-Type", c.pick(CONTENT_TYPES));
    }
    match c.below(8) {
        0 => {}
        1 => head = head.header("Mcp-Session-Id", "#stateless-0"),
        2 => head = head.header("Mcp-Session-Id", String::from_utf8_lossy(c.bytes(8))),
        _ if !w.sids.is_empty() => {
            let sid = w.sids[c.below(w.sids.len())].clone();
            head = head.header("Mcp-Session-Id", sid);
        }
        _ => {}
    }
    match c.below(4) {
        0 => {}
        _ => head = head.header("MCP-Protocol-Version", c.pick(VERSIONS)),
    }
    head
}

fn post(c: &mut Cursor<'_>, w: &mut World) {
    let head = session_head(c, w, HttpMethod::Post);
    let [init, initialized] = ops::client_handshake();
    let body = match c.below(6) {
        0 => init,
        1 => initialized,
        2 => Bytes::from(vec![b' '; 100]),
        _ => ops::frame(c),
    };
    request(w, &head, body);
}

fn get(c: &mut Cursor<'_>, w: &mut World) {
    let mut head = session_head(c, w, HttpMethod::Get);
    match c.below(4) {
        0 => {}
        1 => head = head.header("Last-Event-ID", String::from_utf8_lossy(c.bytes(12))),
        _ if !w.event_ids.is_empty() => {
            let id = w.event_ids[c.below(w.event_ids.len())].clone();
            head = head.header("Last-Event-ID", id);
        }
        _ => head = head.header("Last-Event-ID", "1-1"),
    }
    request(w, &head, Bytes::new());
}

fn request(w: &mut World, head: &HttpRequestHead, body: Bytes) {
    w.random = w.random.wrapping_add(1);
    let resp = w.ep.handle_request(w.now, head, body, [w.random; 16]);
    run_jobs(w);
    check_response(w, &resp);
}

fn check_response(w: &mut World, resp: &HttpResponse) {
    assert!((200..600).contains(&resp.status));
    if let Some(sid) = resp.get("mcp-session-id") {
        if !w.sids.iter().any(|s| s == sid) && w.sids.len() < 16 {
            w.sids.push(sid.to_string());
        }
    }
    match &resp.body {
        Body::Full(bytes) => {
            let value: serde_json::Value =
                serde_json::from_slice(bytes).expect("a full body is JSON");
            assert!(value.is_object(), "a full body is one JSON object");
        }
        Body::Empty => {}
        Body::Stream(conn) => {
            let sse = resp.get("content-type") == Some("text/event-stream");
            let pull = Pull {
                sse: sse.then(|| SseDecoder::new(1 << 22)),
                last: None,
                ended: false,
            };
            assert!(
                w.pulls.insert(*conn, pull).is_none(),
                "a stream id was reused"
            );
        }
    }
}

fn pick_conn(c: &mut Cursor<'_>, w: &World) -> Option<StreamId> {
    let conns: Vec<StreamId> = w.pulls.keys().copied().collect();
    (!conns.is_empty()).then(|| conns[c.below(conns.len())])
}

/// Pulls one body until it has nothing more now, checking what comes out.
fn pull(c: &mut Cursor<'_>, w: &mut World) {
    let Some(conn) = pick_conn(c, w) else { return };
    let mut buf = Vec::new();
    for _ in 0..10_000 {
        buf.clear();
        let chunk = w.ep.poll_stream(conn, &mut buf);
        let p = w.pulls.get_mut(&conn).expect("picked");
        match chunk {
            None => return,
            Some(StreamChunk::End) => {
                p.ended = true;
                if w.pulls.len() > 32 {
                    w.pulls.remove(&conn);
                }
                return;
            }
            Some(StreamChunk::Data { len }) => {
                assert!(!p.ended, "data after the end of a body");
                assert_eq!(len, buf.len());
                match &mut p.sse {
                    Some(decoder) => {
                        decoder.push(&buf);
                        check_events(decoder, &mut p.last, &mut w.event_ids);
                    }
                    None => {
                        let value: serde_json::Value =
                            serde_json::from_slice(&buf).expect("a JSON body is JSON");
                        assert!(value.is_object());
                    }
                }
            }
        }
    }
}

fn check_events(decoder: &mut SseDecoder, last: &mut Option<EventId>, ids: &mut Vec<String>) {
    while let Some(item) = decoder.poll_item() {
        let event = match item.expect("the endpoint writes valid SSE") {
            SseItem::Event(e) => e,
            _ => continue,
        };
        if !event.data.is_empty() {
            ops::check_transmit(&event.data);
        }
        if event.id.is_empty() {
            continue;
        }
        let id = EventId::parse(&event.id).expect("event ids are <stream>-<seq>");
        if let Some(prev) = last {
            assert_eq!(prev.stream, id.stream, "one body carries one stream");
            assert!(id.seq > prev.seq, "event ids increase");
        }
        *last = Some(id);
        if ids.len() < 64 {
            ids.push(event.id.clone());
        }
    }
}

fn run_jobs(w: &mut World) {
    while let Some(job) = w.ep.poll_job() {
        let _ = first_poll(job);
    }
}
