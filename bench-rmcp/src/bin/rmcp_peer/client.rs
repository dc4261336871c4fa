//! The rmcp client side of the interop peer: connects in the chosen era (rmcp's
//! `ClientLifecycleMode`), lists tools, prompts and resources, runs the requested calls, and
//! prints every outcome as one JSON line on stdout for the tests to assert on. What the server
//! asks of the client (roots, elicitation, sampling; input-required rounds) is answered by
//! [`PeerClient`].

use rmcp::model::{
    CallToolRequestParams, ClientConfig, GetPromptRequestParams, Implementation, JsonObject,
    ProtocolVersion, ReadResourceRequestParams,
};
use rmcp::service::RunningService;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{json, Value};

use crate::answers::{capabilities, PeerClient};

/// How the client starts its lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// `initialize` with the requested version (2025-11-25 by default).
    Stateful,
    /// `server/discover`, then stateless 2026-07-28 requests; no fallback.
    Stateless,
    /// `server/discover`, falling back to `initialize` when the server is stateful.
    Auto,
}

/// One request to make after the listings.
#[derive(Clone, Debug)]
pub enum Op {
    /// `tools/call NAME` with these arguments.
    Call(String, JsonObject),
    /// `prompts/get NAME` with these (string) arguments.
    Prompt(String, JsonObject),
    /// `resources/read URI`.
    Read(String),
}

/// Everything the client run needs.
pub struct ClientPlan {
    pub era: Era,
    /// The version `initialize` asks for (stateful and auto's fallback).
    pub version: ProtocolVersion,
    pub ops: Vec<Op>,
}

type Client = RunningService<RoleClient, PeerClient>;

/// Prints one JSON line; a closed stdout ends the run as a failure, not a panic.
fn emit(line: Value) -> Result<(), String> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}")
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("write stdout: {e}"))
}

fn lifecycle(plan: &ClientPlan) -> ClientLifecycleMode {
    let stateless = vec![ProtocolVersion::V_2026_07_28];
    match plan.era {
        Era::Stateful => ClientLifecycleMode::Initialize,
        Era::Stateless => ClientLifecycleMode::Discover {
            preferred_versions: stateless,
        },
        Era::Auto => ClientLifecycleMode::Auto {
            preferred_versions: stateless,
            legacy_version: Some(plan.version.clone()),
        },
    }
}

fn client(plan: &ClientPlan) -> PeerClient {
    let config = ClientConfig::new(
        capabilities(),
        Implementation::new("rmcp-peer-client", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(plan.version.clone());
    PeerClient { config }
}

/// Connects over `transport` and runs the plan; `Err` names the step that failed.
pub async fn run<T, E, A>(plan: &ClientPlan, transport: T) -> Result<(), String>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let client = client(plan)
        .serve_with_lifecycle(transport, lifecycle(plan))
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let outcome = session(&client, plan).await;
    let _ = client.cancel().await;
    outcome
}

async fn session(client: &Client, plan: &ClientPlan) -> Result<(), String> {
    let info = client.peer_info().ok_or("connected without server info")?;
    emit(json!({
        "event": "connected",
        "protocolVersion": info.protocol_version.to_string(),
        "serverInfo": info.server_info,
    }))?;
    let tools = client
        .list_all_tools()
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    emit(json!({"event": "tools", "names": names}))?;
    if info.capabilities.prompts.is_some() {
        let prompts = client
            .list_all_prompts()
            .await
            .map_err(|e| format!("prompts/list: {e}"))?;
        let names: Vec<_> = prompts.iter().map(|p| p.name.to_string()).collect();
        emit(json!({"event": "prompts", "names": names}))?;
    }
    if info.capabilities.resources.is_some() {
        let resources = client
            .list_all_resources()
            .await
            .map_err(|e| format!("resources/list: {e}"))?;
        let uris: Vec<_> = resources.iter().map(|r| r.uri.to_string()).collect();
        emit(json!({"event": "resources", "uris": uris}))?;
    }
    for op in &plan.ops {
        run_op(client, op).await?;
    }
    emit(json!({"event": "done"}))?;
    Ok(())
}

async fn run_op(client: &Client, op: &Op) -> Result<(), String> {
    match op {
        Op::Call(name, args) => {
            let params = CallToolRequestParams::new(name.clone()).with_arguments(args.clone());
            let result = client
                .call_tool(params)
                .await
                .map_err(|e| format!("tools/call {name}: {e}"))?;
            emit(json!({"event": "call", "name": name, "result": result}))?;
        }
        Op::Prompt(name, args) => {
            let params = GetPromptRequestParams::new(name.clone()).with_arguments(args.clone());
            let result = client
                .get_prompt(params)
                .await
                .map_err(|e| format!("prompts/get {name}: {e}"))?;
            emit(json!({"event": "prompt", "name": name, "result": result}))?;
        }
        Op::Read(uri) => {
            let params = ReadResourceRequestParams::new(uri.clone());
            let result = client
                .read_resource(params)
                .await
                .map_err(|e| format!("resources/read {uri}: {e}"))?;
            emit(json!({"event": "read", "uri": uri, "result": result}))?;
        }
    }
    Ok(())
}

/// Runs the plan against a server child process (`command`, stdio).
pub async fn run_stdio(plan: &ClientPlan, command: &[String]) -> Result<(), String> {
    use rmcp::transport::TokioChildProcess;
    let (program, args) = command.split_first().ok_or("no server command after --")?;
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args);
    let transport =
        TokioChildProcess::new(cmd).map_err(|e| format!("spawn server {program}: {e}"))?;
    run(plan, transport).await
}

/// Runs the plan against the Streamable HTTP endpoint at `url`.
#[cfg(feature = "peer-http")]
pub async fn run_http(plan: &ClientPlan, url: &str) -> Result<(), String> {
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_owned());
    run(plan, transport).await
}
