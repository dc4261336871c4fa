//! `mcp-sansio client --era auto|stateful|stateless` against our own dual-era server over stdio
//! and HTTP (the era reported, and the answer shaped by that era only: `resultType` and the
//! serverInfo `_meta` at 2026-07-28, neither after `initialize`), and the `auto` probe falling
//! back to `initialize` on servers that only speak the handshake era: the TypeScript SDK's
//! server-everything (answers `server/discover` with -32601) and the Python SDK server (never
//! answers a request before `initialize`: the probe times out). The SDK peers need
//! scripts/install-peers (`source .ci-cache/env`): skipped without them, a failure under `CI`.

use std::process::{Command, Output};

use serde_json::Value;

use crate::harness;
use crate::http_fixture;

use harness::peers_ready;
use http_fixture::HttpFixture;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-sansio");

/// Runs `mcp-sansio client <target...> --verbose <op...> [-- server...]` (bounded by
/// `--timeout`: the client ends itself).
fn client(target: &[&str], op: &[&str], server: &[&str]) -> Output {
    let mut command = Command::new(BIN);
    command
        .arg("client")
        .args(target)
        .args(["--verbose", "--timeout", "30", "--server-stderr", "null"])
        .args(op);
    if !server.is_empty() {
        command.arg("--").args(server);
    }
    command.output().expect("run mcp-sansio client")
}

/// Counts the starts of a stdio server: the command runs through `sh`, which appends a line
/// to a log file before `exec`ing the server.
struct StartLog(std::path::PathBuf);

impl StartLog {
    fn new(name: &str) -> StartLog {
        let path = std::env::temp_dir().join(format!(
            "mcp-sansio-client-era-{name}-{}.starts",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        StartLog(path)
    }

    /// `server` wrapped so that each start is logged.
    fn wrap<'a>(&'a self, server: &[&'a str]) -> Vec<&'a str> {
        let mut wrapped = vec!["sh", "-c", r#"echo start >> "$0"; exec "$@""#];
        wrapped.push(self.0.to_str().expect("a UTF-8 temp path"));
        wrapped.extend_from_slice(server);
        wrapped
    }

    fn count(&self) -> usize {
        std::fs::read_to_string(&self.0).map_or(0, |log| log.lines().count())
    }
}

impl Drop for StartLog {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The JSON on stdout of a successful run, and its stderr.
fn answer(out: &Output) -> (Value, String) {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (json, stderr)
}

/// Checks the era line and that the result has exactly that era's shape.
fn assert_era(json: &Value, stderr: &str, stateless: bool) {
    let (want, other) = if stateless {
        ("detected era: 2026-07-28", "detected era: 2025-11-25")
    } else {
        ("detected era: 2025-11-25", "detected era: 2026-07-28")
    };
    assert!(stderr.contains(want), "{stderr}");
    assert!(!stderr.contains(other), "{stderr}");
    let server_info = &json["_meta"]["io.modelcontextprotocol/serverInfo"]["name"];
    if stateless {
        assert_eq!(json["resultType"], "complete", "{json}");
        assert_eq!(server_info, "mcp-sansio-reference-fixture", "{json}");
    } else {
        assert!(json.get("resultType").is_none(), "{json}");
        assert!(server_info.is_null(), "{json}");
    }
}

fn first_text(json: &Value) -> &str {
    json["content"][0]["text"].as_str().unwrap_or("")
}

/// Each era against `target`: a tool call and a full listing, shaped by the era.
fn each_era(target: &[&str], server: &[&str]) {
    for (era, stateless) in [("auto", true), ("stateless", true), ("stateful", false)] {
        let mut args = target.to_vec();
        args.extend(["--era", era]);
        let call = client(&args, &["tools", "call", "test_simple_text"], server);
        let (json, stderr) = answer(&call);
        assert_era(&json, &stderr, stateless);
        assert_eq!(
            first_text(&json),
            "This is a simple text response for testing."
        );
        let list = client(&args, &["tools", "list"], server);
        let (json, stderr) = answer(&list);
        assert_era(&json, &stderr, stateless);
        let tools = json["tools"].as_array().expect("tools");
        assert!(
            tools.iter().any(|t| t["name"] == "test_simple_text"),
            "{json}"
        );
        assert!(json.get("nextCursor").is_none(), "pages followed: {json}");
        if stateless {
            // The cache hints of a cacheable result are passed through as data.
            assert!(
                json["ttlMs"].is_u64() && json["cacheScope"].is_string(),
                "{json}"
            );
        }
    }
}

#[test]
fn our_server_over_stdio_in_each_era() {
    each_era(&["--stdio"], &[BIN, "serve", "--stdio"]);
}

#[test]
fn our_server_over_http_in_each_era() {
    let fixture = HttpFixture::start(&[]);
    each_era(&[fixture.url.as_str()], &[]);
}

#[test]
fn stateless_ping_is_a_discover_and_set_level_is_refused() {
    let server = [BIN, "serve", "--stdio"];
    let ping = client(&["--stdio", "--era", "stateless"], &["ping"], &server);
    let (json, _) = answer(&ping);
    assert_eq!(json, serde_json::json!({}));
    let level = client(
        &["--stdio", "--era", "stateless"],
        &["set-level", "debug"],
        &server,
    );
    assert_eq!(level.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&level.stderr).contains("logging/setLevel"));
}

#[test]
fn a_stateless_resource_read_of_a_missing_uri_fails_with_the_servers_error() {
    let out = client(
        &["--stdio", "--era", "stateless"],
        &[
            "resources",
            "read",
            "test://nonexistent-resource-for-conformance-testing",
        ],
        &[BIN, "serve", "--stdio"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("-32602"), "{stderr}");
}

#[test]
fn the_probe_falls_back_on_the_ts_sdk_server() {
    if !peers_ready() {
        return;
    }
    let node = std::env::var("MCP_NODE22").expect("MCP_NODE22");
    let everything = std::env::var("MCP_SERVER_EVERYTHING").expect("MCP_SERVER_EVERYTHING");
    let starts = StartLog::new("ts");
    let out = client(
        &["--stdio"],
        &["tools", "list"],
        &starts.wrap(&[&node, &everything]),
    );
    let (json, stderr) = answer(&out);
    // The refused probe's process gets the handshake: the server is started once.
    assert_eq!(starts.count(), 1, "{stderr}");
    assert!(stderr.contains("era probe: JSON-RPC error"), "{stderr}");
    assert!(stderr.contains("detected era: 2025-11-25"), "{stderr}");
    assert!(!stderr.contains("detected era: 2026-07-28"), "{stderr}");
    assert!(
        json["tools"].as_array().is_some_and(|t| !t.is_empty()),
        "{json}"
    );
}

#[test]
fn the_python_sdk_stdio_server_is_found_stateless() {
    if !peers_ready() {
        return;
    }
    // The Python SDK (2.3) answers `server/discover` over stdio too: no fallback.
    let python = std::env::var("MCP_PYTHON").expect("MCP_PYTHON");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/interop/py/sdk_server.py");
    let script = script.to_string_lossy().into_owned();
    let out = client(
        &["--stdio"],
        &["tools", "call", "add", "--args", r#"{"a":2,"b":3}"#],
        &[&python, &script],
    );
    let (json, stderr) = answer(&out);
    assert!(stderr.contains("detected era: 2026-07-28"), "{stderr}");
    assert!(!stderr.contains("era probe:"), "{stderr}");
    assert_eq!(first_text(&json), "5", "{json}");
}

#[test]
fn the_probe_falls_back_after_a_timeout_on_a_server_silent_before_initialize() {
    if !peers_ready() {
        return;
    }
    let python = std::env::var("MCP_PYTHON").expect("MCP_PYTHON");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/interop/py/quiet_until_initialize.py");
    let script = script.to_string_lossy().into_owned();
    let starts = StartLog::new("quiet");
    let out = client(
        &["--stdio"],
        &["tools", "call", "add", "--args", r#"{"a":2,"b":3}"#],
        &starts.wrap(&[&python, &script]),
    );
    let (json, stderr) = answer(&out);
    // An unanswered probe may still be answered late on those pipes (its id could be taken
    // for the handshake's): the server is started again for the handshake.
    assert_eq!(starts.count(), 2, "{stderr}");
    assert!(stderr.contains("era probe: no answer within"), "{stderr}");
    assert!(stderr.contains("detected era: 2025-11-25"), "{stderr}");
    assert_eq!(first_text(&json), "5", "{json}");
}

#[test]
fn the_python_sdk_http_server_is_found_stateless_and_served_statelessly() {
    if !peers_ready() {
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let python = std::env::var("MCP_PYTHON").expect("MCP_PYTHON");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/interop/py/sdk_server.py");
    let mut peer = Command::new(python)
        .arg(script)
        .args(["--http", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the Python SDK server");
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = peer.kill();
            let _ = peer.wait();
            panic!("the Python SDK server never listened");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let out = client(
        &[url.as_str()],
        &["tools", "call", "add", "--args", r#"{"a":2,"b":3}"#],
        &[],
    );
    let _ = peer.kill();
    let _ = peer.wait();
    let (json, stderr) = answer(&out);
    assert!(stderr.contains("detected era: 2026-07-28"), "{stderr}");
    assert_eq!(json["resultType"], "complete", "{json}");
    assert_eq!(first_text(&json), "5", "{json}");
}
