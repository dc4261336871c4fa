//! The codec: newline framing, the JSON-RPC envelope, the borrowed JSON view, and the
//! official MCP schemas every message type is checked against.

mod framing_props;
#[path = "../common/json_tree.rs"]
mod json_tree;
mod json_view;
mod jsonrpc_props;
#[path = "../common/schema_defs.rs"]
mod schema_defs;
mod schema_validation;
