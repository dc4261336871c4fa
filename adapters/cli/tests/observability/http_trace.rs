//! `mcp-sansio serve --http --trace-file` and `client URL --trace-file`: both sides of a
//! Streamable HTTP conversation, each frame once and in order, with the status lines and the
//! MCP headers (`Mcp-Session-Id`, `MCP-Protocol-Version`) of each exchange.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::http_fixture;

use http_fixture::HttpFixture;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-sansio");

fn records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("trace file");
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// `(dir, method or "response ID")` of each frame record, in order.
fn frames(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .filter(|r| r.get("message").is_some())
        .map(|r| {
            let m = &r["message"];
            let what = match m["method"].as_str() {
                Some(method) => method.to_owned(),
                None => format!("response {}", m["id"]),
            };
            format!("{} {what}", r["dir"].as_str().unwrap_or_default())
        })
        .collect()
}

/// The HTTP heads: `(dir, start line, header names in lower case)`.
fn heads(records: &[Value]) -> Vec<(String, String, Vec<String>)> {
    records
        .iter()
        .filter_map(|r| {
            let http = r.get("http")?;
            let names = http["headers"]
                .as_object()
                .map(|h| h.keys().map(|k| k.to_ascii_lowercase()).collect())
                .unwrap_or_default();
            Some((
                r["dir"].as_str()?.to_owned(),
                http["start"].as_str()?.to_owned(),
                names,
            ))
        })
        .collect()
}

/// Runs `client URL --era stateful --trace-file … OP` against `serve --http --trace-file …`
/// (stopped gracefully after), and hands back both traces: (client, server).
fn traced(tag: &str, op: &[&str]) -> (Vec<Value>, Vec<Value>) {
    let dir = std::env::temp_dir().join(format!("mcp-sansio-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let server_file = dir.join("server.jsonl");
    let client_file = dir.join("client.jsonl");
    let path = server_file.to_str().expect("utf-8 path");
    let server = HttpFixture::start_with(&["--trace-file", path], &[]);
    let out = Command::new(BIN)
        .args([
            "client",
            &server.url,
            "--era",
            "stateful",
            "--timeout",
            "30",
        ])
        .arg("--trace-file")
        .arg(&client_file)
        .args(op)
        .output()
        .expect("run client");
    server.terminate();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let traces = (records(&client_file), records(&server_file));
    let _ = std::fs::remove_dir_all(&dir);
    traces
}

#[test]
fn both_sides_of_an_http_conversation_are_traced() {
    let (client, served) = traced("http-trace", &["tools", "list"]);

    let want_client = [
        "send initialize",
        "recv response 0",
        "send notifications/initialized",
        "send tools/list",
        "recv response 1",
    ];
    assert_eq!(frames(&client), want_client, "{client:#?}");
    let want_server = [
        "recv initialize",
        "send response 0",
        "recv notifications/initialized",
        "recv tools/list",
        "send response 1",
    ];
    assert_eq!(frames(&served), want_server, "{served:#?}");

    // The client's first POST carries no session; the answer names one; the next POSTs
    // carry it and the negotiated version.
    let client_heads = heads(&client);
    let (dir0, start0, names0) = &client_heads[0];
    assert_eq!((dir0.as_str(), start0.as_str()), ("send", "POST /mcp"));
    assert!(
        !names0.contains(&"mcp-session-id".to_owned()),
        "{client_heads:?}"
    );
    let (dir1, start1, names1) = &client_heads[1];
    assert_eq!(
        (dir1.as_str(), start1.as_str()),
        ("recv", "HTTP/1.1 200 OK")
    );
    assert!(
        names1.contains(&"mcp-session-id".to_owned()),
        "{client_heads:?}"
    );
    let later = client_heads
        .iter()
        .skip(2)
        .find(|(d, s, _)| d == "send" && s == "POST /mcp")
        .expect("a second POST");
    for name in ["mcp-session-id", "mcp-protocol-version"] {
        assert!(later.2.contains(&name.to_owned()), "{client_heads:?}");
    }
    // The server saw the same exchanges from its side.
    let server_heads = heads(&served);
    assert_eq!(
        (server_heads[0].0.as_str(), server_heads[0].1.as_str()),
        ("recv", "POST /mcp")
    );
    assert_eq!(
        (server_heads[1].0.as_str(), server_heads[1].1.as_str()),
        ("send", "HTTP/1.1 200 OK")
    );
    assert!(server_heads[1].2.contains(&"mcp-session-id".to_owned()));
    for record in client.iter().chain(&served) {
        if record.get("message").is_some() {
            assert_eq!(record["transport"], "http", "{record}");
        }
    }
}

/// The SSE event ids of `records`, in order.
fn sse_ids(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .filter_map(|r| r.get("sse")?["id"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn an_sse_answer_shows_each_event_id_before_its_frame_on_both_sides() {
    // The tool logs three messages while it runs: the answer to its POST is an SSE stream.
    let (client, served) = traced("sse-trace", &["tools", "call", "test_tool_with_logging"]);

    // Seen from the client: the three log notifications, then the answer, each frame right
    // after the event id that carried it.
    let after_call: Vec<&Value> = client
        .iter()
        .skip_while(|r| r["message"]["method"] != "tools/call")
        .collect();
    let frames: Vec<String> = after_call
        .iter()
        .filter(|r| r.get("message").is_some() && r["dir"] == "recv")
        .map(|r| {
            r["message"]["method"]
                .as_str()
                .map_or_else(|| format!("response {}", r["message"]["id"]), str::to_owned)
        })
        .collect();
    assert_eq!(
        frames,
        [
            "notifications/message",
            "notifications/message",
            "notifications/message",
            "response 1"
        ],
        "{client:#?}"
    );
    for pair in after_call.windows(2) {
        if pair[1].get("message").is_some() && pair[1]["dir"] == "recv" {
            assert!(pair[0].get("sse").is_some(), "{pair:#?}");
        }
    }
    // The server wrote the same event ids the client read, in the same order.
    let ids = sse_ids(&after_call.into_iter().cloned().collect::<Vec<_>>());
    assert!(ids.len() >= 4, "{client:#?}");
    let served_after: Vec<Value> = served
        .iter()
        .skip_while(|r| r["message"]["method"] != "tools/call")
        .cloned()
        .collect();
    assert_eq!(sse_ids(&served_after), ids, "{served:#?}");
}
