//! The handful of names a typical server or client needs, for one glob import:
//!
//! ```
//! use mcp_sansio::prelude::*;
//! use serde_json::json;
//!
//! let echo = Tool::new("echo", json!({"type": "object"}))
//!     .sync_handler(|call: ToolCall, _ctx| Ok(CallToolResult::text(format!("{:?}", call.arguments))));
//! let server: Server = Server::builder(Implementation::new("demo", "1"))
//!     .tool(echo)
//!     .build(std::time::Instant::now());
//! # let _ = server;
//! ```
//!
//! Servers: [`Server`] built by a [`ServerBuilder`] (or made per HTTP session by a
//! [`ServerFactory`]), with [`Tool`]s, [`Resource`]s, [`ResourceTemplate`]s and [`Prompt`]s
//! whose handlers get a [`ToolCall`], [`ResourceRead`] or [`PromptRequest`] and a
//! [`RequestContext`], and answer a `Result` of [`CallToolResult`], [`ResourceContents`] or
//! [`GetPromptResult`] (an [`ErrorObject`] for a protocol error).
//! Clients: [`Client`] built by a [`ClientBuilder`], its [`ClientHandle`] and the
//! [`ClientEvent`]s it reports. Both: [`Implementation`] (who you are), [`Config`] (limits and
//! timeouts). Everything else stays in its module.

pub use crate::app::client::{Client, ClientBuilder, ClientEvent, ClientHandle};
pub use crate::app::server::{
    CallToolResult, Prompt, PromptRequest, RequestContext, Resource, ResourceContents,
    ResourceRead, ResourceTemplate, Server, ServerBuilder, ServerFactory, Tool, ToolCall,
};
pub use crate::config::Config;
pub use crate::jsonrpc::ErrorObject;
pub use crate::model::{GetPromptResult, Implementation};
