//! `mcp-sansio client URL` failure paths that need no peer: an unreachable endpoint fails with
//! 1 and says why; a non-http URL and a server command after `--` are usage errors (2).

use std::net::TcpListener;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
        .args(args)
        .output()
        .expect("run mcp-sansio")
}

#[test]
fn an_unreachable_endpoint_fails_with_1_and_the_connect_error() {
    // A port that was free a moment ago: nothing listens there.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let out = run(&["client", &url, "--timeout", "10", "ping"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("initialize") && stderr.contains("cannot connect"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn only_http_urls_without_a_server_command_are_accepted() {
    let out = run(&["client", "https://example.invalid/mcp", "ping"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("only http://"));
    let out = run(&["client", "http://127.0.0.1:9/mcp", "ping", "--", "server"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&[
        "client",
        "--stdio",
        "http://127.0.0.1:9/mcp",
        "ping",
        "--",
        "server",
    ]);
    assert_eq!(out.status.code(), Some(2), "--stdio and a URL conflict");
}
