//! `mcp-sansio serve --stdio --trace-file PATH` and `--trace`: the server reports every frame
//! it reads and writes, once, in order, seen from its side.

use std::process::{Command, Output};

use serde_json::Value;

use crate::trace_run;
use trace_run::{owned, stdio_lines, steps, succeeded, TraceFile};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-sansio");

/// Runs `client --stdio tools list` against `serve --stdio` with the server's `trace_flags`.
fn conversation(trace_flags: &[&str]) -> Output {
    Command::new(BIN)
        .args(["client", "--stdio", "--era", "stateful", "--timeout", "30"])
        .args(["--server-stderr", "capture", "tools", "list", "--", BIN])
        .args(["serve", "--stdio"])
        .args(trace_flags)
        .output()
        .expect("run mcp-sansio")
}

#[test]
fn serve_trace_file_holds_the_servers_side_in_order() {
    let file = TraceFile::new("serve-trace");
    let out = conversation(&["--trace-file", file.arg()]);
    succeeded(&out);
    let text = file.read();
    let want = [
        ("recv", "initialize"),
        ("send", "response 0"),
        ("recv", "notifications/initialized"),
        ("recv", "tools/list"),
        ("send", "response 1"),
    ];
    assert_eq!(steps(&text), owned(&want), "{text}");
    let last: Value = serde_json::from_str(text.lines().last().unwrap_or_default()).expect("json");
    assert_eq!(last["transport"], "stdio");
    assert!(last["message"]["result"]["tools"].is_array(), "{text}");
    // The protocol still reached the client untouched.
    let stdout: Value = serde_json::from_slice(&out.stdout).expect("one JSON answer");
    assert!(stdout["tools"].is_array());
}

#[test]
fn serve_trace_writes_lines_to_stderr_not_stdout() {
    // The server's stderr is inherited: its trace lines reach ours.
    let out = Command::new(BIN)
        .args(["client", "--stdio", "--era", "stateful", "--timeout", "30"])
        .args(["--server-stderr", "inherit", "tools", "list"])
        .args(["--", BIN, "serve", "--stdio", "--trace"])
        .output()
        .expect("run mcp-sansio");
    let stderr = succeeded(&out);
    let lines = stdio_lines(&stderr);
    assert_eq!(lines.len(), 5, "{stderr}");
    assert!(
        lines[0].contains("← stdio") && lines[0].contains("request initialize id=0"),
        "{stderr}"
    );
    assert!(
        lines[1].contains("→ stdio") && lines[1].contains("response id=0"),
        "{stderr}"
    );
    assert!(lines[3].contains("request tools/list id=1"), "{stderr}");
    // Had the trace gone to stdout, the client could not have parsed the answer.
    let stdout: Value = serde_json::from_slice(&out.stdout).expect("one JSON answer");
    assert!(stdout["tools"].is_array());
}
