//! `mcp-sansio client --trace` and `--trace-file` against our own `serve --stdio`: every frame
//! of the conversation is reported once, in order, with its direction and size.

use std::process::{Command, Output};

use serde_json::Value;

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
    let dir = std::env::temp_dir().join(format!("mcp-sansio-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("trace.jsonl");
    let out = client(&["--trace-file", path.to_str().expect("utf-8 path")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&path).expect("trace file");
    let _ = std::fs::remove_dir_all(&dir);

    let records: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let steps: Vec<(String, String)> = records
        .iter()
        .map(|r| {
            let m = &r["message"];
            let what = m["method"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("response {}", m["id"]));
            (r["dir"].as_str().unwrap_or_default().to_owned(), what)
        })
        .collect();
    let want = [
        ("send", "initialize"),
        ("recv", "response 0"),
        ("send", "notifications/initialized"),
        ("send", "tools/list"),
        ("recv", "response 1"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(d, w)| ((*d).to_owned(), (*w).to_owned()))
        .collect();
    assert_eq!(steps, want, "{text}");

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
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(" stdio ")).collect();
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
    let dir = std::env::temp_dir().join(format!("mcp-sansio-probe-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("trace.jsonl");
    // `--era auto`: the `server/discover` probe, answered, then the stateless request.
    let out = client_in(
        "auto",
        &["--trace-file", path.to_str().expect("utf-8 path")],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&path).expect("trace file");
    let _ = std::fs::remove_dir_all(&dir);
    let steps: Vec<String> = text
        .lines()
        .map(|line| {
            let r: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            let m = &r["message"];
            let what = m["method"]
                .as_str()
                .map_or_else(|| format!("response {}", m["id"]), str::to_owned);
            format!("{} {what}", r["dir"].as_str().unwrap_or_default())
        })
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
