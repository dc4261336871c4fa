//! Test rigs for the engine's machines, shared by the integration tests, the benches and the
//! fuzz bodies (feature `testing`; the `fuzzing` feature turns it on too). Each rig drives one
//! machine in memory on a virtual clock, runs its handler jobs and drains every queue:
//!
//! - [`SessionPair`]: a client and a server [`Session`](crate::session::Session) wired
//!   together, with fault hooks (drop, duplicate, delay, corrupt).
//! - [`ServerRig`]: an app [`Server`](crate::app::server::Server) fed raw frames.
//! - [`HttpRig`]: a Streamable HTTP [`Endpoint`](crate::http::Endpoint) of app servers fed
//!   HTTP-shaped requests, with the SSE bodies read back as events.
//! - [`Jobs`]: handler jobs polled with a no-op waker, so the test decides when they run.
//! - [`settle`]: the bounded step-until-still loop, for rigs a test writes itself.
//! - [`echo_server`]: a server with one `echo` tool, for tests about the transport around it.
//! - [`METHODS`] and [`STATELESS_METHODS`]: the method tables, for the schema tests.
//!
//! The rigs panic on what a test should never see (an unparsable frame from the engine, a rig
//! that does not settle): they are for tests, not for serving peers.

mod apps;
mod http_rig;
mod jobs;
mod server_rig;
mod session_pair;
mod settle;

pub use apps::echo_server;
pub use http_rig::{HttpRig, StreamRead};
pub use jobs::Jobs;
pub use server_rig::ServerRig;
pub use session_pair::{Direction, Fault, FaultHook, PairLimits, SessionPair};
pub use settle::settle;

/// The method tables (every revision's, and 2026-07-28's), which the session and the stateless
/// validator read; here for the tests that check them against the official schema.
pub use crate::model::methods::{
    MethodDirection, MethodInfo, MethodKind, ServerCapabilityKey, METHODS,
};
pub use crate::model::stateless::methods::{stateless_method, STATELESS_METHODS};
