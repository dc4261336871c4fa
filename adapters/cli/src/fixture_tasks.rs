//! The reference server's tasks-extension tools (the conformance suite's `tasks-*` scenarios,
//! SEP-2663): `greet` (sync only), `slow_compute`, `failing_job` (task required),
//! `protocol_error_job`, `confirm_delete`, `multi_input` and `test_tool_with_task` (task
//! required), and the process-wide task table every exchange machine shares.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_sansio::app::server::{CallToolResult, PeerError, RequestContext, Tasks, Tool};
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::model::stateless::InputRequest;
use mcp_sansio::tasks::{TaskLimits, TaskSupport};
use serde_json::{json, Value};

use super::Sleep;

/// How long `failing_job` and `protocol_error_job` work before failing.
const FAIL_AFTER: Duration = Duration::from_secs(1);
/// The pause before an in-task input, so the call is a task when it asks.
const SETTLE: Duration = Duration::from_millis(20);

/// The task table of this process (an HTTP server builds one machine per exchange).
pub(crate) fn table() -> Tasks {
    static TABLE: OnceLock<Tasks> = OnceLock::new();
    TABLE
        .get_or_init(|| Tasks::new(TaskLimits::default(), Arc::new(random_id)))
        .clone()
}

fn random_id() -> [u8; 16] {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // Unique without the OS source: the clock and a process counter.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        bytes[..8].copy_from_slice(&super::stateless::unix_ms().to_be_bytes());
        bytes[8..].copy_from_slice(&n.to_be_bytes());
    }
    bytes
}

fn schema(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

fn confirm(message: &str) -> InputRequest {
    InputRequest {
        method: "elicitation/create".into(),
        params: Some(json!({
            "message": message,
            "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}},
        })),
        extra: Default::default(),
    }
}

fn failed(e: PeerError) -> ErrorObject {
    ErrorObject::internal(format!("input failed: {e}"))
}

fn accepted(answer: &Value) -> bool {
    answer["action"].as_str() == Some("accept")
}

/// The tasks-extension tools.
pub(crate) fn tools(sleep: Sleep) -> Vec<Tool> {
    let (s1, s2, s3, s4, s5, s6) = (
        sleep.clone(),
        sleep.clone(),
        sleep.clone(),
        sleep.clone(),
        sleep.clone(),
        sleep,
    );
    vec![
        Tool::new("greet", schema(json!({"name": {"type": "string"}})))
            .description("Greets by name (synchronous only)")
            .sync_handler(|call, _ctx| {
                let name = call.arguments.get("name").and_then(Value::as_str);
                Ok(CallToolResult::text(format!(
                    "Hello, {}!",
                    name.unwrap_or("World")
                )))
            }),
        Tool::new(
            "slow_compute",
            schema(json!({"seconds": {"type": "number"}, "label": {"type": "string"}})),
        )
        .description("Works `seconds` seconds, then reports (a task when it has to wait)")
        .task_support(TaskSupport::Optional)
        .handler(move |call, _ctx| {
            let sleep = s1.clone();
            async move {
                let seconds = call.arguments.get("seconds").and_then(Value::as_f64);
                let seconds = seconds.unwrap_or(0.0).clamp(0.0, 3600.0);
                if seconds > 0.0 {
                    sleep(Duration::from_secs_f64(seconds)).await;
                }
                let label = call.arguments.get("label").and_then(Value::as_str);
                Ok(CallToolResult::text(format!(
                    "Computed {} after {seconds}s",
                    label.unwrap_or("result")
                )))
            }
        }),
        Tool::new("failing_job", schema(json!({})))
            .description("Fails with a tool error after about a second (task required)")
            .task_support(TaskSupport::Required)
            .handler(move |_call, _ctx| {
                let sleep = s2.clone();
                async move {
                    sleep(FAIL_AFTER).await;
                    Ok(CallToolResult::error("the job failed"))
                }
            }),
        Tool::new("protocol_error_job", schema(json!({})))
            .description("Ends with a protocol error (the task fails)")
            .task_support(TaskSupport::Optional)
            .handler(move |_call, _ctx| {
                let sleep = s3.clone();
                async move {
                    sleep(FAIL_AFTER).await;
                    Err(ErrorObject::internal("the job crashed"))
                }
            }),
        Tool::new(
            "confirm_delete",
            schema(json!({"filename": {"type": "string"}})),
        )
        .description("Asks for confirmation inside the task, then deletes (pretends to)")
        .task_support(TaskSupport::Optional)
        .handler(move |call, ctx| {
            let sleep = s4.clone();
            async move {
                sleep(SETTLE).await;
                let file = call.arguments.get("filename").and_then(Value::as_str);
                let file = file.unwrap_or("the file").to_owned();
                let answer = ctx
                    .input("confirm", confirm(&format!("Delete {file}?")))
                    .await
                    .map_err(failed)?;
                let done = if accepted(&answer) { "Deleted" } else { "Kept" };
                Ok(CallToolResult::text(format!("{done} {file}")))
            }
        }),
        Tool::new("multi_input", schema(json!({})))
            .description("Asks two questions at once inside the task")
            .task_support(TaskSupport::Optional)
            .handler(move |_call, ctx| {
                let sleep = s5.clone();
                async move {
                    sleep(SETTLE).await;
                    let (a, b) = smol::future::zip(
                        ctx.input("first", confirm("First?")),
                        ctx.input("second", confirm("Second?")),
                    )
                    .await;
                    let (a, b) = (a.map_err(failed)?, b.map_err(failed)?);
                    Ok(CallToolResult::text(format!(
                        "first: {}, second: {}",
                        a["content"]["name"], b["content"]["name"]
                    )))
                }
            }),
        Tool::new("test_tool_with_task", schema(json!({})))
            .description("Asks the user's name (input required), then works as a task")
            .task_support(TaskSupport::Required)
            .handler(move |_call, ctx| {
                let sleep = s6.clone();
                async move { with_task(&ctx, &sleep).await }
            }),
    ]
}

/// `test_tool_with_task`: the name first (a multi-round-trip input: no task yet), then work.
async fn with_task(ctx: &RequestContext, sleep: &Sleep) -> Result<CallToolResult, ErrorObject> {
    let request = InputRequest {
        method: "elicitation/create".into(),
        params: Some(json!({
            "message": "What is your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        })),
        extra: Default::default(),
    };
    let answer = ctx.input("user_name", request).await.map_err(failed)?;
    let name = answer["content"]["name"]
        .as_str()
        .unwrap_or("stranger")
        .to_owned();
    sleep(SETTLE).await;
    Ok(CallToolResult::text(format!("Hello, {name}!")))
}
