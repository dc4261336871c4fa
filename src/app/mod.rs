//! The application layer: MCP servers and clients built on the session, still free of IO.
//!
//! A server answering `tools/call` with a sync handler, driven by hand:
//!
//! ```
//! use std::time::Instant;
//! use mcp_sansio::app::server::{CallToolResult, Server, Tool};
//! use mcp_sansio::model::Implementation;
//! use serde_json::json;
//!
//! let now = Instant::now();
//! let echo = Tool::new("echo", json!({"type": "object"}))
//!     .sync_handler(|call, _ctx| Ok(CallToolResult::text(format!("{:?}", call.arguments))));
//! let mut server = Server::builder(Implementation::new("demo", "1")).tool(echo).build(now);
//! for frame in [
//!     r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
//!     r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
//!     r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#,
//! ] {
//!     server.handle_input(now, frame.as_bytes().to_vec().into());
//! }
//! let mut buf = Vec::new();
//! let mut answers = Vec::new();
//! while server.poll_transmit(&mut buf).is_some() {
//!     answers.push(serde_json::from_slice::<serde_json::Value>(&buf).unwrap());
//!     buf.clear();
//! }
//! assert_eq!(answers.last().unwrap()["result"]["content"][0]["text"], "{}");
//! assert!(server.poll_job().is_none(), "a sync handler finished in its first poll");
//! ```

pub mod client;
pub(crate) mod json_scan;
pub mod server;
