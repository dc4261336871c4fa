//! Fuzz body for the HTTP+SSE endpoint behind the `Router` (`/mcp` Streamable, `/sse`
//! and `/messages` HTTP+SSE) fed an arbitrary sequence of requests: SSE GETs, message POSTs
//! naming known, unknown or missing sessions, with arbitrary headers and bodies, requests to
//! other paths and methods, body pulls, dropped streams, `close_session`, and time.
//! Invariants: no panic; unknown paths get 404 and wrong methods 405 with `Allow`; each
//! endpoint's session table stays within `max_sessions`; stream ids say which endpoint owns
//! them; an HTTP+SSE stream starts with exactly one `endpoint` event naming its session's message
//! URI and then carries only `message` events holding one valid JSON-RPC message each (and
//! keep-alive comments); a body that ended stays ended; a POST to a session whose stream ended
//! gets 404; no deadline at or before `now` survives `handle_timeout`.

use bytes::Bytes;

use super::app_ops::registry_factory;
use super::http_server_ops::{self as shared, Wire};
use super::ops::{self, Cursor};
use crate::app::server::Server;
use crate::framing::{SseDecoder, SseItem};
use crate::http::sse_transport::{Router, RouterPaths, SSE_TRANSPORT_STREAM_BIT};
use crate::http::{Body, EndpointConfig, HttpMethod, HttpRequestHead, HttpResponse};

/// What the checks keep of one response body: `Some` for an HTTP+SSE stream, its decoder and
/// the session its `endpoint` event named.
type SseTransport = Option<(SseDecoder, Option<String>)>;

struct World {
    wire: Wire<Router<Server>, SseTransport>,
    max_sessions: usize,
    /// HTTP+SSE sessions named by `endpoint` events, and whether their stream ended.
    sids: Vec<(String, bool)>,
}

const PATHS: &[&str] = &[
    "/sse",
    "/messages",
    "/mcp",
    "/",
    "/sse?x=1",
    "/messages?sessionId=",
    "/messages?sessionId=zz&sessionId=yy",
];
const ACCEPTS: &[&str] = &[
    "text/event-stream",
    "application/json, text/event-stream",
    "application/json",
    "*/*",
];
const CONTENT_TYPES: &[&str] = &["application/json", "application/json; charset=utf-8", ""];
const VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "1999-01-01"];

fn config(c: &mut Cursor<'_>) -> EndpointConfig {
    shared::base_config(c.byte())
}

/// A `Router` fed arbitrary requests to both transports. See the module docs.
pub fn sse_transport_router(data: &[u8]) {
    let mut c = Cursor::new(data);
    let ep_config = config(&mut c);
    let max_sessions = ep_config.max_sessions;
    let server = registry_factory(c.byte());
    let factory = move |now| server.server(now);
    let mut w = World {
        wire: Wire::new(Router::new(ep_config, RouterPaths::default(), factory)),
        max_sessions,
        sids: Vec::new(),
    };
    while !c.is_empty() {
        match c.below(10) {
            0 | 1 => open_sse(&mut c, &mut w),
            2..=4 => post_message(&mut c, &mut w),
            5 => other_request(&mut c, &mut w),
            6 | 7 => pull(&mut c, &mut w),
            8 => close(&mut c, &mut w),
            _ => w.wire.advance(&mut c),
        }
        let router = &mut w.wire.server;
        assert!(router.sse_transport().session_count() <= w.max_sessions);
        assert!(router.streamable().session_count() <= w.max_sessions);
    }
}

fn host(c: &mut Cursor<'_>, head: HttpRequestHead) -> HttpRequestHead {
    match c.below(8) {
        0 => head,
        _ => head.header(
            "Host",
            c.field(&["127.0.0.1:3000", "localhost", "evil.example"]),
        ),
    }
}

fn open_sse(c: &mut Cursor<'_>, w: &mut World) {
    let mut head = host(c, HttpRequestHead::new(HttpMethod::Get, "/sse"));
    if c.below(4) != 0 {
        head = head.header("Accept", c.field(ACCEPTS));
    }
    let resp = request(w, &head, Bytes::new());
    if let Body::Stream(conn) = resp.body {
        assert_eq!(resp.status, 200);
        assert!(
            !w.wire.server.stream_tracked(conn),
            "a GET /sse stream is HTTP+SSE's"
        );
    }
}

fn post_message(c: &mut Cursor<'_>, w: &mut World) {
    let path = match c.below(6) {
        0 => c.pick(PATHS).to_owned(),
        1 => {
            let sids: Vec<&str> = w.sids.iter().map(|(sid, _)| sid.as_str()).collect();
            format!("/messages?sessionId={}", c.field(&sids))
        }
        _ if !w.sids.is_empty() => {
            let (sid, _) = &w.sids[c.below(w.sids.len())];
            format!("/messages?sessionId={sid}")
        }
        _ => "/messages".to_owned(),
    };
    let mut head = host(c, HttpRequestHead::new(HttpMethod::Post, path.as_str()))
        .header("Content-Type", c.field(CONTENT_TYPES));
    if c.below(3) == 0 {
        head = head.header("MCP-Protocol-Version", c.field(VERSIONS));
    }
    let body = shared::post_body(c);
    let ended = w
        .sids
        .iter()
        .any(|(sid, ended)| *ended && path.ends_with(&format!("={sid}")));
    let resp = request(w, &head, body);
    if ended && resp.status != 403 {
        assert_eq!(resp.status, 404, "a POST to an ended session");
    }
}

fn other_request(c: &mut Cursor<'_>, w: &mut World) {
    let method = c.pick(&[
        HttpMethod::Get,
        HttpMethod::Post,
        HttpMethod::Delete,
        HttpMethod::Other,
    ]);
    let path = match c.below(4) {
        0 => c.field(PATHS),
        _ => c.pick(PATHS).to_owned(),
    };
    let head = host(c, HttpRequestHead::new(method, path.as_str()))
        .header("Accept", c.pick(ACCEPTS))
        .header("Content-Type", "application/json");
    let body = ops::frame(c);
    let served = w.wire.server.serves(&path);
    let resp = request(w, &head, body);
    let bare = path.split(['?', '#']).next().unwrap_or("");
    if !served {
        assert_eq!(resp.status, 404, "unknown path {path:?}");
    } else if bare == "/sse" || bare == "/messages" {
        let wanted = if bare == "/sse" {
            HttpMethod::Get
        } else {
            HttpMethod::Post
        };
        if method != wanted {
            assert_eq!(resp.status, 405);
            assert!(resp.get("allow").is_some(), "405 without Allow");
        }
    }
}

fn close(c: &mut Cursor<'_>, w: &mut World) {
    if c.byte() & 1 == 0 {
        if let Some(conn) = w.wire.pick_conn(c) {
            w.wire.server.stream_closed(conn);
        }
    } else if !w.sids.is_empty() {
        let (sid, _) = w.sids[c.below(w.sids.len())].clone();
        let _ = w.wire.server.sse_transport().close_session(&sid);
    }
}

/// Sends one request; an HTTP+SSE stream is pulled with the HTTP+SSE checks.
fn request(w: &mut World, head: &HttpRequestHead, body: Bytes) -> HttpResponse {
    w.wire.request(head, body, |resp, conn| {
        let sse_transport = conn.0 & SSE_TRANSPORT_STREAM_BIT != 0;
        let sse = resp.get("content-type") == Some("text/event-stream");
        (sse_transport && sse).then(|| (SseDecoder::new(1 << 22), None))
    })
}

/// Pulls one body; an HTTP+SSE stream's events are checked and its end marks its session ended.
fn pull(c: &mut Cursor<'_>, w: &mut World) {
    let sids = &mut w.sids;
    let mut ended_sid = None;
    let data = |sse_transport: &mut SseTransport, buf: &[u8]| {
        if let Some((decoder, sid)) = sse_transport {
            decoder.push(buf);
            check_events(decoder, sid, sids);
        }
    };
    w.wire.pull(c, data, |sse_transport| {
        if let Some((_, Some(sid))) = sse_transport {
            ended_sid = Some(sid.clone());
        }
    });
    if let Some(sid) = ended_sid {
        if let Some(entry) = w.sids.iter_mut().find(|(s, _)| *s == sid) {
            entry.1 = true;
        }
    }
}

/// An HTTP+SSE stream: one `endpoint` event first, then only `message` events.
fn check_events(
    decoder: &mut SseDecoder,
    sid: &mut Option<String>,
    sids: &mut Vec<(String, bool)>,
) {
    while let Some(item) = decoder.poll_item() {
        let event = match item.expect("the endpoint writes valid SSE") {
            SseItem::Event(e) => e,
            _ => panic!("an HTTP+SSE stream carries no ids or retry"),
        };
        match (event.event.as_deref(), &sid) {
            (Some("endpoint"), None) => {
                let uri = std::str::from_utf8(&event.data).expect("a UTF-8 URI");
                let named = uri
                    .strip_prefix("/messages?sessionId=")
                    .expect("the endpoint event names the message path");
                assert!(!named.is_empty() && named.bytes().all(|b| b.is_ascii_hexdigit()));
                *sid = Some(named.to_owned());
                // Ids come from the (wrapping) fuzz randomness: a new session may reuse one.
                let known = sids.iter().position(|(s, _)| s == named);
                match known {
                    Some(i) => sids[i].1 = false,
                    None if sids.len() < 16 => sids.push((named.to_owned(), false)),
                    None => {}
                }
            }
            (Some("message"), Some(_)) => {
                ops::check_transmit(&event.data);
            }
            (kind, _) => panic!("unexpected event {kind:?} (endpoint seen: {sid:?})"),
        }
    }
}
