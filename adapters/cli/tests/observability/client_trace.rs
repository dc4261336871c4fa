//! `mcp-sansio client --trace` and `--trace-file` against our own `serve --stdio`: every frame
//! of the conversation is reported once, in order, with its direction and size.

use std::process::{Command, Output};

use serde_json::Value;

use crate::trace_run;
use trace_run::{owned, stdio_lines, steps, succeeded, TraceFile};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-sansio");

fn client(flags: &[&str]) -> Output {
    client_in("stateful", flags)
}

/// `client --stdio --era ERA FLAGS tools list` against our `serve --stdio`.
fn client_in(era: &str, flags: &[&str]) -> Output {
    Command::new(BIN)
        .args(["client", "--stdio", "--era", era, "--timeout", "30"])
        .args(["--server-stderr", "null"])
        .args(flags)
        .args(["tools", "list", "--", BIN, "serve", "--stdio"])
        .output()
        .expect("run mcp-sansio")
}

#[test]
fn trace_file_holds_every_frame_as_json_lines() {
    let file = TraceFile::new("trace");
    let out = client(&["--trace-file", file.arg()]);
    succeeded(&out);
    let text = file.read();

    let records: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let want = [
        ("send", "initialize"),
        ("recv", "response 0"),
        ("send", "notifications/initialized"),
        ("send", "tools/list"),
        ("recv", "response 1"),
    ];
    assert_eq!(steps(&text), owned(&want), "{text}");

    let mut last = 0.0;
    for record in &records {
        assert_eq!(record["transport"], "stdio");
        let t = record["t_ms"].as_f64().expect("t_ms");
        assert!(t >= last, "time goes forward: {text}");
        last = t;
        let compact = serde_json::to_string(&record["message"]).expect("json");
        assert_eq!(
            record["bytes"].as_u64(),
            Some(compact.len() as u64),
            "{record}"
        );
    }
    assert!(
        records[4]["message"]["result"]["tools"].is_array(),
        "{text}"
    );
}

#[test]
fn trace_writes_one_line_per_frame_to_stderr() {
    let out = client(&["--trace"]);
    let stderr = succeeded(&out);
    let lines = stdio_lines(&stderr);
    assert_eq!(lines.len(), 5, "{stderr}");
    assert!(
        lines[0].contains("→ stdio") && lines[0].contains("request initialize id=0"),
        "{stderr}"
    );
    assert!(
        lines[1].contains("← stdio") && lines[1].contains("response id=0"),
        "{stderr}"
    );
    assert!(
        lines[4].contains("response id=1") && lines[4].ends_with('…'),
        "{stderr}"
    );
    // The result still goes to stdout, untouched by the trace.
    let stdout: Value = serde_json::from_slice(&out.stdout).expect("one JSON answer");
    assert!(stdout["tools"].is_array());
}

#[test]
fn the_era_probe_and_a_stateless_conversation_share_one_trace() {
    let file = TraceFile::new("probe-trace");
    // `--era auto`: the `server/discover` probe, answered, then the stateless request.
    let out = client_in("auto", &["--trace-file", file.arg()]);
    succeeded(&out);
    let text = file.read();
    let steps: Vec<String> = steps(&text)
        .into_iter()
        .map(|(dir, what)| format!("{dir} {what}"))
        .collect();
    assert_eq!(
        steps,
        [
            "send server/discover",
            "recv response 1",
            "send tools/list",
            "recv response 2"
        ],
        "{text}"
    );
}
