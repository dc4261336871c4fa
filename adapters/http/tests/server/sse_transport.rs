//! The HTTP+SSE transport (2024-11-05) as the HTTP server adapter serves it beside
//! Streamable HTTP, through real loopback sockets and a tiny raw HTTP/1.1 client: the
//! `endpoint` event, 202 for accepted messages with the answers on the session's stream, the
//! status codes (400 bad body / missing sessionId, 404 unknown session, 405, 415, 403 by the
//! shared Host/Origin policy), two concurrent sessions each getting only their own messages
//! (none on two streams), and Streamable HTTP working on /mcp at the same time.

use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::model::Implementation;
use mcp_sansio_http::server::HttpServerOptions;
use serde_json::{json, Value};

use super::rig::{Reply, Running, INITIALIZED};

fn app(now: std::time::Instant) -> Server {
    Server::builder(Implementation::new("sse-transport-adapter-test", "1"))
        .tool(
            Tool::new("whoami", json!({"type": "object"})).sync_handler(|call, _| {
                let tag = call
                    .arguments
                    .get("tag")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                Ok(CallToolResult::text(tag))
            }),
        )
        .build(now)
}

const JSON: (&str, &str) = ("Content-Type", "application/json");

fn init(id: u64) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{
        "protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
    .to_string()
}

fn whoami(id: u64, tag: &str) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"whoami","arguments":{"tag":tag}}})
    .to_string()
}

/// POSTs `body` to `uri` on a fresh connection; the reply.
fn post(server: &Running, uri: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut conn = server.connect();
    conn.send("POST", uri, headers, body);
    conn.reply()
}

#[test]
fn the_sse_transport_pair_answers_with_its_status_codes() {
    let server = Running::start(HttpServerOptions::default(), app);
    let mut sse = server.connect();
    let uri = sse.open_sse();

    let accepted = post(&server, &uri, &[JSON], &init(1));
    assert_eq!(accepted.status, 202, "{accepted:?}");
    assert_eq!(
        accepted.body, "",
        "answers travel on the stream, not in the POST"
    );
    let answer = sse.message();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["protocolVersion"], "2024-11-05");

    let missing = post(&server, "/messages", &[JSON], &init(2));
    assert_eq!(missing.status, 400, "no sessionId: {missing:?}");
    let unknown = post(&server, "/messages?sessionId=00ff", &[JSON], &init(2));
    assert_eq!(unknown.status, 404, "unknown session: {unknown:?}");
    let bad_body = post(&server, &uri, &[JSON], "{not json");
    assert_eq!(bad_body.status, 400, "{bad_body:?}");
    assert_eq!(
        serde_json::from_str::<Value>(&bad_body.body).unwrap()["error"]["code"],
        -32700
    );
    let plain = post(
        &server,
        &uri,
        &[("Content-Type", "text/plain")],
        INITIALIZED,
    );
    assert_eq!(plain.status, 415, "{plain:?}");
    let mut conn = server.connect();
    conn.send("GET", "/messages", &[], "");
    let get_messages = conn.reply();
    assert_eq!(get_messages.status, 405);
    assert_eq!(get_messages.header("allow"), Some("POST"));
    let post_sse = post(&server, "/sse", &[JSON], &init(3));
    assert_eq!(post_sse.status, 405, "a Streamable probe at the SSE URL");
    assert_eq!(post_sse.header("allow"), Some("GET"));
    let foreign = post(
        &server,
        &uri,
        &[JSON, ("Origin", "http://evil.example")],
        INITIALIZED,
    );
    assert_eq!(
        foreign.status, 403,
        "the Streamable endpoint's Origin policy"
    );

    // The refused requests left nothing on the stream: the next message is the next answer.
    assert_eq!(post(&server, &uri, &[JSON], INITIALIZED).status, 202);
    assert_eq!(post(&server, &uri, &[JSON], &whoami(4, "x")).status, 202);
    let result = sse.message();
    assert_eq!(result["id"], 4);
    assert_eq!(result["result"]["content"][0]["text"], "x");
}

#[test]
fn two_sessions_each_get_only_their_own_messages() {
    let server = Running::start(HttpServerOptions::default(), app);
    let mut a = server.connect();
    let mut b = server.connect();
    let uri_a = a.open_sse();
    let uri_b = b.open_sse();
    assert_ne!(uri_a, uri_b, "two sessions, two message URIs");
    for (uri, sse) in [(&uri_a, &mut a), (&uri_b, &mut b)] {
        assert_eq!(post(&server, uri, &[JSON], &init(1)).status, 202);
        assert_eq!(sse.message()["id"], 1);
        assert_eq!(post(&server, uri, &[JSON], INITIALIZED).status, 202);
    }
    // Interleaved calls with the same ids on both sessions: each answer must come back on
    // its own session's stream only, tagged with that session's name.
    for id in 10..16 {
        assert_eq!(post(&server, &uri_a, &[JSON], &whoami(id, "a")).status, 202);
        assert_eq!(post(&server, &uri_b, &[JSON], &whoami(id, "b")).status, 202);
    }
    for (sse, tag) in [(&mut a, "a"), (&mut b, "b")] {
        for id in 10..16 {
            let message = sse.message();
            assert_eq!(message["id"], id, "in order, none missing: {message}");
            assert_eq!(message["result"]["content"][0]["text"], tag, "{message}");
        }
    }
    // Nothing more on either stream: one ping each, and its answer is the very next event.
    let ping = |id: u64| json!({"jsonrpc":"2.0","id":id,"method":"ping"}).to_string();
    assert_eq!(post(&server, &uri_a, &[JSON], &ping(99)).status, 202);
    assert_eq!(post(&server, &uri_b, &[JSON], &ping(98)).status, 202);
    assert_eq!(a.message()["id"], 99);
    assert_eq!(b.message()["id"], 98);
}

#[test]
fn streamable_http_is_served_beside_the_sse_transport_pair() {
    let server = Running::start(HttpServerOptions::default(), app);
    let mut sse = server.connect();
    let uri = sse.open_sse();
    assert_eq!(post(&server, &uri, &[JSON], &init(1)).status, 202);
    let init_streamable = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    let reply = post(
        &server,
        "/mcp",
        &[JSON, ("Accept", "application/json, text/event-stream")],
        &init_streamable.to_string(),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.header("mcp-session-id").is_some());
    assert!(reply.body.contains("2025-06-18"), "{}", reply.body);
    // The HTTP+SSE session's answer still comes on its stream, and only there.
    let answer = sse.message();
    assert_eq!(answer["result"]["protocolVersion"], "2024-11-05");
}

#[test]
fn without_the_sse_transport_mount_its_paths_are_unknown() {
    let server = Running::start(
        HttpServerOptions {
            sse_transport: None,
            ..HttpServerOptions::default()
        },
        app,
    );
    let mut conn = server.connect();
    conn.send("GET", "/sse", &[("Accept", "text/event-stream")], "");
    assert_eq!(conn.reply().status, 404);
    assert_eq!(
        post(&server, "/messages?sessionId=ab", &[JSON], "{}").status,
        404
    );
}
