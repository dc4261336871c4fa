//! Small app servers the tests share.

use std::time::Instant;

use serde_json::json;

use crate::app::server::{CallToolResult, Server, Tool};
use crate::model::Implementation;

/// A server named `info` with one tool, `echo`, that answers the text `hi` whatever its
/// arguments.
pub fn echo_server(info: Implementation, now: Instant) -> Server {
    Server::builder(info)
        .tool(
            Tool::new("echo", json!({"type": "object"}))
                .sync_handler(|_, _| Ok(CallToolResult::text("hi"))),
        )
        .build(now)
}
