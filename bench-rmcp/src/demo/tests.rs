//! Both example servers list `add` and `echo` and answer `add` with `{"result": 5}`, and
//! docs/app-api.md shows their code as it is.

use std::time::Instant;

use bytes::Bytes;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::ServiceExt;
use serde_json::{json, Value};

const PAGE: &str = include_str!("../../../docs/app-api.md");

#[test]
fn ours_lists_its_tools_and_adds() {
    let now = Instant::now();
    let mut server = mcp_sansio_examples::demo_server("demo", now);
    let requests = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#,
    ];
    let mut answers = Vec::new();
    for request in requests {
        server.handle_input(now, Bytes::from_static(request.as_bytes()));
        let mut buf = Vec::new();
        while server.poll_transmit(&mut buf).is_some() {
            answers.push(serde_json::from_slice::<Value>(&buf).expect("JSON"));
            buf.clear();
        }
    }
    let result = |id: i64| match answers.iter().find(|a| a["id"] == id) {
        Some(answer) => answer["result"].clone(),
        None => panic!("no answer to {id}: {answers:?}"),
    };
    assert_eq!(result(1)["serverInfo"]["name"], "demo");
    let tools = result(2)["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(names, ["add", "echo"]);
    assert_eq!(tools[0]["description"], "Adds two integers.");
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(result(3)["structuredContent"], json!({"result": 5}));
}

#[test]
fn rmcp_lists_its_tools_and_adds() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let (server_io, client_io) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move {
            let server = super::demo_server("demo").serve(server_io).await;
            let _ = server.expect("server handshake").waiting().await;
        });
        let client = ().serve(client_io).await.expect("client handshake");
        let mut names: Vec<String> = (client.list_all_tools().await.expect("tools/list"))
            .into_iter()
            .map(|tool| tool.name.into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["add", "echo"]);
        let mut args = JsonObject::new();
        args.insert("a".into(), 2.into());
        args.insert("b".into(), 3.into());
        let params = CallToolRequestParams::new("add").with_arguments(args);
        let result = client.call_tool(params).await.expect("tools/call");
        assert_eq!(result.structured_content, Some(json!({"result": 5})));
        client.cancel().await.expect("close");
    });
}

/// The text of the `rust` block that follows `<!-- listing: NAME -->` on the page.
fn shown(name: &str) -> &'static str {
    let marker = format!("<!-- listing: {name} -->\n```rust\n");
    let start = PAGE.find(&marker).unwrap_or_else(|| panic!("no {marker}")) + marker.len();
    let len = PAGE[start..].find("```").expect("end of the block");
    &PAGE[start..start + len]
}

#[test]
fn the_page_shows_the_examples_code() {
    let ours = shown("ours");
    assert!(ours.contains("Tool::typed::<AddArgs>"), "{ours}");
    assert!(
        include_str!("../../../examples/src/lib.rs").contains(ours),
        "docs/app-api.md's `ours` block is not a part of examples/src/lib.rs"
    );
    let source = include_str!("mod.rs");
    let begin = "// listing begin: rmcp\n";
    let start = source.find(begin).expect("begin marker") + begin.len();
    let len = source[start..].find("// listing end").expect("end marker");
    assert_eq!(
        shown("rmcp"),
        &source[start..start + len],
        "docs/app-api.md's `rmcp` block is not src/demo/mod.rs"
    );
}
