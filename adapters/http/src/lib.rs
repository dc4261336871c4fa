//! Runs the mcp-sansio HTTP state machines on hyper 1 and smol: the Streamable HTTP server
//! endpoint ([`server`]) and the Streamable HTTP client ([`client`]). The adapter only moves
//! bytes between sockets and the core; every protocol decision lives in `mcp_sansio::http`.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod chunks;
pub mod client;
pub mod server;
mod tcp_io;
mod trace;

pub use trace::HttpTrace;

/// OpenTelemetry by the MCP semantic conventions (feature `otel`): wrap an `otel::OtelSink`
/// in an [`HttpTrace`] for the server's or client's options.
#[cfg(feature = "otel")]
pub use mcp_sansio_otel as otel;
