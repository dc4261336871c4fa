//! `mcp-sansio client` end to end, one module a topic: over stdio and HTTP, in both eras,
//! against our own `serve` and against servers no one here wrote (the official SDKs; skipped
//! when scripts/install-peers has not run, failed under `CI`).

#[path = "../../../../tests/interop/harness.rs"]
mod harness;
#[path = "../support/hostile_http.rs"]
mod hostile_http;
#[path = "../support/http_fixture.rs"]
mod http_fixture;
#[path = "../support/peers.rs"]
mod peers;
#[path = "../support/stateless_cli.rs"]
mod stateless_cli;

mod era;
mod hostile;
mod http;
mod http_interop;
mod inputs;
mod listen;
mod sampling;
mod sse_transport_interop;
mod stdio;
mod tasks;
