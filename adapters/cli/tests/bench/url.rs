//! `mcp-sansio bench URL`: the Streamable HTTP target against our `serve --http` (and, when
//! the interop peers are installed, server-everything in streamableHttp mode and the Python
//! SDK's streamable-http server). Same report, same checks as over stdio: the counts add up,
//! failed calls are counted by kind, a server killed mid-run ends the run with lost sessions
//! instead of a hang.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use super::harness::{free_port, serve_announced, serve_on_port, PeerServer};
use super::{assert_sane_latency, count, num, peer, run_cli, trace_run, traced_pings, Run, BIN};

/// How long a peer server may take to accept connections.
const START_LIMIT: Duration = Duration::from_secs(60);

/// `mcp-sansio serve --http 127.0.0.1:0`, its URL read from `listening on URL`.
fn ours() -> PeerServer {
    let mut command = Command::new(BIN);
    command.args(["serve", "--http", "127.0.0.1:0"]);
    serve_announced(command, START_LIMIT)
}

/// `mcp-sansio bench URL --timeout 20s <options>`.
fn bench_url(url: &str, options: &[&str]) -> Run {
    let mut args = vec!["bench", url, "--timeout", "20s"];
    args.extend_from_slice(options);
    run_cli(&args)
}

#[test]
fn url_sessions_and_calls_in_flight_add_up_exactly() {
    let server = ours();
    let run = bench_url(
        &server.url,
        &[
            "--json",
            "--requests",
            "600",
            "--sessions",
            "3",
            "--concurrency",
            "8",
            "--warmup",
            "200ms",
            "--mix",
            "ping=1,tool:test_simple_text=1,read:test://static-text=1",
        ],
    );
    assert_eq!(run.code, Some(0), "stderr:\n{}", run.stderr);
    let report = run.report();
    assert_eq!(report["transport"], "http");
    assert_eq!(report["target"], server.url.as_str());
    assert_eq!(report["completed"], 600, "{report}");
    assert_eq!(report["ok"], 600);
    assert_eq!(report["errors"]["total"], 0);
    assert_eq!(report["sessions_lost"], 0);
    assert_eq!(report["responses_unmatched"], 0);
    assert_eq!(
        (report["sessions"].clone(), report["concurrency"].clone()),
        (3.into(), 8.into())
    );
    let server_info = &report["server"];
    assert!(
        server_info["name"]
            .as_str()
            .unwrap()
            .starts_with("mcp-sansio"),
        "{server_info}"
    );
    assert_sane_latency(&report["latency_us"]);
    assert!(num(&report["throughput_per_s"]) > 0.0);
    // Each session follows the 1:1:1 order over its share: 200 each, give or take one per
    // session.
    for op in report["ops"].as_array().unwrap() {
        let ok = op["ok"].as_u64().unwrap();
        assert!((197..=203).contains(&ok), "{op}");
        assert_sane_latency(&op["latency_us"]);
    }
}

#[test]
fn url_failed_tools_and_unknown_tools_are_counted_by_kind() {
    let server = ours();
    let run = bench_url(
        &server.url,
        &[
            "--json",
            "--requests",
            "300",
            "--concurrency",
            "4",
            "--warmup",
            "0",
            "--mix",
            "ping=1,tool:test_error_handling=1,tool:no_such_tool=1",
        ],
    );
    assert_eq!(run.code, Some(1), "failed calls make the exit status 1");
    let report = run.report();
    assert_eq!(report["completed"], 300, "{report}");
    assert_eq!(report["ok"], 100);
    assert_eq!(report["errors"]["tool_is_error"], 100);
    assert_eq!(report["errors"]["rpc_error"], 100);
    assert_eq!(report["errors"]["closed"], 0);
    assert_eq!(report["sessions_lost"], 0);
    assert_eq!(report["ops"][0]["ok"], 100);
    let samples: Vec<&str> = report["error_samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["message"].as_str().unwrap())
        .collect();
    assert!(
        samples
            .iter()
            .any(|m| m.starts_with("tool:no_such_tool: JSON-RPC error -32602")),
        "{samples:?}"
    );
}

#[test]
fn url_server_killed_midway_loses_every_session_without_a_hang() {
    let server = ours();
    let pid = server.child.id().to_string();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(2));
        Command::new("kill").args(["-KILL", &pid]).status()
    });
    let run = bench_url(
        &server.url,
        &[
            "--json",
            "--duration",
            "30s",
            "--warmup",
            "0",
            "--sessions",
            "2",
            "--concurrency",
            "4",
        ],
    );
    assert!(killer.join().unwrap().unwrap().success());
    assert_eq!(run.code, Some(1), "stderr:\n{}", run.stderr);
    let report = run.report();
    assert_eq!(report["sessions_lost"], 2, "{report}");
    // The calls in flight lose their connection, then the workers find the port closed and
    // end their session: a few failed calls per worker (8 workers; a call may also catch a
    // connection that breaks while the server dies), never a spin on refused connections.
    // Counted by kind: the connection broke (reset), no new one (connect), the session gone.
    let errors = &report["errors"];
    let no_answer = ["closed", "reset", "connect"]
        .map(|kind| errors[kind].as_u64().unwrap())
        .iter()
        .sum::<u64>();
    assert!(
        (2..=64).contains(&no_answer),
        "the calls in flight fail, then each session stops: {report}"
    );
    assert_eq!(errors["total"], no_answer, "{report}");
    assert_eq!(report["answers"]["lost"], no_answer, "{report}");
    assert!(report["ok"].as_u64().unwrap() > 0);
    assert!(
        num(&report["elapsed_s"]) < 10.0,
        "the run ends with the server: {report}"
    );
    for sample in report["error_samples"].as_array().unwrap() {
        let message = sample["message"].as_str().unwrap();
        assert!(message.starts_with("ping: no answer: "), "{message}");
    }
}

/// Sessions holding their GET stream, spread over two servers, with the server's memory read
/// from /proc: every call answered exactly once, the connections counted.
#[test]
fn url_get_streams_over_two_servers_count_every_answer() {
    let (one, two) = (ours(), ours());
    let pid = one.child.id().to_string();
    let run = bench_url(
        &one.url,
        &[
            "--url",
            &two.url,
            "--json",
            "--get-stream",
            "--server-pid",
            &pid,
            "--requests",
            "400",
            "--sessions",
            "4",
            "--concurrency",
            "2",
            "--warmup",
            "0",
            "--mix",
            "ping=1,tool:test_simple_text=1",
        ],
    );
    assert_eq!(run.code, Some(0), "stderr:\n{}", run.stderr);
    let report = run.report();
    assert_eq!(report["target"], format!("{} {}", one.url, two.url));
    assert_eq!(report["get_stream"], true);
    assert_eq!(report["completed"], 400, "{report}");
    assert_eq!(report["ok"], 400);
    // Nothing measured was lost or answered twice; a worker may have sent one call past the
    // budget (not counted), so at least 400 were sent and all were answered.
    let answers = &report["answers"];
    assert!(answers["sent"].as_u64().unwrap() >= 400, "{report}");
    assert_eq!(answers["answered"], answers["sent"], "{report}");
    assert_eq!(answers["lost"], 0);
    assert_eq!(answers["duplicated"], 0);
    // Per session: one GET stream, up to two calls in flight; at least two connections each.
    let opened = report["connections_opened"].as_u64().unwrap();
    assert!((8..=4 * 8).contains(&opened), "{report}");
    let memory = &report["server_memory_kib"];
    assert!(memory["max_rss"].as_u64().unwrap() > 0, "{report}");
    assert!(memory["hwm"].as_u64().unwrap() >= memory["max_rss"].as_u64().unwrap());
    assert!(memory["samples"].as_u64().unwrap() >= 1);
}

/// `--idle`: the sessions open, hold their GET stream, make no call, close.
#[test]
fn url_idle_sessions_hold_their_get_stream_without_calls() {
    let server = ours();
    let pid = server.child.id().to_string();
    let run = bench_url(
        &server.url,
        &[
            "--json",
            "--get-stream",
            "--idle",
            "300ms",
            "--sessions",
            "5",
            "--server-pid",
            &pid,
        ],
    );
    assert_eq!(run.code, Some(0), "stderr:\n{}", run.stderr);
    let report = run.report();
    assert_eq!(report["idle_s"], 0.3);
    assert_eq!(report["completed"], 0);
    assert_eq!(report["answers"]["sent"], 0);
    // Each session: the handshake's connection(s), the GET stream, the DELETE's.
    assert!(
        report["connections_opened"].as_u64().unwrap() >= 10,
        "{report}"
    );
    assert!(report["server_memory_kib"]["max_rss"].as_u64().unwrap() > 0);
}

#[test]
fn url_unreachable_or_malformed_targets_fail_before_any_report() {
    let port = free_port(); // free a moment ago: nothing listens there
    let url = format!("http://127.0.0.1:{port}/mcp");
    let run = bench_url(&url, &["--requests", "10", "--sessions", "2"]);
    assert_eq!(run.code, Some(1));
    assert!(run.stdout.is_empty(), "no report: {}", run.stdout);
    assert!(
        run.stderr.contains("did not initialize") && run.stderr.contains("cannot connect"),
        "{}",
        run.stderr
    );

    for args in [
        &["bench", "https://example.invalid/mcp"][..],
        &["bench", "http://127.0.0.1:9/mcp", "--", "server"],
        &["bench", "--stdio", "http://127.0.0.1:9/mcp"],
        &[
            "bench",
            "http://127.0.0.1:9/mcp",
            "--server-stderr",
            "null",
            "--stdio",
        ],
        &["bench", "--stdio", "--bearer-token", "t", "--", "server"],
        &[
            "bench",
            "http://127.0.0.1:9/mcp",
            "--idle",
            "1s",
            "--requests",
            "5",
        ],
        &["bench", "http://127.0.0.1:9/mcp", "--server-pid", "0"],
        &["bench", "http://127.0.0.1:9/mcp", "--sessions", "20001"],
        &["bench"],
    ] {
        let run = run_cli(args);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn url_loads_the_typescript_server_everything_streamable_http() {
    let (Some(node), Some(everything)) = (peer("MCP_NODE22"), peer("MCP_SERVER_EVERYTHING")) else {
        return;
    };
    let port = free_port();
    let mut command = Command::new(node);
    command
        .args([everything.as_str(), "streamableHttp"])
        .env("PORT", port.to_string());
    let server = serve_on_port(command, port, START_LIMIT);
    let run = bench_url(
        &server.url,
        &[
            "--json",
            "--requests",
            "300",
            "--sessions",
            "2",
            "--concurrency",
            "8",
            "--warmup",
            "0",
            "--mix",
            "ping=1,tool:echo=2",
            "--args",
            r#"echo={"message":"hello"}"#,
        ],
    );
    assert_eq!(run.code, Some(0), "stderr:\n{}\n{}", run.stderr, run.stdout);
    let report = run.report();
    assert_eq!(
        (report["completed"].clone(), report["ok"].clone()),
        (300.into(), 300.into())
    );
    assert_eq!(report["ops"][1]["ok"], 200, "{report}");
    assert_sane_latency(&report["latency_us"]);
}

#[test]
fn url_loads_the_python_sdk_streamable_http_server() {
    let Some(python) = peer("MCP_PYTHON") else {
        return;
    };
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/py/sdk_server.py");
    let port = free_port();
    let mut command = Command::new(python);
    command.arg(script).args(["--http", &port.to_string()]);
    let server = serve_on_port(command, port, START_LIMIT);
    let run = bench_url(
        &server.url,
        &[
            "--json",
            "--requests",
            "200",
            "--sessions",
            "2",
            "--concurrency",
            "4",
            "--warmup",
            "0",
            "--mix",
            "ping=1,tool:echo=2,read:greeting://hello=1",
            "--args",
            r#"echo={"text":"hello"}"#,
        ],
    );
    assert_eq!(run.code, Some(0), "stderr:\n{}\n{}", run.stderr, run.stdout);
    let report = run.report();
    assert_eq!(
        (report["completed"].clone(), report["ok"].clone()),
        (200.into(), 200.into())
    );
    assert_sane_latency(&report["latency_us"]);
}

#[test]
fn a_traced_url_run_shows_heads_and_frames_of_every_session() {
    let server = ours();
    let file = trace_run::TraceFile::new("bench-url-trace");
    let run = bench_url(&server.url, &traced_pings("30", "3", file.arg()));
    assert_eq!(run.code, Some(0), "stderr:\n{}", run.stderr);
    assert_eq!(run.report()["completed"], 30);
    let text = file.read();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let posts = records
        .iter()
        .filter(|r| r["dir"] == "send" && r["http"]["start"] == "POST /mcp")
        .count();
    let frames: Vec<(String, String)> = trace_run::steps(
        &records
            .iter()
            .filter(|r| r.get("message").is_some())
            .map(|r| r.to_string() + "\n")
            .collect::<String>(),
    );
    let pings = count(&frames, "send", "ping");
    assert_eq!(count(&frames, "send", "initialize"), 2, "one per session");
    assert!(pings >= 30, "{pings}");
    assert_eq!(count(&frames, "recv", "response"), pings + 2);
    assert!(posts >= pings + 4, "each frame went in a POST: {posts}");
}
