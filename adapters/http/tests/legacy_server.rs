//! The legacy HTTP+SSE transport (2024-11-05) as the HTTP server adapter serves it beside
//! Streamable HTTP, through real loopback sockets and a tiny raw HTTP/1.1 client: the
//! `endpoint` event, 202 for accepted messages with the answers on the session's stream, the
//! status codes (400 bad body / missing sessionId, 404 unknown session, 405, 415, 403 by the
//! shared Host/Origin policy), two concurrent sessions each getting only their own messages
//! (none on two streams), and Streamable HTTP working on /mcp at the same time.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::thread::JoinHandle;
use std::time::Duration;

use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::model::Implementation;
use mcp_sansio_http::server::{HttpServer, HttpServerOptions, RunReport, ShutdownHandle};
use serde_json::{json, Value};

/// Every socket read gives up after this (a hang fails the test instead of blocking it).
const READ_LIMIT: Duration = Duration::from_secs(10);

fn app(now: std::time::Instant) -> Server {
    Server::builder(Implementation::new("legacy-adapter-test", "1"))
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

struct Running {
    addr: String,
    stop: ShutdownHandle,
    thread: Option<JoinHandle<RunReport>>,
}

impl Running {
    fn start(options: HttpServerOptions) -> Running {
        let server = HttpServer::bind("127.0.0.1:0".parse().unwrap(), options, app).unwrap();
        let addr = server.local_addr().to_string();
        let stop = server.shutdown_handle();
        let thread = std::thread::spawn(move || server.run().unwrap());
        Running {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    fn connect(&self) -> Conn {
        let stream = TcpStream::connect(&self.addr).unwrap();
        stream.set_read_timeout(Some(READ_LIMIT)).unwrap();
        Conn {
            reader: BufReader::new(stream.try_clone().unwrap()),
            stream,
            host: self.addr.clone(),
            pending: String::new(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.shutdown();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Conn {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
    host: String,
    /// SSE bytes read but not yet parsed into events.
    pending: String,
}

impl Conn {
    fn send(&mut self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) {
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n",
            self.host,
            body.len()
        );
        for (n, v) in headers {
            req.push_str(&format!("{n}: {v}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(body);
        self.stream.write_all(req.as_bytes()).unwrap();
    }

    fn head(&mut self) -> Reply {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status = line.split(' ').nth(1).expect("status").parse().unwrap();
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (n, v) = line.split_once(':').unwrap();
            headers.push((n.to_ascii_lowercase(), v.trim().to_owned()));
        }
        Reply {
            status,
            headers,
            body: String::new(),
        }
    }

    /// The next chunk of a chunked body (`None` at the last chunk).
    fn chunk(&mut self) -> Option<String> {
        let mut size = String::new();
        self.reader.read_line(&mut size).unwrap();
        let size = usize::from_str_radix(size.trim(), 16).expect("chunk size");
        let mut data = vec![0; size + 2];
        self.reader.read_exact(&mut data).unwrap();
        data.truncate(size);
        (size > 0).then(|| String::from_utf8(data).unwrap())
    }

    fn reply(&mut self) -> Reply {
        let mut reply = self.head();
        if let Some(len) = reply.header("content-length") {
            let mut body = vec![0; len.parse().unwrap()];
            self.reader.read_exact(&mut body).unwrap();
            reply.body = String::from_utf8(body).unwrap();
        } else if reply.header("transfer-encoding") == Some("chunked") {
            while let Some(chunk) = self.chunk() {
                reply.body.push_str(&chunk);
            }
        }
        reply
    }

    /// Opens the SSE stream; its `endpoint` event's URI.
    fn open_sse(&mut self) -> String {
        self.send("GET", "/sse", &[("Accept", "text/event-stream")], "");
        let head = self.head();
        assert_eq!(head.status, 200, "{head:?}");
        assert_eq!(head.header("content-type"), Some("text/event-stream"));
        let (event, data) = self.event().expect("the endpoint event");
        assert_eq!(event, "endpoint");
        assert!(data.starts_with("/messages?sessionId="), "{data}");
        data
    }

    /// The next SSE event (name, data) of the stream this connection reads; `None` at its end.
    /// Keep-alive comments are skipped.
    fn event(&mut self) -> Option<(String, String)> {
        loop {
            if let Some(end) = self.pending.find("\n\n") {
                let block: String = self.pending.drain(..end + 2).collect();
                let mut name = String::from("message");
                let mut data = Vec::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        name = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push(v.strip_prefix(' ').unwrap_or(v).to_owned());
                    }
                }
                if data.is_empty() {
                    continue; // a comment
                }
                return Some((name, data.join("\n")));
            }
            let chunk = self.chunk()?;
            self.pending.push_str(&chunk);
        }
    }

    /// The next `message` event, as JSON.
    fn message(&mut self) -> Value {
        let (name, data) = self.event().expect("a message event");
        assert_eq!(name, "message");
        serde_json::from_str(&data).unwrap()
    }
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

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// POSTs `body` to `uri` on a fresh connection; the reply.
fn post(server: &Running, uri: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut conn = server.connect();
    conn.send("POST", uri, headers, body);
    conn.reply()
}

#[test]
fn the_legacy_pair_answers_with_its_status_codes() {
    let server = Running::start(HttpServerOptions::default());
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
    let server = Running::start(HttpServerOptions::default());
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
fn streamable_http_is_served_beside_the_legacy_pair() {
    let server = Running::start(HttpServerOptions::default());
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
    // The legacy session's answer still comes on its stream, and only there.
    let answer = sse.message();
    assert_eq!(answer["result"]["protocolVersion"], "2024-11-05");
}

#[test]
fn without_the_legacy_mount_its_paths_are_unknown() {
    let server = Running::start(HttpServerOptions {
        legacy: None,
        ..HttpServerOptions::default()
    });
    let mut conn = server.connect();
    conn.send("GET", "/sse", &[("Accept", "text/event-stream")], "");
    assert_eq!(conn.reply().status, 404);
    assert_eq!(
        post(&server, "/messages?sessionId=ab", &[JSON], "{}").status,
        404
    );
}
