//! The rig every server test uses: a server running on a loopback port in its own thread
//! (`Running`), a raw HTTP/1.1 connection to it (`Conn`) and one parsed response (`Reply`).
//! Every socket read gives up after `READ_LIMIT`, so a hang fails the test instead of
//! blocking it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mcp_sansio::app::server::Server;
use mcp_sansio_http::server::{
    Announcer, HttpServer, HttpServerOptions, RunReport, ShutdownHandle,
};
use serde_json::{json, Value};

/// Every socket read gives up after this.
pub const READ_LIMIT: Duration = Duration::from_secs(10);

/// The `Accept` value of a Streamable HTTP POST.
pub const BOTH: &str = "application/json, text/event-stream";

pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A server on `127.0.0.1:0`, run on its own thread until `shutdown` or drop.
pub struct Running {
    pub addr: SocketAddr,
    stop: ShutdownHandle,
    thread: Option<JoinHandle<RunReport>>,
}

impl Running {
    /// Binds and runs a server that builds each session's app with `app`.
    pub fn start(options: HttpServerOptions, app: fn(Instant) -> Server) -> Running {
        Running::start_announcing(options, app).0
    }

    /// [`Running::start`], also handing back the server's announcer.
    pub fn start_announcing(
        options: HttpServerOptions,
        app: fn(Instant) -> Server,
    ) -> (Running, Announcer) {
        let server = HttpServer::bind("127.0.0.1:0".parse().unwrap(), options, app).unwrap();
        assert!(server.url().ends_with("/mcp"));
        let announcer = server.announcer();
        let addr = server.local_addr();
        let stop = server.shutdown_handle();
        let thread = std::thread::spawn(move || server.run().unwrap());
        let running = Running {
            addr,
            stop,
            thread: Some(thread),
        };
        (running, announcer)
    }

    /// A bare socket with the read limit set.
    pub fn raw(&self) -> TcpStream {
        let stream = TcpStream::connect(self.addr).unwrap();
        stream.set_read_timeout(Some(READ_LIMIT)).unwrap();
        stream
    }

    /// A connection with a reader for responses and SSE events.
    pub fn connect(&self) -> Conn {
        self.conn(self.raw())
    }

    /// [`Running::connect`] from loopback address `from` (any of 127.0.0.0/8), so the server
    /// sees another client address.
    pub fn connect_from(&self, from: std::net::Ipv4Addr) -> Conn {
        let socket =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        socket.bind(&SocketAddr::from((from, 0)).into()).unwrap();
        socket.connect(&self.addr.into()).unwrap();
        let stream = TcpStream::from(socket);
        stream.set_read_timeout(Some(READ_LIMIT)).unwrap();
        self.conn(stream)
    }

    fn conn(&self, stream: TcpStream) -> Conn {
        Conn {
            reader: BufReader::new(stream.try_clone().unwrap()),
            stream,
            host: self.addr.to_string(),
            pending: String::new(),
        }
    }

    /// Stops the server and waits for its report.
    pub fn shutdown(&mut self) -> RunReport {
        self.stop.shutdown();
        self.thread.take().unwrap().join().unwrap()
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

/// One response: status, headers (lower-case names), and the body read so far.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// Reads one response head: the status and the header fields (lower-case names).
pub fn read_head(reader: &mut impl BufRead) -> Reply {
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {line:?}"));
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let l = line.trim_end();
        if l.is_empty() {
            return Reply {
                status,
                headers,
                body: String::new(),
            };
        }
        let (name, value) = l.split_once(':').unwrap();
        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
    }
}

/// A raw connection to a `Running` server.
pub struct Conn {
    pub stream: TcpStream,
    pub reader: BufReader<TcpStream>,
    host: String,
    /// SSE bytes read but not yet parsed into events.
    pending: String,
}

impl Conn {
    pub fn send(&mut self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) {
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

    pub fn head(&mut self) -> Reply {
        read_head(&mut self.reader)
    }

    /// The next chunk of a chunked body (`None` at the last chunk).
    pub fn chunk(&mut self) -> Option<String> {
        let mut size = String::new();
        self.reader.read_line(&mut size).unwrap();
        let size = usize::from_str_radix(size.trim(), 16).expect("chunk size");
        let mut data = vec![0; size + 2];
        self.reader.read_exact(&mut data).unwrap();
        data.truncate(size);
        (size > 0).then(|| String::from_utf8(data).unwrap())
    }

    /// A whole response (Content-Length or chunked).
    pub fn reply(&mut self) -> Reply {
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

    /// A Streamable HTTP POST of `body` to `/mcp`; the whole reply.
    pub fn post(&mut self, sid: Option<&str>, body: &Value) -> Reply {
        let mut headers = vec![("Accept", BOTH), ("Content-Type", "application/json")];
        if let Some(sid) = sid {
            headers.push(("Mcp-Session-Id", sid));
        }
        self.send("POST", "/mcp", &headers, &body.to_string());
        self.reply()
    }

    /// initialize (at `version`) + initialized over Streamable HTTP; the session id.
    pub fn open_session_at(&mut self, version: &str) -> String {
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":version,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
        let reply = self.post(None, &init);
        assert_eq!(reply.status, 200, "{reply:?}");
        assert_eq!(reply.json()["result"]["protocolVersion"], version);
        let sid = reply
            .header("mcp-session-id")
            .expect("session id")
            .to_owned();
        let done: Value = serde_json::from_str(INITIALIZED).unwrap();
        assert_eq!(self.post(Some(&sid), &done).status, 202);
        sid
    }

    /// initialize + initialized at 2025-11-25; the session id.
    pub fn open_session(&mut self) -> String {
        self.open_session_at("2025-11-25")
    }

    /// Opens an HTTP+SSE transport stream at `/sse`; its `endpoint` event's URI.
    pub fn open_sse(&mut self) -> String {
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
    /// Comments (keep-alives) and data-less events (priming) are skipped.
    pub fn event(&mut self) -> Option<(String, String)> {
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
                    continue;
                }
                return Some((name, data.join("\n")));
            }
            let chunk = self.chunk()?;
            self.pending.push_str(&chunk);
        }
    }

    /// The next `message` event, as JSON.
    pub fn message(&mut self) -> Value {
        let (name, data) = self.event().expect("a message event");
        assert_eq!(name, "message");
        serde_json::from_str(&data).unwrap()
    }
}
