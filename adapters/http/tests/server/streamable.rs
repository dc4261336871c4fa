//! Streamable HTTP through the server adapter:
//! keep-alive reuse, SSE streaming, the adapter's own answers (404 path, 401 bearer), a few
//! endpoint status codes end to end (406, 415, 413, 400, 404 session), a dropped SSE
//! connection resumed on a new one, and graceful shutdown ending an open SSE stream and
//! answering a request still being handled.

use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;

use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::http::EndpointConfig;
use mcp_sansio::model::Implementation;
use mcp_sansio::model::LoggingLevel;
use mcp_sansio::runtime::{oneshot, OneshotSender};
use mcp_sansio_http::server::{BearerAuth, HttpServerOptions};
use serde_json::{json, Value};

use super::rig::{read_head, Reply, Running, BOTH};

fn app(now: std::time::Instant) -> Server {
    let schema = json!({"type": "object"});
    Server::builder(Implementation::new("adapter-test", "1"))
        .tool(Tool::new("echo", schema.clone()).sync_handler(|_, _| Ok(CallToolResult::text("hi"))))
        .tool(Tool::new("grow", schema.clone()).sync_handler(|_, ctx| {
            // A change the session announces on its standalone GET stream.
            ctx.server()
                .add_tool(
                    Tool::new("grown", json!({"type": "object"}))
                        .sync_handler(|_, _| Ok(CallToolResult::text("new"))),
                )
                .unwrap();
            Ok(CallToolResult::text("grew"))
        }))
        .tool(Tool::new("never", schema.clone()).handler(|_, _| async {
            // Still being handled at shutdown.
            std::future::pending::<()>().await;
            Ok(CallToolResult::text("never"))
        }))
        .tool(Tool::new("gated_log", schema).handler(|_, ctx| {
            let (tx, rx) = oneshot::<()>();
            GATES.lock().unwrap().push(tx);
            async move {
                ctx.log(LoggingLevel::Info, None, json!("first"));
                let _ = rx.await;
                ctx.log(LoggingLevel::Info, None, json!("second"));
                Ok(CallToolResult::text("gated done"))
            }
        }))
        .tool(
            Tool::new("gated_resume", json!({"type": "object"})).handler(|_, ctx| {
                let (tx, rx) = oneshot::<()>();
                RESUME_GATES.lock().unwrap().push(tx);
                async move {
                    ctx.log(LoggingLevel::Info, None, json!("before the drop"));
                    let _ = rx.await;
                    ctx.log(LoggingLevel::Info, None, json!("after the drop"));
                    Ok(CallToolResult::text("resumed result"))
                }
            }),
        )
        .build(now)
}

/// Opened by the test to let `gated_resume` finish (only one test calls it).
static RESUME_GATES: Mutex<Vec<OneshotSender<()>>> = Mutex::new(Vec::new());

/// Opened by the test to let `gated_log` finish (only one test calls it).
static GATES: Mutex<Vec<OneshotSender<()>>> = Mutex::new(Vec::new());

fn call(id: u64, tool: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":{}}})
}

#[test]
fn one_keep_alive_connection_carries_a_whole_session() {
    let mut server = Running::start(HttpServerOptions::default(), app);
    let mut conn = server.connect();
    let sid = conn.open_session();
    assert_eq!(sid.len(), 32, "128 random bits in hex: {sid}");
    for id in 1..=3 {
        let reply = conn.post(Some(&sid), &call(id, "echo"));
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("content-type"), Some("application/json"));
        assert_eq!(reply.json()["result"]["content"][0]["text"], "hi");
    }
    let other = server.connect().open_session();
    assert_ne!(sid, other, "session ids come from the OS random source");
    let report = server.shutdown();
    assert_eq!(report.connections, 2, "{report:?}");
}

/// Requests that arrive together on many connections are handed to the endpoint in one batch
/// (the adapter's staging): each connection gets the answer to its own request, a connection
/// closed while its request waits for the batch costs the others nothing, and every
/// connection serves its next request.
#[test]
fn requests_arriving_together_each_get_their_own_answer() {
    let server = Running::start(HttpServerOptions::default(), app);
    let sid = server.connect().open_session();
    let mut conns: Vec<_> = (0..16).map(|_| server.connect()).collect();
    let headers = [
        ("Accept", BOTH),
        ("Content-Type", "application/json"),
        ("Mcp-Session-Id", sid.as_str()),
    ];
    for round in 0..3u64 {
        let mut gone = server.connect();
        gone.send(
            "POST",
            "/mcp",
            &headers,
            &call(1000 + round, "echo").to_string(),
        );
        for (i, conn) in conns.iter_mut().enumerate() {
            let id = round * 100 + i as u64;
            conn.send("POST", "/mcp", &headers, &call(id, "echo").to_string());
        }
        drop(gone);
        for (i, conn) in conns.iter_mut().enumerate() {
            let reply = conn.reply();
            assert_eq!(reply.status, 200, "{reply:?}");
            let answer = reply.json();
            assert_eq!(answer["id"], round * 100 + i as u64, "{answer}");
            assert_eq!(answer["result"]["content"][0]["text"], "hi");
        }
    }
}

/// The adapter hands each request's field map on to its response (one map per connection,
/// not two per exchange): a response carries the endpoint's fields only, never one of the
/// request's, through many exchanges on one connection with heads of different sizes.
#[test]
fn a_response_carries_none_of_the_request_fields() {
    let server = Running::start(HttpServerOptions::default(), app);
    let mut conn = server.connect();
    let sid = conn.open_session();
    let names = |reply: &Reply| -> Vec<String> {
        let mut names: Vec<String> = reply.headers.iter().map(|(n, _)| n.clone()).collect();
        names.sort();
        names
    };
    let extra: Vec<(String, String)> = (0..20)
        .map(|i| (format!("x-extra-{i}"), format!("value-{i}")))
        .collect();
    for (id, extras) in [0, 20, 1, 0, 20].into_iter().enumerate() {
        let mut headers = vec![
            ("Accept", BOTH),
            ("Content-Type", "application/json"),
            ("Mcp-Session-Id", sid.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        headers.extend(
            extra[..extras]
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str())),
        );
        let body = call(id as u64 + 1, "echo").to_string();
        conn.send("POST", "/mcp", &headers, &body);
        let reply = conn.reply();
        assert_eq!(reply.status, 200);
        assert_eq!(reply.json()["result"]["content"][0]["text"], "hi");
        assert_eq!(
            names(&reply),
            ["content-length", "content-type", "date"],
            "{reply:?}"
        );
    }
    // An endpoint refusal (a session it does not know) on the same connection.
    let reply = conn.post(Some("nope"), &call(9, "echo"));
    assert_eq!(reply.status, 404);
    assert!(
        names(&reply)
            .iter()
            .all(|n| ["content-length", "content-type", "date"].contains(&n.as_str())),
        "{reply:?}"
    );
}

#[test]
fn a_handler_that_logs_streams_sse_events_as_they_happen() {
    let mut server = Running::start(HttpServerOptions::default(), app);
    let mut conn = server.connect();
    let sid = conn.open_session();
    let headers = [
        ("Accept", BOTH),
        ("Content-Type", "application/json"),
        ("Mcp-Session-Id", sid.as_str()),
    ];
    conn.send("POST", "/mcp", &headers, &call(7, "gated_log").to_string());
    let head = conn.head();
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-type"), Some("text/event-stream"));
    // The handler is parked on its gate: whatever arrives now was streamed before the result
    // existed.
    let mut early = String::new();
    while !early.contains("\"first\"") {
        early.push_str(&conn.chunk().expect("the stream ended before the first log"));
    }
    assert!(
        early.starts_with("id: "),
        "a 2025-11-25 stream opens with a priming event: {early}"
    );
    assert!(!early.contains("gated done"), "{early}");
    for gate in GATES.lock().unwrap().drain(..) {
        gate.send(());
    }
    let mut rest = String::new();
    while let Some(chunk) = conn.chunk() {
        rest.push_str(&chunk);
    }
    let second = rest.find("\"second\"").expect("second log");
    let result = rest.find("gated done").expect("result");
    assert!(second < result, "{rest}");
    // The connection is still usable afterwards.
    assert_eq!(conn.post(Some(&sid), &call(8, "echo")).status, 200);
    server.shutdown();
}

/// A session's idle GET stream is left alone while the session's requests are answered on
/// their own responses (the endpoint reports it quiet, so its connection task is not run for
/// nothing), and still gets the server's own message as soon as one is for it.
#[test]
fn an_idle_get_stream_gets_the_servers_message_after_other_requests() {
    let mut server = Running::start(HttpServerOptions::default(), app);
    let mut conn = server.connect();
    let sid = conn.open_session();
    let mut listen = server.connect();
    let headers = [
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", sid.as_str()),
    ];
    listen.send("GET", "/mcp", &headers, "");
    assert_eq!(listen.head().status, 200);
    let priming = listen.chunk().expect("priming event");
    assert!(priming.starts_with("id: "), "{priming}");
    for id in 1..=5 {
        let reply = conn.post(Some(&sid), &call(id, "echo"));
        assert_eq!(reply.json()["result"]["content"][0]["text"], "hi");
    }
    let reply = conn.post(Some(&sid), &call(6, "grow"));
    assert_eq!(reply.json()["result"]["content"][0]["text"], "grew");
    let mut seen = String::new();
    while !seen.contains("notifications/tools/list_changed") {
        seen.push_str(&listen.chunk().expect("the GET stream ended"));
    }
    assert!(!seen.contains("\"id\""), "only the notification: {seen}");
    let report = server.shutdown();
    assert_eq!(report.abandoned_connections, 0, "{report:?}");
}

/// The server wakes only the bodies of the sessions an input touched, yet a body whose
/// stream the endpoint let go of ends at once with no request of its own: a GET stream
/// replaced by a newer GET, and a session's GET stream when another connection deletes the
/// session. Meanwhile another session's idle GET stream stays open and still gets its own
/// server message.
#[test]
fn replaced_and_deleted_sessions_streams_end_while_another_stays_open() {
    let mut server = Running::start(HttpServerOptions::default(), app);
    let mut conn = server.connect();
    let first = conn.open_session();
    let second = conn.open_session();
    let listen = |sid: &str| {
        let mut listen = server.connect();
        let headers = [("Accept", "text/event-stream"), ("Mcp-Session-Id", sid)];
        listen.send("GET", "/mcp", &headers, "");
        assert_eq!(listen.head().status, 200);
        let priming = listen.chunk().expect("priming event");
        assert!(priming.starts_with("id: "), "{priming}");
        listen
    };
    let mut replaced = listen(&first);
    let mut other = listen(&second);
    let mut current = listen(&first);
    assert_eq!(replaced.chunk(), None, "the replaced GET stream ends");
    conn.send("DELETE", "/mcp", &[("Mcp-Session-Id", first.as_str())], "");
    assert_eq!(conn.reply().status, 200);
    assert_eq!(current.chunk(), None, "the deleted session's stream ends");
    let reply = conn.post(Some(&second), &call(1, "grow"));
    assert_eq!(reply.json()["result"]["content"][0]["text"], "grew");
    let mut seen = String::new();
    while !seen.contains("notifications/tools/list_changed") {
        seen.push_str(&other.chunk().expect("the other GET stream ended"));
    }
    let report = server.shutdown();
    assert_eq!(report.abandoned_connections, 0, "{report:?}");
}

#[test]
fn status_codes_come_through_the_sockets() {
    let options = HttpServerOptions {
        endpoint: EndpointConfig {
            max_body: 1024,
            ..EndpointConfig::default()
        },
        ..HttpServerOptions::default()
    };
    let mut server = Running::start(options, app);
    let mut conn = server.connect();
    let sid = conn.open_session();
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"}).to_string();
    let with =
        |accept: &'static str, ctype: &'static str| [("Accept", accept), ("Content-Type", ctype)];
    conn.send(
        "POST",
        "/mcp",
        &with("application/json", "application/json"),
        &ping,
    );
    assert_eq!(conn.reply().status, 406);
    conn.send("POST", "/mcp", &with(BOTH, "text/plain"), &ping);
    assert_eq!(conn.reply().status, 415);
    conn.send("POST", "/other", &with(BOTH, "application/json"), &ping);
    assert_eq!(conn.reply().status, 404, "only the mount path is served");
    conn.send("POST", "/mcp", &with(BOTH, "application/json"), "{not json");
    let reply = conn.reply();
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["error"]["code"], -32700);
    let unknown = json!({"jsonrpc":"2.0","id":2,"method":"ping"});
    assert_eq!(
        conn.post(Some("0123456789abcdef0123456789abcdef"), &unknown)
            .status,
        404
    );
    assert_eq!(conn.post(Some(&sid), &unknown).status, 200, "still served");
    // Last: the adapter stops reading past max_body, so this connection is not reused.
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(4096));
    let mut conn = server.connect();
    conn.send("POST", "/mcp", &with(BOTH, "application/json"), &big);
    assert_eq!(conn.head().status, 413);
    server.shutdown();
}

/// The status of an `initialize` sent as `POST {target} {version}` with the header lines
/// `host` (each ending in CRLF), on a fresh connection.
fn initialize_status(server: &Running, version: &str, target: &str, host: &str) -> u16 {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}})
    .to_string();
    let mut stream = server.raw();
    let request = format!(
        "POST {target} {version}\r\n{host}Accept: {BOTH}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{init}",
        init.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    read_head(&mut BufReader::new(stream)).status
}

#[test]
fn an_http_1_1_request_needs_exactly_one_host_field() {
    let mut server = Running::start(HttpServerOptions::default(), app);
    let status = |version: &str, hosts: &str| initialize_status(&server, version, "/mcp", hosts);
    assert_eq!(status("HTTP/1.1", ""), 400, "no Host");
    let two = "Host: localhost\r\nHost: evil.example\r\n";
    assert_eq!(status("HTTP/1.1", two), 400, "two Host fields");
    assert_eq!(status("HTTP/1.1", "Host: localhost\r\n"), 200);
    assert_eq!(status("HTTP/1.0", ""), 200, "HTTP/1.0 may omit Host");
    server.shutdown();
}

/// A target in absolute form names the host the request is for: the DNS-rebinding check reads
/// it, not the `Host` field (RFC 9112, section 3.2.2).
#[test]
fn an_absolute_form_target_is_checked_by_its_own_host() {
    let mut server = Running::start(HttpServerOptions::default(), app);
    let status =
        |version: &str, target: &str, host: &str| initialize_status(&server, version, target, host);
    let local = "Host: localhost\r\n";
    let evil = "http://evil.example/mcp";
    assert_eq!(status("HTTP/1.1", evil, local), 403, "the target's host");
    assert_eq!(status("HTTP/1.0", evil, ""), 403, "no Host field at all");
    let other_host = "Host: evil.example\r\n";
    assert_eq!(status("HTTP/1.1", "http://localhost/mcp", other_host), 200);
    assert_eq!(status("HTTP/1.1", "/mcp", local), 200);
    server.shutdown();
}

#[test]
fn a_bearer_hook_guards_the_endpoint() {
    let options = HttpServerOptions {
        auth: Some(
            BearerAuth::new(|token| token == "s3cret")
                .resource_metadata("http://127.0.0.1/.well-known/oauth-protected-resource"),
        ),
        ..HttpServerOptions::default()
    };
    let mut server = Running::start(options, app);
    let mut conn = server.connect();
    let ping = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
    .to_string();
    let base = [("Accept", BOTH), ("Content-Type", "application/json")];
    conn.send("POST", "/mcp", &base, &ping);
    let reply = conn.reply();
    assert_eq!(reply.status, 401);
    let challenge = reply.header("www-authenticate").expect("challenge");
    assert!(challenge.starts_with("Bearer realm=\"mcp\""), "{challenge}");
    assert!(
        challenge.contains("resource_metadata=\"http://127.0.0.1/"),
        "{challenge}"
    );
    assert!(!challenge.contains("invalid_token"), "no token was sent");
    let mut wrong = base.to_vec();
    wrong.push(("Authorization", "Bearer nope"));
    conn.send("POST", "/mcp", &wrong, &ping);
    let reply = conn.reply();
    assert_eq!(reply.status, 401);
    assert!(reply
        .header("www-authenticate")
        .unwrap()
        .contains("error=\"invalid_token\""));
    let mut right = base.to_vec();
    right.push(("Authorization", "Bearer s3cret"));
    conn.send("POST", "/mcp", &right, &ping);
    assert_eq!(conn.reply().status, 200);
    server.shutdown();
}

#[test]
fn shutdown_ends_open_streams_and_returns() {
    let mut server = Running::start(HttpServerOptions::default(), app);
    let mut conn = server.connect();
    let sid = conn.open_session();
    let headers = [
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", sid.as_str()),
    ];
    conn.send("GET", "/mcp", &headers, "");
    let head = conn.head();
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-type"), Some("text/event-stream"));
    let priming = conn.chunk().expect("priming event");
    assert!(priming.starts_with("id: "), "{priming}");
    let report = server.shutdown();
    assert_eq!(report.abandoned_connections, 0, "{report:?}");
    // The stream was ended (last chunk) and the connection closed.
    assert_eq!(conn.chunk(), None);
    let mut rest = Vec::new();
    assert_eq!(conn.reader.read_to_end(&mut rest).unwrap(), 0);
    assert!(
        TcpStream::connect(server.addr).is_err(),
        "no longer accepting"
    );
}

#[test]
fn shutdown_answers_a_request_in_flight_with_an_error_carrying_its_id() {
    let mut server = Running::start(HttpServerOptions::default(), app);
    let mut conn = server.connect();
    let sid = conn.open_session_at("2025-06-18");
    let headers = [
        ("Accept", BOTH),
        ("Content-Type", "application/json"),
        ("Mcp-Session-Id", sid.as_str()),
    ];
    conn.send("POST", "/mcp", &headers, &call(41, "never").to_string());
    let head = conn.head();
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-type"), Some("text/event-stream"));
    let report = server.shutdown();
    assert_eq!(report.abandoned_connections, 0, "{report:?}");
    let answer = conn.message();
    assert_eq!(answer["id"], 41, "{answer}");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    let text = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(text.contains("shutting down"), "{text}");
    // One answer, then the stream ends.
    assert_eq!(conn.event(), None);
}

#[test]
fn a_dropped_sse_connection_is_resumed_on_a_new_one_with_last_event_id() {
    let mut server = Running::start(HttpServerOptions::default(), app);
    let mut conn = server.connect();
    let sid = conn.open_session();
    let headers = [
        ("Accept", BOTH),
        ("Content-Type", "application/json"),
        ("Mcp-Session-Id", sid.as_str()),
    ];
    conn.send(
        "POST",
        "/mcp",
        &headers,
        &call(9, "gated_resume").to_string(),
    );
    assert_eq!(conn.head().status, 200);
    let mut seen = String::new();
    while !seen.contains("before the drop") {
        seen.push_str(&conn.chunk().expect("stream ended early"));
    }
    // The id of the last event read: the resumption cursor.
    let cursor = seen
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("id: "))
        .expect("event ids")
        .to_owned();
    drop(conn); // the client goes away: not a cancellation
    for gate in RESUME_GATES.lock().unwrap().drain(..) {
        gate.send(());
    }
    let mut conn = server.connect();
    let headers = [
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", sid.as_str()),
        ("Last-Event-ID", cursor.as_str()),
    ];
    conn.send("GET", "/mcp", &headers, "");
    assert_eq!(conn.head().status, 200);
    let mut rest = String::new();
    while let Some(chunk) = conn.chunk() {
        rest.push_str(&chunk);
    }
    assert!(
        !rest.contains("before the drop"),
        "only events after the cursor: {rest}"
    );
    let after = rest
        .find("after the drop")
        .expect("the log sent while away");
    let result = rest.find("resumed result").expect("the result");
    assert!(after < result, "{rest}");
    assert!(rest.contains("\"id\":9"), "{rest}");
    server.shutdown();
}

/// A flood of `initialize` POSTs never followed by `notifications/initialized` fills the
/// session table; a new client still gets a session (the oldest un-initialized one makes
/// room), and a per-peer limit keyed by the loopback address refuses past it with 429.
#[test]
fn a_flood_of_uninitialized_sessions_does_not_lock_out_a_new_client() {
    let options = HttpServerOptions {
        endpoint: EndpointConfig {
            max_sessions: 8,
            ..EndpointConfig::default()
        },
        ..HttpServerOptions::default()
    };
    let mut server = Running::start(options, app);
    let mut flood = server.connect();
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}});
    for n in 0..40 {
        assert_eq!(flood.post(None, &init).status, 200, "initialize {n}");
    }
    let mut client = server.connect();
    let sid = client.open_session();
    let reply = client.post(Some(&sid), &call(1, "echo"));
    assert_eq!(reply.json()["result"]["content"][0]["text"], "hi");
    server.shutdown();

    let options = HttpServerOptions {
        endpoint: EndpointConfig {
            peer_limit: Some(std::sync::Arc::new(
                mcp_sansio::http::MaxSessionsPerPeer::new(2),
            )),
            ..EndpointConfig::default()
        },
        ..HttpServerOptions::default()
    };
    let mut server = Running::start(options, app);
    let mut conn = server.connect();
    conn.open_session();
    conn.open_session();
    let refused = conn.post(None, &init);
    assert_eq!(refused.status, 429);
    assert_eq!(refused.header("retry-after"), Some("10"));
    server.shutdown();
}
