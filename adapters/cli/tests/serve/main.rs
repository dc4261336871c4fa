//! `mcp-sansio serve` end to end, one module a topic: HTTP (graceful exit, OAuth protected
//! resource), stdio in both eras, hostile input on stdio, and tool schemas kept verbatim.

#[path = "../support/http_fixture.rs"]
mod http_fixture;
#[path = "../support/stdio_child.rs"]
mod stdio_child;

mod http;
mod http_auth;
mod schema_verbatim;
mod stateless_stdio;
mod stdio_robustness;
