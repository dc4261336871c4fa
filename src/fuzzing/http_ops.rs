//! Fuzz body for the Streamable HTTP `Endpoint` fed an arbitrary sequence of HTTP-shaped
//! requests (method, headers, session ids, `Last-Event-ID`, bodies), body pulls, dropped and
//! closed connections, and time. Invariants: no panic; the session table stays within
//! `max_sessions`; every full body is one JSON object; every SSE body decodes into events
//! whose data is one valid JSON-RPC message and whose ids name the stream and increase; a
//! body that ended stays ended; no deadline at or before `now` survives `handle_timeout`.

use bytes::Bytes;

use super::app_ops::registry_factory;
use super::http_server_ops::{self as shared, Wire};
use super::ops::{self, Cursor};
use crate::app::server::Server;
use crate::framing::{SseDecoder, SseItem};
use crate::http::EventId;
use crate::http::{Endpoint, EndpointConfig, HttpMethod, HttpRequestHead, ResponseMode};

/// What the checks keep of one response body: its SSE decoder (`None`: a JSON body) and the
/// last event id it carried.
struct Stream {
    sse: Option<SseDecoder>,
    last: Option<EventId>,
}

struct World {
    wire: Wire<Endpoint<Server>, Stream>,
    max_sessions: usize,
    sids: Vec<String>,
    event_ids: Vec<String>,
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
        replay_budget: if b & 16 == 0 { 1 << 20 } else { 200 },
        allow_get: b & 32 == 0,
        sessionless: b & 64 != 0 && b & 128 != 0,
        response_mode: match b >> 6 {
            0 => ResponseMode::Auto,
            1 => ResponseMode::AlwaysSse,
            _ => ResponseMode::AlwaysJson,
        },
        ..shared::base_config(b)
    }
}

/// An endpoint fed arbitrary HTTP-shaped requests and pulls. See the module docs.
pub fn http_endpoint(data: &[u8]) {
    let mut c = Cursor::new(data);
    let ep_config = config(&mut c);
    let max_sessions = ep_config.max_sessions;
    let server = registry_factory(c.byte());
    let mut w = World {
        wire: Wire::new(Endpoint::new(ep_config, move |now| server.server(now))),
        max_sessions,
        sids: Vec::new(),
        event_ids: Vec::new(),
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
                if let Some(conn) = w.wire.pick_conn(&mut c) {
                    if c.byte() & 1 == 0 {
                        w.wire.server.stream_closed(conn);
                    } else {
                        let _ = w.wire.server.close_stream(conn);
                    }
                }
            }
            _ => w.wire.advance(&mut c),
        }
        assert!(
            w.wire.server.session_count() <= w.max_sessions,
            "more sessions than max_sessions"
        );
    }
}

/// Hosts and origins: loopback (allowed) and foreign (refused).
const HOSTS: &[&str] = &["127.0.0.1:3000", "localhost", "[::1]:3000", "evil.example"];
const ORIGINS: &[&str] = &["http://127.0.0.1:3000", "http://evil.example", "null"];
/// `Mcp-Method` and `Mcp-Name` values: plain and in the base64 sentinel form.
const MCP_METHODS: &[&str] = &["tools/call", "tools/list", "resources/read", "prompts/get"];
const MCP_NAMES: &[&str] = &[
    "echo",
    "greet",
    "test://static",
    "=?base64?ZWNobw==?=",
    "=?base64?",
];

/// The headers of one request, every value a [`Cursor::field`] over its vocabulary (the
/// session ids and event ids seen so far included).
fn session_head(c: &mut Cursor<'_>, w: &World, method: HttpMethod) -> HttpRequestHead {
    let mut head = HttpRequestHead::new(method, "/mcp");
    if c.below(8) != 0 {
        head = head.header("Host", c.field(HOSTS));
    }
    if c.below(4) == 0 {
        head = head.header("Origin", c.field(ORIGINS));
    }
    head = head.header("Accept", c.field(ACCEPTS));
    if method == HttpMethod::Post {
        head = head.header("Content-Type", c.field(CONTENT_TYPES));
    }
    if c.below(8) != 0 {
        let mut sids: Vec<&str> = w.sids.iter().map(String::as_str).collect();
        sids.push("#stateless-0");
        head = head.header("Mcp-Session-Id", c.field(&sids));
    }
    if c.below(4) != 0 {
        head = head.header("MCP-Protocol-Version", c.field(VERSIONS));
    }
    if c.below(4) == 0 {
        head = head
            .header("Mcp-Method", c.field(MCP_METHODS))
            .header("Mcp-Name", c.field(MCP_NAMES));
    }
    head
}

fn post(c: &mut Cursor<'_>, w: &mut World) {
    let head = session_head(c, w, HttpMethod::Post);
    let body = shared::post_body(c);
    request(w, &head, body);
}

fn get(c: &mut Cursor<'_>, w: &mut World) {
    let mut head = session_head(c, w, HttpMethod::Get);
    if c.below(4) != 0 {
        let mut ids: Vec<&str> = w.event_ids.iter().map(String::as_str).collect();
        ids.push("1-1");
        head = head.header("Last-Event-ID", c.field(&ids));
    }
    request(w, &head, Bytes::new());
}

/// Sends one request; a session id it issues is remembered for later requests.
fn request(w: &mut World, head: &HttpRequestHead, body: Bytes) {
    let resp = w.wire.request(head, body, |resp, _| Stream {
        sse: (resp.get("content-type") == Some("text/event-stream"))
            .then(|| SseDecoder::new(1 << 22)),
        last: None,
    });
    if let Some(sid) = resp.get("mcp-session-id") {
        if !w.sids.iter().any(|s| s == sid) && w.sids.len() < 16 {
            w.sids.push(sid.to_string());
        }
    }
}

/// Pulls one body: SSE events are checked, a JSON body is one object.
fn pull(c: &mut Cursor<'_>, w: &mut World) {
    let event_ids = &mut w.event_ids;
    let data = |stream: &mut Stream, buf: &[u8]| match &mut stream.sse {
        Some(decoder) => {
            decoder.push(buf);
            check_events(decoder, &mut stream.last, event_ids);
        }
        None => {
            let value: serde_json::Value =
                serde_json::from_slice(buf).expect("a JSON body is JSON");
            assert!(value.is_object());
        }
    };
    w.wire.pull(c, data, |_| {});
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
