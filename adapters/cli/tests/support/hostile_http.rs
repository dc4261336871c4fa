//! A hostile Streamable HTTP server on loopback (a few threads of hand-written HTTP/1.1):
//! its standalone GET stream's first event is larger than the client takes, and `ping` is
//! answered once that event is out. Shared by the `client` and `inspect` tests.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Set once the GET stream's event is written.
pub type Flag = (Mutex<bool>, Condvar);

/// One request: method, and body.
pub fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, Vec<u8>)> {
    let mut line = String::new();
    reader.read_line(&mut line).ok().filter(|n| *n > 0)?;
    let method = line.split(' ').next()?.to_owned();
    let mut length = 0;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok().filter(|n| *n > 0)?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let content_length = header
            .split_once(':')
            .filter(|(name, _)| name.eq_ignore_ascii_case("content-length"));
        if let Some((_, value)) = content_length {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((method, body))
}

fn json(stream: &mut TcpStream, body: &str) {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}

/// Serves one connection: `initialize`, 202 for notifications, a GET stream whose first event
/// is `big` bytes (then held open), and `ping` answered once the GET's event is out.
pub fn serve(stream: TcpStream, big: usize, event_out: &Flag) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut stream = stream;
    while let Some((method, body)) = read_request(&mut reader) {
        let text = String::from_utf8_lossy(&body).into_owned();
        match method.as_str() {
            "GET" => {
                let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n";
                let _ = stream.write_all(head.as_bytes());
                let event = format!("data: {}\n\n", "x".repeat(big));
                let _ = stream.write_all(event.as_bytes());
                let _ = stream.flush();
                *event_out.0.lock().unwrap() = true;
                event_out.1.notify_all();
                // Held open until the client goes away.
                let mut rest = Vec::new();
                let _ = reader.read_to_end(&mut rest);
                return;
            }
            "DELETE" => {
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
            }
            _ if text.contains("\"initialize\"") => json(
                &mut stream,
                r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"hostile","version":"0"}}}"#,
            ),
            _ if text.contains("\"ping\"") => {
                // The GET's event is written before the answer (its arrival order at the
                // client is then the usual one, not a condition of the assertions).
                let out = event_out.0.lock().unwrap();
                let out = event_out
                    .1
                    .wait_timeout_while(out, Duration::from_secs(20), |o| !*o);
                drop(out);
                std::thread::sleep(Duration::from_millis(300));
                let id = serde_json::from_str::<serde_json::Value>(&text)
                    .ok()
                    .map(|v| v["id"].clone())
                    .unwrap_or_default();
                json(
                    &mut stream,
                    &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
                );
            }
            _ => {
                let _ = stream.write_all(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
            }
        }
    }
}

/// Serves every connection (a bounded number) on a loopback port with `serve`, writing
/// events of `big` bytes where it writes one and sharing `shared`: the port.
pub fn listen<S: Default + Send + Sync + 'static>(
    big: usize,
    serve: fn(TcpStream, usize, &S),
) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    let shared: Arc<S> = Arc::default();
    std::thread::spawn(move || {
        // Bounded: a client opens a handful of connections.
        for stream in listener.incoming().take(16).flatten() {
            let shared = shared.clone();
            std::thread::spawn(move || serve(stream, big, &shared));
        }
    });
    port
}
