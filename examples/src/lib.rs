//! The small MCP server both example drivers run (`blocking_server`: std threads and no async
//! runtime; `tokio_server`: tokio), so the only difference between them is the driver.
//!
//! Tools: `add {a, b}` (a sync handler: answered inside the server's inline first poll) and
//! `echo {text}` (an async handler that yields once, so it always becomes a job the driver
//! must run on its own executor and whose reply comes back through the outbox and wake hook).
#![deny(missing_docs)]

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::model::Implementation;
use serde_json::json;

/// Builds the example server at `now`.
pub fn demo_server(name: &str, now: Instant) -> Server {
    let add_schema = json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"]
    });
    let echo_schema = json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"]
    });
    Server::builder(Implementation::new(name, env!("CARGO_PKG_VERSION")))
        .tool(
            Tool::new("add", add_schema)
                .description("Adds two integers.")
                .sync_handler(|call, _ctx| {
                    let arg = |k: &str| call.arguments.get(k).and_then(|v| v.as_i64());
                    match (arg("a"), arg("b")) {
                        (Some(a), Some(b)) => {
                            Ok(CallToolResult::structured(json!({"result": a + b})))
                        }
                        _ => Err(ErrorObject::invalid_params("a and b must be integers")),
                    }
                }),
        )
        .tool(
            Tool::new("echo", echo_schema)
                .description("Echoes the text back (asynchronously).")
                .handler(|call, _ctx| async move {
                    YieldOnce(false).await;
                    let text = call.arguments.get("text").and_then(|v| v.as_str());
                    Ok(CallToolResult::text(format!(
                        "echo: {}",
                        text.unwrap_or("")
                    )))
                }),
        )
        .build(now)
}

/// Pending once (waking itself), then ready: makes a handler a real job on every runtime.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
