//! `mcp-sansio client URL` auto-detecting the transport of servers no one here wrote: a
//! HTTP+SSE server built on the TypeScript SDK's `SSEServerTransport`
//! (tests/interop/ts/sse_transport_server.mjs; a probe POST to /sse gets 404) and the Python SDK's
//! FastMCP `sse_app` (tests/interop/py/sse_transport_server.py; 405) must be found as `sse`; the
//! Python SDK's Streamable HTTP server (sdk_server.py --http) as `streamable`. `--transport sse`
//! forces the HTTP+SSE transport. Each peer is one child (port 0, its URL read from its stderr),
//! stopped by PID. Needs the peers of scripts/install-peers: skipped locally without them, a
//! failure under `CI`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;

use crate::harness;
use harness::{free_port, peers_ready, serve_announced, serve_on_port, PeerServer};

/// One peer at a time (they are small, but the machine is shared).
static SERIAL: Mutex<()> = Mutex::new(());

/// How long a peer may take to print its URL or to accept connections.
const START_LIMIT: Duration = Duration::from_secs(30);

fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop")
}

/// Starts a peer script that binds port 0 and prints `listening on URL` on stderr.
fn start_announcing(program: &str, script: &str) -> PeerServer {
    let mut command = Command::new(program);
    command.arg(interop_dir().join(script));
    serve_announced(command, START_LIMIT)
}

/// Runs `mcp-sansio client URL --verbose <extra> <op...>`: its JSON result and the transport
/// it reported on stderr.
fn client(url: &str, extra: &[&str], op: &[&str]) -> (Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
        .args(["client", url, "--verbose", "--timeout", "20"])
        .args(extra)
        .args(op)
        .stdin(Stdio::null())
        .output_with_limit(Duration::from_secs(60));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "client {op:?} failed:\n{stdout}\n{stderr}"
    );
    let transport = stderr
        .lines()
        .find_map(|l| l.strip_prefix("transport: "))
        .unwrap_or_else(|| panic!("no transport reported:\n{stderr}"))
        .to_owned();
    let json = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (json, transport)
}

/// `Command::output` bounded in time: the child is killed past `limit`.
trait OutputWithLimit {
    fn output_with_limit(&mut self, limit: Duration) -> std::process::Output;
}

impl OutputWithLimit for Command {
    fn output_with_limit(&mut self, limit: Duration) -> std::process::Output {
        let child = self
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the client");
        let pid = child.id();
        let (tx, rx) = mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            if rx.recv_timeout(limit).is_err() {
                // Overdue: end the client (by its PID) so `wait_with_output` returns.
                let _ = Command::new("kill").arg(pid.to_string()).status();
            }
        });
        let out = child.wait_with_output().expect("wait for the client");
        let _ = tx.send(());
        let _ = watchdog.join();
        out
    }
}

fn first_text(result: &Value, list: &str) -> String {
    result[list][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The shared feature set of the SDK test servers (tools add/echo, greeting resources, greet).
fn drive_sdk_feature_set(url: &str, extra: &[&str], want: &str) {
    let (tools, transport) = client(url, extra, &["tools", "list"]);
    assert_eq!(transport, want);
    let mut names: Vec<&str> = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    names.sort_unstable();
    // The Python server also has `sample`, which needs a sampling client.
    assert!(names.starts_with(&["add", "echo"]), "{tools}");
    let (add, transport) = client(
        url,
        extra,
        &["tools", "call", "add", "--args", r#"{"a":2,"b":3}"#],
    );
    assert_eq!(transport, want);
    assert_eq!(first_text(&add, "content"), "5");
    let (hello, _) = client(url, extra, &["resources", "read", "greeting://hello"]);
    assert_eq!(first_text(&hello, "contents"), "Hello, world!");
    let (ada, _) = client(url, extra, &["resources", "read", "greeting://Ada"]);
    assert_eq!(first_text(&ada, "contents"), "Hello, Ada!");
    let (templates, _) = client(url, extra, &["resources", "templates"]);
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "greeting://{name}"
    );
    let (greet, _) = client(
        url,
        extra,
        &["prompts", "get", "greet", "--args", r#"{"name":"Ada"}"#],
    );
    assert_eq!(greet["messages"][0]["content"]["text"], "Please greet Ada.");
    let (_, transport) = client(url, extra, &["ping"]);
    assert_eq!(transport, want);
}

#[test]
fn our_client_finds_the_ts_sdk_sse_server_as_sse_transport() {
    if !peers_ready() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let node = std::env::var("MCP_NODE22").expect("MCP_NODE22");
    let peer = start_announcing(&node, "ts/sse_transport_server.mjs");
    drive_sdk_feature_set(&peer.url, &[], "sse");
    let (_, forced) = client(&peer.url, &["--transport", "sse"], &["ping"]);
    assert_eq!(forced, "sse");
}

#[test]
fn our_client_finds_the_python_sdk_sse_server_as_sse_transport() {
    if !peers_ready() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let python = std::env::var("MCP_PYTHON").expect("MCP_PYTHON");
    let peer = start_announcing(&python, "py/sse_transport_server.py");
    drive_sdk_feature_set(&peer.url, &[], "sse");
}

#[test]
fn our_client_finds_the_python_sdk_streamable_server_as_streamable() {
    if !peers_ready() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let python = std::env::var("MCP_PYTHON").expect("MCP_PYTHON");
    // sdk_server.py --http takes its port; pick a free one (one peer at a time, see SERIAL).
    let port = free_port();
    let mut command = Command::new(python);
    command
        .arg(interop_dir().join("py/sdk_server.py"))
        .args(["--http", &port.to_string()]);
    let peer = serve_on_port(command, port, START_LIMIT);
    drive_sdk_feature_set(&peer.url, &[], "streamable");
}
