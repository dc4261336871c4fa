//! The README's server example, compiled and run. The code between the `README begin` and
//! `README end` markers is the README's `rust` block line for line (`readme_block_is_this_code`
//! checks it), wrapped in a function that hands it a time, one input line, a buffer and a
//! `spawn`.

use std::time::Instant;

use mcp_sansio::app::server::Server;
use mcp_sansio::runtime::Job;

/// Runs the README's code on `line`: the server, what it wrote, its jobs and its deadline.
fn readme_example(now: Instant, line: String) -> (Server, Vec<u8>, Vec<Job>, Option<Instant>) {
    let mut out = Vec::new();
    let mut jobs = Vec::new();
    let mut spawn = |job: Job| jobs.push(job);
    // README begin
    use bytes::Bytes;
    use mcp_sansio::prelude::*; // Server, Tool, CallToolResult, Implementation, Client, ...
    use schemars::JsonSchema;
    use serde::Deserialize;

    #[derive(Deserialize, JsonSchema)]
    struct Greet {
        /// Who to greet.
        name: Option<String>,
    }

    let mut server = Server::builder(Implementation::new("hello", "1.0"))
        .tool(Tool::typed::<Greet>("greet").sync_handler(|args, _ctx| {
            let text = format!("Hello, {}!", args.name.as_deref().unwrap_or("world"));
            Ok(CallToolResult::text(text))
        }))
        .build(now);

    server.handle_input(now, Bytes::from(line)); // one JSON-RPC message, as read
    while server.poll_transmit(&mut out).is_some() {
        out.push(b'\n'); // `out` now ends with one message to write
    }
    while let Some(job) = server.poll_job() {
        spawn(job); // an async handler still running: a future for your executor
    }
    let deadline = server.poll_timeout(); // call handle_timeout(now) then
                                          // README end
    (server, out, jobs, deadline)
}

/// Every message `server` has to write, one per line.
fn drain(server: &mut Server) -> String {
    let mut out = Vec::new();
    while server.poll_transmit(&mut out).is_some() {
        out.push(b'\n');
    }
    String::from_utf8(out).expect("JSON text")
}

#[test]
fn the_readme_server_answers_initialize_and_greets() {
    let now = Instant::now();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let (mut server, out, jobs, _deadline) = readme_example(now, init.to_owned());
    let out = String::from_utf8(out).expect("JSON text");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.contains(r#""protocolVersion":"2025-11-25""#), "{out}");
    assert!(out.contains(r#""name":"hello""#), "{out}");
    assert!(jobs.is_empty(), "a sync handler never becomes a job");

    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    server.handle_input(now, initialized.into());
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}"#;
    server.handle_input(now, call.into());
    let out = drain(&mut server);
    assert!(out.contains(r#""id":2"#), "{out}");
    assert!(out.contains("Hello, Ada!"), "{out}");
    assert!(server.poll_job().is_none());
}

/// The lines between two markers, trimmed, without blank ones.
fn code_lines(text: &str, begin: &str, end: &str) -> Vec<String> {
    let start = text.find(begin).expect("begin marker") + begin.len();
    let stop = start + text[start..].find(end).expect("end marker");
    text[start..stop]
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn readme_block_is_this_code() {
    let readme = include_str!("../../README.md");
    let this = include_str!("readme.rs");
    let in_readme = code_lines(readme, "```rust\n", "```");
    let here = code_lines(this, "// README begin\n", "    // README end");
    assert!(!in_readme.is_empty());
    assert_eq!(
        in_readme, here,
        "README.md's rust block and this test's code differ"
    );
}
