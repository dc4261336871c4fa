//! `mcp-sansio serve --stdio --trace-file PATH` and `--trace`: the server reports every frame
//! it reads and writes, once, in order, seen from its side.

use std::process::{Command, Output};

use serde_json::Value;

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

/// `(dir, method or "response ID")` of each JSON Lines record.
fn steps(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(|line| {
            let r: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            let m = &r["message"];
            let what = match m["method"].as_str() {
                Some(method) => method.to_owned(),
                None => format!("response {}", m["id"]),
            };
            (r["dir"].as_str().unwrap_or_default().to_owned(), what)
        })
        .collect()
}

#[test]
fn serve_trace_file_holds_the_servers_side_in_order() {
    let dir = std::env::temp_dir().join(format!("mcp-sansio-serve-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("server.jsonl");
    let out = conversation(&["--trace-file", path.to_str().expect("utf-8 path")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&path).expect("trace file");
    let _ = std::fs::remove_dir_all(&dir);
    let got = steps(&text);
    let want = [
        ("recv", "initialize"),
        ("send", "response 0"),
        ("recv", "notifications/initialized"),
        ("recv", "tools/list"),
        ("send", "response 1"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(d, w)| ((*d).to_owned(), (*w).to_owned()))
        .collect();
    assert_eq!(got, want, "{text}");
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
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(" stdio ")).collect();
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
