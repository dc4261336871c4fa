//! Typed MCP messages of every protocol revision, parsed lazily from [`crate::jsonrpc::RawJson`].
//!
//! Each area has its own file. Every type keeps unknown members (`extra`) and `_meta`, so a
//! decode/encode round trip loses nothing; JSON Schemas (`inputSchema`, `outputSchema`,
//! `requestedSchema`) are kept verbatim as raw JSON.

mod lifecycle;
mod version;

pub use lifecycle::*;
pub use version::*;
