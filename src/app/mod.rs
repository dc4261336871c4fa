//! The application layer: MCP servers and clients built on the session, still free of IO.

pub mod cursor;
pub mod runtime;
pub mod schema;
pub mod server;
pub mod uri_template;
