//! What an idle session costs in the endpoint's table: heap bytes still allocated per
//! session after `initialize` + `notifications/initialized`, counted by a global allocator
//! wrapper. The figure sizes `max_sessions` (10,000 by default). The sessions come from one
//! `ServerFactory` whose definitions (tools with JSON Schemas) weigh more than a session, so
//! a session that copied them would show here. The same for an open 2026-07-28 listen
//! stream (an exchange with its own server), which sizes `max_listen_streams`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::app::server::{CallToolResult, Server, ServerFactory, Tool};
use mcp_sansio::http::*;
use mcp_sansio::model::Implementation;
use serde_json::{json, Map, Value};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Tools registered with the app.
const TOOLS: usize = 40;

/// A tool whose input schema has a dozen described properties (about 1 KB of JSON).
fn tool(i: usize) -> Tool {
    let properties: Map<String, Value> = (0..12)
        .map(|p| {
            let schema =
                json!({"type": "string", "description": format!("property {p} of tool {i}")});
            (format!("p{p}"), schema)
        })
        .collect();
    Tool::new(
        format!("tool_{i}"),
        json!({"type": "object", "properties": properties}),
    )
    .description(format!("tool number {i} of the memory test"))
    .sync_handler(|_, _| Ok(CallToolResult::text("hi")))
}

fn factory() -> ServerFactory {
    (0..TOOLS)
        .fold(
            Server::builder(Implementation::new("memory", "1")),
            |b, i| b.tool(tool(i)),
        )
        .build_factory()
}

/// Heap bytes the definitions of [`factory`] hold.
fn definition_bytes() -> isize {
    let before = LIVE.load(Ordering::Relaxed);
    let factory = factory();
    let bytes = LIVE.load(Ordering::Relaxed) - before;
    drop(factory);
    bytes
}

/// Heap bytes per idle session, over `n` sessions, each of which was sent `notes` client
/// notifications after its handshake (events nobody on the HTTP side reads).
fn bytes_per_idle_session(n: u32, notes: usize) -> isize {
    let now = Instant::now();
    let mut ep = Endpoint::new(
        EndpointConfig {
            max_sessions: n as usize,
            ..Default::default()
        },
        {
            let factory = factory();
            move |now| factory.server(now)
        },
    );
    let head = |sid: Option<&str>| {
        let mut h = HttpRequestHead::new(HttpMethod::Post, "/mcp")
            .header("Host", "localhost:3000")
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        if let Some(sid) = sid {
            h = h.header("Mcp-Session-Id", sid);
        }
        h
    };
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})
    .to_string();
    let done = json!({"jsonrpc":"2.0","method":"notifications/initialized"}).to_string();
    let note = json!({"jsonrpc":"2.0","method":"notifications/roots/list_changed"}).to_string();
    let before = LIVE.load(Ordering::Relaxed);
    let mut random = [0u8; 16];
    for i in 0..n {
        random[..4].copy_from_slice(&i.to_be_bytes());
        let resp = ep.handle_request(now, &head(None), Bytes::from(init.clone()), random);
        assert_eq!(resp.status, 200);
        let sid = resp.get("mcp-session-id").unwrap().to_owned();
        drop(resp);
        let resp = ep.handle_request(now, &head(Some(&sid)), Bytes::from(done.clone()), random);
        assert_eq!(resp.status, 202);
        for _ in 0..notes {
            let resp = ep.handle_request(now, &head(Some(&sid)), Bytes::from(note.clone()), random);
            assert_eq!(resp.status, 202);
        }
    }
    assert_eq!(ep.session_count(), n as usize);
    let per = (LIVE.load(Ordering::Relaxed) - before) / isize::try_from(n).unwrap();
    drop(ep);
    per
}

/// Heap bytes per open 2026-07-28 listen stream, over `n` streams whose acknowledgement was
/// read (each is one exchange with its own `Server` until the client goes away).
fn bytes_per_listen_stream(n: usize) -> isize {
    let now = Instant::now();
    let mut ep = Endpoint::new(
        EndpointConfig {
            max_listen_streams: n,
            ..Default::default()
        },
        {
            let factory = factory();
            move |now| factory.server(now)
        },
    );
    let head = HttpRequestHead::new(HttpMethod::Post, "/mcp")
        .header("Host", "localhost:3000")
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "subscriptions/listen");
    let listen = |i: usize| {
        json!({"jsonrpc":"2.0","id":i,"method":"subscriptions/listen","params":{
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                     "io.modelcontextprotocol/clientCapabilities":{}},
            "notifications":{"toolsListChanged":true}}})
        .to_string()
    };
    let before = LIVE.load(Ordering::Relaxed);
    let mut streams = Vec::with_capacity(n);
    for i in 0..n {
        let resp = ep.handle_request(now, &head, Bytes::from(listen(i)), [0; 16]);
        assert_eq!(resp.status, 200, "{}", resp.body_text());
        let Body::Stream(id) = resp.body else {
            panic!("a listen stream is an SSE stream")
        };
        let mut buf = Vec::new();
        while let Some(StreamChunk::Data { .. }) = ep.poll_stream(id, &mut buf) {}
        assert!(
            String::from_utf8_lossy(&buf).contains("acknowledged"),
            "the acknowledgement first"
        );
        streams.push(id);
    }
    assert_eq!(ep.exchange_count(), n);
    let per = (LIVE.load(Ordering::Relaxed)
        - before
        - isize::try_from(n * std::mem::size_of::<StreamId>()).unwrap())
        / isize::try_from(n).unwrap();
    drop(ep);
    per
}

/// One test, as the counter is global: tests running side by side would count each other.
#[test]
fn an_idle_session_costs_a_bounded_few_kib_and_no_copy_of_the_definitions() {
    let definitions = definition_bytes();
    let per = bytes_per_idle_session(2000, 0);
    let after_notes = bytes_per_idle_session(500, 100);
    println!(
        "idle session: {per} heap bytes; after 100 client notifications: {after_notes}; \
         definitions: {definitions} heap bytes"
    );
    let listen = bytes_per_listen_stream(500);
    println!("listen stream: {listen} heap bytes");
    assert!(per > 0);
    // The definitions are shared: a session holding its own copy would cost more than them.
    assert!(
        per < definitions,
        "{per} bytes per idle session, {definitions} of definitions"
    );
    // A few KiB: the session's own state and the small floors its drained queues and
    // encoding buffers keep (10,000 idle sessions, the default cap, then hold well under
    // 100 MiB in the core).
    assert!(per < 6 * 1024, "{per} bytes per idle session");
    // An open listen stream is an exchange with a server of its own: as small as a session
    // (64 of them, the default `max_listen_streams`, hold well under 1 MiB in the core).
    assert!(listen < 8 * 1024, "{listen} bytes per listen stream");
    // Notifications the HTTP side has no reader for are not kept.
    assert!(
        after_notes < per + 512,
        "{after_notes} bytes per idle session after 100 notifications, {per} without"
    );
}
