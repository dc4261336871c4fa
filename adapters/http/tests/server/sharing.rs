//! Two servers of one process sharing one in-memory `SessionStore`: a session opened on one
//! is served by the other, and a DELETE on either ends it on both; a GET stream cut on one
//! is resumed on the other with what it missed first; an application's announcement on one
//! reaches the 2026-07-28 listen streams of both, once each. What arises on the first for a
//! GET stream resumed on the other reaches it there, once.

use mcp_sansio::app::server::{CallToolResult, GetPromptResult, Prompt, Server, Tool};
use mcp_sansio::model::Implementation;
use mcp_sansio::stateless::ListenChange;
use mcp_sansio_http::server::{HttpServerOptions, SessionStore};
use serde_json::json;

use super::rig::{Conn, Running};
use super::sse_events::sse_events;

/// Options of a server sharing `store`.
fn sharing(store: &SessionStore) -> HttpServerOptions {
    HttpServerOptions {
        store: Some(store.clone()),
        ..HttpServerOptions::default()
    }
}

fn app(now: std::time::Instant) -> Server {
    Server::builder(Implementation::new("sharing-test", "1")).build(now)
}

#[test]
fn two_servers_on_one_memory_store_serve_the_same_session() {
    let store = SessionStore::memory();
    let options = || sharing(&store);
    let (mut a, mut b) = (
        Running::start(options(), app),
        Running::start(options(), app),
    );
    let (mut on_a, mut on_b) = (a.connect(), b.connect());
    let sid = on_a.open_session();
    let ping = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
    let reply = on_b.post(Some(&sid), &ping(1));
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.json()["id"], 1);
    on_b.send("DELETE", "/mcp", &[("Mcp-Session-Id", sid.as_str())], "");
    assert_eq!(on_b.reply().status, 200);
    assert_eq!(on_a.post(Some(&sid), &ping(2)).status, 404);
    assert_eq!(on_b.post(Some(&sid), &ping(3)).status, 404);
    drop((on_a, on_b));
    a.shutdown();
    b.shutdown();
}

/// A server with a tool and a prompt, so a listen stream may ask for either list's changes.
pub(super) fn listed_app(now: std::time::Instant) -> Server {
    Server::builder(Implementation::new("sharing-test", "1"))
        .tool(
            Tool::new("echo", json!({"type": "object"}))
                .sync_handler(|_, _| Ok(CallToolResult::text("hi"))),
        )
        .prompt(
            Prompt::new("greet")
                .handler(|_, _| async move { Ok(GetPromptResult::user_text("hi")) }),
        )
        .build(now)
}

/// Opens a 2026-07-28 listen stream for tool and prompt list changes on `conn`; returns
/// once it is acknowledged.
pub(super) fn listen(conn: &mut Conn, id: u64) -> String {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "notifications": {"toolsListChanged": true, "promptsListChanged": true},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }
    }});
    let headers = [
        ("Accept", super::rig::BOTH),
        ("Content-Type", "application/json"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "subscriptions/listen"),
    ];
    conn.send("POST", "/mcp", &headers, &body.to_string());
    let head = conn.head();
    assert_eq!(head.status, 200, "{head:?}");
    let mut text = String::new();
    read_until(conn, &mut text, "notifications/subscriptions/acknowledged");
    text
}

/// Reads `conn`'s stream until its text contains `wanted` (each read bounded by the rig's
/// read limit).
pub(super) fn read_until(conn: &mut Conn, text: &mut String, wanted: &str) {
    while !text.contains(wanted) {
        let chunk = conn.chunk();
        assert!(chunk.is_some(), "ended without {wanted}: {text}");
        text.push_str(&chunk.unwrap_or_default());
    }
}

#[test]
fn an_announcement_reaches_the_listen_streams_of_every_server_once() {
    let store = SessionStore::memory();
    let options = || sharing(&store);
    let (mut a, on_a) = Running::start_announcing(options(), listed_app);
    let (mut b, on_b) = Running::start_announcing(options(), listed_app);
    let (mut stream_a, mut stream_b) = (a.connect(), b.connect());
    let mut text_a = listen(&mut stream_a, 1);
    let mut text_b = listen(&mut stream_b, 2);

    // Announced on the first server: its own stream has it, and the second's through the bus.
    assert!(on_a.announce(ListenChange::ToolsListChanged));
    read_until(
        &mut stream_a,
        &mut text_a,
        "notifications/tools/list_changed",
    );
    read_until(
        &mut stream_b,
        &mut text_b,
        "notifications/tools/list_changed",
    );
    // Then on the second: published after the first one's message, which the first server
    // got back from the bus before this one (one channel, in order). Its stream must not
    // have sent the first change twice.
    assert!(on_b.announce(ListenChange::PromptsListChanged));
    read_until(
        &mut stream_a,
        &mut text_a,
        "notifications/prompts/list_changed",
    );
    read_until(
        &mut stream_b,
        &mut text_b,
        "notifications/prompts/list_changed",
    );
    for text in [&text_a, &text_b] {
        assert_eq!(
            text.matches("notifications/tools/list_changed").count(),
            1,
            "{text}"
        );
    }
    drop((stream_a, stream_b));
    a.shutdown();
    b.shutdown();
}

/// A server whose `grow` tool registers another: a `tools/list_changed` on the GET stream.
fn growing_app(now: std::time::Instant) -> Server {
    let grow = Tool::new("grow", json!({"type": "object"})).sync_handler(|_, ctx| {
        let grown = Tool::new("grown", json!({"type": "object"}))
            .sync_handler(|_, _| Ok(CallToolResult::text("grown")));
        Ok(match ctx.server().add_tool(grown) {
            Ok(()) => CallToolResult::text("grew"),
            Err(e) => CallToolResult::error(format!("failed: {e}")),
        })
    });
    Server::builder(Implementation::new("sharing-test", "1"))
        .tool(grow)
        .build(now)
}

/// Calls `grow` on `conn` (a whole reply).
fn grow(conn: &mut Conn, sid: &str, id: u64) {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "grow", "arguments": {}}});
    let reply = conn.post(Some(sid), &call);
    assert_eq!(reply.status, 200, "{reply:?}");
}

/// Opens the session's GET stream on `conn`, after `last_event_id` when given.
fn get(conn: &mut Conn, sid: &str, last_event_id: Option<&str>) {
    let mut headers = vec![("Accept", "text/event-stream"), ("Mcp-Session-Id", sid)];
    if let Some(id) = last_event_id {
        headers.push(("Last-Event-ID", id));
    }
    conn.send("GET", "/mcp", &headers, "");
    let head = conn.head();
    assert_eq!(head.status, 200, "{head:?}");
}

/// Two servers of `growing_app` sharing `store`, a connection to each, a session opened on
/// the first and its GET stream open there: (A, B, to A, to B, the session id, the GET).
fn listening_on_a(store: &SessionStore) -> (Running, Running, Conn, Conn, String, Conn) {
    let start = || Running::start(sharing(store), growing_app);
    let (a, b) = (start(), start());
    let (mut on_a, on_b) = (a.connect(), b.connect());
    let sid = on_a.open_session();
    let mut listen = a.connect();
    get(&mut listen, &sid, None);
    (a, b, on_a, on_b, sid, listen)
}

#[test]
fn a_get_stream_cut_on_one_server_is_resumed_on_the_other_with_what_it_missed() {
    let store = SessionStore::memory();
    let (mut a, mut b, mut on_a, mut on_b, sid, mut listen) = listening_on_a(&store);
    grow(&mut on_a, &sid, 1);
    grow(&mut on_a, &sid, 2);
    let mut text = String::new();
    while sse_events(&text).len() < 2 {
        text.push_str(&listen.chunk().expect("the GET stream goes on"));
    }
    drop(listen);
    let on_a_events = sse_events(&text);
    assert!(on_a_events
        .iter()
        .all(|(_, d)| d.contains("tools/list_changed")));

    // The client saw the first change only: B sends the second (from A's log), then B's own.
    let mut resumed = b.connect();
    get(&mut resumed, &sid, Some(&on_a_events[0].0));
    grow(&mut on_b, &sid, 3);
    let mut again = String::new();
    while sse_events(&again).len() < 2 {
        again.push_str(&resumed.chunk().expect("the GET stream goes on"));
    }
    let on_b_events = sse_events(&again);
    assert_eq!(on_b_events.len(), 2, "{again}");
    assert_eq!(
        on_b_events[0], on_a_events[1],
        "the missed event, once, first"
    );
    let origin = |id: &str| id.split('-').next().unwrap_or_default().to_owned();
    assert_ne!(
        origin(&on_b_events[1].0),
        origin(&on_a_events[0].0),
        "{again}"
    );
    assert!(on_b_events[1].1.contains("tools/list_changed"), "{again}");
    drop(resumed);
    a.shutdown();
    b.shutdown();
}

/// Reads `conn`'s stream until `text` holds `count` events.
fn read_events(conn: &mut Conn, text: &mut String, count: usize) -> Vec<(String, String)> {
    while sse_events(text).len() < count {
        text.push_str(&conn.chunk().expect("the GET stream goes on"));
    }
    sse_events(text)
}

#[test]
fn a_get_stream_resumed_on_the_other_server_gets_what_arises_on_the_first_once() {
    let store = SessionStore::memory();
    let (mut a, mut b, mut on_a, mut on_b, sid, mut listen) = listening_on_a(&store);
    grow(&mut on_a, &sid, 1);
    let seen = read_events(&mut listen, &mut String::new(), 1)[0].0.clone();

    // The client's connection to A is cut (A has not noticed: it stays open there); it
    // resumes on B. What A's handlers send for the GET stream from then on reaches B.
    let mut resumed = b.connect();
    get(&mut resumed, &sid, Some(&seen));
    grow(&mut on_a, &sid, 2);
    grow(&mut on_a, &sid, 3);
    let mut text = String::new();
    let relayed = read_events(&mut resumed, &mut text, 2);
    let origin = |id: &str| id.split('-').next().unwrap_or_default().to_owned();
    assert!(
        relayed
            .iter()
            .all(|(id, d)| d.contains("tools/list_changed") && origin(id) != origin(&seen)),
        "{text}"
    );
    // Then B's own change: nothing came twice.
    grow(&mut on_b, &sid, 4);
    let all = read_events(&mut resumed, &mut text, 3);
    assert_eq!(all.len(), 3, "{text}");
    assert!(all[2].1.contains("tools/list_changed"), "{text}");
    // A ended its GET stream when it heard of the move.
    let mut ended = false;
    for _ in 0..16 {
        if listen.chunk().is_none() {
            ended = true;
            break;
        }
    }
    assert!(ended, "A's GET stream ends");
    drop((resumed, listen));
    a.shutdown();
    b.shutdown();
}

/// A GET without `Last-Event-ID` on B takes over what waits on A for the session (no GET
/// stream open there): B tells every server, and A relays what it held, then what arises.
#[test]
fn a_plain_get_on_the_other_server_gets_what_was_held_on_the_first() {
    let store = SessionStore::memory();
    let start = || Running::start(sharing(&store), growing_app);
    let (mut a, mut b) = (start(), start());
    let mut on_a = a.connect();
    let sid = on_a.open_session();
    grow(&mut on_a, &sid, 1);
    grow(&mut on_a, &sid, 2);

    let mut listen = b.connect();
    get(&mut listen, &sid, None);
    let mut text = String::new();
    let held = read_events(&mut listen, &mut text, 2);
    assert!(
        held.iter().all(|(_, d)| d.contains("tools/list_changed")),
        "{text}"
    );
    grow(&mut on_a, &sid, 3);
    let all = read_events(&mut listen, &mut text, 3);
    assert_eq!(all.len(), 3, "each once: {text}");
    assert!(all[2].1.contains("tools/list_changed"), "{text}");
    drop(listen);
    a.shutdown();
    b.shutdown();
}
