//! `mcp-sansio serve --http --auth-issuer ... --auth-token ...`: the demo server as an OAuth
//! protected resource, checked over loopback with raw HTTP/1.1: metadata at the well-known
//! URI, 401 with the pointer and scope without a token, 403 for a tool scope the token lacks,
//! 200 with a token that has it. Stopped with SIGTERM by PID.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Kills the server by PID (SIGTERM, then SIGKILL) when the test ends, even on failure.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let started = Instant::now();
        while self.0.try_wait().ok().flatten().is_none() {
            if started.elapsed() > Duration::from_secs(20) {
                let _ = self.0.kill();
                let _ = self.0.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Status, raw head (lowercased) and body of one request on its own connection.
fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[String],
    body: &str,
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    req.push_str(body);
    stream.write_all(req.as_bytes()).unwrap();
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_owned())
}

#[test]
fn serve_http_with_auth_flags_is_a_protected_resource() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            "http://127.0.0.1:9/issuer",
            "--auth-scope",
            "mcp:use",
            "--auth-tool-scope",
            "add=math:write",
            "--auth-token",
            "reader:mcp:use",
            "--auth-token",
            "writer:mcp:use,math:write",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn serve --http");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let _server = Server(child);
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    let url = first
        .strip_prefix("listening on ")
        .expect("URL line")
        .to_owned();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let protected = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.starts_with("protected resource"))
        .expect("protected resource line");
    let metadata_url = format!("http://{addr}/.well-known/oauth-protected-resource/mcp");
    assert!(protected.contains(&metadata_url), "{protected}");

    let (status, head, body) = request(
        &addr,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        "",
    );
    assert_eq!(status, 200, "{head}");
    let doc: serde_json::Value = serde_json::from_str(&body).expect("json");
    assert_eq!(doc["resource"], url.as_str());
    assert_eq!(doc["authorization_servers"][0], "http://127.0.0.1:9/issuer");
    assert_eq!(
        doc["scopes_supported"],
        serde_json::json!(["mcp:use", "math:write"])
    );

    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let base = vec![
        "Accept: application/json, text/event-stream".to_owned(),
        "Content-Type: application/json".to_owned(),
    ];
    let (status, head, _) = request(&addr, "POST", "/mcp", &base, init);
    assert_eq!(status, 401);
    assert!(
        head.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{head}"
    );
    assert!(head.contains("scope=\"mcp:use\""), "{head}");

    let with = |token: &str| {
        let mut h = base.clone();
        h.push(format!("Authorization: Bearer {token}"));
        h
    };
    let (status, _, _) = request(&addr, "POST", "/mcp", &with("nope"), init);
    assert_eq!(status, 401);
    let (status, head, _) = request(&addr, "POST", "/mcp", &with("reader"), init);
    assert_eq!(status, 200, "{head}");
    // A call of the scoped tool: refused before any session lookup.
    let add = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#;
    let (status, head, _) = request(&addr, "POST", "/mcp", &with("reader"), add);
    assert_eq!(status, 403, "{head}");
    assert!(head.contains("error=\"insufficient_scope\""), "{head}");
    assert!(head.contains("scope=\"mcp:use math:write\""), "{head}");
    // The writer passes the scope check (the endpoint then wants a session: 400, not 403).
    let (status, _, _) = request(&addr, "POST", "/mcp", &with("writer"), add);
    assert_ne!(status, 403);
    assert_ne!(status, 401);
}
