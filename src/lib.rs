//! # mcp-sansio
//!
//! A Model Context Protocol (MCP) engine whose core does no IO. It takes bytes, HTTP-shaped
//! requests and the current time, and hands back frames to write, events for the application
//! and the next deadline. Thin adapters run it on stdio pipes and HTTP; integrators can drive it
//! from any runtime (smol, tokio, a blocking thread, an embedded loop), fuzz it, simulate it on a
//! virtual clock and benchmark it without a network.
//!
//! ## Where to start
//!
//! | you are writing | the core's types | the adapter that runs them |
//! |---|---|---|
//! | a server on stdio | [`app::server::ServerBuilder`] → [`app::server::Server`], with [`app::server::Tool`], [`app::server::Prompt`], [`app::server::Resource`] | `mcp_sansio_stdio::serve_server_stdio` |
//! | a server on HTTP (Streamable HTTP and 2026-07-28; HTTP+SSE beside it) | [`http::Endpoint`] making a [`app::server::Server`] per session from a [`app::server::ServerFactory`]; [`http::sse_transport`] | `mcp_sansio_http::server::HttpServer` |
//! | a client on stdio | [`app::client::ClientBuilder`] → [`app::client::Client`] | `mcp_sansio_stdio::connect_stdio_client` |
//! | a client on HTTP | [`app::client::Client`] with [`http::HttpClient`] or [`http::sse_transport::SseTransportClient`] | `mcp_sansio_http::client::connect_http_client`, `connect_auto_client` |
//! | a 2026-07-28 (stateless) client | [`app::client::stateless::StatelessMachine`] | `mcp_sansio_http::client::block_on_stateless_http` |
//! | OAuth for a client, or a protected server | [`auth::AuthFlow`], [`auth::ProtectedResource`] | the HTTP adapter's `ClientAuthorization`, `BearerAuth` |
//! | your own transport or runtime | [`session::Session`], [`framing`], [`jsonrpc`] | none: drive the machines yourself |
//!
//! [`prelude`] re-exports the handful of these names a typical server or client needs
//! (`use mcp_sansio::prelude::*;`); everything else is reached through its module.
//!
//! Typed params and results of every protocol method are in [`model`] (what a client's calls
//! return, what a tool's handler may answer with). Every machine is driven the same way
//! (below); `testing` (feature `testing`) runs them in memory on a virtual clock.
//!
//! ## Layers
//!
//! From the wire up:
//!
//! - [`jsonrpc`]: envelopes, exact request ids, lazy payloads, decode and encode.
//! - [`framing`]: incremental push parsers and encoders for message framing (ndjson lines,
//!   server-sent events).
//! - [`encoding`]: SHA-256, base64 and percent-encoding as the protocol uses them, over the
//!   `sha2`, `base64` and `percent-encoding` crates.
//! - [`url`]: the one URL type, `url::Url` (WHATWG URL Standard) narrowed to absolute http(s).
//! - [`model`]: typed MCP params and results of every protocol revision.
//! - [`config`]: every limit and timeout of a session, with documented defaults.
//! - [`trace`]: a cheap description of each frame (direction, time, size, envelope) and the
//!   [`TraceSink`] a driver hands it to when someone listens.
//! - [`runtime`]: the runtime-agnostic primitives the machines share: the `Job` type a driver
//!   runs, an outbox with a wake hook, a oneshot channel, a cancellation token.
//! - [`session`]: one MCP conversation (client or server side) of the stateful revisions:
//!   handshake, capability gating, request ids, deadlines, cancellation, progress, ping.
//! - [`stateless`]: the per-request checks of the stateless revision (2026-07-28) and its
//!   `server/discover` result; [`tasks`]: its tasks extension (limits, method names).
//! - [`outgoing`]: the one outgoing-request vocabulary every client transport machine shares
//!   ([`outgoing::OutgoingRequest`], [`outgoing::Action`], [`outgoing::ClientTransport`]).
//! - [`auth`]: OAuth 2.1 for clients ([`auth::AuthFlow`]) and protected servers
//!   ([`auth::ProtectedResource`]), as pure functions and machines.
//! - [`app`]: the application layer: a server with registries (tools, resources, templates,
//!   prompts, completion) whose handlers run as jobs on the driver's executor, and the client.
//! - [`http`]: the HTTP endpoint (Streamable HTTP sessions, 2026-07-28 exchanges, HTTP+SSE)
//!   and the HTTP client machines, over HTTP-shaped heads and bodies.
//! - `testing` (feature `testing`): rigs that drive each machine in memory on a virtual clock
//!   (`SessionPair`, `ServerRig`, `HttpRig`), for tests, benches, fuzzing and simulation.
//!
//! ## The drive-loop contract
//!
//! Every state machine in this crate follows the same contract (in the style of quinn-proto
//! and str0m):
//!
//! 1. Feed one input (`handle_input(now, bytes)`, `handle_timeout(now)`) or issue one command
//!    (`send_request`, `notify`, `respond`, `cancel`, `close`).
//! 2. Drain the outputs: call `poll_transmit(&mut buf)` and `poll_event()` until both return
//!    `None`.
//! 3. Sleep until the earlier of new input and `poll_timeout()`; on the deadline call
//!    `handle_timeout(now)`.
//!
//! Time (`std::time::Instant`) and random bytes always come from the caller: the core never
//! reads a clock, spawns, draws randomness or touches a file or socket.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub)]
// Peer data reaches most of the core: it is indexed only through checked access (`get`,
// `split_once`, iterators). Each exemption names why its index is in bounds.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod app;
pub mod auth;
pub mod config;
pub mod encoding;
pub mod framing;
#[cfg(any(test, feature = "fuzzing"))]
#[allow(
    clippy::indexing_slicing,
    clippy::string_slice,
    reason = "fuzz bodies, not reachable from a peer: they index the data they generate"
)]
pub mod fuzzing;
pub mod http;
mod http_shape;
pub mod jsonrpc;
pub mod model;
pub mod outgoing;
pub mod prelude;
pub mod runtime;
pub mod session;
pub mod stateless;
pub mod tasks;
#[cfg(any(test, feature = "testing"))]
#[allow(
    clippy::indexing_slicing,
    reason = "test rigs index the data they built themselves"
)]
pub mod testing;
pub mod trace;
pub mod url;

pub use config::Config;
pub use trace::{Direction, EnvelopeKind, FrameTrace, TraceSink};
