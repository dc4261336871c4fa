//! `mcp-sansio conformance-client URL`: the client side of the official conformance suite
//! (`conformance client --command 'mcp-sansio conformance-client'`). The suite starts a mock
//! server, appends its URL and names the scenario in `MCP_CONFORMANCE_SCENARIO`; we do what
//! the scenario asks over Streamable HTTP and exit 0, or print why not and exit 1. The
//! `auth/*` scenarios run the same calls with OAuth on (see `conformance_auth`).

use std::time::Duration;

use mcp_sansio::app::client::{Client, ClientError, ClientHandle};
use mcp_sansio::model::Implementation;
use mcp_sansio_http::client::{connect_http_client, HttpClientOptions};
use serde_json::json;

use crate::client_cmd::{client_config, report_event};
use crate::client_http::report_transport_event;
use crate::conformance_auth::{self, AUTH_SCENARIOS};
use crate::Failure;

/// Every request of a scenario gets at most this long.
const TIMEOUT: Duration = Duration::from_secs(20);

/// The scenarios this client knows (the core client scenarios of conformance 0.1.16).
pub(crate) const SCENARIOS: [&str; 4] = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
];

/// Runs the scenario named by `MCP_CONFORMANCE_SCENARIO` against `url`.
pub(crate) fn run(url: &str) -> Result<(), Failure> {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").map_err(|_| {
        Failure::Usage("MCP_CONFORMANCE_SCENARIO is not set (the conformance suite sets it)".into())
    })?;
    // The suite names the revision under test; 2026-07-28 is stateless end to end.
    if std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").as_deref() == Ok("2026-07-28") {
        return crate::conformance_stateless::run(url, &scenario);
    }
    let auth = AUTH_SCENARIOS.contains(&scenario.as_str());
    if !SCENARIOS.contains(&scenario.as_str()) && !auth {
        return Err(Failure::Failed(format!(
            "scenario `{scenario}` is not supported (known: {}, auth/*)",
            SCENARIOS.join(", ")
        )));
    }
    let options = HttpClientOptions {
        authorization: auth
            .then(|| conformance_auth::authorization(&scenario, url))
            .transpose()?,
        ..HttpClientOptions::default()
    };
    // The form-mode elicitation handler fills the schema's defaults (SEP-1034).
    let builder = Client::builder(Implementation::new("mcp-sansio", env!("CARGO_PKG_VERSION")))
        .config(client_config(TIMEOUT))
        .elicitation_with_defaults();
    let client = connect_http_client(url, builder, options)
        .map_err(|e| Failure::Usage(e.to_string()))?
        .on_event(report_event)
        .on_transport_event(report_transport_event);
    let handle = client.handle();
    let (outcome, _report) = client
        .block_on(scenario_steps(handle, scenario.clone()))
        .map_err(|e| Failure::Failed(format!("driving the HTTP client failed: {e}")))?;
    outcome.map_err(|e| Failure::Failed(format!("scenario {scenario}: {e}")))
}

/// The calls of one scenario.
async fn scenario_steps(handle: ClientHandle, scenario: String) -> Result<(), String> {
    let fail = |step: &str, e: ClientError| format!("{step}: {e}");
    handle
        .initialize()
        .await
        .map_err(|e| fail("initialize", e))?;
    let tool = match scenario.as_str() {
        "tools_call" => Some(("add_numbers", json!({"a": 5, "b": 3}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", json!({})))
        }
        "sse-retry" => Some(("test_reconnection", json!({}))),
        // The auth scenarios' mock server has one tool.
        auth if auth.starts_with("auth/") => Some(("test-tool", json!({}))),
        _ => None,
    };
    let Some((name, arguments)) = tool else {
        return Ok(());
    };
    let tools = handle
        .list_all_tools()
        .await
        .map_err(|e| fail("tools/list", e))?;
    if !tools.iter().any(|t| t.name == name) {
        return Err(format!("the server does not list the tool `{name}`"));
    }
    let result = handle
        .call_tool(name, arguments)
        .await
        .map_err(|e| fail("tools/call", e))?;
    if result.is_error == Some(true) {
        return Err(format!("the tool `{name}` reported an error: {result:?}"));
    }
    eprintln!("conformance-client: {scenario}: {name} answered");
    Ok(())
}
