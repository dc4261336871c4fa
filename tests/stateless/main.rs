//! The 2026-07-28 revision: stateless requests, listen streams, request state, replay,
//! tasks, the schema of its messages, and that the stateful revisions are unchanged beside it.

mod client_props;
#[path = "../common/mod.rs"]
mod common;
mod http;
#[path = "../common/json_tree.rs"]
mod json_tree;
mod listen;
mod no_mixing;
mod replay;
mod request_state;
mod schema;
#[path = "../common/schema_defs.rs"]
mod schema_defs;
mod serve;
mod serve_props;
mod stateful_unchanged;
#[path = "../common/task_tools.rs"]
mod task_tools;
mod tasks;
mod tasks_client;
mod tasks_http;
