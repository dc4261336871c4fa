//! Shared fixtures of the tasks-extension tests (server side and client side): a gate the
//! test opens to let task handlers finish, a flag set when a job is dropped, and the tools
//! whose bodies end in each task outcome (done, tool error, handler error, two inputs).
#![allow(dead_code)]

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;

use mcp_sansio::app::server::{CallToolResult, PeerError, Tool};
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::model::stateless::InputRequest;
use mcp_sansio::tasks::TaskSupport;
use serde_json::{json, Value};

/// A gate the test opens; handlers wait on it (re-polled whenever the job is polled).
#[derive(Clone, Default)]
pub struct Gate(pub Arc<AtomicBool>);

impl Gate {
    /// Ready once the gate is open.
    pub fn wait(&self) -> impl Future<Output = ()> + Send + 'static {
        let open = self.0.clone();
        std::future::poll_fn(move |_| {
            if open.load(Ordering::SeqCst) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }

    /// Lets every waiting handler finish.
    pub fn open(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Set when the job holding it is dropped.
pub struct DropFlag(pub Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// An elicitation input request keyed `key`.
pub fn ask(key: &str) -> InputRequest {
    InputRequest {
        method: "elicitation/create".into(),
        params: Some(json!({"message": key, "requestedSchema": {"type": "object"}})),
        extra: Default::default(),
    }
}

/// The `x` of an input response: an elicitation result's `content`, or the response itself.
fn field_x(response: &Value) -> &Value {
    &response.get("content").unwrap_or(response)["x"]
}

/// A tool that waits for `gate`, then ends by `body`: "error" (a tool error), "crash" (a
/// handler error), "inputs" (asks for inputs `a` and `b`, answers "<a.x> <b.x>"), anything else
/// "done".
pub fn tool(name: &str, support: TaskSupport, gate: &Gate, body: &'static str) -> Tool {
    let gate = gate.clone();
    Tool::new(name, json!({"type": "object"}))
        .task_support(support)
        .handler(move |_, ctx| {
            let wait = gate.wait();
            async move {
                wait.await;
                match body {
                    "error" => Ok(CallToolResult::error("tool failed")),
                    "crash" => Err(ErrorObject::internal("crashed")),
                    "inputs" => {
                        let fail = |e: PeerError| ErrorObject::internal(e.to_string());
                        let a = ctx.input("a", ask("a")).await.map_err(fail)?;
                        let b = ctx.input("b", ask("b")).await.map_err(fail)?;
                        let text = format!("{} {}", field_x(&a), field_x(&b));
                        Ok(CallToolResult::text(text))
                    }
                    _ => Ok(CallToolResult::text("done")),
                }
            }
        })
}

/// A tool that waits for `gate`, then never ends; `dropped` is set when its job is dropped.
pub fn forever_tool(gate: &Gate, dropped: &Arc<AtomicBool>) -> Tool {
    let gate = gate.clone();
    let dropped = dropped.clone();
    Tool::new("forever", json!({"type": "object"}))
        .task_support(TaskSupport::Optional)
        .handler(move |_, _| {
            let guard = DropFlag(dropped.clone());
            let wait = gate.wait();
            async move {
                let _guard = guard;
                wait.await;
                std::future::pending::<()>().await;
                Ok(CallToolResult::text("never"))
            }
        })
}
