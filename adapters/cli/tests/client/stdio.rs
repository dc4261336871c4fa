//! `mcp-sansio client --stdio` against servers no one here wrote: the official
//! `@modelcontextprotocol/server-everything` (TypeScript SDK) and a Python SDK server
//! (tests/interop/py/sdk_server.py). Needs the peers of scripts/install-peers
//! (`source .ci-cache/env`); skips without them, but fails under CI.

use crate::peers;

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{json, Value};

struct Peers {
    node22: String,
    python: String,
    server_everything: String,
}

/// The installed peers, or `None` (test skipped) outside CI when they are not installed.
fn peers() -> Option<Peers> {
    if !peers::ready() {
        return None;
    }
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} unset"));
    Some(Peers {
        node22: var("MCP_NODE22"),
        python: var("MCP_PYTHON"),
        server_everything: var("MCP_SERVER_EVERYTHING"),
    })
}

fn sdk_server_script() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/py");
    root.join("sdk_server.py").to_string_lossy().into_owned()
}

/// Runs `mcp-sansio client --stdio <op...> -- <server...>`.
fn client(op: &[&str], server: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
        .args([
            "client",
            "--stdio",
            "--timeout",
            "30",
            "--server-stderr",
            "null",
        ])
        .args(op)
        .arg("--")
        .args(server)
        .output()
        .expect("run mcp-sansio")
}

/// The JSON printed on stdout by a successful run (exit 0, exactly one line).
fn ok_json(op: &[&str], server: &[&str]) -> Value {
    let out = client(op, server);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{op:?}: stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().count(), 1, "{op:?}: not one line: {stdout}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{op:?}: {e}: {stdout}"))
}

fn names(list: &Value, field: &str) -> Vec<String> {
    list[field]
        .as_array()
        .unwrap_or_else(|| panic!("no {field} array in {list}"))
        .iter()
        .map(|item| item["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn python_sdk_server_answers_every_operation() {
    let Some(peers) = peers() else { return };
    let script = sdk_server_script();
    let server = [peers.python.as_str(), script.as_str()];

    let tools = ok_json(&["tools", "list"], &server);
    let tool_names = names(&tools, "tools");
    assert!(tool_names.contains(&"add".to_owned()), "{tool_names:?}");
    assert!(tool_names.contains(&"echo".to_owned()), "{tool_names:?}");

    let sum = ok_json(
        &["tools", "call", "add", "--args", r#"{"a":2,"b":3}"#],
        &server,
    );
    assert_eq!(sum["content"][0]["text"], "5");
    assert_eq!(sum["structuredContent"], json!({"result": 5}));
    let sum = ok_json(
        &["tools", "call", "add", "--args", r#"{"a":40,"b":2}"#],
        &server,
    );
    assert_eq!(sum["structuredContent"], json!({"result": 42}));

    let read = ok_json(&["resources", "read", "greeting://hello"], &server);
    assert_eq!(read["contents"][0]["text"], "Hello, world!");
    let read = ok_json(&["resources", "read", "greeting://Ada"], &server);
    assert_eq!(read["contents"][0]["text"], "Hello, Ada!");
    let templates = ok_json(&["resources", "templates"], &server);
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "greeting://{name}"
    );

    let prompt = ok_json(
        &["prompts", "get", "greet", "--args", r#"{"name":"Ada"}"#],
        &server,
    );
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "Please greet Ada."
    );
    assert_eq!(ok_json(&["ping"], &server), json!({}));
}

#[test]
fn python_sdk_server_failures_exit_1_with_a_reason() {
    let Some(peers) = peers() else { return };
    let script = sdk_server_script();
    let server = [peers.python.as_str(), script.as_str()];

    // A tool error is a result: printed on stdout, and the exit status says it failed.
    let out = client(&["tools", "call", "no_such_tool"], &server);
    assert_eq!(out.status.code(), Some(1));
    let result: Value = serde_json::from_slice(&out.stdout).expect("the result is printed");
    assert_eq!(result["isError"], true);
    assert!(String::from_utf8_lossy(&out.stderr).contains("isError"));

    // A JSON-RPC error: its code and message on stderr, nothing on stdout.
    let out = client(&["resources", "read", "nope://x"], &server);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(stderr.contains("JSON-RPC error"), "{stderr}");
}

#[test]
fn server_everything_tools_resources_prompts_and_ping() {
    let Some(peers) = peers() else { return };
    let server = [
        peers.node22.as_str(),
        peers.server_everything.as_str(),
        "stdio",
    ];

    let tools = ok_json(&["tools", "list"], &server);
    assert!(names(&tools, "tools").contains(&"echo".to_owned()));

    let echoed = ok_json(
        &[
            "tools",
            "call",
            "echo",
            "--args",
            r#"{"message":"sans-io says hi"}"#,
        ],
        &server,
    );
    let text = echoed["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("sans-io says hi"), "{echoed}");

    // Every page, then the first page only: the full list holds at least the first page.
    let all = ok_json(&["resources", "list"], &server);
    assert!(all.get("nextCursor").is_none(), "{all}");
    let first = ok_json(&["--no-paginate", "resources", "list"], &server);
    let all_items = all["resources"].as_array().expect("resources");
    let first_items = first["resources"].as_array().expect("resources");
    assert!(!first_items.is_empty());
    assert!(all_items.len() >= first_items.len());
    assert_eq!(all_items[..first_items.len()], first_items[..]);

    let uri = all_items[0]["uri"].as_str().expect("a resource uri");
    let read = ok_json(&["resources", "read", uri], &server);
    assert_eq!(read["contents"][0]["uri"], uri);

    let prompts = ok_json(&["prompts", "list"], &server);
    let prompt_names = names(&prompts, "prompts");
    assert!(!prompt_names.is_empty());
    // Pick a prompt without required arguments.
    let simple = prompts["prompts"]
        .as_array()
        .expect("prompts")
        .iter()
        .find(|p| {
            p["arguments"]
                .as_array()
                .is_none_or(|a| a.iter().all(|arg| arg["required"] != true))
        })
        .expect("a prompt without required arguments");
    let name = simple["name"].as_str().expect("prompt name");
    let got = ok_json(&["prompts", "get", name], &server);
    assert!(!got["messages"].as_array().expect("messages").is_empty());

    let got = ok_json(
        &[
            "prompts",
            "get",
            "args-prompt",
            "--args",
            r#"{"city":"Paris"}"#,
        ],
        &server,
    );
    let text = got["messages"][0]["content"]["text"].as_str().unwrap_or("");
    assert!(text.contains("Paris"), "{got}");

    let template_read = ok_json(
        &["resources", "read", "demo://resource/dynamic/text/7"],
        &server,
    );
    let text = template_read["contents"][0]["text"].as_str().unwrap_or("");
    assert!(text.starts_with("Resource 7"), "{template_read}");

    let completion = ok_json(
        &[
            "complete",
            "prompt",
            "completable-prompt",
            "--arg",
            "department",
            "--value",
            "Eng",
        ],
        &server,
    );
    assert_eq!(completion["completion"]["values"], json!(["Engineering"]));

    assert_eq!(ok_json(&["ping"], &server), json!({}));
    assert_eq!(ok_json(&["set-level", "debug"], &server), json!({}));
}

#[test]
fn a_server_that_exits_at_once_fails_with_its_status() {
    let out = client(&["ping"], &["sh", "-c", "exit 3"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(stderr.contains("initialize"), "{stderr}");
    assert!(stderr.contains("exit status: 3"), "{stderr}");
}

#[test]
fn a_missing_server_program_fails_clearly() {
    let out = client(&["ping"], &["/nonexistent/mcp-server"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot start the server"), "{stderr}");
}

/// The library path (`connect_stdio_client`): server-everything asks our sampling handler
/// (an async job on the loop's executor) in the middle of a tool call, and the tool's result
/// carries the handler's answer; server notifications reach the event sink.
#[test]
fn server_everything_sampling_reaches_our_async_handler() {
    use std::sync::{Arc, Mutex};

    use mcp_sansio::app::client::{Client, ClientEvent};
    use mcp_sansio::model::{CreateMessageParams, CreateMessageResult, Implementation};
    use mcp_sansio_stdio::{connect_stdio_client, StderrMode};

    let Some(peers) = peers() else { return };
    let prompts_seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&prompts_seen);
    let builder = Client::builder(Implementation::new("client-stdio-test", "1")).sampling(
        move |params: CreateMessageParams, _ctx| {
            let seen = Arc::clone(&seen);
            async move {
                mcp_sansio::runtime::yield_now().await;
                let asked = serde_json::to_value(&params.messages).unwrap_or_default();
                seen.lock().unwrap().push(asked.to_string());
                let answer = json!({"role": "assistant", "model": "test-model",
                    "content": {"type": "text", "text": "sampled by mcp-sansio"}});
                Ok(serde_json::from_value::<CreateMessageResult>(answer).expect("a result"))
            }
        },
    );
    let events = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let sink = std::rc::Rc::clone(&events);
    let client = connect_stdio_client(
        &peers.node22,
        [peers.server_everything.as_str(), "stdio"],
        StderrMode::Null,
        builder,
    )
    .expect("spawn server-everything")
    .on_event(move |event| sink.borrow_mut().push(event));
    let handle = client.handle();
    let (outcome, _report) = client
        .block_on(async move {
            handle.initialize().await?;
            let tools = handle.list_all_tools().await?;
            let result = handle
                .call_tool(
                    "trigger-sampling-request",
                    json!({"prompt": "say hi", "maxTokens": 5}),
                )
                .await?;
            Ok::<_, mcp_sansio::app::client::ClientError>((tools, result))
        })
        .expect("drive server-everything");
    let (tools, result) = outcome.expect("the calls succeed");
    assert!(tools.iter().any(|t| t.name == "trigger-sampling-request"));
    assert!(!result.is_error.unwrap_or(false));
    let text = serde_json::to_value(&result.content)
        .expect("content")
        .to_string();
    assert!(text.contains("sampled by mcp-sansio"), "{text}");
    assert!(text.contains("test-model"), "{text}");
    let prompts = prompts_seen.lock().unwrap().clone();
    assert_eq!(prompts.len(), 1, "{prompts:?}");
    assert!(prompts[0].contains("say hi"), "{prompts:?}");
    // The session ends with our close, which the sink sees last.
    let events = events.borrow();
    assert!(
        matches!(events.last(), Some(ClientEvent::Closed { .. })),
        "{events:?}"
    );
}

#[test]
fn a_silent_server_times_out_and_is_shut_down() {
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
        .args(["client", "--stdio", "--timeout", "0.5", "ping", "--"])
        .args(["sleep", "30"])
        .output()
        .expect("run mcp-sansio");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("initialize"), "{stderr}");
    assert!(stderr.contains("in time"), "{stderr}");
    // 0.5 s timeout + 2 s after closing stdin + SIGTERM ends `sleep`: well under its 30 s.
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn pretty_output_is_indented_json() {
    let Some(peers) = peers() else { return };
    let script = sdk_server_script();
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
        .args(["client", "--stdio", "--pretty", "--server-stderr", "null"])
        .args(["resources", "read", "greeting://hello", "--"])
        .args([peers.python.as_str(), script.as_str()])
        .output()
        .expect("run mcp-sansio");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().count() > 3, "{text}");
    assert!(text.contains("\n  \"contents\""), "{text}");
    let value: Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(value["contents"][0]["text"], "Hello, world!");
}

/// The client's sampling policy end to end against the Python SDK server's `sample` tool: the
/// SDK sends `sampling/createMessage` and reports what our client answered.
#[test]
fn python_sdk_server_sampling_is_approved_refused_and_rate_limited_by_policy() {
    let Some(peers) = peers() else { return };
    let script = sdk_server_script();
    let server = [peers.python.as_str(), script.as_str()];
    let call = |flags: &[&str], args: &str| {
        let mut op = vec!["--era", "stateful"];
        op.extend_from_slice(flags);
        op.extend_from_slice(&["tools", "call", "sample", "--args", args]);
        let result = ok_json(&op, &server);
        result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text in {result}"))
            .to_owned()
    };
    let one = r#"{"prompt":"Capital of France?"}"#;

    let approved = call(&["--sampling", "auto", "--sample-text", "Paris"], one);
    assert_eq!(approved, "sampled: Paris");

    let refused = call(&["--sampling", "deny"], one);
    assert!(
        refused.starts_with("refused: User rejected sampling request"),
        "{refused}"
    );

    let two = r#"{"prompt":"Capital of France?","times":2}"#;
    let limited = call(
        &[
            "--sampling",
            "auto",
            "--sample-text",
            "Paris",
            "--sampling-rate",
            "1/min",
        ],
        two,
    );
    let answers: Vec<&str> = limited.split("; ").collect();
    assert_eq!(answers.len(), 2, "{limited}");
    assert_eq!(answers[0], "sampled: Paris");
    assert!(
        answers[1].starts_with("refused: User rejected sampling request"),
        "{limited}"
    );
}
