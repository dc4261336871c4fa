//! The inspector's local HTTP/1.1 server: one thread per connection (at most
//! [`MAX_CONNECTIONS`]), one request per connection, heads and bodies bounded and read with
//! timeouts, every request passed through the [`Guard`] before the API sees it.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::api::{Api, Reply};
use super::guard::Guard;

/// Connections served at once; more are answered 503.
const MAX_CONNECTIONS: usize = 64;
/// The longest request head.
const MAX_HEAD: usize = 16 << 10;
/// The longest request body.
pub(crate) const MAX_BODY: usize = 1 << 20;
/// Headers read at most.
const MAX_HEADERS: usize = 64;
/// How long a slow peer may take to send its request or read a response.
const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// The response headers every answer carries: no caching, no sniffing, no referrer, and a
/// policy that lets the page load nothing but its own files.
const SECURITY_HEADERS: &str = "Cache-Control: no-store\r\n\
X-Content-Type-Options: nosniff\r\n\
Referrer-Policy: no-referrer\r\n\
X-Frame-Options: DENY\r\n\
Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; media-src 'self' data:; connect-src 'self'; base-uri 'none'; \
form-action 'none'; frame-ancestors 'none'\r\n";

/// One request, as read.
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) path: String,
    headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Request {
    /// The first value of header `name` (case-insensitive).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A whole response.
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) content_type: &'static str,
    pub(crate) body: Vec<u8>,
}

impl Response {
    /// A plain-text answer.
    pub(crate) fn text(status: u16, text: &str) -> Self {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: text.as_bytes().to_vec(),
        }
    }
}

/// Serves `listener` forever.
pub(crate) fn serve(listener: TcpListener, guard: Guard, api: Api) {
    let shared = Arc::new((guard, api));
    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        if open.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::AcqRel);
            let _ = write_response(&mut stream, &Response::text(503, "too many connections"));
            continue;
        }
        let (shared, held) = (shared.clone(), open.clone());
        let spawned = std::thread::Builder::new()
            .name("inspect-http".into())
            .spawn(move || {
                connection(stream, &shared.0, &shared.1);
                held.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            open.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Reads one request, checks it and answers it.
fn connection(mut stream: TcpStream, guard: &Guard, api: &Api) {
    let _ = stream.set_read_timeout(Some(IO_TIMEOUT));
    let _ = stream.set_write_timeout(Some(IO_TIMEOUT));
    let request = match read_request(&mut stream) {
        Ok(request) => request,
        Err(refusal) => {
            let _ = write_response(&mut stream, &refusal);
            return;
        }
    };
    let rest = match guard.check(&request.path, |name| request.header(name)) {
        Ok(rest) => rest.to_owned(),
        Err(why) => {
            let _ = write_response(&mut stream, &Response::text(403, why));
            return;
        }
    };
    match api.handle(&rest, &request) {
        Reply::Full(response) => {
            let _ = write_response(&mut stream, &response);
        }
        Reply::Feed(after) => super::sse::stream_feed(api, stream, after),
    }
}

/// Reads a head (up to [`MAX_HEAD`]) and a body of `Content-Length` (up to [`MAX_BODY`]).
fn read_request(stream: &mut TcpStream) -> Result<Request, Response> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let head_len = loop {
        if let Some(at) = find_head_end(&buf) {
            break at;
        }
        if buf.len() > MAX_HEAD {
            return Err(Response::text(431, "request head too large"));
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return Err(Response::text(400, "incomplete request")),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    if !matches!(
        parsed.parse(&buf[..head_len]),
        Ok(httparse::Status::Complete(_))
    ) {
        return Err(Response::text(400, "malformed request"));
    }
    let mut request = Request {
        method: parsed.method.unwrap_or("").to_owned(),
        path: parsed.path.unwrap_or("").to_owned(),
        headers: parsed
            .headers
            .iter()
            .map(|h| {
                (
                    h.name.to_owned(),
                    String::from_utf8_lossy(h.value).into_owned(),
                )
            })
            .collect(),
        body: Vec::new(),
    };
    if request.header("transfer-encoding").is_some() {
        return Err(Response::text(411, "send a Content-Length"));
    }
    let length = match request.header("content-length").map(str::parse::<usize>) {
        None => 0,
        Some(Ok(n)) if n <= MAX_BODY => n,
        Some(Ok(_)) => return Err(Response::text(413, "request body too large")),
        Some(Err(_)) => return Err(Response::text(400, "bad Content-Length")),
    };
    let mut body = buf.split_off(head_len);
    body.truncate(length);
    if body.len() < length {
        let missing = length - body.len();
        let mut rest = vec![0u8; missing];
        stream
            .read_exact(&mut rest)
            .map_err(|_| Response::text(400, "incomplete body"))?;
        body.extend_from_slice(&rest);
    }
    request.body = body;
    Ok(request)
}

fn find_head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| at + 4)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        502 => "Bad Gateway",
        _ => "Service Unavailable",
    }
}

/// Writes `response` and ends the exchange (`Connection: close`).
pub(crate) fn write_response(stream: &mut TcpStream, response: &Response) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n{SECURITY_HEADERS}\r\n",
        response.status,
        reason(response.status),
        response.content_type,
        response.body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(&response.body)?;
    stream.flush()
}

/// Writes the head of an event stream.
pub(crate) fn write_stream_head(stream: &mut TcpStream) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n{SECURITY_HEADERS}\r\n"
    );
    stream.write_all(head.as_bytes())?;
    stream.flush()
}
