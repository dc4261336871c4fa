//! The reference server's 2026-07-28 additions (docs/fixture.md, "2026-07-28"): the
//! multi-round-trip tools (`test_input_required_result_*` and the prompt), the server-stateless
//! diagnostic tools, and the process-wide `requestState` key. Every tool also works in a
//! stateful session, where its inputs are ordinary server→client requests.

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use mcp_sansio::app::server::{
    CallToolResult, GetPromptResult, PeerError, Prompt, RequestContext, Tool,
};
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::model::stateless::InputRequest;
use mcp_sansio::model::LoggingLevel;
use mcp_sansio::stateless::{ReplayGuard, RequestStateKey};
use serde_json::{json, Value};

/// How long a minted `requestState` stays valid.
const STATE_TTL_MS: u64 = 10 * 60 * 1000;

/// The key of every `requestState` this process mints, unless [`share_state_key`] set one.
static KEY: OnceLock<[u8; 32]> = OnceLock::new();

/// Uses `key` (the instances' shared secret) for every `requestState` from now on, so that a
/// retry served by another instance verifies. Only before the first state is minted.
pub(crate) fn share_state_key(key: [u8; 32]) {
    let _ = KEY.set(key);
}

/// The key of every `requestState` this process mints: the shared one, or random, drawn
/// once, so that a retry served by another HTTP exchange (another machine) verifies.
pub(crate) fn state_key() -> RequestStateKey {
    let key = KEY.get_or_init(|| {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the OS random source is available");
        key
    });
    RequestStateKey::new(key.to_vec(), STATE_TTL_MS)
}

/// Redemptions of unexpired states the process remembers at most (a state lives
/// [`STATE_TTL_MS`]): room for about 100 redemptions a second.
const MAX_REDEMPTIONS: usize = 64 * 1024;

/// The process-wide single-use guard of `requestState`: shared by every machine (each HTTP
/// exchange is one), so a state redeemed once is refused everywhere after.
pub(crate) fn replay_guard() -> ReplayGuard {
    static GUARD: OnceLock<ReplayGuard> = OnceLock::new();
    GUARD
        .get_or_init(|| ReplayGuard::new(MAX_REDEMPTIONS))
        .clone()
}

/// The wall clock now, in Unix milliseconds (for `requestState` expiry).
pub(crate) fn unix_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

fn no_input() -> Value {
    json!({"type": "object", "properties": {}})
}

fn elicitation(message: &str, schema: Value) -> InputRequest {
    InputRequest {
        method: "elicitation/create".into(),
        params: Some(json!({"message": message, "requestedSchema": schema})),
        extra: Default::default(),
    }
}

fn sampling(text: &str, max_tokens: u32) -> InputRequest {
    InputRequest {
        method: "sampling/createMessage".into(),
        params: Some(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
            "maxTokens": max_tokens,
        })),
        extra: Default::default(),
    }
}

fn object_schema(property: &str, kind: &str) -> Value {
    json!({"type": "object", "properties": {property: {"type": kind}}, "required": [property]})
}

fn failed(e: PeerError) -> ErrorObject {
    ErrorObject::internal(format!("input failed: {e}"))
}

/// The accepted content of an elicitation answer, or a JSON-RPC error.
fn accepted(answer: &Value) -> Result<&Value, ErrorObject> {
    match answer["action"].as_str() {
        Some("accept") => Ok(&answer["content"]),
        other => Err(ErrorObject::invalid_params(format!(
            "elicitation not accepted: {}",
            other.unwrap_or("no action")
        ))),
    }
}

async fn ask_name(ctx: &RequestContext) -> Result<String, ErrorObject> {
    let request = elicitation("What is your name?", object_schema("name", "string"));
    let answer = ctx.input("user_name", request).await.map_err(failed)?;
    let name = accepted(&answer)?["name"].as_str();
    name.map(str::to_owned)
        .ok_or_else(|| ErrorObject::invalid_params("user_name: name must be a string"))
}

/// The `test_input_required_result_*` tools.
pub(crate) fn input_required_tools() -> Vec<Tool> {
    vec![
        Tool::new("test_input_required_result_elicitation", no_input())
            .description("Asks the user's name (input required), then greets them")
            .handler(|_call, ctx| async move {
                let name = ask_name(&ctx).await?;
                Ok(CallToolResult::text(format!("Hello, {name}!")))
            }),
        Tool::new("test_input_required_result_sampling", no_input())
            .description("Asks the client's model a question (input required)")
            .handler(|_call, ctx| async move {
                let request = sampling("What is the capital of France?", 100);
                let answer = ctx
                    .input("capital_question", request)
                    .await
                    .map_err(failed)?;
                let text = answer["content"]["text"].as_str().unwrap_or("").to_owned();
                Ok(CallToolResult::text(format!("The model answered: {text}")))
            }),
        Tool::new("test_input_required_result_list_roots", no_input())
            .description("Asks the client's roots (input required)")
            .handler(|_call, ctx| async move {
                let request = InputRequest::list_roots();
                let answer = ctx.input("client_roots", request).await.map_err(failed)?;
                Ok(CallToolResult::text(format!(
                    "Client roots: {}",
                    answer["roots"]
                )))
            }),
        Tool::new("test_input_required_result_request_state", no_input())
            .description("Asks a confirmation; the retry's requestState is verified")
            .handler(|_call, ctx| async move {
                let request = elicitation("Please confirm", object_schema("ok", "boolean"));
                let answer = ctx.input("confirm", request).await.map_err(failed)?;
                let ok = accepted(&answer)?["ok"].as_bool().unwrap_or(false);
                Ok(CallToolResult::text(format!("state-ok (confirmed: {ok})")))
            }),
        Tool::new("test_input_required_result_multiple_inputs", no_input())
            .description("Asks an elicitation, a sampling and the roots in one round")
            .handler(|_call, ctx| async move {
                let name = ctx.input(
                    "user_name",
                    elicitation("What is your name?", object_schema("name", "string")),
                );
                let greeting = ctx.input("greeting", sampling("Write a short greeting.", 50));
                let roots = ctx.input("client_roots", InputRequest::list_roots());
                let (name, (greeting, roots)) =
                    smol::future::zip(name, smol::future::zip(greeting, roots)).await;
                let (name, greeting, roots) = (
                    name.map_err(failed)?,
                    greeting.map_err(failed)?,
                    roots.map_err(failed)?,
                );
                Ok(CallToolResult::text(format!(
                    "name={} greeting={} roots={}",
                    accepted(&name)?["name"],
                    greeting["content"]["text"],
                    roots["roots"]
                )))
            }),
        Tool::new("test_input_required_result_multi_round", no_input())
            .description("Asks two questions in two rounds")
            .handler(|_call, ctx| async move {
                let step1 = elicitation(
                    "Step 1: What is your name?",
                    object_schema("name", "string"),
                );
                let name = ctx.input("step1", step1).await.map_err(failed)?;
                let step2 = elicitation(
                    "Step 2: What is your favorite color?",
                    object_schema("color", "string"),
                );
                let color = ctx.input("step2", step2).await.map_err(failed)?;
                Ok(CallToolResult::text(format!(
                    "{} likes {}",
                    accepted(&name)?["name"],
                    accepted(&color)?["color"]
                )))
            }),
        Tool::new("test_input_required_result_tampered_state", no_input())
            .description("Asks a confirmation; a tampered requestState is refused")
            .handler(|_call, ctx| async move {
                let request = elicitation("Please confirm", object_schema("ok", "boolean"));
                ctx.input("confirm", request).await.map_err(failed)?;
                Ok(CallToolResult::text("state verified"))
            }),
        Tool::new("test_input_required_result_capabilities", no_input())
            .description("Asks only what the client declared it can answer")
            .handler(|_call, ctx| async move {
                let elicits = ctx
                    .client_capabilities()
                    .is_none_or(|c| c.elicitation.is_some());
                let answer = if elicits {
                    let request = elicitation("Please confirm", object_schema("ok", "boolean"));
                    ctx.input("confirm", request).await
                } else {
                    ctx.input("question", sampling("Say yes.", 10)).await
                };
                answer.map_err(failed)?;
                Ok(CallToolResult::text("answered"))
            }),
    ]
}

/// The server-stateless diagnostic tools.
pub(crate) fn diagnostic_tools() -> Vec<Tool> {
    vec![
        Tool::new("test_missing_capability", no_input())
            .description("Needs the sampling capability (-32021 without it)")
            .handler(|_call, ctx| async move {
                let answer = ctx.input("sample", sampling("Say hi.", 10)).await;
                Ok(match answer {
                    Ok(a) => CallToolResult::text(format!("sampled: {}", a["content"]["text"])),
                    Err(e) => CallToolResult::error(format!("Sampling failed: {e}")),
                })
            }),
        Tool::new("test_streaming_elicitation", no_input())
            .description("Elicits through an input-required result, never a request")
            .handler(|_call, ctx| async move {
                let name = ask_name(&ctx).await?;
                Ok(CallToolResult::text(format!("Hello, {name}!")))
            }),
        Tool::new("test_logging_tool", no_input())
            .description("Logs one message at info (sent only if the request asked for logs)")
            .sync_handler(|_call, ctx| {
                ctx.log(
                    LoggingLevel::Info,
                    Some("test_logging_tool"),
                    json!("logging tool ran"),
                );
                Ok(CallToolResult::text("Logging tool completed"))
            }),
        Tool::new(
            "test_x_mcp_header",
            json!({
                "type": "object",
                "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
                "required": ["region"],
            }),
        )
        .description("Echoes its region, which HTTP clients mirror into Mcp-Param-Region")
        .sync_handler(|call, _ctx| {
            let region = call.arguments.get("region").and_then(Value::as_str);
            Ok(CallToolResult::text(format!(
                "region: {}",
                region.unwrap_or("(none)")
            )))
        }),
        Tool::new("test_trigger_tool_change", no_input())
            .description("Registers a tool (tools/list_changed to listeners)")
            .sync_handler(|_call, ctx| {
                ctx.server()
                    .add_tool(
                        Tool::new("test_triggered_tool", no_input())
                            .description("Added by test_trigger_tool_change")
                            .sync_handler(|_c, _x| Ok(CallToolResult::text("triggered"))),
                    )
                    .map_err(|e| ErrorObject::internal(e.to_string()))?;
                Ok(CallToolResult::text("Tool list changed"))
            }),
        Tool::new("test_trigger_prompt_change", no_input())
            .description("Registers a prompt (prompts/list_changed to listeners)")
            .sync_handler(|_call, ctx| {
                ctx.server().add_prompt(
                    Prompt::new("test_triggered_prompt")
                        .description("Added by test_trigger_prompt_change")
                        .sync_handler(|_r, _x| Ok(GetPromptResult::user_text("triggered"))),
                );
                Ok(CallToolResult::text("Prompt list changed"))
            }),
    ]
}

/// `test_input_required_result_prompt`: a prompt that asks for context first.
pub(crate) fn input_required_prompt() -> Prompt {
    Prompt::new("test_input_required_result_prompt")
        .description("Asks what context to use (input required), then renders it")
        .handler(|_req, ctx| async move {
            let request = elicitation(
                "What context should the prompt use?",
                object_schema("context", "string"),
            );
            let answer = ctx.input("user_context", request).await.map_err(failed)?;
            let context = accepted(&answer)?["context"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            Ok(GetPromptResult::user_text(format!(
                "Use this context: {context}"
            )))
        })
}
