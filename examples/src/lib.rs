//! The small MCP server both example drivers run (`blocking_server`: std threads and no async
//! runtime; `tokio_server`: tokio), so the only difference between them is the driver.
//!
//! Tools: `add {a, b}` (a sync handler: answered inside the server's inline first poll) and
//! `echo {text}` (an async handler that yields once, so it always becomes a job the driver
//! must run on its own executor and whose reply comes back through the outbox and wake hook).
#![deny(missing_docs)]

use std::time::Instant;

use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::model::Implementation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The arguments of `add`.
#[derive(Deserialize, JsonSchema)]
pub struct AddArgs {
    /// The first term.
    pub a: i64,
    /// The second term.
    pub b: i64,
}

/// The structured output of `add`.
#[derive(Serialize, JsonSchema)]
pub struct Sum {
    /// `a + b` (saturating).
    pub result: i64,
}

/// The arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
pub struct EchoArgs {
    /// The text to echo.
    pub text: String,
}

/// Builds the example server at `now`.
pub fn demo_server(name: &str, now: Instant) -> Server {
    Server::builder(Implementation::new(name, env!("CARGO_PKG_VERSION")))
        .tool(
            Tool::typed::<AddArgs>("add")
                .description("Adds two integers.")
                .output::<Sum>()
                .sync_handler(|args, _ctx| {
                    Ok(Sum {
                        result: args.a.saturating_add(args.b),
                    })
                }),
        )
        .tool(
            Tool::typed::<EchoArgs>("echo")
                .description("Echoes the text back (asynchronously).")
                .handler(|args, _ctx| async move {
                    mcp_sansio::runtime::yield_now().await;
                    Ok(CallToolResult::text(format!("echo: {}", args.text)))
                }),
        )
        .build(now)
}
