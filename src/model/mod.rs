//! Typed MCP messages of every protocol revision, parsed lazily from [`crate::jsonrpc::RawJson`].
//!
//! Each area has its own file. Every type keeps unknown members (`extra`) and `_meta`, so a
//! decode/encode round trip loses nothing; JSON Schemas (`inputSchema`, `outputSchema`,
//! `requestedSchema`) are kept verbatim as raw JSON. An internal method table maps every
//! method to its direction, kind, gating capability and revisions; [`method_exists`] and
//! [`client_capability_for`] answer from it.

#[macro_use]
mod object;

mod common;
mod completion;
mod content;
mod elicitation;
mod flatten;
mod lifecycle;
mod logging;
// Public items only for the `testing` re-export (the schema tests check the table).
#[cfg_attr(not(feature = "testing"), allow(unreachable_pub))]
pub(crate) mod methods;
mod notifications;
mod prompts;
mod resources;
mod roots;
mod sampling;
pub mod stateless;
mod tagged;
mod tasks;
mod text_result;
mod tools;
mod version;

pub use common::*;
pub use completion::*;
pub use content::*;
pub use elicitation::*;
pub use lifecycle::*;
pub use logging::*;
pub use methods::{client_capability_for, method_exists, ClientCapabilityKey};
pub(crate) use methods::{
    server_capability_for, MethodDirection, MethodInfo, MethodKind, ServerCapabilityKey,
};
pub use notifications::*;
pub use prompts::*;
pub use resources::*;
pub use roots::*;
pub use sampling::*;
pub use tasks::*;
pub use tools::*;
pub use version::*;

pub(crate) use text_result::{read_texts_only, write_texts_only};

#[cfg(test)]
mod tests;
