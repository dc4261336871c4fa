//! The server's limits through real loopback sockets, with short timeouts: at the connection
//! cap a new connection waits and is served once another closes, or once the connection idle
//! longest is closed for it; a slow body gets 408 while
//! another client is served; a body declared past the limit gets 413 unread; an idle keep-alive connection is closed while one with a request
//! in flight is not; a silent GET stream gets keep-alive comments; a client that stops reading
//! has its stream cut by the write timeout; one client address holding every 2026-07-28
//! listen slot has its oldest stream ended (with the closing result) for another address.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::http::EndpointConfig;
use mcp_sansio::model::Implementation;
use mcp_sansio::model::LoggingLevel;
use mcp_sansio_http::server::{HttpServerOptions, MinRate};
use serde_json::json;

use super::rig::{read_head, Reply, Running, INITIALIZED, READ_LIMIT};

/// The text `big` answers with: larger than any socket buffer a loopback connection gets.
const BIG: usize = 16 << 20;

fn app(now: Instant) -> Server {
    let schema = json!({"type": "object"});
    Server::builder(Implementation::new("limits-test", "1"))
        .tool(Tool::new("echo", schema.clone()).sync_handler(|_, _| Ok(CallToolResult::text("hi"))))
        .tool(Tool::new("big", schema).sync_handler(|_, ctx| {
            // A log first: the answer is an SSE stream.
            ctx.log(LoggingLevel::Info, None, json!("big answer next"));
            Ok(CallToolResult::text("x".repeat(BIG)))
        }))
        .build(now)
}

/// A POST of `body` to `/mcp`, as bytes.
fn post(addr: SocketAddr, sid: Option<&str>, body: &str) -> Vec<u8> {
    let sid = sid.map_or(String::new(), |s| format!("Mcp-Session-Id: {s}\r\n"));
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\n{sid}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
/// Reads one whole response with a `Content-Length` body.
fn read_response(reader: &mut impl BufRead) -> Reply {
    let mut reply = read_head(reader);
    let len: usize = reply
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    reply.body = String::from_utf8_lossy(&body).into_owned();
    reply
}

/// initialize + initialized on `stream`; returns the session id.
fn open_session(addr: SocketAddr, stream: &TcpStream) -> String {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    (&*stream).write_all(&post(addr, None, INIT)).unwrap();
    let reply = read_response(&mut reader);
    assert_eq!(reply.status, 200, "{}", reply.body);
    let sid = reply.header("mcp-session-id").unwrap().to_string();
    (&*stream)
        .write_all(&post(addr, Some(&sid), INITIALIZED))
        .unwrap();
    assert_eq!(read_response(&mut reader).status, 202);
    sid
}

/// Whether the peer closed `stream` (EOF or reset) within the read limit, reading and
/// discarding whatever comes first; returns the bytes read.
fn read_to_close(stream: &mut TcpStream) -> (usize, bool) {
    let mut total = 0;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return (total, true),
            Ok(n) => total += n,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return (total, true),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return (total, false),
        }
    }
}

/// A GET stream on `stream` for session `sid`, its head read (a request in flight until it
/// closes).
fn open_get(addr: SocketAddr, stream: &TcpStream, sid: &str) {
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {sid}\r\n\r\n"
    );
    (&*stream).write_all(get.as_bytes()).unwrap();
    assert_eq!(read_head(&mut BufReader::new(stream)).status, 200);
}

/// Whether nothing arrives on `stream` for a short while (and it is not closed either).
fn silent_for_a_while(stream: &TcpStream) -> bool {
    stream
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut byte = [0u8; 1];
    let silent = matches!(
        (&*stream).read(&mut byte),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
    );
    stream.set_read_timeout(Some(READ_LIMIT)).unwrap();
    silent
}

/// At `max_connections`, with every connection busy (a GET stream open), the server stops
/// accepting: a new connection is not refused, it waits (in the kernel's backlog) and is
/// served as soon as an open one closes. The report counts both connections and the pause.
#[test]
fn at_the_cap_a_new_connection_waits_and_is_served_once_another_closes() {
    let mut server = Running::start(
        HttpServerOptions {
            max_connections: 1,
            ..HttpServerOptions::default()
        },
        app,
    );
    let first = server.raw();
    let sid = open_session(server.addr, &first);
    open_get(server.addr, &first, &sid);
    let waiting = server.raw();
    (&waiting)
        .write_all(&post(server.addr, None, INIT))
        .unwrap();
    // Not served while the first is open (and not closed either).
    assert!(
        silent_for_a_while(&waiting),
        "the waiting connection got an answer while the first was busy"
    );
    drop(first);
    let reply = read_response(&mut BufReader::new(&waiting));
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.header("mcp-session-id").is_some());
    drop(waiting);
    let report = server.shutdown();
    assert_eq!(report.connections, 2, "{report:?}");
    assert!(report.cap_reached >= 1, "{report:?}");
    assert_eq!(report.idle_reclaimed, 0, "{report:?}");
}

/// With `max_connections_per_peer`, one address holding its share (GET streams open, never
/// idle) gets 429 for one more connection, before any request is read, while the server has
/// room; once one of its connections closes, a new one is served again.
#[test]
fn past_the_per_address_cap_a_connection_gets_429_and_is_closed() {
    let mut server = Running::start(
        HttpServerOptions {
            max_connections_per_peer: Some(2),
            ..HttpServerOptions::default()
        },
        app,
    );
    let held: Vec<TcpStream> = (0..2)
        .map(|_| {
            let stream = server.raw();
            let sid = open_session(server.addr, &stream);
            open_get(server.addr, &stream, &sid);
            stream
        })
        .collect();
    let mut refused = server.raw();
    refused
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut answer = String::new();
    let _ = refused.read_to_string(&mut answer);
    assert!(
        answer.starts_with("HTTP/1.1 429 Too Many Requests\r\n"),
        "{answer:?}"
    );
    assert!(answer.contains("Retry-After: 1"), "{answer:?}");
    assert!(
        answer.contains("2 connections from this address"),
        "{answer:?}"
    );
    drop(held);
    // The closed connections give their places back (the server notices as it polls them).
    let started = Instant::now();
    let reply = loop {
        let stream = server.raw();
        (&stream).write_all(&post(server.addr, None, INIT)).unwrap();
        let reply = read_response(&mut BufReader::new(&stream));
        if reply.status != 429 || started.elapsed() > Duration::from_secs(10) {
            break reply;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(reply.status, 200, "{}", reply.body);
    let report = server.shutdown();
    assert!(report.peer_connections_refused >= 1, "{report:?}");
}

/// At the cap, a connection waiting in the backlog makes room: the open connection idle
/// longest (here one that never sent a byte, then one between two requests) is closed and the
/// waiting one served, while a busy one (its GET stream open) is left alone. Idle connections
/// cannot keep clients out until their header timeout.
#[test]
fn at_the_cap_the_connection_idle_longest_makes_room() {
    let mut server = Running::start(
        HttpServerOptions {
            max_connections: 3,
            ..HttpServerOptions::default()
        },
        app,
    );
    let busy = server.raw();
    let sid = open_session(server.addr, &busy);
    open_get(server.addr, &busy, &sid);
    let mut silent = server.raw();
    // Accepted before the next one, so idle longest.
    std::thread::sleep(Duration::from_millis(50));
    let mut between = server.raw();
    open_session(server.addr, &between);
    // Its last request ends (hyper drops the answer's body) well before the newcomer's.
    std::thread::sleep(Duration::from_millis(100));

    let newcomer = server.raw();
    (&newcomer)
        .write_all(&post(server.addr, None, INIT))
        .unwrap();
    let reply = read_response(&mut BufReader::new(&newcomer));
    assert_eq!(reply.status, 200, "{}", reply.body);
    silent.set_read_timeout(Some(READ_LIMIT)).unwrap();
    assert_eq!(
        read_to_close(&mut silent),
        (0, true),
        "the silent one is closed"
    );
    assert!(
        silent_for_a_while(&between),
        "the connection between requests is still open"
    );

    // Another newcomer: now the one between requests is the idlest.
    let second = server.raw();
    (&second).write_all(&post(server.addr, None, INIT)).unwrap();
    assert_eq!(read_response(&mut BufReader::new(&second)).status, 200);
    between.set_read_timeout(Some(READ_LIMIT)).unwrap();
    assert_eq!(read_to_close(&mut between), (0, true));
    // The GET stream was never touched: it still gets the session's messages.
    assert!(silent_for_a_while(&busy), "the busy connection stays open");

    drop((busy, newcomer, second));
    let report = server.shutdown();
    assert_eq!(report.idle_reclaimed, 2, "{report:?}");
    assert_eq!(report.connections, 5, "{report:?}");
}

/// A body that stalls gets 408 and the connection closes, by the whole-body deadline or by
/// the minimum rate; meanwhile another client is served.
#[test]
fn a_slow_body_gets_408_while_another_client_is_served() {
    let by_deadline = HttpServerOptions {
        body_timeout: Some(Duration::from_millis(400)),
        body_min_rate: None,
        ..HttpServerOptions::default()
    };
    let by_rate = HttpServerOptions {
        body_timeout: None,
        body_min_rate: Some(MinRate {
            bytes_per_sec: 1000,
            grace: Duration::from_millis(400),
        }),
        ..HttpServerOptions::default()
    };
    for options in [by_deadline, by_rate] {
        let server = Running::start(options, app);
        let mut slow = server.raw();
        let mut head = post(server.addr, None, INIT);
        // Everything but the body's last byte.
        head.pop();
        slow.write_all(&head).unwrap();
        let other = server.raw();
        open_session(server.addr, &other);
        let reply = read_response(&mut BufReader::new(&slow));
        assert_eq!(reply.status, 408, "{}", reply.body);
        assert_eq!(reply.header("connection"), Some("close"));
        assert!(read_to_close(&mut slow).1, "closed after the 408");
    }
}

/// A body whose `Content-Length` is past `max_body` gets 413 carrying the request's id from its
/// first bytes alone: the server does not wait for (or read) the rest, which never comes here
/// (no body deadline is set), and the connection closes after the answer.
#[test]
fn a_body_declared_past_the_limit_gets_413_without_being_read() {
    let options = HttpServerOptions {
        body_timeout: None,
        body_min_rate: None,
        ..HttpServerOptions::default()
    };
    let server = Running::start(options, app);
    let mut client = server.raw();
    let declared = (16 << 20) + 1;
    let first = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"pad":""#;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n{first}",
        server.addr
    );
    client.write_all(head.as_bytes()).unwrap();
    let reply = read_response(&mut BufReader::new(&client));
    assert_eq!(reply.status, 413, "{}", reply.body);
    let body: serde_json::Value = serde_json::from_str(&reply.body).unwrap();
    assert_eq!(body["id"], 7, "{body}");
    assert!(read_to_close(&mut client).1, "closed after the 413");
}

/// A connection with no request in flight closes after the keep-alive timeout; one holding
/// a GET stream open longer than that stays open (and its silent stream gets keep-alive
/// comments, which is how it is seen to stay open).
#[test]
fn an_idle_connection_closes_while_a_silent_get_stream_gets_keep_alive_comments() {
    let mut server = Running::start(
        HttpServerOptions {
            keep_alive_timeout: Some(Duration::from_millis(300)),
            endpoint: EndpointConfig {
                sse_keep_alive: Some(Duration::from_millis(200)),
                ..EndpointConfig::default()
            },
            ..HttpServerOptions::default()
        },
        app,
    );
    let mut idle = server.raw();
    let streaming = server.raw();
    let sid = open_session(server.addr, &idle);
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {sid}\r\n\r\n",
        server.addr
    );
    (&streaming).write_all(get.as_bytes()).unwrap();
    let mut reader = BufReader::new(&streaming);
    assert_eq!(read_head(&mut reader).status, 200);
    // Three comments: the stream outlives the keep-alive timeout twice over.
    let mut comments = 0;
    let mut line = String::new();
    for _ in 0..100 {
        line.clear();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if line.trim_end() == ": keep-alive" {
            comments += 1;
            if comments == 3 {
                break;
            }
        }
    }
    assert_eq!(comments, 3, "last line {line:?}");
    assert_eq!(read_to_close(&mut idle), (0, true), "the idle one closed");
    drop(reader);
    drop(streaming);
    server.shutdown();
}

/// A client that asks for a large answer and reads nothing has its stream cut once the
/// server's writes made no progress for the write timeout: what it then reads ends well
/// short of the answer.
#[test]
fn a_client_that_never_reads_has_its_stream_cut_by_the_write_timeout() {
    let server = Running::start(
        HttpServerOptions {
            write_timeout: Some(Duration::from_millis(200)),
            ..HttpServerOptions::default()
        },
        app,
    );
    // A small receive window, so the server's writes stall soon.
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(&server.addr.into()).unwrap();
    let mut client: TcpStream = socket.into();
    client.set_read_timeout(Some(READ_LIMIT)).unwrap();
    let sid = {
        let stream = client.try_clone().unwrap();
        open_session(server.addr, &stream)
    };
    let call =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{}}}"#;
    client
        .write_all(&post(server.addr, Some(&sid), call))
        .unwrap();
    // Reads nothing for many write timeouts.
    std::thread::sleep(Duration::from_secs(3));
    let (read, closed) = read_to_close(&mut client);
    assert!(closed, "the server cut the connection");
    assert!(read < BIG, "read {read} of {BIG}");
}

/// Writes all of `request` (the server must let it), then reads the answer's status.
fn status_after_sending_all(server: &Running, request: &[u8]) -> u16 {
    let mut client = server.raw();
    client
        .write_all(request)
        .expect("the server reads what the client still sends before it closes");
    read_head(&mut BufReader::new(&client)).status
}

/// More than the kernel buffers of a loopback connection hold (both sides).
const PAST_BUFFERS: usize = 12 << 20;

/// A client that writes its whole request before reading (as most do) gets the refusal of a
/// head too large, 431, even though the server stops parsing long before the head ends: the
/// connection reads and drops the rest before it closes. Closing with unread bytes would
/// reset the connection, failing the client's write and, on a real network, destroying an
/// answer not yet sent.
#[test]
fn a_head_too_large_sent_whole_gets_431() {
    let server = Running::start(HttpServerOptions::default(), app);
    let pad = "a".repeat(PAST_BUFFERS);
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nX-Pad: {pad}\r\nContent-Length: 2\r\n\r\n{{}}",
        server.addr
    );
    assert_eq!(status_after_sending_all(&server, request.as_bytes()), 431);
    let many: String = (0..5000).map(|i| format!("X-{i}: a\r\n")).collect();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\n{many}Content-Length: 2\r\n\r\n{{}}",
        server.addr
    );
    assert_eq!(status_after_sending_all(&server, request.as_bytes()), 431);
}

/// The same for a body past `max_body` sent whole: 413, though the server never reads it.
#[test]
fn a_body_too_large_sent_whole_gets_413() {
    let options = HttpServerOptions {
        endpoint: EndpointConfig {
            max_body: 64 * 1024,
            ..EndpointConfig::default()
        },
        ..HttpServerOptions::default()
    };
    let server = Running::start(options, app);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "a".repeat(PAST_BUFFERS)
    );
    let request = post(server.addr, None, &body);
    assert_eq!(status_after_sending_all(&server, &request), 413);
}

/// At `max_listen_streams`, a listen stream from another client address is served: the
/// oldest stream of the address holding them all ends with its closing listen result.
#[test]
fn one_address_holding_every_listen_slot_cannot_keep_another_out() {
    use super::sharing::{listed_app, listen, read_until};
    use std::net::Ipv4Addr;

    let options = HttpServerOptions {
        endpoint: EndpointConfig {
            max_listen_streams: 3,
            ..EndpointConfig::default()
        },
        ..HttpServerOptions::default()
    };
    let mut server = Running::start(options, listed_app);
    let greedy = Ipv4Addr::new(127, 0, 0, 1);
    let mut held: Vec<_> = (1..=3).map(|_| server.connect_from(greedy)).collect();
    for (id, conn) in (1..).zip(held.iter_mut()) {
        listen(conn, id);
    }
    let mut other = server.connect_from(Ipv4Addr::new(127, 0, 0, 2));
    listen(&mut other, 4);
    let mut text = String::new();
    read_until(&mut held[0], &mut text, "\"resultType\"");
    assert!(text.contains("\"id\":1"), "{text}");
    let mut rest = String::new();
    while let Some(chunk) = held[0].chunk() {
        rest.push_str(&chunk);
    }
    assert!(
        !rest.contains("data:"),
        "the stream ends after its result: {rest}"
    );
    drop((held, other));
    server.shutdown();
}
