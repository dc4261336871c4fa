//! `mcp-sansio client ... tools call NAME` on the 2026-07-28 path when the server makes the
//! call a task (tasks extension): the wire's machine follows the task (polling at the server's
//! interval on its own deadlines) and this file hands back its inlined outcome.

use mcp_sansio::app::client::stateless::{TaskHandle, TaskOutcome};
use serde_json::Value;

use crate::client_stateless::Calls;

/// `result` itself when it is not a `CreateTaskResult`; else the result of the task once it
/// completed (a failed or cancelled task is an error).
pub(crate) async fn finish_tool_call<T: Calls>(
    wire: &mut T,
    result: Value,
) -> Result<Value, String> {
    let Some(task) = TaskHandle::from_create_result(&result) else {
        return Ok(result);
    };
    let id = task.id().to_owned();
    let outcome = wire
        .wait_task(task)
        .await
        .map_err(|e| format!("task {id}: {e}"))?;
    match outcome {
        TaskOutcome::Completed(result) => Ok(result),
        TaskOutcome::Failed(e) => Err(format!(
            "task {id} failed: JSON-RPC error {}: {}",
            e.code, e.message
        )),
        TaskOutcome::Cancelled => Err(format!("task {id} was cancelled")),
    }
}
