//! `mcp-sansio client ... tools call NAME` on the 2026-07-28 path when the server makes the
//! call a task (tasks extension): waits for the task on smol's clock and timer, polling at the
//! server's interval, and hands back its inlined outcome. The decisions are the core's
//! (`StatelessClient::wait_task`); this file only supplies the clock.

use std::time::Instant;

use mcp_sansio::app::client::stateless::{
    StatelessClient, StatelessTransport, TaskClock, TaskHandle, TaskOutcome,
};
use serde_json::Value;

/// The real clock and smol's timer.
struct SmolClock;

impl TaskClock for SmolClock {
    fn now(&mut self) -> Instant {
        Instant::now()
    }

    async fn sleep_until(&mut self, deadline: Instant) {
        smol::Timer::at(deadline).await;
    }
}

/// `result` itself when it is not a `CreateTaskResult`; else the result of the task once it
/// completed (a failed or cancelled task is an error).
pub(crate) async fn finish_tool_call<T: StatelessTransport>(
    client: &mut StatelessClient,
    wire: &mut T,
    result: Value,
) -> Result<Value, String> {
    let Some(mut task) = TaskHandle::from_create_result(&result) else {
        return Ok(result);
    };
    let outcome = client
        .wait_task(wire, &mut SmolClock, &mut task)
        .await
        .map_err(|e| format!("task {}: {e}", task.id()))?;
    match outcome {
        TaskOutcome::Completed(result) => Ok(result),
        TaskOutcome::Failed(e) => Err(format!(
            "task {} failed: JSON-RPC error {}: {}",
            task.id(),
            e.code,
            e.message
        )),
        TaskOutcome::Cancelled => Err(format!("task {} was cancelled", task.id())),
    }
}
