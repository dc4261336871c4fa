//! Interop with the official SDKs against the `mcp-sansio` command line: rmcp (Rust) both
//! ways, and the TypeScript and Python fixture clients against our `serve`.

#[path = "../../../../tests/interop/harness.rs"]
mod harness;
#[path = "../support/http_fixture.rs"]
mod http_fixture;
#[path = "../support/rmcp_peer.rs"]
mod rmcp_peer;

mod rmcp;
mod sdk;
