//! `mcp-sansio client URL` (our Streamable HTTP client: core transport + hyper adapter) against
//! servers no one here wrote: `@modelcontextprotocol/server-everything` in streamableHttp mode
//! and a Python SDK server (tests/interop/py/sdk_server.py --http). Lists and calls tools,
//! reads resources, gets prompts. Needs the peers of scripts/install-peers (`source
//! .ci-cache/env`): skipped locally without them, a failure under `CI`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;

use crate::harness;
use harness::{finish, free_port, peers_ready, serve_on_port, PeerServer};

/// One peer at a time: `free_port` releases the port before the peer binds it, so two peers
/// started together can race for the same port (one then fails to bind while the readiness
/// probe connects to the other).
static SERIAL: Mutex<()> = Mutex::new(());

/// Starts `command` (which serves on `port`) and waits until the port accepts (bounded).
fn start(command: Command, port: u16) -> PeerServer {
    serve_on_port(command, port, Duration::from_secs(30))
}

fn preload() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/listen_loopback.cjs")
}

/// Runs `mcp-sansio client URL <op...>` and returns its JSON result.
fn client(url: &str, op: &[&str]) -> Value {
    let child = Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
        .args(["client", url, "--timeout", "30"])
        .args(op)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the client");
    let (ok, out) = finish(child, Duration::from_secs(60));
    assert!(ok, "client {op:?} failed: {out}");
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{op:?}: {e}: {out}"))
}

fn first_text(result: &Value, list: &str, field: &str) -> String {
    result[list][0][field]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn our_http_client_drives_server_everything() {
    if !peers_ready() {
        return;
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let node = std::env::var("MCP_NODE22").expect("MCP_NODE22");
    let server = std::env::var("MCP_SERVER_EVERYTHING").expect("MCP_SERVER_EVERYTHING");
    let port = free_port();
    let mut command = Command::new(node);
    command
        .args([server.as_str(), "streamableHttp"])
        .env("PORT", port.to_string())
        .env("NODE_OPTIONS", format!("--require {}", preload().display()));
    let peer = start(command, port);

    let tools = client(&peer.url, &["tools", "list"]);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");
    let echo = client(
        &peer.url,
        &[
            "tools",
            "call",
            "echo",
            "--args",
            r#"{"message":"hi there"}"#,
        ],
    );
    assert_eq!(first_text(&echo, "content", "text"), "Echo: hi there");
    let resources = client(&peer.url, &["resources", "list"]);
    let uri = resources["resources"][0]["uri"]
        .as_str()
        .expect("a resource")
        .to_owned();
    let read = client(&peer.url, &["resources", "read", &uri]);
    assert_eq!(read["contents"][0]["uri"], uri.as_str());
    assert!(
        !first_text(&read, "contents", "text").is_empty()
            || read["contents"][0]["blob"].is_string()
    );
    let prompts = client(&peer.url, &["prompts", "list"]);
    assert!(prompts["prompts"].as_array().is_some_and(|p| !p.is_empty()));
    let prompt = client(&peer.url, &["prompts", "get", "simple-prompt"]);
    assert!(
        prompt["messages"].as_array().is_some_and(|m| !m.is_empty()),
        "{prompt}"
    );
    client(&peer.url, &["ping"]);
}

#[test]
fn our_http_client_drives_the_python_sdk_server() {
    if !peers_ready() {
        return;
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let python = std::env::var("MCP_PYTHON").expect("MCP_PYTHON");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/py/sdk_server.py");
    let port = free_port();
    let mut command = Command::new(python);
    command.arg(script).args(["--http", &port.to_string()]);
    let peer = start(command, port);

    let tools = client(&peer.url, &["tools", "list"]);
    assert_eq!(tools["tools"].as_array().map(Vec::len), Some(3), "{tools}");
    let add = client(
        &peer.url,
        &["tools", "call", "add", "--args", r#"{"a":2,"b":3}"#],
    );
    assert_eq!(first_text(&add, "content", "text"), "5");
    assert_eq!(add["structuredContent"]["result"], 5);
    let hello = client(&peer.url, &["resources", "read", "greeting://hello"]);
    assert_eq!(first_text(&hello, "contents", "text"), "Hello, world!");
    let ada = client(&peer.url, &["resources", "read", "greeting://Ada"]);
    assert_eq!(first_text(&ada, "contents", "text"), "Hello, Ada!");
    let templates = client(&peer.url, &["resources", "templates"]);
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "greeting://{name}"
    );
    let greet = client(
        &peer.url,
        &["prompts", "get", "greet", "--args", r#"{"name":"Ada"}"#],
    );
    assert_eq!(greet["messages"][0]["content"]["text"], "Please greet Ada.");
}
