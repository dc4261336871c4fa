//! # mcp-sansio-stdio
//!
//! Runs an mcp-sansio state machine on stdio: on this process's own stdin/stdout
//! ([`serve_stdio`]) or on a child process's pipes ([`connect_child`], [`ChildProcess`]).
//! It only moves bytes and time (smol + async-io); every protocol decision stays in the
//! machine, which the loop reaches through the small [`Driven`] trait.
//!
//! ## How the loop drives the machine
//!
//! Following the crate-wide drive-loop contract: after every input (a frame, a frame error, end
//! of input, a timeout) and every command, the loop drains [`Driven::poll_transmit`] into one
//! buffer (one message per line) and writes it in one `write_all` + `flush`; then it sleeps
//! until the earlier of new input, a command, a finished task and [`Driven::poll_timeout`].
//!
//! ## Running application code next to the machine
//!
//! A [`Driver`] owns a single-threaded executor. Before running, take its [`LoopHandle`]
//! (spawn `!Send` futures and blocking jobs whose results are applied to the machine inside the
//! loop: `spawn_then`, `spawn_blocking_then`) and its [`Remote`] (send closures
//! `FnOnce(&mut D, Instant)` into the loop from any thread). A slow handler never blocks other
//! requests: it is a task, the loop keeps serving while it waits.
//!
//! ```no_run
//! use std::time::Instant;
//! use bytes::Bytes;
//! use mcp_sansio_stdio::{Driven, Driver, DriveOptions, FrameError};
//!
//! /// Answers every line with itself.
//! struct Echo { out: Vec<Bytes>, closed: bool }
//! impl Driven for Echo {
//!     fn handle_frame(&mut self, _now: Instant, frame: Bytes) { self.out.push(frame) }
//!     fn handle_frame_error(&mut self, _now: Instant, _error: FrameError) {}
//!     fn handle_eof(&mut self, _now: Instant) { self.closed = true }
//!     fn handle_timeout(&mut self, _now: Instant) {}
//!     fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
//!         let frame = self.out.pop()?;
//!         buf.extend_from_slice(&frame);
//!         Some(frame.len())
//!     }
//!     fn poll_timeout(&self) -> Option<Instant> { None }
//!     fn is_closed(&self) -> bool { self.closed && self.out.is_empty() }
//! }
//!
//! let driver = Driver::new(DriveOptions::default());
//! let finished = driver.serve_stdio(Echo { out: Vec::new(), closed: false });
//! eprintln!("stopped: {:?}", finished.reason);
//! ```
//!
//! ## Tracing
//!
//! [`Traced`] wraps a machine so that every frame it reads and writes also reaches a
//! [`mcp_sansio::trace::TraceSink`]; an unwrapped machine pays nothing (docs/trace.md).
//!
//! ## Framing
//!
//! Lines are cut by the core's `mcp_sansio::framing::ndjson` decoder (bounded line length,
//! `\r\n` tolerated, blank lines skipped); an over-long line reaches the machine as
//! [`FrameError::TooLong`] and the stream goes on after it.
#![deny(missing_docs)]
#![deny(unsafe_code)]
#![warn(unreachable_pub)]

mod child;
mod client;
mod driven;
mod driver;
mod handle;
mod lines;
mod pipe_reader;
#[cfg(unix)]
mod poll;
mod run_loop;
mod server;
mod shared_loop;
mod stdio;
mod traced;

pub use child::{
    connect_child, ChildProcess, ShutdownReport, ShutdownStage, ShutdownTimeouts, StderrMode,
    STDERR_TAIL_LIMIT,
};
#[cfg(unix)]
pub use client::connect_stdio_client_poll;
pub use client::{connect_stdio_client, ClientDriven, ClientRunReport, EventSink, StdioClient};
pub use driven::{Driven, FrameError};
pub use driver::{DriveOptions, Driver, EndReason, Finished};
pub use handle::{LoopHandle, Remote, RemoteError};
#[cfg(unix)]
pub use poll::PollDriver;
#[cfg(unix)]
pub use server::serve_server_stdio_poll;
pub use server::{serve_server_stdio, ServerDriven};
pub use smol::Task;
pub use stdio::serve_stdio;
pub use traced::Traced;

/// OpenTelemetry by the MCP semantic conventions (feature `otel`): `otel::OtelSink` is a
/// trace sink for `ServerDriven::on_trace` and `StdioClient::on_trace`.
#[cfg(feature = "otel")]
pub use mcp_sansio_otel as otel;
