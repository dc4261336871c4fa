//! Interop with rmcp 3.11 (the official Rust SDK), both directions, over stdio and Streamable
//! HTTP, in both eras: the 2025-11-25 handshake (and older versions) and the stateless
//! 2026-07-28 revision.
//!
//! The rmcp side is `rmcp_peer` (bench-rmcp/src/bin/rmcp_peer), built by scripts/install-peers,
//! which exports its path as `MCP_RMCP_PEER` in `.ci-cache/env`. Without it the tests skip with
//! a message, except under `CI`, where they fail.
//!
//! - rmcp client → `mcp-sansio serve --stdio` / `serve --http`: the peer lists and calls, and
//!   prints JSON lines (`connected` with the version rmcp negotiated, `tools`, `call`, ...).
//!   rmcp's client declares roots, elicitation and sampling and answers them, so our server's
//!   requests (2025-11-25) and input-required rounds (2026-07-28) cross implementations too.
//! - `mcp-sansio client` → `rmcp_peer server`: tools `echo`, `add` and `protocol_version` (which
//!   answers with the version rmcp served the request under), prompt `greet`, resource
//!   `memo://hello`.
//! - Our client in the 2026-07-28 era: `mcp-sansio client --era stateless` (and `--era auto`).

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::http_fixture;
use crate::rmcp_peer;
use http_fixture::HttpFixture;
use rmcp_peer::{rmcp_peer, run, RmcpHttpServer, Run};

const OURS: &str = env!("CARGO_BIN_EXE_mcp-sansio");

// ---------------------------------------------------------------------------------------------
// rmcp client → our server

/// The rmcp client's calls against our reference fixture.
const FIXTURE_OPS: [&str; 8] = [
    "--call",
    "test_simple_text",
    "{}",
    "--prompt",
    "test_prompt_with_arguments",
    r#"{"arg1":"a","arg2":"b"}"#,
    "--read",
    "test://static-text",
];

/// Our fixture server's page size in the rmcp client tests (its lists span several pages).
const PAGE_SIZE: (&str, &str) = ("MCP_SANSIO_PAGE_SIZE", "2");

/// Our fixture's tool names as our own client lists them (every page, in order).
fn fixture_tool_names() -> &'static [Value] {
    static NAMES: OnceLock<Vec<Value>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut command = Command::new(OURS);
        command.args([
            "client", "--stdio", "tools", "list", "--", OURS, "serve", "--stdio",
        ]);
        let outcome = run(command);
        assert_eq!(outcome.code, Some(0), "{}", outcome.describe());
        let tools: Value = serde_json::from_str(outcome.stdout.trim()).expect("tools JSON");
        let names: Vec<Value> = tools["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|tool| tool["name"].clone())
            .collect();
        assert!(names.len() > 10, "{tools}");
        names
    })
}

/// Runs the rmcp client with `args` and returns its JSON lines; it must succeed.
fn rmcp_client(peer: &Path, args: &[&str]) -> Vec<Value> {
    let mut command = Command::new(peer);
    // Small pages: rmcp's `list_all_*` must follow our cursors (the stdio server inherits it).
    command
        .arg("client")
        .args(args)
        .env(PAGE_SIZE.0, PAGE_SIZE.1);
    let outcome = run(command);
    assert_eq!(
        outcome.code,
        Some(0),
        "rmcp client failed:\n{}",
        outcome.describe()
    );
    outcome
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// The line of `event`, which must be there once.
fn event<'a>(lines: &'a [Value], event: &str) -> &'a Value {
    let found: Vec<_> = lines.iter().filter(|l| l["event"] == event).collect();
    assert_eq!(found.len(), 1, "one `{event}` line expected in {lines:#?}");
    found[0]
}

/// What the rmcp client must have seen from our fixture, having negotiated `version`.
fn assert_fixture_session(lines: &[Value], version: &str) {
    let connected = event(lines, "connected");
    assert_eq!(connected["protocolVersion"], version, "{lines:#?}");
    let tools = event(lines, "tools")["names"].as_array().expect("names");
    assert_eq!(
        tools,
        fixture_tool_names(),
        "rmcp's tools/list pages differ from ours"
    );
    let prompts = &event(lines, "prompts")["names"];
    assert!(prompts
        .as_array()
        .expect("names")
        .contains(&json!("test_simple_prompt")));
    let resources = &event(lines, "resources")["uris"];
    assert!(resources
        .as_array()
        .expect("uris")
        .contains(&json!("test://static-text")));
    assert_eq!(
        event(lines, "call")["result"]["content"][0]["text"],
        "This is a simple text response for testing."
    );
    assert_eq!(
        event(lines, "prompt")["result"]["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='a', arg2='b'"
    );
    assert_eq!(
        event(lines, "read")["result"]["contents"][0]["text"],
        "This is the content of the static text resource."
    );
    event(lines, "done");
}

fn rmcp_client_against_our_stdio(peer: &Path, era: &[&str]) -> Vec<Value> {
    let mut args = era.to_vec();
    args.extend(FIXTURE_OPS);
    args.extend(STDIO_OURS);
    rmcp_client(peer, &args)
}

#[test]
fn rmcp_client_initializes_with_our_stdio_server_in_every_stateful_version() {
    let Some(peer) = rmcp_peer() else { return };
    for version in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        let lines =
            rmcp_client_against_our_stdio(&peer, &["--era", "stateful", "--version", version]);
        assert_fixture_session(&lines, version);
    }
}

#[test]
fn rmcp_client_speaks_2026_07_28_with_our_stdio_server() {
    let Some(peer) = rmcp_peer() else { return };
    let lines = rmcp_client_against_our_stdio(&peer, &["--era", "stateless"]);
    assert_fixture_session(&lines, "2026-07-28");
    // Auto probes with server/discover first; our dual-era server answers it.
    let lines = rmcp_client_against_our_stdio(&peer, &["--era", "auto"]);
    assert_fixture_session(&lines, "2026-07-28");
}

#[test]
fn rmcp_client_initializes_with_our_http_server() {
    let Some(peer) = rmcp_peer() else { return };
    let server = HttpFixture::start(&[PAGE_SIZE]);
    for version in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        let mut args = vec!["--era", "stateful", "--version", version];
        args.extend(FIXTURE_OPS);
        args.push(&server.url);
        assert_fixture_session(&rmcp_client(&peer, &args), version);
    }
}

#[test]
fn rmcp_client_speaks_2026_07_28_with_our_http_server() {
    let Some(peer) = rmcp_peer() else { return };
    let server = HttpFixture::start(&[PAGE_SIZE]);
    for era in ["stateless", "auto"] {
        let mut args = vec!["--era", era];
        args.extend(FIXTURE_OPS);
        args.push(&server.url);
        assert_fixture_session(&rmcp_client(&peer, &args), "2026-07-28");
    }
}

/// The text of the `call` line of tool `name`.
fn call_text<'a>(lines: &'a [Value], name: &str) -> &'a str {
    let call = lines
        .iter()
        .find(|l| l["event"] == "call" && l["name"] == name)
        .unwrap_or_else(|| panic!("no call of {name} in {lines:#?}"));
    assert_ne!(call["result"]["isError"], json!(true), "{call}");
    call["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{call}"))
}

/// Our input-required tools, answered by rmcp's client: its `call_tool` / `get_prompt` fulfil
/// the embedded requests through its handler (answers fixed in rmcp_peer's answers.rs) and
/// retry with `inputResponses` and our sealed `requestState`.
fn assert_input_rounds(peer: &Path, target: &[&str]) {
    let mut args = vec!["--era", "stateless"];
    for tool in [
        "test_input_required_result_multi_round",
        "test_input_required_result_list_roots",
        "test_input_required_result_sampling",
        "test_input_required_result_request_state",
    ] {
        args.extend(["--call", tool, "{}"]);
    }
    args.extend(["--prompt", "test_input_required_result_prompt", "{}"]);
    args.extend(target);
    let lines = rmcp_client(peer, &args);
    assert_eq!(event(&lines, "connected")["protocolVersion"], "2026-07-28");
    // Two rounds: one elicited name, then one elicited colour.
    assert_eq!(
        call_text(&lines, "test_input_required_result_multi_round"),
        r#""rmcp" likes "rmcp""#
    );
    assert_eq!(
        call_text(&lines, "test_input_required_result_list_roots"),
        r#"Client roots: [{"uri":"file:///tmp/rmcp-peer","name":"rmcp-peer"}]"#
    );
    assert_eq!(
        call_text(&lines, "test_input_required_result_sampling"),
        "The model answered: Paris, says rmcp"
    );
    assert_eq!(
        call_text(&lines, "test_input_required_result_request_state"),
        "state-ok (confirmed: true)"
    );
    assert_eq!(
        event(&lines, "prompt")["result"]["messages"][0]["content"]["text"],
        "Use this context: rmcp"
    );
}

/// Our server's requests to the client (2025-11-25: elicitation/create,
/// sampling/createMessage inside a tools/call), answered by rmcp's client handler.
fn assert_server_requests(peer: &Path, target: &[&str]) {
    let mut args = vec!["--era", "stateful"];
    args.extend(["--call", "test_elicitation", r#"{"message":"name?"}"#]);
    args.extend(["--call", "test_sampling", r#"{"prompt":"capital?"}"#]);
    args.extend(target);
    let lines = rmcp_client(peer, &args);
    assert_eq!(event(&lines, "connected")["protocolVersion"], "2025-11-25");
    assert_eq!(
        call_text(&lines, "test_elicitation"),
        r#"User response: action=accept, content={"response":"rmcp"}"#
    );
    assert_eq!(
        call_text(&lines, "test_sampling"),
        "LLM response: Paris, says rmcp"
    );
}

const STDIO_OURS: [&str; 5] = ["--stdio", "--", OURS, "serve", "--stdio"];

#[test]
fn rmcp_client_answers_our_stdio_server_requests_in_both_eras() {
    let Some(peer) = rmcp_peer() else { return };
    assert_input_rounds(&peer, &STDIO_OURS);
    assert_server_requests(&peer, &STDIO_OURS);
}

#[test]
fn rmcp_client_answers_our_http_server_requests_in_both_eras() {
    let Some(peer) = rmcp_peer() else { return };
    let server = HttpFixture::start(&[]);
    assert_input_rounds(&peer, &[&server.url]);
    assert_server_requests(&peer, &[&server.url]);
}

// ---------------------------------------------------------------------------------------------
// our client → rmcp server

/// Where our client finds the rmcp server.
enum Target<'a> {
    /// `rmcp_peer server --stdio` plus these server options, as our child process.
    Stdio(&'a Path, &'a [&'a str]),
    /// A running `rmcp_peer server --http`.
    Url(&'a str),
}

/// Runs `mcp-sansio client` with `client_args` (options, then the operation) against `target`.
fn ours(target: &Target, client_args: &[&str]) -> Run {
    let mut command = Command::new(OURS);
    command.arg("client");
    match target {
        Target::Stdio(peer, server_args) => {
            command.arg("--stdio").args(client_args).arg("--").arg(peer);
            command.args(["server", "--stdio"]).args(*server_args);
        }
        Target::Url(url) => {
            command.arg(url).args(client_args);
        }
    }
    run(command)
}

/// Runs our client and parses its one-line JSON result; it must succeed.
fn ours_ok(target: &Target, client_args: &[&str]) -> Value {
    let outcome = ours(target, client_args);
    assert_eq!(
        outcome.code,
        Some(0),
        "our client failed:\n{}",
        outcome.describe()
    );
    serde_json::from_str(outcome.stdout.trim())
        .unwrap_or_else(|e| panic!("{e}:\n{}", outcome.describe()))
}

fn tool_text(result: &Value) -> &str {
    assert_ne!(result["isError"], json!(true), "{result}");
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"))
}

/// Lists and calls everything the rmcp peer serves; `extra` goes before each operation (the
/// era options), and the rmcp server must report `version` as the request's version.
fn assert_rmcp_server_session(target: &Target, extra: &[&'static str], version: &str) {
    let with =
        |op: &[&'static str]| -> Vec<&'static str> { extra.iter().chain(op).copied().collect() };
    let tools = ours_ok(target, &with(&["tools", "list"]));
    let names: Vec<_> = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| &t["name"])
        .collect();
    assert_eq!(names, ["echo", "add", "protocol_version"], "{tools}");
    let sum = ours_ok(
        target,
        &with(&["tools", "call", "add", "--args", r#"{"a":2,"b":3.5}"#]),
    );
    assert_eq!(tool_text(&sum), "5.5");
    let echo = ours_ok(
        target,
        &with(&["tools", "call", "echo", "--args", r#"{"text":"héllo"}"#]),
    );
    assert_eq!(tool_text(&echo), "héllo");
    let served = ours_ok(target, &with(&["tools", "call", "protocol_version"]));
    assert_eq!(tool_text(&served), version);
    let prompts = ours_ok(target, &with(&["prompts", "list"]));
    assert_eq!(prompts["prompts"][0]["name"], "greet", "{prompts}");
    let prompt = ours_ok(
        target,
        &with(&["prompts", "get", "greet", "--args", r#"{"name":"Ada"}"#]),
    );
    assert_eq!(
        prompt["messages"][0]["content"]["text"], "Hello, Ada!",
        "{prompt}"
    );
    let resources = ours_ok(target, &with(&["resources", "list"]));
    assert_eq!(
        resources["resources"][0]["uri"], "memo://hello",
        "{resources}"
    );
    let read = ours_ok(target, &with(&["resources", "read", "memo://hello"]));
    assert_eq!(read["contents"][0]["text"], "hello from rmcp", "{read}");
}

#[test]
fn our_stdio_client_initializes_with_rmcp_server() {
    let Some(peer) = rmcp_peer() else { return };
    assert_rmcp_server_session(&Target::Stdio(&peer, &[]), stateful_era(), "2025-11-25");
}

#[test]
fn our_stdio_client_negotiates_down_to_what_rmcp_server_supports() {
    let Some(peer) = rmcp_peer() else { return };
    for (versions, expected) in [
        ("2025-06-18,2025-03-26", "2025-06-18"),
        ("2024-11-05", "2024-11-05"),
    ] {
        let served = ours_ok(
            &Target::Stdio(&peer, &["--versions", versions]),
            &[stateful_era(), &["tools", "call", "protocol_version"]].concat(),
        );
        assert_eq!(tool_text(&served), expected);
    }
}

#[test]
fn our_http_client_initializes_with_rmcp_server() {
    let Some(peer) = rmcp_peer() else { return };
    let server = RmcpHttpServer::start(&peer, &[]);
    assert_rmcp_server_session(&Target::Url(&server.url), stateful_era(), "2025-11-25");
}

#[test]
fn our_http_client_negotiates_down_to_what_rmcp_server_supports() {
    let Some(peer) = rmcp_peer() else { return };
    // 2024-11-05 predates Streamable HTTP, but rmcp serves it there and so do we.
    for version in ["2025-03-26", "2024-11-05"] {
        let server = RmcpHttpServer::start(&peer, &["--versions", version]);
        let served = ours_ok(
            &Target::Url(&server.url),
            &[stateful_era(), &["tools", "call", "protocol_version"]].concat(),
        );
        assert_eq!(tool_text(&served), version);
    }
}

/// Whether our CLI has `client --era` (stateless-client's flag). Asked once, of a server that
/// exits at once: a CLI without the flag refuses it as a usage error (exit 2) before starting
/// anything.
fn cli_has_era_flag() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        let mut command = Command::new(OURS);
        command.args([
            "client", "--stdio", "--era", "stateful", "ping", "--", "true",
        ]);
        let probe = run(command);
        !(probe.code == Some(2) && probe.stderr.contains("--era"))
    })
}

/// The options that pin our client to the 2025-11-25 handshake: `--era stateful` once the CLI
/// has `--era` (whose default, auto, would pick 2026-07-28 with rmcp), nothing before.
fn stateful_era() -> &'static [&'static str] {
    if cli_has_era_flag() {
        &["--era", "stateful"]
    } else {
        &[]
    }
}

/// Our client in the 2026-07-28 era (`--era stateless`; `--verbose` reports the detected era).
fn assert_stateless_client_session(target: &Target) {
    if !cli_has_era_flag() {
        eprintln!("skipped: this mcp-sansio CLI has no `client --era` yet (stateless-client)");
        return;
    }
    let verbose = ours(
        target,
        &[
            "--era",
            "stateless",
            "--verbose",
            "tools",
            "call",
            "protocol_version",
        ],
    );
    assert_eq!(verbose.code, Some(0), "{}", verbose.describe());
    assert!(
        verbose.stderr.contains("detected era: 2026-07-28"),
        "{}",
        verbose.describe()
    );
    assert_rmcp_server_session(target, &["--era", "stateless"], "2026-07-28");
    // Auto: rmcp serves 2026-07-28, so the probe must settle on it.
    let served = ours_ok(
        target,
        &["--era", "auto", "tools", "call", "protocol_version"],
    );
    assert_eq!(tool_text(&served), "2026-07-28");
}

#[test]
fn our_stdio_client_speaks_2026_07_28_with_rmcp_server() {
    let Some(peer) = rmcp_peer() else { return };
    assert_stateless_client_session(&Target::Stdio(&peer, &[]));
}

#[test]
fn our_http_client_speaks_2026_07_28_with_rmcp_server() {
    let Some(peer) = rmcp_peer() else { return };
    let server = RmcpHttpServer::start(&peer, &[]);
    assert_stateless_client_session(&Target::Url(&server.url));
}
