//! A lean measuring client for the server-only HTTP benches: raw keep-alive HTTP/1.1 on
//! blocking `std::net::TcpStream`s, on the calling thread, with no MCP engine. It sends the
//! handshake (`initialize`, then `notifications/initialized`) once, then `tools/call` of the
//! echo tool again and again, and reads of each answer only the status line, the
//! `Content-Length` (or the chunks of an SSE body up to its end) and the request id in the
//! body. The same client drives our server, rmcp's and the bare hyper floor (which echoes the
//! request body, id included), so a ratio of two servers' rates carries no client's cost.
//!
//! `in_flight` requests are `in_flight` connections of one session, each with one request:
//! all are written, then the answers are read in order (a blocked read waits for its own
//! connection only; the others' answers wait in their sockets).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::ECHO_TEXT;

/// Which server is driven: an MCP server (session handshake first) or the floor (none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A Streamable HTTP MCP server with sessions.
    Mcp,
    /// The bare hyper floor: any POST body comes back as the answer.
    Floor,
}

/// One kept-alive connection and what was read past the last answer.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

/// The parts of an answer the client looks at.
struct Answer {
    status: u16,
    session: Option<String>,
    body: Vec<u8>,
}

/// Connections to one server, in one session once the handshake ran.
pub struct LeanClient {
    conns: Vec<Conn>,
    host: String,
    path: String,
    session: Option<String>,
    next_id: u64,
    request: Vec<u8>,
}

impl LeanClient {
    /// Opens `in_flight` connections to `url` (`http://HOST:PORT/PATH`) and, for an MCP
    /// server, runs the handshake on the first.
    pub fn connect(url: &str, target: Target, in_flight: usize) -> io::Result<Self> {
        let rest = url.strip_prefix("http://").unwrap_or(url);
        let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let conns = (0..in_flight.max(1))
            .map(|_| {
                let stream = TcpStream::connect(host)?;
                stream.set_nodelay(true)?;
                Ok(Conn {
                    stream,
                    buf: Vec::with_capacity(4096),
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        let mut client = LeanClient {
            conns,
            host: host.to_owned(),
            path: if path.is_empty() {
                "/".into()
            } else {
                path.into()
            },
            session: None,
            next_id: 1,
            request: Vec::with_capacity(512),
        };
        if target == Target::Mcp {
            client.handshake()?;
        }
        Ok(client)
    }

    fn handshake(&mut self) -> io::Result<()> {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"lean","version":"0"}}}"#;
        self.write(0, init)?;
        let answer = read_answer(&mut self.conns[0])?;
        if answer.status != 200 || !has_id(&answer.body, 0) {
            return Err(bad("initialize was not answered"));
        }
        self.session = Some(
            answer
                .session
                .ok_or_else(|| bad("initialize answered without Mcp-Session-Id"))?,
        );
        self.write(
            0,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        )?;
        let answer = read_answer(&mut self.conns[0])?;
        if answer.status != 202 {
            return Err(bad("notifications/initialized was not accepted"));
        }
        Ok(())
    }

    /// Writes one POST of `body` on connection `conn`.
    fn write(&mut self, conn: usize, body: &str) -> io::Result<()> {
        let r = &mut self.request;
        r.clear();
        write!(
            r,
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.path,
            self.host,
            body.len()
        )?;
        if let Some(sid) = &self.session {
            write!(r, "Mcp-Session-Id: {sid}\r\n")?;
        }
        r.extend_from_slice(b"\r\n");
        r.extend_from_slice(body.as_bytes());
        self.conns[conn].stream.write_all(r)
    }

    /// One round: a `tools/call` of the echo tool on every connection, then every answer
    /// read and checked (status 200, the request's id in the body). Returns the number of
    /// exchanges.
    pub fn round(&mut self) -> io::Result<usize> {
        let first = self.next_id;
        for conn in 0..self.conns.len() {
            let id = self.next_id;
            self.next_id += 1;
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{}}}}}}}"#,
                serde_json::to_string(ECHO_TEXT).unwrap_or_default()
            );
            self.write(conn, &body)?;
        }
        for (i, conn) in self.conns.iter_mut().enumerate() {
            let answer = read_answer(conn)?;
            if answer.status != 200 || !has_id(&answer.body, first + i as u64) {
                return Err(bad("a call was not answered"));
            }
        }
        Ok(self.conns.len())
    }

    /// Runs `rounds` rounds; returns the exchanges and the time they took.
    pub fn sample(&mut self, rounds: u64) -> io::Result<(usize, Duration)> {
        let start = Instant::now();
        let mut exchanges = 0;
        for _ in 0..rounds {
            exchanges += self.round()?;
        }
        Ok((exchanges, start.elapsed()))
    }
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

/// Whether `body` holds `"id":ID` (not followed by another digit).
fn has_id(body: &[u8], id: u64) -> bool {
    let needle = format!("\"id\":{id}");
    body.windows(needle.len()).enumerate().any(|(at, w)| {
        w == needle.as_bytes()
            && !body
                .get(at + needle.len())
                .is_some_and(|b| b.is_ascii_digit())
    })
}

/// Reads more bytes into `conn.buf`; an error at end of stream.
fn fill(conn: &mut Conn) -> io::Result<()> {
    let mut chunk = [0u8; 4096];
    let n = conn.stream.read(&mut chunk)?;
    if n == 0 {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed"));
    }
    conn.buf.extend_from_slice(&chunk[..n]);
    Ok(())
}

/// Where `needle` starts in `hay` at or after `from`.
fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|at| at + from)
}

/// Reads one whole answer off `conn` (head, then a `Content-Length` body or chunks up to the
/// last), leaving whatever follows in its buffer.
fn read_answer(conn: &mut Conn) -> io::Result<Answer> {
    let head_end = loop {
        if let Some(at) = find(&conn.buf, b"\r\n\r\n", 0) {
            break at + 4;
        }
        fill(conn)?;
    };
    let head = std::str::from_utf8(&conn.buf[..head_end]).map_err(|_| bad("head not UTF-8"))?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("no status"))?;
    let mut length = None;
    let mut chunked = false;
    let mut session = None;
    for line in head.split("\r\n").skip(1) {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse::<usize>().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        } else if name.eq_ignore_ascii_case("mcp-session-id") {
            session = Some(value.to_owned());
        }
    }
    conn.buf.drain(..head_end);
    let body = if chunked {
        read_chunks(conn)?
    } else {
        let length = length.unwrap_or(0);
        while conn.buf.len() < length {
            fill(conn)?;
        }
        conn.buf.drain(..length).collect()
    };
    Ok(Answer {
        status,
        session,
        body,
    })
}

/// A chunked body up to its last (empty) chunk, joined.
fn read_chunks(conn: &mut Conn) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(at) = find(&conn.buf, b"\r\n", 0) {
                break at;
            }
            fill(conn)?;
        };
        let size_text = std::str::from_utf8(&conn.buf[..line_end]).map_err(|_| bad("chunk"))?;
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| bad("chunk size"))?;
        // The size line, the data and its CRLF.
        let whole = line_end + 2 + size + 2;
        while conn.buf.len() < whole {
            fill(conn)?;
        }
        body.extend_from_slice(&conn.buf[line_end + 2..line_end + 2 + size]);
        conn.buf.drain(..whole);
        if size == 0 {
            return Ok(body);
        }
    }
}
