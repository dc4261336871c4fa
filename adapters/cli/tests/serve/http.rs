//! `mcp-sansio serve --http`: prints its URL once bound and exits 0 on SIGTERM (graceful
//! shutdown, not the default signal death); `--max-sessions-per-peer` reaches the endpoint.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::http_fixture::HttpFixture;

#[test]
fn serve_http_prints_its_url_and_exits_0_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
        .args(["serve", "--http"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn serve --http");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    assert!(
        first.starts_with("listening on http://127.0.0.1:") && first.ends_with("/mcp"),
        "{first:?}"
    );
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve --http did not stop after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// One `initialize` POST on a fresh connection: the status line and the whole response.
fn initialize(addr: &str) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
}

#[test]
fn max_sessions_per_peer_refuses_one_more_with_429() {
    let server = HttpFixture::start_with(&["--max-sessions-per-peer", "2"], &[]);
    let addr = server
        .url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_default()
        .to_owned();
    let responses: Vec<String> = (0..3).map(|_| initialize(&addr)).collect();
    server.terminate();
    assert!(responses[0].starts_with("HTTP/1.1 200"), "{}", responses[0]);
    assert!(responses[1].starts_with("HTTP/1.1 200"), "{}", responses[1]);
    let third = responses[2].to_ascii_lowercase();
    assert!(third.starts_with("http/1.1 429"), "{third}");
    assert!(third.contains("retry-after: 10"), "{third}");
}
