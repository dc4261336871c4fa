//! `mcp-sansio bench` end to end: it loads our own `serve --stdio` (and, when the interop
//! peers are installed, the TypeScript and Python SDK servers) and the JSON report must
//! account for every call: exact completion counts, errors by kind, sane percentiles, and the
//! exit status that goes with them. The URL target (Streamable HTTP) is in `url.rs`.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "../../../../tests/interop/harness.rs"]
mod harness;

mod url;

#[path = "../support/trace_run.rs"]
mod trace_run;

/// Longest one bench run may take before the test kills it and fails.
const RUN_LIMIT: Duration = Duration::from_secs(120);

const BIN: &str = env!("CARGO_BIN_EXE_mcp-sansio");

/// What a run left behind.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The `--json` report (one line on stdout).
    fn report(&self) -> Value {
        let line = self.stdout.trim();
        serde_json::from_str(line).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON report ({e}):\n{line}\nstderr:\n{}",
                self.stderr
            )
        })
    }
}

/// Runs `mcp-sansio bench --stdio <options> -- <server>`, killing it past [`RUN_LIMIT`].
fn bench(options: &[&str], server: &[&str]) -> Run {
    let mut args = vec!["bench", "--stdio", "--timeout", "20s"];
    args.extend_from_slice(options);
    args.push("--");
    args.extend_from_slice(server);
    run_cli(&args)
}

/// Runs `mcp-sansio <args>`, killing it past [`RUN_LIMIT`].
fn run_cli(args: &[&str]) -> Run {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcp-sansio bench");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for bench") {
            break status;
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("bench ran longer than {RUN_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn our_server() -> [&'static str; 3] {
    [BIN, "serve", "--stdio"]
}

fn num(value: &Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"))
}

/// min ≤ p50 ≤ p90 ≤ p99 ≤ max, all positive and below the call timeout.
fn assert_sane_latency(latency: &Value) {
    let at = |k: &str| num(&latency[k]);
    let (min, p50, p90, p99, max) = (at("min"), at("p50"), at("p90"), at("p99"), at("max"));
    assert!(min > 0.0, "{latency}");
    assert!(
        min <= p50 && p50 <= p90 && p90 <= p99 && p99 <= max,
        "{latency}"
    );
    assert!(max < 20e6, "a latency above the 20 s timeout: {latency}");
    assert!(at("mean") >= min && at("mean") <= max, "{latency}");
}

#[test]
fn a_fixed_number_of_calls_completes_exactly_without_errors() {
    let run = bench(
        &[
            "--json",
            "--requests",
            "600",
            "--sessions",
            "2",
            "--concurrency",
            "8",
            "--warmup",
            "200ms",
            "--mix",
            "ping=1,tool:test_simple_text=1,read:test://static-text=1",
        ],
        &our_server(),
    );
    assert_eq!(run.code, Some(0), "stderr:\n{}", run.stderr);
    let report = run.report();
    assert_eq!(report["completed"], 600, "{report}");
    assert_eq!(report["ok"], 600);
    assert_eq!(report["errors"]["total"], 0);
    assert_eq!(report["sessions_lost"], 0);
    assert_eq!(report["responses_unmatched"], 0);
    assert_eq!(report["responses_invalid"], 0);
    let server = &report["server"];
    assert!(
        server["name"].as_str().unwrap().starts_with("mcp-sansio"),
        "{server}"
    );
    assert!(!server["protocol_version"].as_str().unwrap().is_empty());
    assert_eq!(
        (report["sessions"].clone(), report["concurrency"].clone()),
        (2.into(), 8.into())
    );
    assert_sane_latency(&report["latency_us"]);
    assert!(num(&report["throughput_per_s"]) > 0.0);
    assert!(num(&report["elapsed_s"]) > 0.0);
    let ops = report["ops"].as_array().unwrap();
    let per_op: Vec<(&str, u64)> = ops
        .iter()
        .map(|op| (op["op"].as_str().unwrap(), op["ok"].as_u64().unwrap()))
        .collect();
    // Each session follows the 1:1:1 order over its share of the 600 calls, so every entry
    // gets 200, give or take one per session.
    let labels: Vec<&str> = per_op.iter().map(|(label, _)| *label).collect();
    assert_eq!(
        labels,
        ["ping", "tool:test_simple_text", "read:test://static-text"]
    );
    for (label, ok) in &per_op {
        assert!((198..=202).contains(ok), "{label}: {ok}");
    }
    for op in ops {
        assert_sane_latency(&op["latency_us"]);
    }
}

/// The arguments of a run of `requests` pings in two sessions (`concurrency` in flight),
/// traced to `file`, reported as JSON.
fn traced_pings<'a>(requests: &'a str, concurrency: &'a str, file: &'a str) -> [&'a str; 13] {
    [
        "--json",
        "--requests",
        requests,
        "--sessions",
        "2",
        "--concurrency",
        concurrency,
        "--warmup",
        "0s",
        "--mix",
        "ping",
        "--trace-file",
        file,
    ]
}

/// How many records of `steps` went `dir` with `what` (a method, or `response` for any
/// response).
fn count(steps: &[(String, String)], dir: &str, what: &str) -> usize {
    steps
        .iter()
        .filter(|(d, w)| {
            d == dir && (w == what || (what == "response" && w.starts_with("response")))
        })
        .count()
}

#[test]
fn a_traced_run_writes_every_frame_of_every_session() {
    let file = trace_run::TraceFile::new("bench-trace");
    let run = bench(&traced_pings("40", "4", file.arg()), &our_server());
    assert_eq!(run.code, Some(0), "stderr:\n{}", run.stderr);
    assert_eq!(run.report()["completed"], 40);
    let text = file.read();
    for line in text.lines() {
        assert!(line.contains(r#""transport":"stdio""#), "{line}");
    }
    let steps = trace_run::steps(&text);
    assert_eq!(count(&steps, "send", "initialize"), 2, "one per session");
    assert_eq!(count(&steps, "send", "notifications/initialized"), 2);
    let pings = count(&steps, "send", "ping");
    assert!(pings >= 40, "{pings} pings sent");
    // Every request sent, the two handshakes included, has its answer in the trace.
    assert_eq!(count(&steps, "recv", "response"), pings + 2, "{text}");
}

#[test]
fn tool_results_with_is_error_count_as_errors() {
    let run = bench(
        &[
            "--json",
            "--requests",
            "200",
            "--concurrency",
            "4",
            "--warmup",
            "0",
            "--mix",
            "tool:test_simple_text=1,tool:test_error_handling=1",
        ],
        &our_server(),
    );
    assert_eq!(run.code, Some(1), "failed calls make the exit status 1");
    assert!(run.stderr.contains("problem(s)"), "{}", run.stderr);
    let report = run.report();
    assert_eq!(report["completed"], 200, "{report}");
    assert_eq!(report["ok"], 100);
    assert_eq!(report["errors"]["total"], 100);
    assert_eq!(report["errors"]["tool_is_error"], 100);
    assert_eq!(report["errors"]["rpc_error"], 0);
    assert_eq!(report["ops"][1]["op"], "tool:test_error_handling");
    assert_eq!(report["ops"][1]["errors"]["tool_is_error"], 100);
    assert_eq!(report["ops"][1]["ok"], 0);
    assert_eq!(report["ops"][0]["errors"]["total"], 0);
    let sample = &report["error_samples"][0];
    assert_eq!(sample["count"], 100);
    assert!(sample["message"]
        .as_str()
        .unwrap()
        .starts_with("tool:test_error_handling: isError: true"));
}

#[test]
fn a_nonexistent_tool_counts_json_rpc_errors() {
    let run = bench(
        &[
            "--json",
            "--requests",
            "50",
            "--warmup",
            "0",
            "--mix",
            "ping=1,tool:no_such_tool=1",
        ],
        &our_server(),
    );
    assert_eq!(run.code, Some(1));
    let report = run.report();
    assert_eq!(report["completed"], 50, "{report}");
    assert_eq!(report["errors"]["rpc_error"], 25);
    assert_eq!(report["errors"]["total"], 25);
    assert_eq!(report["ops"][0]["ok"], 25);
    let message = report["error_samples"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("tool:no_such_tool: JSON-RPC error -32602"),
        "{message}"
    );
}

#[test]
fn a_server_that_cannot_start_fails_the_run() {
    let missing = bench(
        &["--requests", "10", "--sessions", "2"],
        &["/nonexistent/mcp-server"],
    );
    assert_eq!(missing.code, Some(1));
    assert!(missing.stdout.is_empty(), "no report: {}", missing.stdout);
    assert!(
        missing
            .stderr
            .contains("cannot start the server `/nonexistent/mcp-server`"),
        "{}",
        missing.stderr
    );

    let exits = bench(&["--requests", "10"], &["sh", "-c", "exit 3"]);
    assert_eq!(exits.code, Some(1));
    assert!(exits.stdout.is_empty());
    assert!(
        exits.stderr.contains("did not initialize"),
        "{}",
        exits.stderr
    );
}

#[test]
fn a_server_that_dies_midway_is_a_lost_session() {
    // Our server, killed by `timeout` three seconds into a thirty-second run.
    let run = bench(
        &[
            "--json",
            "--duration",
            "30s",
            "--warmup",
            "0",
            "--concurrency",
            "4",
        ],
        &["timeout", "3", BIN, "serve", "--stdio"],
    );
    assert_eq!(run.code, Some(1), "stderr:\n{}", run.stderr);
    let report = run.report();
    assert_eq!(report["sessions_lost"], 1, "{report}");
    let closed = report["errors"]["closed"].as_u64().unwrap();
    assert!(
        (1..=4).contains(&closed),
        "the calls in flight fail: {report}"
    );
    assert!(report["ok"].as_u64().unwrap() > 0);
    assert!(
        num(&report["elapsed_s"]) < 5.0,
        "the run ends with the server: {report}"
    );
}

#[test]
fn a_duration_run_measures_at_least_that_long() {
    let run = bench(
        &["--json", "--duration", "1s", "--warmup", "300ms"],
        &our_server(),
    );
    assert_eq!(run.code, Some(0), "stderr:\n{}", run.stderr);
    let report = run.report();
    assert!(num(&report["elapsed_s"]) >= 1.0, "{report}");
    assert_eq!(report["duration_s"], 1.0);
    assert!(report["completed"].as_u64().unwrap() > 0);
    assert_eq!(report["completed"], report["ok"]);
}

#[test]
fn bad_options_are_usage_errors() {
    for options in [
        &["--mix", "pong"][..],
        &["--concurrency", "0"],
        &["--requests", "0"],
        &["--mix", "tool:a", "--args", "b={}"],
        &["--duration", "5x"],
        &["--requests", "5", "--duration", "1s"],
        &["--duration", "200h"],
        &["--sessions", "0"],
    ] {
        let run = bench(options, &our_server());
        assert_eq!(run.code, Some(2), "{options:?}: {}", run.stderr);
    }
}

#[test]
fn the_table_reports_every_entry_and_the_errors() {
    let run = bench(
        &[
            "--requests",
            "40",
            "--warmup",
            "0",
            "--mix",
            "ping,tool:test_error_handling",
        ],
        &our_server(),
    );
    assert_eq!(run.code, Some(1));
    let table = &run.stdout;
    for needle in [
        "completed   40 in",
        "20 ok, 20 errors",
        "ping",
        "tool:test_error_handling",
        "tool_is_error    20",
        "p99",
    ] {
        assert!(table.contains(needle), "`{needle}` missing:\n{table}");
    }
}

/// The SDK servers (TypeScript server-everything, Python `mcp`), when installed.
fn peer(var: &str) -> Option<String> {
    harness::peers_ready().then(|| std::env::var(var).unwrap_or_else(|_| panic!("{var} unset")))
}

#[test]
fn loads_the_typescript_server_everything_echo() {
    let (Some(node), Some(server)) = (peer("MCP_NODE22"), peer("MCP_SERVER_EVERYTHING")) else {
        return;
    };
    let run = bench(
        &[
            "--json",
            "--requests",
            "300",
            "--concurrency",
            "16",
            "--warmup",
            "0",
            "--mix",
            "ping=1,tool:echo=2",
            "--args",
            r#"echo={"message":"hello"}"#,
        ],
        &[&node, &server, "stdio"],
    );
    assert_eq!(run.code, Some(0), "stderr:\n{}\n{}", run.stderr, run.stdout);
    let report = run.report();
    assert_eq!(
        (report["completed"].clone(), report["ok"].clone()),
        (300.into(), 300.into())
    );
    assert_sane_latency(&report["latency_us"]);
}

#[test]
fn loads_the_python_sdk_server_echo() {
    let Some(python) = peer("MCP_PYTHON") else {
        return;
    };
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/py/sdk_server.py");
    let run = bench(
        &[
            "--json",
            "--requests",
            "200",
            "--concurrency",
            "8",
            "--warmup",
            "0",
            "--mix",
            "ping=1,tool:echo=2,read:greeting://hello=1",
            "--args",
            r#"echo={"text":"hello"}"#,
        ],
        &[&python, script.to_str().unwrap()],
    );
    assert_eq!(run.code, Some(0), "stderr:\n{}\n{}", run.stderr, run.stdout);
    let report = run.report();
    assert_eq!(
        (report["completed"].clone(), report["ok"].clone()),
        (200.into(), 200.into())
    );
    assert_sane_latency(&report["latency_us"]);
}
