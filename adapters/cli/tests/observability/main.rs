//! What `mcp-sansio` reports about its own traffic, one module a topic: the protocol trace
//! (`--trace`, `--trace-file`) of the client and the server over stdio and HTTP, and
//! OpenTelemetry export (`--otel`: exported with the `otel` feature, refused without it).

#[path = "../support/http_fixture.rs"]
mod http_fixture;
#[path = "../support/trace_run.rs"]
mod trace_run;

mod client_trace;
mod http_trace;
mod otel;
mod otel_off;
mod serve_trace;
