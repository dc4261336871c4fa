//! The machines the endpoint drives, as two small traits so the endpoint is not tied to the
//! application layer (both implemented by the application server, `app::server::Server`):
//! - [`SessionMachine`]: one conversation of a stateful revision (2025-03-26 to 2025-11-25):
//!   frames in, timers, messages and handler jobs out, the handshake, the end of the session.
//!   The endpoint's session table holds these, and so does its table of sessionless 2025 POSTs.
//! - [`ExchangeMachine`]: the stateless revision (2026-07-28): one machine per request (an
//!   exchange), the HTTP status of a refused request, the `Mcp-Param-*` headers a tool call
//!   must carry, and the listen events machines hand each other.
//!
//! The endpoint is generic over one type implementing both (`Endpoint<M>` with
//! `M: SessionMachine + ExchangeMachine`), built by one factory: an exchange's output is drained
//! through the same [`SessionMachine`] polls as a session's and both live in the same kind of
//! table, so one type keeps the endpoint to one factory and one table type. The parts that
//! serve only stateful sessions (the session table, the streams, the HTTP+SSE transport) ask for
//! [`SessionMachine`] alone.

use std::time::Instant;

use bytes::Bytes;

use crate::jsonrpc::{Incoming, RequestId};
use crate::model::ProtocolVersion;
use crate::runtime::Job;
use crate::session::{RestoreError, Transmit};
use crate::stateless::{ListenChange, ParamHeader};

/// One MCP conversation of a stateful revision, server side, as the endpoint needs it.
pub trait SessionMachine {
    /// One frame (one JSON text) from the client.
    fn handle_input(&mut self, now: Instant, frame: Bytes);
    /// One frame the endpoint already decoded (`incoming` is `decode(&frame)`'s result): a
    /// machine that can take the messages as they are need not decode the frame again.
    fn handle_decoded(&mut self, now: Instant, frame: Bytes, incoming: Incoming) {
        let _ = incoming;
        self.handle_input(now, frame)
    }
    /// Fires due timers.
    fn handle_timeout(&mut self, now: Instant);
    /// Appends one outgoing message to `buf`.
    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit>;
    /// The next deadline.
    fn poll_timeout(&self) -> Option<Instant>;
    /// A pending handler future for the driver to run.
    fn poll_job(&mut self) -> Option<Job>;
    /// Ends the conversation (session terminated or expired).
    fn close(&mut self, now: Instant);
    /// The negotiated protocol version, once known.
    fn protocol_version(&self) -> Option<ProtocolVersion>;
    /// An inbound request whose response stream should end now (SEP-1699); `None` by default
    /// (a machine whose handlers never end their streams early).
    fn poll_stream_close(&mut self) -> Option<RequestId> {
        None
    }
    /// Whether the handshake is over (`notifications/initialized` received, or the session
    /// closed): until then the endpoint holds the session only for a short grace and evicts
    /// it first when full. `true` by default (a machine with no handshake).
    fn handshake_done(&self) -> bool {
        true
    }
    /// Whether `poll_transmit` and `poll_stream_close` would hand out nothing now, so the
    /// session's idle response streams have nothing to pull. `false` (unknown) by default:
    /// the driver then polls them after every input, which is always correct.
    fn is_quiet(&self) -> bool {
        false
    }
    /// Gives back the memory of drained queues and buffers, and drops what no reader of the
    /// endpoint's will ask for: the endpoint calls it once a session's output is routed, as it
    /// may hold thousands of idle sessions.
    fn release_spare_capacity(&mut self) {}
    /// The session's movable state (see [`Endpoint::poll_session_change`]), as bytes only
    /// the same kind of machine reads back; `None` when there is nothing to move yet, and by
    /// default (a machine that cannot move).
    ///
    /// [`Endpoint::poll_session_change`]: super::Endpoint::poll_session_change
    fn snapshot(&self) -> Option<Vec<u8>> {
        None
    }
    /// Whether the movable state changed since this last returned `true`. `false` by default.
    fn take_snapshot_due(&mut self) -> bool {
        false
    }
    /// Numbers the session's requests to the client under `id_prefix` from now on (a new
    /// session on one of several instances); nothing by default.
    fn number_requests_under(&mut self, id_prefix: &str) {
        let _ = id_prefix;
    }
    /// Brings the session held here up to `snapshot`, a later state written by another
    /// process; `Err` with the reason when it cannot (and by default).
    fn refresh(&mut self, snapshot: &[u8]) -> Result<(), RestoreError> {
        let _ = snapshot;
        Err(RestoreError::Unsupported)
    }
    /// Goes on with the session the snapshot `bytes` describe, numbering its own requests
    /// under `prefix`; `Err` with the reason when it cannot (and by default).
    fn restore(&mut self, now: Instant, bytes: &[u8], prefix: &str) -> Result<(), RestoreError> {
        let _ = (now, bytes, prefix);
        Err(RestoreError::Unsupported)
    }
}

/// One request of the stateless revision (2026-07-28), served by a machine of its own: the
/// endpoint builds one per request, hands it the request with
/// [`ExchangeMachine::handle_exchange`] and drains the answer through the
/// [`SessionMachine`] polls.
pub trait ExchangeMachine {
    /// The one frame of the exchange (the transport decided it is 2026-07-28): served
    /// statelessly whatever it carries.
    fn handle_exchange(&mut self, now: Instant, frame: Bytes);
    /// The HTTP status a refused request `id` should get (400, or 404 for an unknown method);
    /// `None` when it was not refused or its refusal keeps 200.
    fn exchange_status(&self, id: &RequestId) -> Option<u16>;
    /// A change made while serving the exchange (a tool added, a resource updated), for the
    /// listen streams held by the other machines.
    fn poll_listen_change(&mut self) -> Option<ListenChange>;
    /// A change another machine made: deliver it on this machine's listen streams.
    fn handle_listen_change(&mut self, event: &ListenChange);
    /// Ends this machine's listen streams gracefully, each with its closing result (the
    /// endpoint needs the room for another peer's stream). Default: nothing to end.
    fn end_listen_streams(&mut self) {}
    /// The `Mcp-Param-*` headers a `tools/call` of tool `name` must carry (from its
    /// `x-mcp-header` annotations).
    fn tool_param_headers(&self, name: &str) -> Vec<ParamHeader>;
}
