//! `mcp-sansio inspect` as a test peer: started with its arguments, its page URL read from
//! the first stdout line, killed by PID when dropped; and a plain HTTP/1.1 client over
//! `std::net` for its API (and for chromedriver).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A running inspector.
pub struct Inspector {
    child: Child,
    /// `http://127.0.0.1:PORT/t/TOKEN/`.
    pub url: String,
}

impl Inspector {
    /// Starts `mcp-sansio inspect ARGS`.
    pub fn start(args: &[&str]) -> Inspector {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
            .arg("inspect")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn mcp-sansio inspect");
        let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        let url = lines.next().and_then(Result::ok).unwrap_or_default();
        let inspector = Inspector { child, url };
        assert!(
            inspector.url.starts_with("http://127.0.0.1:") && inspector.url.contains("/t/"),
            "unexpected first stdout line: {:?}",
            inspector.url
        );
        inspector
    }

    /// `host:port` of the page.
    pub fn authority(&self) -> &str {
        let rest = self.url.trim_start_matches("http://");
        rest.split('/').next().unwrap_or(rest)
    }

    /// The path of `rest` under the token (`/t/TOKEN/rest`).
    pub fn path(&self, rest: &str) -> String {
        let base = &self.url[self.url.find("/t/").unwrap_or(0)..];
        format!("{base}{rest}")
    }

    /// `GET rest` with the page's own Host: status and JSON body.
    #[allow(dead_code)] // Not every test binary including this module uses it.
    pub fn get(&self, rest: &str) -> (u16, Value) {
        let (status, body) = http(self.authority(), "GET", &self.path(rest), &[], None);
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    }

    /// `POST rest` with a JSON body: status and JSON body.
    #[allow(dead_code)] // Not every test binary including this module uses it.
    pub fn post(&self, rest: &str, body: &Value) -> (u16, Value) {
        let json = [("Content-Type", "application/json")];
        let body = body.to_string();
        let (status, body) = http(
            self.authority(),
            "POST",
            &self.path(rest),
            &json,
            Some(&body),
        );
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    }

    /// Waits (bounded) until the connection's state is `connected`.
    #[allow(dead_code)] // Not every test binary including this module uses it.
    pub fn wait_connected(&self, within: Duration) -> Value {
        let until = Instant::now() + within;
        loop {
            let (_, state) = self.get("api/state");
            if state["status"] == "connected" || Instant::now() > until {
                return state;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Inspector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request to `authority` (Host is the authority and Content-Length the body's
/// unless `headers` give them):
/// the status and the body (read to the end: the peer closes).
pub fn http(
    authority: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(authority).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {authority}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let body = body.unwrap_or("");
    if !headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-length"))
    {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    // A peer may answer (a refusal) and close before reading all: read its answer anyway.
    let _ = stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body.as_bytes()));
    let mut raw = read_response(&mut stream);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status code");
    let mut body = raw.split_off(split + 4);
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = dechunk(&body);
    }
    (status, body)
}

/// A whole response: up to the end of a `Content-Length` or chunked body, else to the end of
/// the stream (some peers, chromedriver among them, answer `Connection: close` and keep the
/// connection open).
fn read_response(stream: &mut TcpStream) -> Vec<u8> {
    let mut raw = Vec::new();
    let mut chunk = [0u8; 16384];
    loop {
        if let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
            let body = &raw[split + 4..];
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok());
            let done = match length {
                Some(n) => body.len() >= n,
                None if head.contains("transfer-encoding: chunked") => body.ends_with(b"0\r\n\r\n"),
                None => false,
            };
            if done {
                return raw;
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return raw,
            Ok(n) => raw.extend_from_slice(&chunk[..n]),
        }
    }
}

/// The payload of a chunked body.
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = raw.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&raw[..end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("0").trim(), 16)
            .unwrap_or(0);
        if size == 0 || raw.len() < end + 2 + size {
            break;
        }
        out.extend_from_slice(&raw[end + 2..end + 2 + size]);
        raw = &raw[(end + 4 + size).min(raw.len())..];
    }
    out
}

/// The feed's records read for `within` (the stream is cut then).
#[allow(dead_code)] // Not every test binary including this module uses it.
pub fn feed_records(inspector: &Inspector, within: Duration) -> Vec<Value> {
    let mut stream = TcpStream::connect(inspector.authority()).expect("connect");
    stream.set_read_timeout(Some(within)).expect("timeout");
    let head = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\n\r\n",
        inspector.path("api/frames"),
        inspector.authority()
    );
    stream.write_all(head.as_bytes()).expect("write");
    let until = Instant::now() + within;
    let mut raw = Vec::new();
    let mut chunk = [0u8; 65536];
    while Instant::now() < until {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => raw.extend_from_slice(&chunk[..n]),
        }
    }
    String::from_utf8_lossy(&raw)
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}
