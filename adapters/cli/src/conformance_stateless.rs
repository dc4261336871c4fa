//! `mcp-sansio conformance-client` at 2026-07-28 (`MCP_CONFORMANCE_PROTOCOL_VERSION`): the
//! stateless client scenarios of conformance 0.2.0-alpha.12, driven by the core's
//! [`StatelessClient`] in the HTTP adapter's machine. Each scenario only chooses which calls to make; every header,
//! `_meta` field, retry and input round is the core's.

use std::time::Duration;

use mcp_sansio::app::client::stateless::StatelessClient;
use mcp_sansio::app::client::Client;
use mcp_sansio::app::client::ClientError;
use mcp_sansio::model::Implementation;
use mcp_sansio_http::client::{block_on_stateless_http, HttpClientOptions, StatelessHttp};
use serde_json::{json, Map, Value};

use crate::Failure;

/// Every attempt of a scenario gets at most this long.
const TIMEOUT: Duration = Duration::from_secs(20);

/// The stateless scenarios this client knows.
pub(crate) const SCENARIOS: [&str; 7] = [
    "tools_call",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
];

/// Runs `scenario` against the mock at `url`.
pub(crate) fn run(url: &str, scenario: &str) -> Result<(), Failure> {
    let auth = scenario.starts_with("auth/");
    if !SCENARIOS.contains(&scenario) && !auth {
        return Err(Failure::Failed(format!(
            "2026-07-28 scenario `{scenario}` is not supported (known: {}, auth/*)",
            SCENARIOS.join(", ")
        )));
    }
    // The OAuth settings are those of the 0.1.16 scenarios; later ones get the defaults.
    let authorization = if auth {
        Some(crate::conformance_auth::authorization(scenario, url)?)
    } else {
        None
    };
    let options = HttpClientOptions {
        authorization,
        ..HttpClientOptions::default()
    };
    let builder = Client::builder(Implementation::new("mcp-sansio", env!("CARGO_PKG_VERSION")))
        .elicitation_with_defaults();
    let client = StatelessClient::new(&builder);
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT").ok();
    let outcome = block_on_stateless_http(url, &options, client, TIMEOUT, |mut wire| async move {
        steps(&mut wire, scenario, context.as_deref()).await
    })
    .map_err(|e| Failure::Usage(e.to_string()))?;
    outcome.map_err(|e| Failure::Failed(format!("scenario {scenario}: {e}")))
}

/// The calls of one scenario.
async fn steps(
    wire: &mut StatelessHttp,
    scenario: &str,
    context: Option<&str>,
) -> Result<(), String> {
    let fail = |step: &str, e: ClientError| format!("{step}: {e}");
    match scenario {
        "request-metadata" => {
            wire.request("server/discover", None)
                .await
                .map_err(|e| fail("server/discover", e))?;
            wire.request("tools/list", None)
                .await
                .map_err(|e| fail("tools/list", e))?;
        }
        "json-schema-ref-no-deref" => {
            // The schema is data: its `$ref`s are never fetched.
            wire.list_all_tools()
                .await
                .map_err(|e| fail("tools/list", e))?;
        }
        "tools_call" => {
            call_listed(wire, "add_numbers", json!({"a": 5, "b": 3})).await?;
        }
        // The auth scenarios' mock server has one tool; every request carries the token.
        auth if auth.starts_with("auth/") => {
            call_listed(wire, "test-tool", json!({})).await?;
        }
        "sep-2322-client-request-state" => {
            for tool in [
                "test_mrtr_echo_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_state",
                "test_mrtr_no_result_type",
            ] {
                call_listed(wire, tool, json!({})).await?;
            }
        }
        "http-standard-headers" => standard_headers(wire).await?,
        "http-custom-headers" => {
            let calls = context_calls(context)?;
            wire.list_all_tools()
                .await
                .map_err(|e| fail("tools/list", e))?;
            for (name, arguments) in calls {
                call(wire, &name, arguments).await?;
            }
        }
        "http-invalid-tool-headers" => {
            // Tools with invalid annotations are gone from the listing; call what is left.
            let tools = wire
                .list_all_tools()
                .await
                .map_err(|e| fail("tools/list", e))?;
            for tool in &tools {
                let name = tool["name"].as_str().unwrap_or("");
                call(wire, name, sample_arguments(&tool["inputSchema"])).await?;
            }
        }
        _ => unreachable!("checked against SCENARIOS"),
    }
    eprintln!("conformance-client: {scenario} done");
    Ok(())
}

/// Lists the tools, checks `name` is there, calls it.
async fn call_listed(wire: &mut StatelessHttp, name: &str, arguments: Value) -> Result<(), String> {
    if !wire.machine().client().knows_tool(name) {
        wire.list_all_tools()
            .await
            .map_err(|e| format!("tools/list: {e}"))?;
    }
    if !wire.machine().client().knows_tool(name) {
        return Err(format!("the server does not list the tool `{name}`"));
    }
    call(wire, name, arguments).await
}

async fn call(wire: &mut StatelessHttp, name: &str, arguments: Value) -> Result<(), String> {
    let params = json!({"name": name, "arguments": arguments});
    let result = wire
        .request("tools/call", Some(params))
        .await
        .map_err(|e| format!("tools/call {name}: {e}"))?;
    if result.get("isError") == Some(&Value::Bool(true)) {
        return Err(format!("the tool `{name}` reported an error: {result}"));
    }
    eprintln!("conformance-client: {name} answered");
    Ok(())
}

/// Every request kind that carries `Mcp-Method`, and the three that carry `Mcp-Name`.
async fn standard_headers(wire: &mut StatelessHttp) -> Result<(), String> {
    let fail = |step: &str, e: ClientError| format!("{step}: {e}");
    let tools = wire
        .list_all_tools()
        .await
        .map_err(|e| fail("tools/list", e))?;
    for tool in &tools {
        let name = tool["name"].as_str().unwrap_or("");
        call(wire, name, json!({})).await?;
    }
    let resources = wire
        .request("resources/list", None)
        .await
        .map_err(|e| fail("resources/list", e))?;
    if let Some(uri) = resources["resources"][0]["uri"].as_str() {
        wire.request("resources/read", Some(json!({"uri": uri})))
            .await
            .map_err(|e| fail("resources/read", e))?;
    }
    let prompts = wire
        .request("prompts/list", None)
        .await
        .map_err(|e| fail("prompts/list", e))?;
    if let Some(name) = prompts["prompts"][0]["name"].as_str() {
        wire.request("prompts/get", Some(json!({"name": name})))
            .await
            .map_err(|e| fail("prompts/get", e))?;
    }
    Ok(())
}

/// The calls `MCP_CONFORMANCE_CONTEXT.toolCalls` prescribes.
fn context_calls(context: Option<&str>) -> Result<Vec<(String, Value)>, String> {
    let context: Value = serde_json::from_str(context.ok_or("MCP_CONFORMANCE_CONTEXT is not set")?)
        .map_err(|e| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}"))?;
    let calls = context["toolCalls"]
        .as_array()
        .ok_or("MCP_CONFORMANCE_CONTEXT has no toolCalls")?;
    Ok(calls
        .iter()
        .map(|c| {
            let name = c["name"].as_str().unwrap_or("").to_owned();
            let arguments = c.get("arguments").cloned().unwrap_or_else(|| json!({}));
            (name, arguments)
        })
        .collect())
}

/// Arguments for a tool's required properties: a placeholder of each declared type.
fn sample_arguments(schema: &Value) -> Value {
    let mut arguments = Map::new();
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        let value = match schema["properties"][name]["type"].as_str() {
            Some("integer" | "number") => json!(1),
            Some("boolean") => json!(true),
            _ => json!("us-east-1"),
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
}
