//! The official MCP conformance suites (installed by scripts/install-peers) against
//! `mcp-sansio conformance-client` and `mcp-sansio serve --http`, one module a suite and side.

#[path = "../support/conformance_suite.rs"]
mod conformance_suite;
#[path = "../../../../tests/interop/harness.rs"]
mod harness;
#[path = "../support/http_fixture.rs"]
mod http_fixture;
#[path = "../support/server_results.rs"]
mod server_results;

mod client;
mod client_auth;
mod client_next;
mod client_next_auth;
mod server;
mod server_next;
