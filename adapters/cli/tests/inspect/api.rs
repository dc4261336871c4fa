//! `mcp-sansio inspect`'s JSON API and frame feed against our own server over stdio,
//! Streamable HTTP and HTTP+SSE: connect, list tools, call one with arguments, see its frames,
//! answer the server's elicitation, sampling and roots requests; the same in 2026-07-28 (found
//! by the era probe: no `initialize`, the server's inputs asked inside a call's rounds); and
//! the refusals of requests without the token, from another Host or Origin, or out of bounds;
//! a transport event (an oversized SSE event dropped) as a line of the event log.

use crate::hostile_http;
use crate::http_fixture;
use crate::inspector;

use std::time::{Duration, Instant};

use http_fixture::HttpFixture;
use inspector::{feed_records, http, Inspector};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-sansio");

/// Our (dual-era) server over stdio, spoken to in the handshake era.
fn over_stdio() -> Inspector {
    Inspector::start(&[
        "--era", "stateful", "--stdio", "--", BIN, "serve", "--stdio",
    ])
}

/// Lists the tools, calls `greet` with an argument and checks the result and its frames.
fn list_and_call(inspector: &Inspector, transport: &str) {
    let state = inspector.wait_connected(Duration::from_secs(20));
    assert_eq!(state["status"], "connected", "{state}");
    assert_eq!(state["serverInfo"]["name"], "mcp-sansio-reference-fixture");
    assert!(state["protocolVersion"].is_string() && state["capabilities"]["tools"].is_object());

    let (status, listed) = inspector.post("api/request", &json!({"method": "tools/list"}));
    assert_eq!(status, 200, "{listed}");
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"greet") && names.contains(&"test_elicitation"),
        "{names:?}"
    );

    let call =
        json!({"method": "tools/call", "params": {"name": "greet", "arguments": {"name": "Ada"}}});
    let (status, called) = inspector.post("api/request", &call);
    assert_eq!(status, 200, "{called}");
    let text = called["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("Ada"), "{called}");

    let records = feed_records(inspector, Duration::from_millis(500));
    let request = records
        .iter()
        .find(|r| r["method"] == "tools/call" && r["dir"] == "send")
        .unwrap_or_else(|| panic!("no tools/call frame in {records:?}"));
    assert_eq!(request["transport"], transport);
    assert_eq!(request["kind"], "request");
    assert_eq!(request["message"]["params"]["arguments"]["name"], "Ada");
    assert!(request["bytes"].as_u64().unwrap_or(0) > 0 && request["t_ms"].is_number());
    let answer = records
        .iter()
        .find(|r| r["kind"] == "response" && r["id"] == request["id"] && r["dir"] == "recv")
        .expect("the call's response frame");
    assert!(answer["seq"].as_u64() > request["seq"].as_u64());
}

/// Calls `tool` on a thread, waits for the server's request of `kind` to be listed, answers it
/// with `answer` and returns the tool's text.
fn call_answering(
    inspector: &Inspector,
    tool: &str,
    args: Value,
    kind: &str,
    answer: Value,
) -> String {
    let (status, result, _) = call_answering_raw(inspector, tool, args, kind, answer);
    assert_eq!(status, 200, "{result}");
    result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Like [`call_answering`]: the call's status and JSON body, and the pending entry answered.
fn call_answering_raw(
    inspector: &Inspector,
    tool: &str,
    args: Value,
    kind: &str,
    answer: Value,
) -> (u16, Value, Value) {
    let (authority, path) = (
        inspector.authority().to_owned(),
        inspector.path("api/request"),
    );
    let body =
        json!({"method": "tools/call", "params": {"name": tool, "arguments": args}}).to_string();
    let call = std::thread::spawn(move || {
        let json = [("Content-Type", "application/json")];
        http(&authority, "POST", &path, &json, Some(&body))
    });
    let until = Instant::now() + Duration::from_secs(20);
    let waiting = loop {
        let (_, list) = inspector.get("api/pending");
        if let Some(first) = list.as_array().and_then(|l| l.first()).cloned() {
            break first;
        }
        assert!(Instant::now() < until, "no pending request was listed");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(waiting["kind"], kind, "{waiting}");
    let mut reply = answer;
    reply["id"] = waiting["id"].clone();
    let (status, body) = inspector.post("api/answer", &reply);
    assert_eq!(status, 200, "{body}");
    let (status, again) = inspector.post("api/answer", &reply);
    assert_eq!(
        status, 409,
        "a second answer finds nothing waiting: {again}"
    );
    let (status, body) = call.join().expect("the call thread");
    let result: Value = serde_json::from_slice(&body).expect("JSON");
    (status, result, waiting)
}

#[test]
fn a_stdio_server_is_listed_called_and_traced() {
    let inspector = over_stdio();
    list_and_call(&inspector, "stdio");
}

/// The 2026-07-28 path on `inspector`: the era and `server/discover` in the state and the
/// feed, no `initialize`, and the inputs of a call (elicitation, sampling) asked on the page.
fn stateless_path(inspector: &Inspector, transport: &str) {
    list_and_call(inspector, transport);
    let (_, state) = inspector.get("api/state");
    assert_eq!(state["era"], "stateless", "{state}");
    assert_eq!(state["protocolVersion"], "2026-07-28", "{state}");
    let records = feed_records(inspector, Duration::from_millis(300));
    assert!(records.iter().any(|r| r["method"] == "server/discover"));
    assert!(!records.iter().any(|r| r["method"] == "initialize"));

    let accept = json!({"result": {"action": "accept", "content": {"name": "Grace"}}});
    let tool = "test_input_required_result_elicitation";
    let text = call_answering(inspector, tool, json!({}), "elicitation", accept);
    assert_eq!(text, "Hello, Grace!");
    let reply = json!({"role": "assistant", "content": {"type": "text", "text": "Paris"},
                       "model": "person", "stopReason": "endTurn"});
    let tool = "test_input_required_result_sampling";
    let text = call_answering(
        inspector,
        tool,
        json!({}),
        "sampling",
        json!({"result": reply}),
    );
    assert_eq!(text, "The model answered: Paris");
    // Each answered call went twice: first asked for the input, then sent with it.
    let records = feed_records(inspector, Duration::from_millis(300));
    let calls = records
        .iter()
        .filter(|r| r["method"] == "tools/call" && r["dir"] == "send" && r["kind"] == "request")
        .count();
    assert_eq!(calls, 5, "greet once, each input tool twice");
}

#[test]
fn a_2026_07_28_server_is_found_by_the_probe_and_asks_through_the_page() {
    let inspector = Inspector::start(&["--stdio", "--", BIN, "serve", "--stdio"]);
    stateless_path(&inspector, "stdio");
    drop(inspector);
    let server = HttpFixture::start(&[]);
    let inspector = Inspector::start(&[&server.url]);
    stateless_path(&inspector, "http");
    assert_eq!(inspector.get("api/state").1["transport"], "streamable");
}

#[test]
fn a_server_silent_before_initialize_is_inspected_after_the_probe_times_out() {
    // Plain Python, no SDK: it never answers before `initialize`.
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/interop/py/quiet_until_initialize.py"
    );
    let inspector = Inspector::start(&["--stdio", "--", "python3", script]);
    let state = inspector.wait_connected(Duration::from_secs(40));
    assert_eq!(state["era"], "stateful", "{state}");
    let records = feed_records(&inspector, Duration::from_millis(300));
    let fallback = records
        .iter()
        .find(|r| r["event"] == "era")
        .unwrap_or_else(|| panic!("no era event in {records:?}"));
    assert!(
        fallback["data"]["probe"]
            .as_str()
            .is_some_and(|why| why.contains("no answer")),
        "{fallback}"
    );
    assert!(records.iter().any(|r| r["method"] == "initialize"));
    let call =
        json!({"method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 3}}});
    let (status, called) = inspector.post("api/request", &call);
    assert_eq!(status, 200, "{called}");
    assert_eq!(called["result"]["content"][0]["text"], "5", "{called}");
}

#[test]
fn era_stateless_with_the_sse_transport_is_refused() {
    let out = std::process::Command::new(BIN)
        .args(["inspect", "--era", "stateless", "--transport", "sse"])
        .arg("http://127.0.0.1:9/sse")
        .output()
        .expect("run mcp-sansio inspect");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("handshake era"), "{stderr}");
}

#[test]
fn the_servers_elicitation_and_sampling_wait_for_the_page() {
    let inspector = over_stdio();
    inspector.wait_connected(Duration::from_secs(20));
    let elicit = ("test_elicitation", json!({"message": "ok?"}), "elicitation");
    let sample = ("test_sampling", json!({"prompt": "6*7?"}), "sampling");
    let reply = json!({"role": "assistant", "content": {"type": "text", "text": "forty-two"},
                       "model": "person", "stopReason": "endTurn"});
    let cases = [
        (
            &elicit,
            json!({"result": {"action": "accept", "content": {"response": "yes please"}}}),
            "action=accept, content={\"response\":\"yes please\"}",
        ),
        (
            &elicit,
            json!({"result": {"action": "decline"}}),
            "action=decline",
        ),
        (&sample, json!({"result": reply}), "LLM response: forty-two"),
        (&sample, json!({"error": "no"}), "Sampling failed"),
    ];
    for ((tool, args, kind), answer, expected) in cases {
        let text = call_answering(&inspector, tool, args.clone(), kind, answer);
        assert!(text.contains(expected), "{tool}: {text}");
    }
}

#[test]
fn the_servers_roots_request_waits_for_the_page() {
    let inspector = Inspector::start(&[
        "--era",
        "stateful",
        "--root",
        "/srv/offered",
        "--stdio",
        "--",
        BIN,
        "serve",
        "--stdio",
    ]);
    inspector.wait_connected(Duration::from_secs(20));
    let tool = "test_input_required_result_list_roots";
    let answer = json!({"result": {"roots": [{"uri": "file:///answered", "name": "answered"}]}});
    let (status, result, waiting) =
        call_answering_raw(&inspector, tool, json!({}), "roots", answer);
    assert_eq!(status, 200, "{result}");
    assert_eq!(
        waiting["params"]["offered"][0]["uri"], "file:///srv/offered",
        "{waiting}"
    );
    let text = result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("file:///answered") && !text.contains("offered"),
        "{text}"
    );

    // The Roots tab's list is what the next card offers; a refusal fails the server's call.
    let (status, body) = inspector.post("api/roots", &json!({"roots": ["file:///tab/one"]}));
    assert_eq!(status, 200, "{body}");
    let refusal = json!({"error": "not today"});
    let (status, result, waiting) =
        call_answering_raw(&inspector, tool, json!({}), "roots", refusal);
    assert_eq!(
        waiting["params"]["offered"],
        json!([{"uri": "file:///tab/one", "name": "one"}])
    );
    assert_eq!(status, 502, "{result}");
    assert!(
        result["error"]
            .as_str()
            .unwrap_or_default()
            .contains("not today"),
        "{result}"
    );
}

#[test]
fn a_streamable_http_server_is_listed_called_and_traced_with_its_heads() {
    let server = HttpFixture::start(&[]);
    let inspector = Inspector::start(&["--era", "stateful", &server.url]);
    list_and_call(&inspector, "http");
    let records = feed_records(&inspector, Duration::from_millis(300));
    assert!(
        records.iter().any(|r| r["http"]["start"] == "POST /mcp"),
        "no request head in the feed"
    );
    assert_eq!(inspector.get("api/state").1["transport"], "streamable");
}

#[test]
fn an_http_sse_server_is_listed_and_called() {
    let server = HttpFixture::start(&[]);
    let inspector = Inspector::start(&["--transport", "sse", &server.sse_url]);
    list_and_call(&inspector, "http");
}

#[test]
fn requests_without_the_token_or_from_elsewhere_are_refused() {
    let inspector = over_stdio();
    let authority = inspector.authority().to_owned();
    let state = inspector.path("api/state");
    let status =
        |path: &str, headers: &[(&str, &str)]| http(&authority, "GET", path, headers, None).0;
    assert_eq!(status(&state, &[]), 200);
    assert_eq!(status("/t/0000/api/state", &[]), 403, "a wrong token");
    assert_eq!(status("/api/state", &[]), 403, "no token");
    let port = authority.rsplit(':').next().unwrap_or_default();
    let rebound = format!("attacker.example:{port}");
    assert_eq!(
        status(&state, &[("Host", &rebound)]),
        403,
        "a rebinding Host"
    );
    assert_eq!(
        status(&state, &[("Origin", "http://attacker.example")]),
        403,
        "another origin"
    );
    assert_eq!(status(&state, &[("Sec-Fetch-Site", "cross-site")]), 403);
    let origin = format!("http://{authority}");
    assert_eq!(
        status(&state, &[("Origin", &origin)]),
        200,
        "the page's own origin"
    );

    let request = inspector.path("api/request");
    let form = [("Content-Type", "text/plain")];
    let (code, _) = http(
        &authority,
        "POST",
        &request,
        &form,
        Some(r#"{"method":"ping"}"#),
    );
    assert_eq!(code, 415, "only JSON bodies");
    let (code, body) = inspector.post("api/request", &json!({"method": "initialize"}));
    assert_eq!(code, 400, "{body}");
    let big = format!(
        r#"{{"method":"ping","params":{{"x":"{}"}}}}"#,
        "a".repeat(2 << 20)
    );
    let json = [("Content-Type", "application/json")];
    assert_eq!(http(&authority, "POST", &request, &json, Some(&big)).0, 413);
    let (code, _) = inspector.post("api/answer", &json!({"id": 99, "result": {}}));
    assert_eq!(code, 409);
}

#[test]
fn an_oversized_event_dropped_from_the_get_stream_shows_in_the_event_log() {
    let port = hostile_http::listen(10_000, hostile_http::serve);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let inspector = Inspector::start(&[
        "--era",
        "stateful",
        "--transport",
        "streamable",
        "--max-frame",
        "4096",
        &url,
    ]);
    let state = inspector.wait_connected(Duration::from_secs(20));
    assert_eq!(state["status"], "connected", "{state}");
    // The client's own warning, as a line of the page's event log.
    let wanted = "warning: dropped 1 event(s) of the standalone GET stream over the 4 KiB size \
                  limit (--max-frame)";
    let shown = |records: &[Value]| {
        records.iter().any(|r| {
            r["event"] == "transport"
                && r["data"]["text"]
                    .as_str()
                    .is_some_and(|text| text.starts_with(wanted))
        })
    };
    let until = Instant::now() + Duration::from_secs(20);
    let mut records = feed_records(&inspector, Duration::from_millis(300));
    while !shown(&records) && Instant::now() < until {
        records = feed_records(&inspector, Duration::from_millis(300));
    }
    assert!(shown(&records), "no oversized-event record in {records:?}");
}
